#!/usr/bin/env bash
# Stops the build when the installed libibverbs does not export the private
# provider ABI that provider/verbs_abi.h declares (IBVERBS_PRIVATE_34:
# rdma-core 39 to 56.1).  Building anyway would give a library that crashes.
set -u
want=IBVERBS_PRIVATE_34
lib=$(pkg-config --variable=libdir libibverbs 2>/dev/null)/libibverbs.so.1
[ -e "$lib" ] || lib=$(ldconfig -p 2>/dev/null | awk '/libibverbs\.so\.1 /{print $NF; exit}')
if [ -z "$lib" ] || [ ! -e "$lib" ]; then
  echo "abi-check: libibverbs.so.1 not found; run 'make deps' (needs libibverbs-dev)" >&2; exit 1
fi
if ! readelf --dyn-syms -W "$lib" | grep -q "@$want"; then
  have=$(readelf --dyn-syms -W "$lib" | grep -o 'IBVERBS_PRIVATE_[0-9]*' | sort -u | tr '\n' ' ')
  ver=$(pkg-config --modversion libibverbs 2>/dev/null || echo unknown)
  echo "abi-check: $lib (rdma-core $ver) exports ${have:-no private ABI}, not $want." >&2
  echo "abi-check: softib declares the $want provider ABI (rdma-core 39 to 56.1) and cannot be built here." >&2
  exit 1
fi
