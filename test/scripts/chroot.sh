#!/usr/bin/env bash
# The ways scripts/common.sh enters a major's chroot (issue 37, item 9):
# with a mount namespace of its own where unshare can make its mounts
# private, and with plain mounts, unmounted afterwards, where it cannot (a
# container or chroot whose / is not a mount point; NDD_PRIVATE_MOUNTS=no
# takes that way here).  Both must give the command /proc and /dev and its
# exit status, the plain way must leave nothing mounted, and a chroot with
# something still mounted in it is never deleted to be made again.
# Usage: test/scripts/chroot.sh SUITE (a chroot scripts/test_all.sh made);
# ends with "N passed, N failed".  Needs root.
set -u
. "$(dirname "$0")/../../scripts/common.sh"

suite=$1
dir=$NDD_CHROOT_DIR/$suite
passed=0
failed=0
check() {
	if [ "$2" = "$3" ]; then
		passed=$((passed + 1)); echo "ok - $1"
	else
		failed=$((failed + 1)); echo "not ok - $1: got '$2', expected '$3'"
	fi
}
# the mounts of this namespace under a directory
mounts_under() { awk -v d="$1/" 'index($5, d) == 1' /proc/self/mountinfo | wc -l; }

for way in namespace plain; do
	if [ "$way" = plain ]; then export NDD_PRIVATE_MOUNTS=no; else unset NDD_PRIVATE_MOUNTS; fi
	out=$(ndd_in_chroot "$suite" sh -c 'test -r /proc/self/status && test -c /dev/null && echo yes' 2>&1)
	check "$way: the command sees /proc and /dev" "$out" yes
	ndd_in_chroot "$suite" sh -c 'exit 3' 2>/dev/null
	check "$way: its exit status comes back" "$?" 3
	check "$way: nothing is left mounted in the chroot" "$(mounts_under "$dir")" 0
done
unset NDD_PRIVATE_MOUNTS

# a chroot being made again (no ready mark) with a mount left in it: refused,
# and what the mount holds survives
scratch=$(mktemp -d /tmp/ndd-chroot-test-XXXXXX)
mkdir -p "$scratch/fake/dev"
mount -t tmpfs tmpfs "$scratch/fake/dev" && touch "$scratch/fake/dev/kept"
NDD_CHROOT_DIR=$scratch ndd_chroot_ensure fake 2>/dev/null
check "a chroot with a mount in it is not made again" "$?" 1
check "what is mounted in it survives" "$(ls "$scratch/fake/dev")" kept
umount "$scratch/fake/dev"
rm -rf "$scratch"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
