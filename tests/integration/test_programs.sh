#!/bin/bash
# Real programs under the sentry: Debian's python3 (with venv and pip), gcc, make, bash, git and
# node, each run the way a user runs it (cbox-run from the working folder, which the program may
# write) and checked on its output. The fixtures are in programs/; each case copies them into a
# fresh working folder.
#
# Two configurations by default (seccomp and ptrace, not --strict): the venv case alone takes
# several seconds per configuration. CBOX_CONFIGS still overrides.
CBOX_CONFIGS=${CBOX_CONFIGS:-"--platform=seccomp|--platform=ptrace"}
. "$(dirname "$0")/lib.sh"
need_binaries

FIXTURES=$(realpath "$(dirname "$0")/programs")
CBOX_RUN=$(realpath "$CBOX_RUN")
ITEST_TMP=$(realpath "$ITEST_TMP")
PY=/usr/bin/python3 # Debian's: a pyenv shim on the caller's PATH lives under the hidden /root
NODE=/usr/bin/node

# The Debian package that provides each program, for the skip messages.
declare -A PKG=([/usr/bin/python3]=python3 [/usr/bin/gcc]=gcc [/usr/bin/make]=make
	[/usr/bin/git]=git [/usr/bin/node]=nodejs [/usr/bin/bash]=bash [/usr/bin/clang]=clang
	[/usr/bin/gdb]=gdb [/usr/bin/strace]=strace)

# have NAME PROGRAM...: true when every PROGRAM is installed, else a skipped check NAME.
have() {
	local name=$1 p
	shift
	for p in "$@"; do
		if [ ! -x "$p" ]; then
			skip_check "$name" "$p not installed (Debian package ${PKG[$p]:-?})"
			return 1
		fi
	done
}

# workdir: a fresh working folder holding a copy of the fixtures, made the current directory
# (cbox-run makes its cwd the guest's writable working folder).
workdir() {
	WD=$(mktemp -d "$ITEST_TMP/wd.XXXXXX")
	cp -r "$FIXTURES/." "$WD/"
	chmod +x "$WD/tool.py" "$WD/hello.sh"
	cd "$WD" || exit 1
}

t_python() {
	have python $PY || return
	workdir
	box $PY analyse.py data.csv
	check "python analyse.py" "rows=3 total=17 max=gamma" "$OUT"
	check_status "python analyse.py status" 0
	# out.png was written into the working folder: a PNG of 3 bars of 10 px, 9 px high.
	check "python wrote out.png" "png 30x9" \
		"$($PY -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24)
print("png %dx%d" % struct.unpack(">II", d[16:24]) if d[:8] == b"\x89PNG\r\n\x1a\n" else "bad")' out.png 2>&1)"

	box $PY stdlib.py
	check "python stdlib" "subprocess:12 threads:0,1,4,9 sqlite:3 asyncio:ok socketpair:sp" "$OUT"

	box $PY pool.py
	check "python multiprocessing.Pool" "pool:1,4,9" "$OUT"

	# The start methods that do not fork the caller (forkserver's AF_UNIX socket in /tmp and
	# its SCM_RIGHTS, spawn's fresh interpreters), with a Queue, a Manager and shared_memory.
	box $PY mp_contexts.py forkserver spawn
	check "python multiprocessing forkserver and spawn" \
		"forkserver:30,42,7,10,exit=0 spawn:30,42,7,10,exit=0" "$OUT"

	# Python's signal handlers have no SA_RESTART: a signal landing while a trapped call waits
	# for the sentry must not turn into an EINTR Linux never gives (os.listdir raised
	# InterruptedError under a fast timer, os.kill in a stop/continue loop too).
	box $PY -c 'import os, signal, time
signal.signal(signal.SIGALRM, lambda s, f: None)
signal.setitimer(signal.ITIMER_REAL, 0.0001, 0.0001)
errs, end = {}, time.time() + 2
while time.time() < end:
    for name, f in (("listdir", lambda: os.listdir("/etc")), ("stat", lambda: os.stat("/")),
                    ("kill", lambda: os.kill(os.getpid(), 0)), ("getuid", os.getuid)):
        try:
            f()
        except OSError as e:
            errs[name] = e.errno
signal.setitimer(signal.ITIMER_REAL, 0, 0)
print("errors", errs)'
	check "python under a 0.1 ms timer: no EINTR from calls that never give one" "errors {}" "$OUT"

	# A thread that unshares its fd table (unshare(CLONE_FILES)) and opens a file: on the ptrace
	# platform its new install socket is made inside it, taken with a pidfd of that thread (the
	# process's pidfd reads the leader's table: the thread was killed for an EBADF).
	box $PY -c 'import ctypes, os, threading
libc, out = ctypes.CDLL(None, use_errno=True), []
def run():
    r = libc.unshare(0x400)
    fd = os.open("/etc/hostname", os.O_RDONLY)
    out.append((r, len(os.read(fd, 100)) > 0))
    os.close(fd)
t = threading.Thread(target=run)
t.start()
t.join()
print("thread unshare", out)'
	check "a thread unshares its fd table and opens a file" "thread unshare [(0, True)]" "$OUT"

	# A script started through its "#!" line, by the kernel.
	box ./tool.py a b
	check "python #! script" "tool.py argv:a b" "$OUT"

	# The sentry keeps a writable file's attributes for a while (sentry/fs_gofer.c,
	# keep_fetched), never while the file is open for writing, and the guest's own changes end
	# them: each stat sees the writes, the rename and the new entry before it.
	box $PY -c 'import os
f = open("grow.txt", "w"); s = []
for i in range(3):
    f.write("x" * 10); f.flush(); s.append(os.stat("grow.txt").st_size)
f.close(); n = os.stat(".").st_nlink; os.mkdir("sub"); s.append(os.stat(".").st_nlink - n)
os.rename("grow.txt", "sub/g"); s.append(os.path.exists("grow.txt")); s.append(os.stat("sub/g").st_size)
print(s)'
	check "python: stats after its own writes" "[10, 20, 30, 1, False, 30]" "$OUT"
}

t_pip() {
	have pip $PY /usr/bin/bash || return
	workdir
	# The user's command (pip through its "#!" script), then pip as a module, each status on
	# its own line so one failure does not hide the other.
	box /usr/bin/bash -c "$PY -m venv /tmp/v || exit 10
		/tmp/v/bin/pip install -q --no-index --no-build-isolation ./pkg >/dev/null 2>&1
		echo pip-script=\$?
		/tmp/v/bin/python -m pip install -q --no-index --no-build-isolation ./pkg \
			>/dev/null 2>&1
		echo pip-module=\$?
		/tmp/v/bin/python -c 'import qpkg, sys; print(qpkg.greet(\"cbox\"), sys.prefix)'"
	check_status "venv created" 0
	check_match "pip install through bin/pip" "^pip-script=0\$" "$OUT"
	check_match "python -m pip install" "^pip-module=0\$" "$OUT"
	check_match "installed package imports in the venv" "^hello cbox /tmp/v\$" "$OUT"
}

t_gcc_make() {
	have gcc /usr/bin/gcc /usr/bin/make || return
	workdir
	box /bin/sh -c 'gcc -O2 -o /tmp/a hello.c && /tmp/a && make -s -C ./proj -j2 && ./proj/prog'
	check "gcc, run, make -j2" "hello from gcc
sum=5050" "$OUT"
	check_status "gcc and make status" 0
	# make wrote its objects and the program into the working folder: the host runs it too.
	check "make's program on the host" "sum=5050" "$(./proj/prog 2>&1)"

	box /bin/sh -c 'make -s -C ./proj clean && ls proj'
	check "make clean" "Makefile main.c sum.c sum.h" "$(echo $OUT)"

	box /usr/bin/gcc -c -o /tmp/b.o broken.c
	check_status "gcc on a broken file fails" 1
	# The quotes around the name depend on the locale (LANG passes through).
	check_match "gcc reports the error" "broken.c:3:[0-9]+: error: .+undeclared_name.+ undeclared" \
		"$ERR"
}

# Programs built with the sanitizers run: the loader's image stays mapped in every program, and
# at 16 TiB it lay in ASan's and TSan's shadow: both aborted at start ("Shadow memory range
# interleaves with an existing memory mapping"), MSan too. ASan's leak check at exit stops the
# program's threads with ptrace from a CLONE_UNTRACED helper and reads their registers, which
# the sentry emulates (syscalls/sys_ptrace.c): it ran with detect_leaks=0 before, as under gdb.
t_sanitizers() {
	have gcc /usr/bin/gcc || return
	have clang /usr/bin/clang || return
	workdir
	box /bin/sh -c 'gcc -fsanitize=address,undefined -o /tmp/a hello.c && /tmp/a
		gcc -fsanitize=thread -o /tmp/t hello.c && /tmp/t
		clang -fsanitize=memory -o /tmp/m hello.c && /tmp/m'
	check "ASan, TSan and MSan programs run" "hello from gcc
hello from gcc
hello from gcc" "$OUT"
	check_status "  ... and exit 0" 0

	# The leak check: a block held by a stopped thread's stack is found, a lost one reported.
	box /bin/sh -c 'gcc -g -fsanitize=address -o leak leak.c -lpthread && ./leak'
	check "LeakSanitizer: no leak, exit 0" "done" "$OUT"
	check_status "  ... status 0" 0
	check_nomatch "  ... and no fatal error" "LeakSanitizer has encountered a fatal error" "$ERR"
	box ./leak lose
	check_match "LeakSanitizer reports the lost block" \
		"ERROR: LeakSanitizer: detected memory leaks.*Direct leak of 32 byte\(s\) in 1 object" \
		"$(echo $ERR)"
	check_status "  ... and fails the run" 1
}

# Debuggers trace the sandbox's own processes through the ptrace the sentry emulates
# (sentry/ptrace_emu.c): gdb runs a program to a breakpoint, steps over it, follows its thread
# and its fork, and shows a crash's backtrace with its source lines (/proc/PID/mem and auxv); strace follows a shell's calls and its child's (syscall
# stops, fork and exec events, the exits of tracees that are not its children), and strace -p
# attaches to a running process.
t_debuggers() {
	have gdb /usr/bin/gdb /usr/bin/gcc || return
	workdir
	box /bin/sh -c 'gcc -g -O0 -pthread -o dbg dbg.c && gdb -q -batch -x dbg.gdb ./dbg'
	check_match "gdb: a breakpoint, with its arguments" \
		"Breakpoint 1, add \(a=0, b=0\) at dbg.c:[0-9]+" "$OUT"
	check_match "  ... the backtrace" "#1  0x[0-9a-f]+ in main \(argc=1, argv=0x[0-9a-f]+\) at dbg.c:[0-9]+" "$OUT"
	check_match "  ... continued, stepped over it to its next hit" \
		"Breakpoint 1, add \(a=0, b=1\) at dbg.c:[0-9]+" "$OUT"
	check_match "  ... its thread followed, and its fork" \
		"\\[New Thread 0x[0-9a-f]+ \\(LWP [0-9]+\\)\\].*\\[Thread 0x[0-9a-f]+ \\(LWP [0-9]+\\) exited\\].*\\[Detaching after fork from child process [0-9]+\\]" \
		"$(tr '\n' ' ' <<<"$OUT")"
	check_match "  ... the program's own output, and its exit" \
		"sum 10 counter 3.*exited normally" "$(tr '\n' ' ' <<<"$OUT")"
	check_status "  ... gdb's status" 0
	box /usr/bin/gdb -q -batch -ex run -ex bt --args ./dbg crash
	check_match "gdb: a crash's signal" "Program received signal SIGSEGV" "$OUT"
	check_match "  ... and its backtrace, with source lines" \
		"#0 +0x[0-9a-f]+ in deref \(p=0x0\) at dbg.c:[0-9]+.*#1 +0x[0-9a-f]+ in main" \
		"$(tr '\n' ' ' <<<"$OUT")"
	# gdb turns address randomization off: the program sits where Linux puts it then.
	check_match "  ... at the addresses it has outside" "#0 +0x00005555555[0-9a-f]{5} in deref" "$OUT"

	have strace /usr/bin/strace || return
	box /usr/bin/strace -f -q -e trace=execve,exit_group /bin/sh -c 'echo a; /bin/echo b'
	check_match "strace -f: the child's exec" \
		'^\[pid +[0-9]+\] execve\("/bin/echo", \["/bin/echo", "b"\], 0x[0-9a-f]+ /\* [0-9]+ vars \*/\) = 0$' \
		"$ERR"
	check "  ... and both exits" 2 "$(grep -c 'exited with 0 +++$' <<<"$ERR")"
	check "  ... with the program's output" "a
b" "$OUT"
	check_status "  ... and status" 0
	box /usr/bin/bash -c 'sleep 30 & p=$!; sleep 0.3
		strace -qq -e trace=none -p $p 2>&1 & s=$!; sleep 0.5; kill $p; wait $s'
	check "strace -p: attached to a running process, which a signal ends" \
		"--- SIGTERM {si_signo=SIGTERM, si_code=SI_USER, si_pid=2, si_uid=0} ---
+++ killed by SIGTERM +++" "$OUT"
}

t_bash() {
	have bash /usr/bin/bash || return
	workdir
	box /usr/bin/bash features.sh
	local want
	for want in "array: 3 y" "procsub: inner" "heredoc: 5" "stdin: piped" "wait: 0" \
		"coproc: co-ping" "trap: USR1" "fifo: through" "subshell: 4" "timeout: 124" \
		"home: /tmp/home"; do
		check_match "bash ${want%%:*}" "^$want\$" "$OUT"
	done

	box ./hello.sh x y
	check "bash #! script" "hello.sh 5 x y" "$OUT"

	# A here-document larger than a pipe is an unlinked 0600 file of bash's; reopening it by
	# name failed where the sentry's host identity may not read it (nobody, when cbox-run
	# runs as root). Security: the copy of the fd it gets instead is read-only, as the fd is.
	# Run by a user, the sentry reopens it as Linux does, for writing too (the file is the
	# guest's own).
	local heredoc_write=no-write
	[ "$(id -u)" = 0 ] || heredoc_write=
	box /usr/bin/bash -c 'big=$(head -c 100000 /dev/zero | tr "\\0" x)
cat /dev/stdin <<EOF | wc -c
$big
EOF
(echo z >>/dev/stdin) 2>/dev/null <<EOF || echo no-write
$big
EOF'
	check "a large here-document read as /dev/stdin${heredoc_write:+, not written}" \
		"$(printf '100001\n%s' "$heredoc_write")" "$OUT"

	# cp -p and a mv from the working folder to /tmp (another mount: a copy) keep the mode
	# through an ACL first; EPERM for it made both fail, EOPNOTSUPP (no ACLs here) is taken.
	box /usr/bin/bash -c 'echo m >m.txt; chmod 640 m.txt; cp -p m.txt /tmp/c.txt && mv m.txt /tmp/m.txt && stat -c %a /tmp/c.txt /tmp/m.txt'
	check "cp -p and mv across mounts keep the mode, quietly" "0 640 640 " "$STATUS $(echo $OUT) $ERR"
	if [ "$(basename "$CBOX_RUN")" = cbox-run ]; then
		# Security: ACLs are not served (the sentry would not enforce them).
		box /usr/bin/python3 -c 'import os; open("a.txt", "w")
for n in ("system.posix_acl_access", "security.capability", "trusted.x"):
    try: os.setxattr("a.txt", n, b"\2\0\0\0"); print(n, "set")
    except OSError as e: print(n, e.strerror)'
		check "ACLs and privileged xattrs cannot be set" "system.posix_acl_access Operation not supported
security.capability Operation not permitted
trusted.x Operation not permitted" "$OUT"
	fi
}

# Owners under cbox-run: every guest id stands for the caller's one host id, and the sentry
# remembers the owners the guest gives (sentry/owners.c), so a root `tar xf` keeps an archive's
# owners and users other than root work, while the host's files stay the caller's.
t_owners() {
	[ "$(basename "$CBOX_RUN")" = cbox-run ] || return
	workdir
	# An archive with other owners, made without privileges.
	"$PY" - <<'PYEOF'
import io, tarfile
with tarfile.open("a.tgz", "w:gz") as t:
    def add(name, kind, mode, uid, gid, data=b"", link=""):
        i = tarfile.TarInfo(name); i.type = kind; i.mode = mode; i.uid = uid; i.gid = gid
        i.size = len(data); i.linkname = link; i.mtime = 1577836800
        t.addfile(i, io.BytesIO(data) if data else None)
    add("d", tarfile.DIRTYPE, 0o755, 1000, 1000)
    add("d/secret", tarfile.REGTYPE, 0o600, 1000, 1000, b"s3cret\n")
    add("d/link", tarfile.SYMTYPE, 0o777, 1000, 1000, link="secret")
    add("g", tarfile.DIRTYPE, 0o2775, 0, 50)
    add("root.txt", tarfile.REGTYPE, 0o644, 0, 0, b"r\n")
PYEOF
	box /usr/bin/bash -c 'mkdir /tmp/x ex && tar xzf a.tgz -C /tmp/x && tar xzf a.tgz -C ex &&
cd /tmp/x && find . -mindepth 1 -printf "%p %U:%G %m %y\n" | sort && cat d/secret &&
touch g/new && stat -c "g/new %u:%g" g/new && grep CapEff /proc/self/status'
	check "tar xf as root keeps the archive's owners; root reads what it gave away" "0
./d 1000:1000 755 d
./d/link 1000:1000 777 l
./d/secret 1000:1000 600 f
./g 0:50 2775 d
./root.txt 0:0 644 f
s3cret
g/new 0:50
CapEff:	00000000000000fb" "$STATUS
$OUT"
	# Security: the host never sees those owners; what the guest made is still the caller's.
	check "the host's files stay the caller's" "$(id -u):$(id -g) $(id -u):$(id -g)" \
		"$(echo $(stat -c %u:%g ex/d/secret ex/g))"

	box /usr/bin/bash -c 'mkdir /tmp/x && tar xzf a.tgz -C /tmp/x && echo r >/tmp/root-only &&
chmod 600 /tmp/root-only && setpriv --reuid=1000 --regid=1000 --clear-groups /usr/bin/bash -c "
id -u; cat /tmp/x/d/secret; cat /tmp/root-only || echo no-read; chown 0 /tmp/x/d/secret || echo no-chown
echo m >/tmp/mine; stat -c %u:%g /tmp/mine; grep CapEff /proc/self/status" 2>&1 | sed "s/^.*: //"
su -s /bin/sh nobody -c "id -un"; chown -R nobody:nogroup /tmp/x; chown root:root /tmp/x/d
stat -c "%U:%G %n" /tmp/x/d /tmp/x/d/secret; rm -rf /tmp/x; mkdir /tmp/x; stat -c "%u:%g" /tmp/x'
	check "another user: its own files, not root's; nobody and back; a removed owner goes" "1000
s3cret
Permission denied
no-read
Operation not permitted
no-chown
1000:1000
CapEff:	0000000000000000
nobody
root:root /tmp/x/d
nobody:nogroup /tmp/x/d/secret
0:0" "$OUT"

	# --user: the program starts as that user, the caller's files (the working folder, HOME)
	# show as its own, and it has no capability; on the host they stay the caller's.
	local cfg=$CFG
	CFG="$cfg -u 1000:1000"
	box /usr/bin/bash -c 'id -u; id -g; echo $(stat -c %u:%g . /tmp/home); echo w >mine
stat -c %u:%g mine; grep CapEff /proc/self/status; python3 -c "import os; os.setuid(0)" 2>&1 | tail -1'
	check "--user 1000:1000: its working folder and HOME, no capability" "1000
1000
1000:1000 1000:1000
1000:1000
CapEff:	0000000000000000
PermissionError: [Errno 1] Operation not permitted" "$OUT"
	check "... what it wrote is the caller's on the host" "$(id -u):$(id -g)" "$(stat -c %u:%g mine)"
	CFG="$cfg -u nobody"
	box id -un
	check "--user by name" nobody "$OUT"
	CFG="$cfg -u no-such-user"
	box id -un
	check "--user of no such user" "125 cbox-run: --user no-such-user: no such user in /etc/passwd" \
		"$STATUS $ERR"
	CFG=$cfg

	# The owner is the file's, whichever name changes it (each name has its own dentry).
	box "$PY" -c 'import os
open("/tmp/f", "w").close(); os.chown("/tmp/f", 104, 204); os.link("/tmp/f", "/tmp/g")
os.chown("/tmp/g", 7, -1); os.chown("/tmp/f", -1, 9); os.unlink("/tmp/f")
st = os.stat("/tmp/g"); print(st.st_uid, st.st_gid, st.st_nlink)'
	check "a chown through one hard link, a chgrp through the other, an unlink" "7 9 1" "$OUT"

	# Security: one guest user cannot read another's environment, memory map, open files or
	# links in /proc (ptrace_may_access): the host would not stop it, every guest task being
	# the same host id. Cmdline and status stay public, as on Linux.
	box /usr/bin/bash -c 'TOKEN=s3cret sleep 5 & p=$!
until [ "$(readlink /proc/$p/exe)" = /usr/bin/sleep ]; do sleep 0.05; done
setpriv --reuid=1000 --regid=1000 --clear-groups /usr/bin/bash -c "
for f in environ maps fdinfo/0 fd/1; do cat /proc/$p/\$f </dev/null >/dev/null 2>&1 && echo \$f read; done
for l in exe cwd root fd/0 ns/net; do readlink /proc/$p/\$l >/dev/null && echo \$l read; done
ls /proc/$p/fd >/dev/null 2>&1 && echo fd listed
tr \"\\0\" \" \" </proc/$p/cmdline; grep -c ^Uid: /proc/$p/status
TOKEN=mine sleep 5 & q=\$!; until [ \"\$(readlink /proc/\$q/exe)\" = /usr/bin/sleep ]; do sleep 0.05; done; tr \"\\0\" \"\\n\" </proc/\$q/environ | grep ^TOKEN; readlink /proc/\$q/exe; kill \$q"
tr "\0" "\n" </proc/$p/environ | grep ^TOKEN; kill $p'
	check "another user's process: no environ, maps, fds or links; its own, and root its own" "sleep 5 1
TOKEN=mine
/usr/bin/sleep
TOKEN=s3cret" "$OUT"

	# Security: another host user's file (unmapped, shown as nobody) is out of the guest root's
	# capabilities, even where the gofer runs as host root and the host would not stop it.
	if [ "$(id -u)" = 0 ]; then
		echo theirs >theirs && chown 4321:4321 theirs && chmod 600 theirs
		box /usr/bin/bash -c 'stat -c %u:%g theirs; for c in "chown 0:0" "chmod 666" cat "chown 5"; do $c theirs 2>&1 | sed "s/^.*: //"; done'
		check "another host user's file: no chown, chmod or read" "65534:65534
Operation not permitted
Operation not permitted
Permission denied
Operation not permitted" "$OUT"
		check "... and it is unchanged" "4321:4321 600
theirs" "$(stat -c '%u:%g %a' theirs; cat theirs)"
	else
		skip_check "another host user's file" "needs root to make one"
	fi
}

# make_repo DIR: a git repository with two commits at fixed dates, made on the host.
make_repo() {
	local g=(env GIT_AUTHOR_NAME=Tester GIT_AUTHOR_EMAIL=t@example.org
		GIT_COMMITTER_NAME=Tester GIT_COMMITTER_EMAIL=t@example.org
		GIT_AUTHOR_DATE=2020-01-01T00:00:00Z GIT_COMMITTER_DATE=2020-01-01T00:00:00Z
		HOME="$WD" git -C "$1")
	git init -q -b main "$1" &&
		echo one >"$1/a.txt" && "${g[@]}" add a.txt && "${g[@]}" commit -qm first &&
		echo two >>"$1/a.txt" && "${g[@]}" commit -qam second
}

t_git() {
	have git /usr/bin/git || return
	workdir
	make_repo repo || {
		report_fail "git fixture" "a repository" "git init/commit failed on the host"
		return
	}
	local log
	log=$(git -C repo log --oneline)
	box git -C ./repo log --oneline
	check "git log --oneline" "$log" "$OUT"

	box git -C ./repo show HEAD~1:a.txt
	check "git show" "one" "$OUT"

	# A commit made inside lands in the working folder's repository.
	box /bin/sh -c 'cd repo && echo three >>a.txt && git status --porcelain &&
		git -c user.name=Box -c user.email=box@example.org commit -qam third &&
		git log --oneline | wc -l'
	check "git status and commit" " M a.txt
3" "$OUT"
	check "the host sees the commit" "third Box" "$(git -C repo log -1 --format='%s %an')"
	check "the host's fsck" "" "$(git -C repo fsck 2>&1)"
}

t_node() {
	have node $NODE /usr/bin/bash || return
	workdir
	box $NODE script.js
	check "node fs, child, worker, timer" "read: written by node
child: 42
worker: 42
timer: done" "$OUT"
	check "node wrote a file" "written by node" "$(cat node-out.txt 2>&1)"

	local cfg=$CFG
	CFG="$cfg --env API_TOKEN"
	API_TOKEN=secret box $NODE -e 'console.log(process.env.API_TOKEN ? "given" : "absent")'
	check "node --env API_TOKEN" "given" "$OUT"
	CFG=$cfg
	API_TOKEN=secret box $NODE -e 'console.log(process.env.API_TOKEN ? "given" : "absent")'
	check "node without --env" "absent" "$OUT"
}

# Tools that read whole trees (du, find, ls -lR, tar) print what the host prints: the sentry reads
# ahead and caches what they look at next (docs/design.md), and none of that may show. The tree
# has a directory of 3000 files (more than one read-ahead batch), nested directories, symlinks
# (to a file, to a directory, dangling), an empty directory, and a file removed and one added
# after the first listing; then the read-only rootfs's /usr/share/doc.
t_tree() {
	workdir
	mkdir -p tree/many tree/a/b/c tree/empty
	local i
	for i in $(seq 1 3000); do printf '%*s' $((i % 50)) '' >"tree/many/f$i"; done
	for i in 1 2 3; do echo "$i" >"tree/a/b/c/n$i"; done
	ln -s ../many/f7 tree/a/tofile
	ln -s b tree/a/todir
	ln -s nowhere tree/a/dangling
	local listing="find tree -printf '%p %s %y %l\n' | LC_ALL=C sort"
	local cmds=("du -a tree" "$listing" "ls -lAR --time-style=+%s tree"
		"tar cf - tree | tar tvf - | LC_ALL=C sort"
		"du -s /usr/share/doc" "find /usr/share/doc -printf '%p %s %y\n' | LC_ALL=C sort")
	# Run by a user, the caller's files are the guest root's (ls and tar would print root as
	# their owner) unless the guest runs as the caller's ids, as it does then here.
	local c cfg=$CFG
	[ "$(id -u)" = 0 ] || CFG="$cfg -u $(id -u):$(id -g)"
	for c in "${cmds[@]}"; do
		box /usr/bin/bash -c "$c"
		check "${c%% *} as the host shows it: $c" "$(bash -c "$c" 2>&1)" "$OUT"
	done
	CFG=$cfg
	# Changed between the listing and the looks: the sandbox's own view stays exact.
	box /usr/bin/bash -c 'exec 3<tree/many; ls tree/many >/dev/null; rm tree/many/f10;
		echo new >tree/many/added; du -a tree/many | LC_ALL=C sort'
	check "du after a removal and an addition" "$(du -a tree/many | LC_ALL=C sort)" "$OUT"
}

# Files the host changes while the sandbox runs: the guest sees each change at its next stat or
# open, as it would outside (an editor saves by renaming a new file over the old one), never the
# old file or ESTALE, although the sentry had the names cached.
# wait_for TEST FILE: until test TEST FILE holds (the guest's signal), 10 s at most.
wait_for() {
	local i
	for i in $(seq 1 200); do
		test "$1" "$2" && return
		sleep 0.05
	done
}

t_host_changes() {
	workdir
	echo old >kept.txt
	echo gone >gone.txt
	echo same >same.txt
	echo m1 >mode.txt
	echo x1 >xattr.txt
	printf '#!/bin/sh\necho v1\n' >prog.sh
	chmod +x prog.sh
	# shellcheck disable=SC2016,SC2086
	timeout -k 5 "$CBOX_TIMEOUT" "$CBOX_RUN" $CFG -- /usr/bin/bash -c '
		cat kept.txt gone.txt same.txt >/dev/null; stat -c %s kept.txt gone.txt >/dev/null
		./prog.sh >/dev/null; chmod 644 mode.txt; cat xattr.txt >/dev/null
		: >ready; while [ ! -e go ]; do sleep 0.05; done
		stat -c %s kept.txt; cat kept.txt; stat gone.txt 2>&1 | grep -c "No such"
		cat gone.txt 2>&1 | grep -c "No such"; cat same.txt; ./prog.sh
		test -e gone.txt || echo gone; test -x same.txt && echo executable
		/usr/bin/python3 -c "import os; os.chmod(\"mode.txt\", 0o600); os.utime(\"mode.txt\", (1e9, 1e9))"
		/usr/bin/python3 -c "import os; os.chmod(\"gone.txt\", 0o600)" 2>&1 | grep -c "No such"
		/usr/bin/python3 -c "import os; os.setxattr(\"xattr.txt\", \"user.k\", b\"v\")"' \
		>"$SCRATCH/hc" 2>&1 &
	local pid=$!
	wait_for -e ready
	echo "new content" >kept.tmp && mv kept.tmp kept.txt
	rm gone.txt
	chmod +x same.txt
	echo m2 >mode.tmp && mv mode.tmp mode.txt
	echo x2 >xattr.tmp && mv xattr.tmp xattr.txt
	printf '#!/bin/sh\necho v2\n' >prog.tmp && chmod +x prog.tmp && mv prog.tmp prog.sh
	: >go
	wait $pid
	check "files the host replaced or removed meanwhile" "12
new content
1
1
same
v2
gone
executable
1" "$(cat "$SCRATCH/hc")"
	# (python's os.chmod and os.utime: no stat first, which would find the change itself)
	check "  ... chmod and utimes by a name the host replaced reach the new file" \
		"600 1000000000 m2" "$(stat -c '%a %Y' mode.txt) $(cat mode.txt)"
	check "  ... and setxattr" "b'v' x2" \
		"$($PY -c 'import os; print(os.getxattr("xattr.txt", "user.k"))' 2>&1) $(cat xattr.txt)"
}

# Directories the host filled, listed and stat'ed entry by entry as du does, or (scattered) not
# listed but some of their files stat'ed by path as git status does: the sentry may answer a stat
# with attributes it read ahead, but never hide a change the guest made since, and a change the
# host made shows once its short attribute time-out (0.1 s) is over.
fill_dirs() {
	local d i
	for d in "$@"; do
		mkdir "$d"
		for i in $(seq -w 0 39); do echo -n a >"$d/f$i"; done
	done
}
t_listed_changes() {
	have python $PY || return
	local mode pid f
	for mode in listed scattered; do
		workdir
		fill_dirs d0 d1 d2 d3 d4 d5 d6 h
		box $PY ./listed_changes.py own $mode
		check "the guest's own changes after a read-ahead ($mode)" "write through an earlier fd: 3
write through a later fd: 4
chmod: 0o600
fchmod: 0o640
truncate: 0
rename over: True 5
through a hard link: 0o604 2" "$OUT"
		# shellcheck disable=SC2086
		timeout -k 5 "$CBOX_TIMEOUT" "$CBOX_RUN" $CFG -- $PY ./listed_changes.py host $mode \
			>"$SCRATCH/lc" 2>&1 &
		pid=$!
		wait_for -s ready
		for f in h/f*; do echo -n more >>"$f"; done
		: >go
		wait $pid
		check "the host's change after a read-ahead, later ($mode)" "host's append, later: 5" \
			"$(cat "$SCRATCH/lc")"
	done
	# stdout a file of the listed directory, opened by the caller (no open of the guest's).
	fill_dirs d7
	# shellcheck disable=SC2086
	timeout -k 5 "$CBOX_TIMEOUT" "$CBOX_RUN" $CFG -- $PY ./listed_changes.py stdout \
		>d7/out 2>"$SCRATCH/lc"
	check "a write to an inherited fd after a listing" "write to an inherited fd: 5" \
		"$(cat "$SCRATCH/lc")"
}

# Files stat'ed again and again (git status on each run), changed by the host meanwhile: past the
# attribute time-out the sentry checks what it kept with its own stat of the name, which shows no
# owners; every change must show all the same (host_restat.py). Run by the caller and, as root,
# by uid 1000; and in a directory the sentry's host identity may not search (0700, root's, run by
# root: the sandbox's host id is nobody), where the gofer answers.
t_host_restat() {
	have python $PY || return
	local who pid f dir as=() chown=""
	for who in caller user locked; do
		workdir
		dir=r
		if [ "$who" != caller ] && [ "$(id -u)" != 0 ]; then
			skip_check "the host's changes to files stat'ed again and again ($who)" \
				"only root can run cbox-run as uid 1000 and own a directory nobody may search"
			continue
		fi
		if [ "$who" = user ]; then
			chmod 711 "$ITEST_TMP"
			chown -R 1000:1000 "$WD"
			as=(setpriv --reuid=1000 --regid=1000 --clear-groups)
		elif [ "$who" = locked ]; then
			dir=locked
			as=()
		fi
		mkdir "$dir"
		[ "$who" = locked ] && chmod 700 "$dir"
		for f in $(seq -w 0 13); do echo -n a >"$dir/f$f"; done
		[ "$who" = user ] && chown -R 1000:1000 "$dir"
		touch -a -d @1000000000 "$dir/f10"
		chown=""
		[ "$(id -u)" = 0 ] && chown="chown"
		# shellcheck disable=SC2086
		timeout -k 5 "$CBOX_TIMEOUT" "${as[@]}" "$CBOX_RUN" $CFG -- $PY ./host_restat.py \
			"$dir" $chown >"$SCRATCH/hr" 2>&1 &
		pid=$!
		wait_for -e ready
		echo -n more >>"$dir/f01"
		chmod 600 "$dir/f02"
		[ -n "$chown" ] && chown 1234:1234 "$dir/f03"
		touch -m -d @1000000000 "$dir/f04"
		echo -n bb >"$dir/f05.new" && mv "$dir/f05.new" "$dir/f05"
		ln "$dir/f06" "$dir/f06.link"
		chmod 644 "$dir/f07"
		rm "$dir/f08"
		echo -n more >>"$dir/f09"
		cat "$dir/f10" >/dev/null
		mkfifo "$dir/f11.new" && mv "$dir/f11.new" "$dir/f11"
		chmod 600 "$dir/f12"
		echo -n n >"$dir/n1"
		echo -n xyz >"$dir/f13.new" && mv "$dir/f13.new" "$dir/f13"
		: >go
		wait $pid
		check "the host's changes to files stat'ed again and again ($who)" \
			"n1 absent: True
n1 absent: True
n1 absent: True
unchanged while the host changed nothing: True
f00 unchanged: True
f01 appended, size: 5
f02 chmod: 0o600
${chown:+f03 chown, owner: 65534 65534 ctime changed: True
}f04 touch -m, mtime: 1000000000 size: 1
f05 replaced: True 2
f06 linked, nlink: 2
f07 chmod to its own mode, ctime changed: True rest unchanged: True
f08 removed: No such file or directory
f09 appended, size by name and by fd: 5 5
f11 replaced by a FIFO, opened: FIFO
f12 made 0600, read: a
n1 made by the host, found: True
f13 replaced while open, the fd's file: True 1 a the name's: True 3
f10 read, access time advanced: True rest unchanged: True" "$(cat "$SCRATCH/hr")"
	done
}

# --env-file, read as docker run reads one: NAME=VALUE as written (quotes kept), NAME alone for
# the caller's value (left out when the caller has none), comments and blank lines skipped, and
# every --env applied after the file's, whatever the order on the command line.
t_env_file() {
	workdir
	printf '# a comment\n\n  A=1\nB=two words = and more\r\nC="quoted"\nD\nE\nF=from the file\nG=\n' \
		>vars.env
	local cfg=$CFG
	CFG="$cfg -e F=from-the-flag --env-file vars.env"
	D=from-the-caller box /usr/bin/bash -c 'for v in A B C D E F G; do echo "$v${!v+ set}=${!v-}"; done'
	CFG=$cfg
	check "--env-file" "A set=1
B set=two words = and more
C set=\"quoted\"
D set=from-the-caller
E=
F set=from-the-flag
G set=" "$OUT"
}

# A symlink the host swaps while the guest runs (ln -sfn, or Kubernetes updating a ConfigMap
# volume through its ..data link): the guest follows and reads the new one within a few seconds,
# in the working folder and in a read-only bind (under the guest's /tmp: a bind needs its mount point).
t_host_symlink() {
	workdir
	mkdir -p a b ro/a ro/b
	echo A >a/x
	echo B >b/x
	echo A >ro/a/x
	echo B >ro/b/x
	ln -s a cur
	ln -s a ro/cur
	# shellcheck disable=SC2016,SC2086
	timeout -k 5 "$CBOX_TIMEOUT" "$CBOX_RUN" $CFG -v "$WD/ro:/tmp/ro:ro" -- /usr/bin/bash -c '
		for p in . /tmp/ro; do cat $p/cur/x; readlink $p/cur; done
		: >ready; while [ ! -e go ]; do sleep 0.05; done; sleep 2.5
		for p in . /tmp/ro; do cat $p/cur/x; readlink $p/cur; done' >"$SCRATCH/hs" 2>&1 &
	local pid=$! d
	wait_for -e ready
	for d in . ro; do ln -s b "$d/cur.new" && mv -T "$d/cur.new" "$d/cur"; done
	: >go
	wait $pid
	check "a symlink the host swapped, followed and read" "A
a
A
a
B
b
B
b" "$(cat "$SCRATCH/hs")"
}

# Files of a read-only mount, whose first open is the walk's (WALKOPEN) and whose later opens
# reopen the fd the sentry keeps: every open is still one of its own (its own offset, its own
# flock lock), with the flags asked for.
t_ro_opens() {
	have python $PY || return
	workdir
	mkdir -p ro/d
	for f in a b c e; do printf 0123456789 >"ro/$f"; done
	: >ro/d/x
	: >ro/d/y
	# shellcheck disable=SC2086
	timeout -k 5 "$CBOX_TIMEOUT" "$CBOX_RUN" $CFG -v "$WD/ro:/tmp/ro:ro" -- \
		$PY ./ro_opens.py /tmp/ro >"$SCRATCH/ro" 2>&1
	check "opens of read-only files, each its own" "offsets: 0123 0123
a: second lock waits
b: lock released by close
O_NONBLOCK: True False False 0123456789
d: ['x', 'y']
d is a directory: True
a for writing: EROFS" "$(cat "$SCRATCH/ro")"
}

# A low fd limit. The gofer holds an fd for every node the sentry caches (up to 4096): under the
# common soft limit of 1024, `find /usr` stopped at EMFILE and `python3 -m venv` failed. The gofer
# and the sentry now raise their soft limit to the hard one, while the guest keeps the caller's;
# under a low hard limit the sentry shrinks its cache when the gofer runs out. The ptrace
# platform's install socket is fd 1022: it needs a hard limit above that, and says so.
t_fd_limit() {
	have python $PY || return
	local stdlib want hard lim
	stdlib=$($PY -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
	want=$(find "$stdlib" -type f | wc -l)
	hard=$(ulimit -Hn)
	for lim in -Sn -n; do
		# shellcheck disable=SC2086
		OUT=$(
			ulimit $lim 64 || exit
			timeout -k 5 "$CBOX_TIMEOUT" "$CBOX_RUN" $CFG -- /bin/sh -c \
				"ulimit -Sn; ulimit -Hn; find $stdlib -type f | wc -l" 2>&1
		)
		local h=$hard
		[ "$lim" = -n ] && h=64
		case "$lim $CFG" in
		*-n*ptrace*)
			check "ulimit -n 64: the ptrace platform says why it cannot run, once" \
				"cbox-run: --platform=ptrace needs a hard fd limit above 1022 (ulimit -Hn), or use --platform=seccomp: Too many open files" \
				"$OUT"
			;;
		*)
			check "ulimit $lim 64: the guest's own limits, all $want files found" "64
$h
$want" "$OUT"
			;;
		esac
	done
	# A file 100 directories deep, then files made in 300 new directories of the working folder,
	# under a hard limit of 256: the gofer's fids (one per cached dentry) meet its limit, and
	# each CREATE or MKDIR that finds it full must have the cache cut and be made again
	# (cbox_vfs_create), now that the sentry answers the missing names itself and no lookup
	# meets the limit first.
	case "$CFG" in *ptrace*) return ;; esac
	workdir
	# shellcheck disable=SC2086
	OUT=$(
		ulimit -n 256 || exit
		timeout -k 5 "$CBOX_TIMEOUT" "$CBOX_RUN" $CFG -- /usr/bin/bash -c \
			'p=.; for i in $(seq 100); do p=$p/d$i; done; mkdir -p $p && echo 0 >$p/f &&
			read -r v <$p/f || exit 1
			for i in $(seq 300); do mkdir -p w/x$i && echo $i >w/x$i/f || exit 1; done
			s=0; for i in $(seq 300); do read -r v <w/x$i/f; s=$((s + v)); done; echo $s' 2>&1
	)
	check "ulimit -n 256: a file 100 directories deep, then 300 new directories with a file each" \
		"45150" "$OUT"
}

# The caller not root, as most users run cbox-run: the sentry then looks the names of read-only
# mounts (the rootfs) up itself instead of asking the gofer (sentry/fs_gofer_local.c),
# and every case here goes through that. The security rules it keeps are tried by attempts that
# must fail: a directory the caller may not search, a hidden file, a read-only parent of a
# writable bind, a symlink to a hidden file; and a file the host replaces must not be served
# from the sentry's cache.
# A read-only file the host replaces (an editor's rename) is read anew once the sentry's
# attributes of it are older than 2 s, not from its kept fd of the old file. $1: the file
# (holding "old"), $2: the check's name, then the cbox-run command line up to its "--".
check_ro_replaced() {
	local f=$1 name=$2 pid
	shift 2
	"$@" /bin/sh -c "cat $f; sleep 3.5; cat $f" >"$SCRATCH/out" 2>&1 &
	pid=$!
	sleep 1
	echo new >"$f.tmp" && mv "$f.tmp" "$f"
	wait $pid
	check "$name" "old
new" "$(cat "$SCRATCH/out")"
}

t_user_caller() {
	if [ "$(id -u)" != 0 ]; then
		skip_check "programs run by a user" \
			"only root can become uid 1000 (run by a user, the cases above already go this way)"
		return
	fi
	have python $PY /usr/bin/gcc /usr/bin/make || return
	workdir
	# The read-only files in /var/tmp: the build may be under /tmp, which the guest does not see.
	local ro w="$ITEST_TMP/w.$$" as=(setpriv --reuid=1000 --regid=1000 --clear-groups)
	ro=$(mktemp -d /var/tmp/cbox-itest.XXXXXX) || return
	chmod 755 "$ro"
	chmod 711 "$ITEST_TMP"
	chown -R 1000:1000 "$WD"
	mkdir -p "$ro/locked" "$ro/pub/own" "$ro/pub/mnt" "$w"
	echo hidden >"$ro/locked/f"
	chmod 700 "$ro/locked"
	echo s3cret >"$ro/pub/secret"
	echo old >"$ro/pub/v"
	echo mine >"$ro/pub/mine"
	chown 1000:1000 "$ro/pub/mine" "$ro/pub/own" "$w"
	ln -s secret "$ro/pub/link"
	local user=("${as[@]}" "$CBOX_RUN" $CFG --hide "$ro/pub/secret" -v "$w:$ro/pub/mnt" --)

	"${user[@]}" /bin/sh -c "$PY analyse.py data.csv && $PY stdlib.py && gcc -O2 -o /tmp/a hello.c && /tmp/a &&
		make -s -C ./proj -j2 && ./proj/prog" >"$SCRATCH/out" 2>&1
	check "python, gcc and make run by a user" "rows=3 total=17 max=gamma
subprocess:12 threads:0,1,4,9 sqlite:3 asyncio:ok socketpair:sp
hello from gcc
sum=5050" "$(cat "$SCRATCH/out")"
	check "the user's out.png and program are the user's" "1000 1000" \
		"$(echo $(stat -c %u out.png proj/prog 2>&1))"

	"${user[@]}" /usr/bin/bash -c "$PY -m venv /tmp/v && /tmp/v/bin/pip install -q --no-index \
		--no-build-isolation ./pkg >/dev/null 2>&1 && /tmp/v/bin/python -c 'import qpkg; print(qpkg.greet(\"u\"))'" \
		>"$SCRATCH/out" 2>&1
	check "venv and pip run by a user" "hello u" "$(cat "$SCRATCH/out")"

	# The owners are the gofer's: root's files are another host user's (65534), the caller's
	# are the guest's root's.
	"${user[@]}" /bin/sh -c "stat -c '%u %g' $PY $ro/pub/mine $ro/pub; cat $ro/pub/mine" \
		>"$SCRATCH/out" 2>&1
	check "owners seen by a user's sandbox" "65534 65534
0 0
65534 65534
mine" "$(cat "$SCRATCH/out")"

	# Must fail: the host refuses the caller the directory, and so the sentry and the gofer.
	"${user[@]}" /bin/sh -c "cat $ro/locked/f || echo no-read; ls $ro/locked || echo no-list" \
		>"$SCRATCH/out" 2>&1
	check "a directory the caller may not search" "no-read
no-list" "$(grep -v 'Permission denied' "$SCRATCH/out")"
	check "  ... is refused with EACCES" "2" "$(grep -c 'Permission denied' "$SCRATCH/out")"

	# Must fail: a hidden file and a symlink to it in a read-only directory show nothing.
	"${user[@]}" /bin/sh -c "cat $ro/pub/secret $ro/pub/link; echo end" >"$SCRATCH/out" 2>&1
	check "a hidden file, directly and through a symlink" "end" "$(cat "$SCRATCH/out")"

	# A writable bind under a read-only directory stays writable; the directory does not, even
	# where the caller owns it.
	"${user[@]}" /bin/sh -c "echo w >$ro/pub/mnt/new && cat $ro/pub/mnt/new
		echo x >$ro/pub/own/x || echo read-only" >"$SCRATCH/out" 2>&1
	check "a writable bind under a read-only directory" "w
read-only" "$(grep -v 'Read-only file system' "$SCRATCH/out")"
	check "  ... and EROFS in the read-only one" "1" "$(grep -c 'Read-only file system' "$SCRATCH/out")"
	check "  ... wrote to the host" "w" "$(cat "$w/new" 2>&1)"

	# The writable working folder, whose names the sentry looks up itself when run by a user
	# (fs_gofer_local.c): git's status (a stat and a read of every file) and a commit, a rename
	# over a file the sentry has looked up, and a file the host replaces while the program runs
	# (read anew at once).
	make_repo repo && chown -R 1000:1000 repo || {
		report_fail "git fixture" "a repository" "git init/commit failed on the host"
		rm -rf "$ro" "$w"
		return
	}
	"${user[@]}" /bin/sh -c 'cd repo && echo three >>a.txt && git status --porcelain &&
		git -c user.name=U -c user.email=u@example.org commit -qam third &&
		git log --oneline | wc -l; echo n >n.tmp; mv n.tmp a.txt; cat a.txt
		echo one >w; sleep 2; cat w' >"$SCRATCH/out" 2>&1 &
	local pid=$!
	sleep 1
	echo two >"$WD/repo/w.tmp" && chown 1000:1000 "$WD/repo/w.tmp" && mv "$WD/repo/w.tmp" "$WD/repo/w"
	wait $pid
	check "git, a rename over a file, a host's rename in a user's working folder" " M a.txt
3
n
two" "$(cat "$SCRATCH/out")"
	check "  ... the host sees the commit" "third U" \
		"$(git -c safe.directory='*' -C repo log -1 --format='%s %an')"

	# An fd's file after its name went to another file, and after the name went: the fd's own
	# (the gofer's to stat); a file the host grows: its new size after the attributes' 100 ms;
	# a directory's fd after the host renamed the directory.
	echo 1234 >"$WD/grow" && chown 1000:1000 "$WD/grow"
	"${user[@]}" $PY -c "import os, time
open('f1', 'w').write('a' * 10)
fd = os.open('f1', os.O_RDONLY)
open('f2', 'w').write('b' * 20)
os.rename('f2', 'f1')
print(os.fstat(fd).st_size, os.stat('f1').st_size)
os.unlink('f1')
print(os.fstat(fd).st_size, os.path.exists('f1'))
print(os.stat('grow').st_size)
os.mkdir('sub')
dfd = os.open('sub', os.O_RDONLY | os.O_DIRECTORY)
open('ready', 'w').close()
while not os.path.exists('done'):
    time.sleep(0.05)
time.sleep(0.2)
print(os.stat('grow').st_size, os.fstat(dfd).st_ino == os.stat('moved').st_ino,
      os.path.exists('sub'))" >"$SCRATCH/out" 2>&1 &
	pid=$!
	local i
	for i in $(seq 100); do [ -e "$WD/ready" ] && break; sleep 0.1; done
	echo 56789 >>"$WD/grow" && mv "$WD/sub" "$WD/moved" && touch "$WD/done"
	wait $pid
	check "fds and names in a user's working folder: replaced, removed, grown and moved by the host" \
		"10 20
10 False
5
11 True False" "$(cat "$SCRATCH/out")"

	# Must fail: another host user's directory in the writable working folder. The sentry's
	# own lookup there is refused (it runs as the caller), and so is the gofer's.
	mkdir -p "$WD/theirs" && echo t >"$WD/theirs/f" && chmod 700 "$WD/theirs"
	"${user[@]}" /bin/sh -c "cat theirs/f || echo no-read; ls theirs || echo no-list
		stat -c %u theirs" >"$SCRATCH/out" 2>&1
	check "another user's directory in a user's working folder" "no-read
no-list
65534" "$(grep -v 'Permission denied' "$SCRATCH/out")"

	check_ro_replaced "$ro/pub/v" "a read-only file the host replaced" "${user[@]}"
	rm -rf "$ro" "$w"
}

# Run by root, the sentry looks names of the read-only root up itself on the gofer's view (the
# root mount idmapped through the sandbox's user namespace, gofer/spawn.c): the owners it shows
# must be the gofer's, and what Linux refuses the guest's root must stay refused.
t_root_view() {
	if [ "$(id -u)" != 0 ]; then
		skip_check "the sentry's lookups run by root" "only a root caller has the gofer's view"
		return
	fi
	workdir
	local ro
	ro=$(mktemp -d /var/tmp/cbox-itest.XXXXXX) || return
	chmod 755 "$ro"
	mkdir -p "$ro/pub" "$ro/locked"
	echo rootonly >"$ro/pub/r600"
	echo theirs >"$ro/pub/u600"
	echo grouped >"$ro/pub/g640"
	echo hidden >"$ro/locked/f"
	echo s3cret >"$ro/pub/secret"
	echo old >"$ro/pub/v"
	ln -s secret "$ro/pub/link"
	chown 1000:1000 "$ro/pub/u600"
	chown 0:1000 "$ro/pub/g640"
	chown -R 1000:1000 "$ro/locked"
	chmod 600 "$ro/pub/r600" "$ro/pub/u600"
	chmod 640 "$ro/pub/g640"
	chmod 700 "$ro/locked"
	local run=("$CBOX_RUN" $CFG --hide "$ro/pub/secret" -v "$ro/pub:/mnt/pub:ro" --)

	# Host root's files are the guest's root's, every other host id is 65534: on the rootfs
	# (the view) as on a read-only bind beside it (the gofer).
	"${run[@]}" /bin/sh -c "stat -c '%u %g' $ro/pub $ro/pub/r600 $ro/pub/u600 $ro/pub/g640 \
		$ro/locked /mnt/pub/r600 /mnt/pub/u600; cat $ro/pub/r600 $ro/pub/g640" >"$SCRATCH/out" 2>&1
	check "owners seen by a root caller's sandbox" "0 0
0 0
65534 65534
0 65534
65534 65534
0 0
65534 65534
rootonly
grouped" "$(cat "$SCRATCH/out")"

	# Must fail: no capability of the guest's root applies to another host user's file or
	# directory, although on the view the sentry's own host id could search and read them.
	"${run[@]}" /bin/sh -c "cat $ro/pub/u600 || echo no-read; ls $ro/locked || echo no-list
		cat $ro/locked/f || echo no-file" >"$SCRATCH/out" 2>&1
	check "another user's files refused to the guest's root" "no-read
no-list
no-file" "$(grep -v 'Permission denied' "$SCRATCH/out")"
	check "  ... with EACCES" "3" "$(grep -c 'Permission denied' "$SCRATCH/out")"

	# O_PATH names them (search permission on the way is all it needs), but must give nothing
	# to read: the seccomp platform's stand-in for an O_PATH fd (sys_file.c path_stand_in) is
	# neither the file nor readable, and /proc/self/fd/N opens the file anew, with the checks.
	"${run[@]}" $PY -c "import os, errno
def e(f):
    try:
        f()
        return 'ok'
    except OSError as x:
        return errno.errorcode[x.errno]
fd = os.open('$ro/pub/u600', os.O_PATH)
dfd = os.open('$ro/locked', os.O_PATH)
print(e(lambda: os.read(fd, 1)), e(lambda: open('/proc/self/fd/%d' % fd).read()),
      e(lambda: os.listdir(dfd)), e(lambda: os.listdir('/proc/self/fd/%d' % dfd)),
      os.fstat(fd).st_size)" >"$SCRATCH/out" 2>&1
	check "O_PATH on another user's file and directory: nothing to read" "EBADF EACCES EBADF EACCES 7" \
		"$(cat "$SCRATCH/out")"

	# Must fail: guest user 1000 is the caller's host id (whose files are then its own), never
	# host user 1000, whose 0600 file it may not read.
	"$CBOX_RUN" $CFG -u 1000 -- /bin/sh -c "stat -c '%u %g' $ro/pub/r600 $ro/pub/u600
		cat $ro/pub/r600; cat $ro/pub/u600 || echo no-read" >"$SCRATCH/out" 2>&1
	check "host user 1000's file refused to guest user 1000" "1000 1000
65534 65534
rootonly
no-read" "$(grep -v 'Permission denied' "$SCRATCH/out")"

	# Must fail: a hidden file, directly and through a symlink, and a write to the read-only
	# root (the view is read-only too).
	"${run[@]}" /bin/sh -c "cat $ro/pub/secret $ro/pub/link; touch $ro/pub/new || echo no-write
		echo end" >"$SCRATCH/out" 2>&1
	check "a hidden file and the read-only root, run by root" "no-write
end" "$(grep -v 'Read-only file system' "$SCRATCH/out")"
	check "  ... nothing written on the host" "no" "$([ -e "$ro/pub/new" ] && echo yes || echo no)"

	# Must fail: through the view the sandbox's host id (nobody) owns root's files, but a host
	# process of that id cannot follow the guest's fds there (/proc/PID/fd: the guest's tasks
	# are in the sandbox's user namespace).
	"${run[@]}" $PY -c "import os, time
d = os.open('$ro/pub', os.O_RDONLY | os.O_DIRECTORY); f = os.open('$ro/pub/r600', os.O_RDONLY)
print(d, f, flush=True); time.sleep(3) # cbox-itest-view-$$" >"$SCRATCH/fds" 2>&1 &
	local pid=$! gpid dfd ffd
	sleep 1.5
	gpid=$(pgrep -f "cbox-itest-view-$$" | tail -1)
	read -r dfd ffd <"$SCRATCH/fds"
	setpriv --reuid=65534 --regid=65534 --clear-groups /bin/sh -c \
		"cat /proc/$gpid/fd/$dfd/r600 /proc/$gpid/fd/$ffd || echo no-read" >"$SCRATCH/out" 2>&1
	wait $pid
	check "the guest's fds closed to a host process of the sandbox's id" "no-read" \
		"$(grep -v 'Permission denied' "$SCRATCH/out")"
	check "  ... which the guest held open" "yes" \
		"$([ -n "$gpid" ] && [ -n "$ffd" ] && echo yes || echo no)"

	check_ro_replaced "$ro/pub/v" "a read-only file the host replaced, run by root" "${run[@]}"
	rm -rf "$ro"
}

# --user takes the supplementary groups that the rootfs's /etc/group lists the user in, as docker
# run -u does (and only without :GROUP), and --group-add adds more (getgroups lists them sorted,
# as Linux keeps them).
t_user_groups() {
	local root cfg=$CFG
	root=$(mktemp -d "$ITEST_TMP/rootfs.XXXXXX")
	mkdir -p "$root/bin" "$root/etc"
	cp "$BB" "$root/bin/busybox"
	printf 'root:x:0:0::/:/bin/sh\nalice:x:1001:1001::/:/bin/sh\n' >"$root/etc/passwd"
	printf 'root:x:0:\nalice:x:1001:\nstaff:x:50:bob,alice\naudio:x:29:bob\nvideo:x:44:alice\n' \
		>"$root/etc/group"
	local u
	for u in "-u alice" "-u 1001" "-u alice:audio" "--group-add video --group-add 7" \
		"-u alice --group-add audio --group-add 50"; do
		CFG="$cfg --rootfs $root $u"
		box /bin/busybox id -G
		check "groups with $u" "$(case $u in
			"-u alice:audio") echo 29 ;;
			"--group-add"*) echo 0 7 44 ;;
			*audio*) echo 1001 29 44 50 ;;
			*) echo 1001 44 50 ;;
			esac)" "$OUT"
	done
	# The ns tier gives them to the host's kernel (process.user.additionalGids); it needs root.
	if [ "$(id -u)" = 0 ]; then
		CFG="--tier=ns --rootfs $root -u alice --group-add 7"
		box /bin/busybox id -G
		check "groups under --tier=ns" "1001 7 44 50" "$OUT"
	else
		skip_check "groups under --tier=ns" "the ns tier needs root"
	fi
	CFG="$cfg --rootfs $root --group-add nosuch"
	box /bin/busybox id -G
	check "--group-add of no such group" "125 cbox-run: --group-add nosuch: no such group in $root/etc/group" \
		"$STATUS $ERR"
	CFG=$cfg
}

# The rootfs's /etc/passwd, /etc/group and /etc/resolv.conf are read by cbox-run on the host
# (as root when run by root), and a rootfs may be an image nobody reviewed: their symlinks must
# resolve inside it, as the guest would resolve them, and only regular files be read
# (cbox_run_rootfs_fopen, runtime-shim/cbox_run_tree.c).
t_rootfs_etc_links() {
	local root host cfg=$CFG
	root=$(mktemp -d "$ITEST_TMP/rootfs.XXXXXX")
	host=$(mktemp -d "$ITEST_TMP/hostfiles.XXXXXX")
	mkdir -p "$root/bin" "$root/etc" "$root/lib"
	cp "$BB" "$root/bin/busybox"
	# A host file outside the rootfs, reached by an absolute symlink: it must not name a user.
	printf 'victim:x:4242:4243::/:/bin/sh\n' >"$host/passwd"
	ln -s "$host/passwd" "$root/etc/passwd"
	CFG="$cfg --rootfs $root -u victim"
	box /bin/busybox id -u
	check "-u through a rootfs symlink to a host file" \
		"125 cbox-run: --user victim: no such user in $root/etc/passwd" "$STATUS $ERR"
	# The same absolute symlink inside the rootfs leads to the rootfs's own file, as in the guest.
	rm "$root/etc/passwd"
	printf 'root:x:0:0::/:/bin/sh\nalice:x:1001:1002::/:/bin/sh\n' >"$root/lib/passwd"
	ln -s /lib/passwd "$root/etc/passwd"
	CFG="$cfg --rootfs $root -u alice"
	box /bin/busybox id -u
	check "-u through a symlink inside the rootfs" "1001" "$OUT"
	# A FIFO (or a device) is no file of entries: cbox-run waited forever on one.
	mkfifo "$root/etc/group"
	CFG="$cfg --rootfs $root --group-add staff"
	CBOX_TIMEOUT=15 box /bin/busybox id -u
	check "--group-add with a FIFO as /etc/group" \
		"125 cbox-run: --group-add staff: no such group in $root/etc/group" "$STATUS $ERR"
	# --network shows the sandbox's own resolv.conf with the rootfs's search line: a FIFO there
	# is no file to read one from (cbox-run waited forever on it), a regular file is.
	if command -v slirp4netns >/dev/null && [ "$(id -u)" = 0 ]; then
		mkfifo "$root/etc/resolv.conf"
		CFG="$cfg --rootfs $root --network slirp4netns"
		CBOX_TIMEOUT=15 box /bin/busybox true
		check "--network with a FIFO as the rootfs's resolv.conf" "0" "$STATUS"
		rm "$root/etc/resolv.conf"
		printf 'search good.example\n' >"$root/etc/resolv.conf"
		box /bin/busybox cat /etc/resolv.conf
		check "--network keeps the rootfs's search line" "nameserver 10.0.2.3
search good.example" "$OUT"
	else
		skip_check "--network with a FIFO as the rootfs's resolv.conf" \
			"--network slirp4netns needs slirp4netns and, here, root (/dev/net/tun)"
	fi
	CFG=$cfg
}

for_each_config t_python t_pip t_gcc_make t_sanitizers t_debuggers t_bash t_owners t_git t_node t_tree t_host_changes \
	t_listed_changes t_host_restat t_env_file t_host_symlink t_ro_opens t_fd_limit t_user_caller t_root_view t_user_groups \
	t_rootfs_etc_links
finish
