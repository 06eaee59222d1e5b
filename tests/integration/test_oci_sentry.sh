#!/bin/bash
# The OCI runtime with the sentry tier (the default): run, exit status, env and cwd as given,
# bind mounts rw and ro, a masked path, a read-only root, hostname, /dev/shm, rlimits, hooks,
# create/state/start/kill/delete, a network namespace given by path (Docker's), the platform
# chosen by annotation, the configs the tier refuses, ps (the guest's tasks only), pause and
# resume, update, and exec.
. "$(dirname "$0")/lib.sh"

need_root
[ -n "${CBOX:-}" ] && [ -x "$CBOX" ] || skip "CBOX (cbox) not built or not set"
[ -x "$BB" ] || skip "$BB missing: install the Debian package busybox-static"
command -v python3 >/dev/null || skip "python3 missing"

ROOT="$SCRATCH/state"
BUNDLE="$SCRATCH/bundle"
mkdir -p "$BUNDLE/rootfs/bin" "$BUNDLE/rootfs/etc" "$BUNDLE/rootfs/dev" "$BUNDLE/rootfs/data" \
	"$BUNDLE/rootfs/ro" "$BUNDLE/rootfs/work" "$BUNDLE/rootfs/tmp" "$SCRATCH/data" "$SCRATCH/rodata"
cp "$BB" "$BUNDLE/rootfs/bin/busybox"
for a in $("$BB" --list); do
	[ "$a" = busybox ] || ln -s busybox "$BUNDLE/rootfs/bin/$a"
done
echo secret >"$BUNDLE/rootfs/etc/masked"
echo inside >"$SCRATCH/rodata/file"
"$CBOX" spec --bundle "$BUNDLE" || { echo "FAIL cbox spec"; exit 1; }
cp "$BUNDLE/config.json" "$SCRATCH/base.json"
CFG="sentry"

# edit PYTHON: rewrites config.json from the spec's output; `c` is the config. No tier
# annotation: the sentry is the default.
edit() {
	python3 - "$SCRATCH/base.json" "$BUNDLE/config.json" "$SCRATCH" <<EOF
import json, sys
c = json.load(open(sys.argv[1]))
scratch = sys.argv[3]
c["mounts"].append({"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]})
def netns(path):
    for n in c["linux"]["namespaces"]:
        if n["type"] == "network":
            n["path"] = path
$1
json.dump(c, open(sys.argv[2], "w"))
EOF
}


runsh 'echo hello; exit 7'
check "run prints the output" hello "$OUT"
check_status "run returns the guest's exit status" 7
# --cgroup-manager=disabled (tier.h, no_cgroup): the sandbox runs in its creator's cgroups, and
# a config with limits is refused.
edit "c['process']['args'] = ['sh', '-c', 'echo no cgroup']"
oci --cgroup-manager=disabled run --bundle "$BUNDLE" nocg
check "--cgroup-manager=disabled: the sandbox runs" "no cgroup" "$OUT"
edit "c['process']['args'] = ['true']
c['linux']['resources'] = {'pids': {'limit': 10}}"
oci --cgroup-manager=disabled run --bundle "$BUNDLE" nocg2
check_status "  ... with a pids limit: refused" 1
check_match "  ... saying why" "limits need a cgroup, and --cgroup-manager=disabled gives none$" "$ERR"
export CBOX_HOST_SECRET=leak
runsh 'echo "$FOO|${CBOX_HOST_SECRET:-}|$(pwd)"' "c['process']['env'] = ['PATH=/bin', 'FOO=bar baz']
c['process']['cwd'] = '/etc'"
check "env and cwd from config.json, nothing from the host" "bar baz||/etc" "$OUT"
unset CBOX_HOST_SECRET
# process.noNewPrivileges is the guest's own flag (the host's is always set): the spec's true,
# then false; a guest filter then needs the flag, which the guest may still set (compat:
# seccomp.filter_needs_no_new_privs).
runsh 'grep NoNewPrivs /proc/self/status'
check "noNewPrivileges true" "NoNewPrivs:	1" "$OUT"
runsh 'grep NoNewPrivs /proc/self/status' "c['process']['noNewPrivileges'] = False"
check "noNewPrivileges false" "NoNewPrivs:	0" "$OUT"
runsh 'echo rw >/data/f && cat /data/f; cat /ro/file; echo x >/ro/new 2>/dev/null || echo ro' \
	"c['mounts'] += [{'destination': '/data', 'type': 'bind', 'source': scratch + '/data', 'options': ['rbind', 'rw']}, {'destination': '/ro', 'type': 'none', 'source': scratch + '/rodata', 'options': ['bind', 'ro']}]"
check "bind mounts: rw, then ro" "rw
inside
ro" "$OUT"
check "  ... the rw bind wrote to the host" rw "$(cat "$SCRATCH/data/f" 2>/dev/null)"
runsh 'echo "[$(cat /etc/masked)]"' "c['linux']['maskedPaths'].append('/etc/masked')"
check "a masked path is empty" "[]" "$OUT"
runsh 'touch /x; touch /tmp/x && echo tmp' "c['root']['readonly'] = True"
check "read-only root, writable /tmp" tmp "$OUT"
check_match "  ... EROFS" "Read-only file system" "$ERR"
runsh 'touch /work/x && echo wrote' "c['root']['readonly'] = False"
check "a writable root" wrote "$OUT"
rm -f "$BUNDLE/rootfs/work/x"
# linux.readonlyPaths in a writable root: read-only there, writable around it. (The spec's own
# entries are under /proc, which is the sentry's; these are the rootfs's.) A symlink on the way
# is followed inside the rootfs, as runc follows it: relative, absolute, or naming a host path
# (which then means the rootfs's own, here missing: the host file never shows).
mkdir -p "$BUNDLE/rootfs/work2" "$SCRATCH/hostdir"
echo host-secret >"$SCRATCH/hostdir/secret"
ln -sfn work "$BUNDLE/rootfs/wlink"
ln -sfn /etc/../work2 "$BUNDLE/rootfs/alink"
ln -sfn "$SCRATCH/hostdir" "$BUNDLE/rootfs/hlink"
runsh 'touch /work/y 2>&1; touch /work2/y 2>&1; cat /hlink/secret 2>&1; touch /etc/y && echo wrote' \
	"c['root']['readonly'] = False
c['linux']['readonlyPaths'] += ['/wlink', '/alink', '/nonexistent', '/hlink']"
check "readonlyPaths entries through symlinks are read-only" 2 \
	"$(echo "$OUT" | grep -c "Read-only file system")"
check "  ... nothing written there, the rest of the root writable" "wrote " \
	"$(echo "$OUT" | tail -n 1) $(ls -A "$BUNDLE/rootfs/work")$(ls -A "$BUNDLE/rootfs/work2")"
check_nomatch "  ... a link naming a host path does not show the host's file" host-secret "$OUT"
check "  ... and none is said to stay writable" "" "$(echo "$ERR" | grep "stays writable")"
rm -rf "$BUNDLE/rootfs/etc/y" "$BUNDLE/rootfs/wlink" "$BUNDLE/rootfs/alink" \
	"$BUNDLE/rootfs/hlink" "$BUNDLE/rootfs/work2"
# An entry that leads to the root itself makes the whole root read-only (the gofer refused a
# bind onto / and the container did not start).
ln -sfn / "$BUNDLE/rootfs/rootlink"
runsh 'touch /etc/y 2>&1; touch /tmp/y && echo tmp' "c['root']['readonly'] = False
c['linux']['readonlyPaths'] += ['/rootlink']"
check_match "a readonlyPaths entry leading to / makes the root read-only" \
	"Read-only file system" "$OUT"
check "  ... /tmp stays writable, nothing written in the rootfs" "tmp absent" \
	"$(echo "$OUT" | tail -n 1) $([ -e "$BUNDLE/rootfs/etc/y" ] && echo present || echo absent)"
rm -f "$BUNDLE/rootfs/rootlink" "$BUNDLE/rootfs/etc/y"
runsh 'echo data >/dev/shm/s && cat /dev/shm/s'
check "/dev/shm" data "$OUT"
runsh 'touch /run/x && echo made' "c['mounts'].append({'destination': '/run', 'type': 'tmpfs', 'source': 'tmpfs'})"
check "a tmpfs target missing from the rootfs is made (as runc does)" made "$OUT"
check "  ... in the rootfs, not through the tmpfs" "" "$(ls "$BUNDLE/rootfs/run")"
# A tmpfs's mode= (docker run --tmpfs /run:mode=755): its root's bits, 1777 without one (it was
# 1777 whatever the option said); a mode that is not one is refused.
runsh 'stat -c %a /run /tmp' "c['mounts'].append({'destination': '/run', 'type': 'tmpfs', 'source': 'tmpfs', 'options': ['nosuid', 'mode=755']})"
check "a tmpfs's mode= option" "755
1777" "$OUT"
runsh 'true' "c['mounts'].append({'destination': '/run', 'type': 'tmpfs', 'source': 'tmpfs', 'options': ['mode=17777']})"
check_status "  ... a mode above 7777: refused" 1
check_match "  ... saying why" "/run: bad option 'mode=17777'" "$ERR"
runsh 'true' "c['mounts'].append({'destination': '/run', 'type': 'tmpfs', 'source': 'tmpfs', 'options': ['size=12q']})"
check_match "  ... as is a size that is not one" "/run: bad option 'size=12q'" "$ERR"
runsh 'stat -c %a /run' "c['mounts'].append({'destination': '/run', 'type': 'tmpfs', 'source': 'tmpfs', 'options': ['mode=700', 'size=50%', 'mode=750']})"
check "  ... the last mode wins; a size in percent is tmpfs's default" 750 "$OUT"
# A destination with ".." stays in the rootfs (cleaned, as runc cleans it): the targets the
# runtime makes never land on the host. It made $SCRATCH/escaped/{d,f} on the host before, and
# the run then failed on the gofer's refusal of the target.
up="/../../../../../../../../../../../../../../../..$SCRATCH/escaped"
runsh "ls $SCRATCH/escaped | xargs" "c['mounts'] += [{'destination': '$up/d', 'type': 'tmpfs', 'source': 'tmpfs'}, {'destination': '$up/f', 'type': 'bind', 'source': scratch + '/rodata/file', 'options': ['bind', 'ro']}]"
check "mount destinations with .. : nothing made on the host" "absent" \
	"$([ -e "$SCRATCH/escaped" ] && echo present || echo absent)"
check "  ... the mounts made inside, where the cleaned paths name" "d f" "$OUT"
# An image's own FIFO at a file bind's target (Docker binds /etc/hosts, /etc/hostname and
# /etc/resolv.conf in every container): the runtime never opens it (it waited forever for a
# reader), the bind covers it.
mkfifo "$BUNDLE/rootfs/etc/fifo"
runsh 'cat /etc/fifo' "c['mounts'].append({'destination': '/etc/fifo', 'type': 'bind', 'source': scratch + '/rodata/file', 'options': ['bind', 'ro']})"
check "a bind over the image's FIFO" "0 inside" "$STATUS $OUT"
rm -f "$BUNDLE/rootfs/etc/fifo"
runsh 'hostname' "c['hostname'] = 'boxy'"
check "hostname" boxy "$OUT"
runsh 'ulimit -n' "c['process']['rlimits'] = [{'type': 'RLIMIT_NOFILE', 'soft': 123, 'hard': 456}]"
check "rlimit nofile" 123 "$OUT"
runsh 'true' "c['hooks'] = {'prestart': [{'path': '/bin/sh', 'args': ['sh', '-c', 'cat > ' + scratch + '/hook.json']}], 'poststop': [{'path': '/bin/sh', 'args': ['sh', '-c', 'echo stopped > ' + scratch + '/poststop']}]}"
check_match "a prestart hook gets the state on stdin" '"status":"creating"' "$(cat "$SCRATCH/hook.json" 2>/dev/null)"
check "a poststop hook ran" stopped "$(cat "$SCRATCH/poststop" 2>/dev/null)"
runsh 'true' "c['hooks'] = {'createRuntime': [{'path': '/bin/false'}]}"
check_status "a failing hook fails the run" 1
check "  ... and leaves no state behind" "" "$(ls "$ROOT")"

# What the tier refuses, by name. (Users: test_oci_users.sh.)
runsh 'true' "c['annotations'] = {'dev.cbox.platform': 'nope'}"
check_match "an unknown platform annotation" "dev\.cbox\.platform: unknown platform 'nope'" "$ERR"
runsh 'true' "c['mounts'].append({'destination': '/o', 'type': 'overlay', 'source': 'overlay'})"
check_match "an unsupported mount type" "type 'overlay' is not supported by the sentry tier" "$ERR"
# Binds that hand the sandbox the host: a container engine's socket (here a stand-in, a unix
# socket named docker.sock; also through its directory) and /dev/kvm. Refused unless the
# runtime runs with --allow-dangerous-mounts (the admin's choice, never the config's).
mkdir -p "$SCRATCH/engine"
python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' \
	"$SCRATCH/engine/docker.sock"
for src in "$SCRATCH/engine/docker.sock" "$SCRATCH/engine" /dev/kvm; do
	[ -e "$src" ] || continue
	runsh 'true' "c['mounts'].append({'destination': '/x', 'type': 'bind', 'source': '$src', 'options': ['rbind']})"
	check_status "a bind of $src: refused" 1
	check_match "  ... saying why" "hands it the host.*--allow-dangerous-mounts" "$ERR"
done
edit "c['process']['args'] = ['sh', '-c', 'test -S /x/docker.sock && echo visible']
c['mounts'].append({'destination': '/x', 'type': 'bind', 'source': scratch + '/engine', 'options': ['rbind']})"
timeout -k 5 30 "$CBOX" --root "$ROOT" --allow-dangerous-mounts run --bundle "$BUNDLE" dangerous \
	>"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null
check "  ... and allowed with cbox --allow-dangerous-mounts" visible "$(cat "$SCRATCH/out")"

# The network: a new namespace holds loopback only; one given by path is joined.
runsh 'ip -o addr show | cut -d" " -f2 | sort -u | tr "\n" " "'
check "a new network namespace: loopback only" "lo " "$OUT"
NETNS="cboxtest$$"
if ip netns add "$NETNS" 2>/dev/null; then
	ip netns exec "$NETNS" ip addr add 10.99.7.1/24 dev lo
	ip netns exec "$NETNS" ip link set lo up
	runsh 'ip -o -4 addr show dev lo | grep -o "10\.99\.7\.1/24"' "netns('/run/netns/$NETNS')"
	check "a network namespace given by path is joined" "10.99.7.1/24" "$OUT"
	ip netns del "$NETNS"
else
	skip_check "netns by path" "ip netns add failed"
fi

# The lifecycle, step by step; the platform chosen by annotation shows on the host: the ptrace
# platform gives the guest the install socket at fd 1022, the seccomp platform does not.
guest_pid() {
	descendants "$1" | awk '$2 == "sleep" { print $1; exit }'
}
for platform in ptrace seccomp; do
	CFG="sentry $platform"
	edit "c['process']['args'] = ['sleep', '30']
c['annotations'] = {'dev.cbox.platform': '$platform', 'dev.cbox.strict': 'true'}"
	oci create --bundle "$BUNDLE" --pid-file "$SCRATCH/pid" life
	check_status "create" 0
	oci state life
	check_match "state: created" '"status": ?"created"' "$OUT"
	pid=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
	check "the pid file holds the container's pid" "$(cat "$SCRATCH/pid")" "$pid"
	oci start life
	check_status "start" 0
	oci state life
	check_match "state: running" '"status": ?"running"' "$OUT"
	g=""
	for _ in $(seq 50); do
		g=$(guest_pid "$pid") && [ -n "$g" ] && break
		sleep 0.1
	done
	if [ "$platform" = ptrace ]; then
		check_match "the ptrace platform (install socket)" '^socket:' "$(readlink "/proc/$g/fd/1022")"
	else
		check "the seccomp platform (no install socket)" "" "$(readlink "/proc/$g/fd/1022")"
	fi
	# exec on this platform, strict: the new task is served like the first.
	oci exec life sh -c 'tr "\0" " " </proc/1/cmdline; exit 5'
	check_status "exec (strict): the task's status" 5
	check "  ... in the container's pid namespace" "sleep 30 " "$OUT"
	oci kill life KILL
	check_status "kill" 0
	for _ in $(seq 50); do
		oci state life
		printf '%s' "$OUT" | grep -q stopped && break
		sleep 0.1
	done
	check_match "state: stopped" '"status": ?"stopped"' "$OUT"
	check "nothing of the sandbox is left" "" "$(descendants "$pid")"
	oci delete life
	check_status "delete" 0
	check "delete removes the state" "" "$(ls "$ROOT")"
done
CFG="sentry"

rm -f "$SCRATCH/pid"
# A signal to the container's pid reaches the guest's init (a shell with a trap).
edit "c['process']['args'] = ['sh', '-c', 'trap \"echo got TERM; exit 3\" TERM; echo ready; while :; do sleep 0.1; done']"
timeout -k 5 30 "$CBOX" --root "$ROOT" run --bundle "$BUNDLE" --pid-file "$SCRATCH/pid" sig \
	>"$SCRATCH/sig.out" 2>&1 </dev/null &
RUN=$!
for _ in $(seq 50); do
	grep -q ready "$SCRATCH/sig.out" 2>/dev/null && break
	sleep 0.1
done
kill -TERM "$(cat "$SCRATCH/pid")"
wait "$RUN"
STATUS=$?
check "SIGTERM to the container's pid is forwarded to the guest" "ready
got TERM" "$(cat "$SCRATCH/sig.out")"
check_status "  ... and its exit status is the run's" 3
rm -f "$SCRATCH/pid"
edit "c['process']['args'] = ['sleep', '30']"
timeout -k 5 30 "$CBOX" --root "$ROOT" run --bundle "$BUNDLE" --pid-file "$SCRATCH/pid" killed \
	>/dev/null 2>&1 </dev/null &
RUN=$!
g=""
for _ in $(seq 50); do
	[ -s "$SCRATCH/pid" ] && g=$(guest_pid "$(cat "$SCRATCH/pid")") && [ -n "$g" ] && break
	sleep 0.1
done
kill -KILL "$g"
wait "$RUN"
STATUS=$?
check_status "a guest killed by SIGKILL: the run's status is 137" 137
oci run --detach --bundle "$BUNDLE" forced
oci delete --force forced
check_status "delete --force of a running container" 0
check "  ... removes its state" "" "$(ls "$ROOT")"
# ps, pause, resume and update on a running sandbox; exec is refused (issue 4). The guest counts
# in /data/c, a host directory.
edit "c['process']['args'] = ['sh', '-c', 'sleep 1000 & i=0; while :; do i=\$((i+1)); echo \$i >/data/c; sleep 0.02; done']
c['process']['noNewPrivileges'] = False
c['mounts'].append({'destination': '/data', 'type': 'bind', 'source': scratch + '/data', 'options': ['rbind', 'rw']})"
rm -f "$SCRATCH/data/c"
oci run --detach --bundle "$BUNDLE" box
check_status "run --detach" 0
oci state box
mon=$(json_field pid)
for _ in $(seq 50); do
	[ -s "$SCRATCH/data/c" ] && break
	sleep 0.1
done
guest_sleep=""
for p in $(descendants "$mon" | cut -d' ' -f1); do
	[ "$(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline")" = "sleep 1000 " ] && guest_sleep=$p
done
oci ps --format json box
ps_pids=" $(printf '%s' "$OUT" | tr -d '[]' | tr ',' ' ') "
check_match "ps --format json lists the guest's sleep" " $guest_sleep " "$ps_pids"
machinery=""
for p in $mon $(descendants "$mon" | awk '$2 ~ /^cbox/ { print $1 }'); do
	case "$ps_pids" in *" $p "*) machinery="$machinery $p($(proc_comm "$p"))" ;; esac
done
check "  ... and not the monitor, the sentry or the gofer" "" "$machinery"
oci ps box -e -o pid,comm
check_match "ps (table): the guest's sleep" "^ *$guest_sleep +sleep$" "$OUT"
check_nomatch "ps (table): no cbox process" "cbox" "$OUT"

# pause, resume and update need the container's cgroup (none on a host without cgroups).
if [ -f "$ROOT/box/cgroup" ]; then
	check "the guest's loop runs" 0 "$(counter_moves "$SCRATCH/data/c"; echo $?)"
	oci pause box
	check_status "pause (the whole sandbox's cgroup)" 0
	oci state box
	check_match "state: paused" '"status": ?"paused"' "$OUT"
	check "paused: the guest does not run" 1 "$(counter_moves "$SCRATCH/data/c"; echo $?)"
	oci pause box
	check_match "pause of a paused container: already paused" "container box is already paused" "$ERR"
	oci resume box
	check_status "resume" 0
	oci state box
	check_match "state: running again" '"status": ?"running"' "$OUT"
	check "resumed: the guest runs again" 0 "$(counter_moves "$SCRATCH/data/c"; echo $?)"
	# A guest that traps all the time: some call is nearly always in the sentry's hands, and
	# its task waits for the answer where the freezer cannot stop it (the filter's
	# WAIT_KILLABLE_RECV). Pause must still freeze it, every time.
	edit "c['process']['args'] = ['sh', '-c', 'while :; do test -e /nothing; done']"
	oci run --detach --bundle "$BUNDLE" busy
	fails=0
	for i in $(seq 15); do
		oci pause busy
		[ "$STATUS" = 0 ] || { fails=$((fails + 1)); echo "pause $i: $ERR"; }
		oci resume busy
		[ "$STATUS" = 0 ] || { fails=$((fails + 1)); echo "resume $i: $ERR"; }
	done
	check "15 pauses and resumes of a guest that traps all the time" 0 "$fails"
	oci state busy
	check_match "  ... it runs afterwards" '"status": ?"running"' "$OUT"
	oci delete --force busy
	# A freeze that cannot complete is undone. A FIFO's open waits in the sentry for the
	# other end (its task cannot be frozen meanwhile: a known limit), so the pause fails, and
	# the container must be left running, not half frozen.
	edit "c['process']['args'] = ['sh', '-c', 'mkfifo /tmp/f; cat /tmp/f']"
	oci run --detach --bundle "$BUNDLE" fifo
	sleep 0.5
	oci pause fifo
	check_status "a pause that cannot complete fails" 1
	check_match "  ... saying why" "did not reach|FROZEN" "$ERR"
	oci state fifo
	check_match "  ... and is undone: the container is running" '"status": ?"running"' "$OUT"
	oci delete --force fifo

	# A cgroup left frozen by a runtime killed in the middle of a pause bears the container's
	# name: a new container of that name must not stop on joining it.
	edit "c['process']['args'] = ['sleep', '30']"
	oci run --detach --bundle "$BUNDLE" relic
	fz1=$(cg_dir relic 3) fz2=$(cg_dir relic 4)
	oci delete --force relic
	[ -n "$fz1" ] && mkdir -p "$fz1" && echo FROZEN >"$fz1/freezer.state"
	[ -n "$fz2" ] && mkdir -p "$fz2" && echo 1 >"$fz2/cgroup.freeze"
	edit "c['process']['args'] = ['echo', 'alive']"
	oci run --bundle "$BUNDLE" relic
	check "a leftover frozen cgroup of the same name: the container runs" alive "$OUT"

	echo '{"memory": {"limit": 134217728}, "pids": {"limit": 64}}' >"$SCRATCH/res.json"
	oci_in "$SCRATCH/res.json" update --resources - box
	check_status "update --resources -" 0
	check "  ... memory limit" 134217728 "$(cg_memory_limit box)"
	check "  ... pids limit" 64 "$(cg_pids_max box)"
	# The guest's /sys/fs/cgroup reads the container's cgroup live (sentry/fs_sys.c).
	oci exec box sh -c 'cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max'
	check "  ... and the guest's /sys/fs/cgroup shows the new limits" "134217728
64" "$OUT"
	echo '{"pids": {"limit": true}}' >"$SCRATCH/res.json"
	oci_in "$SCRATCH/res.json" update --resources - box
	check_match "update with a malformed LinuxResources names the JSON path" 'resources \(stdin\): pids\.limit: expected' "$ERR"
else
	skip_check "pause, resume, update" "the host has no usable cgroup file system"
fi

# exec: a new guest task of the running sentry, in the guest's pid namespace and tree. (-e, not
# -s: the guest's loop truncates /data/c before each write, so it is empty now and then.)
oci exec box sh -c 'tr "\0" " " </proc/1/cmdline; echo; test -e /data/c && echo sees-data; echo $$'
check_match "exec runs in the container's pid namespace (pid 1 is its init)" '^sh -c sleep 1000' "$OUT"
check_match "  ... and sees its files" '^sees-data$' "$OUT"
check_nomatch "  ... as another process than init" '^1$' "$OUT"
oci exec box sh -c 'exit 7'
check_status "exec: the process's exit status" 7
oci exec box sh -c 'kill -9 $$'
check_status "exec: killed by SIGKILL: 137" 137
oci exec box nosuchprogram
check_status "exec of a missing program: 127" 127
check_match "  ... says so" 'nosuchprogram: No such file or directory' "$ERR"
oci exec --env FOO=bar --cwd /data box sh -c 'echo "$FOO $(pwd)"'
check "exec --env and --cwd" "bar /data" "$OUT"
# An exec'd process's no_new_privs is its own: the container's (false here), or --no-new-privs.
oci exec box grep NoNewPrivs /proc/self/status
check "exec: the container's noNewPrivileges" "NoNewPrivs:	0" "$OUT"
oci exec --no-new-privs box grep NoNewPrivs /proc/self/status
check "exec --no-new-privs" "NoNewPrivs:	1" "$OUT"
# The exec'd task is a guest like the others: traced by the sentry, under the guest filter,
# without capabilities, and what the filter refuses stays refused.
oci exec --detach --pid-file "$SCRATCH/epid" box sleep 77
check_status "exec --detach" 0
proxy=$(cat "$SCRATCH/epid" 2>/dev/null)
task=""
for _ in $(seq 50); do
	for p in $(descendants "$mon" | cut -d' ' -f1); do
		[ "$(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline")" = "sleep 77 " ] && task=$p
	done
	[ -n "$task" ] && break
	sleep 0.1
done
sentry_host=$(cut -d' ' -f1 "$ROOT/box/sentry.pid")
# status_field PID KEY: the value of KEY in /proc/PID/status.
status_field() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status" 2>/dev/null; }
check "the exec'd task is traced by the sentry" "$sentry_host" "$(status_field "$task" TracerPid)"
check "  ... under the guest filter" 2 "$(status_field "$task" Seccomp)"
check "  ... with no capabilities" 0000000000000000 "$(status_field "$task" CapEff)"
check "  ... and no new privileges" 1 "$(status_field "$task" NoNewPrivs)"
# The spawner that forked it keeps capabilities, so it runs under the refuse filter: its
# status shows a filter (and the task above has it under its own: two).
spawner=""
for p in $(descendants "$mon" | cut -d' ' -f1); do
	[ "$(cat "/proc/$p/comm" 2>/dev/null)" = cbox-spawner ] && spawner=$p
done
check "the spawner runs under a seccomp filter" "2 1" \
	"$(status_field "$spawner" Seccomp) $(status_field "$spawner" Seccomp_filters)"
check "  ... which the exec'd task has under the guest filter" 2 \
	"$(status_field "$task" Seccomp_filters)"
oci exec box sh -c 'mount -t tmpfs t /tmp 2>&1; echo "rc=$?"'
check_match "exec: mount (refused by the table) is still EPERM" 'rc=[1-9]' "$OUT"
kill -TERM "$proxy" 2>/dev/null
for _ in $(seq 50); do
	[ -d "/proc/$task" ] && [ "$(status_field "$task" State | cut -c1)" != Z ] || break
	sleep 0.1
done
check "a signal to the exec's pid reaches the guest task" "" \
	"$([ -d "/proc/$task" ] && [ "$(status_field "$task" State | cut -c1)" != Z ] && echo alive)"
unshare -U true 2>/dev/null && native_userns=yes || native_userns=no
oci exec box unshare -U true
check_status "exec: a user namespace (the host allows one: $native_userns) is refused" 1
oci delete --force box
check_status "delete --force" 0
oci pause box
check_match "pause of a container that does not exist" "container box does not exist" "$ERR"
console_create_checks sec
oci tiers
check_match "cbox tiers lists the sentry tier" '^sentry +available' "$OUT"
finish
