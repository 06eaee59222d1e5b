#!/bin/bash
# /proc and /dev as the sentry serves them.
. "$(dirname "$0")/lib.sh"
as_pid1 # the sentry's view of a program that is pid 1 (--no-init)
need_binaries

t_proc() {
	sh_box 'busybox ls -la /proc/self/'
	for f in stat status cmdline fd exe; do
		check_match "/proc/self/ has $f" " $f( -> .*)?\$" "$OUT"
	done

	sh_box 'busybox cat /proc/self/status; true'
	# /proc/self is the cat, a child of the shell (pid 1): its pid is not 1, its parent is. The
	# `; true` keeps busybox sh from exec'ing its last command in place.
	check_match "status Name" "^Name:[[:space:]]+(cat|busybox)\$" "$OUT"
	check_match "status Pid of a child" "^Pid:[[:space:]]+([2-9]|[1-9][0-9]+)\$" "$OUT"
	check_match "status PPid" "^PPid:[[:space:]]+1\$" "$OUT"

	sh_box 'exec busybox cat /proc/self/status'
	check_match "status Pid of pid 1" "^Pid:[[:space:]]+1\$" "$OUT"
	check_match "status PPid of pid 1" "^PPid:[[:space:]]+0\$" "$OUT"
	check_match "status Uid" "^Uid:[[:space:]]+0[[:space:]]+0[[:space:]]+0[[:space:]]+0\$" "$OUT"

	sh_box 'busybox cat /proc/$$/stat; true'
	check_match "/proc/\$\$/stat" "^1 \\((sh|busybox)\\) S 0 " "$OUT"

	box "$BB" readlink /proc/self/exe
	check "readlink /proc/self/exe" "$BB" "$OUT"

	box "$GUEST" kill-self 0
	sh_box 'busybox readlink /proc/$$/exe'
	check "readlink /proc/\$\$/exe" "$BB" "$OUT"

	sh_box 'busybox cat /proc/$$/cmdline | busybox tr "\0" " "'
	check "/proc/\$\$/cmdline" "$BB sh -c busybox cat /proc/\$\$/cmdline | busybox tr \"\\0\" \" \" " "$OUT"

	# Linux also lists the fd that ls holds open on the directory itself (3).
	sh_box 'exec busybox ls /proc/self/fd'
	check_match "/proc/self/fd lists 0 1 2" "^0 1 2( 3)?\$" "$(echo $OUT)"

	sh_box 'busybox ls /proc | busybox grep -x 1'
	check "/proc lists pid 1" "1" "$OUT"

	sh_box 'busybox ls -d /proc/[0-9]* | busybox wc -l'
	check_match "/proc holds only sandbox pids" "^[1-5]\$" "$(echo $OUT)"

	box "$BB" cat /dev/null
	check "/dev/null reads empty" "" "$OUT"
	check_status "/dev/null status" 0

	sh_box 'echo x > /dev/null && echo ok'
	check "/dev/null write" "ok" "$OUT"

	sh_box 'busybox head -c 5 /dev/zero | busybox od -An -tx1'
	check "/dev/zero" "00 00 00 00 00" "$(echo $OUT)"

	sh_box 'echo x > /dev/full'
	check_match "/dev/full write fails ENOSPC" "No space left on device" "$ERR"

	sh_box 'busybox head -c 32 /dev/urandom | busybox wc -c'
	check "/dev/urandom gives bytes" "32" "$(echo $OUT)"

	sh_box 'a=$(busybox head -c 16 /dev/urandom | busybox od -An -tx1); b=$(busybox head -c 16 /dev/random | busybox od -An -tx1); [ "$a" != "$b" ] && echo differ'
	check "/dev/urandom vs /dev/random differ" "differ" "$OUT"

	# The sentry's own nodes carry the sandbox's start time, as a new inode on Linux (not 1970).
	local now
	now=$(date +%s)
	sh_box 'busybox stat -c %Y /proc /proc/self/status /proc/self/fd /dev /dev/null'
	check "/proc and /dev nodes are as old as the sandbox" "" \
		"$(for t in $OUT; do [ $((now - t)) -le 120 ] && [ $((t - now)) -le 120 ] || echo "$t"; done)"
	check "  ... (five of them)" 5 "$(printf '%s\n' "$OUT" | grep -c .)"

	box "$GUEST" fds
	check_nomatch "fds" "^not ok" "$OUT"
	check "fds checks" 16 "$(printf '%s\n' "$OUT" | grep -c '^ok ')"
}

for_each_config t_proc
finish
