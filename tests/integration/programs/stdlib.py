# Python's standard library on the sentry: a child process, threads, sqlite in a temporary
# directory, asyncio's event loop and a socketpair.
import asyncio
import os
import socket
import sqlite3
import subprocess
import tempfile
import threading

r = []
child = subprocess.run(["/usr/bin/bash", "-c", "echo $((3*4))"], capture_output=True, text=True)
r.append("subprocess:" + child.stdout.strip())
out = []
ts = [threading.Thread(target=lambda i=i: out.append(i * i)) for i in range(4)]
for t in ts:
    t.start()
for t in ts:
    t.join()
r.append("threads:" + ",".join(map(str, sorted(out))))
with tempfile.TemporaryDirectory() as d:
    db = sqlite3.connect(os.path.join(d, "x.db"))
    db.execute("create table t(a)")
    db.executemany("insert into t values (?)", [(1,), (2,)])
    db.commit()
    r.append("sqlite:" + str(db.execute("select sum(a) from t").fetchone()[0]))
    db.close()


async def main():
    await asyncio.sleep(0.01)
    return "ok"


r.append("asyncio:" + asyncio.run(main()))
a, b = socket.socketpair()
a.sendall(b"sp")
r.append("socketpair:" + b.recv(2).decode())
print(" ".join(r))
