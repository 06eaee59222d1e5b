#!/usr/bin/python3
"""Files of the working folder stat'ed again and again, as git status does on each run, which the
host changes meanwhile. Past its short attribute time-out (0.1 s) the sentry checks what it kept
of a file with its own stat of the name (fs_gofer_local.c, cbox_fs_gofer_local_check), which
cannot show owners: every change the host made must show all the same, an owner too.

The sentry also opens such files for reading itself, and answers a lookup of a name that is not
there itself (cbox_fs_gofer_local_open, cbox_fs_gofer_local_absent): a file the host made
unreadable to the sandbox's host id (f12, when run by root) must still open, one the host
replaced by a FIFO (f11) must open as the FIFO it now is without hanging the sandbox, a name
the guest found absent before (n1) must show once the host makes it, and an fd of a file the host
renamed another over (f13) must still stat as its own file.

Usage: host_restat.py DIR [chown]. DIR holds f00 to f13 of one byte each, made by the host; f10's
access time set to 2001 by the host. With "chown" the host gave f03 another owner (root only).
Waits for the file "go" after making "ready"; prints one line per file."""
import os
import stat
import sys
import time

D = sys.argv[1]
NAMES = ["f%02d" % i for i in range(14)]


def path(n):
    return os.path.join(D, n)


def snap():
    return {n: os.stat(path(n), follow_symlinks=False) for n in NAMES}


def same(a, b, skip=()):
    fields = ["st_ino", "st_dev", "st_mode", "st_nlink", "st_uid", "st_gid", "st_size",
              "st_mtime_ns", "st_ctime_ns"]
    return all(getattr(a, f) == getattr(b, f) for f in fields if f not in skip)


# f09 is opened first: a file the guest holds an fd of (a fid) is checked the same way.
fd9 = os.open(path("f09"), os.O_RDONLY)
fd13 = os.open(path("f13"), os.O_RDONLY)
# Three rounds, each past the time-out: the second makes the sentry open the directory for its
# checks, the third is answered by them.
rounds = []
for _ in range(3):
    rounds.append(snap())
    for n in ("f11", "f12"):
        with open(path(n)) as f:
            f.read()
    print("n1 absent:", not os.path.exists(path("n1")))
    time.sleep(0.15)
print("unchanged while the host changed nothing:",
      all(same(rounds[0][n], rounds[2][n]) for n in NAMES))
old = rounds[2]
with open("ready", "w"):
    pass
while not os.path.exists("go"):
    time.sleep(0.02)
time.sleep(0.3)


def st(n):
    try:
        return os.stat(path(n), follow_symlinks=False)
    except OSError as e:
        return e.strerror


new = {n: st(n) for n in NAMES}
print("f00 unchanged:", same(old["f00"], new["f00"]))
print("f01 appended, size:", new["f01"].st_size)
print("f02 chmod:", oct(new["f02"].st_mode & 0o7777))
if sys.argv[2:] == ["chown"]:
    print("f03 chown, owner:", new["f03"].st_uid, new["f03"].st_gid,
          "ctime changed:", new["f03"].st_ctime_ns != old["f03"].st_ctime_ns)
print("f04 touch -m, mtime:", new["f04"].st_mtime_ns // 10**9, "size:", new["f04"].st_size)
print("f05 replaced:", new["f05"].st_ino != old["f05"].st_ino, new["f05"].st_size)
print("f06 linked, nlink:", new["f06"].st_nlink)
print("f07 chmod to its own mode, ctime changed:",
      new["f07"].st_ctime_ns != old["f07"].st_ctime_ns,
      "rest unchanged:", same(old["f07"], new["f07"], skip=("st_ctime_ns",)))
print("f08 removed:", new["f08"])
print("f09 appended, size by name and by fd:", new["f09"].st_size, os.fstat(fd9).st_size)
fd = os.open(path("f11"), os.O_RDONLY | os.O_NONBLOCK)
print("f11 replaced by a FIFO, opened:", "FIFO" if stat.S_ISFIFO(os.fstat(fd).st_mode) else "not")
os.close(fd)
with open(path("f12")) as f:
    print("f12 made 0600, read:", f.read())
print("n1 made by the host, found:", os.path.exists(path("n1")))
st13 = os.fstat(fd13)
print("f13 replaced while open, the fd's file:", st13.st_ino == old["f13"].st_ino, st13.st_size,
      os.read(fd13, 10).decode(), "the name's:", new["f13"].st_ino != old["f13"].st_ino,
      new["f13"].st_size)
print("f10 read, access time advanced:", new["f10"].st_atime_ns > old["f10"].st_atime_ns,
      "rest unchanged:", same(old["f10"], new["f10"]))
