#!/bin/bash
# debian_rootfs.sh: print the path of a tarball of a minimal Debian 12 root with python3 (the
# local/debian-python image of test_docker.sh), building it with debootstrap from the Debian
# archive the first time. It is cached outside the clone ($CBOX_TEST_CACHE, default
# /var/cache/cbox-tests), so only the first run on a machine pays for it (about a minute).
# Root only (debootstrap). Exit 1 with the reason on stderr when it cannot be built.
set -euo pipefail
cache=${CBOX_TEST_CACHE:-/var/cache/cbox-tests}
tar="$cache/debian12-python3.tar"
if [ -s "$tar" ]; then
	echo "$tar"
	exit 0
fi
command -v debootstrap >/dev/null || {
	echo "debootstrap missing: install the Debian package debootstrap" >&2
	exit 1
}
# The archive apt uses here (deb822 or one-line sources), else Debian's own.
mirror=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null |
	grep -v security | head -n 1 || true)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $0 !~ /security/ { print $2; exit }' \
	/etc/apt/sources.list 2>/dev/null || true)
mirror=${mirror:-http://deb.debian.org/debian}
mkdir -p "$cache"
work=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! debootstrap --variant=minbase --include=python3 bookworm "$work/root" "$mirror" \
	>"$work/log" 2>&1; then
	echo "debootstrap of bookworm from $mirror failed; its log ends:" >&2
	tail -n 5 "$work/log" >&2
	exit 1
fi
rm -rf "$work/root/var/cache/apt/archives"/*.deb "$work/root/var/lib/apt/lists"/*
tar -C "$work/root" -cf "$work/root.tar" .
mv "$work/root.tar" "$tar" # atomic: a concurrent or interrupted build never leaves half a tar
echo "$tar"
