#!/bin/bash
# psutil's own tests (Debian's python3-psutil ships them) under the sentry: its authors check
# /proc against what Linux's own tools and calls say (ps, free, vmstat, findmnt, sysinfo,
# getrlimit, the status and stat files against each other), far more widely than our tests of
# /proc do. Run under cbox-run they found smaps, smaps_rollup, io, diskstats and partitions
# missing, the loader's mapping named as a file not in the guest's tree, zombies gone from /proc
# before their parent's wait, and a child named "cbox-loader" right after its exec. Every
# module must pass, but for these test ids, each left out for a reason of its own:
# - fail natively on this Debian: test_misc's test_setup_script (psutil's setup.py is not in the
#   package) and test_debug; test_users (nobody is logged in: utmp is empty); test_linux's
#   TestSystemVirtualMemory.test_used (psutil 5.9.4 and procps 4's free count "used"
#   differently).
# - the sandbox has no block device (its /proc/partitions and diskstats list none, its /dev has
#   none): TestRootFsDeviceFinder (the root's device looked up there) and test_disk_io_counters
#   ("no disks on this system?").
# - test_num_ctx_switches reads voluntary_ctxt_switches from /proc/PID/status twice, through two
#   opens the sentry answers: each trapped call is a voluntary switch of the caller, so the two
#   differ by a few.
#
# In 2 of 10 runs (2026-12-07) a child the suite started did not end within 5 s of the SIGCONT
# and SIGTERM of psutil's terminate (test_connections' test_multi_sockets_procs): the sentry's
# tracing let the kernel restart its sleep under the SIGTERM's handler (tracer.c,
# restart_window). The script was out of `make test` until that was found; 20 runs under
# seccomp and 12 under ptrace passed after the fix. A stop of the whole suite in
# test_contracts' test_all, seen once under ptrace before (then not in 28 runs) and once in ~20
# runs on 2026-12-07, is where psutil's multiprocessing.Pool deadlocks now and then on Linux
# (psutil issue 2104): psutil_suite.py runs that test without the pool, as psutil's own CI.
CBOX_TIMEOUT=${CBOX_TIMEOUT:-300}
. "$(dirname "$0")/lib.sh"
need_binaries

PY=/usr/bin/python3 # Debian's: the package's tests are for it
MODULES=(test_process test_contracts test_posix test_connections test_unicode test_misc
	test_system test_linux)
EXCLUDED=(test_misc.TestMisc.test_setup_script test_misc.TestCommonModule.test_debug
	test_system.TestMiscAPIs.test_users test_linux.TestSystemVirtualMemory.test_used
	test_linux.TestRootFsDeviceFinder test_system.TestDiskAPIs.test_disk_io_counters
	test_linux.TestProcessAgainstStatus.test_num_ctx_switches)

[ -x "$PY" ] || skip "$PY not installed (Debian package python3)"
"$PY" -c 'import psutil.tests' 2>/dev/null ||
	skip "psutil's tests not installed (Debian package python3-psutil)"

t_psutil() {
	local wd excluded result
	wd=$(mktemp -d "$ITEST_TMP/wd.XXXXXX") || return
	# (the host's /tmp, where a clone of this tree may be, is not the guest's)
	cp "$(dirname "$0")/helpers/psutil_suite.py" "$wd/" || return
	excluded=$(
		IFS=,
		echo "${EXCLUDED[*]}"
	)
	# $CFG is split on spaces on purpose: it holds one or two options.
	# shellcheck disable=SC2086
	(cd "$wd" && timeout -k 5 "$CBOX_TIMEOUT" "$CBOX_RUN" $CFG -- "$PY" psutil_suite.py \
		"$excluded" "${MODULES[@]}") >"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null
	STATUS=$?
	OUT=$(cat "$SCRATCH/out")
	ERR=$(cat "$SCRATCH/err")
	result=$(printf '%s\n' "$OUT" | grep '^psutil suite:' | cut -d' ' -f3)
	check "psutil's tests of processes, the system and /proc pass" "OK" "$result"
	check_nomatch "  ... and no sanitizer report from the sentry, the gofer or cbox-run" \
		'ERROR: [A-Za-z]+Sanitizer|\.c:[0-9]+:[0-9]+: runtime error:' "$ERR"
	if [ "$result" != "OK" ]; then
		echo "    (exit status $STATUS)"
		printf '%s\n' "$ERR" | grep -E -A14 '^(FAIL|ERROR):' | head -n 80 | sed 's/^/    /'
		printf '%s\n' "$ERR" | tail -n 15 | sed 's/^/    | /'
	fi
	rm -rf "$wd"
}

for_each_config t_psutil
finish
