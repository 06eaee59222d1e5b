#!/usr/bin/python3
"""A directory the host filled, listed and then stat'ed entry by entry as du does (the sentry then
reads the next entries' attributes ahead and may answer their stats from that): the guest's own
changes made since must show at once, and the host's once a short attribute time-out is over.
With "scattered", the directory is not listed: some of its files are stat'ed by their paths, as
git status does (the sentry then reads the whole directory ahead), and the same must hold.

Usage: listed_changes.py own | host | stdout [scattered]. Each case uses a directory d<N> or h
the host made with 40 files of one byte, f00 to f39; prints one line per check (stdout: on
stderr, as stdout is a file of the directory d7 there)."""
import os
import sys
import time


def listed(path):
    """List path through its fd, stat the first entry through that fd; the second entry's path."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    names = [e.name for e in os.scandir(fd)]
    os.stat(names[0], dir_fd=fd, follow_symlinks=False)
    os.close(fd)
    return os.path.join(path, names[1])


def scattered(path):
    """Stat files of path by their paths, nothing listed (the first walk may bring path and the
    first file together; the next two are the misses that read the directory ahead); the path
    of a file not stat'ed yet."""
    for name in ("f05", "f11", "f17"):
        os.stat(os.path.join(path, name), follow_symlinks=False)
    return os.path.join(path, "f29")


PRIME = scattered if sys.argv[2:] == ["scattered"] else listed
NAMES = ["f%02d" % i for i in range(40)]


def own():
    # A write through an fd opened before the listing (on every file: which one is second is
    # known only after the listing).
    early = {n: os.open(os.path.join("d0", n), os.O_WRONLY | os.O_APPEND) for n in NAMES}
    p = PRIME("d0")
    os.write(early[os.path.basename(p)], b"bc")
    print("write through an earlier fd:", os.stat(p).st_size)
    p = PRIME("d1")
    w = os.open(p, os.O_WRONLY | os.O_APPEND)
    os.write(w, b"xyz")
    print("write through a later fd:", os.stat(p).st_size)
    p = PRIME("d2")
    os.chmod(p, 0o600)
    print("chmod:", oct(os.stat(p).st_mode & 0o7777))
    p = PRIME("d3")
    r = os.open(p, os.O_RDONLY)
    os.fchmod(r, 0o640)
    print("fchmod:", oct(os.stat(p).st_mode & 0o7777))
    p = PRIME("d4")
    os.truncate(p, 0)
    print("truncate:", os.stat(p).st_size)
    with open("d5-new", "w") as f:
        f.write("12345")
    ino = os.stat("d5-new").st_ino
    p = PRIME("d5")
    os.rename("d5-new", p)
    st = os.stat(p)
    print("rename over:", st.st_ino == ino, st.st_size)
    p = PRIME("d6")
    os.link(p, "d6-link")
    os.chmod("d6-link", 0o604)
    st = os.stat(p)
    print("through a hard link:", oct(st.st_mode & 0o7777), st.st_nlink)


def host():
    # The guest changes nothing of its own after the listing, which would make the attributes
    # read ahead stale anyway: it says it is ready through a write to a file opened before.
    ready = os.open("ready", os.O_WRONLY | os.O_CREAT, 0o644)
    p = PRIME("h")
    os.write(ready, b"1")
    while not os.path.exists("go"):
        time.sleep(0.02)
    time.sleep(0.3)
    print("host's append, later:", os.stat(p).st_size)


def stdout():
    # stdout is d7/out, which cbox-run's caller opened: no open of the guest's wrote it. The entry
    # listed just before it is stat'ed first, so that it is read ahead.
    fd = os.open("d7", os.O_RDONLY | os.O_DIRECTORY)
    names = [e.name for e in os.scandir(fd)]
    i = names.index("out")
    os.stat(names[i - 1 if i > 0 else i + 1], dir_fd=fd, follow_symlinks=False)
    os.write(1, b"12345")
    print("write to an inherited fd:", os.stat("d7/out").st_size, file=sys.stderr)


{"own": own, "host": host, "stdout": stdout}[sys.argv[1]]()
