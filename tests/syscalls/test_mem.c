/*
 * Memory management: brk, mmap and friends, msync/mincore/madvise, locking, remap_file_pages.
 * (Protection keys, NUMA policy, memfd_secret, process_madvise, userfaultfd: test_mem_policy.c.)
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

/* A file "f" of n pages, page i filled with 'A' + i; returns an O_RDWR fd. */
static int page_file(int n)
{
	int fd = CT_OK(open("f", O_RDWR | O_CREAT | O_TRUNC, 0600));
	char *buf = malloc(pg());
	CT_TRUE(buf != NULL);
	for (int i = 0; i < n; i++) {
		memset(buf, 'A' + i, pg());
		CT_EQ(write(fd, buf, pg()), pg());
	}
	free(buf);
	return fd;
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

static void touch_read(char *p)
{
	(void)*(volatile char *)p;
}

#define CT_SIGNALED(st, sig) CT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == (sig))

/* ---- brk ---- */

CT_TEST(brk, query_stable)
{
	long a = syscall(SYS_brk, 0);
	CT_TRUE(a > 0);
	CT_EQ(syscall(SYS_brk, 0), a);
}

CT_TEST(brk, grow_write_shrink)
{
	long cur = syscall(SYS_brk, 0);
	long want = cur + 4 * pg();
	CT_EQ(syscall(SYS_brk, want), want);
	memset((char *)cur, 0x5a, 4 * pg());
	CT_EQ(((char *)cur)[4 * pg() - 1], 0x5a);
	CT_EQ(syscall(SYS_brk, cur), cur);
	CT_EQ(syscall(SYS_brk, 0), cur);
}

CT_TEST(brk, below_start_unchanged)
{
	long cur = syscall(SYS_brk, 0);
	/* Linux returns the unchanged break when the request is refused. */
	CT_EQ(syscall(SYS_brk, 4096), cur);
}

/* ---- mmap ---- */

CT_TEST(mmap, anon_private_zeroed_rw)
{
	char *p = anon(2);
	for (long i = 0; i < 2 * pg(); i++)
		if (p[i] != 0)
			CT_FAIL("byte %ld not zero", i);
	memset(p, 7, 2 * pg());
	CT_EQ(p[2 * pg() - 1], 7);
}

CT_TEST(mmap, len_zero_einval)
{
	CT_ERR(mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), EINVAL);
}

CT_TEST(mmap, no_map_type_einval)
{
	CT_ERR(mmap(NULL, pg(), PROT_READ, MAP_ANONYMOUS, -1, 0), EINVAL);
}

CT_TEST(mmap, bad_fd_ebadf)
{
	CT_ERR(mmap(NULL, pg(), PROT_READ, MAP_PRIVATE, 999, 0), EBADF);
}

CT_TEST(mmap, unaligned_offset_einval)
{
	int fd = page_file(2);
	CT_ERR(mmap(NULL, pg(), PROT_READ, MAP_PRIVATE, fd, 1), EINVAL);
}

CT_TEST(mmap, shared_write_on_rdonly_fd_eacces)
{
	close(page_file(1));
	int fd = CT_OK(open("f", O_RDONLY));
	CT_ERR(mmap(NULL, pg(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), EACCES);
	/* A private writable mapping of a read-only fd is fine (copy-on-write). */
	char *p = mmap(NULL, pg(), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CT_TRUE(p != MAP_FAILED);
	p[0] = 'z';
}

CT_TEST(mmap, file_shared_write_visible)
{
	int fd = page_file(2);
	char *p = mmap(NULL, 2 * pg(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CT_TRUE(p != MAP_FAILED);
	CT_EQ(p[0], 'A');
	CT_EQ(p[pg()], 'B');
	memcpy(p + pg(), "hello", 5);
	char buf[5];
	CT_EQ(pread(fd, buf, 5, pg()), 5);
	CT_TRUE(memcmp(buf, "hello", 5) == 0);
}

CT_TEST(mmap, file_private_cow)
{
	int fd = page_file(1);
	char *p = mmap(NULL, pg(), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CT_TRUE(p != MAP_FAILED);
	p[0] = 'x';
	char c;
	CT_EQ(pread(fd, &c, 1, 0), 1);
	CT_EQ(c, 'A');
}

CT_TEST(mmap, file_offset)
{
	int fd = page_file(3);
	char *p = mmap(NULL, pg(), PROT_READ, MAP_PRIVATE, fd, 2 * pg());
	CT_TRUE(p != MAP_FAILED);
	CT_EQ(p[0], 'C');
}

CT_TEST(mmap, beyond_eof_sigbus)
{
	int fd = page_file(1);
	char *p = mmap(NULL, 2 * pg(), PROT_READ, MAP_SHARED, fd, 0);
	CT_TRUE(p != MAP_FAILED);
	CT_EQ(p[0], 'A');
	int st = in_child(touch_read, p + pg());
	CT_SIGNALED(st, SIGBUS);
}

CT_TEST(mmap, fixed_replaces)
{
	char *p = anon(2);
	p[pg()] = 9;
	char *q = mmap(p + pg(), pg(), PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	CT_TRUE(q == p + pg());
	CT_EQ(q[0], 0);
}

CT_TEST(mmap, fixed_noreplace_eexist)
{
	char *p = anon(1);
	CT_ERR(mmap(p, pg(), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0),
	       EEXIST);
}

CT_TEST(mmap, fixed_unaligned_einval)
{
	char *p = anon(1);
	CT_ERR(mmap(p + 1, pg(), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
	       EINVAL);
}

CT_TEST(mmap, shared_anon_across_fork)
{
	int *p = mmap(NULL, pg(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CT_TRUE(p != MAP_FAILED);
	pid_t pid = CT_OK(fork());
	if (pid == 0) {
		*p = 42;
		_exit(0);
	}
	ct_wait(pid);
	CT_EQ(*p, 42);
}

CT_TEST(mmap, private_anon_not_shared_with_fork)
{
	int *p = (int *)anon(1);
	*p = 1;
	pid_t pid = CT_OK(fork());
	if (pid == 0) {
		*p = 42;
		_exit(*p == 42 ? 0 : 1);
	}
	int st = ct_wait(pid);
	CT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CT_EQ(*p, 1);
}

CT_TEST(mmap, populate)
{
	char *p = mmap(NULL, 4 * pg(), PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	CT_TRUE(p != MAP_FAILED);
	unsigned char vec[4];
	CT_OK(mincore(p, 4 * pg(), vec));
	for (int i = 0; i < 4; i++)
		CT_TRUE(vec[i] & 1);
}

/* ---- munmap ---- */

CT_TEST(munmap, access_after_segv)
{
	char *p = anon(1);
	CT_OK(munmap(p, pg()));
	int st = in_child(touch_read, p);
	CT_SIGNALED(st, SIGSEGV);
}

CT_TEST(munmap, unaligned_einval)
{
	char *p = anon(1);
	CT_ERR(munmap(p + 1, pg()), EINVAL);
}

CT_TEST(munmap, len_zero_einval)
{
	char *p = anon(1);
	CT_ERR(munmap(p, 0), EINVAL);
}

CT_TEST(munmap, middle_hole)
{
	char *p = anon(3);
	CT_OK(munmap(p + pg(), pg()));
	unsigned char vec[1];
	CT_ERR(mincore(p + pg(), pg(), vec), ENOMEM);
	p[0] = 1;
	p[2 * pg()] = 1;
	/* Unmapping an already unmapped range succeeds. */
	CT_OK(munmap(p + pg(), pg()));
}

/* ---- mprotect ---- */

CT_TEST(mprotect, readonly_write_segv)
{
	char *p = anon(1);
	CT_OK(mprotect(p, pg(), PROT_READ));
	CT_EQ(p[0], 0);
	int st = in_child(touch_write, p);
	CT_SIGNALED(st, SIGSEGV);
}

CT_TEST(mprotect, none_then_restore)
{
	char *p = anon(1);
	p[0] = 3;
	CT_OK(mprotect(p, pg(), PROT_NONE));
	int st = in_child(touch_read, p);
	CT_SIGNALED(st, SIGSEGV);
	CT_OK(mprotect(p, pg(), PROT_READ | PROT_WRITE));
	CT_EQ(p[0], 3);
}

CT_TEST(mprotect, unaligned_einval)
{
	char *p = anon(1);
	CT_ERR(mprotect(p + 1, pg(), PROT_READ), EINVAL);
}

CT_TEST(mprotect, bad_prot_einval)
{
	char *p = anon(1);
	CT_ERR(mprotect(p, pg(), 0x1000), EINVAL);
}

CT_TEST(mprotect, unmapped_enomem)
{
	char *p = anon(1);
	CT_OK(munmap(p, pg()));
	CT_ERR(mprotect(p, pg(), PROT_READ), ENOMEM);
}

CT_TEST(mprotect, shared_rdonly_fd_write_eacces)
{
	close(page_file(1));
	int fd = CT_OK(open("f", O_RDONLY));
	char *p = mmap(NULL, pg(), PROT_READ, MAP_SHARED, fd, 0);
	CT_TRUE(p != MAP_FAILED);
	CT_ERR(mprotect(p, pg(), PROT_READ | PROT_WRITE), EACCES);
}

/* ---- mremap ---- */

CT_TEST(mremap, grow_maymove_keeps_data)
{
	char *p = anon(1);
	memset(p, 'q', pg());
	char *q = mremap(p, pg(), 8 * pg(), MREMAP_MAYMOVE);
	CT_TRUE(q != MAP_FAILED);
	CT_EQ(q[pg() - 1], 'q');
	CT_EQ(q[8 * pg() - 1], 0);
}

CT_TEST(mremap, shrink_in_place)
{
	char *p = anon(4);
	CT_TRUE(mremap(p, 4 * pg(), pg(), 0) == p);
	unsigned char vec[1];
	CT_ERR(mincore(p + 2 * pg(), pg(), vec), ENOMEM);
}

CT_TEST(mremap, grow_blocked_enomem)
{
	char *p = anon(2);
	CT_OK(munmap(p + pg(), pg()));
	char *blocker = mmap(p + pg(), pg(), PROT_READ,
	                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (blocker == MAP_FAILED)
		ct_skip("could not place a blocking mapping");
	CT_ERR(mremap(p, pg(), 2 * pg(), 0), ENOMEM);
}

CT_TEST(mremap, fixed_without_maymove_einval)
{
	char *p = anon(1), *q = anon(1);
	CT_ERR(mremap(p, pg(), pg(), MREMAP_FIXED, q), EINVAL);
}

CT_TEST(mremap, fixed_moves)
{
	char *p = anon(1), *q = anon(1);
	p[0] = 'm';
	CT_TRUE(mremap(p, pg(), pg(), MREMAP_MAYMOVE | MREMAP_FIXED, q) == q);
	CT_EQ(q[0], 'm');
	unsigned char vec[1];
	CT_ERR(mincore(p, pg(), vec), ENOMEM);
}

CT_TEST(mremap, bad_flags_einval)
{
	char *p = anon(1);
	CT_ERR(syscall(SYS_mremap, p, pg(), pg(), 0x100, 0), EINVAL);
}

CT_TEST(mremap, unaligned_einval)
{
	char *p = anon(1);
	CT_ERR(mremap(p + 1, pg(), pg(), 0), EINVAL);
}

/* ---- msync ---- */

CT_TEST(msync, sync_shared_file)
{
	int fd = page_file(1);
	char *p = mmap(NULL, pg(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CT_TRUE(p != MAP_FAILED);
	p[10] = 'S';
	CT_OK(msync(p, pg(), MS_SYNC));
	CT_OK(msync(p, pg(), MS_ASYNC | MS_INVALIDATE));
	char c;
	CT_EQ(pread(fd, &c, 1, 10), 1);
	CT_EQ(c, 'S');
}

CT_TEST(msync, sync_and_async_einval)
{
	char *p = anon(1);
	CT_ERR(msync(p, pg(), MS_SYNC | MS_ASYNC), EINVAL);
}

CT_TEST(msync, unaligned_einval)
{
	char *p = anon(1);
	CT_ERR(msync(p + 1, pg(), MS_SYNC), EINVAL);
}

CT_TEST(msync, unmapped_enomem)
{
	char *p = anon(1);
	CT_OK(munmap(p, pg()));
	CT_ERR(msync(p, pg(), MS_SYNC), ENOMEM);
}

/* ---- mincore ---- */

CT_TEST(mincore, touched_resident)
{
	char *p = anon(2);
	p[0] = 1;
	unsigned char vec[2];
	CT_OK(mincore(p, 2 * pg(), vec));
	CT_TRUE(vec[0] & 1);
}

CT_TEST(mincore, unaligned_einval)
{
	char *p = anon(1);
	unsigned char vec[1];
	CT_ERR(mincore(p + 1, pg(), vec), EINVAL);
}

CT_TEST(mincore, bad_vec_efault)
{
	char *p = anon(1);
	CT_ERR(mincore(p, pg(), (unsigned char *)8), EFAULT);
}

/* ---- madvise ---- */

CT_TEST(madvise, dontneed_zeroes_private)
{
	char *p = anon(1);
	p[0] = 5;
	CT_OK(madvise(p, pg(), MADV_DONTNEED));
	CT_EQ(p[0], 0);
}

CT_TEST(madvise, common_advice_ok)
{
	char *p = anon(4);
	CT_OK(madvise(p, 4 * pg(), MADV_NORMAL));
	CT_OK(madvise(p, 4 * pg(), MADV_RANDOM));
	CT_OK(madvise(p, 4 * pg(), MADV_SEQUENTIAL));
	CT_OK(madvise(p, 4 * pg(), MADV_WILLNEED));
}

CT_TEST(madvise, bad_advice_einval)
{
	char *p = anon(1);
	CT_ERR(madvise(p, pg(), 12345), EINVAL);
}

CT_TEST(madvise, unaligned_einval)
{
	char *p = anon(1);
	CT_ERR(madvise(p + 1, pg(), MADV_NORMAL), EINVAL);
}

CT_TEST(madvise, unmapped_enomem)
{
	char *p = anon(1);
	CT_OK(munmap(p, pg()));
	CT_ERR(madvise(p, pg(), MADV_NORMAL), ENOMEM);
}

CT_TEST(madvise, dontfork_child_segv)
{
	char *p = anon(1);
	CT_OK(madvise(p, pg(), MADV_DONTFORK));
	int st = in_child(touch_read, p);
	CT_SIGNALED(st, SIGSEGV);
}

CT_TEST(madvise, wipeonfork_child_zero)
{
	char *p = anon(1);
	p[0] = 'w';
	CT_OK(madvise(p, pg(), MADV_WIPEONFORK));
	pid_t pid = CT_OK(fork());
	if (pid == 0)
		_exit(p[0] == 0 ? 0 : 1);
	int st = ct_wait(pid);
	CT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CT_EQ(p[0], 'w');
}

/* ---- mlock family ---- */

CT_TEST(mlock, lock_resident)
{
	char *p = anon(2);
	CT_OK(mlock(p, 2 * pg()));
	unsigned char vec[2];
	CT_OK(mincore(p, 2 * pg(), vec));
	CT_TRUE((vec[0] & 1) && (vec[1] & 1));
	CT_OK(munlock(p, 2 * pg()));
}

CT_TEST(mlock, unmapped_enomem)
{
	char *p = anon(1);
	CT_OK(munmap(p, pg()));
	CT_ERR(mlock(p, pg()), ENOMEM);
}

CT_TEST(munlock, not_locked_ok)
{
	char *p = anon(1);
	CT_OK(munlock(p, pg()));
}

CT_TEST(munlock, unmapped_enomem)
{
	char *p = anon(1);
	CT_OK(munmap(p, pg()));
	CT_ERR(munlock(p, pg()), ENOMEM);
}

CT_TEST(mlockall, current_then_munlockall)
{
	CT_OK(mlockall(MCL_CURRENT));
	CT_OK(munlockall());
}

CT_TEST(mlockall, zero_flags_einval)
{
	CT_ERR(mlockall(0), EINVAL);
}

CT_TEST(mlockall, onfault_alone_einval)
{
	CT_ERR(mlockall(MCL_ONFAULT), EINVAL);
}

CT_TEST(munlockall, nothing_locked_ok)
{
	CT_OK(munlockall());
	CT_OK(munlockall());
}

CT_TEST(munlockall, clears_future)
{
	CT_OK(mlockall(MCL_FUTURE));
	CT_OK(munlockall());
	char *p = anon(1);
	p[0] = 1;
}

CT_TEST(mlock2, onfault)
{
	char *p = anon(2);
	CT_OK(syscall(SYS_mlock2, p, 2 * pg(), MLOCK_ONFAULT));
	CT_OK(munlock(p, 2 * pg()));
}

CT_TEST(mlock2, bad_flags_einval)
{
	char *p = anon(1);
	CT_ERR(syscall(SYS_mlock2, p, pg(), 0x80), EINVAL);
}

/* ---- remap_file_pages ---- */

CT_TEST(remap_file_pages, rearranges_shared_file)
{
	int fd = page_file(2);
	char *p = mmap(NULL, 2 * pg(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CT_TRUE(p != MAP_FAILED);
	CT_OK(syscall(SYS_remap_file_pages, p, pg(), 0, 1, 0));
	CT_EQ(p[0], 'B');
	CT_EQ(p[pg()], 'B');
}

CT_TEST(remap_file_pages, private_einval)
{
	char *p = anon(2);
	CT_ERR(syscall(SYS_remap_file_pages, p, pg(), 0, 1, 0), EINVAL);
}
