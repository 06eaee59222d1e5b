#!/bin/bash
# Killing any part of a sandbox from outside takes the whole sandbox down: kill -9 of the sentry
# leaves no guest or gofer behind, and neither does kill -9 of cbox-run itself. Stopping and
# continuing the sentry (SIGSTOP/SIGCONT, as a debugger or a job-control shell does) does not.
. "$(dirname "$0")/lib.sh"
need_root
need_binaries

t_kill_sentry() {
	start_sleeper
	local sentry guest
	sentry=$(find_desc_by_comm "$RUN_PID" cbox-sentry)
	guest=$(find_desc_by_comm "$RUN_PID" busybox)
	if [ -z "$sentry" ] || [ -z "$guest" ]; then
		check "sandbox started (sentry and guest found)" "sentry+guest" \
			"sentry=${sentry:-none} guest=${guest:-none} tree:$(left_over)"
		stop_run
		return
	fi
	check_match "gofer found" "cbox-gofer" "$(left_over)"
	kill -9 "$sentry"
	expect_gone "kill -9 sentry leaves nothing"
	stop_run
}

t_kill_cbox_run() {
	start_sleeper
	if [ -z "$CBOX_PID" ] || [ -z "$(find_desc_by_comm "$RUN_PID" busybox)" ]; then
		check "sandbox started (cbox-run and guest found)" "found" \
			"cbox-run=${CBOX_PID:-none} tree:$(left_over)"
		stop_run
		return
	fi
	kill -9 "$CBOX_PID"
	expect_gone "kill -9 cbox-run leaves nothing"
	stop_run
}

t_kill_guest() {
	start_sleeper
	local guest
	guest=$(find_desc_by_comm "$RUN_PID" busybox)
	if [ -z "$guest" ]; then
		check "sandbox started (guest found)" "found" "tree:$(left_over)"
		stop_run
		return
	fi
	kill -9 "$guest"
	expect_gone "kill -9 guest ends the sandbox"
	wait "$RUN_PID"
	STATUS=$?
	check_status "cbox-run exit status after the guest's SIGKILL" 137
}

# A guest killed from outside while the sentry runs calls in it (kill -9, the OOM killer): on the
# ptrace platform, an install under an fd limit below 1023 runs several. The sentry took the
# exit in the middle of its calls and lost it (the sandbox then waited forever: 2 runs in 6); a
# process of two threads whose leader died so was never reported at all while the sentry waited
# for that leader alone. Every run must end, with the SIGKILL's status.
t_kill_busy_guest() {
	local i k guest statuses=""
	for i in 1 2 3 4 5 6; do
		# (the scratch path in its command line: lib.sh's exit trap kills it if this script
		# dies first)
		# shellcheck disable=SC2086
		setsid "$CBOX_RUN" $CFG -- /bin/sh -c "ulimit -n 256; exec $GUEST open-loop $((i % 2 + 1))" \
			"$SCRATCH" </dev/null >/dev/null 2>"$SCRATCH/err" &
		RUN_PID=$!
		guest=""
		for ((k = 0; k < 100; k++)); do
			guest=$(find_desc_by_comm "$RUN_PID" cbox-test-guest) && break
			sleep 0.1
		done
		sleep 0.3
		[ -n "$guest" ] && kill -9 "$guest"
		for ((k = 0; k < 100; k++)); do
			kill -0 "$RUN_PID" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$RUN_PID" 2>/dev/null; then
			statuses="$statuses hung"
			stop_run
		else
			wait "$RUN_PID"
			statuses="$statuses $?"
		fi
	done
	check "a guest killed while the sentry runs calls in it ends the sandbox (6 runs)" \
		" 137 137 137 137 137 137" "$statuses"
}

# A stopped sentry's blocking call is restarted on SIGCONT (restart_syscall or the call itself):
# its seccomp filter must allow that, or the sandbox dies of SIGSYS.
t_stop_cont_sentry() {
	start_sleeper
	local sentry sentry_id
	sentry=$(find_desc_by_comm "$RUN_PID" cbox-sentry)
	if [ -z "$sentry" ]; then
		check "sandbox started (sentry found)" "found" "tree:$(left_over)"
		stop_run
		return
	fi
	sentry_id=$(proc_id "$sentry")
	kill -STOP "$sentry"
	sleep 0.2
	kill -CONT "$sentry"
	sleep 0.5
	check "sentry survives SIGSTOP/SIGCONT" "alive" \
		"$(proc_id_alive "$sentry_id" && echo alive || echo "dead: $(cat "$SCRATCH/err")")"
	stop_run
}

# sig_run SCRIPT: `cbox-run CFG -- busybox sh -c SCRIPT` in a session of its own, as a shell
# runs a foreground job: cbox-run leads the process group a terminal's ^C would signal. Waits
# until SCRIPT printed "ready"; sets SIG_PID (cbox-run, the group's id) and SIG_OUT (its output).
sig_run() {
	SIG_OUT="$SCRATCH/sig.out"
	rm -f "$SIG_OUT"
	# shellcheck disable=SC2086
	setsid "$CBOX_RUN" $CFG -- "$BB" sh -c "$1" </dev/null >"$SIG_OUT" 2>&1 &
	SIG_PID=$!
	for _ in $(seq 100); do
		grep -q ready "$SIG_OUT" 2>/dev/null && break
		sleep 0.1
	done
}

# Signals to cbox-run (issue 3): the first SIGINT/SIGTERM is passed on to the guest's program,
# which may clean up; with --no-init, as the init of its pid namespace, it gets only what it
# handles, so a second signal ends the sandbox. A ^C to the whole foreground group must arrive once: the sentry and
# the gofer are in groups of their own.
t_signals() {
	[ "$(basename "$CBOX_RUN")" = cbox-run ] || { skip_check "signals" "not cbox-run"; return; }
	sig_run 'trap "echo cleaning up; exit 3" INT; echo ready; while :; do busybox sleep 0.1; done'
	kill -INT -- "-$SIG_PID"
	wait "$SIG_PID"
	STATUS=$?
	check_status "^C to the job: the program's INT trap runs, and its status comes back" 3
	check "  ... once, and cbox-run says nothing" "ready
cleaning up" "$(cat "$SIG_OUT")"
	local cfg0=$CFG
	CFG="$cfg0 --no-init"
	sig_run 'echo ready; busybox sleep 1000'
	TREE=""
	local p
	for p in $SIG_PID $(descendants "$SIG_PID" | cut -d' ' -f1); do
		TREE="$TREE $(proc_id "$p")"
	done
	kill -TERM "$SIG_PID"
	sleep 0.5
	check "--no-init: a program without a TERM handler (pid 1) keeps running" "" \
		"$(kill -0 "$SIG_PID" 2>/dev/null || echo gone)"
	kill -TERM "$SIG_PID"
	wait "$SIG_PID"
	STATUS=$?
	check_status "  ... a second SIGTERM ends the sandbox" 143
	check_match "  ... and says so" "the sandbox was killed on a second Terminated" "$(cat "$SIG_OUT")"
	expect_gone "  ... leaving nothing"
	CFG=$cfg0
}

# ^Z: a shell with job control stops cbox-run's process group (cbox-run alone); cbox-run stops
# the program too, and continues it with itself (job_stop_cont, lib.sh).
t_stop_job() {
	[ "$(basename "$CBOX_RUN")" = cbox-run ] || { skip_check "^Z" "not cbox-run"; return; }
	job_stop_cont "^Z"
	kill -KILL "$JOB_PID" "$JOB_PARENT" 2>/dev/null
	wait "$JOB_PARENT" 2>/dev/null
}

# By default (and with --init) a tiny init is pid 1 and the program pid 2, so the program gets
# signals with their default actions, as outside; the init passes signals on, cannot be killed
# from the guest, and /proc shows it without any of its memory (it is a copy of the sentry).
t_init() {
	[ "$(basename "$CBOX_RUN")" = cbox-run ] || { skip_check "--init" "not cbox-run"; return; }
	local cfg0=$CFG
	sh_box 'echo $$'
	check "by default the program is pid 2" "2" "$OUT"
	# A program that leaves background jobs starting: they die with it, quietly. Under the
	# init the sentry used to stop answering first, and the jobs printed ENOSYS errors or
	# the loader's complaint (a race: about one run in three).
	local i errs=""
	for i in 1 2 3 4 5 6 7 8 9 10; do
		sh_box '(busybox sleep 1 &); busybox sleep 1 & busybox nohup busybox sleep 1 >/dev/null 2>&1 & echo spawned'
		errs="$errs$ERR"
	done
	check "  ... background jobs end with the program, silently (10 runs)" "" "$errs"
	CFG="$cfg0 --init"
	sh_box 'echo $$; kill -TERM $$; echo survived'
	check "--init: the program is pid 2" "2" "$OUT"
	check_status "  ... and its own SIGTERM ends it" 143
	sh_box 'busybox yes | busybox head -1'
	check "  ... yes | head -1 ends quietly (SIGPIPE)" "y" "$(printf '%s\n' "$OUT" | head -1)"
	check "  ... with nothing on stderr" "" "$ERR"
	# (its environment, mappings and links are closed, as a non-dumpable process's are on
	# Linux: it is one on the host, holding a copy of the sentry's memory)
	box "$BB" sh -c 'busybox yes | busybox head -1 >/dev/null; kill -9 1; busybox sleep 0.2; echo alive; busybox tr "\0" " " </proc/1/cmdline; echo; busybox cat /proc/1/environ 2>&1; busybox cat /proc/1/maps 2>&1; busybox readlink /proc/1/exe || echo no-exe; busybox ps -o pid,comm | busybox grep -w 1'
	check "  ... the guest cannot kill the init; /proc/1 is the init, none of its memory shown" \
		"alive
cbox-init 
cat: can't open '/proc/1/environ': Permission denied
cat: can't open '/proc/1/maps': Permission denied
no-exe
    1 cbox-init" "$OUT"
	sig_run 'echo ready; busybox sleep 1000; echo after'
	kill -INT -- "-$SIG_PID"
	wait "$SIG_PID"
	STATUS=$?
	check_status "  ... one ^C ends a script without a trap" 130
	check "  ... at once" "ready" "$(cat "$SIG_OUT")"
	t_stop_job
	CFG=$cfg0
}

for_each_config ${TEARDOWN_TESTS:-t_kill_sentry t_kill_cbox_run t_kill_guest t_kill_busy_guest t_stop_cont_sentry t_signals t_init t_stop_job}
finish
