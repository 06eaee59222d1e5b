/*
 * System V IPC: shared memory, semaphores, message queues. IPC_PRIVATE keys only, and every
 * object created is removed before the case ends (IPC objects outlive processes).
 */
#include "compat_test.h"

#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
};

static int shm_new(size_t size)
{
	return CT_OK(shmget(IPC_PRIVATE, size, IPC_CREAT | 0600));
}

static void shm_rm(int id)
{
	shmctl(id, IPC_RMID, NULL);
}

/* The id is removed right away: attachments keep the segment alive until they go. */
CT_TEST(shmget, private_create_stat)
{
	int id = shm_new(8192);
	struct shmid_ds ds;
	CT_OK(shmctl(id, IPC_STAT, &ds));
	shm_rm(id);
	CT_EQ(ds.shm_segsz, 8192);
	CT_EQ(ds.shm_perm.mode & 0777, 0600);
	CT_EQ(ds.shm_perm.uid, geteuid());
	CT_EQ(ds.shm_nattch, 0);
	CT_EQ(ds.shm_cpid, getpid());
}

CT_TEST(shmget, missing_key_enoent)
{
	/* A key chosen from the pid is very unlikely to exist; without IPC_CREAT: ENOENT. */
	key_t key = (key_t)(0x7c300000 | (getpid() & 0xfffff));
	CT_ERR(shmget(key, 4096, 0600), ENOENT);
}

CT_TEST(shmget, size_zero_einval)
{
	CT_ERR(shmget(IPC_PRIVATE, 0, IPC_CREAT | 0600), EINVAL);
}

CT_TEST(shmat, shared_with_fork)
{
	int id = shm_new(4096);
	int *p = shmat(id, NULL, 0);
	shm_rm(id);
	CT_TRUE(p != (void *)-1);
	CT_EQ(*p, 0);
	pid_t pid = CT_OK(fork());
	if (pid == 0) {
		*p = 1234;
		_exit(0);
	}
	ct_wait(pid);
	CT_EQ(*p, 1234);
	CT_OK(shmdt(p));
}

CT_TEST(shmat, two_attachments_alias)
{
	int id = shm_new(4096);
	char *a = shmat(id, NULL, 0), *b = shmat(id, NULL, SHM_RDONLY);
	struct shmid_ds ds;
	int r = shmctl(id, IPC_STAT, &ds);
	shm_rm(id);
	CT_TRUE(a != (void *)-1 && b != (void *)-1 && a != b);
	CT_OK(r);
	CT_EQ(ds.shm_nattch, 2);
	a[100] = 'x';
	CT_EQ(b[100], 'x');
}

CT_TEST(shmat, bad_id_einval)
{
	CT_ERR(shmat(-1, NULL, 0), EINVAL);
}

CT_TEST(shmat, unaligned_addr_einval)
{
	int id = shm_new(4096);
	errno = 0;
	void *p = shmat(id, (void *)0x10001, 0);
	int e = errno;
	shm_rm(id);
	CT_TRUE(p == (void *)-1);
	CT_EQ(e, EINVAL);
}

CT_TEST(shmdt, detach_then_segv_free)
{
	int id = shm_new(4096);
	char *p = shmat(id, NULL, 0);
	CT_TRUE(p != (void *)-1);
	CT_OK(shmdt(p));
	struct shmid_ds ds;
	int r = shmctl(id, IPC_STAT, &ds);
	shm_rm(id);
	CT_OK(r);
	CT_EQ(ds.shm_nattch, 0);
}

CT_TEST(shmdt, not_attached_einval)
{
	CT_ERR(shmdt((void *)0x10000), EINVAL);
}

CT_TEST(shmctl, rmid_then_stat_einval)
{
	int id = shm_new(4096);
	CT_OK(shmctl(id, IPC_RMID, NULL));
	struct shmid_ds ds;
	CT_ERR(shmctl(id, IPC_STAT, &ds), EINVAL);
}

CT_TEST(shmctl, set_mode)
{
	int id = shm_new(4096);
	struct shmid_ds ds;
	CT_OK(shmctl(id, IPC_STAT, &ds));
	ds.shm_perm.mode = 0640;
	int r = shmctl(id, IPC_SET, &ds);
	int r2 = shmctl(id, IPC_STAT, &ds);
	shm_rm(id);
	CT_OK(r);
	CT_OK(r2);
	CT_EQ(ds.shm_perm.mode & 0777, 0640);
}

CT_TEST(shmctl, bad_cmd_einval)
{
	int id = shm_new(4096);
	errno = 0;
	int r = shmctl(id, 12345, NULL);
	int e = errno;
	shm_rm(id);
	CT_EQ(r, -1);
	CT_EQ(e, EINVAL);
}

CT_TEST(shmctl, stat_efault)
{
	int id = shm_new(4096);
	errno = 0;
	int r = shmctl(id, IPC_STAT, (struct shmid_ds *)8);
	int e = errno;
	shm_rm(id);
	CT_EQ(r, -1);
	CT_EQ(e, EFAULT);
}

/* ---- semaphores ---- */

static int sem_new(int n)
{
	return CT_OK(semget(IPC_PRIVATE, n, IPC_CREAT | 0600));
}

/* glibc's semop() is semtimedop(..., NULL): call the semop syscall itself. */
static int sys_semop(int id, struct sembuf *ops, size_t n)
{
	return (int)syscall(SYS_semop, id, ops, n);
}

static void sem_rm(int id)
{
	semctl(id, 0, IPC_RMID);
}

CT_TEST(semget, private_nsems)
{
	int id = sem_new(3);
	struct semid_ds ds;
	union semun u = {.buf = &ds};
	int r = semctl(id, 0, IPC_STAT, u);
	sem_rm(id);
	CT_OK(r);
	CT_EQ(ds.sem_nsems, 3);
}

CT_TEST(semget, nsems_negative_einval)
{
	CT_ERR(semget(IPC_PRIVATE, -1, IPC_CREAT | 0600), EINVAL);
}

CT_TEST(semctl, setval_getval)
{
	int id = sem_new(2);
	union semun u = {.val = 5};
	int r = semctl(id, 1, SETVAL, u);
	int v1 = semctl(id, 1, GETVAL), v0 = semctl(id, 0, GETVAL);
	sem_rm(id);
	CT_OK(r);
	CT_EQ(v1, 5);
	CT_EQ(v0, 0);
}

CT_TEST(semctl, setall_getall)
{
	int id = sem_new(3);
	unsigned short in[3] = {1, 2, 3}, out[3] = {0};
	union semun u = {.array = in}, w = {.array = out};
	int r = semctl(id, 0, SETALL, u), r2 = semctl(id, 0, GETALL, w);
	sem_rm(id);
	CT_OK(r);
	CT_OK(r2);
	CT_TRUE(out[0] == 1 && out[1] == 2 && out[2] == 3);
}

CT_TEST(semctl, rmid_then_einval)
{
	int id = sem_new(1);
	CT_OK(semctl(id, 0, IPC_RMID));
	CT_ERR(semctl(id, 0, GETVAL), EINVAL);
}

CT_TEST(semctl, setval_out_of_range_erange)
{
	int id = sem_new(1);
	union semun u = {.val = 40000};
	errno = 0;
	int r = semctl(id, 0, SETVAL, u);
	int e = errno;
	sem_rm(id);
	CT_EQ(r, -1);
	CT_EQ(e, ERANGE);
}

CT_TEST(semop, increment_decrement)
{
	int id = sem_new(1);
	struct sembuf up = {0, 2, 0}, down = {0, -1, 0};
	int r1 = sys_semop(id, &up, 1), r2 = sys_semop(id, &down, 1);
	int v = semctl(id, 0, GETVAL);
	sem_rm(id);
	CT_OK(r1);
	CT_OK(r2);
	CT_EQ(v, 1);
}

CT_TEST(semop, nowait_eagain)
{
	int id = sem_new(1);
	struct sembuf down = {0, -1, IPC_NOWAIT};
	errno = 0;
	int r = sys_semop(id, &down, 1);
	int e = errno;
	sem_rm(id);
	CT_EQ(r, -1);
	CT_EQ(e, EAGAIN);
}

CT_TEST(semop, bad_semnum_efbig)
{
	int id = sem_new(1);
	struct sembuf op = {3, 1, 0};
	errno = 0;
	int r = sys_semop(id, &op, 1);
	int e = errno;
	sem_rm(id);
	CT_EQ(r, -1);
	CT_EQ(e, EFBIG);
}

CT_TEST(semop, wakes_blocked_child)
{
	int id = sem_new(1);
	pid_t pid = fork();
	if (pid == 0) {
		struct sembuf down = {0, -1, 0};
		_exit(sys_semop(id, &down, 1) == 0 ? 0 : 1);
	}
	struct timespec ts = {0, 20 * 1000 * 1000};
	nanosleep(&ts, NULL);
	struct sembuf up = {0, 1, 0};
	int r = sys_semop(id, &up, 1);
	int st = pid > 0 ? ct_wait(pid) : -1;
	sem_rm(id);
	CT_TRUE(pid > 0);
	CT_OK(r);
	CT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

CT_TEST(semop, removed_wakes_eidrm)
{
	int id = sem_new(1);
	pid_t pid = CT_OK(fork());
	if (pid == 0) {
		struct sembuf down = {0, -1, 0};
		_exit(sys_semop(id, &down, 1) == -1 && errno == EIDRM ? 0 : 1);
	}
	struct timespec ts = {0, 20 * 1000 * 1000};
	nanosleep(&ts, NULL);
	sem_rm(id);
	int st = ct_wait(pid);
	CT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

CT_TEST(semtimedop, timeout_eagain)
{
	int id = sem_new(1);
	struct sembuf down = {0, -1, 0};
	struct timespec ts = {0, 10 * 1000 * 1000};
	errno = 0;
	long r = syscall(SYS_semtimedop, id, &down, 1, &ts);
	int e = errno;
	sem_rm(id);
	CT_EQ(r, -1);
	CT_EQ(e, EAGAIN);
}

CT_TEST(semtimedop, succeeds_immediately)
{
	int id = sem_new(1);
	struct sembuf up = {0, 1, 0};
	struct timespec ts = {1, 0};
	long r = syscall(SYS_semtimedop, id, &up, 1, &ts);
	int v = semctl(id, 0, GETVAL);
	sem_rm(id);
	CT_OK(r);
	CT_EQ(v, 1);
}

CT_TEST(semtimedop, bad_timeout_einval)
{
	int id = sem_new(1);
	struct sembuf down = {0, -1, 0};
	struct timespec ts = {0, 2000000000L};
	errno = 0;
	long r = syscall(SYS_semtimedop, id, &down, 1, &ts);
	int e = errno;
	sem_rm(id);
	CT_EQ(r, -1);
	CT_EQ(e, EINVAL);
}

/* ---- message queues ---- */

struct msg {
	long mtype;
	char text[32];
};

static int msg_new(void)
{
	return CT_OK(msgget(IPC_PRIVATE, IPC_CREAT | 0600));
}

static void msg_rm(int id)
{
	msgctl(id, IPC_RMID, NULL);
}

CT_TEST(msgget, private_create_stat)
{
	int id = msg_new();
	struct msqid_ds ds;
	int r = msgctl(id, IPC_STAT, &ds);
	msg_rm(id);
	CT_OK(r);
	CT_EQ(ds.msg_qnum, 0);
	CT_EQ(ds.msg_perm.mode & 0777, 0600);
}

CT_TEST(msgget, excl_private_distinct)
{
	int a = msg_new(), b = msg_new();
	msg_rm(a);
	msg_rm(b);
	CT_TRUE(a != b);
}

CT_TEST(msgsnd, send_receive_fifo)
{
	int id = msg_new();
	struct msg m1 = {1, "one"}, m2 = {1, "two"}, out;
	int r1 = msgsnd(id, &m1, 4, 0), r2 = msgsnd(id, &m2, 4, 0);
	ssize_t n = msgrcv(id, &out, sizeof(out.text), 0, IPC_NOWAIT);
	msg_rm(id);
	CT_OK(r1);
	CT_OK(r2);
	CT_EQ(n, 4);
	CT_STREQ(out.text, "one");
}

CT_TEST(msgsnd, bad_type_einval)
{
	int id = msg_new();
	struct msg m = {0, "x"};
	errno = 0;
	int r = msgsnd(id, &m, 2, 0);
	int e = errno;
	msg_rm(id);
	CT_EQ(r, -1);
	CT_EQ(e, EINVAL);
}

CT_TEST(msgsnd, removed_id_einval)
{
	int id = msg_new();
	msg_rm(id);
	struct msg m = {1, "x"};
	CT_ERR(msgsnd(id, &m, 2, 0), EINVAL);
}

CT_TEST(msgrcv, by_type)
{
	int id = msg_new();
	struct msg a = {1, "a"}, b = {2, "b"}, out;
	msgsnd(id, &a, 2, 0);
	msgsnd(id, &b, 2, 0);
	ssize_t n = msgrcv(id, &out, sizeof(out.text), 2, IPC_NOWAIT);
	long t = out.mtype;
	msg_rm(id);
	CT_EQ(n, 2);
	CT_EQ(t, 2);
	CT_STREQ(out.text, "b");
}

CT_TEST(msgrcv, empty_nowait_enomsg)
{
	int id = msg_new();
	struct msg out;
	errno = 0;
	ssize_t n = msgrcv(id, &out, sizeof(out.text), 0, IPC_NOWAIT);
	int e = errno;
	msg_rm(id);
	CT_EQ(n, -1);
	CT_EQ(e, ENOMSG);
}

CT_TEST(msgrcv, too_big_e2big_and_noerror)
{
	int id = msg_new();
	struct msg m = {1, "abcdefgh"}, out;
	msgsnd(id, &m, 9, 0);
	errno = 0;
	ssize_t n = msgrcv(id, &out, 4, 0, IPC_NOWAIT);
	int e = errno;
	ssize_t n2 = msgrcv(id, &out, 4, 0, IPC_NOWAIT | MSG_NOERROR);
	msg_rm(id);
	CT_EQ(n, -1);
	CT_EQ(e, E2BIG);
	CT_EQ(n2, 4);
	CT_TRUE(memcmp(out.text, "abcd", 4) == 0);
}

CT_TEST(msgrcv, blocked_child_woken)
{
	int id = msg_new();
	pid_t pid = CT_OK(fork());
	if (pid == 0) {
		struct msg out;
		ssize_t n = msgrcv(id, &out, sizeof(out.text), 7, 0);
		_exit(n == 3 && strcmp(out.text, "hi") == 0 ? 0 : 1);
	}
	struct timespec ts = {0, 20 * 1000 * 1000};
	nanosleep(&ts, NULL);
	struct msg m = {7, "hi"};
	int r = msgsnd(id, &m, 3, 0);
	int st = ct_wait(pid);
	msg_rm(id);
	CT_OK(r);
	CT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

CT_TEST(msgctl, stat_counts)
{
	int id = msg_new();
	struct msg m = {1, "abc"};
	msgsnd(id, &m, 4, 0);
	msgsnd(id, &m, 4, 0);
	struct msqid_ds ds;
	int r = msgctl(id, IPC_STAT, &ds);
	msg_rm(id);
	CT_OK(r);
	CT_EQ(ds.msg_qnum, 2);
	CT_EQ(ds.msg_cbytes, 8);
	CT_EQ(ds.msg_lspid, getpid());
}

CT_TEST(msgctl, rmid_twice_einval)
{
	int id = msg_new();
	CT_OK(msgctl(id, IPC_RMID, NULL));
	CT_ERR(msgctl(id, IPC_RMID, NULL), EINVAL);
}

CT_TEST(msgctl, bad_cmd_einval)
{
	int id = msg_new();
	errno = 0;
	int r = msgctl(id, 4242, NULL);
	int e = errno;
	msg_rm(id);
	CT_EQ(r, -1);
	CT_EQ(e, EINVAL);
}
