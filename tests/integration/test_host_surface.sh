#!/bin/bash
# The published host surface is the real one: the seccomp filters that the kernel runs for the
# guest, the sentry and the gofer of a live sandbox allow exactly the syscalls that
# `cbox syscalls --host-surface --json` lists (guest_fastpath, sentry, gofer).
. "$(dirname "$0")/lib.sh"
need_root
need_binaries
[ -x "${CBOX:-}" ] || skip "CBOX (cbox) not built or not set"
[ -x "$FILTER_DUMP" ] || skip "cbox-filter-dump not found in HELPERS=${HELPERS:-}"
command -v python3 >/dev/null || skip "python3 is needed to read the JSON"

SURFACE=$("$CBOX" syscalls --host-surface --json) || skip "cbox syscalls --host-surface --json failed"
STRICT_SURFACE=$("$CBOX" syscalls --host-surface --strict --json) ||
	skip "cbox syscalls --host-surface --strict --json failed"

# published KEY [SURFACE]: the names under KEY (of the default surface, or the one given),
# sorted, one per line.
published() {
	printf '%s' "${2:-$SURFACE}" | python3 -c '
import json, sys
print("\n".join(sorted(json.load(sys.stdin).get(sys.argv[1], []))))' "$1"
}

# compare_filter NAME PID EXPECTED: dumps PID's filters and checks the allowed set is EXPECTED.
compare_filter() {
	local got rc
	got=$(timeout 30 "$FILTER_DUMP" "$2" 2>"$SCRATCH/dump_err")
	rc=$?
	if [ "$rc" = 3 ]; then
		skip_check "$1" "$(cat "$SCRATCH/dump_err")"
		return
	fi
	if [ "$rc" != 0 ]; then
		check "$1 (cbox-filter-dump)" "exit 0" "exit $rc: $(cat "$SCRATCH/dump_err")"
		return
	fi
	got=$(printf '%s\n' "$got" | sed '/^$/d' | sort)
	local missing extra
	missing=$(comm -23 <(printf '%s\n' "$3" | sed '/^$/d') <(printf '%s\n' "$got" | sed '/^$/d') | tr '\n' ' ')
	extra=$(comm -13 <(printf '%s\n' "$3" | sed '/^$/d') <(printf '%s\n' "$got" | sed '/^$/d') | tr '\n' ' ')
	if [ -z "$missing$extra" ]; then
		pass "$1"
	else
		report_fail "$1" "the published set" \
			"missing from the filter: [${missing% }], allowed but unpublished: [${extra% }]"
	fi
}

t_surface() {
	start_sleeper
	local sentry gofer guest
	sentry=$(find_desc_by_comm "$RUN_PID" cbox-sentry)
	gofer=$(find_desc_by_comm "$RUN_PID" cbox-gofer)
	guest=$(find_desc_by_comm "$RUN_PID" busybox)
	local guest_expected=""
	case "$CFG" in
	*ptrace*--strict*) ;; # no fast path: every guest syscall reaches the sentry
	# (seccomp --strict: only the calls that wait for a signal or a time; see filter.c)
	*--strict*) guest_expected=$(published guest_fastpath "$STRICT_SURFACE") ;;
	*) guest_expected=$(published guest_fastpath) ;;
	esac
	if [ -n "$guest" ]; then
		# The guest's own filter cannot be read while the sentry traces it: read the filter
		# the same builder makes, installed in an untraced probe process.
		local platform=seccomp strict="" probe
		case "$CFG" in *ptrace*) platform=ptrace ;; esac
		case "$CFG" in *--strict*) strict=--strict ;; esac
		probe=$("$CBOX" syscalls --guest-filter-probe "$platform" $strict)
		sleep 0.2
		compare_filter "guest filter = guest_fastpath" "$probe" "$guest_expected"
		kill -9 "$probe" 2>/dev/null
	else
		check "guest found (comm busybox)" "a pid" "none; tree:$(left_over)"
	fi
	if [ -n "$gofer" ]; then
		compare_filter "gofer filter = gofer" "$gofer" "$(published gofer)"
	else
		check "gofer found (comm cbox-gofer)" "a pid" "none; tree:$(left_over)"
	fi
	# The sentry last: reading its filter stops it for a moment (a ptrace interrupt, like a
	# SIGSTOP/SIGCONT pair), after which it must carry on: its blocking call is restarted, so
	# its filter must allow restart_syscall.
	if [ -n "$sentry" ]; then
		local sentry_id
		sentry_id=$(proc_id "$sentry")
		compare_filter "sentry filter = sentry" "$sentry" "$(published sentry)"
		sleep 0.5
		check "sentry survives a ptrace interrupt" "alive" \
			"$(proc_id_alive "$sentry_id" && echo alive || echo "dead: $(cat "$SCRATCH/err")")"
	else
		check "sentry found (comm cbox-sentry)" "a pid" "none; tree:$(left_over)"
	fi
	stop_run
	# --init: the tiny init (pid 1, a copy of the sentry in the guest's pid namespace) allows
	# exactly what is published.
	local cfg0=$CFG
	CFG="$cfg0 --init"
	start_sleeper
	CFG=$cfg0
	local init
	init=$(find_desc_by_comm "$RUN_PID" cbox-init)
	if [ -n "$init" ]; then
		compare_filter "--init: init filter = init" "$init" "$(published init)"
		# It holds a copy of the sentry's memory, which the program's task shared until its
		# exec and made dumpable to be traced (guest_init.c, start_program): the init must
		# have cleared that again. The kernel shows a non-dumpable process's files as root's.
		check "--init: init not dumpable" "root" "$(stat -c %U "/proc/$init/environ" 2>&1)"
	else
		check "--init: init found (comm cbox-init)" "a pid" "none; tree:$(left_over)"
	fi
	stop_run
}

for_each_config t_surface
finish
