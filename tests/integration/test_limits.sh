#!/bin/bash
# Resource limits through cgroups: cbox-run --memory/--pids/--cpus (sentry tier) and
# linux.resources with `cbox run` (ns tier). A memory hog dies with 137 and a message naming
# the limit, a bounded fork bomb gets EAGAIN and the sandbox survives, the cpu quota is in the
# cgroup while the guest runs, and no cgroup is left afterwards.
. "$(dirname "$0")/lib.sh"

need_root
need_binaries
LIMITS="$HELPERS/cbox-test-limits"
[ -x "$LIMITS" ] || skip "cbox-test-limits not found in HELPERS=$HELPERS"
grep -q cgroup /proc/self/mountinfo || skip "no cgroup file system mounted"
CONFIGS=("--platform=seccomp" "--platform=ptrace")

# lbox OPTIONS... -- PROGRAM...: like box, with cbox-run options of the test's own.
lbox() {
	# shellcheck disable=SC2086
	timeout -k 5 "$CBOX_TIMEOUT" "$CBOX_RUN" $CFG "$@" >"$SCRATCH/out" 2>"$SCRATCH/err" \
		</dev/null
	STATUS=$?
	OUT=$(cat "$SCRATCH/out")
	ERR=$(cat "$SCRATCH/err")
}

# cgroups_named NAME: the cgroup directories called NAME on any hierarchy.
cgroups_named() {
	find /sys/fs/cgroup -mindepth 1 -type d -name "$1" 2>/dev/null
}

memory_hog() {
	lbox --memory 64m -- "$LIMITS" alloc 200
	check_status "--memory 64m: a 200 MiB hog exits 137" 137
	check_match "  ... and the message names the limit" \
		"killed: the memory limit of 64 MiB was reached$" "$ERR"
	lbox --memory 64m -- "$LIMITS" alloc 16
	check_status "--memory 64m: 16 MiB is fine" 0
	check "  ... and prints" "allocated 16" "$OUT"
}

fork_bomb() {
	lbox --pids 16 -- "$LIMITS" forks 100
	check_status "--pids 16: the sandbox survives a fork bomb" 0
	check_match "  ... whose forks fail with EAGAIN" "^forked [0-9]+ eagain [1-9][0-9]* other 0$" \
		"$OUT"
	local forked
	forked=$(printf '%s' "$OUT" | awk '{print $2}')
	[ -n "$forked" ] && [ "$forked" -lt 16 ] && pass "  ... fewer than 16 forks succeed" ||
		report_fail "  ... fewer than 16 forks succeed" "< 16" "$forked"
}

cpu_quota() {
	# No timeout wrapper: $! must be cbox-run itself, whose pid names the cgroup (run-PID);
	# the guest's sleep bounds it.
	# shellcheck disable=SC2086
	"$CBOX_RUN" $CFG --cpus 0.5 -- "$BB" sleep 2 >/dev/null 2>&1 </dev/null &
	local pid=$! quota="" period="" i d
	for ((i = 0; i < 50; i++)); do
		for d in $(cgroups_named "run-$pid"); do
			if [ -f "$d/cpu.cfs_quota_us" ]; then
				quota=$(cat "$d/cpu.cfs_quota_us") period=$(cat "$d/cpu.cfs_period_us")
			elif [ -f "$d/cpu.max" ]; then
				read -r quota period <"$d/cpu.max"
			fi
		done
		[ -n "$quota" ] && break
		sleep 0.1
	done
	check "--cpus 0.5: quota/period in the cgroup while the guest runs" "50000/100000" \
		"$quota/$period"
	wait "$pid"
	STATUS=$?
	check_status "  ... and the guest runs to its end" 0
	check "  ... and its cgroup is gone afterwards" "" "$(cgroups_named "run-$pid")"
}

# descendants PID: the pids of PID's descendant processes, one per line.
descendants() {
	ps -e -o pid=,ppid= | awk -v root="$1" '{ parent[$1] = $2 }
		END { for (p in parent) for (q = parent[p]; q > 1; q = parent[q]) if (q == root) { print p; break } }'
}

# membership: every process of the sandbox (the gofer, the sentry, the guest's) is in its cgroup
# in each hierarchy, v1 and v2 alike, though none is moved there by cbox-run: each is born in the
# v2 one (clone3 CLONE_INTO_CGROUP) and joins the v1 ones by itself (cbox_cgroup_fork and
# cbox_cgroup_join, tiers/cgroup/cgroup.c), the guest's tasks born inside the sentry's.
membership() {
	# shellcheck disable=SC2086
	"$CBOX_RUN" $CFG --pids 100 -- "$BB" sleep 3 >/dev/null 2>&1 </dev/null &
	local pid=$! i procs="" dirs d p missing=""
	for ((i = 0; i < 50; i++)); do
		procs=$(descendants "$pid")
		# the gofer, the sentry, the tiny init and sleep
		[ "$(printf '%s\n' "$procs" | grep -c .)" -ge 4 ] && break
		sleep 0.1
	done
	dirs=$(cgroups_named "run-$pid")
	for d in $dirs; do
		for p in $procs; do
			grep -qx "$p" "$d/cgroup.procs" || missing="$missing ${d#/sys/fs/cgroup/}:$p"
		done
	done
	check "--pids 100: the sandbox's 4 processes" 4 "$(printf '%s\n' "$procs" | grep -c .)"
	check "  ... are each in the sandbox's cgroup in every hierarchy" "" "$missing"
	local want=1
	[ -d /sys/fs/cgroup/pids ] && want=4 # (v1: memory, pids, cpu, freezer; v2: one)
	[ "$(printf '%s\n' "$dirs" | grep -c .)" -ge "$want" ] &&
		pass "  ... which has a directory in each of its $want+ hierarchies" ||
		report_fail "  ... which has a directory in each of its hierarchies" ">= $want" "$dirs"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

# cgroup_view: the guest's /sys/fs/cgroup is the sandbox's cgroup, read live from the host's and
# shown as cgroup v2 shows a container's (sentry/fs_sys.c): runtimes size their heaps and thread
# pools by it (node here; the JVM by hand). The guest cannot lift a limit there: the mount is
# read-only, and the host's cgroup keeps its value.
cgroup_view() {
	lbox --memory 256m --cpus 0.5 --pids 100 -- "$BB" sh -c 'cd /sys/fs/cgroup
		busybox cat memory.max memory.swap.max cpu.max pids.max memory.current pids.current
		while read -r p; do printf "%s " "$p"; done <cgroup.procs; echo
		echo max > memory.max; echo "write: $?"
		busybox cat memory.max'
	local l=()
	mapfile -t l <<<"$OUT"
	check "--memory 256m --cpus 0.5 --pids 100: /sys/fs/cgroup shows them" "268435456
50000 100000
100" "$(printf '%s\n' "${l[0]}" "${l[2]}" "${l[3]}")"
	# (0 with the host's swap accounting, which limits swap; max without, where nothing does)
	check_match "  ... memory.swap.max: no swap" "^(0|max)\$" "${l[1]}"
	check_match "  ... memory.current, pids.current: the cgroup's usage" "^[1-9][0-9]* [1-9][0-9]*\$" \
		"${l[4]} ${l[5]}"
	check "  ... cgroup.procs: the tiny init and the guest's shell" "1 2 " "${l[6]}"
	check "  ... a write is refused" "write: 1" "${l[7]}"
	check_match "  ... read-only" "Read-only file system" "$ERR"
	check "  ... and the limit stays" "268435456" "${l[8]}"
	lbox --memory 256m -- /usr/bin/node -e 'console.log(process.constrainedMemory())'
	check "  ... node's process.constrainedMemory() sees --memory" "268435456" "$OUT"
	# The statistics (the JVM's container CPU load reads cpu.stat: -1 without it), in v2's
	# names whatever the host's hierarchies: after some CPU time and under --cpus 0.5.
	lbox --memory 256m --cpus 0.5 -- "$BB" sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done
		cd /sys/fs/cgroup
		busybox awk "{ print \$1 }" cpu.stat | busybox tr "\n" " "; echo
		busybox awk "\$1 == \"usage_usec\" { print (\$2 > 100000) }
			\$1 == \"nr_throttled\" { print (\$2 > 0) }" cpu.stat
		busybox grep -cE "^(anon|file|inactive_file) [0-9]+\$" memory.stat
		busybox awk "{ print \$1 }" memory.events | busybox tr "\n" " "'
	mapfile -t l <<<"$OUT"
	check_match "  ... cpu.stat: the CPU time and the throttling" \
		"^usage_usec user_usec system_usec .*nr_periods nr_throttled throttled_usec" "${l[0]:-}"
	check "  ... the shell's 0.1 s and more of CPU counted, and throttled by --cpus 0.5" "1
1" "$(printf '%s\n' "${l[1]:-}" "${l[2]:-}")"
	check "  ... memory.stat: anon, file, inactive_file" "3" "${l[3]:-}"
	check_match "  ... memory.events" "^low high max oom oom_kill" "${l[4]:-}"
}

bad_limits() {
	lbox --memory 12q -- true
	check_status "--memory 12q: refused" 125
	check_match "  ... with a message" "expected a size like 512m" "$ERR"
	lbox --cpus 0 -- true
	check_match "--cpus 0: refused with a message" "expected a number of CPUs" "$ERR"
	lbox --memory-swap 1g -- true
	check_match "--memory-swap alone: refused" "needs --memory" "$ERR"
}

for_each_config memory_hog fork_bomb cpu_quota membership cgroup_view
bad_limits

# ns_bundles: what cbox-run --tier=ns left of its runs' directories (runtime-shim/cbox_run_ns.c:
# on /dev/shm when it is a tmpfs, else /tmp).
ns_bundles() {
	ls -d /dev/shm/cbox-run-ns.* /tmp/cbox-run-ns.* 2>/dev/null
}

# cbox-run --tier=ns: the same limits through the ns tier, the same view of the host, and
# cbox-run's --timeout (issue 4's example).
ns_view() {
	mkdir -p "$SCRATCH/wd"
	echo data >"$SCRATCH/wd/in.txt"
	lbox --workdir "$SCRATCH/wd" -- "$BB" sh -c \
		'cat in.txt; echo out >out.txt; ls -A /root | wc -l; echo $HOME; touch /etc/x 2>/dev/null || echo ro; exit 3'
	check_status "--tier=ns: the program's exit status" 3
	check "  ... reads the working folder, /root is empty, HOME, the root is read-only" \
		"$(printf 'data\n0\n/tmp/home\nro')" "$OUT"
	check "  ... and writes the working folder" out "$(cat "$SCRATCH/wd/out.txt" 2>/dev/null)"
	# Without a limit the container gets no cgroup (cbox --cgroup-manager=disabled): its
	# processes stay in cbox-run's cgroup, and its pid namespace still ends them all.
	"$CBOX_RUN" $CFG -- "$BB" sh -c "$BB sleep 41 & exec $BB sleep 42" >/dev/null 2>&1 &
	local run=$! sleeper="" i
	for i in $(seq 100); do
		sleeper=$(pgrep -f "^$BB sleep 42") && break
		sleep 0.05
	done
	check "--tier=ns without a limit: no cgroup of its own" "" "$(cgroups_named "cbox-run-$run")"
	check "  ... its processes are in cbox-run's (the caller's)" "$(cat /proc/self/cgroup)" \
		"$(cat "/proc/${sleeper:-0}/cgroup" 2>&1)"
	kill -TERM "$run"
	wait "$run"
	check "  ... and when it ends, none is left (its pid namespace ends with its init)" "" \
		"$(pgrep -f "^$BB sleep 4[12]")"
	lbox --timeout 1s -- "$BB" sh -c "$BB sleep 43 & exec $BB sleep 44"
	check_status "  ... --timeout 1s: killed, 137" 137
	check "  ... every process of it (cbox kill --all through the pid namespace)" "" \
		"$(pgrep -f "^$BB sleep 4[34]")"
	lbox -- "$BB" sh -c 'ls -A /sys/fs/cgroup | wc -l'
	check "  ... and its /sys/fs/cgroup is empty (not the caller's cgroup tree)" 0 "$OUT"
	lbox --timeout 1s --memory 256m --pids 64 -- "$BB" sh -c 'while :; do :; done'
	check_status "--tier=ns --timeout 1s: killed, 137" 137
	check_match "  ... and the message says why" "killed: the timeout of 1000 ms was reached" "$ERR"
	check "  ... and no bundle is left" "" "$(ns_bundles)"
	# A pseudo-terminal: the gofer's tree had a tmpfs /dev of its own, which covered the
	# container's, /dev/pts with it ("out of pty devices").
	lbox -- python3 -c 'import os, pty
pid, fd = pty.fork()
if pid == 0:
    print("in a pty", os.isatty(0))
else:
    print(os.read(fd, 100).decode().strip()); os.waitpid(pid, 0)'
	check "--tier=ns: a pty (python's pty.fork)" "in a pty True" "$OUT"
	ns_signals
	ns_stop_job
	ns_runtime_crash
	ns_rootless
}

# ns_rootless: run by a user, --tier=ns runs the program as the root of a user namespace that
# maps the caller's ids (as rootless runc); what needs more (other users, cgroups, a network
# namespace to join) is refused with a message. It was refused before, with a message about a
# config.json the user never wrote.
ns_rootless() {
	local wd="$SCRATCH/rl-wd"
	mkdir -p "$wd" && chown 1000:1000 "$wd" && chmod 755 "$SCRATCH"
	# shellcheck disable=SC2086
	OUT=$(cd "$wd" && as_user "$CBOX_RUN" $CFG -- sh -c 'id -u; cat /proc/self/uid_map
		echo hi >f; echo x >/dev/null && echo devnull; [ -z "$(ls /sys/fs/cgroup)" ] && echo "no cgroups"
		umount /root 2>/dev/null || echo "umount refused"
		unshare -Urm true 2>/dev/null || echo "unshare refused"' \
		2>"$SCRATCH/err" </dev/null)
	STATUS=$?
	ERR=$(cat "$SCRATCH/err")
	check_status "--tier=ns run by uid 1000: runs" 0
	check_match "  ... as root inside, mapped to the caller" "^0
 +0 +1000 +1\$" "$(printf '%s\n' "$OUT" | head -n 2)"
	check "  ... writes the working folder as the caller" "1000" "$(stat -c %u "$wd/f" 2>&1)"
	check "  ... /dev/null, and no cgroup tree (it has no cgroup: not the caller's shown)" "devnull
no cgroups" "$(printf '%s\n' "$OUT" | sed -n 3,4p)"
	check "  ... the root of its user namespace cannot unmount what hides secrets" "umount refused
unshare refused" "$(printf '%s\n' "$OUT" | sed -n 5,6p)"
	# shellcheck disable=SC2086
	OUT=$(cd "$wd" && as_user "$CBOX_RUN" $CFG --memory 64m -- true 2>&1 </dev/null)
	STATUS=$?
	check_status "  ... --memory refused" 125
	check_match "  ... saying why" "run by a user .*--memory, --cpus and --pids need cbox-run run as root" "$OUT"
	chmod 700 "$SCRATCH"
}

# ns_runtime_crash: a runtime (`cbox run`) that dies of a signal nobody sent it (a crash, the
# OOM killer: here a SIGKILL, which no sanitizer turns into an exit status) did not end the
# program: cbox-run says so and exits 125 (a program's own death by signal comes as cbox run's
# exit status, 128+N), and takes the container down with it. (It was a silent 137, the container
# left running.)
ns_runtime_crash() {
	local out="$SCRATCH/ns-crash.out" p rt
	rm -f "$out"
	# shellcheck disable=SC2086
	"$CBOX_RUN" $CFG -- "$BB" sh -c 'echo ready; exec busybox sleep 1000' </dev/null >"$out" 2>&1 &
	p=$!
	for _ in $(seq 100); do grep -q ready "$out" 2>/dev/null && break; sleep 0.1; done
	rt=$(pgrep -P "$p" | head -n 1)
	[ -n "$rt" ] && kill -KILL "$rt"
	wait "$p"
	STATUS=$?
	check_status "--tier=ns: a runtime that dies of a signal: status 125" 125
	check_match "  ... said" "the ns tier's runtime \(.*\) died of signal 9" "$(cat "$out")"
	sleep 0.3
	check "  ... and its container is gone" "" "$(pgrep -f 'busybox sleep 1000')"
	check "  ... and no bundle is left" "" "$(ns_bundles)"
}

# ns_signals: as with the sentry tier, cbox-run passes the first SIGTERM on to the container's
# init and kills the container on a second. (SIGTERM: a background job of this script has
# SIGINT ignored, which the container would inherit.)
ns_signals() {
	local out="$SCRATCH/ns-sig.out" p
	# (Each run starts with no output file: a "ready" left by the run before would send the
	# signal before cbox-run even started.)
	rm -f "$out"
	# shellcheck disable=SC2086
	"$CBOX_RUN" $CFG -- "$BB" sh -c 'trap "echo cleaning up; exit 3" TERM; echo ready; while :; do busybox sleep 0.1; done' \
		</dev/null >"$out" 2>&1 &
	p=$!
	for _ in $(seq 100); do grep -q ready "$out" 2>/dev/null && break; sleep 0.1; done
	kill -TERM "$p"
	wait "$p"
	STATUS=$?
	check_status "--tier=ns: a SIGTERM reaches the init's trap" 3
	check "  ... once" "ready
cleaning up" "$(cat "$out")"
	rm -f "$out"
	# shellcheck disable=SC2086
	"$CBOX_RUN" $CFG -- "$BB" sh -c 'echo ready; busybox sleep 1000' </dev/null >"$out" 2>&1 &
	p=$!
	for _ in $(seq 100); do grep -q ready "$out" 2>/dev/null && break; sleep 0.1; done
	kill -TERM "$p"
	sleep 0.5
	check "  ... an init without a handler survives the first" "" "$(kill -0 "$p" 2>/dev/null || echo gone)"
	kill -TERM "$p"
	wait "$p"
	STATUS=$?
	check_status "  ... and the second kills the container" 143
	check_match "  ... saying so" "the container was killed on a second Terminated" "$(cat "$out")"
	check "  ... and no bundle is left" "" "$(ns_bundles)"
	# Started from a background job, which has SIGINT ignored: the container still starts
	# with every signal at its default, so its shell can trap SIGINT (as crun resets them).
	rm -f "$out"
	# shellcheck disable=SC2086
	"$CBOX_RUN" $CFG -- "$BB" sh -c 'trap "echo trapped" INT; kill -INT $$; echo done' \
		</dev/null >"$out" 2>&1 &
	wait $!
	check "--tier=ns: signals start at their defaults (a trap on SIGINT works)" "trapped
done" "$(cat "$out")"
}
# ns_stop_job: ^Z stops the container with cbox-run, and continuing cbox-run continues it, as
# with the sentry tier (job_stop_cont, lib.sh); nothing of the run is left after.
ns_stop_job() {
	job_stop_cont "--tier=ns: ^Z"
	# (Two SIGTERMs, apart: the second kills the container, whose init has no handler.)
	kill -TERM "$JOB_PID" 2>/dev/null
	sleep 0.3
	kill -TERM "$JOB_PID" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$JOB_PID" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$JOB_PID" "$JOB_PARENT" 2>/dev/null
	wait "$JOB_PARENT" 2>/dev/null
	check "  ... and nothing is left of it" "" "$(ns_bundles)"
}
# ns_cgroup_view: the ns tier mounts the container's own cgroup on /sys/fs/cgroup, read-only, as
# runc does for Docker's config (tiers/ns/ns_mount.c): v1 hierarchies on this host, each showing
# the container's cgroup as its root (a cgroup namespace), or cgroup2 on a v2 host.
ns_cgroup_view() {
	local mem=memory/memory.limit_in_bytes quota=cpu/cpu.cfs_quota_us want=50000
	if [ ! -d /sys/fs/cgroup/memory ]; then
		mem=memory.max quota=cpu.max want="50000 100000"
	fi
	lbox --memory 256m --cpus 0.5 -- "$BB" sh -c "cat /sys/fs/cgroup/$mem /sys/fs/cgroup/$quota
		echo 1 > /sys/fs/cgroup/$mem; echo \"write: \$?\"; cat /sys/fs/cgroup/$mem
		grep ' /sys/fs/cgroup/memory ' /proc/self/mountinfo | cut -d' ' -f4"
	check "--tier=ns --memory 256m --cpus 0.5: /sys/fs/cgroup shows them" "268435456
$want" "$(printf '%s\n' "$OUT" | head -n 2)"
	check "  ... a write is refused, and the limit stays" "write: 1
268435456" "$(printf '%s\n' "$OUT" | sed -n 3,4p)"
	check_match "  ... read-only" "Read-only file system" "$ERR"
	[ -d /sys/fs/cgroup/memory ] &&
		check "  ... the container's cgroup is the hierarchy's root it sees" "/" \
			"$(printf '%s\n' "$OUT" | sed -n 5p)"
	lbox --memory 256m -- /usr/bin/node -e 'console.log(process.constrainedMemory())'
	check "  ... node's process.constrainedMemory() sees --memory" "268435456" "$OUT"
}

CONFIGS=("--tier=ns")
for_each_config memory_hog fork_bomb ns_cgroup_view ns_view
check "no cbox-run cgroup is left" "" "$(cgroups_named 'run-*')"

# The ns tier: linux.resources from config.json through `cbox run`.
if [ -n "${CBOX:-}" ] && [ -x "$CBOX" ] && command -v python3 >/dev/null; then
	CFG=ns
	ROOT="$SCRATCH/state"
	BUNDLE="$SCRATCH/bundle"
	mkdir -p "$BUNDLE/rootfs/bin"
	cp "$BB" "$BUNDLE/rootfs/bin/busybox"
	cp "$LIMITS" "$BUNDLE/rootfs/bin/limits"
	for a in sh cat sleep; do ln -s busybox "$BUNDLE/rootfs/bin/$a"; done
	"$CBOX" spec --bundle "$BUNDLE" >/dev/null || report_fail "cbox spec" 0 "$?"
	cp "$BUNDLE/config.json" "$SCRATCH/base.json"

	# ns_run ARGS_JSON RESOURCES_JSON [CGROUPS_PATH]: `cbox run` of ARGS; sets OUT ERR STATUS.
	ns_run() {
		python3 - "$SCRATCH/base.json" "$BUNDLE/config.json" "$1" "$2" "${3:-}" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["annotations"] = {"dev.cbox.tier": "ns"}
c["process"]["args"] = json.loads(sys.argv[3])
c["linux"]["resources"] = json.loads(sys.argv[4])
if sys.argv[5]:
    c["linux"]["cgroupsPath"] = sys.argv[5]
json.dump(c, open(sys.argv[2], "w"))
EOF
		timeout -k 5 30 "$CBOX" --root "$ROOT" run --bundle "$BUNDLE" "lim$RANDOM" \
			>"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null
		STATUS=$?
		OUT=$(cat "$SCRATCH/out")
		ERR=$(cat "$SCRATCH/err")
	}

	ns_run '["limits", "alloc", "200"]' '{"memory": {"limit": 67108864, "swap": 67108864}}'
	check_status "ns: memory.limit 64 MiB: a 200 MiB hog exits 137" 137
	check_match "  ... and the message names the limit" \
		"killed: the memory limit of 64 MiB was reached" "$ERR"
	ns_run '["limits", "forks", "100"]' '{"pids": {"limit": 16}}'
	check_status "ns: pids.limit 16: the container survives a fork bomb" 0
	check_match "  ... whose forks fail with EAGAIN" "^forked 1[0-5] eagain [1-9][0-9]* other 0$" \
		"$OUT"
	ns_run '["sh", "-c", "grep memory /proc/self/cgroup"]' '{"pids": {"limit": 100}}'
	check_match "ns: the container sees its cgroup as / (its cgroup namespace)" \
		"^[0-9]+:memory:/$" "$OUT"
	ns_run '["sh", "-c", "sleep 0.5"]' \
		'{"cpu": {"quota": 25000, "period": 100000, "shares": 512}}' /cbox-itest/cpu &
	for ((i = 0; i < 30; i++)); do
		q=$(cat /sys/fs/cgroup/cpu*/cbox-itest/cpu/cpu.cfs_quota_us 2>/dev/null | head -n 1)
		[ -n "$q" ] && break
		sleep 0.05
	done
	wait
	check "ns: cpu.quota 25000 is in the cgroupsPath's cgroup while it runs" 25000 "${q:-}"
	ns_run '["true"]' '{"memory": {"limit": 67108864, "swap": 33554432}}'
	check_status "ns: swap below memory: the run fails" 1
	check_match "  ... naming the limits" "memory\+swap limit .* is below the memory limit" "$ERR"
	check "ns: no cgroup of a container is left" "" \
		"$(cgroups_named 'lim*'; cgroups_named cpu | grep cbox-itest)"
	rmdir /sys/fs/cgroup/*/cbox-itest 2>/dev/null
else
	skip_check "ns tier limits" "cbox or python3 missing"
fi
finish
