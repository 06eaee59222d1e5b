#!/bin/bash
# CPython's own regression tests (Debian's libpython3.11-testsuite) under the sentry: the modules
# that exercise what a sandbox gets wrong first: files and directories (os, posix, shutil,
# tempfile, pathlib, fileio, stat, glob, tarfile), memory maps, readiness (select, selectors,
# poll, epoll), fcntl and ptys, processes and signals (subprocess, signal, threading, eintr,
# wait4, resource, time), sockets (socket, logging's servers) and venv. Their authors check
# Linux's answers, errors included, far more widely than our own tests can: run under cbox-run
# they found fstat showing the ptrace platform's install socket to the guest and F_NOTIFY
# refused. Each module must pass as it does natively (regrtest's summary says SUCCESS).
#
# Left out by test id (regrtest -i), each for a reason of its own:
# - test_pidfd_send_signal signals through an fd of /proc/PID, which Linux takes as a pidfd. In
#   the sandbox that directory is one the sentry makes up (a memfd on the host), and the sentry
#   cannot send the signal as the caller (Linux lets no other process forge SI_USER): EBADF.
# - *VSOCK*: a vsock listener that waits for ever on this VM, natively too.
#
# Two configurations by default (seccomp and ptrace, not --strict), and seccomp again with
# cbox-run started by uid 1000: about 2 minutes each with the ASan build. CBOX_CONFIGS still
# overrides.
CBOX_CONFIGS=${CBOX_CONFIGS:-"--platform=seccomp|--platform=ptrace"}
CBOX_TIMEOUT=${CBOX_TIMEOUT:-600}
. "$(dirname "$0")/lib.sh"
need_binaries

PY=/usr/bin/python3 # Debian's: the package's tests are for it
MODULES=(test_os test_posix test_shutil test_tempfile test_pathlib test_fileio test_mmap
	test_select test_selectors test_poll test_epoll test_fcntl test_pty test_subprocess
	test_signal test_threading test_eintr test_wait4 test_socket test_stat test_glob
	test_tarfile test_venv test_logging test_resource test_time)

[ -x "$PY" ] || skip "$PY not installed (Debian package python3)"
[ -d "$(dirname "$(realpath "$PY")")/../lib/python3.11/test/libregrtest" ] ||
	skip "CPython's tests not installed (Debian package libpython3.11-testsuite)"

# run_suite [AS...]: the modules, in a fresh working folder, under the current configuration;
# cbox-run is started by AS (a setpriv command line), by the caller when there is none.
run_suite() {
	local wd result
	wd=$(mktemp -d "$ITEST_TMP/wd.XXXXXX") || return
	if [ $# -gt 0 ]; then
		chmod 711 "$ITEST_TMP" && chown 1000:1000 "$wd" || return
	fi
	# $CFG is split on spaces on purpose: it holds one or two options.
	# shellcheck disable=SC2086
	(cd "$wd" && timeout -k 5 "$CBOX_TIMEOUT" "$@" "$CBOX_RUN" $CFG -- "$PY" -m test -j2 \
		--timeout 300 -i '*VSOCK*' -i test_pidfd_send_signal "${MODULES[@]}") \
		>"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null
	STATUS=$?
	OUT=$(cat "$SCRATCH/out")
	ERR=$(cat "$SCRATCH/err")
	result=$(printf '%s\n' "$OUT" | grep '^Tests result:' | tail -n 1)
	check "CPython's tests of files, processes, signals and sockets pass${1:+ (cbox-run as uid 1000)}" \
		"Tests result: SUCCESS" "$result"
	# With the sanitizer build, a report from the sentry or the gofer after the guest's last
	# output (at teardown, say), or a leak check's (the sentry's at its end, cbox-run's at its
	# exit), fails nothing above: cbox-run's stderr must hold none. (The gofer ends with
	# _exit: no leak check runs in it.)
	check_nomatch "  ... and no sanitizer report from the sentry, the gofer or cbox-run" \
		'ERROR: [A-Za-z]+Sanitizer|\.c:[0-9]+:[0-9]+: runtime error:' "$ERR"
	if [ "$result" != "Tests result: SUCCESS" ]; then
		# Which modules failed, and why: regrtest (-j2) names each on a progress line
		# ("0:05:12 load avg: 1.9 [26/26/1] test_x failed (1 error)", "... test_x timed out
		# (5 min 0 sec)") and prints the worker's output after it: each failing case ("FAIL:
		# ..." or "ERROR: ...") with its traceback, or, for a worker that hung, faulthandler's
		# stacks of its threads ("Timeout (0:05:00)!").
		printf '%s\n' "$OUT" |
			grep -E -A40 ' test_[a-z0-9_]+ (failed|crashed|timed out)|^(FAIL|ERROR): |^Timeout \(|tests? failed:' |
			head -n 300 | sed 's/^/    /'
	fi
	rm -rf "$wd"
}

t_cpython() {
	run_suite
}

# The same, started by a user who is not root (a user namespace of the caller's own; the guest is
# root inside it), as an agent's account would: seccomp only, the run above covers ptrace.
t_cpython_user() {
	case "$CFG" in *ptrace*) return ;; esac
	run_suite setpriv --reuid=1000 --regid=1000 --clear-groups
}

for_each_config t_cpython t_cpython_user
finish
