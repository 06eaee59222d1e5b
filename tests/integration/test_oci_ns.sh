#!/bin/bash
# The OCI runtime with the ns tier: `cbox spec` + edits, run/create/start/state/kill/delete,
# hostname, mounts, masked and read-only paths, seccomp, capabilities, rlimits, hooks, ps, pause
# and resume, update, exec (namespaces, cgroup, capabilities, seccomp, --detach, a console), and
# the errors a caller sees (malformed config.json, --log-format json, an unknown tier).
. "$(dirname "$0")/lib.sh"

need_root
[ -n "${CBOX:-}" ] && [ -x "$CBOX" ] || skip "CBOX (cbox) not built or not set"
[ -x "$BB" ] || skip "$BB missing: install the Debian package busybox-static"
command -v python3 >/dev/null || skip "python3 missing"

ROOT="$SCRATCH/state"
BUNDLE="$SCRATCH/bundle"
mkdir -p "$BUNDLE/rootfs/bin" "$BUNDLE/rootfs/etc"
cp "$BB" "$BUNDLE/rootfs/bin/busybox"
for a in $("$BB" --list); do
	[ "$a" = busybox ] || ln -s busybox "$BUNDLE/rootfs/bin/$a"
done
echo secret >"$BUNDLE/rootfs/etc/masked"
"$CBOX" spec --bundle "$BUNDLE" || { echo "FAIL cbox spec"; exit 1; }
cp "$BUNDLE/config.json" "$SCRATCH/base.json"
CFG="ns"

# edit PYTHON: rewrites config.json from the spec's output; `c` is the config.
edit() {
	python3 - "$SCRATCH/base.json" "$BUNDLE/config.json" "$SCRATCH" <<EOF
import json, sys
c = json.load(open(sys.argv[1]))
scratch = sys.argv[3]
c["annotations"] = {"dev.cbox.tier": "ns"}
c["mounts"].append({"destination": "/tmp", "type": "tmpfs", "source": "tmpfs"})
$1
json.dump(c, open(sys.argv[2], "w"))
EOF
}


runsh 'echo hello; exit 7'
check "run prints the output" hello "$OUT"
check_status "run returns the exit status" 7
runsh 'hostname' "c['hostname'] = 'boxy'"
check "hostname" boxy "$OUT"
# A user namespace: the container's root is host id 100000, as runc runs rootless-style
# containers; its init must still find and open exec.fifo (owned by that id). As with runc, the
# bundle must be reachable by that id (mktemp made the scratch directory 0700).
chmod 755 "$SCRATCH"
runsh 'id -u; cat /proc/self/uid_map' "c['linux']['namespaces'].append({'type': 'user'})
c['linux']['uidMappings'] = [{'containerID': 0, 'hostID': 100000, 'size': 65536}]
c['linux']['gidMappings'] = [{'containerID': 0, 'hostID': 100000, 'size': 65536}]
c['mounts'] = [m for m in c['mounts'] if m['destination'] not in ('/sys', '/sys/fs/cgroup')]"
check_status "a user namespace: the container runs" 0
check_match "  ... as root inside, mapped to host id 100000" "^ *0 +100000 +65536$" "$OUT"
chmod 700 "$SCRATCH"
runsh 'cat /proc/self/stat >/dev/null && echo proc; grep " /tmp " /proc/mounts | cut -d" " -f3'
check "proc and a /tmp tmpfs" "proc
tmpfs" "$OUT"
runsh 'echo "[$(cat /etc/masked)]"' "c['linux']['maskedPaths'].append('/etc/masked')"
check "a masked path is empty" "[]" "$OUT"
runsh 'touch /x 2>/dev/null && echo wrote || echo ro'
check "the root is read-only" ro "$OUT"
runsh 'touch /tmp/x && echo wrote'
check "/tmp is writable" wrote "$OUT"
runsh 'mkdir /tmp/d; echo $?' "c['linux']['seccomp'] = {'defaultAction': 'SCMP_ACT_ALLOW', 'architectures': ['SCMP_ARCH_X86_64'], 'syscalls': [{'names': ['mkdir', 'mkdirat'], 'action': 'SCMP_ACT_ERRNO', 'errnoRet': 1}]}"
check "seccomp denies mkdir" 1 "$OUT"
check_match "seccomp: mkdir's error is EPERM" "Operation not permitted" "$ERR"
runsh 'grep CapBnd /proc/self/status'
check "capabilities dropped to the spec's three" "CapBnd:	0000000020000420" "$OUT"
runsh 'ulimit -n' "c['process']['rlimits'] = [{'type': 'RLIMIT_NOFILE', 'soft': 123, 'hard': 456}]"
check "rlimit nofile" 123 "$OUT"
runsh 'id -u' "c['process']['user'] = {'uid': 1000, 'gid': 1000}"
check "process.user" 1000 "$OUT"
runsh 'true' "c['hooks'] = {'prestart': [{'path': '/bin/sh', 'args': ['sh', '-c', 'cat > ' + scratch + '/hook.json']}], 'poststop': [{'path': '/bin/sh', 'args': ['sh', '-c', 'echo stopped > ' + scratch + '/poststop']}]}"
check_match "a prestart hook gets the state on stdin" '"status":"creating"' "$(cat "$SCRATCH/hook.json" 2>/dev/null)"
check_match "  ... with the init's pid (what libnetwork-setkey opens /proc/PID/ns/net of)" '"pid":[1-9]' "$(cat "$SCRATCH/hook.json" 2>/dev/null)"
check "a poststop hook ran" stopped "$(cat "$SCRATCH/poststop" 2>/dev/null)"
runsh 'true' "c['hooks'] = {'createRuntime': [{'path': '/bin/false'}]}"
check_status "a failing hook fails the run" 1
check_match "  ... naming the hook" "hook createRuntime\[0\] \(/bin/false\) failed" "$ERR"
check "  ... and leaves no state behind" "" "$(ls "$ROOT")"
# What a failing hook printed is in the error, as runc does: Docker shows that message, and
# it is the only trace of why libnetwork-setkey failed.
runsh 'true' "c['hooks'] = {'prestart': [{'path': '/bin/sh', 'args': ['sh', '-c', 'echo out; echo \"level=fatal msg=no sandbox\" >&2; exit 3']}]}"
check_status "a hook that fails with a message" 1
check_match "  ... the message is in the error, on one line" "hook prestart\[0\] \(/bin/sh\) failed with exit status 3: out level=fatal msg=no sandbox$" "$ERR"
# A hook that never reads its stdin must not block create, however large the state (its
# annotations come from config.json); one that reads to EOF gets all of it.
big="'x' * 300000"
runsh 'true' "c['annotations']['big'] = $big
c['hooks'] = {'prestart': [{'path': '/bin/sleep', 'args': ['sleep', '0.2']}, {'path': '/bin/sh', 'args': ['sh', '-c', 'wc -c > ' + scratch + '/hook.len']}]}"
check_status "hooks that ignore a 300 KB state, or read it to EOF" 0
check_match "  ... the second got all of it" "^300[0-9]{3}\$" "$(cat "$SCRATCH/hook.len" 2>/dev/null)"
# (A hang guard, not a timing: waiting for the pipe's EOF would take the child's 127 s.)
t0=$SECONDS
runsh 'true' "c['hooks'] = {'prestart': [{'path': '/bin/sh', 'args': ['sh', '-c', 'sleep 127 & echo started; exit 1']}]}"
check_status "a hook that leaves a child holding its output fails" 1
check_match "  ... with what it printed" "failed with exit status 1: started$" "$ERR"
check "  ... without waiting for that child" yes "$([ $((SECONDS - t0)) -lt 60 ] && echo yes)"
pkill -x -f "sleep 127"
runsh 'true' "c['hooks'] = {'prestart': [{'path': '/bin/sleep', 'args': ['sleep', '30'], 'timeout': 1}]}"
check_status "a hook past its timeout" 1
check_match "  ... is killed, and the error says so" "killed after its timeout of 1 s" "$ERR"

# The lifecycle, step by step.
edit "c['process']['args'] = ['sleep', '30']"
oci create --bundle "$BUNDLE" --pid-file "$SCRATCH/pid" life
check_status "create" 0
oci state life
check_match "state: created" '"status": ?"created"' "$OUT"
check "the pid file holds the init's pid" "$(cat "$SCRATCH/pid")" \
	"$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')"
oci delete life
check_status "delete of a created container without --force fails" 1
oci start life
check_status "start" 0
oci state life
check_match "state: running" '"status": ?"running"' "$OUT"
oci list --format json
check_match "list --format json" '"id":"life"' "$OUT"
oci kill life KILL
check_status "kill" 0
for _ in $(seq 50); do
	oci state life
	printf '%s' "$OUT" | grep -q stopped && break
	sleep 0.1
done
check_match "state: stopped" '"status": ?"stopped"' "$OUT"
oci delete life
check_status "delete" 0
check "delete removes the state" "" "$(ls "$ROOT")"
edit "c['process']['args'] = ['sleep', '30']"
oci run --detach --bundle "$BUNDLE" forced
oci delete --force forced
check_status "delete --force of a running container" 0

# --cgroup-manager=disabled (crun's option; cbox-run's ns tier without a limit): no cgroup of the
# container's own, its processes still listed and ended through its pid namespace; a config
# with limits is refused rather than run without them.
edit "c['process']['args'] = ['sh', '-c', 'sleep 30 & exec sleep 31']"
oci --cgroup-manager=disabled run --detach --bundle "$BUNDLE" nocg
check_status "--cgroup-manager=disabled: run --detach" 0
check "  ... no cgroup is recorded" "none" "$(cat "$ROOT/nocg/cgroup" 2>/dev/null || echo none)"
oci state nocg
nocg_init=$(json_field pid)
check "  ... the init is in the caller's cgroups" "$(cat /proc/self/cgroup)" \
	"$(cat "/proc/${nocg_init:-0}/cgroup" 2>&1)"
oci ps --format json nocg
check_match "  ... ps lists the init and its child (through the pid namespace)" \
	"^\[[0-9]+,[0-9]+\]$" "$OUT"
oci pause nocg
check_status "  ... pause: exit 1" 1
check_match "  ... naming why" "container nocg has no cgroup \(created with --cgroup-manager=disabled" "$ERR"
oci delete --force nocg
check_status "  ... delete --force" 0
check "  ... ends every process of it" "" "$(pgrep -x -f 'sleep 3[01]')"
edit "c['linux']['resources'] = {'memory': {'limit': 67108864}}"
oci --cgroup-manager=disabled run --bundle "$BUNDLE" nocg2
check_status "--cgroup-manager=disabled with linux.resources limits: refused" 1
check_match "  ... with a message" "limits need a cgroup, and --cgroup-manager=disabled gives none" "$ERR"
check "  ... leaving no state" "" "$(ls "$ROOT")"
oci --cgroup-manager=cgroupv3 list
check_status "--cgroup-manager with an unknown manager: exit 1" 1
check_match "  ... naming the choices" "must be cgroupfs, systemd or disabled, not 'cgroupv3'" "$ERR"

# ps, pause, resume, update and exec on a running container (issue 4: docker top, pause,
# update, exec). Its init writes a file, starts a child, and counts in /data/c, a host directory.
mkdir -p "$BUNDLE/rootfs/data" "$SCRATCH/data"
edit "c['process']['args'] = ['sh', '-c', 'echo made >/tmp/f; sleep 1000 & i=0; while :; do i=\$((i+1)); echo \$i >/data/c; sleep 0.02; done']
c['hostname'] = 'boxy'
c['mounts'].append({'destination': '/data', 'type': 'bind', 'source': scratch + '/data', 'options': ['rbind', 'rw']})
for s in ('bounding', 'effective', 'permitted'):
    c['process']['capabilities'][s].append('CAP_MKNOD')
c['linux']['seccomp'] = {'defaultAction': 'SCMP_ACT_ALLOW', 'architectures': ['SCMP_ARCH_X86_64'], 'syscalls': [{'names': ['mkdir', 'mkdirat'], 'action': 'SCMP_ACT_ERRNO', 'errnoRet': 1}]}"
oci run --detach --bundle "$BUNDLE" box
check_status "run --detach" 0
oci state box
init=$(json_field pid)
for _ in $(seq 50); do
	[ -s "$SCRATCH/data/c" ] && descendants "$init" | grep -q sleep && break
	sleep 0.1
done

# The child that lives (the loop's own sleeps come and go).
sleeper=""
for p in $(descendants "$init" | cut -d' ' -f1); do
	[ "$(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline")" = "sleep 1000 " ] && sleeper=$p
done
oci ps --format json box
ps_pids=" $(printf '%s' "$OUT" | tr -d '[]' | tr ',' ' ') "
check_match "ps --format json: the init and its child (host pids)" " $init .*$sleeper |$sleeper .* $init " "$ps_pids"
outside=""
for p in $ps_pids; do
	n=$(readlink "/proc/$p/ns/pid" 2>/dev/null) || continue # a loop's sleep, gone since
	[ "$n" = "$(readlink "/proc/$init/ns/pid")" ] || outside="$outside $p"
done
check "  ... and only processes of the container" "" "$outside"
oci ps box -o pid,comm
check_match "ps (table): ps's header" '^ +PID +COMMAND$' "$(printf '%s\n' "$OUT" | head -n 1)"
check_match "ps (table): the container's sleep" "^ *$sleeper +sleep$" "$OUT"
check_nomatch "ps (table): no process of the host" "^ *$$ " "$OUT"
oci ps --format yaml box
check_status "ps --format yaml: exit 1" 1

# pause, resume and update need the container's cgroup (none on a host without cgroups).
if [ -f "$ROOT/box/cgroup" ]; then
	check "the container's loop runs" 0 "$(counter_moves "$SCRATCH/data/c"; echo $?)"
	oci pause box
	check_status "pause" 0
	oci state box
	check_match "state: paused" '"status": ?"paused"' "$OUT"
	oci list
	check_match "list: paused" '^box +[0-9]+ +paused +ns' "$OUT"
	check "paused: the container's processes do not run" 1 "$(counter_moves "$SCRATCH/data/c"; echo $?)"
	fz=$(cg_dir box 4)
	if [ -n "$fz" ] && [ -f "$fz/cgroup.events" ]; then
		check_match "paused: the cgroup is frozen (cgroup.events)" '^frozen 1$' "$(cat "$fz/cgroup.events")"
	else
		check "paused: the cgroup is frozen (freezer.state)" FROZEN "$(cat "$(cg_dir box 3)/freezer.state")"
	fi
	oci pause box
	check_status "pause of a paused container: exit 1" 1
	check_match "  ... already paused" "container box is already paused" "$ERR"
	oci exec box true
	check_match "exec into a paused container is refused" "cannot exec in a paused container" "$ERR"
	oci resume box
	check_status "resume" 0
	oci state box
	check_match "state: running again" '"status": ?"running"' "$OUT"
	check "resumed: the loop runs again" 0 "$(counter_moves "$SCRATCH/data/c"; echo $?)"
	oci resume box
	check_match "resume of a running container: not paused" "container box is not paused" "$ERR"

	echo '{"memory": {"limit": 67108864}, "pids": {"limit": 42}, "cpu": {"shares": 0, "quota": 0, "period": 0}, "blockIO": {}}' >"$SCRATCH/res.json"
	oci_in "$SCRATCH/res.json" update --resources - box
	check_status "update --resources - (stdin)" 0
	check "  ... memory limit" 67108864 "$(cg_memory_limit box)"
	check "  ... pids limit" 42 "$(cg_pids_max box)"
	oci update --memory 32m --pids-limit -1 box
	check_status "update --memory 32m --pids-limit -1" 0
	check "  ... memory limit" 33554432 "$(cg_memory_limit box)"
	check "  ... pids limit" max "$(cg_pids_max box)"
	echo '{"memory": {"limit": "64m"}}' >"$SCRATCH/res.json"
	oci_in "$SCRATCH/res.json" update --resources - box
	check_status "update with a malformed LinuxResources: exit 1" 1
	check_match "  ... naming the JSON path" 'resources \(stdin\): memory\.limit: expected' "$ERR"
	check "  ... and the limit stays" 33554432 "$(cg_memory_limit box)"
	printf '{"memory": ' >"$SCRATCH/res.json"
	oci update --resources "$SCRATCH/res.json" box
	check_match "update with truncated JSON names the file" "res\.json: invalid JSON" "$ERR"
else
	skip_check "pause, resume, update" "the host has no usable cgroup file system"
fi

oci exec box sh -c 'cat /tmp/f; hostname; readlink /proc/self/ns/pid; readlink /proc/self/ns/mnt; cat /proc/1/comm'
check_status "exec" 0
check "exec sees the container's files, hostname, pid and mount namespaces and init" "made
boxy
$(readlink "/proc/$init/ns/pid")
$(readlink "/proc/$init/ns/mnt")
sh" "$OUT"
oci exec box sh -c 'echo $$'
check_match "  ... with a pid of the container's namespace" '^[0-9]{1,3}$' "$OUT"
oci exec box sh -c 'exit 7'
check_status "exec: the process's exit status" 7
oci exec box sh -c 'kill -9 $$'
check_status "exec: killed by SIGKILL: 137" 137
oci exec --env FOO=bar --cwd /tmp --user 1000:1000 box sh -c 'echo "$FOO $(pwd) $(id -u):$(id -g)"'
check "exec --env --cwd --user" "bar /tmp 1000:1000" "$OUT"
oci exec box sh -c 'mkdir /tmp/d'
check_match "exec: the container's seccomp filter applies (mkdir refused)" "Operation not permitted" "$ERR"
oci exec box sh -c 'mknod /tmp/n c 1 3 && echo made'
check "exec without --process: the config's capabilities (mknod works)" made "$OUT"
cat >"$SCRATCH/process.json" <<JSON
{"args": ["sh", "-c", "grep CapEff /proc/self/status; mknod /tmp/n2 c 1 3 && echo made"], "env": ["PATH=/bin"], "cwd": "/", "user": {"uid": 0, "gid": 0}}
JSON
oci exec --process "$SCRATCH/process.json" box
check "exec --process without capabilities gets none" "CapEff:	0000000000000000" "$OUT"
check_match "  ... so mknod (CAP_MKNOD) fails" "Operation not permitted" "$ERR"
oci exec --no-new-privs box grep NoNewPrivs /proc/self/status
check_match "exec --no-new-privs" 'NoNewPrivs:[[:space:]]+1' "$OUT"
oci exec --detach --pid-file "$SCRATCH/exec.pid" box sleep 100
check_status "exec --detach" 0
epid=$(cat "$SCRATCH/exec.pid" 2>/dev/null)
check "  ... the pid file names a process in the container's pid namespace" \
	"$(readlink "/proc/$init/ns/pid")" "$(readlink "/proc/$epid/ns/pid" 2>/dev/null)"
oci ps --format json box
check_match "  ... and ps lists it" "[[,]${epid}[],]" "$OUT"
printf '{"args": ["sh", 7]}' >"$SCRATCH/process.json"
oci exec --process "$SCRATCH/process.json" box
check_status "exec with a malformed process.json: exit 1" 1
check_match "  ... naming the JSON path" 'process\.json: args\[1\]: expected a string' "$ERR"
oci exec box nosuchprogram
check_match "exec of a missing program is named" 'exec: "nosuchprogram": executable file not found' "$ERR"
oci exec --console-socket "$SCRATCH/nothing.sock" box true
check_match "--console-socket without a terminal is refused" "console-socket without a terminal" "$ERR"
rm -f "$SCRATCH/console.sock"
python3 "$(dirname "$0")/helpers/console_recv.py" "$SCRATCH/console.sock" >"$SCRATCH/console.out" 2>&1 &
RECV=$!
for _ in $(seq 50); do
	[ -S "$SCRATCH/console.sock" ] && break
	sleep 0.1
done
oci exec --tty --console-socket "$SCRATCH/console.sock" box sh -c 'tty; echo on-the-pty'
check_status "exec --tty --console-socket" 0
wait "$RECV"
check_match "  ... the master came with SCM_RIGHTS" '^name /dev/ptmx fds 1' "$(cat "$SCRATCH/console.out")"
check_match "  ... and the process's stdout is the pty" '^/dev/pts/[0-9]+' "$(cat "$SCRATCH/console.out")"
oci exec --tty box sh -c 'tty; exit 5'
check_status "exec --tty without a console socket: cbox relays the pty; the status" 5
check_match "  ... the process's stdout is a pty" '^/dev/pts/[0-9]+' "$OUT"
oci exec --tty --detach box true
check_match "exec --tty --detach without a console socket is refused" "needs --console-socket" "$ERR"

oci pause box
oci kill box KILL
check_status "kill KILL of a paused container" 0
wait_stopped box
check_match "  ... stops it (thawed after the signal)" '"status": ?"stopped"' "$OUT"
oci exec box true
check_status "exec into a stopped container: exit 1" 1
check_match "  ... cannot exec in a stopped container" "cannot exec in a stopped container" "$ERR"
oci pause box
check_match "pause of a stopped container: not running" "container box is not running" "$ERR"
oci update --memory 64m box
check_match "update of a stopped container: not running" "container box is not running" "$ERR"
oci delete box
oci exec nosuch true
check_match "exec into a container that does not exist" "container nosuch does not exist" "$ERR"
oci ps --format json nosuch
check_status "ps of a container that does not exist: exit 1" 1

# runc's CVE-2019-5736: a container program "#!/proc/self/exe" makes the kernel run the
# binary of the process that execs it, cbox's, inside the container; a root there must not be
# able to write through it into the host's cbox. cbox runs from a sealed memfd copy, so the
# attempt must fail. (exec --detach: no cbox runs from the host's binary meanwhile, which would
# make a write fail with ETXTBSY whatever cbox does.) The rootfs gets cbox's libraries so that
# the binary can run in it.
for lib in $(ldd "$CBOX" | grep -o '/[^ ]*'); do
	mkdir -p "$BUNDLE/rootfs$(dirname "$lib")"
	cp -L "$lib" "$BUNDLE/rootfs$lib"
done
rm -f "$SCRATCH/data/exe" "$SCRATCH/data/result"
edit "c['process']['args'] = ['sleep', '1000']
c['mounts'].append({'destination': '/data', 'type': 'bind', 'source': scratch + '/data', 'options': ['rbind', 'rw']})"
oci run --detach --bundle "$BUNDLE" cve
oci exec cve sh -c 'mkfifo /tmp/fifo; printf "#!/proc/self/exe --log=/tmp/fifo\n" >/tmp/evil; chmod +x /tmp/evil'
# The interpreter of the program cbox execs resolves in the exec'ing process: cbox's copy.
oci exec --detach cve /tmp/evil
oci exec --detach cve sh -c 'p=""; for _ in $(seq 50); do for d in /proc/[0-9]*; do
[ "$(cat $d/comm)" = evil ] && p=${d#/proc/}; done; [ -n "$p" ] && break; sleep 0.1; done
readlink /proc/$p/exe >/data/exe; exec 3</proc/$p/exe; cat /tmp/fifo >/dev/null
while [ -e /proc/$p ]; do sleep 0.1; done
if echo pwn >>/proc/self/fd/3; then echo wrote; else echo refused; fi >/data/result'
for _ in $(seq 50); do
	[ -s "$SCRATCH/data/result" ] && break
	sleep 0.1
done
check_match "the binary a container can reach is a memfd" '^/memfd:cbox' "$(cat "$SCRATCH/data/exe" 2>/dev/null)"
check "writing into it from the container fails" refused "$(cat "$SCRATCH/data/result" 2>/dev/null)"
oci delete --force cve

# What a caller sees when something is wrong.
edit "c['process']['args'] = ['sh', 7]"
oci run --bundle "$BUNDLE" bad
check_status "malformed config.json: exit 1" 1
check_match "  ... naming the JSON path" 'config\.json: process\.args\[1\]: expected a string' "$ERR"
oci --log-format json --log "$SCRATCH/log.json" run --bundle "$BUNDLE" bad
check_match "--log-format json: the error line" '^\{"level":"error","msg":"run: config\.json: process\.args\[1\]' "$(tail -n 1 "$SCRATCH/log.json")"
edit "c['process']['args'] = ['true']"
oci --tier nope run --bundle "$BUNDLE" t
check_match "an unknown tier lists what this host supports" "unknown tier 'nope': this host supports: .*ns" "$ERR"
edit "c['process']['args'] = ['nosuchprogram']"
oci run --bundle "$BUNDLE" t
check_match "a missing program is named" 'exec: "nosuchprogram": executable file not found' "$ERR"
console_create_checks nsc
oci tiers
check_match "cbox tiers lists the ns tier" '^ns +available' "$OUT"

# Rootless: uid 1000 runs the ns tier on `cbox spec --rootless`'s config (its ids mapped to the
# container's root, setgroups denied as the kernel requires for a gid_map written by a user),
# through create, start, exec, state, kill and delete; without a user namespace it is told what
# to write. Before, the tier said "needs root".
RL="$SCRATCH/rootless"
rootless_bundle "$RL" "$BUNDLE/rootfs"
rl_edit() {
	python3 - "$RL/bundle/config.json" "$1" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["annotations"] = {"dev.cbox.tier": "ns"}
c["process"]["terminal"] = False
c["mounts"] = [m for m in c["mounts"] if m["destination"] != "/sys/fs/cgroup"]
exec(sys.argv[2])
json.dump(c, open(sys.argv[1], "w"))
PYEOF
}
# (into files, as oci: create's init holds its stdout until start, which a pipe would wait for)
rl() {
	(cd "$RL" && as_user "$CBOX" --root "$RL/state" "$@" >"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null)
	STATUS=$?
	OUT=$(cat "$SCRATCH/out")
	ERR=$(cat "$SCRATCH/err")
}
CFG="ns rootless"
rl_edit "c['process']['args'] = ['sh', '-c', 'id -u; cat /proc/self/uid_map; cat /proc/self/setgroups']"
rl run --bundle bundle rl1
check_status "run by uid 1000: the container runs" 0
check_match "  ... as root inside, mapped to host id 1000" "^ *0 +1000 +1$" "$OUT"
check_match "  ... with setgroups denied" "^deny$" "$OUT"
rl_edit "c['process']['args'] = ['sleep', '30']"
rl create --bundle bundle rl2
check_status "create" 0
rl start rl2
check_status "start" 0
rl exec rl2 sh -c 'echo in; id -u'
check "exec" "in
0" "$OUT"
rl state rl2
check_match "state: running" '"status": ?"running"' "$OUT"
rl kill rl2 KILL
check_status "kill" 0
for _ in $(seq 30); do
	rl state rl2
	printf '%s' "$OUT" | grep -q '"stopped"' && break
	sleep 0.1
done
rl delete rl2
check_status "delete" 0
python3 - "$RL/bundle/config.json" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] != "user"]
c["linux"].pop("uidMappings", None)
c["linux"].pop("gidMappings", None)
json.dump(c, open(sys.argv[1], "w"))
PYEOF
rl run --bundle bundle rl3
check_status "without a user namespace: refused" 1
check_match "  ... saying what to write" "needs a new user namespace mapping your ids" "$ERR"
chmod 0700 "$SCRATCH"
CFG="ns"

oci features
check_match "features: ociVersionMax" '"ociVersionMax": ?"1\.2\.0"' "$OUT"
finish
