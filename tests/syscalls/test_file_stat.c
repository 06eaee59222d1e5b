/*
 * Compatibility cases: file metadata (stat, fstat, lstat, newfstatat, statx, access, faccessat,
 * faccessat2, readlink, readlinkat, statfs, fstatfs, utime, utimes, futimesat, utimensat, umask,
 * chmod, fchmod, fchmodat, chown, fchown, lchown, fchownat). glibc routes several of these to
 * other syscalls (stat/fstat/lstat to newfstatat, faccessat to faccessat2), so the cases call
 * the named syscall with syscall(2).
 */
#include "compat_test.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

/* Whether the calling process has capability cap in its effective set. */

/* Whether uid is mapped in this process's user namespace (/proc/self/uid_map). */
static int uid_mapped(uid_t uid)
{
	FILE *f = fopen("/proc/self/uid_map", "r");
	if (!f)
		return 1;
	unsigned long inside, outside, count;
	int found = 0;
	while (fscanf(f, "%lu %lu %lu", &inside, &outside, &count) == 3)
		if (uid >= inside && uid - inside < count)
			found = 1;
	fclose(f);
	return found;
}

/* A uid other than ours, and the errno Linux gives us for chowning a file to it (0: success). */
static uid_t other_uid(int *expect_errno)
{
	uid_t other = geteuid() == 0 ? 1 : geteuid() - 1;
	if (!uid_mapped(other))
		*expect_errno = EINVAL; /* an id outside the namespace's map cannot be stored */
	else if (!ct_has_cap(CAP_CHOWN))
		*expect_errno = EPERM; /* giving a file away needs CAP_CHOWN */
	else
		*expect_errno = 0;
	return other;
}

static long sys_stat(const char *p, struct stat *st)
{
	return syscall(SYS_stat, p, st);
}

static long sys_lstat(const char *p, struct stat *st)
{
	return syscall(SYS_lstat, p, st);
}

static long sys_fstat(int fd, struct stat *st)
{
	return syscall(SYS_fstat, fd, st);
}

static int mode_of(const char *p)
{
	struct stat st;
	CT_OK(sys_lstat(p, &st));
	return st.st_mode & 07777;
}

CT_TEST(stat, regular_file)
{
	ct_put_file("f", "hello", 0640);
	struct stat st;
	CT_OK(sys_stat("f", &st));
	CT_TRUE(S_ISREG(st.st_mode));
	CT_EQ(st.st_size, 5);
	CT_EQ(st.st_nlink, 1);
	CT_EQ(st.st_uid, geteuid());
	CT_TRUE(st.st_blksize > 0);
}

CT_TEST(stat, directory_nlink)
{
	CT_OK(mkdir("d", 0700));
	CT_OK(mkdir("d/sub", 0700));
	struct stat st;
	CT_OK(sys_stat("d", &st));
	CT_TRUE(S_ISDIR(st.st_mode));
	CT_TRUE(st.st_nlink >= 2);
}

CT_TEST(stat, follows_symlink)
{
	ct_put_file("f", "abc", 0600);
	CT_OK(symlink("f", "l"));
	struct stat a, b;
	CT_OK(sys_stat("l", &a));
	CT_OK(sys_stat("f", &b));
	CT_TRUE(S_ISREG(a.st_mode));
	CT_EQ(a.st_ino, b.st_ino);
	CT_EQ(a.st_dev, b.st_dev);
}

CT_TEST(stat, errors)
{
	struct stat st;
	ct_put_file("f", "", 0600);
	CT_ERR(sys_stat("missing", &st), ENOENT);
	CT_ERR(sys_stat("f/x", &st), ENOTDIR);
	CT_ERR(sys_stat("", &st), ENOENT);
	CT_ERR(sys_stat((const char *)8, &st), EFAULT);
	CT_ERR(sys_stat("f", (struct stat *)8), EFAULT);
	CT_OK(symlink("loop", "loop"));
	CT_ERR(sys_stat("loop", &st), ELOOP);
	CT_OK(symlink("missing", "dangling"));
	CT_ERR(sys_stat("dangling", &st), ENOENT);
}

CT_TEST(stat, eacces_search_permission)
{
	CT_OK(mkdir("d", 0700));
	ct_put_file("d/f", "", 0600);
	CT_OK(chmod("d", 0600));
	struct stat st;
	if (ct_has_cap(CAP_DAC_READ_SEARCH) || ct_has_cap(CAP_DAC_OVERRIDE)) {
		/* Either capability lets Linux search a directory without the x bit. */
		CT_OK(sys_stat("d/f", &st));
	} else {
		CT_ERR(sys_stat("d/f", &st), EACCES);
	}
	CT_OK(chmod("d", 0700));
}

CT_TEST(fstat, file_and_pipe)
{
	ct_put_file("f", "12345", 0600);
	int fd = CT_OK(open("f", O_RDONLY));
	struct stat st;
	CT_OK(sys_fstat(fd, &st));
	CT_TRUE(S_ISREG(st.st_mode));
	CT_EQ(st.st_size, 5);
	int p[2];
	CT_OK(pipe(p));
	CT_OK(sys_fstat(p[0], &st));
	CT_TRUE(S_ISFIFO(st.st_mode));
	CT_OK(sys_fstat(0 + open("/dev/null", O_RDONLY), &st));
	CT_TRUE(S_ISCHR(st.st_mode));
}

CT_TEST(fstat, sees_unlinked_file)
{
	ct_put_file("f", "abc", 0600);
	int fd = CT_OK(open("f", O_RDONLY));
	CT_OK(unlink("f"));
	struct stat st;
	CT_OK(sys_fstat(fd, &st));
	CT_EQ(st.st_nlink, 0);
	CT_EQ(st.st_size, 3);
}

CT_TEST(fstat, errors)
{
	struct stat st;
	CT_ERR(sys_fstat(-1, &st), EBADF);
	CT_ERR(sys_fstat(9999, &st), EBADF);
	int fd = CT_OK(open("/dev/null", O_RDONLY));
	CT_ERR(sys_fstat(fd, (struct stat *)8), EFAULT);
}

CT_TEST(lstat, symlink_itself)
{
	CT_OK(symlink("some/target", "l"));
	struct stat st;
	CT_OK(sys_lstat("l", &st));
	CT_TRUE(S_ISLNK(st.st_mode));
	CT_EQ(st.st_size, strlen("some/target"));
}

CT_TEST(lstat, errors_and_trailing_slash)
{
	struct stat st;
	CT_ERR(sys_lstat("missing", &st), ENOENT);
	CT_OK(mkdir("d", 0700));
	CT_OK(symlink("d", "dl"));
	/* A trailing slash makes the walk follow the final symlink. */
	CT_OK(sys_lstat("dl/", &st));
	CT_TRUE(S_ISDIR(st.st_mode));
	ct_put_file("f", "", 0600);
	CT_ERR(sys_lstat("f/", &st), ENOTDIR);
}

CT_TEST(newfstatat, flags)
{
	ct_put_file("f", "abc", 0600);
	CT_OK(symlink("f", "l"));
	struct stat st;
	CT_OK(syscall(SYS_newfstatat, AT_FDCWD, "l", &st, 0));
	CT_TRUE(S_ISREG(st.st_mode));
	CT_OK(syscall(SYS_newfstatat, AT_FDCWD, "l", &st, AT_SYMLINK_NOFOLLOW));
	CT_TRUE(S_ISLNK(st.st_mode));
	CT_ERR(syscall(SYS_newfstatat, AT_FDCWD, "f", &st, 0x40000000), EINVAL);
}

CT_TEST(newfstatat, empty_path)
{
	ct_put_file("f", "abcd", 0600);
	int fd = CT_OK(open("f", O_RDONLY));
	struct stat st;
	CT_OK(syscall(SYS_newfstatat, fd, "", &st, AT_EMPTY_PATH));
	CT_EQ(st.st_size, 4);
	CT_ERR(syscall(SYS_newfstatat, fd, "", &st, 0), ENOENT);
	CT_ERR(syscall(SYS_newfstatat, fd, "x", &st, 0), ENOTDIR);
	CT_ERR(syscall(SYS_newfstatat, 9999, "x", &st, 0), EBADF);
}

CT_TEST(newfstatat, dirfd_relative)
{
	CT_OK(mkdir("d", 0700));
	ct_put_file("d/f", "xy", 0600);
	int dfd = CT_OK(open("d", O_RDONLY | O_DIRECTORY));
	struct stat st;
	CT_OK(syscall(SYS_newfstatat, dfd, "f", &st, 0));
	CT_EQ(st.st_size, 2);
	CT_OK(syscall(SYS_newfstatat, dfd, "..", &st, 0));
	CT_TRUE(S_ISDIR(st.st_mode));
}

CT_TEST(statx, basic)
{
	ct_put_file("f", "hello", 0640);
	struct statx sx;
	memset(&sx, 0xff, sizeof(sx));
	CT_OK(statx(AT_FDCWD, "f", 0, STATX_BASIC_STATS, &sx));
	CT_EQ(sx.stx_mask & STATX_BASIC_STATS, STATX_BASIC_STATS);
	CT_EQ(sx.stx_size, 5);
	CT_EQ(sx.stx_mode & 07777, 0640);
	CT_TRUE(S_ISREG(sx.stx_mode));
	CT_EQ(sx.stx_nlink, 1);
	CT_EQ(sx.stx_uid, geteuid());
	struct stat st;
	CT_OK(stat("f", &st));
	CT_EQ(sx.stx_ino, st.st_ino);
}

CT_TEST(statx, symlink_nofollow_and_empty_path)
{
	CT_OK(symlink("target", "l"));
	struct statx sx;
	CT_OK(statx(AT_FDCWD, "l", AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_SIZE, &sx));
	CT_TRUE(S_ISLNK(sx.stx_mode));
	CT_EQ(sx.stx_size, 6);
	CT_ERR(statx(AT_FDCWD, "l", 0, STATX_TYPE, &sx), ENOENT);
	int fd = CT_OK(open("/dev/null", O_RDONLY));
	CT_OK(statx(fd, "", AT_EMPTY_PATH, STATX_TYPE, &sx));
	CT_TRUE(S_ISCHR(sx.stx_mode));
}

CT_TEST(statx, errors)
{
	struct statx sx;
	CT_ERR(statx(AT_FDCWD, ".", 0, STATX__RESERVED, &sx), EINVAL);
	CT_ERR(statx(AT_FDCWD, ".", 0x40000000, STATX_BASIC_STATS, &sx), EINVAL);
	CT_ERR(statx(AT_FDCWD, ".", AT_STATX_FORCE_SYNC | AT_STATX_DONT_SYNC, STATX_TYPE, &sx),
	       EINVAL);
	CT_ERR(syscall(SYS_statx, AT_FDCWD, ".", 0, STATX_TYPE, (void *)8), EFAULT);
	CT_ERR(statx(AT_FDCWD, "missing", 0, STATX_TYPE, &sx), ENOENT);
}

CT_TEST(access, modes)
{
	ct_put_file("f", "", 0644);
	CT_OK(syscall(SYS_access, "f", F_OK));
	CT_OK(syscall(SYS_access, "f", R_OK | W_OK));
	/* Even with CAP_DAC_OVERRIDE, X_OK needs some execute bit on a regular file. */
	CT_ERR(syscall(SYS_access, "f", X_OK), EACCES);
	CT_ERR(syscall(SYS_access, "missing", F_OK), ENOENT);
	CT_ERR(syscall(SYS_access, "f", 0x40), EINVAL);
}

CT_TEST(access, no_permission)
{
	ct_put_file("f", "", 0);
	if (getuid() != geteuid())
		ct_skip("real and effective uid differ");
	if (ct_has_cap(CAP_DAC_OVERRIDE)) {
		CT_OK(syscall(SYS_access, "f", R_OK | W_OK));
		return;
	}
	CT_ERR(syscall(SYS_access, "f", R_OK), EACCES);
	CT_ERR(syscall(SYS_access, "f", W_OK), EACCES);
	CT_OK(syscall(SYS_access, "f", F_OK));
}

CT_TEST(access, directory_x)
{
	CT_OK(mkdir("d", 0700));
	CT_OK(syscall(SYS_access, "d", X_OK));
	CT_OK(syscall(SYS_access, "/bin/sh", X_OK));
	CT_ERR(syscall(SYS_access, "d/missing", F_OK), ENOENT);
}

CT_TEST(faccessat, dirfd)
{
	CT_OK(mkdir("d", 0700));
	ct_put_file("d/f", "", 0600);
	int dfd = CT_OK(open("d", O_RDONLY | O_DIRECTORY));
	CT_OK(syscall(SYS_faccessat, dfd, "f", R_OK));
	CT_ERR(syscall(SYS_faccessat, dfd, "g", F_OK), ENOENT);
	CT_ERR(syscall(SYS_faccessat, 9999, "f", F_OK), EBADF);
	CT_ERR(syscall(SYS_faccessat, dfd, "f", X_OK), EACCES);
}

CT_TEST(faccessat, bad_mode)
{
	CT_ERR(syscall(SYS_faccessat, AT_FDCWD, ".", 0x80), EINVAL);
}

CT_TEST(faccessat2, flags)
{
	ct_put_file("f", "", 0600);
	CT_OK(symlink("missing", "dangling"));
	CT_ERR(syscall(SYS_faccessat2, AT_FDCWD, "dangling", F_OK, 0), ENOENT);
	CT_OK(syscall(SYS_faccessat2, AT_FDCWD, "dangling", F_OK, AT_SYMLINK_NOFOLLOW));
	CT_OK(syscall(SYS_faccessat2, AT_FDCWD, "f", R_OK, AT_EACCESS));
	CT_ERR(syscall(SYS_faccessat2, AT_FDCWD, "f", F_OK, 0x40000000), EINVAL);
}

CT_TEST(faccessat2, empty_path)
{
	ct_put_file("f", "", 0600);
	int fd = CT_OK(open("f", O_RDONLY));
	CT_OK(syscall(SYS_faccessat2, fd, "", R_OK, AT_EMPTY_PATH));
	CT_ERR(syscall(SYS_faccessat2, fd, "", R_OK, 0), ENOENT);
}

CT_TEST(readlink, target_and_truncation)
{
	CT_OK(symlink("a/long/target", "l"));
	char buf[64];
	memset(buf, 'X', sizeof(buf));
	CT_EQ(syscall(SYS_readlink, "l", buf, sizeof(buf)), 13);
	CT_TRUE(memcmp(buf, "a/long/target", 13) == 0);
	/* readlink does not terminate the string. */
	CT_EQ(buf[13], 'X');
	CT_EQ(syscall(SYS_readlink, "l", buf, 4L), 4);
	CT_TRUE(memcmp(buf, "a/lo", 4) == 0);
}

CT_TEST(readlink, errors)
{
	char buf[16];
	ct_put_file("f", "", 0600);
	CT_ERR(syscall(SYS_readlink, "f", buf, sizeof(buf)), EINVAL);
	CT_ERR(syscall(SYS_readlink, "missing", buf, sizeof(buf)), ENOENT);
	CT_OK(symlink("f", "l"));
	CT_ERR(syscall(SYS_readlink, "l", buf, 0L), EINVAL);
	CT_ERR(syscall(SYS_readlink, "l", (void *)8, sizeof(buf)), EFAULT);
}

CT_TEST(readlink, proc_self_exe)
{
	char buf[4096];
	long n = CT_OK(syscall(SYS_readlink, "/proc/self/exe", buf, sizeof(buf) - 1));
	buf[n] = 0;
	CT_TRUE(buf[0] == '/');
	CT_TRUE(strstr(buf, "test_file_stat") != NULL);
}

CT_TEST(readlinkat, dirfd_and_empty_path)
{
	CT_OK(mkdir("d", 0700));
	CT_OK(symlink("tgt", "d/l"));
	int dfd = CT_OK(open("d", O_RDONLY | O_DIRECTORY));
	char buf[16] = {0};
	CT_EQ(readlinkat(dfd, "l", buf, sizeof(buf)), 3);
	CT_STREQ(buf, "tgt");
	int lfd = CT_OK(open("d/l", O_PATH | O_NOFOLLOW));
	memset(buf, 0, sizeof(buf));
	CT_EQ(readlinkat(lfd, "", buf, sizeof(buf)), 3);
	CT_STREQ(buf, "tgt");
}

CT_TEST(readlinkat, errors)
{
	char buf[16];
	CT_ERR(readlinkat(9999, "l", buf, sizeof(buf)), EBADF);
	CT_ERR(readlinkat(AT_FDCWD, ".", buf, sizeof(buf)), EINVAL);
	ct_put_file("f", "", 0600);
	int fd = CT_OK(open("f", O_RDONLY));
	CT_ERR(readlinkat(fd, "x", buf, sizeof(buf)), ENOTDIR);
}

CT_TEST(statfs, scratch_and_proc)
{
	struct statfs sf;
	CT_OK(statfs(".", &sf));
	CT_TRUE(sf.f_bsize > 0);
	CT_TRUE(sf.f_namelen >= 255);
	CT_OK(statfs("/proc", &sf));
	CT_EQ(sf.f_type, PROC_SUPER_MAGIC);
}

CT_TEST(statfs, errors)
{
	struct statfs sf;
	CT_ERR(statfs("missing", &sf), ENOENT);
	CT_ERR(syscall(SYS_statfs, ".", (void *)8), EFAULT);
	ct_put_file("f", "", 0600);
	CT_ERR(statfs("f/x", &sf), ENOTDIR);
}

CT_TEST(fstatfs, matches_statfs)
{
	struct statfs a, b;
	int fd = CT_OK(open(".", O_RDONLY | O_DIRECTORY));
	CT_OK(fstatfs(fd, &a));
	CT_OK(statfs(".", &b));
	CT_EQ(a.f_type, b.f_type);
	CT_EQ(a.f_bsize, b.f_bsize);
	CT_ERR(fstatfs(-1, &a), EBADF);
}

CT_TEST(fstatfs, pipe)
{
	int p[2];
	CT_OK(pipe(p));
	struct statfs sf;
	CT_OK(fstatfs(p[0], &sf));
	CT_EQ(sf.f_type, PIPEFS_MAGIC);
}

CT_TEST(utime, set_and_now)
{
	ct_put_file("f", "", 0600);
	struct utimbuf ub = {.actime = 1000000, .modtime = 2000000};
	CT_OK(syscall(SYS_utime, "f", &ub));
	struct stat st;
	CT_OK(stat("f", &st));
	CT_EQ(st.st_atime, 1000000);
	CT_EQ(st.st_mtime, 2000000);
	time_t now = time(NULL);
	CT_OK(syscall(SYS_utime, "f", NULL));
	CT_OK(stat("f", &st));
	CT_TRUE(st.st_mtime >= now - 5 && st.st_mtime <= now + 5);
	CT_ERR(syscall(SYS_utime, "missing", &ub), ENOENT);
}

CT_TEST(utimes, microseconds)
{
	ct_put_file("f", "", 0600);
	struct timeval tv[2] = {{1000, 250000}, {3000, 500000}};
	CT_OK(syscall(SYS_utimes, "f", tv));
	struct stat st;
	CT_OK(stat("f", &st));
	CT_EQ(st.st_atim.tv_sec, 1000);
	CT_EQ(st.st_mtim.tv_sec, 3000);
	CT_EQ(st.st_mtim.tv_nsec, 500000000);
	struct timeval bad[2] = {{0, 1000000}, {0, 0}};
	CT_ERR(syscall(SYS_utimes, "f", bad), EINVAL);
	CT_ERR(syscall(SYS_utimes, "missing", tv), ENOENT);
}

CT_TEST(futimesat, dirfd)
{
	CT_OK(mkdir("d", 0700));
	ct_put_file("d/f", "", 0600);
	int dfd = CT_OK(open("d", O_RDONLY | O_DIRECTORY));
	struct timeval tv[2] = {{5000, 0}, {6000, 0}};
	CT_OK(syscall(SYS_futimesat, dfd, "f", tv));
	struct stat st;
	CT_OK(stat("d/f", &st));
	CT_EQ(st.st_mtime, 6000);
	CT_ERR(syscall(SYS_futimesat, 9999, "f", tv), EBADF);
	CT_ERR(syscall(SYS_futimesat, dfd, "g", tv), ENOENT);
}

CT_TEST(utimensat, specific_omit_now)
{
	ct_put_file("f", "", 0600);
	struct timespec ts[2] = {{100, 1}, {200, 2}};
	CT_OK(utimensat(AT_FDCWD, "f", ts, 0));
	struct stat st;
	CT_OK(stat("f", &st));
	CT_EQ(st.st_atim.tv_sec, 100);
	CT_EQ(st.st_mtim.tv_sec, 200);
	CT_EQ(st.st_mtim.tv_nsec, 2);
	struct timespec omit_now[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
	time_t now = time(NULL);
	CT_OK(utimensat(AT_FDCWD, "f", omit_now, 0));
	CT_OK(stat("f", &st));
	CT_EQ(st.st_atim.tv_sec, 100);
	CT_TRUE(st.st_mtime >= now - 5 && st.st_mtime <= now + 5);
}

CT_TEST(utimensat, symlink_nofollow)
{
	ct_put_file("f", "", 0600);
	CT_OK(symlink("f", "l"));
	struct timespec ts[2] = {{100, 0}, {300, 0}};
	CT_OK(utimensat(AT_FDCWD, "l", ts, AT_SYMLINK_NOFOLLOW));
	struct stat st;
	CT_OK(lstat("l", &st));
	CT_EQ(st.st_mtime, 300);
	CT_OK(stat("f", &st));
	CT_TRUE(st.st_mtime != 300);
}

CT_TEST(utimensat, null_path_is_fd)
{
	ct_put_file("f", "", 0600);
	int fd = CT_OK(open("f", O_RDONLY));
	struct timespec ts[2] = {{10, 0}, {20, 0}};
	/* utimensat(fd, NULL, ...) is what futimens() does. */
	CT_OK(syscall(SYS_utimensat, fd, NULL, ts, 0));
	struct stat st;
	CT_OK(fstat(fd, &st));
	CT_EQ(st.st_mtime, 20);
}

CT_TEST(utimensat, errors)
{
	ct_put_file("f", "", 0600);
	struct timespec bad[2] = {{0, 1000000000}, {0, 0}};
	CT_ERR(utimensat(AT_FDCWD, "f", bad, 0), EINVAL);
	struct timespec ok[2] = {{0, 0}, {0, 0}};
	CT_ERR(utimensat(AT_FDCWD, "f", ok, 0x40000000), EINVAL);
	CT_ERR(utimensat(AT_FDCWD, "missing", ok, 0), ENOENT);
	CT_ERR(utimensat(9999, "f", ok, 0), EBADF);
}

CT_TEST(umask, returns_previous)
{
	umask(027);
	CT_EQ(umask(077), 027);
	CT_EQ(umask(0777 | 01000), 077);
	/* Only the permission bits are kept. */
	CT_EQ(umask(0), 0777);
}

CT_TEST(umask, applies_to_mkdir_and_inherits)
{
	umask(0077);
	CT_OK(mkdir("d", 0777));
	CT_EQ(mode_of("d"), 0700);
	pid_t pid = CT_OK(fork());
	if (pid == 0)
		_exit(umask(0) == 0077 ? 0 : 1);
	CT_EQ(ct_wait(pid), 0);
}

CT_TEST(chmod, sets_mode)
{
	ct_put_file("f", "", 0600);
	CT_OK(syscall(SYS_chmod, "f", 0741));
	CT_EQ(mode_of("f"), 0741);
	CT_OK(syscall(SYS_chmod, "f", 01777));
	CT_EQ(mode_of("f"), 01777);
}

CT_TEST(chmod, follows_symlink_and_errors)
{
	ct_put_file("f", "", 0600);
	CT_OK(symlink("f", "l"));
	CT_OK(syscall(SYS_chmod, "l", 0604));
	CT_EQ(mode_of("f"), 0604);
	CT_ERR(syscall(SYS_chmod, "missing", 0600), ENOENT);
	CT_ERR(syscall(SYS_chmod, "f/x", 0600), ENOTDIR);
}

CT_TEST(chmod, not_owner_eperm)
{
	struct stat st;
	CT_OK(stat("/etc/passwd", &st));
	if (st.st_uid == geteuid() || ct_has_cap(CAP_FOWNER))
		ct_skip("owner of /etc/passwd or CAP_FOWNER: chmod would succeed");
	CT_ERR(syscall(SYS_chmod, "/etc/passwd", 0644), EPERM);
}

CT_TEST(fchmod, sets_mode)
{
	ct_put_file("f", "", 0600);
	int fd = CT_OK(open("f", O_RDONLY));
	CT_OK(fchmod(fd, 0640));
	CT_EQ(mode_of("f"), 0640);
	CT_ERR(fchmod(-1, 0600), EBADF);
}

CT_TEST(fchmod, o_path_ebadf)
{
	ct_put_file("f", "", 0600);
	int fd = CT_OK(open("f", O_PATH));
	CT_ERR(fchmod(fd, 0644), EBADF);
}

CT_TEST(fchmodat, dirfd)
{
	CT_OK(mkdir("d", 0700));
	ct_put_file("d/f", "", 0600);
	int dfd = CT_OK(open("d", O_RDONLY | O_DIRECTORY));
	CT_OK(syscall(SYS_fchmodat, dfd, "f", 0444));
	CT_EQ(mode_of("d/f"), 0444);
	CT_ERR(syscall(SYS_fchmodat, dfd, "g", 0444), ENOENT);
	CT_ERR(syscall(SYS_fchmodat, 9999, "g", 0444), EBADF);
}

CT_TEST(chown, self_and_other)
{
	ct_put_file("f", "", 0600);
	CT_OK(syscall(SYS_chown, "f", -1, -1));
	CT_OK(syscall(SYS_chown, "f", geteuid(), getegid()));
	int expect;
	uid_t other = other_uid(&expect);
	if (expect == 0) {
		CT_OK(syscall(SYS_chown, "f", other, -1));
		struct stat st;
		CT_OK(stat("f", &st));
		CT_EQ(st.st_uid, other);
	} else {
		CT_ERR(syscall(SYS_chown, "f", other, -1), expect);
	}
	CT_ERR(syscall(SYS_chown, "missing", -1, -1), ENOENT);
}

CT_TEST(fchown, self_and_errors)
{
	ct_put_file("f", "", 0600);
	int fd = CT_OK(open("f", O_RDONLY));
	CT_OK(fchown(fd, -1, -1));
	CT_OK(fchown(fd, geteuid(), getegid()));
	CT_ERR(fchown(-1, -1, -1), EBADF);
	int pfd = CT_OK(open("f", O_PATH));
	CT_ERR(fchown(pfd, -1, -1), EBADF);
}

CT_TEST(lchown, symlink_itself)
{
	CT_OK(symlink("missing", "l"));
	/* lchown does not follow: the dangling target does not matter. */
	CT_OK(syscall(SYS_lchown, "l", geteuid(), getegid()));
	CT_ERR(syscall(SYS_chown, "l", geteuid(), getegid()), ENOENT);
	CT_ERR(syscall(SYS_lchown, "nothing", -1, -1), ENOENT);
}

CT_TEST(fchownat, flags)
{
	CT_OK(symlink("missing", "l"));
	CT_ERR(fchownat(AT_FDCWD, "l", -1, -1, 0), ENOENT);
	CT_OK(fchownat(AT_FDCWD, "l", -1, -1, AT_SYMLINK_NOFOLLOW));
	CT_ERR(fchownat(AT_FDCWD, "l", -1, -1, 0x40000000), EINVAL);
	int fd = CT_OK(open(".", O_RDONLY | O_DIRECTORY));
	CT_OK(fchownat(fd, "", -1, -1, AT_EMPTY_PATH));
	CT_ERR(fchownat(9999, "l", -1, -1, 0), EBADF);
}

CT_TEST(fchmodat, follows_symlink_and_errors)
{
	ct_put_file("f", "", 0600);
	CT_OK(symlink("f", "l"));
	CT_OK(syscall(SYS_fchmodat, AT_FDCWD, "l", 0640));
	CT_EQ(mode_of("f"), 0640);
	int fd = CT_OK(open("f", O_RDONLY));
	CT_ERR(syscall(SYS_fchmodat, fd, "x", 0600), ENOTDIR);
	/* An absolute path ignores the dirfd, even an invalid one. */
	char abs[4096];
	CT_TRUE(getcwd(abs, sizeof(abs) - 4) != NULL);
	strcat(abs, "/f");
	CT_OK(syscall(SYS_fchmodat, 9999, abs, 0600));
	CT_EQ(mode_of("f"), 0600);
}

CT_TEST(chown, errors)
{
	ct_put_file("f", "", 0600);
	CT_ERR(syscall(SYS_chown, "f/x", -1, -1), ENOTDIR);
	CT_ERR(syscall(SYS_chown, (void *)8, -1, -1), EFAULT);
}

CT_TEST(fchown, other_uid)
{
	ct_put_file("f", "", 0600);
	int fd = CT_OK(open("f", O_RDONLY));
	int expect;
	uid_t other = other_uid(&expect);
	if (expect == 0) {
		CT_OK(fchown(fd, other, -1));
		struct stat st;
		CT_OK(fstat(fd, &st));
		CT_EQ(st.st_uid, other);
	} else {
		CT_ERR(fchown(fd, other, -1), expect);
	}
}

CT_TEST(lchown, errors)
{
	ct_put_file("f", "", 0600);
	CT_ERR(syscall(SYS_lchown, "f/x", -1, -1), ENOTDIR);
	CT_ERR(syscall(SYS_lchown, (void *)8, -1, -1), EFAULT);
	CT_OK(syscall(SYS_lchown, "f", -1, getegid()));
}

CT_TEST(fchownat, dirfd_other_uid)
{
	CT_OK(mkdir("d", 0700));
	ct_put_file("d/f", "", 0600);
	int dfd = CT_OK(open("d", O_RDONLY | O_DIRECTORY));
	CT_OK(fchownat(dfd, "f", geteuid(), getegid(), 0));
	int expect;
	uid_t other = other_uid(&expect);
	if (expect == 0)
		CT_OK(fchownat(dfd, "f", other, -1, 0));
	else
		CT_ERR(fchownat(dfd, "f", other, -1, 0), expect);
}

CT_TEST(futimesat, null_times_now)
{
	ct_put_file("f", "", 0600);
	struct timeval tv[2] = {{5000, 0}, {6000, 0}};
	CT_OK(syscall(SYS_futimesat, AT_FDCWD, "f", tv));
	time_t now = time(NULL);
	CT_OK(syscall(SYS_futimesat, AT_FDCWD, "f", NULL));
	struct stat st;
	CT_OK(stat("f", &st));
	CT_TRUE(st.st_mtime >= now - 5 && st.st_mtime <= now + 5);
}

CT_TEST(utime, errors)
{
	ct_put_file("f", "", 0600);
	struct utimbuf ub = {.actime = 1, .modtime = 2};
	CT_ERR(syscall(SYS_utime, "f/x", &ub), ENOTDIR);
	CT_ERR(syscall(SYS_utime, "f", (void *)8), EFAULT);
}

CT_TEST(utimes, null_and_errors)
{
	ct_put_file("f", "", 0600);
	time_t now = time(NULL);
	CT_OK(syscall(SYS_utimes, "f", NULL));
	struct stat st;
	CT_OK(stat("f", &st));
	CT_TRUE(st.st_atime >= now - 5 && st.st_atime <= now + 5);
	CT_ERR(syscall(SYS_utimes, "f/x", NULL), ENOTDIR);
}
