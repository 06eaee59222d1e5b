"""Opens of files on a read-only mount, each the first of its file in a new sandbox, and later
ones: the first is the open the walk that found the file made (WALKOPEN), a later one reopens the
fd the sentry keeps. Each must still be an open file description of its own (its offset, its
flock lock), with the flags asked for.

Usage: ro_opens.py DIR, where DIR (read-only) holds a, b, c, e ("0123456789" each) and d/ (x, y).
"""
import errno
import fcntl
import os
import sys

base = sys.argv[1]


def path(name):
    return os.path.join(base, name)


# Two opens of a file: two offsets.
f1 = os.open(path("a"), os.O_RDONLY)
first = os.read(f1, 4)
f2 = os.open(path("a"), os.O_RDONLY)
print("offsets:", first.decode(), os.read(f2, 4).decode())

def try_lock(fd, taken, waits):
    """Print taken when an exclusive flock on fd is granted at once, waits when it would wait."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        print(taken)
    except BlockingIOError:
        print(waits)


# ... and two flock(2) locks: the second waits while the first is held, not once it is closed.
fcntl.flock(f1, fcntl.LOCK_EX)
try_lock(f2, "a: second lock taken while the first is held", "a: second lock waits")
os.close(f1)
fcntl.flock(f2, fcntl.LOCK_EX | fcntl.LOCK_NB)
os.close(f2)

# A lock taken through the first open of b (the walk's own) goes with its close.
f3 = os.open(path("b"), os.O_RDONLY)
fcntl.flock(f3, fcntl.LOCK_EX)
os.close(f3)
f4 = os.open(path("b"), os.O_RDONLY)
try_lock(f4, "b: lock released by close", "b: lock still held after close")
os.close(f4)

# The flags asked for, on a first open and on a later one.
fd = os.open(path("c"), os.O_RDONLY | os.O_NONBLOCK)
nb = bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_NONBLOCK)
fd2 = os.open(path("c"), os.O_RDONLY)
nb2 = bool(fcntl.fcntl(fd2, fcntl.F_GETFL) & os.O_NONBLOCK)
fd3 = os.open(path("e"), os.O_RDONLY)
nb3 = bool(fcntl.fcntl(fd3, fcntl.F_GETFL) & os.O_NONBLOCK)
print("O_NONBLOCK:", nb, nb2, nb3, os.read(fd3, 10).decode())

# A directory, listed and opened.
print("d:", sorted(os.listdir(path("d"))))
dfd = os.open(path("d"), os.O_RDONLY | os.O_DIRECTORY)
print("d is a directory:", os.path.isdir(f"/proc/self/fd/{dfd}"))

# Writing stays refused.
try:
    os.open(path("a"), os.O_WRONLY)
    print("a: opened for writing")
except OSError as e:
    print("a for writing:", errno.errorcode[e.errno])
