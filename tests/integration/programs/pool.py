# multiprocessing.Pool: worker processes fed through queues guarded by POSIX semaphores
# (sem_open, which lives in /dev/shm).
import multiprocessing


def square(x):
    return x * x


if __name__ == "__main__":
    with multiprocessing.Pool(2) as p:
        print("pool:" + ",".join(map(str, p.map(square, [1, 2, 3]))))
