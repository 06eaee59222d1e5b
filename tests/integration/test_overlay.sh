#!/bin/bash
# cbox-run --overlay: the root becomes writable through a layer of the sandbox's own; creating,
# changing and removing files of the rootfs works inside and leaves the host's files untouched.
. "$(dirname "$0")/lib.sh"
need_binaries
need_root

PROBE="/etc/cbox-overlay-probe-$$"

t_overlay() {
	CFG="$CFG --overlay" sh_box "echo new > $PROBE && cat $PROBE; \
		echo changed >> /etc/debian_version && tail -n 1 /etc/debian_version; \
		rm /etc/debian_version && test ! -e /etc/debian_version && echo removed"
	check_status "writes to the root under --overlay" 0
	check "the new file, the changed one, the removed one" "new
changed
removed" "$OUT"
	check "the host's rootfs has no new file" absent "$(test -e "$PROBE" && echo present || echo absent)"
	check "the host's /etc/debian_version is unchanged" "$VERSION_BEFORE" "$(cat /etc/debian_version)"
	check "the host's /etc/debian_version is still there" yes "$(test -e /etc/debian_version && echo yes)"
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
		echo changed >> /etc/debian_version || echo refused
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
	check "the host's /etc/debian_version is unchanged (user)" "$VERSION_BEFORE" "$(cat /etc/debian_version)"
	rm -rf "$d"
}

# A directory overlayfs refuses as a lower layer is shown read-only, its content intact, while
# the rest is layered: a host overlay over an overlay is at the kernel's stacking limit (2), so
# one more on it fails (EINVAL); the overlay below it still takes one.
t_overlay_user_unlayerable() {
	local t d
	t=$(mktemp -d /var/tmp/cbox-ovd.XXXXXX) && chmod 755 "$t" || return
	d=$(mktemp -d /tmp/cbox-ov.XXXXXX) && chown 1000:1000 "$d" || return
	mkdir -p "$t/l" "$t/u1" "$t/w1" "$t/a" "$t/u2" "$t/w2" "$t/b" && echo deep >"$t/l/f"
	chmod 1777 "$t/u2" # b's root: writable by the user outside
	if ! mount -t overlay cbox-test -o "lowerdir=$t/l,upperdir=$t/u1,workdir=$t/w1" "$t/a" ||
		! mount -t overlay cbox-test -o "lowerdir=$t/a,upperdir=$t/u2,workdir=$t/w2" "$t/b"; then
		skip_check "an unlayerable directory under --overlay" "no overlay mounts here"
		umount "$t/a" 2>/dev/null
		rm -rf "$t" "$d"
		return
	fi
	# shellcheck disable=SC2086
	OUT=$(cd "$d" && timeout -k 5 "$CBOX_TIMEOUT" setpriv --reuid=1000 --regid=1000 \
		--clear-groups "$CBOX_RUN" $CFG --overlay -- "$BB" sh -c "
		cat $t/b/f; echo x > $t/b/g || echo refused
		echo y > $t/l/../a/g && cat $t/a/g" 2>"$SCRATCH/err")
	ERR=$(cat "$SCRATCH/err")
	check "a directory at the stacking limit is read-only, the one below it layered" "deep
refused
y" "$OUT"
	check_match "  ... the write there is EROFS" "Read-only file system" "$ERR"
	check "  ... and nothing reached the host" "" "$(find "$t/u1" "$t/u2" -mindepth 1)"
	umount "$t/b" "$t/a"
	rm -rf "$t" "$d"
}

# Run by a user over a --rootfs without mounts below it: one overlay, made in the gofer's user
# namespace (userxattr). The user's file in the user's directory is changed inside only. (One in
# a directory of root's cannot be: overlayfs copies the directory up first, and cannot give the
# copy an owner the namespace does not map: EOVERFLOW.)
t_overlay_user_rootfs() {
	local r d
	r=$(mktemp -d /var/tmp/cbox-rfs.XXXXXX) && d=$(mktemp -d /tmp/cbox-ov.XXXXXX) || return
	mkdir -p "$r/bin" "$r/etc" "$r/tmp" "$r/dev" && cp "$BB" "$r/bin/busybox" &&
		echo rootfs >"$r/etc/motd" && chmod -R a+rX "$r" && chown 1000:1000 "$r/etc" "$r/etc/motd" "$d" ||
		return
	# shellcheck disable=SC2086
	OUT=$(cd "$d" && timeout -k 5 "$CBOX_TIMEOUT" setpriv --reuid=1000 --regid=1000 \
		--clear-groups "$CBOX_RUN" $CFG --rootfs "$r" --overlay -- /bin/busybox sh -c "
		echo new > /x && cat /x; echo more >> /etc/motd && cat /etc/motd" 2>"$SCRATCH/err")
	ERR=$(cat "$SCRATCH/err")
	check "one overlay over a --rootfs, run by a user" "new
rootfs
more" "$OUT"
	check "  ... and the rootfs is unchanged" "rootfs absent" \
		"$(cat "$r/etc/motd") $(test -e "$r/x" && echo present || echo absent)"
	rm -rf "$r" "$d"
}

VERSION_BEFORE=$(cat /etc/debian_version)
for_each_config t_overlay t_overlay_user t_overlay_user_rootfs
CFG="${CONFIGS[0]}" t_overlay_user_unlayerable
check "the host's /etc/debian_version after every run" "$VERSION_BEFORE" "$(cat /etc/debian_version)"
finish
