#!/bin/bash
# cbox under a real Docker engine and a real containerd (issue 4): a private dockerd whose
# daemon.json `cbox install` writes, `docker run --runtime=...` (output, exit status, run -d +
# stop + rm, top, pause/unpause, update, exec), then `ctr run --runc-binary cbox` against a private containerd. Both daemons
# get their own data, exec and state directories and sockets under the scratch dir, and are
# stopped on every way out. Debian packages: docker.io (dockerd, docker, containerd,
# containerd-shim-runc-v2), busybox-static, debootstrap (a Debian 12 image with python3, built once
# and cached outside the clone by helpers/debian_rootfs.sh).
. "$(dirname "$0")/lib.sh"

need_root
[ -n "${CBOX:-}" ] && [ -x "$CBOX" ] || skip "CBOX (cbox) not built or not set"
[ -x "$BB" ] || skip "$BB missing: install the Debian package busybox-static"
for b in dockerd containerd ctr containerd-shim-runc-v2; do
	command -v "$b" >/dev/null || skip "$b missing: install the Debian package docker.io"
done
# The client that comes with Debian's engine first: another one (e.g. in /usr/local/bin) may
# speak a newer API than this dockerd.
DOCKER_BIN=/usr/bin/docker
[ -x "$DOCKER_BIN" ] || DOCKER_BIN=$(command -v docker) || skip "docker missing: install docker.io"
CBOX=$(realpath "$CBOX")

DDIR="$SCRATCH/docker"
CDIR="$SCRATCH/ctd"
DSOCK="$DDIR/docker.sock"
CSOCK="$CDIR/ctd.sock"
DOCKERD_PID=""
CONTAINERD_PID=""

# stop_pid PID: TERM, up to 10 s, then KILL.
stop_pid() {
	[ -n "$1" ] && kill -0 "$1" 2>/dev/null || return 0
	kill -TERM "$1" 2>/dev/null
	for _ in $(seq 100); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

cleanup() {
	stop_pid "$DOCKERD_PID"
	stop_pid "$CONTAINERD_PID"
	# Shims and containers outlive their daemon by design: end the ones started for this
	# test, found by the scratch dir in their command line (never by name).
	local p
	for p in /proc/[0-9]*; do
		if { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -qF "$SCRATCH"; then
			kill -KILL "${p#/proc/}" 2>/dev/null
		fi
	done
	# What the daemons left mounted under the scratch dir (overlays, netns, shm), deepest first.
	awk -v d="$SCRATCH" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null; done
	rm -rf --one-file-system "$SCRATCH"
}
trap cleanup EXIT

# dk ARGS...: the docker client against the private engine; sets OUT, ERR, STATUS.
dk() {
	timeout -k 5 60 "$DOCKER_BIN" -H "unix://$DSOCK" "$@" >"$SCRATCH/out" 2>"$SCRATCH/err" \
		</dev/null
	STATUS=$?
	OUT=$(cat "$SCRATCH/out")
	ERR=$(cat "$SCRATCH/err")
	return "$STATUS"
}

# ct ARGS...: ctr against the private containerd; sets OUT, ERR, STATUS.
ct() {
	timeout -k 5 60 ctr --address "$CSOCK" "$@" >"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null
	STATUS=$?
	OUT=$(cat "$SCRATCH/out")
	ERR=$(cat "$SCRATCH/err")
	return "$STATUS"
}

# The busybox image: /usr/bin/busybox and a relative symlink per applet.
ROOTFS="$SCRATCH/rootfs"
mkdir -p "$ROOTFS/bin" "$ROOTFS/etc" "$ROOTFS/proc" "$ROOTFS/sys" "$ROOTFS/dev" "$ROOTFS/tmp"
cp "$BB" "$ROOTFS/bin/busybox"
for a in $("$BB" --list); do
	[ "$a" = busybox ] || ln -s busybox "$ROOTFS/bin/$a"
done
tar -C "$ROOTFS" -cf "$SCRATCH/busybox.tar" .

# One private containerd serves both dockerd (namespace moby) and ctr (namespace default): a
# dockerd-managed one would write /opt/containerd on the host.
CFG=containerd
mkdir -p "$CDIR/root" "$CDIR/state" "$CDIR/opt"
cat >"$CDIR/config.toml" <<EOF
version = 2
root = "$CDIR/root"
state = "$CDIR/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$CSOCK"
[ttrpc]
  address = "$CSOCK.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$CDIR/opt"
EOF
setsid containerd --config "$CDIR/config.toml" >"$CDIR/containerd.log" 2>&1 </dev/null &
CONTAINERD_PID=$!
for _ in $(seq 100); do
	ct version && break
	kill -0 "$CONTAINERD_PID" 2>/dev/null || break
	sleep 0.1
done
check_status "containerd starts" 0

# --- Docker -------------------------------------------------------------------------------
CFG=docker
mkdir -p "$DDIR/data" "$DDIR/exec"
"$CBOX" install --daemon-json "$DDIR/daemon.json" >"$SCRATCH/out" 2>&1
check_match "cbox install writes the runtime and shows the diff" "^\+ +\"path\": \"$CBOX\"" \
	"$(cat "$SCRATCH/out")"
# Docker 20.10 has no --annotation: the ns tier gets a runtime of its own.
"$CBOX" --tier ns install --runtime-name cbox-ns --daemon-json "$DDIR/daemon.json" >/dev/null
"$CBOX" install --daemon-json "$DDIR/daemon.json" >"$SCRATCH/out" 2>&1
check_match "cbox install a second time changes nothing" "nothing to do" "$(cat "$SCRATCH/out")"

setsid dockerd --config-file "$DDIR/daemon.json" --storage-driver=overlay2 --iptables=false \
	--bridge=none --containerd="$CSOCK" --data-root="$DDIR/data" --exec-root="$DDIR/exec" -H "unix://$DSOCK" \
	--pidfile="$DDIR/docker.pid" >"$DDIR/dockerd.log" 2>&1 </dev/null &
DOCKERD_PID=$!
for _ in $(seq 150); do
	dk version && break
	kill -0 "$DOCKERD_PID" 2>/dev/null || break
	sleep 0.2
done
if [ "$STATUS" != 0 ]; then
	echo "dockerd did not come up; its log:"
	tail -n 20 "$DDIR/dockerd.log"
	check_status "dockerd starts" 0
	finish
fi
dk import "$SCRATCH/busybox.tar" local/busybox
check_status "docker import of the busybox rootfs" 0
# A Debian 12 root with python3 (debootstrap, cached outside the clone: helpers/debian_rootfs.sh).
if PYTAR=$("$(dirname "$0")/helpers/debian_rootfs.sh" 2>"$SCRATCH/rootfs.err"); then
	dk import "$PYTAR" local/debian-python
	check_status "docker import of the debian-python rootfs" 0
else
	skip_check "the debian-python image" "$(tail -n 3 "$SCRATCH/rootfs.err")"
	PYTAR=""
fi

# cgroup_file_of PID CONTROLLER V1FILE V2FILE: a file of PID's cgroup (the v1 controller's
# hierarchy, else the unified one).
cgroup_file_of() {
	local path
	path=$(awk -F: -v c="$2" '$2 == c { print $3 }' "/proc/$1/cgroup")
	if [ -n "$path" ]; then
		cat "/sys/fs/cgroup/$2$path/$3"
	else
		path=$(awk -F: '$1 == "0" { print $3 }' "/proc/$1/cgroup")
		cat "/sys/fs/cgroup$path/$4"
	fi
}
memory_limit_of() { cgroup_file_of "$1" memory memory.limit_in_bytes memory.max; }
pids_max_of() { cgroup_file_of "$1" pids pids.max pids.max; }

# top_pause_update_exec RUNTIME: docker top, pause/unpause, update --memory and exec (issue 4)
# on a container whose loop counts in /tmp/c.
top_pause_update_exec() {
	local rt=$1 id pid a b
	dk run -d --runtime="$rt" local/busybox \
		sh -c 'sleep 1000 & i=0; while :; do i=$((i+1)); echo $i >/tmp/c; sleep 0.05; done'
	id=$OUT
	dk inspect -f '{{.State.Pid}}' "$id"
	pid=$OUT
	sleep 0.5
	dk top "$id"
	check_status "docker top" 0
	check_match "docker top: the container's sleep" "sleep 1000" "$OUT"
	check_nomatch "docker top: none of cbox's own processes" "cbox" "$OUT"
	dk pause "$id"
	check_status "docker pause" 0
	dk inspect -f '{{.State.Status}}' "$id"
	check "docker inspect: paused" paused "$OUT"
	check_match "the container's cgroup is frozen" "^(FROZEN|frozen 1)$" \
		"$(cat "/sys/fs/cgroup/freezer$(awk -F: '$2 == "freezer" { print $3 }' "/proc/$pid/cgroup")/freezer.state" \
			"/sys/fs/cgroup/unified$(awk -F: '$1 == "0" { print $3 }' "/proc/$pid/cgroup")/cgroup.events" 2>/dev/null)"
	dk unpause "$id"
	check_status "docker unpause" 0
	dk inspect -f '{{.State.Status}}' "$id"
	check "docker inspect: running again" running "$OUT"
	dk update --memory 64m --memory-swap -1 "$id"
	check_status "docker update --memory 64m" 0
	check "  ... the container's cgroup has it" 67108864 "$(memory_limit_of "$pid")"
	# (the sentry tier shows cgroup v2, sentry/fs_sys.c; the ns tier the host's v1 or v2)
	dk exec "$id" sh -c 'cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes'
	check "  ... and the container sees it in /sys/fs/cgroup, as its JVM would" 67108864 "$OUT"
	# exec: for the sentry tier a new guest task of the running sentry (sentry/exec_ctl.c).
	dk exec "$id" sh -c 'cat /proc/1/cmdline | tr "\\0" " "; hostname'
	check "docker exec: in the container's pid and uts namespaces" "sh -c sleep 1000 & i=0; while :; do i=\$((i+1)); echo \$i >/tmp/c; sleep 0.05; done ${id:0:12}" "$OUT"
	dk exec "$id" sh -c 'a=$(cat /tmp/c); sleep 0.3; [ "$(cat /tmp/c)" != "$a" ] && echo counting'
	check "docker exec: sees the container's files" counting "$OUT"
	dk exec "$id" sh -c 'exit 3'
	check_status "docker exec: the exit status comes back" 3
	dk exec -d "$id" sleep 77
	check_status "docker exec -d" 0
	sleep 0.3
	dk top "$id"
	check_match "  ... docker top shows it" "sleep 77" "$OUT"
	dk exec -u 1000:1000 "$id" sh -c 'id -u; id -g; echo x >>/tmp/c 2>/dev/null || echo no-write'
	check "docker exec -u 1000:1000: that user, bound by the mode bits" "1000
1000
no-write" "$OUT"
	if [ "$rt" = cbox-ns ]; then
		dk exec -t "$id" tty
		check_match "docker exec -t: a pty of the container's" "^/dev/pts/[0-9]+" "$OUT"
		dk exec "$id" grep CapEff /proc/self/status
		check_match "docker exec: docker's default capabilities, no more" "CapEff:[[:space:]]+00000000a80425fb" "$OUT"
	else
		dk exec -t "$id" sh -c 'test -t 0 && test -t 1 && echo terminal'
		check_match "docker exec -t: stdin and stdout are a terminal" "^terminal" "$OUT"
	fi
	dk rm -f "$id"
	check_status "docker rm -f" 0
}

# python_task RUNTIME: issue 4's example, a python program with a working folder under every
# limit Docker passes: no network, 512 MiB, one CPU, 100 pids, a read-only root.
python_task() {
	local rt=$1 work="$SCRATCH/work-$1"
	[ -n "$PYTAR" ] || return 0
	mkdir -p "$work"
	printf '3\n4\n5\n' >"$work/in.txt"
	cat >"$work/task.py" <<'PY'
import socket
total = sum(int(l) for l in open("/work/in.txt"))
open("/work/out.txt", "w").write(f"{total}\n")
try:
    open("/etc/x", "w")
    ro = "root writable"
except OSError as e:
    ro = "root read-only" if e.errno == 30 else f"root: {e}"
try:
    socket.create_connection(("10.1.2.3", 80), timeout=2)
    net = "network reachable"
except OSError:
    net = "no network"
print(total, ro, net, sep="; ")
PY
	dk run --rm --runtime="$rt" --network none --memory 512m --cpus 1 --pids-limit 100 \
		--read-only -v "$work:/work" local/debian-python python3 /work/task.py
	check_status "docker run python3 with limits, -v and --read-only" 0
	check_match "  ... computes from the working folder, root read-only, no network" \
		"^12; root read-only; no network" "$OUT"
	check "  ... writes its result to the host" 12 "$(cat "$work/out.txt" 2>/dev/null)"
	# The same limits, seen from the host on a running container.
	dk run -d --runtime="$rt" --network none --memory 512m --cpus 1 --pids-limit 100 \
		local/debian-python python3 -c 'import time; time.sleep(60)'
	local id=$OUT pid
	dk inspect -f '{{.State.Pid}}' "$id"
	pid=$OUT
	check "  ... its cgroup: memory 512 MiB" 536870912 "$(memory_limit_of "$pid")"
	check "  ... and 100 pids" 100 "$(pids_max_of "$pid")"
	dk rm -f "$id"
	# The limits hold: a memory hog dies with 137, a fork bomb hits the pids limit and the
	# program lives on (with the python image; without it the image's check already failed).
	[ -n "$PYTAR" ] || return 0
	dk run --rm --runtime="$rt" --network none --memory 64m --memory-swap 64m \
		local/debian-python python3 -c 'b = bytearray(300 << 20); print("not killed")'
	check_status "docker run --memory 64m: a 300 MiB hog dies with 137" 137
	dk run --rm --runtime="$rt" --network none --pids-limit 24 local/debian-python python3 -c '
import os, time
n = 0
try:
    while n < 60:
        if os.fork() == 0:
            time.sleep(3)
            os._exit(0)
        n += 1
except BlockingIOError:
    pass
print("survived, forks:", n)'
	check_match "docker run --pids-limit 24: a fork bomb gets EAGAIN and the program survives" \
		"^survived, forks: ([0-9]|1[0-9]|2[0-3])$" "$OUT"
}

# docker_checks RUNTIME: the checks under one runtime of daemon.json (CFG names it).
docker_checks() {
	local rt=$1 id
	CFG="docker --runtime=$rt"
	dk run --rm --runtime="$rt" local/busybox echo hi
	check "docker run echo hi" hi "$OUT"
	dk run --rm --runtime="$rt" local/busybox sh -c 'exit 3'
	check_status "docker run: the exit status comes back" 3
	dk run --rm --runtime="$rt" local/busybox cat /etc/hostname
	check_match "docker run: /etc/hostname is Docker's" "^[0-9a-f]{12}$" "$OUT"
	# -u: that user and group, with --group-add; the image's /bin is root's and not writable.
	dk run --rm -u 1000:1000 --group-add 2000 --runtime="$rt" local/busybox \
		sh -c 'id -u; id -G; touch /bin/x 2>/dev/null || echo no-write'
	check "docker run -u 1000:1000 --group-add 2000" "1000
1000 2000
no-write" "$OUT"
	# A server on port 80 as a user: Docker sets net.ipv4.ip_unprivileged_port_start=0.
	dk run --rm -u 1000 --runtime="$rt" local/busybox \
		sh -c 'nc -l -p 80 -e echo served & sleep 0.3; nc 127.0.0.1 80 </dev/null'
	check "docker run -u 1000: a server on port 80" served "$OUT"
	python_task "$rt"
	# -t: a console (process.terminal), the master over containerd's console socket.
	dk run --rm -t --runtime="$rt" local/busybox sh -c 'test -t 0 && test -t 1 && echo tty; exit 4'
	check_match "docker run -t: the container's stdio is a terminal" "^tty" "$OUT"
	check_status "  ... and its exit status comes back" 4

	# run -d, then stop: a pid 1 without a TERM handler needs stop's SIGKILL (137); one
	# with a handler exits on TERM with its own status.
	dk run -d --runtime="$rt" local/busybox sleep 100
	id=$OUT
	check_status "docker run -d" 0
	dk inspect -f '{{.State.Running}}' "$id"
	check "docker inspect: running" true "$OUT"
	dk stop -t 1 "$id"
	check_status "docker stop (TERM ignored, then KILL)" 0
	dk inspect -f '{{.State.Running}} {{.State.ExitCode}}' "$id"
	check "  ... exited by SIGKILL" "false 137" "$OUT"
	dk rm "$id"
	check_status "docker rm" 0
	dk run -d --runtime="$rt" local/busybox \
		sh -c 'trap "exit 5" TERM; while :; do sleep 0.1; done'
	id=$OUT
	sleep 0.5
	dk stop -t 20 "$id"
	dk inspect -f '{{.State.ExitCode}}' "$id"
	check "docker stop: SIGTERM reaches a handler" 5 "$OUT"
	dk run -d --runtime="$rt" local/busybox \
		sh -c 'trap "exit 6" USR1; while :; do sleep 0.1; done'
	local kid=$OUT
	sleep 0.5
	dk kill --signal USR1 "$kid"
	check_status "docker kill --signal USR1" 0
	dk wait "$kid"
	check "  ... reaches the container's handler" 6 "$OUT"
	dk rm -f "$kid"

	top_pause_update_exec "$rt"

	dk run -d --runtime="$rt" local/busybox sleep 100
	id=$OUT
	dk rm -f "$id"
	check_status "docker rm -f of a running container" 0
	dk ps -aq
	# The ids are split on purpose: one argument each.
	# shellcheck disable=SC2086
	[ -z "$OUT" ] || dk rm -f $OUT
	dk ps -aq
	check "no container left" "" "$OUT"
}

docker_checks cbox-ns
docker_checks cbox # the default tier (sentry)
CFG=docker

dk save local/busybox -o "$SCRATCH/busybox-image.tar"
check_status "docker save (for containerd)" 0
stop_pid "$DOCKERD_PID"
DOCKERD_PID=""

# --- containerd ---------------------------------------------------------------------------
CFG=containerd
IMG=docker.io/local/busybox:latest
ct images import "$SCRATCH/busybox-image.tar"
check_status "ctr images import" 0
ct run --rm --annotation dev.cbox.tier=ns --runc-binary "$CBOX" "$IMG" t1 echo hi
check "ctr run --runc-binary cbox echo hi" hi "$OUT"
ct run --rm --annotation dev.cbox.tier=ns --runc-binary "$CBOX" "$IMG" t2 sh -c 'exit 4'
check_status "ctr run: the exit status comes back" 4
ct run -d --annotation dev.cbox.tier=ns --runc-binary "$CBOX" "$IMG" t3 sleep 100
check_status "ctr run -d" 0
ct task ls
check_match "ctr task ls: running" "^t3 +[0-9]+ +RUNNING" "$OUT"
ct task kill -s KILL t3
for _ in $(seq 50); do
	ct task ls
	printf '%s' "$OUT" | grep -Eq "^t3 .*STOPPED" && break
	sleep 0.1
done
check_match "ctr task kill: stopped" "^t3 +[0-9]+ +STOPPED" "$OUT"
ct task rm t3
ct container rm t3
check_status "ctr container rm" 0
ct run --rm --runc-binary "$CBOX" "$IMG" t4 echo hi
check "ctr run (sentry tier) echo hi" hi "$OUT"
ct container ls -q
check "no container left" "" "$OUT"
finish
