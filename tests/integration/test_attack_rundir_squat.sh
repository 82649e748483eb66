#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# An attack that used to work: another user who creates /tmp/softib-UID
# first keeps that user's softib from starting its SM (softib refused the
# directory, rightly, and the only remedy was a variable nobody was told
# about).  Now softib uses a private directory under the user's home
# instead, says so in one line, and the port comes up.  The test plays
# both users, so it needs root: root squats the directory of a uid nobody
# uses, and softib runs as that uid.
. "$(dirname "$0")/lib.sh"

sib_init attack_rundir_squat
[ "$(id -u)" -eq 0 ] || sib_skip "needs root: it plays two users (the squatter and its victim)"
sib_need setpriv ibv_devinfo timeout pgrep
for f in softib libsoftib.so softib-sm; do
	[ -e "$B/$f" ] || sib_skip "$B/$f is not built"
done

victim=
for uid in 42421 42422 42423 42424; do
	if ! getent passwd "$uid" >/dev/null && [ ! -e "/tmp/softib-$uid" ] &&
		! pgrep -u "$uid" >/dev/null; then
		victim=$uid
		break
	fi
done
[ -n "$victim" ] || sib_skip "no unused uid among 42421-42424 (or their /tmp/softib-UID exist)"
squat=/tmp/softib-$victim
# A place the victim can reach: its home, and softib's programs.
world=$(mktemp -d "${TMPDIR:-/tmp}/softib-squat.XXXXXX")
chmod 755 "$world"
cleanup_squat()
{
	sib_cleanup # the SM the victim's port started, on this test's SOFTIB_SM
	rm -rf "$squat" "$world"
}
trap cleanup_squat EXIT
mkdir -m 0700 "$squat" # root's, not the victim's
mkdir -p "$world/bin" "$world/home"
cp "$B/softib" "$B/libsoftib.so" "$B/softib-sm" "$world/bin/"
chmod 755 "$world/bin" "$world/bin/"*
chown "$victim:$victim" "$world/home"
sib_run victim 60 setpriv --reuid="$victim" --regid="$victim" --clear-groups \
	env -u SOFTIB_RUN_DIR -u XDG_RUNTIME_DIR -u XDG_CACHE_HOME HOME="$world/home" \
	SOFTIB_SM="$SOFTIB_SM" "$world/bin/softib" run ibv_devinfo -d softib0
cat "$(sib_out victim)"
[ "${SIB_RC[victim]}" -eq 0 ] || sib_fail "ibv_devinfo exited $(sib_status_text "${SIB_RC[victim]}")"
sib_expect "$(sib_out victim)" 'state:[[:space:]]+PORT_ACTIVE' "the port is ACTIVE" ||
	sib_fail "the port did not come up"
sib_expect "$(sib_out victim)" \
	"softib's directory $squat cannot be used \\(another user owns it\\); using $world/home/.cache/softib-run instead" \
	"one line saying where softib went" || sib_fail "softib did not say where it went"
[ -d "$world/home/.cache/softib-run" ] && [ "$(stat -c '%u %a' "$world/home/.cache/softib-run")" = "$victim 700" ] ||
	sib_fail "the private directory is not the victim's, mode 0700"
ls "$world/home/.cache/softib-run" | grep -q '^sm-.*\.keys$' ||
	sib_fail "the SM did not keep its keys in the private directory"
echo "attack_rundir_squat: the squatted directory was passed over; the SM started in $world/home/.cache/softib-run"
