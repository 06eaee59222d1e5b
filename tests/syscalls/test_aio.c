/*
 * Linux native AIO (io_setup/io_submit/io_getevents/io_pgetevents/io_cancel/io_destroy) and
 * io_uring_setup argument checks.
 */
#include "compat_test.h"

#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/io_uring.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static aio_context_t ctx_new(unsigned n)
{
	aio_context_t ctx = 0;
	CT_OK(syscall(SYS_io_setup, n, &ctx));
	CT_TRUE(ctx != 0);
	return ctx;
}

static struct iocb cb_rw(int op, int fd, void *buf, size_t len, long long off)
{
	struct iocb cb = {.aio_lio_opcode = (uint16_t)op,
	                  .aio_fildes = (uint32_t)fd,
	                  .aio_buf = (uint64_t)(uintptr_t)buf,
	                  .aio_nbytes = len,
	                  .aio_offset = off,
	                  .aio_data = 0x1234};
	return cb;
}

CT_TEST(io_setup, create_destroy)
{
	aio_context_t ctx = ctx_new(8);
	CT_OK(syscall(SYS_io_destroy, ctx));
}

CT_TEST(io_setup, zero_events_einval)
{
	aio_context_t ctx = 0;
	CT_ERR(syscall(SYS_io_setup, 0, &ctx), EINVAL);
}

CT_TEST(io_setup, nonzero_ctx_einval)
{
	aio_context_t ctx = 1;
	CT_ERR(syscall(SYS_io_setup, 4, &ctx), EINVAL);
}

CT_TEST(io_setup, efault)
{
	CT_ERR(syscall(SYS_io_setup, 4, (aio_context_t *)8), EFAULT);
}

CT_TEST(io_destroy, bad_ctx_einval)
{
	CT_ERR(syscall(SYS_io_destroy, (aio_context_t)0x1000), EINVAL);
}

CT_TEST(io_destroy, twice_einval)
{
	aio_context_t ctx = ctx_new(2);
	CT_OK(syscall(SYS_io_destroy, ctx));
	CT_ERR(syscall(SYS_io_destroy, ctx), EINVAL);
}

CT_TEST(io_submit, pwrite_pread_roundtrip)
{
	int fd = CT_OK(open("f", O_CREAT | O_RDWR, 0600));
	aio_context_t ctx = ctx_new(4);
	struct iocb w = cb_rw(IOCB_CMD_PWRITE, fd, "async!", 6, 0), *list[1] = {&w};
	CT_EQ(syscall(SYS_io_submit, ctx, 1, list), 1);
	struct io_event ev;
	struct timespec ts = {2, 0};
	CT_EQ(syscall(SYS_io_getevents, ctx, 1, 1, &ev, &ts), 1);
	CT_EQ(ev.res, 6);
	CT_EQ(ev.data, 0x1234);
	CT_TRUE(ev.obj == (uint64_t)(uintptr_t)&w);
	char buf[8] = {0};
	struct iocb r = cb_rw(IOCB_CMD_PREAD, fd, buf, 6, 0);
	list[0] = &r;
	CT_EQ(syscall(SYS_io_submit, ctx, 1, list), 1);
	CT_EQ(syscall(SYS_io_getevents, ctx, 1, 1, &ev, &ts), 1);
	CT_EQ(ev.res, 6);
	CT_STREQ(buf, "async!");
	CT_OK(syscall(SYS_io_destroy, ctx));
}

CT_TEST(io_submit, bad_fd_ebadf)
{
	aio_context_t ctx = ctx_new(2);
	char buf[4];
	struct iocb r = cb_rw(IOCB_CMD_PREAD, 999, buf, 4, 0), *list[1] = {&r};
	CT_ERR(syscall(SYS_io_submit, ctx, 1, list), EBADF);
}

CT_TEST(io_submit, bad_opcode_einval)
{
	int fd = CT_OK(open("f", O_CREAT | O_RDWR, 0600));
	aio_context_t ctx = ctx_new(2);
	char buf[4];
	struct iocb r = cb_rw(99, fd, buf, 4, 0), *list[1] = {&r};
	CT_ERR(syscall(SYS_io_submit, ctx, 1, list), EINVAL);
}

CT_TEST(io_submit, negative_nr_einval)
{
	aio_context_t ctx = ctx_new(2);
	struct iocb *list[1] = {NULL};
	CT_ERR(syscall(SYS_io_submit, ctx, -1L, list), EINVAL);
}

CT_TEST(io_submit, bad_ctx_einval)
{
	struct iocb *list[1] = {NULL};
	CT_ERR(syscall(SYS_io_submit, (aio_context_t)0x1000, 1, list), EINVAL);
}

CT_TEST(io_submit, bad_iocb_pointer_efault)
{
	aio_context_t ctx = ctx_new(2);
	struct iocb *list[1] = {(struct iocb *)8};
	CT_ERR(syscall(SYS_io_submit, ctx, 1, list), EFAULT);
}

CT_TEST(io_submit, fsync_and_eventfd_notify)
{
	int fd = CT_OK(open("f", O_CREAT | O_RDWR, 0600));
	int efd = CT_OK(syscall(SYS_eventfd2, 0, 0));
	aio_context_t ctx = ctx_new(2);
	struct iocb w = cb_rw(IOCB_CMD_PWRITE, fd, "x", 1, 0), *list[1] = {&w};
	w.aio_flags = IOCB_FLAG_RESFD;
	w.aio_resfd = (uint32_t)efd;
	CT_EQ(syscall(SYS_io_submit, ctx, 1, list), 1);
	uint64_t n = 0;
	CT_EQ(read(efd, &n, 8), 8);
	CT_EQ(n, 1);
	struct io_event ev;
	CT_EQ(syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL), 1);
	CT_EQ(ev.res, 1);
}

CT_TEST(io_getevents, none_times_out)
{
	aio_context_t ctx = ctx_new(2);
	struct io_event ev;
	struct timespec ts = {0, 10 * 1000 * 1000};
	CT_EQ(syscall(SYS_io_getevents, ctx, 1, 1, &ev, &ts), 0);
	CT_EQ(syscall(SYS_io_getevents, ctx, 0, 1, &ev, &ts), 0);
}

CT_TEST(io_getevents, min_gt_max_einval)
{
	aio_context_t ctx = ctx_new(2);
	struct io_event ev[2];
	struct timespec ts = {0, 0};
	CT_ERR(syscall(SYS_io_getevents, ctx, 2, 1, ev, &ts), EINVAL);
}

CT_TEST(io_getevents, bad_ctx_einval)
{
	struct io_event ev;
	struct timespec ts = {0, 0};
	CT_ERR(syscall(SYS_io_getevents, (aio_context_t)0x1000, 0, 1, &ev, &ts), EINVAL);
}

struct aio_sigset {
	const sigset_t *sigmask;
	size_t sigsetsize;
};

CT_TEST(io_pgetevents, timeout_with_mask)
{
	aio_context_t ctx = ctx_new(2);
	struct io_event ev;
	struct timespec ts = {0, 10 * 1000 * 1000};
	sigset_t m;
	sigemptyset(&m);
	struct aio_sigset ss = {&m, 8};
	CT_EQ(syscall(SYS_io_pgetevents, ctx, 1, 1, &ev, &ts, &ss), 0);
}

CT_TEST(io_pgetevents, completion)
{
	int fd = CT_OK(open("f", O_CREAT | O_RDWR, 0600));
	aio_context_t ctx = ctx_new(2);
	struct iocb w = cb_rw(IOCB_CMD_PWRITE, fd, "pg", 2, 0), *list[1] = {&w};
	CT_EQ(syscall(SYS_io_submit, ctx, 1, list), 1);
	struct io_event ev;
	struct timespec ts = {2, 0};
	CT_EQ(syscall(SYS_io_pgetevents, ctx, 1, 1, &ev, &ts, NULL), 1);
	CT_EQ(ev.res, 2);
}

CT_TEST(io_pgetevents, bad_sigsetsize_einval)
{
	aio_context_t ctx = ctx_new(2);
	struct io_event ev;
	struct timespec ts = {0, 0};
	sigset_t m;
	sigemptyset(&m);
	struct aio_sigset ss = {&m, 3};
	CT_ERR(syscall(SYS_io_pgetevents, ctx, 1, 1, &ev, &ts, &ss), EINVAL);
}

CT_TEST(io_cancel, unknown_iocb_einval)
{
	aio_context_t ctx = ctx_new(2);
	struct iocb cb = cb_rw(IOCB_CMD_PREAD, 0, NULL, 0, 0);
	struct io_event ev;
	CT_ERR(syscall(SYS_io_cancel, ctx, &cb, &ev), EINVAL);
}

CT_TEST(io_cancel, bad_ctx_einval)
{
	struct iocb cb = cb_rw(IOCB_CMD_PREAD, 0, NULL, 0, 0);
	struct io_event ev;
	CT_ERR(syscall(SYS_io_cancel, (aio_context_t)0x1000, &cb, &ev), EINVAL);
}

CT_TEST(io_cancel, completed_iocb_einval)
{
	int fd = CT_OK(open("f", O_CREAT | O_RDWR, 0600));
	aio_context_t ctx = ctx_new(2);
	struct iocb w = cb_rw(IOCB_CMD_PWRITE, fd, "c", 1, 0), *list[1] = {&w};
	CT_EQ(syscall(SYS_io_submit, ctx, 1, list), 1);
	struct io_event ev;
	CT_EQ(syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL), 1);
	CT_ERR(syscall(SYS_io_cancel, ctx, &w, &ev), EINVAL);
}

/* ---- io_uring_setup: argument checks that hold natively whether or not it is enabled ---- */

static long uring(unsigned entries, struct io_uring_params *p)
{
	return syscall(SYS_io_uring_setup, entries, p);
}

/* io_uring may be compiled out (ENOSYS) or disabled by sysctl (EPERM); skip then. */
static void need_uring(void)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	errno = 0;
	long fd = uring(1, &p);
	if (fd < 0 && (errno == ENOSYS || errno == EPERM))
		ct_skip("io_uring unavailable here (%s)", ct_errname(errno));
	if (fd >= 0)
		close((int)fd);
}

CT_TEST(io_uring_setup, zero_entries_einval)
{
	need_uring();
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	CT_ERR(uring(0, &p), EINVAL);
}

CT_TEST(io_uring_setup, null_params_efault)
{
	need_uring();
	CT_ERR(uring(4, NULL), EFAULT);
}

CT_TEST(io_uring_setup, reserved_nonzero_einval)
{
	need_uring();
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	p.resv[0] = 1;
	CT_ERR(uring(4, &p), EINVAL);
}

CT_TEST(io_uring_setup, unknown_flag_einval)
{
	need_uring();
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	p.flags = 1u << 31;
	CT_ERR(uring(4, &p), EINVAL);
}

CT_TEST(io_uring_setup, creates_fd_with_sizes)
{
	need_uring();
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	int fd = CT_OK(uring(3, &p));
	CT_EQ(p.sq_entries, 4); /* rounded up to a power of two */
	CT_TRUE(p.cq_entries >= p.sq_entries);
	CT_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
}
