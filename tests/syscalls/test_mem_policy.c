/*
 * Memory syscalls beyond the mapping basics: protection keys, memfd_secret, process_madvise,
 * NUMA policy queries (mbind, set/get_mempolicy, migrate_pages, move_pages), userfaultfd.
 */
#include "compat_test.h"

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MPOL_DEFAULT
#define MPOL_DEFAULT 0
#endif
#ifndef MPOL_F_ADDR
#define MPOL_F_ADDR (1 << 1)
#endif

static long pg(void)
{
	return sysconf(_SC_PAGESIZE);
}

static char *anon(long pages)
{
	char *p =
	    mmap(NULL, pages * pg(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		CT_FAIL("mmap anon: %s", ct_errname(errno));
	return p;
}

/* Run fn(arg) in a child (no core dump) and return its wait status. */
static int in_child(void (*fn)(char *), char *arg)
{
	pid_t pid = CT_OK(fork());
	if (pid == 0) {
		struct rlimit no_core = {0, 0};
		setrlimit(RLIMIT_CORE, &no_core);
		fn(arg);
		_exit(0);
	}
	return ct_wait(pid);
}

static void touch_write(char *p)
{
	*(volatile char *)p = 1;
}

/* CT_ERR for a result already computed (errno saved by the caller's call). */
#define CT_ERR_SAVED(r, e)                                                                         \
	do {                                                                                       \
		int ct_se_ = errno;                                                                \
		if ((r) != -1 || ct_se_ != (e))                                                    \
			CT_FAIL("%s: expected -1/%s, got %ld/%s", #r, ct_errname(e), (long)(r),    \
			        ct_errname(ct_se_));                                               \
	} while (0)

#define CT_SIGNALED(st, sig) CT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == (sig))

/* ---- protection keys ---- */

CT_TEST(pkey_alloc, alloc_free)
{
	long k = syscall(SYS_pkey_alloc, 0, 0);
	if (k < 0 && (errno == EINVAL || errno == ENOSPC || errno == ENOSYS))
		ct_skip("protection keys unsupported here (%s)", ct_errname(errno));
	CT_TRUE(k > 0);
	CT_OK(syscall(SYS_pkey_free, k));
}

CT_TEST(pkey_alloc, bad_flags_einval)
{
	errno = 0;
	long r = syscall(SYS_pkey_alloc, 1, 0);
	if (r < 0 && errno == ENOSYS)
		ct_skip("pkey_alloc not built in");
	CT_ERR_SAVED(r, EINVAL);
}

CT_TEST(pkey_free, unallocated_einval)
{
	errno = 0;
	long r = syscall(SYS_pkey_free, 7);
	if (r < 0 && errno == ENOSYS)
		ct_skip("pkey_free not built in");
	CT_ERR_SAVED(r, EINVAL);
}

CT_TEST(pkey_free, negative_key_einval)
{
	errno = 0;
	long r = syscall(SYS_pkey_free, -1);
	if (r < 0 && errno == ENOSYS)
		ct_skip("pkey_free not built in");
	CT_ERR_SAVED(r, EINVAL);
}

CT_TEST(pkey_mprotect, default_key_like_mprotect)
{
	char *p = anon(1);
	errno = 0;
	long r = syscall(SYS_pkey_mprotect, p, pg(), PROT_READ, -1);
	if (r < 0 && errno == ENOSYS)
		ct_skip("pkey_mprotect not built in");
	CT_OK(r);
	int st = in_child(touch_write, p);
	CT_SIGNALED(st, SIGSEGV);
}

CT_TEST(pkey_mprotect, unallocated_key_einval)
{
	char *p = anon(1);
	errno = 0;
	long r = syscall(SYS_pkey_mprotect, p, pg(), PROT_READ, 9);
	if (r < 0 && errno == ENOSYS)
		ct_skip("pkey_mprotect not built in");
	CT_ERR_SAVED(r, EINVAL);
}

/* ---- memfd_secret ---- */

CT_TEST(memfd_secret, works_or_enosys)
{
	errno = 0;
	long fd = syscall(SYS_memfd_secret, 0);
	if (fd < 0 && errno == ENOSYS)
		ct_skip("memfd_secret not enabled (ENOSYS, as documented)");
	if (fd < 0)
		CT_FAIL("memfd_secret(0): got -1/%s, expected an fd or ENOSYS", ct_errname(errno));
	CT_OK(ftruncate(fd, pg()));
	char *p = mmap(NULL, pg(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CT_TRUE(p != MAP_FAILED);
	p[0] = 's';
	CT_EQ(p[0], 's');
}

CT_TEST(memfd_secret, bad_flags_einval)
{
	errno = 0;
	long r = syscall(SYS_memfd_secret, 0x100);
	if (r < 0 && errno == ENOSYS)
		ct_skip("memfd_secret not enabled (ENOSYS, as documented)");
	CT_ERR_SAVED(r, EINVAL);
}

/* ---- process_madvise ---- */

CT_TEST(process_madvise, self_cold)
{
	char *p = anon(2);
	p[0] = 1;
	int pfd = CT_OK(syscall(SYS_pidfd_open, getpid(), 0));
	struct iovec iov = {p, 2 * pg()};
	CT_EQ(syscall(SYS_process_madvise, pfd, &iov, 1, MADV_COLD, 0), 2 * pg());
}

CT_TEST(process_madvise, bad_fd_ebadf)
{
	char *p = anon(1);
	struct iovec iov = {p, pg()};
	CT_ERR(syscall(SYS_process_madvise, 999, &iov, 1, MADV_COLD, 0), EBADF);
}

CT_TEST(process_madvise, flags_einval)
{
	char *p = anon(1);
	int pfd = CT_OK(syscall(SYS_pidfd_open, getpid(), 0));
	struct iovec iov = {p, pg()};
	CT_ERR(syscall(SYS_process_madvise, pfd, &iov, 1, MADV_COLD, 1), EINVAL);
}

/* ---- NUMA policy (query-style) ---- */

CT_TEST(get_mempolicy, self_default)
{
	int mode = -1;
	CT_OK(syscall(SYS_get_mempolicy, &mode, NULL, 0, NULL, 0));
	CT_EQ(mode, MPOL_DEFAULT);
}

CT_TEST(get_mempolicy, addr_of_mapping)
{
	char *p = anon(1);
	p[0] = 1;
	int mode = -1;
	CT_OK(syscall(SYS_get_mempolicy, &mode, NULL, 0, p, MPOL_F_ADDR));
	CT_EQ(mode, MPOL_DEFAULT);
}

CT_TEST(get_mempolicy, bad_flags_einval)
{
	int mode;
	CT_ERR(syscall(SYS_get_mempolicy, &mode, NULL, 0, NULL, 0x100), EINVAL);
}

CT_TEST(set_mempolicy, default_ok)
{
	CT_OK(syscall(SYS_set_mempolicy, MPOL_DEFAULT, NULL, 0));
}

CT_TEST(set_mempolicy, bad_mode_einval)
{
	CT_ERR(syscall(SYS_set_mempolicy, 77, NULL, 0), EINVAL);
}

CT_TEST(mbind, default_on_mapping)
{
	char *p = anon(2);
	CT_OK(syscall(SYS_mbind, p, 2 * pg(), MPOL_DEFAULT, NULL, 0, 0));
}

CT_TEST(mbind, unaligned_einval)
{
	char *p = anon(2);
	CT_ERR(syscall(SYS_mbind, p + 1, pg(), MPOL_DEFAULT, NULL, 0, 0), EINVAL);
}

CT_TEST(migrate_pages, self_node0_to_node0)
{
	unsigned long from = 1, to = 1;
	CT_OK(syscall(SYS_migrate_pages, 0, 8 * sizeof(long), &from, &to));
}

CT_TEST(migrate_pages, no_such_pid_esrch)
{
	unsigned long from = 1, to = 1;
	CT_ERR(syscall(SYS_migrate_pages, 0x3fffffff, 8 * sizeof(long), &from, &to), ESRCH);
}

CT_TEST(move_pages, query_status)
{
	char *p = anon(2);
	p[0] = 1;
	void *pages[2] = {p, p + pg()};
	int status[2] = {99, 99};
	CT_OK(syscall(SYS_move_pages, 0, 2, pages, NULL, status, 0));
	CT_TRUE(status[0] >= 0);   /* resident: the node it is on */
	CT_EQ(status[1], -ENOENT); /* never touched: no page */
}

CT_TEST(move_pages, bad_flags_einval)
{
	char *p = anon(1);
	void *pages[1] = {p};
	int status[1];
	CT_ERR(syscall(SYS_move_pages, 0, 1, pages, NULL, status, 0x10), EINVAL);
}

/* ---- userfaultfd ---- */

CT_TEST(userfaultfd, user_mode_or_documented_error)
{
	errno = 0;
	long fd = syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
	if (fd < 0) {
		/* Documented refusals: not built in, or disabled by policy for this caller. */
		CT_TRUE(errno == ENOSYS || errno == EPERM);
		return;
	}
	struct uffdio_api api = {.api = UFFD_API};
	CT_OK(ioctl(fd, UFFDIO_API, &api));
	CT_EQ(api.api, UFFD_API);
}

CT_TEST(userfaultfd, bad_flags_einval)
{
	errno = 0;
	long r = syscall(SYS_userfaultfd, UFFD_USER_MODE_ONLY | 0x10);
	if (r < 0 && (errno == ENOSYS || errno == EPERM))
		ct_skip("userfaultfd unavailable here (%s)", ct_errname(errno));
	CT_ERR_SAVED(r, EINVAL);
}
