"""Both ends of test_network.sh's connections.

usage: net_peer.py listen ADDR PORTFILE OUTFILE   (a TCP listener on ADDR, port 0: writes its
           port to PORTFILE, appends what it receives to OUTFILE, runs until killed)
       net_peer.py listen-abstract NAME OUTFILE   (the same on the abstract AF_UNIX name NAME)
       net_peer.py send HOST PORT TEXT             (connects and sends TEXT; prints "sent", or
           the error's strerror)
       net_peer.py send-abstract NAME TEXT         (the same to an abstract AF_UNIX name)
       net_peer.py serve PORT TEXT                  (a TCP listener on every address's PORT:
           prints "listening", sends TEXT to its first client, exits)
       net_peer.py recv HOST PORT                   (connects and prints what it receives, or
           the error's strerror)
       net_peer.py free-port [N]                    (prints a TCP port of 127.0.0.1 free
           with the N-1 after it; N defaults to 1)
       net_peer.py tunnel HOST PORT TEXT            (through the proxy $https_proxy names:
           CONNECT HOST:PORT, then sends TEXT; prints "sent", or the error)
       net_peer.py fetch URL                        (urllib, which follows $http_proxy: prints
           the body, or the error)
       net_peer.py hold PORT                        (listens on 127.0.0.1:PORT, prints "held",
           runs until killed)
"""
import os
import signal
import socket
import sys


def serve(srv, outfile):
    while True:
        conn, _ = srv.accept()
        with conn, open(outfile, "ab") as out:
            while True:
                data = conn.recv(65536)
                if not data:
                    break
                out.write(data)


def send(family, addr, text):
    try:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.settimeout(5)
            s.connect(addr)
            s.sendall(text.encode())
        print("sent")
    except OSError as e:
        print(e.strerror or str(e))


mode = sys.argv[1]
if mode == "listen":
    addr, portfile, outfile = sys.argv[2:5]
    srv = socket.socket()
    srv.bind((addr, 0))
    srv.listen(8)
    with open(portfile + ".tmp", "w") as f:
        f.write(str(srv.getsockname()[1]))
    os.rename(portfile + ".tmp", portfile)
    serve(srv, outfile)
elif mode == "listen-abstract":
    name, outfile = sys.argv[2:4]
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind("\0" + name)
    srv.listen(8)
    serve(srv, outfile)
elif mode == "send":
    send(socket.AF_INET, (sys.argv[2], int(sys.argv[3])), sys.argv[4])
elif mode == "send-abstract":
    send(socket.AF_UNIX, "\0" + sys.argv[2], sys.argv[3])
elif mode == "serve":
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", int(sys.argv[2])))
    srv.listen(1)
    print("listening", flush=True)
    conn, _ = srv.accept()
    with conn:
        conn.sendall(sys.argv[3].encode())
elif mode == "recv":
    try:
        with socket.create_connection((sys.argv[2], int(sys.argv[3])), timeout=5) as s:
            print(s.recv(4096).decode())
    except OSError as e:
        print(e.strerror or str(e))
elif mode == "free-port":
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    for _ in range(100):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        held = []
        try:
            for p in range(port, port + n):
                h = socket.socket()
                held.append(h)
                h.bind(("127.0.0.1", p))
            print(port)
            break
        except OSError:
            pass
        finally:
            for h in held:
                h.close()
elif mode == "tunnel":
    import http.client
    import urllib.parse
    proxy = urllib.parse.urlsplit(os.environ["https_proxy"])
    try:
        conn = http.client.HTTPConnection(proxy.hostname, proxy.port, timeout=10)
        conn.set_tunnel(sys.argv[2], int(sys.argv[3]))
        conn.connect()
        conn.sock.sendall(sys.argv[4].encode())
        conn.close()
        print("sent")
    except OSError as e:
        print(e.strerror or str(e))
elif mode == "fetch":
    import urllib.error
    import urllib.request
    try:
        with urllib.request.urlopen(sys.argv[2], timeout=10) as r:
            print(r.read().decode())
    except urllib.error.HTTPError as e:
        print("HTTP Error %d: %s" % (e.code, e.reason))
    except urllib.error.URLError as e:
        print(getattr(e.reason, "strerror", None) or str(e.reason))
elif mode == "hold":
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", int(sys.argv[2])))
    srv.listen(1)
    print("held", flush=True)
    signal.pause()
else:
    sys.exit("unknown mode " + mode)
