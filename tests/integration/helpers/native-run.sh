#!/bin/bash
# native-run.sh: a stand-in for cbox-run built from unshare(1), used to validate the integration
# tests' expectations against Linux itself: CBOX_RUN=.../native-run.sh bash test_x.sh
# It gives the guest what the contract promises that the kernel can give without a sentry: pid 1
# of a new pid namespace with its own /proc, uid 0 in a user namespace, hostname "cbox", an empty
# network namespace and a read-only root. It traps nothing: options about platforms are ignored.
set -u
while [ $# -gt 0 ]; do
	case "$1" in
	--) shift; break ;;
	--rootfs) shift 2 ;;
	--platform=* | --strict | --strace | --log-level=* | --log-format=* | --rootfs=*) shift ;;
	--no-init) shift ;; # the program is pid 1 here anyway
	*) echo "native-run: unknown option $1" >&2; exit 125 ;;
	esac
done
[ $# -gt 0 ] || { echo "native-run: no program" >&2; exit 125; }
prog=$1
case "$prog" in
*/*) path=$prog ;;
*) path=$(command -v -- "$prog") || path="" ;;
esac
if [ -z "$path" ] || [ ! -e "$path" ]; then
	echo "cbox-run: $prog: No such file or directory" >&2
	exit 127
fi
if [ ! -x "$path" ] || [ -d "$path" ]; then
	echo "cbox-run: $prog: Permission denied" >&2
	exit 126
fi
shift
# The guest gets stdin, stdout and stderr only, as from cbox-run.
for fd in /proc/self/fd/*; do
	fd=${fd##*/}
	[ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
done
exec unshare --user --map-root-user --pid --fork --kill-child --mount-proc --mount --uts --net \
	/bin/sh -c 'hostname cbox && mount -o remount,bind,ro / && exec "$0" "$@"' "$path" "$@"
