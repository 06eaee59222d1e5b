#!/bin/bash
# The attack of the threat model (issue 3, DESIGN.md): prompt-injected Python that (1) collects
# the environment, (2) reads the caller's private SSH key, (3) POSTs both to a listener on the
# host's 127.0.0.1. Natively it succeeds (the control, so this test cannot pass vacuously);
# under cbox-run each step must come up empty and the listener must receive nothing.
. "$(dirname "$0")/lib.sh"
need_binaries
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY missing: install the Debian package python3"
# The scripts are copied next to the test's scratch files: the source tree itself may be hidden
# in the sandbox (a clone under /tmp, which is the guest's own tmpfs there).
DEMO="$ITEST_TMP/demo"
cp -r "$(cd "$(dirname "$0")" && pwd)/demo" "$DEMO"

# A throwaway key in the caller's home, unless one is there already (then that one, never
# printed: only its absence inside the sandbox is checked).
KEY="$HOME/.ssh/id_ed25519"
MADE_KEY=0
if [ ! -e "$KEY" ]; then
	mkdir -p "$HOME/.ssh"
	printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\ncbox-test-throwaway\n-----END OPENSSH PRIVATE KEY-----\n' >"$KEY"
	MADE_KEY=1
fi
LOOT="$ITEST_TMP/loot.bin"
"$PY" "$DEMO/listener.py" "$ITEST_TMP/port" "$LOOT" &
LISTENER=$!
trap 'kill $LISTENER 2>/dev/null; [ $MADE_KEY = 1 ] && rm -f "$KEY"; rm -rf "$SCRATCH" "$ITEST_TMP"' EXIT
for _ in $(seq 100); do [ -s "$ITEST_TMP/port" ] && break; sleep 0.05; done
PORT=$(cat "$ITEST_TMP/port")
SECRET=sk-cbox-test-$$

# Control: the attack works on the host.
NATIVE=$(CBOX_FAKE_API_KEY=$SECRET "$PY" "$DEMO/attack.py" "$KEY" "$PORT")
sleep 0.3
CFG=native
check_match "the attack works natively (step 3 sends)" "step 3 \\(exfiltration\\): sent" "$NATIVE"
check "the listener received the secret natively" yes "$(grep -q "$SECRET" "$LOOT" && echo yes || echo no)"

t_attack() {
	: >"$LOOT"
	CBOX_FAKE_API_KEY=$SECRET box "$PY" "$DEMO/attack.py" "$KEY" "$PORT"
	check_status "the attack script ran" 0
	check_match "step 1: no host variable inside" "step 1 \\(environment\\): nothing to take" "$OUT"
	check_match "step 2: the key does not exist inside" \
		"step 2 \\(private key\\): cannot read $KEY: No such file or directory" "$OUT"
	check_match "step 3: 127.0.0.1 is the sandbox's own loopback" \
		"step 3 \\(exfiltration\\): cannot reach 127.0.0.1:$PORT: Connection refused" "$OUT"
	sleep 0.2
	check "the listener received nothing" 0 "$(wc -c <"$LOOT")"
	# An address outside the sandbox has no route at all.
	box "$PY" -c 'import socket
try:
    socket.create_connection(("192.0.2.1", 80), timeout=3)
    print("connected")
except OSError as e:
    print(e.strerror)'
	check "an outside address is unreachable" "Network is unreachable" "$OUT"
}

# The host's other secrets, hidden by cbox-run's defaults (empty or absent inside): the password
# files and their backups (a glob of /etc/shadow* and /etc/gshadow*: a backup made for this test
# when the test may write /etc), the host keys, root's home, and the runtime and state trees.
SHADOW_COPY=/etc/shadow.cbox-test-$$
if [ -w /etc ] && [ -r /etc/shadow ]; then
	cp /etc/shadow "$SHADOW_COPY" && chmod 600 "$SHADOW_COPY"
	trap 'kill $LISTENER 2>/dev/null; [ $MADE_KEY = 1 ] && rm -f "$KEY"; rm -f "$SHADOW_COPY"; rm -rf "$SCRATCH" "$ITEST_TMP"' EXIT
fi
SECRET_FILES=""
for f in /etc/shadow /etc/shadow- /etc/gshadow /etc/gshadow- "$SHADOW_COPY"; do
	[ -s "$f" ] && SECRET_FILES="$SECRET_FILES $f"
done
SECRET_DIRS=""
for d in /root /etc/ssh /run /var/lib; do
	[ -n "$(ls -A "$d" 2>/dev/null)" ] && SECRET_DIRS="$SECRET_DIRS $d"
done
t_hidden() {
	if [ -z "$SECRET_FILES$SECRET_DIRS" ]; then
		skip_check "the host's secrets are hidden" "none of them exists on this host"
		return
	fi
	box /bin/sh -c 'for f in '"$SECRET_FILES"'; do echo "$f: $(cat "$f" 2>/dev/null | wc -c)"; done
for d in '"$SECRET_DIRS"'; do echo "$d: $(ls -A "$d" 2>/dev/null | wc -l)"; done'
	for p in $SECRET_FILES $SECRET_DIRS; do
		check "$p is hidden" "$p: 0" "$(printf '%s\n' "$OUT" | grep "^$p: ")"
	done
}

# --hide through symlinks: what the path leads to is hidden, under every name (a secret kept in
# a dotfiles repository and linked into $HOME; a host whose /home is a link to var/home). Before,
# a hide through any symlink hid nothing at all. A path that leads to the root is refused.
t_hide_symlinks() {
	local d
	d=$(realpath -m "$ITEST_TMP/hidelinks")
	rm -rf "$d" && mkdir -p "$d/real" && echo SECRET >"$d/real/key"
	ln -s real "$d/link" && ln -s "$d/real" "$d/abslink" && ln -s / "$d/rootlink"
	local show='for p in real/key link/key abslink/key; do echo "$p:$(cat '"$d"'/$p 2>/dev/null)"; done'
	CFG="$CFG --hide $d/link" box /bin/sh -c "$show"
	check "--hide of a symlink hides what it names, under every name" "real/key:
link/key:
abslink/key:" "$OUT"
	CFG="$CFG --hide $d/abslink/key" box /bin/sh -c "$show"
	check "--hide through an absolute symlink" "real/key:
link/key:
abslink/key:" "$OUT"
	CFG="$CFG --hide $d/real" box /bin/sh -c "$show"
	check "  ... and the target itself hides it behind its links" "real/key:
link/key:
abslink/key:" "$OUT"
	CFG="$CFG --hide $d/rootlink" box /bin/true
	check "--hide of a link to / is refused" 125 "$STATUS"
	check_match "  ... saying so" "hide $d/rootlink: it leads to the root" "$ERR"
	rm -rf "$d"
}

# --hide inside the working folder (a project's .env, a directory of keys) and inside a -v: the
# hide is made on what those mounts show. It was made on the rootfs before them, so the
# working folder's bind showed the secret again (the ns tier hid a file but not a directory).
t_hide_in_workdir() {
	local wd vol
	wd=$(realpath -m "$ITEST_TMP/hidewd")
	vol=$(realpath -m "$ITEST_TMP/hidevol")
	rm -rf "$wd" "$vol" && mkdir -p "$wd/keys" "$vol"
	echo API_KEY=1 >"$wd/.env" && echo k >"$wd/keys/id" && echo v >"$vol/token"
	cd "$wd" || return
	CFG="$CFG --hide $wd/.env --hide $wd/keys -v $vol:/tmp/vol --hide /tmp/vol/token" \
		box /bin/sh -c 'echo "[$(cat .env)] [$(ls keys)] [$(cat /tmp/vol/token)]"
echo w >written && cat written'
	cd - >/dev/null || return
	check "--hide inside the working folder and a -v" "[] [] []
w" "$OUT"
	check "  ... the rest of the working folder stays writable" w "$(cat "$wd/written" 2>/dev/null)"
	check "  ... and the host's files are untouched" "API_KEY=1 k v" \
		"$(cat "$wd/.env") $(cat "$wd/keys/id") $(cat "$vol/token")"
	rm -rf "$wd" "$vol"
}

# --hide in a --rootfs: what is hidden is the rootfs's file, found in the rootfs (symlinks
# followed inside it). The ns tier asked the host whether the path was there and a directory, so
# a secret only the rootfs had stayed in view.
t_hide_in_rootfs() {
	local root
	root=$(realpath -m "$ITEST_TMP/hiderootfs")
	rm -rf "$root" && mkdir -p "$root/bin" "$root/etc" "$root/opt/keys" "$root/tmp"
	cp "$BB" "$root/bin/busybox"
	echo k >"$root/opt/keys/id" && echo t >"$root/etc/only-in-rootfs" && echo v >"$root/etc/shown"
	ln -s /opt "$root/optlink"
	CFG="$CFG --rootfs $root --hide /optlink/keys --hide /etc/only-in-rootfs" \
		box /bin/busybox sh -c 'echo "[$(ls /opt/keys)] [$(cat /etc/only-in-rootfs)]" \
$(test -d /opt/keys && echo dir) $(cat /etc/shown)'
	check "--hide in a --rootfs hides the rootfs's own files" "[] [] dir v" "$OUT"
	rm -rf "$root"
}

# Run from the home directory itself (cd ~ && cbox-run ...): the working folder is the home,
# which the hide of /home gave back whole, ~/.ssh and the cloud tokens with it. They are hidden
# there too; the home's other files stay, and a -v shows one again.
t_home_secrets() {
	local home
	home=$(realpath -m "$ITEST_TMP/fakehome")
	rm -rf "$home" && mkdir -p "$home/.ssh" "$home/.aws" "$home/.config/gh" "$home/src"
	echo key >"$home/.ssh/id_ed25519" && echo tok >"$home/.aws/credentials"
	echo gh >"$home/.config/gh/hosts.yml" && echo hi >"$home/src/notes" && echo n >"$home/.netrc"
	cd "$home" || return
	HOME=$home box /bin/sh -c 'echo "[$(ls -A .ssh .aws .config/gh)] [$(cat .netrc)] [$(cat src/notes)]"'
	check "run from the home: its credentials are hidden, its other files not" "[.aws:

.config/gh:

.ssh:] [] [hi]" "$OUT"
	HOME=$home CFG="$CFG -v $home/.ssh:$home/.ssh:ro" box /bin/sh -c 'ls .ssh'
	check "  ... and a -v shows one again" "id_ed25519" "$OUT"
	cd - >/dev/null || return
	rm -rf "$home"
}

# Another task's CPU mask is set through the sentry (sched_setaffinity with a pid): a host
# process, named by its host pid, is out of reach (no such process inside) and keeps its mask.
t_affinity() {
	local before after
	before=$(taskset -p $$ | awk '{print $NF}')
	box "$PY" -c 'import errno, os, sys
try:
    os.sched_setaffinity('"$$"', {0})
    print("set")
except OSError as e:
    print(errno.errorcode[e.errno])'
	after=$(taskset -p $$ | awk '{print $NF}')
	check "a host process's CPU mask is out of reach" "ESRCH" "$OUT"
	check "the host process keeps its CPU mask" "$before" "$after"
}

# The sandbox's own /etc/hostname and /etc/hosts (as Docker's): the host's name is not shown,
# and the sandbox's resolves without a network (it did not: python's gethostbyname of its own
# name failed, Java's InetAddress.getLocalHost() threw). Read-only like the rest of the root: a
# write must fail and leave the host's file alone; --overlay makes it writable; --hide and -v
# still win.
t_etc_hosts() {
	local before after
	before=$(md5sum </etc/hosts)
	box "$PY" -c 'import socket
print(open("/etc/hostname").read().strip(), socket.gethostname(), socket.gethostbyname(socket.gethostname()))
print(socket.gethostbyname("localhost"))'
	check "/etc/hostname, uname and /etc/hosts agree on the sandbox's name" \
		"cbox cbox 127.0.1.1
127.0.0.1" "$OUT"
	box /bin/sh -c 'echo 192.0.2.9 evil >>/etc/hosts'
	after=$(md5sum </etc/hosts)
	check "a write to /etc/hosts fails" 2 "$STATUS"
	check_match "  ... read-only" "Read-only file system" "$ERR"
	check "  ... and the host's /etc/hosts is unchanged" "$before" "$after"
	# A user (-u) reads them too, whatever the caller's umask (under 077 the ns tier's root
	# was 0700 and a user could run nothing there).
	local mask
	mask=$(umask)
	umask 077
	CFG="$CFG -u 65534" box /bin/sh -c 'id -u; tail -n 1 /etc/hosts'
	umask "$mask"
	check "  ... and so does a user, under a umask of 077" "65534
127.0.1.1	cbox" "$OUT"
	CFG="$CFG --hide /etc/hosts" box /bin/sh -c 'wc -c </etc/hosts'
	check "--hide /etc/hosts still shows it empty" 0 "$OUT"
	printf '192.0.2.7 mine\n' >"$ITEST_TMP/hosts"
	chmod 644 "$ITEST_TMP/hosts"
	CFG="$CFG -v $ITEST_TMP/hosts:/etc/hosts:ro" box /bin/cat /etc/hosts
	check "a -v on /etc/hosts wins" "192.0.2.7 mine" "$OUT"
	case "$CFG" in *--tier=ns*) return ;; esac # (no --overlay there)
	CFG="$CFG --overlay" box /bin/sh -c 'echo 192.0.2.8 added >>/etc/hosts && getent hosts added'
	check_match "--overlay: /etc/hosts is writable" "^192\.0\.2\.8 +added$" "$OUT"
	check "  ... and the host's /etc/hosts is unchanged" "$before" "$(md5sum </etc/hosts)"
}

# ptrace between the sandbox's processes (emulated by the sentry, which traces them all): a
# process of one's own user can be stopped, read and written, as on Linux; one that made itself
# not dumpable cannot, nor its /proc/PID/environ be read (the guest's root lacks CAP_SYS_PTRACE,
# as Docker's does), nor can another user's. The guest's ptrace must never reach the host, where
# every guest task is the same id.
t_ptrace_guard() {
	box "$GUEST" ptrace-guard
	check "ptrace: own user's process yes, a not dumpable or another user's no" "same-user OK
nondumpable EPERM
nondumpable-environ EACCES
other-user EPERM
poke OK" "$OUT"
}

# The calls that reach into another process without ptrace (its memory, its fds, its limits, its
# CPUs, its nice value, I/O class and scheduling policy): the host lets any guest task into any
# other, as they are one host id, so the sentry checks them as Linux does. Root's own process is
# open to root, not to the nobody it drops to.
XPROC_CALLS="process_vm_readv process_vm_writev pidfd_getfd kcmp get_robust_list move_pages
migrate_pages prlimit64 sched_setaffinity setpriority ioprio_set sched_setscheduler
sched_setparam sched_setattr"
t_cross_user() {
	box "$GUEST" cross-user
	local call want=""
	for call in $XPROC_CALLS; do want+="$call same-user OK"$'\n'; done
	for call in $XPROC_CALLS; do want+="$call other-user EPERM"$'\n'; done
	check "another process's memory, fds, limits, CPUs and priority: own user's yes, another's no" \
		"${want%$'\n'}" "$OUT"
}

# A user named by its id (setpriority PRIO_USER, ioprio_set IOPRIO_WHO_USER) is one of the
# sentry's guest ids, which the host cannot tell apart: nobody's renice of "all my processes"
# once reniced root's too. Not on the ns tier, where the ids are the host kernel's own (and a
# PRIO_USER of nobody could reach the host's processes of that id).
t_prio_user() {
	case "$CFG" in *--tier=ns*) return ;; esac
	box "$GUEST" prio-user
	check "a user's own processes by its id: nobody's, not root's" \
		"nobody-sets 0 user 15 child 15 self 20 child-class 3 self-class 0 root-sets EPERM no-user ESRCH" \
		"$OUT"
}

# Set-ID bits: `chmod 6755` in the box shows there (the sentry keeps them, as a nosuid mount
# keeps them: shown, never honoured), but never reaches the host's file, which must not become a
# privileged program for whoever runs it on the host later (sentry/owners.c, gofer safe_mode).
# The ns tier, where the program's calls reach the host's file, refuses the chmod (EPERM: its
# bundle's seccomp profile, runtime-shim/cbox_run_ns_seccomp.c), which also refuses new
# namespaces there, as Docker's default profile does.
t_setid() {
	local d
	d=$(mktemp -d /var/tmp/cbox-setid.XXXXXX) && chmod 755 "$d" && cp /bin/true "$d/prog" ||
		return
	pushd "$d" >/dev/null || return
	box /bin/sh -c 'chmod 6755 prog && stat -c %a prog; ./prog && echo ran'
	popd >/dev/null || return
	case "$CFG" in
	*--tier=ns*)
		check "--tier=ns: chmod 6755 is refused, and the program runs" ran "$OUT"
		check_match "  ... with EPERM" "Operation not permitted" "$ERR"
		;;
	*)
		check "chmod 6755 shows inside, and the program runs" "6755
ran" "$OUT"
		;;
	esac
	check "  ... and the host's file has no set-ID bit" 755 "$(stat -c %a "$d/prog")"
	rm -rf "$d"
	case "$CFG" in *--tier=ns*) ;; *) return ;; esac
	box /bin/sh -c 'grep "^Seccomp:" /proc/self/status; unshare -U true 2>/dev/null || echo refused'
	check "--tier=ns: a seccomp filter, and no new namespace" "Seccomp:	2
refused" "$OUT"
}

# What the sentry runs inside a task at a ptrace stop must stay its own. For clone3's
# CLONE_CLEAR_SIGHAND it rewinds the new child onto the clone3's syscall instruction, which is
# guest memory: a thread that turns it into a jump to clone(CLONE_NEWUSER | CLONE_UNTRACED)
# once had that call run unchecked (an untraced grandchild in a user namespace of its own). The
# child must die at that call instead (platform/ptrace.c run_to_exit).
t_inject_race() {
	case "$CFG" in *--tier=ns*) return ;; esac
	box "$GUEST" inject-race
	check "a call slipped into the sentry's injection does not run" "inject-race escaped 0" "$OUT"
}

# The ptrace platform passes each fd the sentry opens for a task through an install socket at
# fd 1022. It was one socket for the whole sandbox: a process of nobody reading it took the fds
# root's process opened (a file only root may read), and the root process's own read of it then
# waited for ever, with the sentry. Each process has its own now (cbox_ptrace_new_channel), which
# pidfd_getfd cannot take from another process either (fd 1022 looks closed to the guest), and
# which an exec, or the first trapped call after an unshare(CLONE_FILES), renews when the table
# was shared with another process.
t_install_theft() {
	case "$CFG" in *--tier=ns*) return ;; esac
	local d
	# (the helper is copied in: the working folder is all of the host's /tmp the box shows, and
	# a checkout under /tmp holds it)
	d=$(mktemp -d /var/tmp/cbox-theft.XXXXXX) && chmod 755 "$d" && cp "$GUEST" "$d/guest" &&
		printf 'root only\n' >"$d/secret" && chmod 600 "$d/secret" || return
	pushd "$d" >/dev/null || return
	box ./guest install-theft secret
	check "nobody's process gets none of the fds opened for root's" \
		"install-theft getfd EBADF stolen 0" "$OUT"
	# Under `ulimit -n 256` no fd can sit at 1022: each install has a socket of its own.
	box ./guest install-theft secret 256
	check "  ... nor under an fd limit below 1023" "install-theft getfd EBADF stolen 0" "$OUT"
	# A CLONE_FILES process shares its parent's table, and socket, until the parent execs:
	# the new image then has a socket of its own (cbox_ptrace_exec_channel).
	box ./guest exec-theft secret
	check "  ... nor a process that shared the table before an exec" "exec-theft stolen 0" "$OUT"
	box ./guest exec-theft secret unshare
	check "  ... or before an unshare(CLONE_FILES) and an exec" "exec-theft stolen 0" "$OUT"
	# An unshare without an exec: the socket is renewed at the next trapped call (it stayed
	# shared until an exec, and nobody's process took ~20000 fds of root's opens).
	box ./guest exec-theft secret unshare-only
	check "  ... or before an unshare(CLONE_FILES) alone" "exec-theft stolen 0" "$OUT"
	popd >/dev/null || return
	rm -rf "$d"
}

# The install socket at fd 1022 is closed to the guest in the calls the sentry answers on an fd
# and in those that would copy it: fstat showed it (a program listing its fds by fstat, as
# Python's test_subprocess does, found one it never opened), bind gave it a name in the sandbox,
# and dup a copy that a child forked next would keep, with the parent's installs to read. (The
# calls the host runs on it, read or getsockopt, reach the task's own channel only.)
t_reserved_fd() {
	box "$GUEST" reserved-fd
	check "fd 1022 is closed to the guest" "reserved-fd EBADF EBADF EBADF EBADF EBADF EBADF" "$OUT"
}

# Queued signals to a process while the sentry runs calls in it from user mode (on the ptrace
# platform, the install of every fd under a hard fd limit below 1023): each must arrive once,
# with its value and sender. One that came then was taken from the task and only the first was
# queued again, by a tkill the sentry's own filter refused: the sentry died of SIGSYS.
t_signal_storm() {
	case "$CFG" in *--tier=ns*) return ;; esac
	local d
	d=$(mktemp -d /var/tmp/cbox-storm.XXXXXX) && chmod 755 "$d" && cp "$GUEST" "$d/guest" || return
	pushd "$d" >/dev/null || return
	box ./guest signal-storm 3000 256
	check "3000 queued signals during installs under an fd limit: all delivered, as sent" \
		"0 signal-storm 3000 got 3000 bad 0 lost 0" "$STATUS $OUT"
	box ./guest signal-storm 3000
	check "  ... and without the limit" "0 signal-storm 3000 got 3000 bad 0 lost 0" "$STATUS $OUT"
	popd >/dev/null || return
	rm -rf "$d"
}

# Run from /home (or above it, in a --workdir): the working folder holds every user's home, and
# root's cbox-run could read each one's keys. Every home in /home keeps its credentials hidden,
# not only the caller's. Needs a home of its own in /home, which only root may make.
t_other_homes() {
	if [ ! -w /home ]; then
		skip_check "other users' credentials hidden" "needs a writable /home (root)"
		return
	fi
	local home=/home/cbox-itest-$$
	rm -rf "$home" && mkdir -p "$home/.ssh" "$home/.gnupg" "$home/src"
	echo key >"$home/.ssh/id_ed25519" && echo g >"$home/.gnupg/k" && echo hi >"$home/src/notes"
	cd /home || return
	HOME=$ITEST_TMP box /bin/sh -c "echo \"[\$(ls -A $home/.ssh $home/.gnupg)] [\$(cat $home/src/notes)]\""
	check "run from /home: another user's credentials are hidden, the rest of the home not" \
		"[$home/.gnupg:

$home/.ssh:] [hi]" "$OUT"
	cd - >/dev/null || return
	rm -rf "$home"
}

# The guest's own home, as its passwd entry names it (/root for root; Java's user.home and ssh
# take it, not $HOME), is an empty tmpfs of the sandbox's: writable, with the host's mode, gone
# with the sandbox. It was the read-only empty hide (jshell could not keep its preferences).
# Nothing of the host's home shows, and nothing written reaches it. In a --rootfs, a user's
# home under a hidden /home is made the same way, the user's; a home the rootfs lacks
# (/nonexistent) is not made. $HOME (/tmp/home) is the user's too (under the ns tier it was
# root's, not writable with -u).
t_own_home() {
	local mark=cbox-itest-home-$$ root
	box /bin/sh -c "ls -A /root | wc -l; stat -c '%a %U' /root; echo w >/root/$mark && cat /root/$mark"
	check "the guest's own home (/root): empty, root's, the host's mode, writable" "0
$(stat -c %a /root) root
w" "$OUT"
	check "  ... what is written there stays in the sandbox" absent \
		"$([ -e "/root/$mark" ] && echo present || echo absent)"
	root=$(realpath -m "$ITEST_TMP/homerootfs")
	rm -rf "$root" && mkdir -p "$root/bin" "$root/etc" "$root/home/u/.ssh" "$root/tmp"
	cp "$BB" "$root/bin/busybox"
	echo key >"$root/home/u/.ssh/id" && chmod 0751 "$root/home/u"
	printf '%s\n' root:x:0:0:root:/root:/bin/sh u:x:1234:1234::/home/u:/bin/sh \
		n:x:1235:1235::/nonexistent:/bin/sh >"$root/etc/passwd"
	CFG="$CFG --rootfs $root --hide /home -u u" box /bin/busybox sh -c \
		'ls -A /home/u | wc -l; stat -c "%a %u" /home/u; echo w >/home/u/f && cat /home/u/f
touch "$HOME/h" && stat -c "HOME %u" "$HOME"'
	check "  ... -u u in a --rootfs that hides /home: its home, empty, writable, its own" "0
751 1234
w
HOME 1234" "$OUT"
	check "  ... nothing written in the rootfs" ".ssh id" \
		"$(ls -A "$root/home/u") $(ls -A "$root/home/u/.ssh")"
	CFG="$CFG --rootfs $root -u n" box /bin/busybox sh -c \
		'test -e /nonexistent && echo made; cat /home/u/.ssh/id'
	check "  ... a home the rootfs lacks is not made (nor a shown one covered)" key "$OUT"
	rm -rf "$root"
}

# The ns tier (cbox-run --tier=ns) gives the same view: it must stop the attack as well.
CONFIGS+=("--tier=ns")
for_each_config t_attack
for_each_config t_hidden
for_each_config t_hide_symlinks
for_each_config t_hide_in_workdir
for_each_config t_hide_in_rootfs
for_each_config t_home_secrets
for_each_config t_other_homes
for_each_config t_own_home
for_each_config t_affinity
for_each_config t_etc_hosts
for_each_config t_ptrace_guard
for_each_config t_cross_user
for_each_config t_prio_user
for_each_config t_setid
for_each_config t_inject_race
for_each_config t_install_theft
for_each_config t_reserved_fd
for_each_config t_signal_storm
finish
