#!/bin/bash
# The OCI runtime's clean-up, for both tiers (issue 4): 200 create/start/delete cycles leave no
# process, cgroup, mount or state file behind, and `delete` of a container whose sentry, monitor
# or init was killed with SIGKILL still removes everything.
. "$(dirname "$0")/lib.sh"

need_root
[ -n "${CBOX:-}" ] && [ -x "$CBOX" ] || skip "CBOX (cbox) not built or not set"
[ -x "$BB" ] || skip "$BB missing: install the Debian package busybox-static"
command -v python3 >/dev/null || skip "python3 missing"

ROOT="$SCRATCH/state"
BUNDLE="$SCRATCH/bundle"
CYCLES=${CBOX_OCI_CYCLES:-200}
TAG="cyc$$" # container ids are TAG-..., and so are their cgroups (cbox/<id>)
mkdir -p "$BUNDLE/rootfs/bin" "$BUNDLE/rootfs/dev" "$BUNDLE/rootfs/tmp"
cp "$BB" "$BUNDLE/rootfs/bin/busybox"
for a in sh sleep true; do ln -s busybox "$BUNDLE/rootfs/bin/$a"; done
"$CBOX" spec --bundle "$BUNDLE" || { echo "FAIL cbox spec"; exit 1; }
cp "$BUNDLE/config.json" "$SCRATCH/base.json"

# edit TIER ARGS: the spec with this tier and process args (a Python list).
edit() {
	python3 - "$SCRATCH/base.json" "$BUNDLE/config.json" "$1" "$2" <<'EOF'
import ast, json, sys
c = json.load(open(sys.argv[1]))
c.setdefault("annotations", {})["dev.cbox.tier"] = sys.argv[3]
c["process"]["args"] = ast.literal_eval(sys.argv[4])
c["process"]["terminal"] = False
json.dump(c, open(sys.argv[2], "w"))
EOF
}

# What this script's containers could leave behind: live processes (by the state root in their
# command line, or by a cgroup of theirs), cgroup directories, mounts, state files. Zombies do
# not count: a container's monitor outlives `cbox create` by design (as runc's init does), so
# once it exits it is the child of whoever reaps orphans (containerd's shim, or init; this
# machine's init reaps late, and in batches). Nor does a process gone since it was listed: a
# zombie reaped between the listing and the read of its stat was counted as live (a CI run
# reported the inits of the last ns cycles so).
live() {
	local p st
	while read -r p; do
		st=$(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null)
		[ -n "$st" ] && [ "$st" != Z ] && echo "$p"
	done
}
leftovers() {
	ps -e -o pid=,args= | grep -F -- "--root $ROOT" | grep -v -e grep -e "ps -e" |
		awk '{ print $1 }' | live
	grep -l -- "/$TAG-" /proc/[0-9]*/cgroup 2>/dev/null | cut -d/ -f3 | grep -vx "$$" | live
	find /sys/fs/cgroup -maxdepth 9 -type d -name "$TAG-*" 2>/dev/null
	grep -F -e "$SCRATCH" -e "$TAG-" /proc/self/mountinfo
	ls -A "$ROOT" 2>/dev/null
}

# wait_stopped ID: until `state` says stopped (at most 10 s).
wait_stopped() {
	for _ in $(seq 200); do
		"$CBOX" --root "$ROOT" state "$1" 2>/dev/null | grep -q '"status": *"stopped"' && return 0
		sleep 0.05
	done
	return 1
}

for tier in sentry ns; do
	CFG=$tier
	edit "$tier" "['true']"
	bad=0
	first_err=""
	for i in $(seq "$CYCLES"); do
		id="$TAG-$tier-$i"
		if ! "$CBOX" --root "$ROOT" create --bundle "$BUNDLE" "$id" >/dev/null 2>"$SCRATCH/err" ||
			! "$CBOX" --root "$ROOT" start "$id" >/dev/null 2>>"$SCRATCH/err" ||
			! wait_stopped "$id" ||
			! "$CBOX" --root "$ROOT" delete "$id" >/dev/null 2>>"$SCRATCH/err"; then
			bad=$((bad + 1))
			[ -n "$first_err" ] || first_err="cycle $i: $(tr '\n' ' ' <"$SCRATCH/err")"
			"$CBOX" --root "$ROOT" delete --force "$id" >/dev/null 2>&1
		fi
	done
	check "$CYCLES create/start/delete cycles all succeed${first_err:+ ($first_err)}" 0 "$bad"
	check "after $CYCLES cycles: no process, cgroup, mount or state left" "" "$(leftovers)"
done

# kill_case TIER WHAT: a running container whose WHAT (sentry, monitor, init) gets SIGKILL;
# then `delete --force` must remove everything.
kill_case() {
	local tier=$1 what=$2 id="$TAG-$1-kill-$2" pid victim=""
	CFG=$tier
	edit "$tier" "['sleep', '1000']"
	oci create --bundle "$BUNDLE" "$id"
	oci start "$id"
	check_status "$what killed: the container starts" 0
	oci state "$id"
	pid=$(printf '%s' "$OUT" | python3 -c 'import json, sys; print(json.load(sys.stdin)["pid"])' 2>/dev/null)
	case $what in
	monitor | init) victim=$pid ;;
	sentry)
		for _ in $(seq 50); do
			victim=$(find_desc_by_comm "$pid" cbox-sentry) && [ -n "$victim" ] && break
			sleep 0.1
		done
		;;
	esac
	if [ -z "$victim" ]; then
		report_fail "$what killed: found the $what" "a pid" "none (container pid '$pid')"
		oci delete --force "$id"
		return
	fi
	# The probe must see a live container, or its empty answer below would prove nothing.
	local seen
	seen=$(leftovers)
	check_match "$what killed: the probe sees the running container's processes" '^[0-9]+$' "$seen"
	check_match "$what killed: the probe sees its cgroup" "^/sys/fs/cgroup/.*/$id\$" "$seen"
	check_match "$what killed: the probe sees its state" "^$id\$" "$seen"
	kill -KILL "$victim"
	oci delete --force "$id"
	check_status "$what killed: delete --force succeeds" 0
	local left=""
	for _ in $(seq 50); do
		left=$(leftovers)
		[ -z "$left" ] && break
		sleep 0.1
	done
	check "$what killed: nothing of the container is left" "" "$left"
}

kill_case sentry sentry
kill_case sentry monitor
kill_case ns init
CFG=""

finish
