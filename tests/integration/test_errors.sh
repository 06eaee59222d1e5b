#!/bin/bash
# Errors the sandbox must report as Linux would: missing or non-executable programs, bad guest
# pointers, refused syscalls (logged once), symlink loops, names too long.
. "$(dirname "$0")/lib.sh"
need_binaries

NOEXEC="$ITEST_TMP/not-executable"
printf 'echo should not run\n' >"$NOEXEC"
chmod 644 "$NOEXEC"

# A chain of symlinks: l1 -> target, l(N) -> l(N-1). Linux follows at most 40 links in one
# lookup, so l40 opens and l41 fails with ELOOP.
LINKS="$ITEST_TMP/links"
mkdir -p "$LINKS"
echo data >"$LINKS/target"
ln -s target "$LINKS/l1"
for i in $(seq 2 41); do ln -s "l$((i - 1))" "$LINKS/l$i"; done
ln -s self "$LINKS/self"

EFAULT_NATIVE=$("$GUEST" efault)

# The refused syscall to try: reboot if the table refuses it, else the first refused one.
# Prints "NR NAME ERRNAME", or nothing.
pick_refused() {
	"$CBOX" syscalls --json 2>/dev/null | python3 -c '
import errno, json, sys
rows = json.load(sys.stdin)
if isinstance(rows, dict):
    rows = rows.get("syscalls", [])
ref = [r for r in rows if r.get("level") == "refused"]
ref.sort(key=lambda r: (r.get("name") != "reboot", r.get("nr")))
if ref:
    e = ref[0].get("errno")
    if isinstance(e, int):
        e = errno.errorcode.get(abs(e), str(e))
    print(ref[0]["nr"], ref[0]["name"], e)
'
}
REFUSED=""
if [ -x "${CBOX:-}" ] && command -v python3 >/dev/null; then
	REFUSED=$(pick_refused)
fi

t_errors() {
	box /nonexistent/cbox-no-such-program
	check_status "missing program status" 127
	check_match "missing program message" \
		"cbox-run: /nonexistent/cbox-no-such-program: No such file or directory" "$ERR"

	box cbox-no-such-program-in-path
	check_status "missing program in PATH status" 127
	check_match "missing program in PATH message" "cbox-no-such-program-in-path" "$ERR"

	# A bare name searched in PATH, the way execvp searches it: directories without the name
	# are passed over, a file there that may not run is remembered (126 if nothing else runs),
	# and a later directory still wins. (PATH is the guest's, as cbox-run passes its own:
	# /usr/bin stays last, for timeout.)
	local nx
	nx=$(dirname "$NOEXEC")
	PATH="/cbox-none-1:/cbox-none-2:/usr/bin:/bin" box true
	check_status "a name found after two missing PATH directories" 0
	PATH="$nx:/cbox-none:/usr/bin:/bin" box "$(basename "$NOEXEC")"
	check_status "a name only present without the execute bit" 126
	mkdir -p "$ITEST_TMP/later" # (not under /tmp, which is the guest's own tmpfs)
	cp /bin/true "$ITEST_TMP/later/$(basename "$NOEXEC")"
	PATH="$nx:$ITEST_TMP/later:/usr/bin:/bin" box "$(basename "$NOEXEC")"
	check_status "a name found after one without the execute bit" 0
	# The sentry looks the name up first (guest_init.c, cbox_guest_resolve), which must not
	# change what execve alone would do: a directory of that name is passed over, and a script
	# whose interpreter is missing says ENOENT, so the search goes on.
	mkdir -p "$ITEST_TMP/badinterp" "$ITEST_TMP/dirfirst/cbox-path-prog"
	printf '#!/cbox-no-such-interpreter\n' >"$ITEST_TMP/badinterp/cbox-path-prog"
	printf '#!/bin/sh\necho later-one\n' >"$ITEST_TMP/later/cbox-path-prog"
	chmod 755 "$ITEST_TMP/badinterp/cbox-path-prog" "$ITEST_TMP/later/cbox-path-prog"
	PATH="$ITEST_TMP/dirfirst:$ITEST_TMP/badinterp:$ITEST_TMP/later:/usr/bin:/bin" \
		box cbox-path-prog
	check "a name after a directory and a script without its interpreter" "later-one" "$OUT"
	PATH="$ITEST_TMP/dirfirst:$ITEST_TMP/badinterp:/usr/bin:/bin" box cbox-path-prog
	check_status "  ... and with no later one (the directory: EACCES)" 126

	box "$NOEXEC"
	check_status "non-executable file status" 126
	check_nomatch "non-executable file did not run" "should not run" "$OUT"
	check_match "non-executable file message" "not-executable" "$ERR"

	sh_box "$NOEXEC"
	check_status "non-executable file from the shell" 126

	sh_box "$LINKS/no-such"
	check_status "missing file from the shell" 127

	box "$GUEST" efault
	check "efault cases" "$EFAULT_NATIVE" "$OUT"
	check_status "efault status" 0

	if [ -n "$REFUSED" ]; then
		set -- $REFUSED
		CFG="$CFG --log-level=info" box "$GUEST" refused "$1"
		check "refused $2 returns $3 twice" "$3 $3" "$OUT"
		check "refused $2 logged once" 1 "$(printf '%s\n' "$ERR" | grep -c -w -- "$2")"
	else
		skip_check "refused syscall" "no refused entry from 'cbox syscalls --json' (or no python3)"
	fi

	box "$GUEST" open "$LINKS/l40"
	check "40 symlinks resolve" "open ok" "$OUT"
	box "$GUEST" open "$LINKS/l41"
	check "41 symlinks: ELOOP" "open ELOOP" "$OUT"
	box "$GUEST" open "$LINKS/self"
	check "self-loop: ELOOP" "open ELOOP" "$OUT"
	sh_box "busybox cat $LINKS/l41"
	check_match "cat through 41 links" "Symbolic link loop|Too many levels of symbolic links" "$ERR"

	box "$GUEST" enametoolong
	check "ENAMETOOLONG" "ok enametoolong path ENAMETOOLONG
ok enametoolong component ENAMETOOLONG
ok enametoolong stat ENAMETOOLONG" "$OUT"
}

# Security: a guest may add seccomp filters of its own (they can only restrict it), but never a
# listener, which would let it answer its own syscalls instead of the sentry.
t_seccomp_listener() {
	box "$GUEST" seccomp-listener
	check "a seccomp listener for the guest is refused" "EPERM" "$OUT"
}

# Security: TIOCSTI would type into the caller's terminal after the sandbox is gone. Run with a
# real terminal on stdin (script(1) gives one when available; else /dev/ptmx's slave via python).
t_tiocsti() {
	local out
	out=$(python3 - "$CBOX_RUN" "$GUEST" $CFG <<'PY' 2>&1
import os, pty, sys
cbox_run, guest, cfg = sys.argv[1], sys.argv[2], sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(cbox_run, [cbox_run] + cfg + ["--", guest, "tiocsti"])
out = b""
while True:
    try:
        b = os.read(fd, 1024)
    except OSError:
        break
    if not b:
        break
    out += b
os.waitpid(pid, 0)
print(out.decode(errors="replace").strip())
PY
)
	check "TIOCSTI on the caller's terminal is refused (also with high request bits)" "EPERM EPERM" \
		"$(printf '%s' "$out" | tr -d '\r' | tail -n 1)"
}

# fcntl commands the sentry checks. A lease would let the guest hold up the host's own opens of
# a file (up to 45 s): refused (EINVAL), also when the command has bits above its 32 (the kernel
# ignores them, so the guest filter must too). Directory notification runs on the tree's
# directories (an event for a file made through the sentry), is set on /proc's, and is ENOTDIR
# on a file, as on Linux; other commands run.
t_fcntl_checked() {
	box "$GUEST" fcntl-checked
	check "F_NOTIFY raises its event, F_SETLEASE refused, F_GETFL runs" \
		"notify event high allowed proc allowed file ENOTDIR lease EINVAL EINVAL getfl ok" "$OUT"
}

# Busy text through an fd the sentry did not install: the caller's stdout, appended to the very
# program the guest then runs. Linux refuses that exec (ETXTBSY); the sentry must see the
# inherited writer too (its scan is skipped for files no guest task holds for writing).
t_etxtbsy_inherited() {
	local dir="$SCRATCH/txtbsy"
	rm -rf "$dir" && mkdir -p "$dir" && cp /bin/true "$dir/prog"
	# shellcheck disable=SC2086
	(cd "$dir" && timeout -k 5 "$CBOX_TIMEOUT" "$CBOX_RUN" $CFG -- "$BB" sh -c \
		'./prog; echo "rc=$?" >&2; cp ./prog ./copy; ./copy; echo "copy=$?" >&2' \
		>>prog 2>"$dir/err" </dev/null)
	STATUS=$?
	OUT=$(grep -E '^(rc|copy)=' "$dir/err" | tr '\n' ' ')
	ERR=$(cat "$dir/err")
	check "exec of a file the caller's stdout writes to is ETXTBSY; a copy runs" \
		"rc=126 copy=0 " "$OUT"
}

# The program starts as a fresh process would, whatever its caller ignored: a signal cbox-run
# was started with ignored (a shell's trap '', nohup's SIGHUP) is at its default inside (the
# guest task resets the ignored and caught ones its /proc/self/status lists, guest_init.c).
t_signals_default() {
	trap '' USR1 HUP
	box "$BB" sh -c 'kill -USR1 $$; echo survived'
	local usr1="$STATUS $OUT"
	box "$BB" sh -c 'kill -HUP $$; echo survived'
	trap - USR1 HUP
	check "a signal the caller ignored kills the program (default action)" "138 " "$usr1"
	check "  ... and another one" "129 " "$STATUS $OUT"
}

# A signal that arrives while a trapped call waits for the sentry must not turn into EINTR for
# calls that never give it on Linux (the kernel's wait for the sentry is interruptible).
t_eintr() {
	box "$GUEST" eintr
	check "no EINTR from pipe, close and open while SIGCHLD arrives" "calls 800 EINTR 0" "$OUT"
}

# clone3's flags live in guest memory. Another thread flips them between a plain fork and
# CLONE_NEWUSER; natively some children land in a new user namespace (the control: the race is
# real), in the sandbox none may (the sentry checks one copy and the host runs that copy).
CFG=native check_match "the clone3 race reaches a user namespace natively" ' newuser [1-9]' \
	"$("$GUEST" clone3-race)"
t_clone3_race() {
	box "$GUEST" clone3-race
	check_match "no clone3 child in a new user namespace while its flags race" \
		'^calls 2000 ok [0-9]+ eperm [1-9][0-9]* newuser 0$' "$OUT"
}

# eBPF maps and perf counters live in the host kernel: valid requests that open natively (as
# root) must be EPERM in the sandbox.
if [ "$(id -u)" = 0 ]; then
	CFG=native check "a bpf map and a perf counter open natively (root)" \
		"$(printf 'bpf_map_create OK\nperf_event_open OK')" "$("$GUEST" bpf-perf)"
fi
t_bpf_perf() {
	box "$GUEST" bpf-perf
	check "no bpf map and no perf counter in the sandbox" \
		"$(printf 'bpf_map_create EPERM\nperf_event_open EPERM')" "$OUT"
}

# The gofer's set-up fails (a rootfs without /tmp for the sandbox's tmpfs, whose root holds too
# many entries to make room for it) while the sentry's namespaces are already made (cbox-run
# overlaps the two): cbox-run must report the gofer's error, exit 125 and leave no sentry behind.
t_gofer_setup() {
	[ "$(basename "$CBOX_RUN")" = cbox-run ] || { skip_check "gofer set-up failure" "not cbox-run"; return; }
	local root="$ITEST_TMP/crowded-root"
	mkdir -p "$root"
	local i
	for i in $(seq 1 300); do : >"$root/f$i"; done
	# shellcheck disable=SC2086
	timeout -k 5 "$CBOX_TIMEOUT" "$CBOX_RUN" $CFG --rootfs "$root" -- /bin/true \
		>"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null
	STATUS=$?
	ERR=$(cat "$SCRATCH/err")
	check_status "a gofer set-up failure" 125
	check_match "  ... reported with the gofer's reason" "starting the gofer: gofer: mount point /tmp: it does not exist in the guest's tree" "$ERR"
	check "  ... and no sandbox process is left" "" "$(pgrep -f -- "--rootfs $root" | grep -v "^$$\$")"
}

# A sentry that fails during its own set-up: cbox-run run under strace -f, so that the sentry
# cannot trace the guest (EPERM). cbox-run must say so and exit 125, not die of SIGPIPE (141)
# on its next message to the gone sentry, which it did.
t_sentry_setup() {
	[ "$(basename "$CBOX_RUN")" = cbox-run ] || { skip_check "sentry set-up failure" "not cbox-run"; return; }
	command -v strace >/dev/null || { skip_check "sentry set-up failure" "strace missing (Debian package strace)"; return; }
	# (LeakSanitizer cannot run under ptrace: leak checks off for this one run.)
	# shellcheck disable=SC2086
	ASAN_OPTIONS=detect_leaks=0 timeout -k 5 "$CBOX_TIMEOUT" strace -f -o /dev/null \
		"$CBOX_RUN" $CFG -- /bin/true >"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null
	STATUS=$?
	ERR=$(cat "$SCRATCH/err")
	check_status "a sentry set-up failure" 125
	check_match "  ... reported with the sentry's reason" "starting the guest: Operation not permitted" "$ERR"
}

# cbox-run started in a directory that was removed: the program starts in / (there is no
# working folder to bind), and cbox-run says so instead of doing it silently.
t_removed_cwd() {
	[ "$(basename "$CBOX_RUN")" = cbox-run ] || { skip_check "removed cwd" "not cbox-run"; return; }
	local d="$ITEST_TMP/gone.$$"
	mkdir -p "$d"
	# shellcheck disable=SC2086
	(cd "$d" && rmdir "$d" && timeout -k 5 "$CBOX_TIMEOUT" "$CBOX_RUN" $CFG -- /bin/busybox pwd \
		>"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null)
	STATUS=$?
	check "a removed current directory: the program starts in /" "0 /" "$STATUS $(cat "$SCRATCH/out")"
	check_match "  ... and cbox-run says why" "the current directory cannot be named" "$(cat "$SCRATCH/err")"
}

# A small stack limit (ulimit -s) is the caller's, and the sentry and gofer run under it too:
# a request buffer of theirs on the stack (68 KiB, twice in the gofer) made the gofer die at
# 128 KiB ("reading the root file system from the gofer: Input/output error").
t_small_stack() {
	(
		ulimit -S -s 128 || exit 1
		box "$BB" echo small-stack
		printf '%s\n' "$STATUS" "$OUT" >"$SCRATCH/stack"
	)
	check "a stack limit of 128 KiB: the program runs" "0 small-stack" "$(tr '\n' ' ' <"$SCRATCH/stack" | sed 's/ $//')"
}

# The command line itself (no sandbox is made): a mistake gets its message and a pointer to
# --help, as GNU tools and docker answer one, not the whole help; --version and --help go to
# stdout with status 0.
t_command_line() {
	[ "$(basename "$CBOX_RUN")" = cbox-run ] || { skip_check "command line" "not cbox-run"; return; }
	"$CBOX_RUN" --no-such-option -- /bin/true >"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null
	STATUS=$?
	ERR=$(cat "$SCRATCH/err")
	check_status "an unknown option: status 125" 125
	check_match "  ... named" "unrecognized option '--no-such-option'" "$ERR"
	check_match "  ... with a pointer to --help" "^Try 'cbox-run --help' for more information\.$" "$ERR"
	check "  ... in three lines, not the whole help" 3 "$(printf '%s\n' "$ERR" | wc -l)"
	check "  ... and nothing on stdout" "" "$(cat "$SCRATCH/out")"
	"$CBOX_RUN" >"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null
	STATUS=$?
	ERR=$(cat "$SCRATCH/err")
	check_status "no program: status 125" 125
	check_match "  ... said" "^cbox-run: no program given$" "$ERR"
	check_match "  ... with the pointer to --help" "^Try 'cbox-run --help'" "$ERR"
	printf 'OK=1\nA B=1\n' >"$SCRATCH/bad.env"
	"$CBOX_RUN" --env-file "$SCRATCH/bad.env" -- /bin/true >"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null
	STATUS=$?
	check_status "an --env-file with white space in a name: status 125" 125
	check_match "  ... said, with its line" "--env-file .*bad.env: line 2: the variable name 'A B' contains white space" \
		"$(cat "$SCRATCH/err")"
	"$CBOX_RUN" --env-file "$SCRATCH/none.env" -- /bin/true >"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null
	STATUS=$?
	check_status "a missing --env-file: status 125" 125
	check_match "  ... said" "--env-file .*none.env: No such file or directory" "$(cat "$SCRATCH/err")"
	# A volume where the sentry's own /proc, /sys or /dev would cover it, or at the root: it
	# never showed (the ns tier failed to start), so both tiers refuse it by name; the guest
	# path is cleaned first, as runc cleans a destination.
	local v
	for v in /proc/x /sys/x /dev/x /tmp/../dev/y /; do
		"$CBOX_RUN" -v "$SCRATCH:$v" -- /bin/true >"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null
		STATUS=$?
		check "-v to $v: status 125, said" \
			"125 cbox-run: -v $SCRATCH:$v: no volume at $(realpath -m "$v")" \
			"$STATUS $(sed 's/: [^:]*$//' "$SCRATCH/err")"
	done
	"$CBOX_RUN" -v "$SCRATCH:/dev/shm/vol" -- /bin/true >"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null
	check "-v below /dev/shm is taken" 0 "$?"
	local out
	out=$("$CBOX_RUN" --version 2>&1)
	check "--version: status 0" 0 "$?"
	check_match "  ... prints the version" "^cbox-run version [0-9]+\.[0-9]+\.[0-9]+$" "$out"
	out=$("$CBOX_RUN" --help 2>/dev/null)
	check "--help: status 0" 0 "$?"
	check_match "  ... prints the usage on stdout" "^Usage: cbox-run \[OPTIONS\] -- PROGRAM" "$out"
	check_match "  ... which lists --version" "^  --version " "$out"
}

t_command_line
for_each_config t_errors t_seccomp_listener t_tiocsti t_fcntl_checked t_etxtbsy_inherited t_signals_default t_eintr t_clone3_race t_bpf_perf t_gofer_setup t_sentry_setup t_removed_cwd t_small_stack
finish
