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

# Run by a user, overlayfs refuses the host's root as one lower layer (the mounts below it are
# locked in the gofer's user namespace): the root is layered at its mount points (gofer/overlay.c).
# Writes land in the sandbox as above; a move between two layers is a copy (EXDEV, mv falls
# back); root's files stay root's: the user cannot change them inside either (must fail), and a
# mount point missing in one of root's directories gets room made for it as without --overlay.
t_overlay_user() {
	local d
	d=$(mktemp -d /tmp/cbox-ov.XXXXXX) && chown 1000:1000 "$d" || return
	# shellcheck disable=SC2086
	OUT=$(cd "$d" && timeout -k 5 "$CBOX_TIMEOUT" setpriv --reuid=1000 --regid=1000 \
		--clear-groups "$CBOX_RUN" $CFG --overlay -v "$d:/usr/share/cbox-ov-$$:ro" -- "$BB" sh -c "
		echo new > $PROBE && cat $PROBE
		mkdir /opt/cbox-ov-$$ && echo deep > /opt/cbox-ov-$$/f && cat /opt/cbox-ov-$$/f
		mv $PROBE /var/cbox-ov-$$ && cat /var/cbox-ov-$$ && test ! -e $PROBE && echo moved
		rm /var/cbox-ov-$$ && test ! -e /var/cbox-ov-$$ && echo removed
		echo changed >> /etc/hostname || echo refused
		test -d /proc/self/fd && echo proc; ls /dev/null
		test -d /usr/share/cbox-ov-$$ && echo bound" 2>"$SCRATCH/err")
	STATUS=$?
	ERR=$(cat "$SCRATCH/err")
	check "writes under --overlay run by a user" "new
deep
new
moved
removed
refused
proc
/dev/null
bound" "$OUT"
	check_match "root's file stays unwritable to a user under --overlay" \
		"Permission denied" "$ERR"
	local f seen=""
	for f in "$PROBE" /opt/cbox-ov-$$ /var/cbox-ov-$$; do
		if test -e "$f"; then seen="$seen present"; else seen="$seen absent"; fi
	done
	check "the host's rootfs has none of the user's files" " absent absent absent" "$seen"
	check "the host's /etc/hostname is unchanged (user)" "$HOSTNAME_BEFORE" "$(cat /etc/hostname)"
	rm -rf "$d"
}

HOSTNAME_BEFORE=$(cat /etc/hostname)
for_each_config t_overlay t_overlay_user
check "the host's /etc/hostname after every run" "$HOSTNAME_BEFORE" "$(cat /etc/hostname)"
finish
