#!/bin/bash
# cbox-run -t: the guest gets a pseudo-terminal of the sandbox's own (controlling terminal,
# /dev/tty, /dev/pts/N, ttyname, interactive input, job control), and without -t the guest has
# no controlling terminal.
# The caller's terminal is made by python's pty module.
. "$(dirname "$0")/lib.sh"
need_binaries
command -v python3 >/dev/null || skip "python3 missing"

# in_pty INPUT ARGS...: run ARGS with a terminal on stdin/stdout, typing INPUT after 0.5 s;
# prints what appeared on the terminal (CRs removed), then "status N".
in_pty() {
	python3 - "$@" <<'PY'
import os, pty, select, sys, time
inp, args = sys.argv[1].encode().decode("unicode_escape").encode(), sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(args[0], args)
if inp:
    time.sleep(0.5)
    os.write(fd, inp)
out = b""
while True:
    r, _, _ = select.select([fd], [], [], 10)
    if not r:
        break
    try:
        b = os.read(fd, 4096)
    except OSError:
        break
    if not b:
        break
    out += b
_, st = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace").replace("\r", ""))
print("status", os.waitstatus_to_exitcode(st))
PY
}

t_tty() {
	# shellcheck disable=SC2086
	local out
	out=$(in_pty "" "$CBOX_RUN" $CFG -t -- /bin/bash -c \
		'test -t 0 && echo isatty; tty; ls /dev/pts | wc -l; echo via-dev-tty > /dev/tty;
		 python3 -c "import os; print(os.ttyname(1))"; exit 3')
	check_match "-t: stdin is a terminal" "^isatty$" "$out"
	check_match "-t: tty names /dev/pts/N" "^/dev/pts/[0-9]+$" "$out"
	check_match "-t: /dev/tty is the terminal" "^via-dev-tty$" "$out"
	check_match "-t: ttyname works" "^/dev/pts/[0-9]+$" "$(printf '%s\n' "$out" | sed -n 5p)"
	check_match "-t: the exit status" "^status 3$" "$out"
	out=$(in_pty 'echo typed $((6*7))\nsleep 5 &\njobs\nkill %1\nexit 5\n' "$CBOX_RUN" $CFG -t -- \
		/bin/bash --norc --noprofile -i)
	check_match "-t: interactive input" "typed 42$" "$out"
	check_match "-t: job control" "Running +sleep 5 &" "$out"
	check_match "-t: an interactive shell's exit status" "^status 5$" "$out"
	# A caller's terminal whose input has ended (`script </dev/null` sends ^D into it at
	# once): the guest reads the end of input, and nothing stray reaches the output (the end
	# turned into a NUL at the switch to raw mode, which the guest's terminal echoed as "^@").
	# (a timeout: the end did not reach the guest then, and cat waited)
	out=$(timeout -k 2 20 script -qc "$CBOX_RUN $CFG -t -- /bin/sh -c 'cat; echo after-eof'" \
		/dev/null </dev/null | tr -d '\r' | od -An -c | tr -s ' ')
	check "-t: the caller's input at its end: EOF, nothing stray" " a f t e r - e o f \n" "$out"
	# Without -t: the caller's terminal is passed as is, but never as a controlling terminal.
	out=$(in_pty "" "$CBOX_RUN" $CFG -- /bin/bash -c 'cat /dev/tty; echo rc=$?')
	check_match "without -t: no controlling terminal (/dev/tty is ENXIO)" \
		"No such device or address" "$out"
}

# Pseudo-terminals the guest makes itself (script, expect, pexpect, Python's pty): a devpts
# instance of the sandbox's own. Without it os.openpty() said ENOENT and `script` failed.
t_own_ptys() {
	box python3 -c 'import os, pty
m, s = os.openpty()
print(os.ttyname(s), flush=True)
pid, fd = pty.fork()
if pid == 0:
    print("child", os.ttyname(0), os.open("/dev/tty", os.O_RDWR) > 0, flush=True)
    os._exit(0)
out = b""
while True:
    try:
        d = os.read(fd, 100)
    except OSError:
        break
    if not d:
        break
    out += d
os.waitpid(pid, 0)
print(out.decode().strip())'
	check "openpty, and pty.fork's child with its own /dev/tty" "/dev/pts/0
child /dev/pts/1 True" "$OUT"
	box script -qc 'tty; echo to-tty >/dev/tty' /dev/null
	check "script: a session on a terminal of its own" "/dev/pts/0
to-tty" "$(printf '%s\n' "$OUT" | tr -d '\r')"
	# Security: the sandbox's own instance only (none of the host's terminals is listed), and
	# at most 256 at once, as the host's kernel.pty.max is shared with the host's logins.
	box /bin/ls /dev/pts
	check "/dev/pts lists the sandbox's terminals only" "ptmx" "$OUT"
	box python3 -c 'import os
fds = []
try:
    while True:
        fds.append(os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY))
except OSError as e:
    print(len(fds), e.strerror)'
	check "at most 256 pseudo-terminals" "256 No space left on device" "$OUT"
	# A terminal is its maker's (0620, group tty): another user of the sandbox cannot open it
	# to read what is typed there (the host would let the sentry open any).
	box python3 -c 'import os, subprocess
m, s = os.openpty()
n = os.ttyname(s)
st = os.stat(n)
print(oct(st.st_mode & 0o777), st.st_uid, st.st_gid)
r = subprocess.run(["setpriv", "--reuid=1000", "--regid=1000", "--clear-groups", "python3", "-c",
                    "import os, sys; os.open(sys.argv[1], os.O_RDWR)", n], capture_output=True)
print("other user:", "opened" if r.returncode == 0 else r.stderr.decode().split(": ")[-2])'
	check "another user cannot open a terminal the guest made" "0o620 0 5
other user: [Errno 13] Permission denied" "$OUT"
	# With -t the sandbox's terminal is /dev/pts/0, and the guest's own come after it.
	local out
	out=$(in_pty "" "$CBOX_RUN" $CFG -t -- /bin/bash -c \
		'tty; python3 -c "import os; m, s = os.openpty(); print(os.ttyname(s))"; echo $(ls /dev/pts)')
	check "-t: the terminal is /dev/pts/0, a new one /dev/pts/1" "/dev/pts/0
/dev/pts/1
0 ptmx
status 0" "$out"
}

for_each_config t_tty
for_each_config t_own_ptys
finish
