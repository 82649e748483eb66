#!/usr/bin/env bash
# rdma-core's pyverbs suite against softib0: every module (--all, about 5 s
# here) must finish with 0 failures and 0 errors; skips are printed with their
# reasons (deferrals: tests/pyverbs-deferred.txt).  Arguments replace --all.
set -u
top=${SOFTIB_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${B:-$top/build}
SOFTIB=${SOFTIB:-$B/softib}

if [ ! -d /usr/share/doc/rdma-core/tests ]; then
  echo "skip: /usr/share/doc/rdma-core/tests is missing (apt-get install rdma-core)"; exit 77
fi
if ! /usr/bin/python3 -c 'import pyverbs' 2>/dev/null; then
  echo "skip: /usr/bin/python3 has no pyverbs (apt-get install python3-pyverbs)"; exit 77
fi
if [ ! -e "$B/libsoftib.so" ]; then
  echo "skip: $B/libsoftib.so is not built"; exit 77
fi
# `softib run` when it works; LD_PRELOAD is what it does.
if "$SOFTIB" run -- true 2>/dev/null; then
  run=("$SOFTIB" run --)
else
  run=(env LD_PRELOAD="$B/libsoftib.so")
fi
case "$B" in
  *build-san*) # the interpreter is not built with ASan: preload the sanitizer
    # runtimes ahead of libsoftib.so; Python's own leaks are not ours.
    asan=$(${CC:-cc} -print-file-name=libasan.so)
    ubsan=$(${CC:-cc} -print-file-name=libubsan.so)
    if [ ! -e "$asan" ] || [ ! -e "$ubsan" ]; then
      echo "skip: no libasan.so/libubsan.so to preload into python3"; exit 77
    fi
    run=(env ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0
         UBSAN_OPTIONS=print_stacktrace=1 LD_PRELOAD="$asan $ubsan $B/libsoftib.so") ;;
esac
[ $# -gt 0 ] || set -- --all
exec "${run[@]}" /usr/bin/python3 "$top/tests/pyverbs_runner.py" "$@"
