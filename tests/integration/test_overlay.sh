#!/bin/bash
# cbox-run --overlay: the root becomes writable through a layer of the sandbox's own; creating,
# changing and removing files of the rootfs works inside and leaves the host's files untouched.
. "$(dirname "$0")/lib.sh"
need_binaries
need_root

PROBE="/etc/cbox-overlay-probe-$$"

t_overlay() {
	CFG="$CFG --overlay" sh_box "echo new > $PROBE && cat $PROBE; \
		echo changed >> /etc/hostname && tail -n 1 /etc/hostname; \
		rm /etc/hostname && test ! -e /etc/hostname && echo removed"
	check_status "writes to the root under --overlay" 0
	check "the new file, the changed one, the removed one" "new
changed
removed" "$OUT"
	check "the host's rootfs has no new file" absent "$(test -e "$PROBE" && echo present || echo absent)"
	check "the host's /etc/hostname is unchanged" "$HOSTNAME_BEFORE" "$(cat /etc/hostname)"
	check "the host's /etc/hostname is still there" yes "$(test -e /etc/hostname && echo yes)"
	# Without --overlay the same write is refused.
	sh_box "echo new > $PROBE"
	check_match "without --overlay the root stays read-only" "Read-only file system" "$ERR"
}

HOSTNAME_BEFORE=$(cat /etc/hostname)
for_each_config t_overlay
check "the host's /etc/hostname after every run" "$HOSTNAME_BEFORE" "$(cat /etc/hostname)"
finish
