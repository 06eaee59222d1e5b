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
	# Without -t: the caller's terminal is passed as is, but never as a controlling terminal.
	out=$(in_pty "" "$CBOX_RUN" $CFG -- /bin/bash -c 'cat /dev/tty; echo rc=$?')
	check_match "without -t: no controlling terminal (/dev/tty is ENXIO)" \
		"No such device or address" "$out"
}

for_each_config t_tty
finish
