#!/bin/bash
# cbox under a real Docker engine and a real containerd (issue 4): a private dockerd whose
# daemon.json `cbox install` writes, `docker run --runtime=...` (output, exit status, run -d +
# stop + rm), then `ctr run --runc-binary cbox` against a private containerd. Both daemons
# get their own data, exec and state directories and sockets under the scratch dir, and are
# stopped on every way out. Debian packages: docker.io (dockerd, docker, containerd,
# containerd-shim-runc-v2), busybox-static.
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

	# Not checked: docker exec. cbox has no exec verb yet (it needs setns into the container
	# and the tier's caps and seccomp for the ns tier, a new guest task in the running sentry
	# for the sentry tier); docker answers "unknown verb 'exec'".
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
