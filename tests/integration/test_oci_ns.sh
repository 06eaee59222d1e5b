#!/bin/bash
# The OCI runtime with the ns tier: `cbox spec` + edits, run/create/start/state/kill/delete,
# hostname, mounts, masked and read-only paths, seccomp, capabilities, rlimits, hooks, and the
# errors a caller sees (malformed config.json, --log-format json, an unknown tier).
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
check "a poststop hook ran" stopped "$(cat "$SCRATCH/poststop" 2>/dev/null)"
runsh 'true' "c['hooks'] = {'createRuntime': [{'path': '/bin/false'}]}"
check_status "a failing hook fails the run" 1
check_match "  ... naming the hook" "hook createRuntime\[0\] \(/bin/false\) failed" "$ERR"
check "  ... and leaves no state behind" "" "$(ls "$ROOT")"

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
oci tiers
check_match "cbox tiers lists the ns tier" '^ns +available' "$OUT"
oci features
check_match "features: ociVersionMax" '"ociVersionMax": ?"1\.2\.0"' "$OUT"
finish
