#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# The man pages (man/*.[1-8]) stay clean and complete:
#  (a) every page formats without a warning or an error: `groff -ww -man
#      -Tutf8 -z` prints nothing, and neither does man-db's
#      `man -l --warnings=w` (which also runs the preprocessors) where man
#      is installed;
#  (b) every SOFTIB_ variable the C sources read is documented: a string
#      literal that is exactly a SOFTIB_ name, in a .c or .h outside tests/
#      and build*/ (getenv's argument, or that of a helper that reads a
#      variable by name, as provider/cma.c's knob() and link/link.c's env(),
#      or a #define'd name, as tools/info.c's REEXEC_MARK), must be a tag of
#      softib(7)'s ENVIRONMENT index, and the page that entry names must
#      have it as the tag of an entry (.TP) of its own ENVIRONMENT section.
#      Every knob a page documents there is in the index too, and no knob
#      is documented by two topic pages (softib-*.7);
#  (c) every subcommand of tools/softib.c's command table has its section
#      (.SS NAME) in softib(1) and its line (.B softib NAME) in the synopsis.
# Then the check is run on copies of man/ with a mistake planted (a macro
# groff does not know; a knob's entry removed; a knob the sources read that
# no page has; a subcommand's section removed), and each must fail.
# Needs groff (groff-base, which make deps installs); builds nothing.
set -u
. "$(dirname "$0")/lib.sh"
SIB_NAME=man
SIB_TMP=$(mktemp -d "${TMPDIR:-/tmp}/softib-man.XXXXXX") || exit 1
trap 'rm -rf "$SIB_TMP"' EXIT

command -v groff >/dev/null 2>&1 || sib_skip "groff is not installed (make deps installs groff-base)"
HAVE_MAN=
command -v man >/dev/null 2>&1 && HAVE_MAN=1
[ -n "$HAVE_MAN" ] || sib_log "man (man-db) is not installed: groff alone checks the pages"
# A UTF-8 locale when there is one (the pages' \(em and friends), else C.
LOC=C
locale -a 2>/dev/null | grep -qiE '^c\.utf-?8$' && LOC=C.UTF-8

# The SOFTIB_ variables the sources read: a literal SOFTIB_ name as the
# first argument of a call (getenv("SOFTIB_SM"), knob("SOFTIB_CM_...", ...)),
# or a macro #define'd as one and passed so (getenv(REEXEC_MARK)); not the
# symbol version "SOFTIB_PRIVATE_1", a later argument of dlvsym.
knobs_of()
{
	local f=$1 m

	grep -oP '\b[A-Za-z_]\w*\(\s*"\KSOFTIB_[A-Z0-9_]+(?=")' "$f"
	grep -oP '^\s*#\s*define\s+\K\w+(?=\s+"SOFTIB_[A-Z0-9_]+"\s*$)' "$f" | while read -r m; do
		grep -qP "\\(\\s*$m\\b" "$f" &&
			grep -oP "^\\s*#\\s*define\\s+$m\\s+\"\\KSOFTIB_[A-Z0-9_]+" "$f"
	done
}
mapfile -t SOURCES < <(find "$SIB_TOP" \( -path "$SIB_TOP/tests" -o -path "$SIB_TOP/build*" \
	-o -path "$SIB_TOP/.*" \) -prune -o \( -name '*.c' -o -name '*.h' \) -type f -print)
mapfile -t KNOBS < <(for f in "${SOURCES[@]}"; do knobs_of "$f"; done | sort -u)
[ ${#KNOBS[@]} -ge 10 ] || sib_fail "found only ${#KNOBS[@]} SOFTIB_ variables in the sources: ${KNOBS[*]}"
# The subcommands of softib's command table.
mapfile -t CMDS < <(awk '/cmds\[\] = \{/ { t = 1; next } t && /^};/ { exit }
	t && match($0, /\{ *"[a-z-]+"/) { s = substr($0, RSTART, RLENGTH); sub(/\{ *"/, "", s); sub(/"/, "", s); print s }' \
	"$SIB_TOP/tools/softib.c")
[ ${#CMDS[@]} -ge 4 ] || sib_fail "found only ${#CMDS[@]} subcommands in tools/softib.c: ${CMDS[*]}"

# The tags of the .TP entries of FILE's ENVIRONMENT section, one SOFTIB_
# name a line (an entry may name several).
env_tags()
{
	awk '/^\.SH/ { env = ($0 ~ /^\.SH "?ENVIRONMENT"?$/); tp = 0; next }
	     env && /^\.TP/ { tp = 1; next }
	     env && tp { tp = 0; while (match($0, /SOFTIB_[A-Z0-9_]+/)) {
		print substr($0, RSTART, RLENGTH); $0 = substr($0, RSTART + RLENGTH) } }' "$1"
}

# The page softib(7)'s index names for KNOB, as NAME.SECTION.
index_page()
{
	awk -v k="$2" '/^\.SH/ { env = ($0 ~ /^\.SH "?ENVIRONMENT"?$/); next }
	     env && /^\.TP/ { tp = 1; inentry = 0; next }
	     env && tp { tp = 0; inentry = ($0 ~ "(^|[^A-Z0-9_])" k "([^A-Z0-9_]|$)"); next }
	     env && inentry && match($0, /^\.BR [a-z][a-z0-9_.-]* \([1-8]\)/) {
		s = substr($0, 5, RLENGTH - 4); sub(/ \(/, ".", s); sub(/\)/, "", s); print s; exit }' "$1"
}

# Checks the pages in DIR against the knobs and subcommands given
# (KNOBS=(...) CMDS=(...) as globals); prints each problem, fails on any.
check_pages()
{
	local dir=$1 bad=0 f out page k c n
	local -A owner=()

	for f in "$dir"/*.[1-8]; do
		out=$(LC_ALL=$LOC groff -ww -man -Tutf8 -z "$f" 2>&1)
		[ -z "$out" ] || { echo "$(basename "$f"): groff -ww: $out"; bad=1; }
		if [ -n "$HAVE_MAN" ]; then
			out=$(LC_ALL=$LOC MANWIDTH=80 MANPAGER=cat PAGER=cat man -l --warnings=w "$f" 2>&1 >/dev/null)
			[ -z "$out" ] || { echo "$(basename "$f"): man -l --warnings=w: $out"; bad=1; }
		fi
	done

	[ -f "$dir/softib.7" ] || { echo "softib.7 is missing"; return 1; }
	for k in "${KNOBS[@]}"; do
		page=$(index_page "$dir/softib.7" "$k")
		if [ -z "$page" ]; then
			echo "$k: read by the sources, but softib(7)'s ENVIRONMENT index has no entry naming its page"
			bad=1
		elif [ ! -f "$dir/$page" ]; then
			echo "$k: softib(7) names $page, which does not exist"
			bad=1
		elif ! env_tags "$dir/$page" | grep -qx "$k"; then
			echo "$k: softib(7) names $page, whose ENVIRONMENT has no entry for it"
			bad=1
		fi
	done
	for f in "$dir"/*.[1-8]; do
		[ "$(basename "$f")" = softib.7 ] && continue
		for k in $(env_tags "$f" | sort -u); do
			[ -n "$(index_page "$dir/softib.7" "$k")" ] ||
				{ echo "$k: documented in $(basename "$f") but not in softib(7)'s index"; bad=1; }
			case $(basename "$f") in
			softib-*.7)
				if [ -n "${owner[$k]:-}" ]; then
					echo "$k: documented by both ${owner[$k]} and $(basename "$f")"
					bad=1
				fi
				owner[$k]=$(basename "$f") ;;
			esac
		done
	done

	for c in "${CMDS[@]}"; do
		grep -qxF ".SS $c" "$dir/softib.1" ||
			{ echo "softib $c: no section (.SS $c) in softib.1"; bad=1; }
		n=$(awk '/^\.SH/ { syn = ($0 ~ /SYNOPSIS/) } syn' "$dir/softib.1" | grep -cE "^\.BR? softib $c( |$)")
		[ "$n" -gt 0 ] || { echo "softib $c: not in softib.1's SYNOPSIS"; bad=1; }
	done
	return $bad
}

out=$(check_pages "$SIB_TOP/man") || sib_fail "the man pages:
$out"
sib_log "the variables the sources read: ${KNOBS[*]}"
sib_log "the subcommands: ${CMDS[*]}"
sib_log "${#KNOBS[@]} variables documented, ${#CMDS[@]} subcommands in softib(1), every page clean under groff -ww${HAVE_MAN:+ and man -l --warnings=w}"

# The check must catch each kind of mistake.  expect_fail WHAT PATTERN
# PLANT: PLANT COPY plants WHAT in COPY, a copy of man/ (or adds to KNOBS),
# and the check must then fail with a line matching PATTERN.
expect_fail()
{
	local what=$1 pattern=$2 copy=$SIB_TMP/copy out

	rm -rf "$copy" && cp -r "$SIB_TOP/man" "$copy"
	shift 2
	"$@" "$copy" || sib_fail "could not plant: $what"
	if out=$(check_pages "$copy"); then
		sib_fail "the check passed man pages with $what"
	fi
	grep -qE -- "$pattern" <<<"$out" || sib_fail "with $what the check failed for another reason: $out"
	KNOBS=("${SAVED_KNOBS[@]}")
	sib_log "refused: $what"
}
SAVED_KNOBS=("${KNOBS[@]}")

plant_macro() { sed -i '/^\.SH DESCRIPTION/a .FOO bar' "$1/softib-faults.7"; }
expect_fail "an unknown macro in softib-faults.7" "softib-faults.7: groff -ww: .*macro 'FOO' not defined" plant_macro

# SOFTIB_SPIN_US's entry, from its .TP to the next entry, gone.
drop_knob()
{
	awk '/^\.TP/ { held = $0; next }
	     held != "" { if ($0 == ".B SOFTIB_SPIN_US") { skip = 1 } else { print held; skip = 0 } held = "" }
	     skip && /^\.(TP|SH|SS)/ { skip = 0 }
	     !skip' "$1/softib-performance.7" >"$1/p" && mv "$1/p" "$1/softib-performance.7" &&
		! env_tags "$1/softib-performance.7" | grep -qx SOFTIB_SPIN_US
}
expect_fail "SOFTIB_SPIN_US's entry removed" "SOFTIB_SPIN_US: softib\(7\) names softib-performance.7, whose ENVIRONMENT has no entry" drop_knob

new_knob() { KNOBS+=(SOFTIB_NOT_DOCUMENTED); }
expect_fail "a knob the sources read that no page has" "SOFTIB_NOT_DOCUMENTED: read by the sources" new_knob

drop_cmd() { sed -i '/^\.SS help$/d' "$1/softib.1"; }
expect_fail "softib(1)'s help section removed" "softib help: no section" drop_cmd

exit 0
