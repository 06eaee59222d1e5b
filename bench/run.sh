#!/usr/bin/env bash
# Side-by-side benchmarks: native, cbox (seccomp/ptrace, fast path/strict), runsc, bwrap.
# See bench/README.md. Prints two tables (microbenchmarks, real programs) and the performance
# targets (PASS/MISS); every repetition runs all configurations in turn (interleaved); writes
# $BUILD/bench/results/latest.tsv (formatted cells) and latest-ns.tsv (raw nanoseconds).
# The exit status is 0 whenever the benchmarks could run: missed targets are reported, not fatal.
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build-release}
ALL_CONFIGS="native cbox-seccomp cbox-seccomp-user cbox-seccomp-strict cbox-ptrace cbox-ptrace-strict"
ALL_CONFIGS="$ALL_CONFIGS cbox-ns"
ALL_CONFIGS="$ALL_CONFIGS runsc bwrap"
CONFIGS=$ALL_CONFIGS
QUICK=0
RUN_TIMEOUT=${RUN_TIMEOUT:-180} # seconds for one run of one benchmark

usage() {
	cat <<EOF
usage: bench/run.sh [--quick] [--build DIR] [--configs LIST]
  --quick         fewer iterations and runs (a rough table in about a minute)
  --build DIR     the release build directory (default: \$BUILD or $ROOT/build-release)
  --configs LIST  comma-separated subset of: ${ALL_CONFIGS// /,}
Environment: CBOX_RUN (default DIR/cbox-run), BENCH_USER (who runs the cbox-seccomp-user column
when root runs the benchmarks; default nobody), RUNSC, BWRAP, BENCH_PYTHON (default
/usr/bin/python3), BENCH_CC (default /usr/bin/gcc), BENCH_GIT (default /usr/bin/git),
RUN_TIMEOUT (default 180 s per run), BENCH_SETTLE (default 0.05 s of quiet after each externally
timed run, so that what it left to finish does not count in the next one).
Build first: cmake --preset release && cmake --build build-release -j2
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1 ;;
	--build) BUILD=${2:?--build needs a directory}; shift ;;
	--build=*) BUILD=${1#--build=} ;;
	--configs) CONFIGS=${2:?--configs needs a list}; CONFIGS=${CONFIGS//,/ }; shift ;;
	--configs=*) CONFIGS=${1#--configs=}; CONFIGS=${CONFIGS//,/ } ;;
	-h | --help) usage; exit 0 ;;
	*) echo "bench/run.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
for c in $CONFIGS; do
	case " $ALL_CONFIGS " in
	*" $c "*) ;;
	*) echo "bench/run.sh: unknown configuration '$c' (known: $ALL_CONFIGS)" >&2; exit 2 ;;
	esac
done

BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || {
	echo "bench/run.sh: build directory not found; run:" \
		"cmake --preset release && cmake --build build-release -j2" >&2
	exit 2
}
GUEST=$BUILD/bench/cbox-bench-guest
BASELINE=$BUILD/bench/cbox-bench-baseline
TIMER=$BUILD/bench/cbox-bench-time
CBOX_RUN=${CBOX_RUN:-$BUILD/cbox-run}
RUNSC=${RUNSC:-$(command -v runsc || true)}
BWRAP=${BWRAP:-$(command -v bwrap || true)}
# Absolute paths of the host's own programs: PATH may point at wrappers (pyenv shims) that live
# under /root, which cbox-run hides.
PYTHON=${BENCH_PYTHON:-/usr/bin/python3}
CC_PROG=${BENCH_CC:-/usr/bin/gcc}
GIT_PROG=${BENCH_GIT:-/usr/bin/git}
for p in "$GUEST" "$BASELINE" "$TIMER"; do
	if [ ! -x "$p" ]; then
		echo "bench/run.sh: $p is missing; run: cmake --build $BUILD --target $(basename "$p")" >&2
		exit 2
	fi
done
case $BUILD in
*" "*) echo "bench/run.sh: the build path must not contain spaces: $BUILD" >&2; exit 2 ;;
esac

RESULTS=$BUILD/bench/results
LOGS=$RESULTS/logs
mkdir -p "$LOGS" || exit 2
rm -f "$LOGS"/*.log "$LOGS"/*.json

# Every configuration runs in this scratch directory, the working folder: cbox-run makes it
# writable, bwrap binds it writable (below), runsc writes into its own memory overlay. The guest
# files (compile.c, compile.o, the write-read file) live here, never in the source tree.
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cbox-bench.XXXXXX") || exit 2
trap 'rm -rf "$WORK"' EXIT
case $WORK in
*" "*) echo "bench/run.sh: the scratch path must not contain spaces: $WORK" >&2; exit 2 ;;
esac
mkdir -p "$WORK/home" && cp "$ROOT/bench/data/compile.c" "$WORK/" && cd "$WORK" || exit 2
# cbox-seccomp-user: cbox-run run by a user, as most users run it (the sentry then looks names of
# the read-only rootfs up itself: docs/design.md), when root runs the benchmarks; its working
# folder is a copy of this one that the user owns.
BENCH_USER=${BENCH_USER:-nobody}
BENCH_GROUP=$(id -gn "$BENCH_USER" 2>/dev/null)
UWORK=""
# A tree for the metadata row: 40 directories of 50 small files in the working folder (du lists
# each directory and stats every entry through the directory's fd, as find, tar and rm -r do).
for d in $(seq -w 1 40); do
	mkdir -p "tree/d$d" && for f in $(seq -w 1 50); do echo "$d$f" >"tree/d$d/f$f"; done
done
# A git repository of 400 committed files in 20 directories: git status lstat()s each file by its
# path in the index's sorted order (no listing first), then lists the directories for untracked
# files; an agent runs it all the time.
if [ -x "$GIT_PROG" ]; then
	for d in $(seq -w 1 20); do
		mkdir -p "repo/d$d" && for f in $(seq -w 1 20); do echo "$d$f" >"repo/d$d/f$f"; done
	done
	if ! { "$GIT_PROG" -C repo init -q && "$GIT_PROG" -C repo add -A &&
		"$GIT_PROG" -C repo -c user.name=bench -c user.email=bench@cbox.invalid \
			commit -q -m files; } >/dev/null 2>&1; then
		GIT_PROG=""
	fi
fi
if [ "$(id -u)" = 0 ] && [[ " $CONFIGS " == *" cbox-seccomp-user "* ]] &&
	id "$BENCH_USER" >/dev/null 2>&1; then
	UWORK=$(mktemp -d "${TMPDIR:-/tmp}/cbox-bench-user.XXXXXX") || exit 2
	trap 'rm -rf "$WORK" "$UWORK"' EXIT
	chmod 755 "$UWORK" && cp -a "$WORK/." "$UWORK/" &&
		chown -R "$BENCH_USER:$BENCH_GROUP" "$UWORK" || exit 2
fi
# Programs run with the same small environment everywhere (cbox-run passes only PATH, HOME, TERM
# and LANG): the host's (PYTHON* variables, a pyenv PATH) would change what python3 does.
CLEAN_ENV=(env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$WORK/home" LANG=C.UTF-8 TERM=dumb)

# Iterations per benchmark (chosen so that the slowest configuration stays near a second per run).
BENCHES="getppid open-close stat pipe-pingpong sendmsg fork-wait"
# Programs table, timed by the guest itself: write-read N is in MiB (64 even with --quick: the
# size is the benchmark), fork-exec N execs of /bin/true, python-exec N runs of python3 -c pass
# in one sandbox (the python-pass row without the sandbox's start).
GUEST_PROGS="write-read fork-exec"
[ -x "$PYTHON" ] && GUEST_PROGS="$GUEST_PROGS python-exec"
declare -A ITERS=([getppid]=50000 [open-close]=10000 [stat]=10000 [pipe-pingpong]=10000
	[sendmsg]=10000 [fork-wait]=1000 [write-read]=64 [fork-exec]=200 [python-exec]=20)
# Programs table, timed from outside (wall time of one run), and startup.
EXT_PROGS="python-pass python-import gcc-c du-tree git-status subshells"
BASE_ITERS=50000
SETTLE=${BENCH_SETTLE:-0.05} # seconds of quiet after each externally timed run (measure_all)
MICRO_RUNS=5
STARTUP_RUNS=30
PROG_RUNS=10
if [ "$QUICK" = 1 ]; then
	for b in $BENCHES fork-exec python-exec; do ITERS[$b]=$((ITERS[$b] / 10)); done
	BASE_ITERS=5000
	MICRO_RUNS=3
	STARTUP_RUNS=10
	PROG_RUNS=3
fi

declare -A VAL    # VAL[config/bench] = nanoseconds, or "fail"
declare -A NOTE   # NOTE[config] = why the column is skipped or failing
ACTIVE=""         # configurations that run

# Prints the command prefix of a configuration, one word per line.
prefix() {
	case $1 in
	native) ;;
	# (the user column as BENCH_USER: outer; in UWORK: in_workdir)
	cbox-seccomp | cbox-seccomp-user) printf '%s\n' "$CBOX_RUN" --platform=seccomp -- ;;
	cbox-seccomp-strict) printf '%s\n' "$CBOX_RUN" --platform=seccomp --strict -- ;;
	cbox-ptrace) printf '%s\n' "$CBOX_RUN" --platform=ptrace -- ;;
	cbox-ptrace-strict) printf '%s\n' "$CBOX_RUN" --platform=ptrace --strict -- ;;
	# the sibling tier behind the same front door: plain namespaces and cgroups, as runc
	cbox-ns) printf '%s\n' "$CBOX_RUN" --tier=ns -- ;;
	runsc)
		# This runsc build has the ptrace platform only (kvm needs /dev/kvm and hangs
		# without it; there is no systrap); the sandbox network needs a veth setup, so
		# --network=none. Root runs it as is; other users need --rootless.
		printf '%s\n' "$RUNSC" --network=none --platform=ptrace
		[ "$(id -u)" = 0 ] || printf '%s\n' --rootless --ignore-cgroups
		printf '%s\n' 'do' ;;
	bwrap)
		# An empty writable /tmp (gcc writes its .s there) and the working folder
		# writable, as cbox-run gives them.
		printf '%s\n' "$BWRAP" --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp \
			--bind "$WORK" "$WORK" --unshare-all --die-with-parent -- ;;
	esac
}

# What runs before the timer (outer CONFIG, one word per line): setpriv for the user column, so
# that its own start is never in a figure.
outer() {
	[ "$1" = cbox-seccomp-user ] &&
		printf '%s\n' setpriv "--reuid=$BENCH_USER" "--regid=$BENCH_GROUP" --clear-groups
	return 0
}

# in_workdir CONFIG: the user column runs in its own copy of the working folder. (Called in the
# subshells that time one run.)
in_workdir() {
	[ "$1" = cbox-seccomp-user ] && cd "$UWORK"
	return 0
}

# Prints the command of an externally timed row, one word per line.
ext_argv() {
	case $1 in
	startup) printf '%s\n' "$GUEST" true 1 ;;
	python-pass) printf '%s\n' "$PYTHON" -c pass ;;
	python-import) printf '%s\n' "$PYTHON" -c 'import json, sqlite3' ;;
	gcc-c) printf '%s\n' "$CC_PROG" -O2 -c compile.c -o compile.o ;;
	du-tree) printf '%s\n' du -s tree ;;
	git-status) printf '%s\n' "$GIT_PROG" -C repo status --short ;;
	# a shell script's command substitutions: a fork without exec each
	subshells) printf '%s\n' /bin/sh -c 'i=0; while [ $i -lt 100 ]; do x=$(echo $i); i=$((i+1)); done' ;;
	esac
}

# run_in CONFIG LOG ARGS...: runs ARGS inside CONFIG with a time limit; stdout to stdout,
# stderr appended to LOG.
run_in() {
	local cfg=$1 log=$2 pre out
	shift 2
	in_workdir "$cfg" || return
	mapfile -t out < <(outer "$cfg")
	mapfile -t pre < <(prefix "$cfg")
	timeout --kill-after=10 "$RUN_TIMEOUT" "${out[@]}" "${pre[@]}" "$@" </dev/null 2>>"$log"
}

median() {
	sort -g | awk '{v[NR] = $1}
		END {if (NR) printf "%.1f\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

is_num() { [[ ${1:-} =~ ^[0-9]+(\.[0-9]+)?$ ]]; }
mul() { is_num "${1:-}" && awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", a * b}'; }

# Decides which configurations run: the tool exists and `true` works inside it.
preflight() {
	local c log out
	for c in $CONFIGS; do
		case $c in
		cbox-seccomp-user)
			[ "$(id -u)" = 0 ] ||
				{ NOTE[$c]="skipped: run by a user, cbox-seccomp is that column"; continue; }
			[ -n "$UWORK" ] ||
				{ NOTE[$c]="skipped: no user $BENCH_USER (set BENCH_USER)"; continue; } ;;&
		cbox-*) [ -x "$CBOX_RUN" ] || { NOTE[$c]="skipped: $CBOX_RUN not built"; continue; } ;;
		runsc) [ -n "$RUNSC" ] ||
			{ NOTE[$c]="skipped: runsc not installed (apt-get install runsc)"; continue; } ;;
		bwrap) [ -n "$BWRAP" ] ||
			{ NOTE[$c]="skipped: bwrap not installed (apt-get install bubblewrap)"; continue; } ;;
		esac
		log=$LOGS/$c.log
		local t=$((RUN_TIMEOUT < 30 ? RUN_TIMEOUT : 30)) st=0
		out=$(RUN_TIMEOUT=$t run_in "$c" "$log" "$GUEST" true 1) || st=$?
		if [ $st = 0 ] && [[ $out == "true "* ]]; then
			ACTIVE="$ACTIVE $c"
			continue
		fi
		[ $st = 124 ] || [ $st = 137 ] && echo "timed out after ${t}s" >>"$log"
		[ $st = 0 ] && echo "exit status 0 but no result line: $out" >>"$log"
		[ $st = 0 ] || echo "exit status $st" >>"$log"
		out=$(grep -v '^exit status' "$log" | tail -n 1 | cut -c1-100)
		NOTE[$c]="failed: '$(basename "$GUEST") true' does not run ($out); see $log"
	done
}

# time_once CONFIG ROW: the wall time in ns of one run of an externally timed row, or nothing
# (and the reason in the log) when it fails. cbox-bench-time forks and times the command alone:
# env, setpriv and the timer's own start come before the clock starts (bench/timer.c says why).
time_once() {
	local cfg=$1 r=$2 log=$LOGS/$1.log out pre argv v st=0
	in_workdir "$cfg" || return
	mapfile -t out < <(outer "$cfg")
	mapfile -t pre < <(prefix "$cfg")
	mapfile -t argv < <(ext_argv "$r")
	v=$("${CLEAN_ENV[@]}" "${out[@]}" "$TIMER" "$RUN_TIMEOUT" "${pre[@]}" "${argv[@]}" \
		</dev/null 3>&1 >/dev/null 2>>"$log") || st=$?
	[ $st = 0 ] || { echo "$r: exit status $st (124: timed out)" >>"$log"; return; }
	echo "$v"
}

# guest_once CONFIG BENCH: the ns/op printed by one run of cbox-bench-guest, or nothing (and the
# reason in the log) when it fails.
guest_once() {
	local cfg=$1 b=$2 out v st=0 args=("$2" "${ITERS[$2]}")
	[ "$b" = python-exec ] && args=(exec "${ITERS[$b]}" "$PYTHON" -c pass)
	out=$(run_in "$cfg" "$LOGS/$cfg.log" "$GUEST" "${args[@]}") || st=$?
	if [ $st != 0 ]; then
		echo "$b failed with status $st (124: timed out after ${RUN_TIMEOUT}s)" >>"$LOGS/$cfg.log"
		return
	fi
	v=$(printf '%s\n' "$out" | awk -v b="${args[0]}" '$1 == b && $2 ~ /^[0-9.]+$/ {v = $2} END {print v}')
	[ -n "$v" ] || echo "no result line from $b: $out" >>"$LOGS/$cfg.log"
	printf '%s\n' "$v"
}

declare -A SAMPLES # SAMPLES[config/row] = one value a line; VAL[config/row]=fail stops the row
# sample CONFIG ROW VALUE: records a measurement, or marks the cell failed when VALUE is empty.
sample() {
	if [ -n "$3" ]; then SAMPLES[$1/$2]+="$3"$'\n'; else VAL[$1/$2]=fail; fi
}

# Interleaved: each repetition runs every row in every configuration, one after the other, so that
# a slow phase of the (noisy, nested-virtualisation) machine hits all columns alike. One untimed
# round first warms the page cache and finds the cells that fail.
measure_all() {
	local i r c max=$STARTUP_RUNS n rows="startup"
	[ "$PROG_RUNS" -gt "$max" ] && max=$PROG_RUNS
	[ "$MICRO_RUNS" -gt "$max" ] && max=$MICRO_RUNS
	for r in $EXT_PROGS; do
		case $r in
		python-*) [ -x "$PYTHON" ] && rows="$rows $r" ;;
		gcc-c) [ -x "$CC_PROG" ] && rows="$rows $r" ;;
		du-tree) rows="$rows $r" ;;
		git-status) [ -x "$GIT_PROG" ] && rows="$rows $r" ;;
		subshells) rows="$rows $r" ;;
		esac
	done
	for ((i = -1; i < max; i++)); do
		echo "  round $((i + 1)) of $max ..." >&2
		for r in $rows; do
			n=$PROG_RUNS
			[ "$r" = startup ] && n=$STARTUP_RUNS
			[ "$i" -lt "$n" ] || continue
			for c in $ACTIVE; do
				[ "${VAL[$c/$r]:-}" = fail ] && continue
				v=$(time_once "$c" "$r")
				# What a run leaves to finish after it returns (the sandbox's processes'
				# exits, a network namespace's cleanup in a kernel worker) must not land
				# in the next column's time: in an interleaved loop that was another
				# configuration's run, native's after cbox-ptrace's or bwrap's.
				sleep "$SETTLE"
				# The warm-up round only records failures.
				if [ "$i" -ge 0 ] || [ -z "$v" ]; then sample "$c" "$r" "$v"; fi
			done
		done
		# The guest warms itself up (N/10 untimed operations): no warm-up round.
		if [ "$i" -lt 0 ] || [ "$i" -ge "$MICRO_RUNS" ]; then continue; fi
		for r in $BENCHES $GUEST_PROGS; do
			for c in $ACTIVE; do
				[ "${VAL[$c/$r]:-}" = fail ] && continue
				sample "$c" "$r" "$(guest_once "$c" "$r")"
			done
		done
	done
	for c in $ACTIVE; do
		for r in $rows $BENCHES $GUEST_PROGS; do
			[ "${VAL[$c/$r]:-}" = fail ] && continue
			VAL[$c/$r]=$(printf '%s' "${SAMPLES[$c/$r]:-}" | median)
			[ -n "${VAL[$c/$r]}" ] || VAL[$c/$r]=fail
		done
		# Rows as the table shows them: the time of the whole 64 MiB, of one fork+exec.
		is_num "${VAL[$c/write-read]}" &&
			VAL[$c/write-read-64m]=$(mul "${VAL[$c/write-read]}" "${ITERS[write-read]}")
		VAL[$c/write-read-64m]=${VAL[$c/write-read-64m]:-${VAL[$c/write-read]}}
		VAL[$c/fork-exec-true]=${VAL[$c/fork-exec]}
	done
}

baseline() {
	local m=$1 i out v vals=""
	for ((i = 0; i < MICRO_RUNS; i++)); do
		out=$("$BASELINE" "$m" "$BASE_ITERS" 2>>"$LOGS/baseline.log") || { echo fail; return; }
		v=$(printf '%s\n' "$out" | awk -v m="$m" '$1 == m {print $2}')
		[ -n "$v" ] || { echo fail; return; }
		vals="$vals$v"$'\n'
	done
	printf '%s' "$vals" | median
}

preflight
echo "cbox benchmarks: build $BUILD, $(nproc) CPUs, kernel $(uname -r)" \
	"$([ "$QUICK" = 1 ] && echo '(--quick)')"
for c in $CONFIGS; do [ -n "${NOTE[$c]:-}" ] && echo "  $c: ${NOTE[$c]}"; done
[ -n "$ACTIVE" ] || { echo "bench/run.sh: no configuration can run" >&2; exit 1; }

measure_all
for m in sysemu unotify sigsys; do VAL[native/baseline-$m]=$(baseline "$m"); done

# ---- report ----
fmt_ns() { awk -v v="$1" 'BEGIN {
	if (v < 1e3) printf "%.0fns", v; else if (v < 1e6) printf "%.1fus", v / 1e3;
	else if (v < 1e9) printf "%.2fms", v / 1e6; else printf "%.2fs", v / 1e9 }'; }

cell() {
	local c=$1 r=$2 v=${VAL[$1/$2]:-} n=${VAL[native/$2]:-}
	if [ -z "$v" ]; then echo "-"; elif ! is_num "$v"; then echo "$v"
	elif [ "$c" != native ] && is_num "$n" && [ "$n" != 0 ]; then
		echo "$(fmt_ns "$v") ($(awk -v a="$v" -v b="$n" 'BEGIN {printf "%.1fx", a / b}'))"
	else fmt_ns "$v"; fi
}

MICRO_ROWS="startup $BENCHES baseline-sysemu baseline-unotify baseline-sigsys"
PROG_ROWS="python-pass python-import python-exec gcc-c du-tree git-status subshells write-read-64m fork-exec-true"
COLS="native"
for c in $ACTIVE; do [ "$c" = native ] || COLS="$COLS $c"; done
label() {
	case $1 in
	startup) echo 'startup (true)' ;;
	python-pass) echo 'python3 -c pass' ;;
	python-import) echo 'python3 -c "import json, sqlite3"' ;;
	python-exec) echo 'python3 -c pass, sandbox already up' ;;
	gcc-c) echo 'gcc -O2 -c compile.c' ;;
	du-tree) echo 'du -s (40 dirs, 2000 files)' ;;
	git-status) echo 'git status (400 files)' ;;
	subshells) echo 'sh: 100 $(echo) subshells' ;;
	write-read-64m) echo 'write+read 64 MiB' ;;
	fork-exec-true) echo 'fork+exec+wait /bin/true' ;;
	*) echo "$1" ;;
	esac
}
# table ROWS...: the formatted cells, tab-separated, with a header line.
table() {
	local r c
	printf 'benchmark'; for c in $COLS; do printf '\t%s' "$c"; done; echo
	for r in "$@"; do
		printf '%s' "$(label "$r")"
		for c in $COLS; do printf '\t%s' "$(cell "$c" "$r")"; done; echo
	done
}
align() {
	awk -F '\t' '{ for (i = 1; i <= NF; i++) {
		cell[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) }
	if (NF > nf) nf = NF }
	END { for (r = 1; r <= NR; r++) { line = ""
		for (i = 1; i <= nf; i++) line = line sprintf(i == 1 ? "%-*s" : "  %*s", w[i], cell[r, i])
		print line } }'
}
# shellcheck disable=SC2086 # the row lists are word lists
table $MICRO_ROWS $PROG_ROWS >"$RESULTS/latest.tsv"
{
	printf 'benchmark'; for c in $COLS; do printf '\t%s' "$c"; done; echo
	for r in $MICRO_ROWS $PROG_ROWS; do
		printf '%s' "$r"; for c in $COLS; do printf '\t%s' "${VAL[$c/$r]:-}"; done; echo
	done
} >"$RESULTS/latest-ns.tsv"
echo
echo "Microbenchmarks: median time per operation (startup: wall time of 'cbox-bench-guest true');" \
	"(Nx) = time / native"
# shellcheck disable=SC2086
table $MICRO_ROWS | align
echo
echo "Programs: median wall time of one run of python3 and gcc ($PROG_RUNS runs);" \
	"median of $MICRO_RUNS runs for the whole 64 MiB (no fsync)"
echo "and for one fork+exec+wait (${ITERS[fork-exec]} a run) and one python3 -c pass in a" \
	"sandbox already up (${ITERS[python-exec]} a run), timed inside the guest;" \
	"(Nx) = time / native"
# shellcheck disable=SC2086
table $PROG_ROWS | align
[ -x "$PYTHON" ] || echo "  python rows skipped: $PYTHON not found (set BENCH_PYTHON)"
[ -x "$CC_PROG" ] || echo "  gcc row skipped: $CC_PROG not found (set BENCH_CC)"

# target LABEL CONFIG ROW LIMIT_NS LIMIT_TEXT: PASS when VAL[CONFIG/ROW] <= LIMIT_NS.
target() {
	local label=$1 c=$2 r=$3 limit=$4 text=$5 v why
	case " $CONFIGS " in *" $c "*) ;; *) return ;; esac
	v=${VAL[$c/$r]:-}
	why=${v:-not measured}
	[ -n "${NOTE[$c]:-}" ] && why="column ${NOTE[$c]%%:*}, see above"
	if ! is_num "$v" || ! is_num "$limit"; then
		printf '  SKIP  %-66s no data (%s)\n' "$label [$c]" "$why"
	elif awk -v a="$v" -v b="$limit" 'BEGIN {exit !(a <= b)}'; then
		printf '  PASS  %-66s %s <= %s%s\n' "$label [$c]" "$(fmt_ns "$v")" "$text" \
			"$(untrapped "$c" "$r" "$v")"
	else
		printf '  MISS  %-66s %s >  %s\n' "$label [$c]" "$(fmt_ns "$v")" "$text"
	fi
}
# A getppid faster than a SIGSYS round trip never reached the sentry: say so, since the target
# then says nothing about the emulation cost.
untrapped() {
	local g=${VAL[native/baseline-sigsys]:-}
	[ "$2" = getppid ] && is_num "$g" && awk -v a="$3" -v b="$g" 'BEGIN {exit !(a < b)}' &&
		echo "  (not trapped: getppid takes the fast path in $1)"
}

echo
echo "Targets:"
for c in cbox-seccomp cbox-seccomp-user cbox-seccomp-strict cbox-ptrace cbox-ptrace-strict; do
	target "cbox-run true median < 30 ms" "$c" startup 30000000 "30ms"
done
u=${VAL[native/baseline-unotify]:-}; s=${VAL[native/baseline-sysemu]:-}
for c in cbox-seccomp cbox-seccomp-strict; do
	target "getppid <= 1.5x bare unotify round trip" "$c" getppid "$(mul "$u" 1.5)" \
		"1.5 x $(is_num "$u" && fmt_ns "$u")"
done
for c in cbox-ptrace cbox-ptrace-strict; do
	target "getppid <= 1.5x bare sysemu round trip" "$c" getppid "$(mul "$s" 1.5)" \
		"1.5 x $(is_num "$s" && fmt_ns "$s")"
done
p=${VAL[native/pipe-pingpong]:-}
for c in cbox-seccomp cbox-ptrace; do
	target "pipe ping-pong (fast path) >= 0.7x native" "$c" pipe-pingpong "$(mul "$p" 1.4285714)" \
		"native / 0.7 = $(is_num "$p" && fmt_ns "$(mul "$p" 1.4285714)")"
done
for r in python-pass python-import gcc-c; do
	n=${VAL[native/$r]:-}
	for c in cbox-seccomp cbox-seccomp-user cbox-ptrace; do
		target "$(label "$r") <= 1.5x native" "$c" "$r" "$(mul "$n" 1.5)" \
			"1.5 x $(is_num "$n" && fmt_ns "$n")"
	done
done
n=${VAL[native/write-read-64m]:-}
for c in cbox-seccomp cbox-seccomp-user cbox-ptrace; do
	target "write+read 64 MiB >= 0.8x native throughput" "$c" write-read-64m "$(mul "$n" 1.25)" \
		"native / 0.8 = $(is_num "$n" && fmt_ns "$(mul "$n" 1.25)")"
done
echo
echo "Results: $RESULTS/latest.tsv (raw ns: latest-ns.tsv), logs: $LOGS/"
