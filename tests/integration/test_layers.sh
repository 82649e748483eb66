#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# The layering check (tests/check-layers.sh) passes on this tree and fails
# on a copy of it with includes planted against the README's layer table:
# one pointing up the table, one to a folder its row does not allow, and a
# source folder the table does not know.
set -u
. "$(dirname "$0")/lib.sh"
sib_init layers

check=$SIB_TOP/tests/check-layers.sh
out=$("$check" "$SIB_TOP" 2>&1) || sib_fail "the tree breaks its own layering: $out"
sib_log "$out"

copy=$SIB_TMP/tree
mkdir -p "$copy"
cp "$SIB_TOP/README.md" "$copy/"
for d in base wire memreg link transport mgmt fabric hca provider tools; do
	cp -r "$SIB_TOP/$d" "$copy/"
done
"$check" "$copy" >/dev/null || sib_fail "an unchanged copy of the tree fails the check"

# Up the table: wire/ (layer 2) including the HCA (layer 8).
printf '#include "hca/hca.h"\n' >>"$copy/wire/crc.c"
# Sideways: hca/ may not include fabric/, although fabric/ is below it.
printf '#include "fabric/sm.h"\n' >>"$copy/hca/progress.c"
# A folder of C sources the table does not list.
mkdir "$copy/rogue" && printf 'int rogue;\n' >"$copy/rogue/rogue.c"

if out=$("$check" "$copy" 2>&1); then
	sib_fail "the check passed a tree with planted includes: $out"
fi
echo "$out"
grep -q 'wire/crc.c:[0-9]* includes "hca/hca.h": hca/ is above wire/' <<<"$out" ||
	sib_fail "the upward include in wire/crc.c was not reported"
grep -q 'hca/progress.c:[0-9]* includes "fabric/sm.h": hca/ may include only' <<<"$out" ||
	sib_fail "the include of fabric/ from hca/ was not reported"
grep -q 'rogue/ has C sources but no row' <<<"$out" ||
	sib_fail "the folder missing from the table was not reported"
[ "$(grep -c '^layers:' <<<"$out")" -eq 3 ] || sib_fail "expected exactly three violations"
sib_log "planted includes are refused"
