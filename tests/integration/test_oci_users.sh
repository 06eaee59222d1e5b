#!/bin/bash
# Users in the OCI runtime's sentry tier (issue 4): process.user and `cbox exec --user` run the
# guest as that user, with its groups and without capabilities; files keep their host owners
# (the runtime runs as root, so ids are served 1:1, as runc shows them); the mode bits, sticky
# directories and chown's rules bind a non-root guest; what it creates is its own on the host;
# root with Docker's capabilities reads what it does not own and drops to a user as gosu does,
# and root without them cannot. On both platforms.
. "$(dirname "$0")/lib.sh"

need_root
[ -n "${CBOX:-}" ] && [ -x "$CBOX" ] || skip "CBOX (cbox) not built or not set"
[ -x "$BB" ] || skip "$BB missing: install the Debian package busybox-static"
[ -x "$GUEST" ] || skip "cbox-test-guest not found in HELPERS=${HELPERS:-}"
command -v python3 >/dev/null || skip "python3 missing"

ROOT="$SCRATCH/state"
BUNDLE="$SCRATCH/bundle"
mkdir -p "$BUNDLE/rootfs/bin" "$BUNDLE/rootfs/etc" "$BUNDLE/rootfs/dev" "$BUNDLE/rootfs/u" \
	"$BUNDLE/rootfs/tmp"
cp "$BB" "$BUNDLE/rootfs/bin/busybox"
for a in $("$BB" --list); do
	[ "$a" = busybox ] || ln -s busybox "$BUNDLE/rootfs/bin/$a"
done
cp "$GUEST" "$BUNDLE/rootfs/bin/cbox-test-guest"
"$CBOX" spec --bundle "$BUNDLE" || { echo "FAIL cbox spec"; exit 1; }
cp "$BUNDLE/config.json" "$SCRATCH/base.json"

# The host side of /u: a root-only file, a world-readable one, a directory of uid 1000, a
# sticky world-writable directory holding a file of root's, a directory of group 2000 (0770).
U="$SCRATCH/users"
reset_users() {
	rm -rf "$U"
	mkdir -p "$U/mine" "$U/team"
	chmod 0755 "$U"
	echo private >"$U/root-only" && chmod 0600 "$U/root-only"
	echo shared >"$U/shared" && chmod 0644 "$U/shared"
	chown 1000:1000 "$U/mine"
	mkdir -m 1777 "$U/sticky" && echo r >"$U/sticky/roots" && chmod 0666 "$U/sticky/roots"
	chown 0:2000 "$U/team" && chmod 0770 "$U/team"
}

# Docker's default capabilities (moby's oci/caps/defaults.go), for the configs that want them.
DOCKER_CAPS="['CAP_CHOWN', 'CAP_DAC_OVERRIDE', 'CAP_FSETID', 'CAP_FOWNER', 'CAP_MKNOD', 'CAP_NET_RAW', 'CAP_SETGID', 'CAP_SETUID', 'CAP_SETFCAP', 'CAP_SETPCAP', 'CAP_NET_BIND_SERVICE', 'CAP_SYS_CHROOT', 'CAP_KILL', 'CAP_AUDIT_WRITE']"

# edit PYTHON: config.json from the spec's, with /u bound rw and the platform PLATFORM.
edit() {
	python3 - "$SCRATCH/base.json" "$BUNDLE/config.json" "$SCRATCH" "$PLATFORM" <<EOF
import json, sys
c = json.load(open(sys.argv[1]))
scratch = sys.argv[3]
c["annotations"] = {"dev.cbox.platform": sys.argv[4]}
c["mounts"].append({"destination": "/u", "type": "bind", "source": scratch + "/users", "options": ["rbind", "rw"]})
c["mounts"].append({"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]})
def docker_caps():
    caps = $DOCKER_CAPS
    c["process"]["capabilities"] = {k: caps for k in ("bounding", "effective", "permitted")}
$1
json.dump(c, open(sys.argv[2], "w"))
EOF
}

# The checks a user 1000:1000 with group 2000 makes (busybox applets; one line each).
USER_SCRIPT='id -u; id -g; id -G
grep -E "^(Uid|Gid|Groups|CapEff):" /proc/self/status | tr -s "\t " "  "
cat /u/root-only 2>/dev/null || echo no-read
cat /u/shared
echo x >>/u/shared 2>/dev/null || echo no-write
stat -c "%u:%g %n" /u/root-only /u/mine /u/team
echo hi >/u/mine/f && mkdir /u/mine/d && ln -s f /u/mine/l && mkfifo /u/mine/p && echo made
echo t >/u/team/t && echo team-write
rm /u/sticky/roots 2>/dev/null || echo sticky-kept
echo s >/u/sticky/own && rm /u/sticky/own && echo own-removed
chown 0 /u/mine/f 2>/dev/null || echo no-chown
chgrp 2000 /u/mine/f && echo chgrp-own-group
chgrp 3000 /u/mine/f 2>/dev/null || echo no-chgrp-other
chmod 600 /u/shared 2>/dev/null || echo no-chmod'

USER_EXPECT='1000
1000
1000 2000
Uid: 1000 1000 1000 1000
Gid: 1000 1000 1000 1000
Groups: 2000 
CapEff: 0000000000000000
no-read
shared
no-write
0:0 /u/root-only
1000:1000 /u/mine
0:2000 /u/team
made
team-write
sticky-kept
own-removed
no-chown
chgrp-own-group
no-chgrp-other
no-chmod'

for PLATFORM in seccomp ptrace; do
	reset_users
	edit "c['process']['args'] = ['sh', '-c', '''$USER_SCRIPT''']
c['process']['user'] = {'uid': 1000, 'gid': 1000, 'additionalGids': [2000]}
docker_caps()"
	oci run --bundle "$BUNDLE" "u$RANDOM"
	check_status "[$PLATFORM] process.user 1000:1000 (+2000) runs" 0
	check "[$PLATFORM] ... its ids, groups, no capabilities; modes, sticky, chown and chmod bind it" \
		"$USER_EXPECT" "$OUT"
	check "[$PLATFORM] ... what it made is its own on the host (chgrp'd file: group 2000)" \
		"1000:2000 1000:1000 1000:1000 1000:1000 1000:1000" \
		"$(stat -c %u:%g "$U/mine/f" "$U/mine/d" "$U/mine/p" "$U/team/t" "$U/mine/l" | tr '\n' ' ' | sed 's/ $//')"
	check "[$PLATFORM] ... and the files it could not touch are unchanged" "private shared 0:0" \
		"$(cat "$U/root-only") $(cat "$U/shared") $(stat -c %u:%g "$U/sticky/roots")"

	# Root with Docker's capabilities: reads what it does not own (CAP_DAC_OVERRIDE), gives a
	# file away (CAP_CHOWN), then drops to 1000 as gosu does, after which none of that works.
	reset_users
	edit "c['process']['args'] = ['sh', '-c', '''cat /u/root-only; echo r >/u/mine/byroot; chown 1000:2000 /u/mine/byroot; stat -c %u:%g /u/mine/byroot; grep CapEff /proc/self/status; exec cbox-test-guest become 1000 1000,2000 /bin/sh -c \"id -u; id -G; cat /u/root-only 2>/dev/null || echo no-read; grep CapEff /proc/self/status; cbox-test-guest become 0 0 /bin/true\"''']
docker_caps()"
	oci run --bundle "$BUNDLE" "r$RANDOM"
	check "[$PLATFORM] root with Docker's capabilities, then dropped to 1000 (gosu)" "private
1000:2000
CapEff:	00000000000000fb
1000
1000 2000
no-read
CapEff:	0000000000000000
become: setgroups EPERM" "$OUT"

	# access() asks as the real ids (a set-user-ID program's caller), faccessat(AT_EACCESS) as
	# the effective ones; O_NOATIME needs the owner or CAP_FOWNER. Expected: what Linux gives
	# natively for the same calls (checked by hand with the same helper).
	reset_users
	edit "c['process']['args'] = ['sh', '-c', '''cbox-test-guest access 1000 0 /u/root-only; cbox-test-guest access 1000 1000 /u/shared''']
docker_caps()"
	oci run --bundle "$BUNDLE" "a$RANDOM"
	check "[$PLATFORM] access() by the real ids, AT_EACCESS by the effective, O_NOATIME by the owner" \
		"access EACCES eaccess OK open OK noatime OK
access OK eaccess OK open OK noatime EPERM" "$OUT"

	# Signals: a user may signal its own processes, not root's (nor pid 1); kill -1 reaches only
	# its own; root (CAP_KILL) signals anyone.
	edit "c['process']['args'] = ['sh', '-c', '''sleep 100 & R=\$!
cbox-test-guest become 1000 1000 /bin/sh -c \"kill \$R 2>/dev/null || echo no-kill; sleep 100 & kill \\\$! && echo own-killed; kill -0 1 2>/dev/null || echo no-probe-init; sleep 100 & S=\\\$!; kill -9 -1; wait \\\$S; echo own-by-minus-one \\\$?\"
kill -0 \$R && echo root-alive
kill \$R && echo root-killed''']
docker_caps()"
	oci run --bundle "$BUNDLE" "k$RANDOM"
	check "[$PLATFORM] signals: a user's own processes only; root's CAP_KILL" "no-kill
own-killed
no-probe-init
own-by-minus-one 137
root-alive
root-killed" "$OUT"

	# ps (busybox reads the owner of /proc/PID): the user's processes show as the user.
	edit "c['process']['args'] = ['sh', '-c', '''cbox-test-guest become 1000 1000 /bin/sleep 100 & sleep 0.2; ps -o user,comm | grep -E \"^(1000|root) +sleep\"; stat -c %u /proc/1''']
docker_caps()"
	oci run --bundle "$BUNDLE" "p$RANDOM"
	check "[$PLATFORM] ps: the user's process is the user's, /proc/1 root's" "1000     sleep
0" "$OUT"

	# Root as `cbox spec` makes it (no CAP_SETUID, no CAP_DAC_OVERRIDE): the mode bits bind
	# it, and it cannot become another user.
	reset_users
	edit "c['process']['args'] = ['sh', '-c', '''cat /u/root-only; chmod 0 /u/shared; cat /u/shared 2>/dev/null || echo no-read; cbox-test-guest become 1000 1000 /bin/true''']"
	oci run --bundle "$BUNDLE" "n$RANDOM"
	check "[$PLATFORM] root without those capabilities: owner bits only, no setuid" "private
no-read
become: setgroups EPERM" "$OUT"
done

# A config whose user is no id: refused with the field named, nothing left behind.
edit "c['process']['args'] = ['true']
c['process']['user'] = {'uid': 4294967295, 'gid': 0}"
oci run --bundle "$BUNDLE" bad1
check_status "process.user.uid 4294967295: refused" 1
check_match "  ... saying why" "process\.user: 4294967295 is not an id" "$ERR"
edit "c['process']['args'] = ['true']
c['process']['user'] = {'uid': 0, 'gid': 0, 'additionalGids': [5, 4294967295]}"
oci run --bundle "$BUNDLE" bad2
check_status "an additionalGids entry 4294967295: refused" 1
check "  ... and no state is left" "" "$(ls "$ROOT" 2>/dev/null)"

# linux.sysctl: the sandbox's network namespace's keys (Docker's ip_unprivileged_port_start=0
# lets user 1000 serve on port 80) and its IPC namespace's (seen through shmctl's limits); a
# host-wide key is refused, naming it.
PLATFORM=seccomp
edit "c['process']['args'] = ['sh', '-c', '''nc -l -p 80 -e echo served & sleep 0.3; nc 127.0.0.1 80 </dev/null; cbox-test-guest shmmax''']
c['process']['user'] = {'uid': 1000, 'gid': 1000}
c['linux']['sysctl'] = {'net.ipv4.ip_unprivileged_port_start': '0', 'kernel.shmmax': '1048576'}"
oci run --bundle "$BUNDLE" s1
check "linux.sysctl: user 1000 serves on port 80; the IPC namespace's shmmax" "served
shmmax 1048576" "$OUT"
edit "c['process']['args'] = ['sh', '-c', '''nc -l -p 80 -e echo served 2>&1 | head -1''']
c['process']['user'] = {'uid': 1000, 'gid': 1000}"
oci run --bundle "$BUNDLE" s2
check_match "  ... without it, port 80 stays root's" "Permission denied" "$OUT"
edit "c['process']['args'] = ['true']
c['linux']['sysctl'] = {'kernel.panic': '1'}"
oci run --bundle "$BUNDLE" s3
check_status "a host-wide sysctl (kernel.panic): refused" 1
check_match "  ... naming it" "linux\.sysctl: kernel\.panic is not in a namespace of the sandbox's" "$ERR"

# A working directory the user may not search: the container does not start (runc: "chdir to
# cwd ... permission denied"), and says why.
reset_users
mkdir -m 0700 "$U/private"
edit "c['process']['args'] = ['pwd']
c['process']['cwd'] = '/u/private'
c['process']['user'] = {'uid': 1000, 'gid': 1000}"
oci run --bundle "$BUNDLE" cwd1
check_status "process.cwd the user may not search: not started" 125
check_match "  ... saying why" "working directory /u/private: Permission denied for uid 1000" "$OUT$ERR"

# exec --user into a running container: the new task is that user; the container's root stays.
PLATFORM=seccomp
reset_users
edit "c['process']['args'] = ['sleep', '1000']
docker_caps()"
oci create --bundle "$BUNDLE" box
oci start box
oci exec --user 1000:1000 box sh -c 'id -u; id -g; echo e >/u/mine/e && stat -c %u:%g /u/mine/e; echo x >/u/shared 2>/dev/null || echo no-write'
check "exec --user 1000:1000: that user, its files, the mode bits" "1000
1000
1000:1000
no-write" "$OUT"
oci exec --user 1000:1000 --additional-gids 2000 box id -G
check "exec --additional-gids" "1000 2000" "$OUT"
oci exec box sh -c 'id -u; cat /u/root-only'
check "exec without --user: root, as the container's process" "0
private" "$OUT"
oci exec --user 4294967295 box true
check_status "exec --user -1: refused" 1
oci delete --force box

# Rootless: `cbox run` run by a user (uid 1000) on `cbox spec --rootless`'s config. It failed at
# the network namespace (EPERM: the monitor may not setns into the sandbox's from the host's user
# namespace), so the sandbox's net.* keys are written from inside it; the IPC namespace's keys
# too. Port 80 is then open to the container's root, who holds no host capability: without the
# key it stays closed.
RL="$SCRATCH/rootless"
rootless_bundle "$RL" "$BUNDLE/rootfs"
rootless_run() {
	python3 - "$RL/bundle/config.json" "$1" "$2" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["args"] = ["sh", "-c", sys.argv[2]]
c["process"]["terminal"] = False
c["linux"]["sysctl"] = json.loads(sys.argv[3])
json.dump(c, open(sys.argv[1], "w"))
PYEOF
	OUT=$(cd "$RL" && as_user "$CBOX" --root "$RL/state" run --bundle bundle "rl$RANDOM" 2>"$SCRATCH/err" </dev/null)
	STATUS=$?
	ERR=$(cat "$SCRATCH/err")
}
CFG=rootless
host_ports=$(cat /proc/sys/net/ipv4/ip_unprivileged_port_start)
rootless_run 'id -u; nc -l -p 80 -e echo served & sleep 0.3; nc 127.0.0.1 80 </dev/null; cbox-test-guest shmmax' \
	'{"net.ipv4.ip_unprivileged_port_start": "0", "kernel.shmmax": "1048576"}'
check "cbox run by uid 1000: runs, with the sysctls of its network and IPC namespaces" "0
served
shmmax 1048576" "$OUT"
check_status "  ... status 0" 0
rootless_run 'nc -l -p 80 -e echo served 2>&1 | head -1' '{}'
check_match "  ... without the key, port 80 stays closed" "Permission denied" "$OUT"
check "  ... and the host's own value is untouched" "$host_ports" \
	"$(cat /proc/sys/net/ipv4/ip_unprivileged_port_start)"
CFG=""

finish
