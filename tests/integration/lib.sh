# Sourced by every tests/integration/test_*.sh (bash).
#
# Environment (set by CMake for ctest; set it by hand to run a script alone):
#   CBOX_RUN   path of cbox-run            CBOX     path of cbox
#   HELPERS    dir holding cbox-test-guest and cbox-filter-dump
#   CBOX_ITEST_TMP  scratch dir visible inside the sandbox (default: a dir under HELPERS)
#   CBOX_CONFIGS    override the configurations, separated by '|' (e.g. "--platform=ptrace")
#   CBOX_TESTS_MUST_WORK=1  every skip becomes a failure (CI)
#   CBOX_TIMEOUT    seconds allowed to one cbox-run call (default 60)
#
# To check that an expectation is Linux's own, run a script against the kernel with
# CBOX_RUN=helpers/native-run.sh CBOX_RUN_COMM=unshare (namespaces, no sentry): everything but
# the sentry-specific checks (teardown, host surface, refused syscalls) must pass there.
#
# A test defines functions that call `box ARGS...` (runs ARGS in the sandbox under the current
# configuration, setting OUT, ERR and STATUS) and then `check`/`check_status`/`check_match`;
# `for_each_config FN...` runs them under every configuration and `finish` ends the script.

set -u
export LC_ALL=C

BB=/usr/bin/busybox
GUEST="${HELPERS:-}/cbox-test-guest"
FILTER_DUMP="${HELPERS:-}/cbox-filter-dump"
CBOX_TIMEOUT=${CBOX_TIMEOUT:-60}
PASSED=0
FAILED=0
SKIPPED=0
CFG=""
OUT=""
ERR=""
STATUS=0

if [ -n "${CBOX_CONFIGS:-}" ]; then
	IFS='|' read -r -a CONFIGS <<<"$CBOX_CONFIGS"
else
	CONFIGS=("--platform=seccomp" "--platform=seccomp --strict" "--platform=ptrace"
		"--platform=ptrace --strict")
fi

# as_pid1: the program is pid 1 of the sandbox in every configuration (--no-init), for the tests
# of the sentry's view of a pid 1 (cbox-run's default is a tiny init as pid 1, the program pid 2).
as_pid1() {
	local i
	for i in "${!CONFIGS[@]}"; do
		CONFIGS[i]="${CONFIGS[i]} --no-init"
	done
}

SCRATCH=$(mktemp -d /tmp/cbox-itest.XXXXXX)

# kill_leftovers: what the test started and left running (a container's init still waiting
# for `start` after a failed check, a detached container) is found by the scratch dir in its
# command line and killed, so that a failing run leaves no process on the machine (one such
# init once outlived its test here). The list of pids is taken before any grep runs.
kill_leftovers() {
	local p
	disown -a 2>/dev/null # no "Killed" notice for the test's own background jobs
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" = "$$" ] && continue
		if { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -qF "$SCRATCH"; then
			kill -KILL "${p#/proc/}" 2>/dev/null
		fi
	done
}
trap 'kill_leftovers; rm -rf "$SCRATCH"' EXIT

# skip REASON: exit 77 (ctest SKIP), or fail when CBOX_TESTS_MUST_WORK=1.
skip() {
	if [ "${CBOX_TESTS_MUST_WORK:-0}" = 1 ]; then
		echo "SKIP not allowed: $*"
		exit 1
	fi
	echo "SKIP: $*"
	exit 77
}

need_root() {
	[ "$(id -u)" = 0 ] || skip "needs root"
}

# need_binaries: the binaries under test and the helpers must exist.
need_binaries() {
	[ -n "${CBOX_RUN:-}" ] && [ -x "$CBOX_RUN" ] || skip "CBOX_RUN (cbox-run) not built or not set"
	[ -x "$GUEST" ] || skip "cbox-test-guest not found in HELPERS=${HELPERS:-}"
	[ -x "$BB" ] || skip "$BB missing: install the Debian package busybox-static"
	local tmp="${CBOX_ITEST_TMP:-${HELPERS}/tmp}"
	mkdir -p "$tmp" || skip "cannot create $tmp"
	ITEST_TMP=$(mktemp -d "$tmp/t.XXXXXX")
	trap 'kill_leftovers; rm -rf "$SCRATCH" "$ITEST_TMP"' EXIT
}

# box ARGS...: runs ARGS as the guest program under the current configuration, bounded in time.
# Sets OUT and ERR (trailing newlines stripped) and STATUS. Stdin is BOX_STDIN or /dev/null.
box() {
	# $CFG is split on spaces on purpose: it holds one or two options.
	# shellcheck disable=SC2086
	timeout -k 5 "$CBOX_TIMEOUT" "$CBOX_RUN" $CFG -- "$@" \
		>"$SCRATCH/out" 2>"$SCRATCH/err" <"${BOX_STDIN:-/dev/null}"
	STATUS=$?
	OUT=$(cat "$SCRATCH/out")
	ERR=$(cat "$SCRATCH/err")
}

# sh_box SCRIPT: runs `busybox sh -c SCRIPT` in the sandbox.
sh_box() {
	box "$BB" sh -c "$1"
}

report_fail() {
	local got=$3
	if [ "$(printf '%s\n' "$got" | wc -l)" -gt 8 ]; then
		got="$(printf '%s\n' "$got" | head -n 8)
    ...(truncated)"
	fi
	echo "FAIL $1 [$CFG]: expected $2, got $got"
	if [ "$STATUS" = 124 ]; then
		echo "    (cbox-run timed out after ${CBOX_TIMEOUT}s)"
	fi
	if [ -n "$ERR" ]; then
		printf '%s\n' "$ERR" | head -n 5 | sed 's/^/    stderr: /'
	fi
	FAILED=$((FAILED + 1))
}

pass() {
	echo "PASS $1 [$CFG]"
	PASSED=$((PASSED + 1))
}

# check NAME EXPECTED ACTUAL: exact string equality.
check() {
	if [ "$2" = "$3" ]; then
		pass "$1"
	else
		report_fail "$1" "'$2'" "'$3'"
	fi
}

# check_status NAME EXPECTED: compares with STATUS of the last box call.
check_status() {
	check "$1" "$2" "$STATUS"
}

# check_match NAME ERE ACTUAL: ACTUAL (any line of it) matches the extended regex.
check_match() {
	if printf '%s\n' "$3" | grep -Eq -- "$2"; then
		pass "$1"
	else
		report_fail "$1" "a match for /$2/" "'$3'"
	fi
}

# check_nomatch NAME ERE ACTUAL: no line of ACTUAL matches.
check_nomatch() {
	if printf '%s\n' "$3" | grep -Eq -- "$2"; then
		report_fail "$1" "no match for /$2/" "'$3'"
	else
		pass "$1"
	fi
}

# skip_check NAME REASON: a check that cannot run here; a failure under CBOX_TESTS_MUST_WORK=1.
skip_check() {
	if [ "${CBOX_TESTS_MUST_WORK:-0}" = 1 ]; then
		report_fail "$1" "a runnable check" "skip: $2"
	else
		echo "SKIP $1 [$CFG]: $2"
		SKIPPED=$((SKIPPED + 1))
	fi
}

# for_each_config FN...: runs each function under every configuration.
for_each_config() {
	local fn
	for CFG in "${CONFIGS[@]}"; do
		for fn in "$@"; do
			"$fn"
		done
	done
	CFG=""
}

# finish: the summary line; exit 1 on any failure, 77 when everything was skipped.
finish() {
	echo "$PASSED passed, $FAILED failed"
	if [ "$FAILED" -gt 0 ]; then
		exit 1
	fi
	if [ "$PASSED" = 0 ] && [ "$SKIPPED" -gt 0 ]; then
		skip "every check was skipped"
	fi
	exit 0
}

# Process-tree helpers (host side), used by the teardown and host-surface tests.

# proc_field PID N: field N of /proc/PID/stat (fields after the comm, which may hold spaces).
proc_field() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	local f
	read -r -a f <<<"$s"
	# Field 3 (state) is the first after the comm.
	echo "${f[$(($2 - 3))]}"
}

proc_comm() {
	cat "/proc/$1/comm" 2>/dev/null
}

# descendants PID: every live descendant of PID as "PID COMM" lines (one ps call: fast enough
# to poll).
descendants() {
	ps -e -o pid=,ppid=,comm= | awk -v root="$1" '
		{ parent[$1] = $2; comm[$1] = $3 }
		END {
			n = 1; q[1] = root
			for (i = 1; i <= n; i++)
				for (p in parent)
					if (parent[p] == q[i]) { q[++n] = p; print p, comm[p] }
		}'
}

# find_desc_by_comm PID COMM: the first descendant of PID whose comm is COMM.
find_desc_by_comm() {
	descendants "$1" | awk -v c="$2" '$2 == c { print $1; found = 1; exit } END { exit !found }'
}

# proc_id PID: "PID:STARTTIME", which identifies a process across pid reuse.
proc_id() {
	local st
	st=$(proc_field "$1" 22) && echo "$1:$st"
}

proc_id_alive() {
	local pid=${1%%:*} st=${1#*:} state
	state=$(proc_field "$pid" 3) || return 1
	[ "$(proc_field "$pid" 22)" = "$st" ] || return 1
	[ "$state" != Z ] && [ "$state" != X ]
}

# Long-running sandboxes, for the tests that look at the host side of a running sandbox.

# The comm of cbox-run on the host (overridable for a stand-in such as helpers/native-run.sh).
CBOX_RUN_COMM=${CBOX_RUN_COMM:-$(basename "${CBOX_RUN:-cbox-run}" | cut -c1-15)}

# start_sleeper: starts `cbox-run CFG -- busybox sleep 1000` in the background (its own process
# group) and sets RUN_PID (the timeout wrapper), CBOX_PID (cbox-run) and TREE (ids of every
# process of the sandbox, cbox-run included).
start_sleeper() {
	# shellcheck disable=SC2086
	setsid timeout -k 5 "$CBOX_TIMEOUT" "$CBOX_RUN" $CFG -- "$BB" sleep 1000 \
		</dev/null >/dev/null 2>"$SCRATCH/err" &
	RUN_PID=$!
	CBOX_PID=""
	TREE=""
	local p deadline=$((SECONDS + 10))
	while [ "$SECONDS" -lt "$deadline" ]; do
		CBOX_PID=$(find_desc_by_comm "$RUN_PID" "$CBOX_RUN_COMM") &&
			find_desc_by_comm "$RUN_PID" busybox >/dev/null && break
		sleep 0.1
	done
	sleep 0.2 # let the sandbox finish starting: every process exists once the guest runs
	for p in $(descendants "$RUN_PID" | cut -d' ' -f1); do
		TREE="$TREE $(proc_id "$p")"
	done
}

# left_over: the ids in TREE that still name a live process.
left_over() {
	local id left=""
	for id in $TREE; do
		if proc_id_alive "$id"; then
			left="$left ${id%%:*}($(proc_comm "${id%%:*}"))"
		fi
	done
	echo "$left"
}

# expect_gone NAME: within 5 s, nothing of the sandbox is left.
expect_gone() {
	local i left
	for ((i = 0; i < 50; i++)); do
		left=$(left_over)
		[ -z "$left" ] && break
		sleep 0.1
	done
	check "$1" "" "$left"
}

stop_run() {
	kill -9 -- "-$RUN_PID" 2>/dev/null
	wait "$RUN_PID" 2>/dev/null
}

# For the OCI runtime's tests (the caller sets ROOT, the state root, and BUNDLE, and defines
# `edit PYTHON`, which rewrites BUNDLE's config.json).
# oci ARGS...: runs cbox with the test's root; sets OUT, ERR, STATUS.
oci() {
	timeout -k 5 30 "$CBOX" --root "$ROOT" "$@" >"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null
	STATUS=$?
	OUT=$(cat "$SCRATCH/out")
	ERR=$(cat "$SCRATCH/err")
}

# oci_in FILE ARGS...: as oci, with FILE on stdin.
oci_in() {
	local in=$1
	shift
	timeout -k 5 30 "$CBOX" --root "$ROOT" "$@" >"$SCRATCH/out" 2>"$SCRATCH/err" <"$in"
	STATUS=$?
	OUT=$(cat "$SCRATCH/out")
	ERR=$(cat "$SCRATCH/err")
}

# json_field KEY: the member KEY of the JSON object in OUT.
json_field() {
	printf '%s' "$OUT" | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"
}

# cg_dir ID IDX: container ID's directory in cgroup hierarchy IDX (0 memory, 1 pids, 3 freezer, 4
# the cgroup2 one), from the record create left in its state directory.
cg_dir() {
	awk -v i="$2" 'NR > 1 && $1 == i { print $3 }' "$ROOT/$1/cgroup" 2>/dev/null
}

# cg_memory_limit ID / cg_pids_max ID: the limits the kernel holds for container ID.
cg_memory_limit() {
	local d
	d=$(cg_dir "$1" 0)
	if [ -n "$d" ]; then cat "$d/memory.limit_in_bytes"; else cat "$(cg_dir "$1" 4)/memory.max"; fi
}
cg_pids_max() {
	local d
	d=$(cg_dir "$1" 1)
	[ -n "$d" ] || d=$(cg_dir "$1" 4)
	cat "$d/pids.max"
}

# counter_moves FILE: whether the number in FILE changes within 1 s (a container's loop writes it).
counter_moves() {
	local a b
	a=$(cat "$1" 2>/dev/null)
	for _ in $(seq 10); do
		sleep 0.1
		b=$(cat "$1" 2>/dev/null)
		[ "$a" != "$b" ] && return 0
	done
	return 1
}

# job_stop_cont LABEL: cbox-run ($CBOX_RUN $CFG) runs a counting loop as a job of a job-control
# bash, whose process group gets ^Z (SIGTSTP): cbox-run must stop and so must the program, and a
# SIGCONT (fg) continues both. The job's group must not be orphaned (the kernel drops a SIGTSTP's
# stop there): its bash parent stays, as a sleep. JOB_PID (cbox-run) and JOB_PARENT are left
# running for the caller to end.
job_stop_cont() {
	local c="$SCRATCH/job-count" pidf="$SCRATCH/job.pid" st
	rm -f "$c" "$pidf"
	# shellcheck disable=SC2086
	setsid bash -c 'set -m; "$@" </dev/null >/dev/null 2>&1 & echo $! >"'"$pidf"'"
		exec sleep 60' _ \
		"$CBOX_RUN" $CFG -v "$SCRATCH:$SCRATCH" -- "$BB" sh -c \
		"i=0; while :; do i=\$((i+1)); echo \$i >$c; busybox sleep 0.05; done" &
	JOB_PARENT=$!
	for _ in $(seq 100); do
		[ -s "$c" ] && [ -s "$pidf" ] && break
		sleep 0.1
	done
	JOB_PID=$(cat "$pidf" 2>/dev/null)
	kill -TSTP -- "-$JOB_PID"
	sleep 0.5
	st=$(ps -o stat= -p "$JOB_PID" | cut -c1)
	check "$1: cbox-run stops" "T" "$st"
	check "  ... and so does the program" 1 "$(counter_moves "$c"; echo $?)"
	kill -CONT -- "-$JOB_PID"
	check "  ... fg: both go on" 0 "$(counter_moves "$c"; echo $?)"
}

# wait_stopped ID: up to 5 s for container ID to stop (OUT: its last state).
wait_stopped() {
	for _ in $(seq 50); do
		oci state "$1"
		printf '%s' "$OUT" | grep -q '"stopped"' && return 0
		sleep 0.1
	done
	return 1
}

# as_user CMD...: CMD as uid and gid 1000 without groups, bounded in time (the rootless tests).
as_user() {
	timeout -k 5 30 setpriv --reuid 1000 --regid 1000 --clear-groups "$@"
}

# rootless_bundle DIR ROOTFS: DIR/bundle holding a copy of ROOTFS and the config.json that
# `cbox spec --rootless` writes for uid 1000, who owns all of it; the scratch directory lets that
# user through (the caller makes it 0700 again).
rootless_bundle() {
	mkdir -p "$1/bundle"
	cp -a "$2" "$1/bundle/"
	chmod 0711 "$SCRATCH"
	chown -R 1000:1000 "$1"
	as_user "$CBOX" spec --rootless --bundle "$1/bundle"
}

# runsh SCRIPT [PYTHON]: `cbox run` of sh -c SCRIPT with the config edits.
runsh() {
	edit "c['process']['args'] = ['sh', '-c', '''$1''']
${2:-}"
	oci run --bundle "$BUNDLE" "t$RANDOM"
}

# console_create_checks ID_PREFIX: process.terminal on create and run (issue 4): with
# --console-socket the master goes over the socket before create returns (a receiver as
# containerd's shim, helpers/console_recv.py); without one, create refuses and `run` holds the
# terminal itself. The caller's `edit` must keep its own settings (tier) in the config.
console_create_checks() {
	local id=$1
	rm -f "$SCRATCH/cc.sock"
	python3 "$(dirname "${BASH_SOURCE[0]}")/helpers/console_recv.py" "$SCRATCH/cc.sock" \
		>"$SCRATCH/cc.out" 2>&1 &
	local recv=$!
	for _ in $(seq 50); do
		[ -S "$SCRATCH/cc.sock" ] && break
		sleep 0.1
	done
	edit "c['process']['terminal'] = True
c['process']['args'] = ['sh', '-c', 'test -t 0 && test -t 1 && echo on-a-terminal']"
	oci create --console-socket "$SCRATCH/cc.sock" --bundle "$BUNDLE" "$id"
	check_status "create with process.terminal and --console-socket" 0
	oci start "$id"
	check_status "  ... start" 0
	wait "$recv"
	check_match "  ... the master came over the socket" '^name /dev/ptmx fds 1' "$(cat "$SCRATCH/cc.out")"
	check_match "  ... and the process's stdio is that terminal" '^on-a-terminal' "$(cat "$SCRATCH/cc.out")"
	for _ in $(seq 50); do
		oci state "$id"
		printf '%s' "$OUT" | grep -q stopped && break
		sleep 0.1
	done
	oci delete "$id"
	oci create --bundle "$BUNDLE" "$id-2"
	check_match "create with process.terminal and no console socket: refused" \
		"process.terminal needs --console-socket" "$ERR"
	oci run --bundle "$BUNDLE" "$id-3"
	check_status "run with process.terminal: cbox holds the terminal" 0
	check_match "  ... the process's stdio is a terminal" '^on-a-terminal' "$OUT"
}
