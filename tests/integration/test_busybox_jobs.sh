#!/bin/bash
# Job control in the sandbox's busybox shell: background jobs, wait, $!, kill, traps, pipelines,
# subshells; and the helper's fork, thread and signal checks.
. "$(dirname "$0")/lib.sh"
as_pid1 # the sentry's view of a program that is pid 1 (--no-init)
need_binaries

t_jobs() {
	sh_box 'busybox sleep 0.1 & wait; echo done'
	check "background job + wait" "done" "$OUT"

	sh_box 'busybox sleep 0.1 & p=$!; wait $p; echo "$? $((p > 1))"'
	check "\$! names the job" "0 1" "$OUT"

	sh_box 'kill -0 $$ && echo alive'
	check "kill -0 self" "alive" "$OUT"

	sh_box 'trap "echo got" TERM; kill -TERM $$; echo after'
	check "trap on SIGTERM" "got
after" "$OUT"

	sh_box 'echo abc | busybox tr a-z A-Z | busybox rev'
	check "3-stage pipe" "CBA" "$OUT"

	sh_box 'x=outer; (x=inner; echo $x); echo $x'
	check "subshell" "inner
outer" "$OUT"

	sh_box 'echo $(echo $(echo nested))'
	check "nested command substitution" "nested" "$OUT"

	sh_box 'busybox sleep 10 & kill -TERM $!; wait $!; echo $?'
	check "wait status of a killed child" "143" "$OUT"

	sh_box 'set -m; busybox sleep 10 & kill -TERM %1; wait; echo $?; wait %1 2>/dev/null; echo end'
	check_match "kill %1" "^end\$" "$OUT"

	sh_box '(exit 7) & wait $!; echo $?'
	check "wait status of an exiting child" "7" "$OUT"

	# A stopped job is stopped, and shows so ("T", as ps prints it), though the sentry holds it
	# in a tracing stop of the host's; SIGCONT runs it again.
	sh_box 'busybox sleep 10 & p=$!; kill -STOP $p; busybox sleep 0.2
		busybox awk "{ print \$3 }" /proc/$p/stat; busybox grep State /proc/$p/status
		kill -CONT $p; busybox sleep 0.2; busybox awk "{ print \$3 }" /proc/$p/stat; kill $p'
	check "a SIGSTOPped job shows stopped, and sleeps again after SIGCONT" "T
State:	T (stopped)
S" "$OUT"

	sh_box 'for i in 1 2 3 4 5 6 7 8; do (busybox true) & done; wait; echo waited'
	check "8 concurrent children" "waited" "$OUT"

	box "$GUEST" fork-tree 5
	check "fork-tree status" 0 "$STATUS"
	check_nomatch "fork-tree" "^not ok" "$OUT"
	check "fork-tree checks" 6 "$(printf '%s\n' "$OUT" | grep -c '^ok ')"

	box "$GUEST" threads 8
	check "threads" "ok threads share-pid
ok threads distinct-tids
threads 8" "$OUT"

	box "$GUEST" signal-child
	check "signal-child" "ok signal-child SIGTERM
ok signal-child handler" "$OUT"

	# kill never fails with EINTR on Linux: under a SIGCHLD handler without SA_RESTART, a
	# signal that interrupts the seccomp wait of the next kill must not show (it did about
	# once in 40 kills when the stop's SIGCHLD came then).
	box "$GUEST" kill-eintr 2000
	check "kill under a handler without SA_RESTART: never EINTR" "kill-eintr 2000 eintr 0" "$OUT"

	# A stopped process stays stopped: no thread of it runs once its parent's wait says so.
	# Under ptrace a thread reached by the group-stop while the sentry ran calls in it (an
	# install under an fd limit) ran on (198 stops of 200), and a child whose two threads kept
	# trapping starved its parent's own calls (25 s for one kill and wait). Once SIGCONT
	# returned, /proc shows it going again (it read T until the sentry took the task's stop).
	box "$GUEST" stop-hold 100 256
	check "a stopped process stays stopped, installs or not; not shown stopped after SIGCONT" "stop-hold 100 ran 0 stopped 0" "$OUT"

	# SIGCONT then SIGTERM to a child asleep in a call, under a handler without SA_RESTART, as
	# psutil's terminate sends them: the sleep ends with EINTR. Ptrace wakes the child for the
	# SIGCONT (Linux drops it) and the kernel restarts the call after it; a SIGTERM that came
	# right then ran its handler and the child slept on (python's time.sleep under psutil's
	# suite, about one run in five: test_psutil.sh is the likelier catch; here the window is
	# rarely hit, 0 in 2000 with the fix taken out on 2026-12-07). One CI run's 1 child in 500
	# under ptrace was the test's own race: the parent waited a fixed 1 ms for the child to be
	# asleep, and on a loaded machine the SIGTERM could come before the sleep began (natively,
	# with two CPU hogs: 40-55 children in 3000 slept on; 0 since it waits for state S).
	box "$GUEST" cont-term 500
	check "SIGCONT then SIGTERM ends a sleep with EINTR" "cont-term 500 slept-on 0" "$OUT"

	# A child's exit (SIGCHLD, ignored by default) does not end a wait without a time limit:
	# Linux drops the signal, ptrace queues it, and epoll_wait and sigwaitinfo said EINTR.
	box "$GUEST" ignored-wake
	check "a child's exit does not interrupt epoll_wait(-1) or sigwaitinfo" \
		"ignored-wake epoll 1 sigwaitinfo 10" "$OUT"

	# ... nor cut a blocking transfer short: a 1 MiB write or writev to a pipe read late
	# returned 65536, a send or sendmsg to a stream socket ~214 KiB, a recv or recvmsg with
	# MSG_WAITALL what had come. (Under ptrace --strict the trapped call's stop is answered
	# without an exit stop, where the rest would be counted in: left as it was, so not asserted
	# there.)
	box "$GUEST" short-write
	case "$CFG" in
	*ptrace*strict*) ;;
	*) check "a child's exit does not cut a blocking write, send or MSG_WAITALL receive short" \
		"short-write write 1048576 writev 1048576 send 1048576 sendmsg 1048576 recv 1048576 recvmsg 1048576 all" \
		"$OUT" ;;
	esac

	# A write that ends short by itself (its pipe's reader gone, the file size limit reached)
	# sends SIGPIPE or SIGXFSZ, which python ignores: the sentry took that signal for one that
	# had cut the write short, wrote on, and the write never returned (CPython's
	# test_broken_pipe_cleanup hung). The short count and then the error, as on Linux.
	box "$GUEST" short-write-end
	check "a write to a pipe whose reader left, or past RLIMIT_FSIZE, returns what went" \
		"short-write-end pipe room EPIPE file 100000 EFBIG" "$OUT"

	# An execve kills the process's other threads wherever they are, in the middle of the
	# sentry's calls too: quietly (the ptrace platform warned "installing an fd in task N
	# failed: Bad address" about once in 150 execs).
	box "$GUEST" exec-threads 300
	check "execve of a process whose threads open files" "exec-threads 300 bad 0" "$OUT"
	check "  ... with nothing on stderr" "" "$ERR"

	box "$GUEST" ids
	check "ids" "pid 1
ppid 0
tid 1
uid 0
euid 0
gid 0
egid 0" "$(printf '%s\n' "$OUT" | head -n 7)"
}

for_each_config t_jobs
finish
