#!/usr/bin/env python3
"""The receiving end of an OCI --console-socket, as containerd's shim: listen on PATH, take one
connection, receive the pty master (SCM_RIGHTS; the payload is its name), print
"name NAME fds N", then copy what the master reads to stdout until the slave side is closed."""
import os
import socket
import sys

path = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
s.listen(1)
s.settimeout(20)
conn, _ = s.accept()
msg, fds, _, _ = socket.recv_fds(conn, 4096, 1)
print("name", msg.decode(), "fds", len(fds), flush=True)
out = b""
while fds:
    try:
        data = os.read(fds[0], 4096)
    except OSError:  # EIO: every slave descriptor is closed
        break
    if not data:
        break
    out += data
sys.stdout.write(out.decode(errors="replace"))
