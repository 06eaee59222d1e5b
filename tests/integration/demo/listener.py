"""A listener on 127.0.0.1 that records what it receives: the attacker's drop box.

usage: listener.py PORTFILE OUTFILE   (writes its port to PORTFILE, appends received bytes to
OUTFILE, runs until killed)
"""
import socket
import sys

portfile, outfile = sys.argv[1], sys.argv[2]
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(8)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.getsockname()[1]))
import os

os.rename(portfile + ".tmp", portfile)
while True:
    conn, _ = srv.accept()
    with conn, open(outfile, "ab") as out:
        while True:
            data = conn.recv(65536)
            if not data:
                break
            out.write(data)
