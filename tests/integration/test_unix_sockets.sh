#!/bin/bash
# AF_UNIX sockets on paths of the guest's tree: bind (made by the gofer), connect, sendto and
# sendmsg (made by the sentry), and the attempts that must fail: a host socket outside the tree, a host socket
# inside it that no guest bound, a symlink that points at "/../..", the read-only rootfs.
. "$(dirname "$0")/lib.sh"
need_root
need_binaries
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY is needed for the guest side"

# Host side: a listening socket in a host dir that is not in the guest's tree (the guest's /tmp
# is an empty tmpfs), and one in the working folder that a host process owns.
OUTSIDE="$SCRATCH/outside"
mkdir -p "$OUTSIDE"
"$PY" - "$OUTSIDE/host.sock" <<'EOF' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(8)
time.sleep(600)
EOF
HOST_PID=$!
trap 'kill $HOST_PID 2>/dev/null; rm -rf "$SCRATCH" "$ITEST_TMP"' EXIT

cat >"$ITEST_TMP/guest.py" <<'EOF'
import errno, os, socket, sys

def err(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))

def connect(path, kind=socket.SOCK_STREAM):
    return err(lambda: socket.socket(socket.AF_UNIX, kind).connect(path))

def bind(path):
    return err(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).bind(path))

os.chdir(sys.argv[1])
cmd = sys.argv[2]
if cmd == "roundtrip":
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind("srv.sock"); s.listen(4)
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.connect(os.path.abspath("srv.sock"))
    a, _ = s.accept()
    c.sendall(b"ping"); print("recv", a.recv(4).decode())
    print("name", s.getsockname(), "peer", c.getpeername())
    print("again", bind("srv.sock"))
elif cmd == "private":
    # A socket made private by the umask (ssh-agent's way), or chmod 0600 then 0700 (tmux's):
    # its owner connects, as on Linux; the peer's credentials are the guest's.
    import struct
    os.umask(0o177)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.bind("/tmp/p.sock"); s.listen(4)
    print("mode", oct(os.stat("/tmp/p.sock").st_mode & 0o777))
    for m in (0o600, 0o700):
        os.chmod("/tmp/p.sock", m)
        print("connect", oct(m), connect("/tmp/p.sock"))
        a, _ = s.accept()
    print("peer uid gid", struct.unpack("3i", a.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[1:])
    os.chmod("/tmp/p.sock", 0o500)
    print("connect 0o500 as root", connect("/tmp/p.sock"))  # CAP_DAC_OVERRIDE, as on Linux
    os.chmod("/tmp/p.sock", 0o600)
    sys.stdout.flush()
    if os.fork() == 0:
        os.setgid(1000); os.setuid(1000)
        print("connect 0o600 as 1000", connect("/tmp/p.sock")); sys.stdout.flush(); os._exit(0)
    os.wait()
elif cmd == "dgram":
    r = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); r.bind("r.sock")
    w = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); w.bind("w.sock")
    w.sendto(b"dg", "r.sock")
    data, addr = r.recvfrom(16)
    print("dgram", data.decode(), addr)
    # sendmsg with the path in msg_name (sd_notify's way), its iovecs gathered, and the reply
    # to the sender's path; then with SCM_CREDENTIALS of its own ids
    import struct
    w.sendmsg([b"s", b"m"], [], 0, os.path.abspath("r.sock"))
    data, addr = r.recvfrom(16)
    r.sendmsg([b"back"], [], 0, addr)
    print("sendmsg", data.decode(), addr, w.recv(16).decode())
    r.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    cred = struct.pack("3i", os.getpid(), os.getuid(), os.getgid())
    w.sendmsg([b"c"], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, cred)], 0, "r.sock")
    data, anc, _, _ = r.recvmsg(16, 64)
    print("sendmsg creds", data.decode(), struct.unpack("3i", anc[0][2])[1:])
    print("sendmsg missing", err(lambda: w.sendmsg([b"x"], [], 0, "none.sock")))
elif cmd == "bigdgram":
    # Datagrams past one gofer request (64 KiB) to a path: whole, in order, and EMSGSIZE past the
    # socket's send buffer, as Linux gives them (the test compares with a run outside).
    r = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); r.bind("big-r.sock")
    w = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    for n in (65536, 65537, 150000, 200000, 400000, 5 << 20):
        data = bytes((i * 7) & 0xff for i in range(min(n, 400000))) * (n // 400000 or 1)
        data = data[:n] if len(data) >= n else data + b"z" * (n - len(data))
        try:
            w.sendto(data, "big-r.sock")
            got = r.recv(n + 1)
            print("big", n, len(got), got == data)
        except OSError as e:
            print("big", n, errno.errorcode.get(e.errno, str(e.errno)))
elif cmd == "escape":
    print("outside", connect(sys.argv[3]))
    d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    print("sendmsg-outside", err(lambda: d.sendmsg([b"leak"], [], 0, sys.argv[3])))
    print("sendmsg-inside-host", err(lambda: d.sendmsg([b"leak"], [], 0, "hostdg.sock")))
    print("sendto-inside-host", err(lambda: d.sendto(b"leak", "hostdg.sock")))
    print("inside-host", connect("hostowned.sock"))
    print("link-connect", connect("esc/host.sock"))
    print("link-bind", bind("esc/new.sock"))
    print("rootfs-bind", bind("/usr/cbox-test.sock"))
    print("file", connect("guest.py"))
EOF

t_unix() {
	local work
	work=$(mktemp -d "$ITEST_TMP/w.XXXXXX")
	cp "$ITEST_TMP/guest.py" "$work/"
	cd "$work" && box "$PY" guest.py "$work" roundtrip; cd "$OLDPWD" || return
	check "bind/connect/accept round trip" "recv ping" "$(echo "$OUT" | grep recv)"
	check "getsockname/getpeername are the guest's paths" \
		"name srv.sock peer srv.sock" "$(echo "$OUT" | grep name)"
	check "bind on a taken name" "again EADDRINUSE" "$(echo "$OUT" | grep again)"
	check "the socket node exists in the working folder" "socket" \
		"$(stat -c %F "$work/srv.sock" 2>&1 | sed 's/^.* //')"

	# (as root the sentry's host identity is nobody, the node's owner root: the connects of the
	# owner of a 0600 socket failed with EACCES, and bind ignored the umask)
	box "$PY" "$work/guest.py" /tmp private
	check "a private socket: the umask, its owner connects, the peer is the guest, another user not" "mode 0o600
connect 0o600 ok
connect 0o700 ok
peer uid gid (0, 0)
connect 0o500 as root ok
connect 0o600 as 1000 EACCES" "$OUT"

	cd "$work" && box "$PY" guest.py "$work" dgram; cd "$OLDPWD" || return
	check "sendto a path, recvfrom the sender's path" "dgram dg w.sock" "$(echo "$OUT" | grep ^dgram)"
	check "sendmsg to a path, the reply by sendmsg to the sender's path" "sendmsg sm w.sock back" \
		"$(echo "$OUT" | grep '^sendmsg [^cm]')"
	check "  ... with SCM_CREDENTIALS of its own ids" "sendmsg creds c (0, 0)" \
		"$(echo "$OUT" | grep '^sendmsg creds')"
	check "  ... to a path that does not exist" "sendmsg missing ENOENT" \
		"$(echo "$OUT" | grep '^sendmsg missing')"

	# (over 64 KiB was EMSGSIZE: the datagram travels in a memfd to the gofer now)
	local native
	native=$(cd "$work" && rm -f big-r.sock && "$PY" guest.py "$work" bigdgram 2>&1)
	rm -f "$work/big-r.sock"
	cd "$work" && box "$PY" guest.py "$work" bigdgram; cd "$OLDPWD" || return
	check "datagrams over 64 KiB to a path: as outside" "$native" "$OUT"
	check_match "  ... (200000 bytes arrive whole)" "^big 200000 200000 True$" "$OUT"

	# Attempts that must fail: nothing outside the tree is reachable, and a host socket in the
	# tree that no guest bound is refused.
	"$PY" -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1)' \
		"$work/hostowned.sock"
	# (and a host datagram socket there, bound by a host process, that logs what it receives)
	"$PY" - "$work/hostdg.sock" "$work.hostdg.log" <<'EOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1])
s.settimeout(30)
try:
    while True:
        open(sys.argv[2], "ab").write(s.recv(100) + b"\n")
except OSError:
    pass
EOF
	local dg_pid=$!
	for _ in $(seq 50); do [ -S "$work/hostdg.sock" ] && break; sleep 0.1; done
	ln -s "/../../..$OUTSIDE" "$work/esc"
	cd "$work" && box "$PY" guest.py "$work" escape "$OUTSIDE/host.sock"; cd "$OLDPWD" || return
	kill "$dg_pid" 2>/dev/null
	wait "$dg_pid" 2>/dev/null
	check "sendmsg to a host socket outside the tree" "sendmsg-outside ENOENT" \
		"$(echo "$OUT" | grep ^sendmsg-outside)"
	check "sendmsg and sendto to a host datagram socket in the tree" "sendmsg-inside-host ECONNREFUSED
sendto-inside-host ECONNREFUSED" "$(echo "$OUT" | grep -- -inside-host)"
	check "  ... which received nothing" "" "$(cat "$work.hostdg.log" 2>/dev/null)"
	rm -f "$work.hostdg.log"
	check "host socket outside the tree" "outside ENOENT" "$(echo "$OUT" | grep ^outside)"
	check "host socket inside the tree" "inside-host ECONNREFUSED" \
		"$(echo "$OUT" | grep ^inside-host)"
	check "connect through a /../.. symlink stays inside" "link-connect ENOENT" \
		"$(echo "$OUT" | grep ^link-connect)"
	check "bind through a /../.. symlink stays inside" "link-bind ENOENT" \
		"$(echo "$OUT" | grep ^link-bind)"
	check "no socket appeared outside" "" "$(ls "$OUTSIDE" | grep -v '^host.sock$')"
	check "bind on the read-only rootfs" "rootfs-bind EROFS" "$(echo "$OUT" | grep ^rootfs)"
	check "connect to a regular file" "file ECONNREFUSED" "$(echo "$OUT" | grep ^file)"
	check_status "guest script status" 0
}

for_each_config t_unix
finish
