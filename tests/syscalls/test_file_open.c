/*
 * Compatibility cases: opening and closing files, and the path walk rules seen through open
 * (open, creat, openat, openat2, close, close_range, memfd_create, name_to_handle_at,
 * open_by_handle_at). glibc's open() and creat() use openat, so the cases named after the legacy
 * calls invoke them with syscall(2).
 */
#include "compat_test.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* Whether the calling process has capability cap in its effective set. */

/* Run "/bin/sh -c cmd" and return its exit status (or 128+signal). */
static int sh(const char *cmd)
{
	pid_t pid = CT_OK(fork());
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	int st = ct_wait(pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static long sys_open(const char *p, int flags, int mode)
{
	return syscall(SYS_open, p, flags, mode);
}

CT_TEST(open, creat_then_read_back)
{
	char buf[8] = {0};
	int fd = CT_OK(sys_open("f", O_CREAT | O_RDWR, 0600));
	CT_EQ(write(fd, "abc", 3), 3);
	close(fd);
	fd = CT_OK(sys_open("f", O_RDONLY, 0));
	CT_EQ(read(fd, buf, sizeof(buf)), 3);
	CT_STREQ(buf, "abc");
	close(fd);
}

CT_TEST(open, enoent)
{
	CT_ERR(sys_open("missing", O_RDONLY, 0), ENOENT);
	CT_ERR(sys_open("missing/x", O_RDONLY, 0), ENOENT);
}

/* The same errors in /proc's own directories: a name a directory lacks is ENOENT (libgcrypt
 * reads /proc/sys/crypto/fips_enabled, absent without crypto sysctls, and aborted on ENOTDIR),
 * a name under a file is ENOTDIR. */
CT_TEST(open, proc_enoent_enotdir)
{
	CT_ERR(sys_open("/proc/sys/cbox-no-such-dir/x", O_RDONLY, 0), ENOENT);
	CT_ERR(sys_open("/proc/sys/kernel/cbox-no-such-file", O_RDONLY, 0), ENOENT);
	CT_ERR(sys_open("/proc/cbox-no-such-file", O_RDONLY, 0), ENOENT);
	CT_ERR(sys_open("/proc/self/status/x", O_RDONLY, 0), ENOTDIR);
}

/* A /proc file opened for reading is a read-only fd: a write is EBADF, F_GETFL says O_RDONLY. */
CT_TEST(open, proc_file_read_only_fd)
{
	int fd = CT_OK(sys_open("/proc/self/status", O_RDONLY, 0));
	CT_ERR(write(fd, "x", 1), EBADF);
	CT_EQ(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	char c;
	CT_EQ(read(fd, &c, 1), 1);
	close(fd);
	fd = CT_OK(sys_open("/proc/self", O_RDONLY | O_DIRECTORY, 0));
	CT_ERR(write(fd, "x", 1), EBADF);
	close(fd);
}

CT_TEST(open, excl_exists)
{
	ct_put_file("f", "", 0644);
	CT_ERR(sys_open("f", O_CREAT | O_EXCL | O_WRONLY, 0600), EEXIST);
}

CT_TEST(open, efault)
{
	CT_ERR(sys_open((const char *)8, O_RDONLY, 0), EFAULT);
}

CT_TEST(open, enotdir_component)
{
	ct_put_file("file", "x", 0644);
	CT_ERR(sys_open("file/x", O_RDONLY, 0), ENOTDIR);
}

CT_TEST(open, eisdir_for_write)
{
	CT_OK(mkdir("d", 0700));
	CT_ERR(sys_open("d", O_WRONLY, 0), EISDIR);
	CT_ERR(sys_open("d", O_RDWR, 0), EISDIR);
	int fd = CT_OK(sys_open("d", O_RDONLY, 0));
	close(fd);
}

CT_TEST(open, trunc)
{
	ct_put_file("f", "hello", 0644);
	int fd = CT_OK(sys_open("f", O_WRONLY | O_TRUNC, 0));
	struct stat st;
	CT_OK(fstat(fd, &st));
	CT_EQ(st.st_size, 0);
	close(fd);
}

CT_TEST(open, append_writes_at_end)
{
	ct_put_file("f", "abc", 0644);
	int fd = CT_OK(sys_open("f", O_WRONLY | O_APPEND, 0));
	CT_OK(lseek(fd, 0, SEEK_SET));
	CT_EQ(write(fd, "de", 2), 2);
	CT_EQ(lseek(fd, 0, SEEK_CUR), 5);
	close(fd);
	char buf[8] = {0};
	fd = CT_OK(sys_open("f", O_RDONLY, 0));
	CT_EQ(read(fd, buf, sizeof(buf)), 5);
	CT_STREQ(buf, "abcde");
	close(fd);
}

CT_TEST(open, mode_masked_by_umask)
{
	umask(022);
	int fd = CT_OK(sys_open("f", O_CREAT | O_WRONLY, 0777));
	struct stat st;
	CT_OK(fstat(fd, &st));
	CT_EQ(st.st_mode & 07777, 0755);
	CT_TRUE(S_ISREG(st.st_mode));
	close(fd);
}

CT_TEST(open, eacces_without_permission)
{
	ct_put_file("f", "x", 0644);
	CT_OK(chmod("f", 0));
	if (ct_has_cap(CAP_DAC_OVERRIDE)) {
		/* Linux lets CAP_DAC_OVERRIDE open any regular file for reading and writing. */
		int fd = CT_OK(sys_open("f", O_RDWR, 0));
		close(fd);
		return;
	}
	CT_ERR(sys_open("f", O_RDONLY, 0), EACCES);
	CT_ERR(sys_open("f", O_WRONLY, 0), EACCES);
}

CT_TEST(creat, creates_and_truncates)
{
	ct_put_file("f", "hello", 0644);
	int fd = CT_OK(syscall(SYS_creat, "f", 0600));
	struct stat st;
	CT_OK(fstat(fd, &st));
	CT_EQ(st.st_size, 0);
	/* creat opens write-only. */
	char c;
	CT_ERR(read(fd, &c, 1), EBADF);
	close(fd);
	fd = CT_OK(syscall(SYS_creat, "g", 0600));
	CT_OK(fstat(fd, &st));
	CT_TRUE(S_ISREG(st.st_mode));
	close(fd);
}

CT_TEST(creat, enoent_parent)
{
	CT_ERR(syscall(SYS_creat, "nodir/f", 0600), ENOENT);
}

CT_TEST(creat, eisdir)
{
	CT_OK(mkdir("d", 0700));
	CT_ERR(syscall(SYS_creat, "d", 0600), EISDIR);
}

CT_TEST(openat, relative_to_dirfd)
{
	CT_OK(mkdir("d", 0700));
	int dfd = CT_OK(openat(AT_FDCWD, "d", O_RDONLY | O_DIRECTORY));
	int fd = CT_OK(openat(dfd, "f", O_CREAT | O_WRONLY, 0600));
	close(fd);
	struct stat st;
	CT_OK(stat("d/f", &st));
	CT_TRUE(S_ISREG(st.st_mode));
	close(dfd);
}

CT_TEST(openat, absolute_ignores_dirfd)
{
	int fd = CT_OK(openat(12345, "/dev/null", O_RDONLY));
	close(fd);
}

CT_TEST(openat, ebadf_dirfd)
{
	CT_ERR(openat(12345, "f", O_RDONLY), EBADF);
}

CT_TEST(openat, enotdir_dirfd)
{
	ct_put_file("f", "", 0644);
	int fd = CT_OK(openat(AT_FDCWD, "f", O_RDONLY));
	CT_ERR(openat(fd, "x", O_RDONLY), ENOTDIR);
	close(fd);
}

CT_TEST(openat, eloop_symlink_loop)
{
	CT_OK(symlink("a", "b"));
	CT_OK(symlink("b", "a"));
	CT_ERR(openat(AT_FDCWD, "a", O_RDONLY), ELOOP);
	CT_ERR(openat(AT_FDCWD, "a/x", O_RDONLY), ELOOP);
}

CT_TEST(openat, enametoolong)
{
	char name[NAME_MAX + 2];
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	CT_ERR(openat(AT_FDCWD, name, O_RDONLY), ENAMETOOLONG);
	char *path = malloc(PATH_MAX + 2);
	CT_TRUE(path != NULL);
	for (int i = 0; i < PATH_MAX + 1; i++)
		path[i] = i % 2 ? '/' : 'a';
	path[PATH_MAX + 1] = 0;
	CT_ERR(openat(AT_FDCWD, path, O_RDONLY), ENAMETOOLONG);
	free(path);
}

CT_TEST(openat, empty_path_enoent)
{
	CT_ERR(openat(AT_FDCWD, "", O_RDONLY), ENOENT);
}

CT_TEST(openat, trailing_slash)
{
	ct_put_file("f", "", 0644);
	CT_OK(mkdir("d", 0700));
	CT_ERR(openat(AT_FDCWD, "f/", O_RDONLY), ENOTDIR);
	int fd = CT_OK(openat(AT_FDCWD, "d/", O_RDONLY));
	close(fd);
	/* O_CREAT with a trailing slash never creates a regular file. */
	CT_ERR(openat(AT_FDCWD, "new/", O_CREAT | O_WRONLY, 0600), EISDIR);
	CT_ERR(access("new", F_OK), ENOENT);
}

CT_TEST(openat, o_nofollow)
{
	ct_put_file("f", "", 0644);
	CT_OK(symlink("f", "l"));
	CT_ERR(openat(AT_FDCWD, "l", O_RDONLY | O_NOFOLLOW), ELOOP);
	/* Only the last component is affected. */
	CT_OK(mkdir("d", 0700));
	CT_OK(symlink("d", "dl"));
	int fd = CT_OK(openat(AT_FDCWD, "dl/../f", O_RDONLY | O_NOFOLLOW));
	close(fd);
}

CT_TEST(openat, o_directory)
{
	ct_put_file("f", "", 0644);
	CT_ERR(openat(AT_FDCWD, "f", O_RDONLY | O_DIRECTORY), ENOTDIR);
	CT_OK(mkdir("d", 0700));
	CT_OK(symlink("d", "dl"));
	int fd = CT_OK(openat(AT_FDCWD, "dl", O_RDONLY | O_DIRECTORY));
	close(fd);
}

CT_TEST(openat, o_path)
{
	ct_put_file("f", "abc", 0644);
	int fd = CT_OK(openat(AT_FDCWD, "f", O_PATH));
	char c;
	CT_ERR(read(fd, &c, 1), EBADF);
	CT_ERR(write(fd, "x", 1), EBADF);
	struct stat st;
	CT_OK(fstat(fd, &st));
	CT_EQ(st.st_size, 3);
	/* A copy is one too. */
	int dup_fd = CT_OK(dup(fd));
	CT_ERR(read(dup_fd, &c, 1), EBADF);
	CT_OK(fstat(dup_fd, &st));
	CT_EQ(st.st_size, 3);
	close(dup_fd);
	close(fd);
}

/* F_GETFL shows O_PATH with only O_DIRECTORY and O_NOFOLLOW of the flags given (the rest is
 * dropped at the open, O_CLOEXEC is the fd's own); the other status commands are EBADF. */
CT_TEST(openat, o_path_getfl)
{
	ct_put_file("f", "abc", 0644);
	CT_OK(mkdir("d", 0755));
	int fd = CT_OK(openat(AT_FDCWD, "f", O_PATH));
	CT_EQ(fcntl(fd, F_GETFL), O_PATH);
	CT_ERR(fcntl(fd, F_SETFL, O_NONBLOCK), EBADF);
	CT_EQ(fcntl(fd, F_GETFL), O_PATH);
	CT_ERR(fcntl(fd, F_NOTIFY, DN_CREATE), EBADF);
	int dup_fd = CT_OK(dup(fd));
	CT_EQ(fcntl(dup_fd, F_GETFL), O_PATH);
	close(dup_fd);
	close(fd);
	fd = CT_OK(openat(AT_FDCWD, "f", O_PATH | O_NOFOLLOW | O_RDWR | O_APPEND | O_CLOEXEC));
	CT_EQ(fcntl(fd, F_GETFL), O_PATH | O_NOFOLLOW);
	CT_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	close(fd);
	fd = CT_OK(openat(AT_FDCWD, "d", O_PATH | O_DIRECTORY));
	CT_EQ(fcntl(fd, F_GETFL), O_PATH | O_DIRECTORY);
	close(fd);
}

CT_TEST(openat, o_path_directory)
{
	CT_OK(mkdir("d", 0755));
	ct_put_file("d/f", "abc", 0644);
	int fd = CT_OK(openat(AT_FDCWD, "d", O_PATH | O_DIRECTORY));
	char buf[256];
	CT_ERR(syscall(SYS_getdents64, fd, buf, sizeof(buf)), EBADF);
	struct stat st;
	CT_OK(fstatat(fd, "f", &st, 0));
	CT_EQ(st.st_size, 3);
	int f = CT_OK(openat(fd, "f", O_RDONLY));
	CT_EQ(read(f, buf, sizeof(buf)), 3);
	close(f);
	/* /proc/self/fd/N opens the directory itself anew, readable. */
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	int again = CT_OK(open(link, O_RDONLY | O_DIRECTORY));
	CT_TRUE(syscall(SYS_getdents64, again, buf, sizeof(buf)) > 0);
	close(again);
	CT_ERR(openat(AT_FDCWD, "d/f", O_PATH | O_DIRECTORY), ENOTDIR);
	close(fd);
}

CT_TEST(openat, o_path_nofollow_symlink)
{
	CT_OK(symlink("nowhere", "l"));
	int fd = CT_OK(openat(AT_FDCWD, "l", O_PATH | O_NOFOLLOW));
	struct stat st;
	CT_OK(fstatat(fd, "", &st, AT_EMPTY_PATH));
	CT_TRUE(S_ISLNK(st.st_mode));
	CT_OK(fstat(fd, &st));
	CT_TRUE(S_ISLNK(st.st_mode));
	char c;
	CT_ERR(read(fd, &c, 1), EBADF);
	CT_ERR(write(fd, "x", 1), EBADF);
	/* The link itself, through its fd (glibc's lchown and tar's way). */
	CT_OK(fchownat(fd, "", getuid(), getgid(), AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW));
	close(fd);
}

/* An O_TMPFILE file in the scratch directory, or a skip where its file system has none. */
static int tmpfile_here(int flags, mode_t mode)
{
	int fd = openat(AT_FDCWD, ".", flags, mode);
	if (fd < 0 && errno == EOPNOTSUPP)
		ct_skip("O_TMPFILE not supported by the scratch filesystem");
	if (fd < 0)
		CT_FAIL("openat(\".\", O_TMPFILE...): expected success, got %s", ct_errname(errno));
	return fd;
}

CT_TEST(openat, o_tmpfile)
{
	int fd = tmpfile_here(O_TMPFILE | O_RDWR, 0600);
	CT_EQ(write(fd, "abc", 3), 3);
	struct stat st;
	CT_OK(fstat(fd, &st));
	CT_EQ(st.st_nlink, 0);
	char p[64];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	CT_OK(linkat(AT_FDCWD, p, AT_FDCWD, "named", AT_SYMLINK_FOLLOW));
	CT_OK(stat("named", &st));
	CT_EQ(st.st_size, 3);
	close(fd);
}

CT_TEST(openat, o_tmpfile_reopen_proc_fd)
{
	/* 0666: under cbox-run as root the sentry is the host's nobody, which may reopen a file
	 * of root's only as "others" (see syscalls.def, open). */
	mode_t mask = umask(0);
	int fd = tmpfile_here(O_TMPFILE | O_RDWR, 0666);
	umask(mask);
	CT_EQ(write(fd, "abc", 3), 3);
	char p[64], b[8] = {0};
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	/* A new open file description of the same unnamed file: its own offset and mode. */
	int r = CT_OK(open(p, O_RDONLY));
	CT_EQ(read(r, b, sizeof(b)), 3);
	CT_TRUE(memcmp(b, "abc", 3) == 0);
	CT_EQ(fcntl(r, F_GETFL) & O_ACCMODE, O_RDONLY);
	CT_ERR(write(r, "x", 1), EBADF);
	struct stat a, c;
	CT_OK(fstat(fd, &a));
	CT_OK(fstat(r, &c));
	CT_EQ(a.st_ino, c.st_ino);
	CT_EQ(c.st_nlink, 0);
	/* The first fd's offset did not move. */
	CT_EQ(lseek(fd, 0, SEEK_CUR), 3);
	/* O_TRUNC through the link truncates the file itself. */
	close(CT_OK(open(p, O_WRONLY | O_TRUNC)));
	CT_OK(fstat(fd, &a));
	CT_EQ(a.st_size, 0);
	close(r);
	close(fd);
}

CT_TEST(openat, o_tmpfile_needs_write)
{
	CT_ERR(openat(AT_FDCWD, ".", O_TMPFILE | O_RDONLY, 0600), EINVAL);
}

CT_TEST(openat, o_tmpfile_flag_mask)
{
	/* The kernel's O_TMPFILE_MASK: no O_CREAT beside it. */
	CT_ERR(openat(AT_FDCWD, ".", O_TMPFILE | O_RDWR | O_CREAT, 0600), EINVAL);
	ct_put_file("f", "", 0644);
	CT_ERR(openat(AT_FDCWD, "f", O_TMPFILE | O_RDWR, 0600), ENOTDIR);
	CT_ERR(openat(AT_FDCWD, "missing", O_TMPFILE | O_RDWR, 0600), ENOENT);
}

static long sys_openat2(int dfd, const char *p, struct open_how *how, size_t size);

CT_TEST(openat, o_path_drops_other_flags)
{
	/* open and openat keep only O_PATH's own flags: no file is made, nothing is unnamed. */
	int fd = CT_OK(openat(AT_FDCWD, ".", O_PATH | O_TMPFILE | O_RDWR, 0600));
	struct stat st;
	CT_OK(fstat(fd, &st));
	CT_TRUE(S_ISDIR(st.st_mode));
	close(fd);
	CT_ERR(openat(AT_FDCWD, "made", O_PATH | O_CREAT | O_WRONLY, 0600), ENOENT);
	CT_ERR(access("made", F_OK), ENOENT);
	/* openat2 refuses them instead. */
	struct open_how how = {.flags = O_PATH | O_CREAT, .mode = 0600};
	CT_ERR(sys_openat2(AT_FDCWD, "made", &how, sizeof(how)), EINVAL);
}

CT_TEST(openat, o_tmpfile_link_empty_path)
{
	int fd = tmpfile_here(O_TMPFILE | O_WRONLY, 0640);
	CT_EQ(write(fd, "hello", 5), 5);
	/* Unnamed: /proc shows the directory, "#" and the inode, and " (deleted)". */
	char p[64], target[256];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(p, target, sizeof(target) - 1);
	CT_TRUE(n > 0);
	target[n] = '\0';
	CT_TRUE(strstr(target, "/#") != NULL);
	CT_TRUE(n > 10 && strcmp(target + n - 10, " (deleted)") == 0);
	/* Linux 6.10+: the opener needs no capability to link its own file. */
	CT_OK(linkat(fd, "", AT_FDCWD, "given", AT_EMPTY_PATH));
	struct stat st;
	CT_OK(stat("given", &st));
	CT_EQ(st.st_size, 5);
	CT_EQ(st.st_nlink, 1);
	mode_t mask = umask(0);
	umask(mask);
	CT_EQ(st.st_mode & 07777, 0640 & ~mask);
	CT_OK(fstat(fd, &st));
	CT_EQ(st.st_nlink, 1);
	close(fd);
}

CT_TEST(openat, o_tmpfile_excl_never_linked)
{
	int fd = tmpfile_here(O_TMPFILE | O_RDWR | O_EXCL, 0600);
	CT_ERR(linkat(fd, "", AT_FDCWD, "never", AT_EMPTY_PATH), ENOENT);
	CT_ERR(access("never", F_OK), ENOENT);
	close(fd);
}

CT_TEST(openat, o_cloexec_across_exec)
{
	ct_put_file("f", "", 0644);
	int keep = CT_OK(openat(AT_FDCWD, "f", O_RDONLY));
	int gone = CT_OK(openat(AT_FDCWD, "f", O_RDONLY | O_CLOEXEC));
	CT_EQ(fcntl(gone, F_GETFD), FD_CLOEXEC);
	CT_EQ(fcntl(keep, F_GETFD), 0);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "test -e /proc/self/fd/%d && ! test -e /proc/self/fd/%d", keep,
	         gone);
	CT_EQ(sh(cmd), 0);
}

CT_TEST(openat, directory_creat_einval)
{
	/* Since Linux 6.4, O_CREAT | O_DIRECTORY is always EINVAL. */
	CT_ERR(openat(AT_FDCWD, "x", O_CREAT | O_DIRECTORY | O_RDONLY, 0700), EINVAL);
}

CT_TEST(openat, dotdot_of_root_is_root)
{
	struct stat a, b;
	int fd = CT_OK(openat(AT_FDCWD, "/../../", O_RDONLY | O_DIRECTORY));
	CT_OK(fstat(fd, &a));
	CT_OK(stat("/", &b));
	CT_EQ(a.st_ino, b.st_ino);
	CT_EQ(a.st_dev, b.st_dev);
	close(fd);
}

static long sys_openat2(int dfd, const char *p, struct open_how *how, size_t size)
{
	return syscall(SYS_openat2, dfd, p, how, size);
}

CT_TEST(openat2, basic_and_einval)
{
	struct open_how how = {.flags = O_CREAT | O_WRONLY, .mode = 0600};
	int fd = CT_OK(sys_openat2(AT_FDCWD, "f", &how, sizeof(how)));
	close(fd);
	CT_ERR(sys_openat2(AT_FDCWD, "f", &how, 8), EINVAL);
	struct open_how bad = {.flags = O_RDONLY, .resolve = 1ULL << 40};
	CT_ERR(sys_openat2(AT_FDCWD, "f", &bad, sizeof(bad)), EINVAL);
	/* Unlike openat, a mode without O_CREAT/O_TMPFILE is rejected. */
	struct open_how mode = {.flags = O_RDONLY, .mode = 0600};
	CT_ERR(sys_openat2(AT_FDCWD, "f", &mode, sizeof(mode)), EINVAL);
}

CT_TEST(openat2, resolve_no_symlinks)
{
	ct_put_file("f", "", 0644);
	CT_OK(symlink("f", "l"));
	struct open_how how = {.flags = O_RDONLY, .resolve = RESOLVE_NO_SYMLINKS};
	CT_ERR(sys_openat2(AT_FDCWD, "l", &how, sizeof(how)), ELOOP);
	int fd = CT_OK(sys_openat2(AT_FDCWD, "f", &how, sizeof(how)));
	close(fd);
}

CT_TEST(openat2, resolve_beneath)
{
	CT_OK(mkdir("d", 0700));
	ct_put_file("f", "", 0644);
	int dfd = CT_OK(open("d", O_RDONLY | O_DIRECTORY));
	struct open_how how = {.flags = O_RDONLY, .resolve = RESOLVE_BENEATH};
	CT_ERR(sys_openat2(dfd, "../f", &how, sizeof(how)), EXDEV);
	CT_ERR(sys_openat2(dfd, "/etc/passwd", &how, sizeof(how)), EXDEV);
	close(dfd);
}

CT_TEST(close, ebadf)
{
	CT_ERR(close(-1), EBADF);
	CT_ERR(close(98765), EBADF);
}

CT_TEST(close, twice_ebadf)
{
	int fd = CT_OK(open("/dev/null", O_RDONLY));
	CT_OK(close(fd));
	CT_ERR(close(fd), EBADF);
	CT_ERR(fcntl(fd, F_GETFD), EBADF);
}

CT_TEST(close, frees_lowest_fd)
{
	int a = CT_OK(open("/dev/null", O_RDONLY));
	int b = CT_OK(open("/dev/null", O_RDONLY));
	CT_OK(close(a));
	int c = CT_OK(open("/dev/null", O_RDONLY));
	CT_EQ(c, a);
	close(b);
	close(c);
}

CT_TEST(close_range, closes_range)
{
	int fds[4];
	for (int i = 0; i < 4; i++)
		fds[i] = CT_OK(open("/dev/null", O_RDONLY));
	CT_OK(syscall(SYS_close_range, fds[1], fds[2], 0));
	CT_OK(fcntl(fds[0], F_GETFD));
	CT_ERR(fcntl(fds[1], F_GETFD), EBADF);
	CT_ERR(fcntl(fds[2], F_GETFD), EBADF);
	CT_OK(fcntl(fds[3], F_GETFD));
}

CT_TEST(close_range, cloexec_flag)
{
	int fd = CT_OK(open("/dev/null", O_RDONLY));
	CT_OK(syscall(SYS_close_range, fd, fd, CLOSE_RANGE_CLOEXEC));
	CT_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
}

CT_TEST(close_range, einval)
{
	CT_ERR(syscall(SYS_close_range, 10, 5, 0), EINVAL);
	CT_ERR(syscall(SYS_close_range, 3, 5, 0x80000000u), EINVAL);
}

CT_TEST(memfd_create, rw_and_size)
{
	int fd = CT_OK(memfd_create("ct", MFD_CLOEXEC));
	CT_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CT_EQ(write(fd, "hello", 5), 5);
	char buf[8] = {0};
	CT_EQ(pread(fd, buf, sizeof(buf), 0), 5);
	CT_STREQ(buf, "hello");
	CT_OK(ftruncate(fd, 4096));
	struct stat st;
	CT_OK(fstat(fd, &st));
	CT_EQ(st.st_size, 4096);
	close(fd);
}

CT_TEST(memfd_create, einval)
{
	char name[300];
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	CT_ERR(memfd_create(name, 0), EINVAL);
	CT_ERR(memfd_create("x", 0x1000u), EINVAL);
	CT_ERR(syscall(SYS_memfd_create, (const char *)8, 0), EFAULT);
}

CT_TEST(memfd_create, seals)
{
	int fd = CT_OK(memfd_create("ct", MFD_ALLOW_SEALING));
	CT_EQ(write(fd, "abc", 3), 3);
	CT_OK(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW));
	CT_EQ(fcntl(fd, F_GET_SEALS), F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW);
	CT_ERR(write(fd, "d", 1), EPERM);
	CT_ERR(ftruncate(fd, 1), EPERM);
	close(fd);
	fd = CT_OK(memfd_create("ct", 0));
	CT_EQ(fcntl(fd, F_GET_SEALS), F_SEAL_SEAL);
	close(fd);
}

CT_TEST(name_to_handle_at, eoverflow_reports_size)
{
	ct_put_file("f", "", 0644);
	struct file_handle fh = {.handle_bytes = 0};
	int mnt;
	long r = syscall(SYS_name_to_handle_at, AT_FDCWD, "f", &fh, &mnt, 0);
	if (r < 0 && errno == EOPNOTSUPP)
		ct_skip("the scratch filesystem does not export file handles");
	CT_EQ(r, -1);
	CT_EQ(errno, EOVERFLOW);
	CT_TRUE(fh.handle_bytes > 0 && fh.handle_bytes <= MAX_HANDLE_SZ);
}

CT_TEST(name_to_handle_at, errors)
{
	struct {
		struct file_handle fh;
		unsigned char buf[MAX_HANDLE_SZ];
	} h = {.fh.handle_bytes = MAX_HANDLE_SZ};
	int mnt;
	CT_ERR(syscall(SYS_name_to_handle_at, AT_FDCWD, "missing", &h.fh, &mnt, 0), ENOENT);
	CT_ERR(syscall(SYS_name_to_handle_at, AT_FDCWD, "x", &h.fh, &mnt, 0x4000000), EINVAL);
}

CT_TEST(open_by_handle_at, roundtrip_or_eperm)
{
	ct_put_file("f", "abc", 0644);
	struct {
		struct file_handle fh;
		unsigned char buf[MAX_HANDLE_SZ];
	} h = {.fh.handle_bytes = MAX_HANDLE_SZ};
	int mnt;
	if (syscall(SYS_name_to_handle_at, AT_FDCWD, "f", &h.fh, &mnt, 0) < 0)
		ct_skip("name_to_handle_at: %s", ct_errname(errno));
	if (!ct_has_cap(CAP_DAC_READ_SEARCH)) {
		/* Decoding a handle bypasses the path walk: Linux requires the capability. */
		CT_ERR(syscall(SYS_open_by_handle_at, AT_FDCWD, &h.fh, O_RDONLY), EPERM);
		return;
	}
	int mfd = CT_OK(open(".", O_RDONLY | O_DIRECTORY));
	int fd = CT_OK(syscall(SYS_open_by_handle_at, mfd, &h.fh, O_RDONLY));
	char buf[4] = {0};
	CT_EQ(read(fd, buf, 3), 3);
	CT_STREQ(buf, "abc");
	close(fd);
	close(mfd);
}

CT_TEST(open_by_handle_at, ebadf_or_eperm)
{
	struct {
		struct file_handle fh;
		unsigned char buf[16];
	} h = {.fh.handle_bytes = 8, .fh.handle_type = 1};
	long r = syscall(SYS_open_by_handle_at, 98765, &h.fh, O_RDONLY);
	CT_EQ(r, -1);
	CT_TRUE(errno == EBADF || (errno == EPERM && !ct_has_cap(CAP_DAC_READ_SEARCH)));
}
