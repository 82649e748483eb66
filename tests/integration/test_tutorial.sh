#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# docs/tutorial.md runs as written.  Every ```sh block of it is a list of
# commands, one per line after "$ ", which a learner types at the top of a
# checkout; this test runs them all, in order, in one temp dir (the files
# one writes, later ones read), with
#    tools/softib  -> "$SOFTIB"          (this build's softib)
#    build/        -> "$B"/              (this build's directory)
#    examples/     -> "$SOFTIB_TOP"/examples/
#    make          -> make -C "$SOFTIB_TOP" B=<this build> (SAN=1 for an
#                     ASan build), which finds nothing to do after make
# Each command must exit 0 within its time limit.  The HTML comments after
# a block say what its output must hold, on some line of the output of all
# its commands (stdout and stderr together):
#    <!-- expect: ERE -->      a line of the output matches ERE (grep -E),
#                              and so does a line of the ```text block
#                              shown right after the ```sh block, so the
#                              tutorial cannot show what the test does not
#                              see;
#    <!-- reject: ERE -->      no line of the output matches ERE;
#    <!-- file: NAME ERE -->   the file NAME the commands wrote has a line
#                              matching ERE.
# Every block needs at least one of them.  A fenced block that is neither
# ```sh nor ```text, or a line in a ```sh block that is not a "$ " command,
# fails the test: nothing in the tutorial escapes it.
. "$(dirname "$0")/lib.sh"

DOC=$SIB_TOP/docs/tutorial.md

sib_init tutorial
sib_need timeout grep sed ibv_devinfo rsvg-convert
sib_need_sm
[ -f "$DOC" ] || sib_fail "$DOC is missing"
# The tutorial's output is softib's at its default log level, with no
# capture or faults the caller may have set.
unset SOFTIB_CAPTURE SOFTIB_FAULTS SOFTIB_LOG SOFTIB_LOG_FILE

# make as the tutorial's learner runs it, on the build under test.
B_REL=$B
case "$B" in "$SIB_TOP"/*) B_REL=${B#"$SIB_TOP"/} ;; esac
MAKE_CMD="env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C \"\$SOFTIB_TOP\" B=$B_REL"
ldd "$SOFTIB" 2>/dev/null | grep -q libasan && MAKE_CMD+=" SAN=1"
export SOFTIB SOFTIB_TOP=$SIB_TOP B

# ---- parse: blocks of commands, the text shown after each, the checks
declare -a CMDS=() TEXT=() EXPECT=() REJECT=() FILES=() LINE=()
nb=0 cur=-1 state=out n=0 errors=0 text_ok=0
while IFS= read -r l || [ -n "$l" ]; do
	n=$((n + 1))
	case $state in
	sh)
		if [[ $l == '```' ]]; then
			state=out
		elif [[ $l == '$ '* ]]; then
			CMDS[cur]+="${l#'$ '}"$'\n'
		elif [[ -n ${l// /} ]]; then
			echo "FAIL: tutorial.md:$n: a line in a sh block that is not a \"\$ \" command: $l"
			errors=$((errors + 1))
		fi
		continue ;;
	text)
		if [[ $l == '```' ]]; then state=out; else TEXT[cur]+="$l"$'\n'; fi
		continue ;;
	other)
		[[ $l == '```' ]] && state=out
		continue ;;
	esac
	# Outside a block.
	if [[ $l == '```sh' ]]; then
		cur=$nb nb=$((nb + 1))
		CMDS[cur]='' TEXT[cur]='' EXPECT[cur]='' REJECT[cur]='' FILES[cur]='' LINE[cur]=$n
		state=sh text_ok=1
	elif [[ $l == '```text' ]]; then
		# Output shown for the last sh block, when nothing came between.
		if [ $nb -gt 0 ] && [ "$text_ok" = 1 ] && [ -z "${TEXT[cur]}" ]; then
			state=text
		else
			state=other
		fi
	elif [[ $l == '```'* ]]; then
		echo "FAIL: tutorial.md:$n: a fenced block that is neither sh nor text is not tested: $l"
		errors=$((errors + 1))
		state=other
	elif [[ $l =~ ^'<!-- expect: '(.*)' -->'$ ]]; then
		[ $nb -gt 0 ] || { echo "FAIL: tutorial.md:$n: expect before any sh block"; errors=$((errors + 1)); continue; }
		EXPECT[cur]+="${BASH_REMATCH[1]}"$'\n'
	elif [[ $l =~ ^'<!-- reject: '(.*)' -->'$ ]]; then
		[ $nb -gt 0 ] || { echo "FAIL: tutorial.md:$n: reject before any sh block"; errors=$((errors + 1)); continue; }
		REJECT[cur]+="${BASH_REMATCH[1]}"$'\n'
	elif [[ $l =~ ^'<!-- file: '([^ ]+)' '(.*)' -->'$ ]]; then
		[ $nb -gt 0 ] || { echo "FAIL: tutorial.md:$n: file check before any sh block"; errors=$((errors + 1)); continue; }
		FILES[cur]+="${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"$'\n'
	elif [[ $l == '<!--'* ]] && [[ $l =~ (expect|reject|file): ]]; then
		echo "FAIL: tutorial.md:$n: a check comment this test does not read: $l"
		errors=$((errors + 1))
	elif [[ -n ${l// /} ]]; then
		text_ok=0 # prose: a text block after it is not this block's output
	fi
done <"$DOC"
[ $state = out ] || sib_fail "tutorial.md ends inside a fenced block"
[ $nb -ge 10 ] || sib_fail "only $nb sh blocks found in $DOC: is the format still the one this test reads?"
[ $errors -eq 0 ] || sib_fail "$errors problems in the tutorial's format (above)"

# ---- run
# to_shell CMD: the learner's command as this test runs it.
to_shell()
{
	local c=$1

	if [[ $c == make ]]; then
		echo "$MAKE_CMD"
		return
	fi
	sed -E -e 's#(^|[ =;&|(])tools/softib([ ;&|)]|$)#\1"$SOFTIB"\2#g' \
		-e 's#(^|[ =;&|(])build/#\1"$B"/#g' \
		-e 's#(^|[ =;&|(])examples/#\1"$SOFTIB_TOP"/examples/#g' <<<"$c"
}

WORK=$SIB_TMP/work
mkdir -p "$WORK"
failed=0 ncmd=0
for ((k = 0; k < nb; k++)); do
	out=$SIB_TMP/block$k.out
	what="block at tutorial.md:${LINE[k]}"
	: >"$out"
	ok=1
	if [ -z "${EXPECT[k]}${REJECT[k]}${FILES[k]}" ]; then
		echo "FAIL: $what: no <!-- expect: -->, <!-- reject: --> or <!-- file: --> check follows it"
		ok=0
	fi
	while IFS= read -r c; do
		[ -n "$c" ] || continue
		ncmd=$((ncmd + 1))
		sh=$(to_shell "$c")
		limit=300
		[[ $c == make ]] && limit=600
		echo "\$ $c" >>"$SIB_TMP/transcript"
		(cd "$WORK" && timeout -k 5 "$limit" "${SIB_LINEBUF[@]}" bash -c "$sh") >"$out.cmd" 2>&1 </dev/null
		rc=$?
		cat "$out.cmd" >>"$out"
		cat "$out.cmd" >>"$SIB_TMP/transcript"
		if [ $rc -ne 0 ]; then
			echo "FAIL: $what: \"$c\" $(sib_status_text $rc) (ran: $sh)"
			ok=0
		fi
	done <<<"${CMDS[k]}"
	while IFS= read -r re; do
		[ -n "$re" ] || continue
		if ! grep -Eq -- "$re" "$out"; then
			echo "FAIL: $what: no line of the output matches /$re/"
			ok=0
		fi
		if [ -n "${TEXT[k]}" ] && ! grep -Eq -- "$re" <<<"${TEXT[k]}"; then
			echo "FAIL: $what: no line of the output the tutorial shows matches /$re/"
			ok=0
		fi
	done <<<"${EXPECT[k]}"
	while IFS= read -r re; do
		[ -n "$re" ] || continue
		if grep -Eq -- "$re" "$out"; then
			echo "FAIL: $what: a line of the output matches /$re/, which it must not:"
			grep -E -m3 -- "$re" "$out"
			ok=0
		fi
	done <<<"${REJECT[k]}"
	while IFS= read -r f; do
		[ -n "$f" ] || continue
		name=${f%% *} re=${f#* }
		if [ ! -f "$WORK/$name" ]; then
			echo "FAIL: $what: it wrote no file $name"
			ok=0
		elif ! grep -Eaq -- "$re" "$WORK/$name"; then
			echo "FAIL: $what: no line of $name matches /$re/"
			ok=0
		fi
	done <<<"${FILES[k]}"
	if [ $ok -eq 1 ]; then
		echo "ok: $what ($(grep -c . <<<"${CMDS[k]}") commands)"
	else
		echo "----- its output:"
		tail -n 40 "$out"
		echo "-----"
		failed=$((failed + 1))
	fi
done
if [ $failed -ne 0 ]; then
	echo "FAIL: tutorial: $failed of $nb blocks of docs/tutorial.md do not run as the tutorial says"
	exit 1
fi
echo "tutorial: $ncmd commands in $nb blocks ran as docs/tutorial.md says"
