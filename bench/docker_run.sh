#!/bin/bash
# bench/docker_run.sh: `docker run --rm` side by side under runc (Docker's default), cbox's sentry
# and ns tiers, and runsc and crun when installed (issue 4's speed targets: sentry <= 1.2x runc, ns <= 1.05x),
# plus the memory of an idle sentry sandbox (monitor + sentry + gofer RSS; target < 5 MiB).
#
#   bench/docker_run.sh [--rounds N] [--build DIR]      (root; Debian's docker.io)
#
# A private containerd and dockerd run under a temporary directory and are stopped at the end.
# Images: local/busybox (busybox-static) and, when tests/integration/helpers/debian_rootfs.sh
# has cached it, local/debian-python. Every round runs each runtime once, interleaved, so a
# noisy moment hits all of them; medians and ratios to runc are printed, never asserted.
set -euo pipefail
ROUNDS=10
BUILD=${BUILD:-$(cd "$(dirname "$0")/.." && pwd)/build-release}
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift 2 ;;
	--build) BUILD=$2; shift 2 ;;
	*) echo "usage: bench/docker_run.sh [--rounds N] [--build DIR]" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "docker_run.sh: needs root (it starts dockerd)" >&2; exit 2; }
CBOX=$(realpath "$BUILD/cbox")
[ -x "$CBOX" ] || { echo "docker_run.sh: $CBOX missing: make release" >&2; exit 2; }
for b in dockerd containerd /usr/bin/docker busybox; do
	command -v "$b" >/dev/null || { echo "docker_run.sh: $b missing (docker.io, busybox-static)" >&2; exit 2; }
done

T=$(mktemp -d /tmp/cbox-bench-docker.XXXXXX)
CPID="" DPID=""
cleanup() {
	for p in $DPID $CPID; do
		kill "$p" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null || true
	done
	rm -rf "$T"
}
trap cleanup EXIT
dk() { /usr/bin/docker -H "unix://$T/docker.sock" "$@"; }

mkdir -p "$T/ctd" "$T/docker/data" "$T/docker/exec"
cat >"$T/ctd/config.toml" <<EOF
version = 2
root = "$T/ctd/root"
state = "$T/ctd/state"
[grpc]
  address = "$T/ctd/ctd.sock"
[ttrpc]
  address = "$T/ctd/ctd.sock.ttrpc"
EOF
setsid containerd --config "$T/ctd/config.toml" >"$T/containerd.log" 2>&1 </dev/null &
CPID=$!
"$CBOX" install --daemon-json "$T/daemon.json" >/dev/null
"$CBOX" --tier ns install --runtime-name cbox-ns --daemon-json "$T/daemon.json" >/dev/null
RUNTIMES="runc cbox cbox-ns"
if command -v runsc >/dev/null; then
	python3 - "$T/daemon.json" "$(command -v runsc)" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d.setdefault("runtimes", {})["runsc"] = {"path": sys.argv[2], "runtimeArgs": ["--platform=ptrace", "--network=none"]}
json.dump(d, open(sys.argv[1], "w"), indent=2)
EOF
	RUNTIMES="$RUNTIMES runsc"
fi
if command -v crun >/dev/null; then
	python3 - "$T/daemon.json" "$(command -v crun)" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d.setdefault("runtimes", {})["crun"] = {"path": sys.argv[2]}
json.dump(d, open(sys.argv[1], "w"), indent=2)
EOF
	RUNTIMES="$RUNTIMES crun"
fi
for _ in $(seq 100); do [ -S "$T/ctd/ctd.sock" ] && break; sleep 0.1; done
setsid dockerd --config-file "$T/daemon.json" --storage-driver=overlay2 --iptables=false \
	--bridge=none --containerd="$T/ctd/ctd.sock" --data-root="$T/docker/data" \
	--exec-root="$T/docker/exec" -H "unix://$T/docker.sock" --pidfile="$T/docker.pid" \
	>"$T/dockerd.log" 2>&1 </dev/null &
DPID=$!
for _ in $(seq 150); do dk version >/dev/null 2>&1 && break; sleep 0.2; done

mkdir -p "$T/bb/bin"
cp "$(command -v busybox)" "$T/bb/bin/busybox"
for a in sh true sleep; do ln -s busybox "$T/bb/bin/$a"; done
tar -C "$T/bb" -cf "$T/bb.tar" .
dk import "$T/bb.tar" local/busybox >/dev/null
PROGRAMS="true"
PYTAR=${CBOX_TEST_CACHE:-/var/cache/cbox-tests}/debian12-python3.tar
if [ -s "$PYTAR" ]; then
	dk import "$PYTAR" local/debian-python >/dev/null
	PROGRAMS="true python"
fi

# one RUNTIME PROGRAM: wall time of one `docker run --rm`, in ms.
one() {
	local image=local/busybox cmd=(true) t0 t1
	[ "$2" = python ] && image=local/debian-python cmd=(python3 -c pass)
	t0=$EPOCHREALTIME
	dk run --rm --network none --runtime="$1" "$image" "${cmd[@]}" >/dev/null 2>&1 || echo "FAIL $1 $2" >&2
	t1=$EPOCHREALTIME
	echo "$(((${t1/./} - ${t0/./}) / 1000))"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

for prog in $PROGRAMS; do
	for rt in $RUNTIMES; do one "$rt" "$prog" >/dev/null; done # warm up (images, page cache)
	for _ in $(seq "$ROUNDS"); do
		for rt in $RUNTIMES; do one "$rt" "$prog" >>"$T/$rt.$prog"; done
	done
done

echo "docker run --rm, median of $ROUNDS interleaved rounds (ms; ratio to runc)"
printf '%-22s' program
for rt in $RUNTIMES; do printf '%18s' "$rt"; done
echo
for prog in $PROGRAMS; do
	label="true"
	[ "$prog" = python ] && label="python3 -c pass"
	printf '%-22s' "$label"
	base=$(median <"$T/runc.$prog")
	for rt in $RUNTIMES; do
		m=$(median <"$T/$rt.$prog")
		printf '%18s' "$m ($(awk -v a="$m" -v b="$base" 'BEGIN { printf "%.2fx", a / b }'))"
	done
	echo
done

# The idle sandbox's memory: the monitor (the container's pid) and every cbox-* process under it
# (sentry, gofer, the exec spawner); the guest's own sleep is not counted.
id=$(dk run -d --network none --runtime=cbox local/busybox sleep 60)
sleep 1
mon=$(dk inspect -f '{{.State.Pid}}' "$id")
pids=$(ps -e -o pid=,ppid=,comm= | awk -v root="$mon" '
	{ parent[$1] = $2; comm[$1] = $3 }
	END {
		print root
		n = 1; q[1] = root
		for (i = 1; i <= n; i++)
			for (p in parent)
				if (parent[p] == q[i]) { q[++n] = p; if (comm[p] ~ /^cbox-/) print p }
	}')
# RSS counts the pages the processes share (they are forks of one binary) once per process; PSS
# divides them among the sharers, so its sum is what the sandbox really holds.
rss=0 pss=0
for p in $pids; do
	echo "  $(cat "/proc/$p/comm" 2>/dev/null): $(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null) kB RSS, $(awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null) kB PSS"
	kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null || echo 0)
	rss=$((rss + ${kb:-0}))
	kb=$(awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null || echo 0)
	pss=$((pss + ${kb:-0}))
done
echo "idle sentry sandbox ($(echo $pids | wc -w) cbox processes; the guest not counted): $((rss / 1024)).$((rss % 1024 * 10 / 1024)) MiB RSS, $((pss / 1024)).$((pss % 1024 * 10 / 1024)) MiB PSS"
dk rm -f "$id" >/dev/null
