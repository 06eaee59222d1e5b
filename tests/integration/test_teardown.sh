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

for_each_config ${TEARDOWN_TESTS:-t_kill_sentry t_kill_cbox_run t_kill_guest t_stop_cont_sentry}
finish
