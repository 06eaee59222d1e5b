#!/usr/bin/env bash
# Side-by-side benchmarks: native, cbox (seccomp/ptrace, fast path/strict), runsc, bwrap.
# See bench/README.md. Prints one table and the performance targets (PASS/MISS); writes
# $BUILD/bench/results/latest.tsv (formatted cells) and latest-ns.tsv (raw nanoseconds).
# The exit status is 0 whenever the benchmarks could run: missed targets are reported, not fatal.
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build-release}
ALL_CONFIGS="native cbox-seccomp cbox-seccomp-strict cbox-ptrace cbox-ptrace-strict runsc bwrap"
CONFIGS=$ALL_CONFIGS
QUICK=0
RUN_TIMEOUT=${RUN_TIMEOUT:-180} # seconds for one run of one benchmark

usage() {
	cat <<EOF
usage: bench/run.sh [--quick] [--build DIR] [--configs LIST]
  --quick         fewer iterations and runs (a rough table in about a minute)
  --build DIR     the release build directory (default: \$BUILD or $ROOT/build-release)
  --configs LIST  comma-separated subset of: ${ALL_CONFIGS// /,}
Environment: CBOX_RUN (default DIR/cbox-run), RUNSC, BWRAP, HYPERFINE (empty: time startup with
date), RUN_TIMEOUT (default 180 s per run).
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
CBOX_RUN=${CBOX_RUN:-$BUILD/cbox-run}
RUNSC=${RUNSC:-$(command -v runsc || true)}
BWRAP=${BWRAP:-$(command -v bwrap || true)}
HYPERFINE=${HYPERFINE-$(command -v hyperfine || true)} # set it empty to time startup with date
for p in "$GUEST" "$BASELINE"; do
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
rm -f "$LOGS"/*.log

# Iterations per benchmark (chosen so that the slowest configuration stays near a second per run).
BENCHES="getppid open-close stat pipe-pingpong fork-wait"
declare -A ITERS=([getppid]=50000 [open-close]=10000 [stat]=10000 [pipe-pingpong]=10000
	[fork-wait]=1000)
BASE_ITERS=50000
MICRO_RUNS=5
STARTUP_RUNS=30
if [ "$QUICK" = 1 ]; then
	for b in $BENCHES; do ITERS[$b]=$((ITERS[$b] / 10)); done
	BASE_ITERS=5000
	MICRO_RUNS=3
	STARTUP_RUNS=10
fi

declare -A VAL    # VAL[config/bench] = nanoseconds, or "fail"
declare -A NOTE   # NOTE[config] = why the column is skipped or failing
ACTIVE=""         # configurations that run

# Prints the command prefix of a configuration, one word per line.
prefix() {
	case $1 in
	native) ;;
	cbox-seccomp) printf '%s\n' "$CBOX_RUN" --platform=seccomp -- ;;
	cbox-seccomp-strict) printf '%s\n' "$CBOX_RUN" --platform=seccomp --strict -- ;;
	cbox-ptrace) printf '%s\n' "$CBOX_RUN" --platform=ptrace -- ;;
	cbox-ptrace-strict) printf '%s\n' "$CBOX_RUN" --platform=ptrace --strict -- ;;
	runsc)
		# This runsc build has the ptrace platform only (kvm needs /dev/kvm and hangs
		# without it; there is no systrap); the sandbox network needs a veth setup, so
		# --network=none. Root runs it as is; other users need --rootless.
		printf '%s\n' "$RUNSC" --network=none --platform=ptrace
		[ "$(id -u)" = 0 ] || printf '%s\n' --rootless --ignore-cgroups
		printf '%s\n' 'do' ;;
	bwrap)
		printf '%s\n' "$BWRAP" --ro-bind / / --dev /dev --proc /proc --unshare-all \
			--die-with-parent -- ;;
	esac
}

# run_in CONFIG LOG ARGS...: runs ARGS inside CONFIG with a time limit; stdout to stdout,
# stderr appended to LOG.
run_in() {
	local cfg=$1 log=$2 pre
	shift 2
	mapfile -t pre < <(prefix "$cfg")
	timeout --kill-after=10 "$RUN_TIMEOUT" "${pre[@]}" "$@" </dev/null 2>>"$log"
}

median() {
	sort -g | awk '{v[NR] = $1}
		END {if (NR) printf "%.1f\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

# Decides which configurations run: the tool exists and `true` works inside it.
preflight() {
	local c log out
	for c in $CONFIGS; do
		case $c in
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

startup_hyperfine() {
	local cfg=$1 json=$LOGS/$1.startup.json pre
	mapfile -t pre < <(prefix "$cfg")
	"$HYPERFINE" -N --style none --warmup 3 --runs "$STARTUP_RUNS" --export-json "$json" \
		-- "${pre[*]} $GUEST true 1" >>"$LOGS/$cfg.log" 2>&1 || return 1
	sed -n 's/.*"median": *\([0-9.eE+-]*\).*/\1/p' "$json" | head -n 1 |
		awk '{printf "%.0f\n", $1 * 1e9}'
}

startup_loop() {
	local cfg=$1 i t0 t1 vals=""
	for ((i = 0; i < STARTUP_RUNS; i++)); do
		t0=$(date +%s%N)
		run_in "$cfg" "$LOGS/$cfg.log" "$GUEST" true 1 >/dev/null || { echo fail; return; }
		t1=$(date +%s%N)
		vals="$vals$((t1 - t0))"$'\n'
	done
	printf '%s' "$vals" | median
}

# measure CONFIG BENCH: median ns/op over MICRO_RUNS runs, or "fail".
measure() {
	local cfg=$1 b=$2 i out v vals=""
	for ((i = 0; i < MICRO_RUNS; i++)); do
		out=$(run_in "$cfg" "$LOGS/$cfg.log" "$GUEST" "$b" "${ITERS[$b]}") || {
			echo "run $i of $b failed with status $? (124: timed out after" \
				"${RUN_TIMEOUT}s)" >>"$LOGS/$cfg.log"
			echo fail
			return
		}
		v=$(printf '%s\n' "$out" | awk -v b="$b" '$1 == b && $2 ~ /^[0-9.]+$/ {v = $2} END {print v}')
		[ -n "$v" ] || { echo "no result line from $b: $out" >>"$LOGS/$cfg.log"; echo fail; return; }
		vals="$vals$v"$'\n'
	done
	printf '%s' "$vals" | median
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

for c in $ACTIVE; do
	echo "  measuring $c ..." >&2
	if [ -n "$HYPERFINE" ]; then v=$(startup_hyperfine "$c"); else v=$(startup_loop "$c"); fi
	VAL[$c/startup]=${v:-fail}
	for b in $BENCHES; do VAL[$c/$b]=$(measure "$c" "$b"); done
done
for m in sysemu unotify sigsys; do VAL[native/baseline-$m]=$(baseline "$m"); done

# ---- report ----
fmt_ns() { awk -v v="$1" 'BEGIN {
	if (v < 1e3) printf "%.0fns", v; else if (v < 1e6) printf "%.1fus", v / 1e3;
	else if (v < 1e9) printf "%.2fms", v / 1e6; else printf "%.2fs", v / 1e9 }'; }
is_num() { [[ ${1:-} =~ ^[0-9]+(\.[0-9]+)?$ ]]; }

cell() {
	local c=$1 r=$2 v=${VAL[$1/$2]:-} n=${VAL[native/$2]:-}
	if [ -z "$v" ]; then echo "-"; elif ! is_num "$v"; then echo "$v"
	elif [ "$c" != native ] && is_num "$n" && [ "$n" != 0 ]; then
		echo "$(fmt_ns "$v") ($(awk -v a="$v" -v b="$n" 'BEGIN {printf "%.1fx", a / b}'))"
	else fmt_ns "$v"; fi
}

ROWS="startup $BENCHES baseline-sysemu baseline-unotify baseline-sigsys"
COLS="native"
for c in $ACTIVE; do [ "$c" = native ] || COLS="$COLS $c"; done
{
	printf 'benchmark'; for c in $COLS; do printf '\t%s' "$c"; done; echo
	for r in $ROWS; do
		printf '%s' "$([ "$r" = startup ] && echo 'startup (true)' || echo "$r")"
		for c in $COLS; do printf '\t%s' "$(cell "$c" "$r")"; done; echo
	done
} >"$RESULTS/latest.tsv"
{
	printf 'benchmark'; for c in $COLS; do printf '\t%s' "$c"; done; echo
	for r in $ROWS; do
		printf '%s' "$r"; for c in $COLS; do printf '\t%s' "${VAL[$c/$r]:-}"; done; echo
	done
} >"$RESULTS/latest-ns.tsv"
echo
echo "Median time per operation (startup: wall time of 'cbox-bench-guest true');" \
	"(Nx) = time / native"
awk -F '\t' '{ for (i = 1; i <= NF; i++) { cell[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) }
	if (NF > nf) nf = NF }
	END { for (r = 1; r <= NR; r++) { line = ""
		for (i = 1; i <= nf; i++) line = line sprintf(i == 1 ? "%-*s" : "  %*s", w[i], cell[r, i])
		print line } }' "$RESULTS/latest.tsv"

# target LABEL CONFIG ROW LIMIT_NS LIMIT_TEXT: PASS when VAL[CONFIG/ROW] <= LIMIT_NS.
target() {
	local label=$1 c=$2 r=$3 limit=$4 text=$5 v why
	case " $CONFIGS " in *" $c "*) ;; *) return ;; esac
	v=${VAL[$c/$r]:-}
	why=${v:-not measured}
	[ -n "${NOTE[$c]:-}" ] && why="column ${NOTE[$c]%%:*}, see above"
	if ! is_num "$v" || ! is_num "$limit"; then
		printf '  SKIP  %-62s no data (%s)\n' "$label [$c]" "$why"
	elif awk -v a="$v" -v b="$limit" 'BEGIN {exit !(a <= b)}'; then
		printf '  PASS  %-62s %s <= %s%s\n' "$label [$c]" "$(fmt_ns "$v")" "$text" \
			"$(untrapped "$c" "$r" "$v")"
	else
		printf '  MISS  %-62s %s >  %s\n' "$label [$c]" "$(fmt_ns "$v")" "$text"
	fi
}
# A getppid faster than a SIGSYS round trip never reached the sentry: say so, since the target
# then says nothing about the emulation cost.
untrapped() {
	local g=${VAL[native/baseline-sigsys]:-}
	[ "$2" = getppid ] && is_num "$g" && awk -v a="$3" -v b="$g" 'BEGIN {exit !(a < b)}' &&
		echo "  (not trapped: getppid takes the fast path in $1)"
}
mul() { is_num "${1:-}" && awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", a * b}'; }

echo
echo "Targets:"
for c in cbox-seccomp cbox-seccomp-strict cbox-ptrace cbox-ptrace-strict; do
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
echo
echo "Results: $RESULTS/latest.tsv (raw ns: latest-ns.tsv), logs: $LOGS/"
