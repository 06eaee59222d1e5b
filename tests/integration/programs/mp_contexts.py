# multiprocessing's other start methods, which do not fork the caller: forkserver (a server
# process started once, which the parent reaches through an AF_UNIX socket in a private directory
# of /tmp and hands its pipes with SCM_RIGHTS; Python 3.14's default on Linux) and spawn (a fresh
# interpreter per worker). Each runs a pool, a Queue between two processes, a Manager (a server
# process reached through another AF_UNIX socket) and a shared_memory block (/dev/shm) that a
# child attaches by name and writes.
import multiprocessing
import multiprocessing.shared_memory
import sys


def square(x):
    return x * x


def bump(name):
    shm = multiprocessing.shared_memory.SharedMemory(name=name)
    shm.buf[1] = shm.buf[0] + 1
    shm.close()


def run(method):
    ctx = multiprocessing.get_context(method)
    with ctx.Pool(2) as p:
        pool = sum(p.map(square, range(5)))
    q = ctx.Queue()
    child = ctx.Process(target=q.put, args=(42,))
    child.start()
    got = q.get(timeout=30)
    child.join()
    m = ctx.Manager()
    d = m.dict()
    d["k"] = 7
    managed = d["k"]
    m.shutdown()
    shm = multiprocessing.shared_memory.SharedMemory(create=True, size=64)
    shm.buf[0] = 9
    other = ctx.Process(target=bump, args=(shm.name,))
    other.start()
    other.join()
    seen = shm.buf[1]
    shm.close()
    shm.unlink()
    return "%s:%d,%d,%d,%d,exit=%d" % (method, pool, got, managed, seen, child.exitcode)


if __name__ == "__main__":
    print(" ".join(run(m) for m in sys.argv[1:]))
