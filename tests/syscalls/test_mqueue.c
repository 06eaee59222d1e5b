/*
 * POSIX message queues. Names include the pid so parallel runs do not collide; every queue
 * created is unlinked before the case ends.
 */
#include "compat_test.h"

#include <fcntl.h>
#include <mqueue.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char qname[64];

static const char *name(const char *tag)
{
	snprintf(qname, sizeof(qname), "/cbox-ct-%s-%d", tag, (int)getpid());
	return qname;
}

/* Open a fresh queue (4 messages of 64 bytes) and unlink its name right away. */
static int q_new(int oflag)
{
	struct mq_attr a = {.mq_maxmsg = 4, .mq_msgsize = 64};
	const char *n = name("q");
	int q = CT_OK(syscall(SYS_mq_open, n + 1, O_CREAT | O_EXCL | oflag, 0600, &a));
	CT_OK(syscall(SYS_mq_unlink, n + 1));
	return q;
}

static struct timespec in_ms(long ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += ms * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	return ts;
}

CT_TEST(mq_open, create_getattr)
{
	int q = q_new(O_RDWR);
	struct mq_attr a;
	CT_OK(syscall(SYS_mq_getsetattr, q, NULL, &a));
	CT_EQ(a.mq_maxmsg, 4);
	CT_EQ(a.mq_msgsize, 64);
	CT_EQ(a.mq_curmsgs, 0);
}

CT_TEST(mq_open, excl_exists_eexist)
{
	const char *n = name("x");
	struct mq_attr a = {.mq_maxmsg = 2, .mq_msgsize = 16};
	int q = CT_OK(mq_open(n, O_CREAT | O_EXCL | O_RDWR, 0600, &a));
	errno = 0;
	int r = mq_open(n, O_CREAT | O_EXCL | O_RDWR, 0600, &a);
	int e = errno;
	mq_unlink(n);
	mq_close(q);
	CT_EQ(r, -1);
	CT_EQ(e, EEXIST);
}

CT_TEST(mq_open, missing_enoent)
{
	CT_ERR(mq_open(name("missing"), O_RDWR), ENOENT);
}

CT_TEST(mq_open, bad_attr_einval)
{
	struct mq_attr a = {.mq_maxmsg = 0, .mq_msgsize = 16};
	CT_ERR(mq_open(name("bad"), O_CREAT | O_RDWR, 0600, &a), EINVAL);
}

CT_TEST(mq_open, slash_in_name_eacces)
{
	/* The syscall takes the name without its leading '/'; another '/' is refused. */
	CT_ERR(syscall(SYS_mq_open, "a/b", O_CREAT | O_RDWR, 0600, NULL), EACCES);
}

CT_TEST(mq_open, reopen_existing)
{
	const char *n = name("r");
	int q = CT_OK(mq_open(n, O_CREAT | O_RDWR, 0600, NULL));
	int q2 = mq_open(n, O_WRONLY);
	mq_unlink(n);
	CT_OK(q2);
	CT_TRUE(q != q2);
}

CT_TEST(mq_unlink, missing_enoent)
{
	CT_ERR(syscall(SYS_mq_unlink, name("none") + 1), ENOENT);
}

CT_TEST(mq_unlink, then_open_enoent)
{
	const char *n = name("u");
	int q = CT_OK(mq_open(n, O_CREAT | O_RDWR, 0600, NULL));
	CT_OK(syscall(SYS_mq_unlink, n + 1));
	CT_ERR(mq_open(n, O_RDWR), ENOENT);
	mq_close(q);
}

CT_TEST(mq_timedsend, send_receive_priority)
{
	int q = q_new(O_RDWR);
	CT_OK(syscall(SYS_mq_timedsend, q, "low", 4, 1, NULL));
	CT_OK(syscall(SYS_mq_timedsend, q, "high", 5, 9, NULL));
	char buf[64];
	unsigned prio = 0;
	CT_EQ(syscall(SYS_mq_timedreceive, q, buf, sizeof(buf), &prio, NULL), 5);
	CT_STREQ(buf, "high");
	CT_EQ(prio, 9);
	CT_EQ(syscall(SYS_mq_timedreceive, q, buf, sizeof(buf), &prio, NULL), 4);
	CT_STREQ(buf, "low");
}

CT_TEST(mq_timedsend, too_long_emsgsize)
{
	int q = q_new(O_RDWR);
	char big[65] = {0};
	CT_ERR(syscall(SYS_mq_timedsend, q, big, sizeof(big), 0, NULL), EMSGSIZE);
}

CT_TEST(mq_timedsend, full_nonblock_eagain)
{
	int q = q_new(O_RDWR | O_NONBLOCK);
	for (int i = 0; i < 4; i++)
		CT_OK(syscall(SYS_mq_timedsend, q, "m", 1, 0, NULL));
	CT_ERR(syscall(SYS_mq_timedsend, q, "m", 1, 0, NULL), EAGAIN);
}

CT_TEST(mq_timedsend, full_timeout_etimedout)
{
	int q = q_new(O_RDWR);
	for (int i = 0; i < 4; i++)
		CT_OK(syscall(SYS_mq_timedsend, q, "m", 1, 0, NULL));
	struct timespec ts = in_ms(20);
	CT_ERR(syscall(SYS_mq_timedsend, q, "m", 1, 0, &ts), ETIMEDOUT);
}

CT_TEST(mq_timedsend, readonly_ebadf)
{
	int q = q_new(O_RDONLY);
	CT_ERR(syscall(SYS_mq_timedsend, q, "m", 1, 0, NULL), EBADF);
}

CT_TEST(mq_timedreceive, empty_nonblock_eagain)
{
	int q = q_new(O_RDWR | O_NONBLOCK);
	char buf[64];
	CT_ERR(syscall(SYS_mq_timedreceive, q, buf, sizeof(buf), NULL, NULL), EAGAIN);
}

CT_TEST(mq_timedreceive, empty_timeout_etimedout)
{
	int q = q_new(O_RDWR);
	char buf[64];
	struct timespec ts = in_ms(20);
	CT_ERR(syscall(SYS_mq_timedreceive, q, buf, sizeof(buf), NULL, &ts), ETIMEDOUT);
}

CT_TEST(mq_timedreceive, small_buffer_emsgsize)
{
	int q = q_new(O_RDWR);
	CT_OK(syscall(SYS_mq_timedsend, q, "m", 1, 0, NULL));
	char buf[8];
	CT_ERR(syscall(SYS_mq_timedreceive, q, buf, sizeof(buf), NULL, NULL), EMSGSIZE);
}

CT_TEST(mq_timedreceive, bad_timeout_einval)
{
	int q = q_new(O_RDWR);
	char buf[64];
	struct timespec ts = {0, 1000000000L};
	CT_ERR(syscall(SYS_mq_timedreceive, q, buf, sizeof(buf), NULL, &ts), EINVAL);
}

CT_TEST(mq_timedreceive, from_forked_sender)
{
	int q = q_new(O_RDWR);
	pid_t pid = CT_OK(fork());
	if (pid == 0)
		_exit(syscall(SYS_mq_timedsend, q, "kid", 4, 3, NULL) == 0 ? 0 : 1);
	char buf[64];
	struct timespec ts = in_ms(2000);
	CT_EQ(syscall(SYS_mq_timedreceive, q, buf, sizeof(buf), NULL, &ts), 4);
	CT_STREQ(buf, "kid");
	ct_wait(pid);
}

static volatile sig_atomic_t got_sig;

static void on_usr1(int sig)
{
	(void)sig;
	got_sig = 1;
}

CT_TEST(mq_notify, signal_on_arrival)
{
	int q = q_new(O_RDWR);
	signal(SIGUSR1, on_usr1);
	struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1};
	CT_OK(syscall(SYS_mq_notify, q, &ev));
	CT_OK(syscall(SYS_mq_timedsend, q, "n", 1, 0, NULL));
	for (int i = 0; i < 50 && !got_sig; i++) {
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	CT_TRUE(got_sig);
}

CT_TEST(mq_notify, second_registration_ebusy)
{
	int q = q_new(O_RDWR);
	struct sigevent ev = {.sigev_notify = SIGEV_NONE};
	CT_OK(syscall(SYS_mq_notify, q, &ev));
	pid_t pid = CT_OK(fork());
	if (pid == 0)
		_exit(syscall(SYS_mq_notify, q, &ev) == -1 && errno == EBUSY ? 0 : 1);
	int st = ct_wait(pid);
	CT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* Passing NULL removes the registration. */
	CT_OK(syscall(SYS_mq_notify, q, NULL));
}

CT_TEST(mq_notify, bad_fd_ebadf)
{
	struct sigevent ev = {.sigev_notify = SIGEV_NONE};
	CT_ERR(syscall(SYS_mq_notify, 999, &ev), EBADF);
}

CT_TEST(mq_getsetattr, set_nonblock)
{
	int q = q_new(O_RDWR);
	struct mq_attr set = {.mq_flags = O_NONBLOCK}, old, now;
	CT_OK(syscall(SYS_mq_getsetattr, q, &set, &old));
	CT_EQ(old.mq_flags & O_NONBLOCK, 0);
	CT_OK(syscall(SYS_mq_getsetattr, q, NULL, &now));
	CT_EQ(now.mq_flags & O_NONBLOCK, O_NONBLOCK);
	char buf[64];
	CT_ERR(syscall(SYS_mq_timedreceive, q, buf, sizeof(buf), NULL, NULL), EAGAIN);
}

CT_TEST(mq_getsetattr, curmsgs_counts)
{
	int q = q_new(O_RDWR);
	CT_OK(syscall(SYS_mq_timedsend, q, "a", 1, 0, NULL));
	CT_OK(syscall(SYS_mq_timedsend, q, "b", 1, 0, NULL));
	struct mq_attr a;
	CT_OK(syscall(SYS_mq_getsetattr, q, NULL, &a));
	CT_EQ(a.mq_curmsgs, 2);
}

CT_TEST(mq_getsetattr, not_a_queue_ebadf)
{
	struct mq_attr a;
	CT_ERR(syscall(SYS_mq_getsetattr, 0 + 999, NULL, &a), EBADF);
}
