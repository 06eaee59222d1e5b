#!/bin/bash
# Busybox shell basics in the sandbox: pipes, the read-only host root, pid 1, exit statuses,
# death by signal, redirections.
. "$(dirname "$0")/lib.sh"
as_pid1 # the sentry's view of a program that is pid 1 (--no-init)
need_binaries

HOST_HOSTNAME_FILE=$(cat /etc/hostname)
HOST_DEBIAN_VERSION=$(cat /etc/debian_version)

t_basic() {
	sh_box 'echo hi | busybox tr a-z A-Z'
	check "pipe to tr" "HI" "$OUT"
	check_status "pipe to tr status" 0

	box "$BB" ls /
	for d in bin etc usr; do
		check_match "ls / has $d" "^$d\$" "$OUT"
	done

	box "$BB" cat /etc/hostname
	check "cat /etc/hostname: the sandbox's own (cbox-run)" "cbox" "$OUT"

	sh_box 'echo $$'
	check "first process is pid 1" "1" "$OUT"

	box "$BB" hostname
	check "hostname" "cbox" "$OUT"

	box "$BB" id -u
	check "uid 0" "0" "$OUT"

	# A server on port 80 of the sandbox's own loopback (the guest's root has no capability).
	sh_box 'busybox nc -l -p 80 -e busybox echo served & busybox sleep 0.3; busybox nc 127.0.0.1 80 </dev/null'
	check "a server on port 80 of its own loopback" served "$OUT"

	sh_box 'exit 3'
	check_status "exit status 3" 3

	box "$BB" false
	check_status "false" 1

	# A child killed by SIGKILL: the shell reports 128+9.
	sh_box 'busybox sh -c "kill -9 \$\$"; echo $?'
	check "child killed by SIGKILL" "137" "$OUT"

	# Pid 1 killed by a signal it cannot ignore (a fault): cbox-run exits 128+11.
	box "$GUEST" segv
	check_status "guest killed by SIGSEGV" 139

	# Pid 1 of a pid namespace ignores signals it sent itself without a handler, as on Linux.
	box "$GUEST" kill-self 9
	check "pid 1 survives its own SIGKILL" "survived 9" "$OUT"

	sh_box 'echo a > /dev/null; busybox cat < /etc/debian_version'
	check "redirections" "$HOST_DEBIAN_VERSION" "$OUT"

	# A file unlinked while open is reopened through /proc/self/fd as Linux reopens it (it was
	# ENOENT: its name was gone, and the gofer opens by name). A bash here-document larger than
	# a pipe is such a file; it is 0600, which the sentry's own host identity cannot open when
	# cbox-run is root (EACCES, as for O_TMPFILE files: docs/design.md), so 0644 here.
	sh_box 'umask 022; exec 3<>/tmp/f; echo hello >&3; rm /tmp/f; busybox cat /proc/self/fd/3 </dev/null; busybox cat /dev/stdin <&3'
	check "a file unlinked while open reopens through /proc/self/fd and /dev/stdin" "hello
hello" "$OUT"

	# The caller's stdin, stdout and stderr opened by name (/dev/stdin is /proc/self/fd/0): a
	# script's `echo oops > /dev/stderr` failed with EPERM, `cat /dev/stdin < file` with ENOENT
	# and on the caller's pipe with EACCES. Here they are a 0600 file and a pipe of root's,
	# which the sentry's host identity may not open when cbox-run is root (the guest then gets
	# its own fd again), and pipes of the sandbox's own.
	printf 'secret\n' >"$SCRATCH/in"
	chmod 600 "$SCRATCH/in"
	# shellcheck disable=SC2086
	OUT=$(timeout -k 5 "$CBOX_TIMEOUT" "$CBOX_RUN" $CFG -- "$BB" sh -c \
		'busybox cat /dev/stdin; echo out >/dev/stdout; echo err >/dev/stderr' \
		<"$SCRATCH/in" 2>&1)
	check "the caller's stdin file, stdout and stderr pipe opened by name" "secret
out
err" "$OUT"
	# shellcheck disable=SC2086
	OUT=$(echo piped | timeout -k 5 "$CBOX_TIMEOUT" "$CBOX_RUN" $CFG -- "$BB" sh -c \
		'busybox cat /dev/stdin; echo inner | busybox cat /dev/fd/0' 2>&1)
	check "the caller's pipe and the sandbox's own opened by name" "piped
inner" "$OUT"
	if [ "$(basename "$CBOX_RUN")" = cbox-run ]; then
		# Security: an fd opened again gives no more access than it has, or the read-only
		# `< file` the caller gave would let the guest change that file (on Linux, where the
		# program is the caller, it may: hence only under cbox-run).
		BOX_STDIN=$SCRATCH/in sh_box 'echo changed >/dev/stdin; exec 3<>/proc/self/fd/0'
		check_match "the caller's read-only stdin cannot be opened for writing" \
			"can't create /dev/stdin: Permission denied" "$ERR"
		check_match "... nor for reading and writing" "/proc/self/fd/0: Permission denied" "$ERR"
		check "the caller's file is unchanged" "secret" "$(cat "$SCRATCH/in")"
	fi

	# cbox-run started with stdin or stderr closed: the program finds it closed too, and
	# cbox-run's own fds do not land there (with stderr closed, --strace's lines went into one
	# of them and the run failed with 126).
	# shellcheck disable=SC2086
	OUT=$(timeout -k 5 10 "$CBOX_RUN" $CFG -- "$BB" sh -c \
		'busybox cat; echo "cat: $?"; busybox ls /proc/self/fd | busybox head -1' 0<&- 2>/dev/null)
	check "stdin closed by the caller: closed in the sandbox" "cat: 1
0" "$OUT"
	if [ "$(basename "$CBOX_RUN")" = cbox-run ]; then
		# shellcheck disable=SC2086
		OUT=$(timeout -k 5 10 "$CBOX_RUN" $CFG --strace -- sh -c \
			'echo out; echo err >&2 || echo "no stderr"' 2>&-)
		STATUS=$?
		check "stderr closed by the caller, --strace: the run goes on" "0 out
no stderr" "$STATUS $OUT"
	fi

	sh_box 'echo one >&2; echo two 1>&2; echo three'
	check "stderr redirection" "one
two" "$ERR"
	check "stdout beside stderr" "three" "$OUT"

	sh_box 'echo x > /etc/cbox-test'
	check_match "write to rootfs fails EROFS" "Read-only file system" "$ERR"
	check "write to rootfs status" "1" "$STATUS"
	check "rootfs unchanged" "absent" "$([ -e /etc/cbox-test ] && echo present || echo absent)"

	sh_box 'busybox mkdir /cbox-test-dir'
	check_match "mkdir on rootfs fails EROFS" "Read-only file system" "$ERR"

	BOX_STDIN=/etc/hostname box "$BB" cat
	check "stdin passes through" "$HOST_HOSTNAME_FILE" "$OUT"

	sh_box 'i=0; while [ $i -lt 200 ]; do i=$((i+1)); done; echo $i'
	check "shell loop" "200" "$OUT"

	sh_box 'busybox seq 1 2000 | busybox wc -l'
	check "pipe of 2000 lines" "2000" "$(echo $OUT)"
}

# -v to a path the host's root lacks: the mount point is made in a read-only tmpfs of the
# sandbox that shows what the root holds (docker makes it in the container's layer, bwrap in
# its tmpfs root); it failed with "create /x first", which only root could do, on the host.
t_new_mount_point() {
	local src="$SCRATCH/mp-src" name=cbox-itest-mp-$$
	mkdir -p "$src" && echo inside >"$src/f"
	# shellcheck disable=SC2086
	OUT=$(timeout -k 5 "$CBOX_TIMEOUT" "$CBOX_RUN" $CFG -v "$src:/$name:ro" -v "$src:/opt/$name/deep" \
		-- "$BB" sh -c "busybox cat /$name/f /opt/$name/deep/f; busybox ls / | busybox grep -c -x $name
			busybox cat /etc/hostname >/dev/null && echo etc; busybox ls /usr/bin/busybox
			busybox touch /new-$name /opt/new-$name /usr/new-$name 2>&1 | busybox grep -c Read-only
			busybox cat /etc/shadow; busybox ls -A /root | busybox wc -l" 2>&1)
	check "-v to a path the host's root lacks" "inside
inside
1
etc
/usr/bin/busybox
3
0" "$OUT"
	check "  ... and the host's root is unchanged" "absent absent" \
		"$([ -e "/$name" ] && echo present || echo absent) $([ -e "/opt/$name" ] && echo present || echo absent)"
	# shellcheck disable=SC2086
	OUT=$(timeout -k 5 "$CBOX_TIMEOUT" "$CBOX_RUN" $CFG -v "$src:/usr/lib/x86_64-linux-gnu/$name" -- "$BB" true 2>&1)
	check_match "  ... but not beside more than 256 entries" "has more than 256 entries" "$OUT"
}

for_each_config t_basic
if [ "$(basename "$CBOX_RUN")" = cbox-run ]; then
	CFG=${CONFIGS[0]}
	t_new_mount_point
fi
finish
