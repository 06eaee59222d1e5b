/*
 * Compatibility cases: directories and names (getdents, getdents64, getcwd, chdir, fchdir,
 * mkdir, mkdirat, rmdir, unlink, unlinkat, rename, renameat, renameat2, link, linkat, symlink,
 * symlinkat, mknod, mknodat). The legacy calls are invoked with syscall(2) so the named syscall
 * is the one exercised whatever glibc's wrappers do.
 */
#include "compat_test.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#define RENAME_EXCHANGE  (1 << 1)
#endif

/* Whether the calling process has capability cap in its effective set. */

static int exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

static void read_text(const char *p, char *buf, size_t n)
{
	memset(buf, 0, n);
	int fd = CT_OK(open(p, O_RDONLY));
	CT_OK(read(fd, buf, n - 1));
	close(fd);
}

struct linux_dirent {
	unsigned long d_ino;
	unsigned long d_off;
	unsigned short d_reclen;
	char d_name[];
};

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* Count the entries of dir with getdents64 (or getdents), and whether each name was seen. */
static int list_dir(int legacy, const char *dir, const char **names, int *seen, int nnames)
{
	int fd = CT_OK(open(dir, O_RDONLY | O_DIRECTORY));
	char buf[512];
	int count = 0;
	for (;;) {
		long n =
		    CT_OK(syscall(legacy ? SYS_getdents : SYS_getdents64, fd, buf, sizeof(buf)));
		if (n == 0)
			break;
		for (long off = 0; off < n;) {
			const char *name;
			unsigned short reclen;
			if (legacy) {
				struct linux_dirent *d = (void *)(buf + off);
				name = d->d_name;
				reclen = d->d_reclen;
			} else {
				struct linux_dirent64 *d = (void *)(buf + off);
				name = d->d_name;
				reclen = d->d_reclen;
			}
			CT_TRUE(reclen > 0);
			for (int i = 0; i < nnames; i++)
				if (strcmp(name, names[i]) == 0)
					seen[i]++;
			count++;
			off += reclen;
		}
	}
	close(fd);
	return count;
}

CT_TEST(getdents64, lists_all)
{
	CT_OK(mkdir("d", 0700));
	ct_put_file("d/a", "", 0644);
	ct_put_file("d/b", "", 0644);
	CT_OK(mkdir("d/c", 0700));
	const char *names[] = {".", "..", "a", "b", "c"};
	int seen[5] = {0};
	CT_EQ(list_dir(0, "d", names, seen, 5), 5);
	for (int i = 0; i < 5; i++)
		CT_EQ(seen[i], 1);
}

CT_TEST(getdents64, d_type)
{
	CT_OK(mkdir("d", 0700));
	ct_put_file("d/f", "", 0644);
	CT_OK(symlink("f", "d/l"));
	int fd = CT_OK(open("d", O_RDONLY | O_DIRECTORY));
	char buf[1024];
	long n = CT_OK(syscall(SYS_getdents64, fd, buf, sizeof(buf)));
	int found = 0;
	for (long off = 0; off < n;) {
		struct linux_dirent64 *d = (void *)(buf + off);
		unsigned char want = 0;
		if (strcmp(d->d_name, "f") == 0)
			want = DT_REG;
		else if (strcmp(d->d_name, "l") == 0)
			want = DT_LNK;
		else
			want = DT_DIR;
		if (d->d_type != DT_UNKNOWN)
			CT_EQ(d->d_type, want);
		found++;
		off += d->d_reclen;
	}
	CT_EQ(found, 4);
}

CT_TEST(getdents64, many_entries_small_buffer)
{
	CT_OK(mkdir("d", 0700));
	char name[32];
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "d/file_%03d", i);
		ct_put_file(name, "", 0644);
	}
	CT_EQ(list_dir(0, "d", NULL, NULL, 0), 102);
}

CT_TEST(getdents64, errors)
{
	char buf[256];
	ct_put_file("f", "", 0644);
	int fd = CT_OK(open("f", O_RDONLY));
	CT_ERR(syscall(SYS_getdents64, fd, buf, sizeof(buf)), ENOTDIR);
	CT_ERR(syscall(SYS_getdents64, -1, buf, sizeof(buf)), EBADF);
	int dfd = CT_OK(open(".", O_RDONLY | O_DIRECTORY));
	CT_ERR(syscall(SYS_getdents64, dfd, buf, 1L), EINVAL);
	CT_ERR(syscall(SYS_getdents64, dfd, (void *)8, sizeof(buf)), EFAULT);
}

CT_TEST(getdents64, rewind_with_lseek)
{
	CT_OK(mkdir("d", 0700));
	ct_put_file("d/a", "", 0644);
	int fd = CT_OK(open("d", O_RDONLY | O_DIRECTORY));
	char buf[512];
	long n1 = CT_OK(syscall(SYS_getdents64, fd, buf, sizeof(buf)));
	CT_EQ(syscall(SYS_getdents64, fd, buf, sizeof(buf)), 0);
	CT_EQ(lseek(fd, 0, SEEK_SET), 0);
	CT_EQ(syscall(SYS_getdents64, fd, buf, sizeof(buf)), n1);
}

CT_TEST(getdents, lists_all)
{
	CT_OK(mkdir("d", 0700));
	ct_put_file("d/x", "", 0644);
	const char *names[] = {".", "..", "x"};
	int seen[3] = {0};
	CT_EQ(list_dir(1, "d", names, seen, 3), 3);
	for (int i = 0; i < 3; i++)
		CT_EQ(seen[i], 1);
}

CT_TEST(getdents, errors)
{
	char buf[256];
	ct_put_file("f", "", 0644);
	int fd = CT_OK(open("f", O_RDONLY));
	CT_ERR(syscall(SYS_getdents, fd, buf, sizeof(buf)), ENOTDIR);
	CT_ERR(syscall(SYS_getdents, -1, buf, sizeof(buf)), EBADF);
	int dfd = CT_OK(open(".", O_RDONLY | O_DIRECTORY));
	CT_ERR(syscall(SYS_getdents, dfd, buf, 1L), EINVAL);
}

CT_TEST(getcwd, matches_scratch)
{
	char buf[PATH_MAX];
	long n = CT_OK(syscall(SYS_getcwd, buf, sizeof(buf)));
	CT_EQ(n, strlen(buf) + 1);
	CT_TRUE(strncmp(buf, ct_scratch(), strlen(ct_scratch())) == 0);
	CT_OK(mkdir("sub", 0700));
	CT_OK(chdir("sub"));
	CT_OK(syscall(SYS_getcwd, buf, sizeof(buf)));
	CT_STREQ(buf + strlen(buf) - 4, "/sub");
}

CT_TEST(getcwd, erange_and_efault)
{
	char buf[4];
	CT_ERR(syscall(SYS_getcwd, buf, sizeof(buf)), ERANGE);
	CT_ERR(syscall(SYS_getcwd, buf, 0L), ERANGE);
	CT_ERR(syscall(SYS_getcwd, (void *)8, 4096L), EFAULT);
}

CT_TEST(getcwd, unlinked_cwd)
{
	CT_OK(mkdir("gone", 0700));
	CT_OK(chdir("gone"));
	CT_OK(rmdir("../gone"));
	char buf[PATH_MAX];
	long r = syscall(SYS_getcwd, buf, sizeof(buf));
	/* Linux answers ENOENT for a removed working directory. */
	CT_EQ(r, -1);
	CT_EQ(errno, ENOENT);
}

CT_TEST(chdir, relative_and_back)
{
	CT_OK(mkdir("a", 0700));
	CT_OK(mkdir("a/b", 0700));
	CT_OK(syscall(SYS_chdir, "a/b"));
	ct_put_file("here", "", 0644);
	CT_OK(syscall(SYS_chdir, "../.."));
	CT_TRUE(exists("a/b/here"));
}

CT_TEST(chdir, errors)
{
	ct_put_file("f", "", 0644);
	CT_ERR(syscall(SYS_chdir, "f"), ENOTDIR);
	CT_ERR(syscall(SYS_chdir, "missing"), ENOENT);
	CT_ERR(syscall(SYS_chdir, ""), ENOENT);
	CT_ERR(syscall(SYS_chdir, (void *)8), EFAULT);
}

CT_TEST(chdir, eacces_no_search)
{
	CT_OK(mkdir("d", 0600));
	if (ct_has_cap(CAP_DAC_READ_SEARCH) || ct_has_cap(CAP_DAC_OVERRIDE)) {
		CT_OK(syscall(SYS_chdir, "d"));
		return;
	}
	CT_ERR(syscall(SYS_chdir, "d"), EACCES);
}

CT_TEST(chdir, not_shared_with_parent)
{
	CT_OK(mkdir("d", 0700));
	pid_t pid = CT_OK(fork());
	if (pid == 0)
		_exit(syscall(SYS_chdir, "d") == 0 ? 0 : 1);
	CT_EQ(ct_wait(pid), 0);
	CT_TRUE(exists("d"));
	CT_ERR(access("../d", F_OK), ENOENT);
}

CT_TEST(fchdir, to_dirfd)
{
	CT_OK(mkdir("d", 0700));
	int fd = CT_OK(open("d", O_RDONLY | O_DIRECTORY));
	CT_OK(fchdir(fd));
	ct_put_file("x", "", 0644);
	CT_OK(chdir(".."));
	CT_TRUE(exists("d/x"));
}

CT_TEST(fchdir, errors)
{
	ct_put_file("f", "", 0644);
	int fd = CT_OK(open("f", O_RDONLY));
	CT_ERR(fchdir(fd), ENOTDIR);
	CT_ERR(fchdir(-1), EBADF);
	CT_OK(mkdir("d", 0700));
	int pfd = CT_OK(open("d", O_PATH));
	/* An O_PATH descriptor is enough for fchdir. */
	CT_OK(fchdir(pfd));
}

CT_TEST(mkdir, mode_and_errors)
{
	umask(022);
	CT_OK(syscall(SYS_mkdir, "d", 0777));
	struct stat st;
	CT_OK(stat("d", &st));
	CT_TRUE(S_ISDIR(st.st_mode));
	CT_EQ(st.st_mode & 0777, 0755);
	CT_ERR(syscall(SYS_mkdir, "d", 0700), EEXIST);
	CT_ERR(syscall(SYS_mkdir, "x/y", 0700), ENOENT);
	ct_put_file("f", "", 0644);
	CT_ERR(syscall(SYS_mkdir, "f/y", 0700), ENOTDIR);
	CT_ERR(syscall(SYS_mkdir, "f", 0700), EEXIST);
}

CT_TEST(mkdir, trailing_slash_and_dangling_symlink)
{
	CT_OK(syscall(SYS_mkdir, "d/", 0700));
	CT_TRUE(exists("d"));
	CT_OK(symlink("target", "l"));
	/* mkdir never follows a final symlink. */
	CT_ERR(syscall(SYS_mkdir, "l", 0700), EEXIST);
	CT_TRUE(!exists("target"));
}

CT_TEST(mkdir, eacces_readonly_parent)
{
	CT_OK(mkdir("ro", 0500));
	if (ct_has_cap(CAP_DAC_OVERRIDE)) {
		CT_OK(syscall(SYS_mkdir, "ro/d", 0700));
		CT_OK(rmdir("ro/d"));
	} else {
		CT_ERR(syscall(SYS_mkdir, "ro/d", 0700), EACCES);
	}
	CT_OK(chmod("ro", 0700));
}

CT_TEST(mkdir, enametoolong)
{
	char name[NAME_MAX + 2];
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	CT_ERR(syscall(SYS_mkdir, name, 0700), ENAMETOOLONG);
	name[NAME_MAX] = 0;
	CT_OK(syscall(SYS_mkdir, name, 0700));
}

CT_TEST(mkdirat, dirfd)
{
	CT_OK(mkdir("d", 0700));
	int dfd = CT_OK(open("d", O_RDONLY | O_DIRECTORY));
	CT_OK(mkdirat(dfd, "sub", 0700));
	CT_TRUE(exists("d/sub"));
	CT_ERR(mkdirat(dfd, "sub", 0700), EEXIST);
	CT_ERR(mkdirat(9999, "sub", 0700), EBADF);
	ct_put_file("f", "", 0644);
	int ffd = CT_OK(open("f", O_RDONLY));
	CT_ERR(mkdirat(ffd, "sub", 0700), ENOTDIR);
}

CT_TEST(rmdir, removes_empty)
{
	CT_OK(mkdir("d", 0700));
	CT_OK(syscall(SYS_rmdir, "d"));
	CT_TRUE(!exists("d"));
}

CT_TEST(rmdir, errors)
{
	CT_OK(mkdir("d", 0700));
	ct_put_file("d/f", "", 0644);
	CT_ERR(syscall(SYS_rmdir, "d"), ENOTEMPTY);
	CT_ERR(syscall(SYS_rmdir, "d/f"), ENOTDIR);
	CT_ERR(syscall(SYS_rmdir, "missing"), ENOENT);
	CT_ERR(syscall(SYS_rmdir, "."), EINVAL);
	CT_ERR(syscall(SYS_rmdir, "d/.."), ENOTEMPTY);
	CT_OK(symlink("d", "l"));
	CT_ERR(syscall(SYS_rmdir, "l"), ENOTDIR);
}

CT_TEST(unlink, removes_name_keeps_open_file)
{
	ct_put_file("f", "data", 0644);
	int fd = CT_OK(open("f", O_RDONLY));
	CT_OK(syscall(SYS_unlink, "f"));
	CT_TRUE(!exists("f"));
	char buf[8] = {0};
	CT_EQ(read(fd, buf, sizeof(buf)), 4);
	CT_STREQ(buf, "data");
}

CT_TEST(unlink, symlink_not_target)
{
	ct_put_file("f", "", 0644);
	CT_OK(symlink("f", "l"));
	CT_OK(syscall(SYS_unlink, "l"));
	CT_TRUE(exists("f"));
	CT_TRUE(!exists("l"));
}

CT_TEST(unlink, errors)
{
	CT_OK(mkdir("d", 0700));
	CT_ERR(syscall(SYS_unlink, "d"), EISDIR);
	CT_ERR(syscall(SYS_unlink, "missing"), ENOENT);
	ct_put_file("f", "", 0644);
	CT_ERR(syscall(SYS_unlink, "f/"), ENOTDIR);
	CT_ERR(syscall(SYS_unlink, (void *)8), EFAULT);
}

CT_TEST(unlink, sticky_dir)
{
	CT_OK(mkdir("d", 01777));
	CT_OK(chmod("d", 01777));
	ct_put_file("d/f", "", 0644);
	/* The owner of a file in a sticky directory can always remove it. */
	CT_OK(syscall(SYS_unlink, "d/f"));
}

CT_TEST(unlinkat, file_and_dir)
{
	CT_OK(mkdir("d", 0700));
	ct_put_file("d/f", "", 0644);
	int dfd = CT_OK(open("d", O_RDONLY | O_DIRECTORY));
	CT_ERR(unlinkat(dfd, "f", AT_REMOVEDIR), ENOTDIR);
	CT_OK(unlinkat(dfd, "f", 0));
	CT_ERR(unlinkat(AT_FDCWD, "d", 0), EISDIR);
	CT_OK(unlinkat(AT_FDCWD, "d", AT_REMOVEDIR));
	CT_TRUE(!exists("d"));
}

CT_TEST(unlinkat, errors)
{
	CT_ERR(unlinkat(AT_FDCWD, "x", 0x1), EINVAL);
	CT_ERR(unlinkat(9999, "x", 0), EBADF);
	CT_ERR(unlinkat(AT_FDCWD, "missing", 0), ENOENT);
}

CT_TEST(rename, file_replaces_target)
{
	ct_put_file("a", "A", 0644);
	ct_put_file("b", "B", 0644);
	int fd = CT_OK(open("b", O_RDONLY));
	CT_OK(syscall(SYS_rename, "a", "b"));
	CT_TRUE(!exists("a"));
	char buf[4];
	read_text("b", buf, sizeof(buf));
	CT_STREQ(buf, "A");
	/* The replaced file lives on while open. */
	CT_EQ(read(fd, buf, 1), 1);
	CT_EQ(buf[0], 'B');
}

CT_TEST(rename, directories)
{
	CT_OK(mkdir("d", 0700));
	ct_put_file("d/f", "", 0644);
	CT_OK(mkdir("empty", 0700));
	CT_OK(syscall(SYS_rename, "d", "empty"));
	CT_TRUE(exists("empty/f"));
	CT_OK(mkdir("full", 0700));
	ct_put_file("full/x", "", 0644);
	CT_ERR(syscall(SYS_rename, "empty", "full"), ENOTEMPTY);
}

CT_TEST(rename, type_mismatch_errors)
{
	ct_put_file("f", "", 0644);
	CT_OK(mkdir("d", 0700));
	CT_ERR(syscall(SYS_rename, "f", "d"), EISDIR);
	CT_ERR(syscall(SYS_rename, "d", "f"), ENOTDIR);
	CT_ERR(syscall(SYS_rename, "d", "d/sub"), EINVAL);
	CT_ERR(syscall(SYS_rename, "missing", "x"), ENOENT);
	CT_ERR(syscall(SYS_rename, "f", "nodir/x"), ENOENT);
}

CT_TEST(rename, same_file_noop)
{
	ct_put_file("f", "", 0644);
	CT_OK(link("f", "g"));
	CT_OK(syscall(SYS_rename, "f", "g"));
	/* Renaming a name onto a hard link of the same inode does nothing. */
	CT_TRUE(exists("f"));
	CT_TRUE(exists("g"));
	CT_OK(syscall(SYS_rename, "f", "f"));
}

CT_TEST(renameat, dirfds)
{
	CT_OK(mkdir("a", 0700));
	CT_OK(mkdir("b", 0700));
	ct_put_file("a/f", "", 0644);
	int da = CT_OK(open("a", O_RDONLY | O_DIRECTORY));
	int db = CT_OK(open("b", O_RDONLY | O_DIRECTORY));
	CT_OK(syscall(SYS_renameat, da, "f", db, "g"));
	CT_TRUE(exists("b/g"));
	CT_ERR(syscall(SYS_renameat, 9999, "f", db, "g"), EBADF);
}

CT_TEST(renameat2, noreplace)
{
	ct_put_file("a", "", 0644);
	ct_put_file("b", "", 0644);
	CT_ERR(syscall(SYS_renameat2, AT_FDCWD, "a", AT_FDCWD, "b", RENAME_NOREPLACE), EEXIST);
	CT_OK(syscall(SYS_renameat2, AT_FDCWD, "a", AT_FDCWD, "c", RENAME_NOREPLACE));
	CT_TRUE(exists("c"));
}

CT_TEST(renameat2, exchange)
{
	ct_put_file("a", "A", 0644);
	CT_OK(mkdir("d", 0700));
	CT_OK(syscall(SYS_renameat2, AT_FDCWD, "a", AT_FDCWD, "d", RENAME_EXCHANGE));
	struct stat st;
	CT_OK(stat("a", &st));
	CT_TRUE(S_ISDIR(st.st_mode));
	char buf[4];
	read_text("d", buf, sizeof(buf));
	CT_STREQ(buf, "A");
	CT_ERR(syscall(SYS_renameat2, AT_FDCWD, "a", AT_FDCWD, "none", RENAME_EXCHANGE), ENOENT);
}

CT_TEST(renameat2, bad_flags)
{
	ct_put_file("a", "", 0644);
	CT_ERR(syscall(SYS_renameat2, AT_FDCWD, "a", AT_FDCWD, "b",
	               RENAME_NOREPLACE | RENAME_EXCHANGE),
	       EINVAL);
	CT_ERR(syscall(SYS_renameat2, AT_FDCWD, "a", AT_FDCWD, "b", 0x100), EINVAL);
}

CT_TEST(link, shares_inode)
{
	ct_put_file("f", "x", 0644);
	CT_OK(syscall(SYS_link, "f", "g"));
	struct stat a, b;
	CT_OK(stat("f", &a));
	CT_OK(stat("g", &b));
	CT_EQ(a.st_ino, b.st_ino);
	CT_EQ(a.st_nlink, 2);
	CT_OK(unlink("f"));
	CT_OK(stat("g", &b));
	CT_EQ(b.st_nlink, 1);
}

CT_TEST(link, errors)
{
	ct_put_file("f", "", 0644);
	CT_OK(mkdir("d", 0700));
	CT_ERR(syscall(SYS_link, "f", "f"), EEXIST);
	CT_ERR(syscall(SYS_link, "d", "d2"), EPERM);
	CT_ERR(syscall(SYS_link, "missing", "x"), ENOENT);
	CT_ERR(syscall(SYS_link, "f", "nodir/x"), ENOENT);
}

CT_TEST(link, does_not_follow_symlink)
{
	ct_put_file("f", "", 0644);
	CT_OK(symlink("f", "l"));
	CT_OK(syscall(SYS_link, "l", "l2"));
	struct stat st;
	CT_OK(lstat("l2", &st));
	CT_TRUE(S_ISLNK(st.st_mode));
}

CT_TEST(linkat, follow_flag)
{
	ct_put_file("f", "", 0644);
	CT_OK(symlink("f", "l"));
	CT_OK(linkat(AT_FDCWD, "l", AT_FDCWD, "hard", AT_SYMLINK_FOLLOW));
	struct stat st;
	CT_OK(lstat("hard", &st));
	CT_TRUE(S_ISREG(st.st_mode));
	CT_ERR(linkat(AT_FDCWD, "l", AT_FDCWD, "x", 0x1), EINVAL);
	CT_ERR(linkat(9999, "f", AT_FDCWD, "x", 0), EBADF);
}

CT_TEST(linkat, empty_path)
{
	ct_put_file("f", "", 0644);
	int fd = CT_OK(open("f", O_RDONLY));
	long r = linkat(fd, "", AT_FDCWD, "g", AT_EMPTY_PATH);
	if (r < 0 && errno == ENOENT && !ct_has_cap(CAP_DAC_READ_SEARCH)) {
		/* Before Linux 6.10, AT_EMPTY_PATH needed CAP_DAC_READ_SEARCH; later it only needs
		 * the fd to have been opened normally. Both answers are Linux's. */
		return;
	}
	CT_OK(r);
	CT_TRUE(exists("g"));
}

CT_TEST(symlink, dangling_and_relative)
{
	CT_OK(syscall(SYS_symlink, "does/not/exist", "l"));
	char buf[32] = {0};
	CT_EQ(readlink("l", buf, sizeof(buf)), 14);
	CT_STREQ(buf, "does/not/exist");
	CT_OK(mkdir("d", 0700));
	ct_put_file("d/f", "X", 0644);
	CT_OK(syscall(SYS_symlink, "f", "d/rel"));
	read_text("d/rel", buf, sizeof(buf));
	CT_STREQ(buf, "X");
}

CT_TEST(symlink, errors)
{
	ct_put_file("f", "", 0644);
	CT_ERR(syscall(SYS_symlink, "x", "f"), EEXIST);
	CT_ERR(syscall(SYS_symlink, "", "l"), ENOENT);
	CT_ERR(syscall(SYS_symlink, "x", "nodir/l"), ENOENT);
	CT_ERR(syscall(SYS_symlink, (void *)8, "l"), EFAULT);
}

CT_TEST(symlink, eloop_chain)
{
	char a[16], b[16];
	for (int i = 0; i < 45; i++) {
		snprintf(a, sizeof(a), "l%d", i);
		snprintf(b, sizeof(b), "l%d", i + 1);
		CT_OK(syscall(SYS_symlink, b, a));
	}
	ct_put_file("l45", "", 0644);
	/* Linux follows at most 40 symlinks in one walk. */
	CT_ERR(open("l0", O_RDONLY), ELOOP);
	int fd = CT_OK(open("l10", O_RDONLY));
	close(fd);
}

CT_TEST(symlinkat, dirfd)
{
	CT_OK(mkdir("d", 0700));
	int dfd = CT_OK(open("d", O_RDONLY | O_DIRECTORY));
	CT_OK(symlinkat("tgt", dfd, "l"));
	struct stat st;
	CT_OK(lstat("d/l", &st));
	CT_TRUE(S_ISLNK(st.st_mode));
	CT_ERR(symlinkat("tgt", 9999, "l"), EBADF);
	CT_ERR(symlinkat("tgt", dfd, "l"), EEXIST);
}

CT_TEST(mknod, fifo_and_regular)
{
	CT_OK(syscall(SYS_mknod, "fifo", S_IFIFO | 0600, 0));
	struct stat st;
	CT_OK(stat("fifo", &st));
	CT_TRUE(S_ISFIFO(st.st_mode));
	CT_OK(syscall(SYS_mknod, "reg", S_IFREG | 0600, 0));
	CT_OK(stat("reg", &st));
	CT_TRUE(S_ISREG(st.st_mode));
	CT_EQ(st.st_size, 0);
	CT_ERR(syscall(SYS_mknod, "fifo", S_IFIFO | 0600, 0), EEXIST);
}

CT_TEST(mknod, errors)
{
	CT_ERR(syscall(SYS_mknod, "x", S_IFDIR | 0700, 0), EPERM);
	CT_ERR(syscall(SYS_mknod, "x", 0170000 | 0600, 0), EINVAL);
	CT_ERR(syscall(SYS_mknod, "nodir/x", S_IFIFO | 0600, 0), ENOENT);
}

CT_TEST(mknod, char_device_needs_cap)
{
	if (ct_has_cap(CAP_MKNOD))
		ct_skip("CAP_MKNOD held: creating a device node would succeed");
	CT_ERR(syscall(SYS_mknod, "null", S_IFCHR | 0600, makedev(1, 3)), EPERM);
}

CT_TEST(mknodat, fifo_roundtrip)
{
	CT_OK(mkdir("d", 0700));
	int dfd = CT_OK(open("d", O_RDONLY | O_DIRECTORY));
	CT_OK(mknodat(dfd, "p", S_IFIFO | 0600, 0));
	pid_t pid = CT_OK(fork());
	if (pid == 0) {
		int w = open("d/p", O_WRONLY);
		_exit(w >= 0 && write(w, "hi", 2) == 2 ? 0 : 1);
	}
	int r = CT_OK(open("d/p", O_RDONLY));
	char buf[4] = {0};
	CT_EQ(read(r, buf, sizeof(buf)), 2);
	CT_STREQ(buf, "hi");
	CT_EQ(ct_wait(pid), 0);
}

CT_TEST(mknodat, errors)
{
	CT_ERR(mknodat(9999, "p", S_IFIFO | 0600, 0), EBADF);
	ct_put_file("f", "", 0644);
	CT_ERR(mknodat(AT_FDCWD, "f", S_IFIFO | 0600, 0), EEXIST);
	int fd = CT_OK(open("f", O_RDONLY));
	CT_ERR(mknodat(fd, "p", S_IFIFO | 0600, 0), ENOTDIR);
}

CT_TEST(mkdirat, at_fdcwd_mode)
{
	umask(0);
	CT_OK(mkdirat(AT_FDCWD, "d/", 0751));
	struct stat st;
	CT_OK(stat("d", &st));
	CT_EQ(st.st_mode & 07777, 0751);
	CT_ERR(mkdirat(AT_FDCWD, "", 0700), ENOENT);
}

CT_TEST(renameat, errors)
{
	ct_put_file("f", "", 0644);
	CT_ERR(syscall(SYS_renameat, AT_FDCWD, "missing", AT_FDCWD, "x"), ENOENT);
	int fd = CT_OK(open("f", O_RDONLY));
	CT_ERR(syscall(SYS_renameat, fd, "x", AT_FDCWD, "y"), ENOTDIR);
	/* A rename never crosses a mount: procfs is another one. */
	CT_ERR(syscall(SYS_renameat, AT_FDCWD, "f", AT_FDCWD, "/proc/cbox-compat-x"), EXDEV);
}

CT_TEST(symlinkat, at_fdcwd_and_errors)
{
	CT_OK(symlinkat("/etc/passwd", AT_FDCWD, "abs"));
	struct stat st;
	CT_OK(stat("abs", &st));
	CT_TRUE(S_ISREG(st.st_mode));
	ct_put_file("f", "", 0644);
	int fd = CT_OK(open("f", O_RDONLY));
	CT_ERR(symlinkat("x", fd, "l"), ENOTDIR);
	CT_ERR(symlinkat("", AT_FDCWD, "l"), ENOENT);
}

/* The old getdents on /proc (a directory the sentry makes): the sanitizers list a process's
 * threads with it. Each record has its type in its last byte, after the name's NUL. */
CT_TEST(getdents, proc_task_and_type)
{
	char tid[32];
	snprintf(tid, sizeof(tid), "%ld", (long)syscall(SYS_gettid));
	int fd = CT_OK(open("/proc/self/task", O_RDONLY | O_DIRECTORY));
	char buf[4096];
	int found = 0, dots = 0;
	long n;
	while ((n = CT_OK(syscall(SYS_getdents, fd, buf, sizeof(buf)))) > 0) {
		for (long off = 0; off < n;) {
			unsigned short reclen;
			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			CT_TRUE(reclen > 0 && off + reclen <= n);
			const char *name = buf + off + 18;
			unsigned char type = (unsigned char)buf[off + reclen - 1];
			if (!strcmp(name, tid) && type == DT_DIR)
				found++;
			if (!strcmp(name, ".") || !strcmp(name, ".."))
				dots++;
			off += reclen;
		}
	}
	CT_EQ(found, 1);
	CT_EQ(dots, 2);
	/* A buffer too small for one record. */
	CT_EQ(lseek(fd, 0, SEEK_SET), 0);
	CT_ERR(syscall(SYS_getdents, fd, buf, 8L), EINVAL);
	close(fd);
}

static volatile sig_atomic_t fifo_alarms;

static void fifo_on_alarm(int sig)
{
	(void)sig;
	fifo_alarms++;
}

/* A handler without SA_RESTART ends a FIFO's waiting open with EINTR (the sentry keeps that wait:
 * its answer must follow the handler's flags, as the kernel's own wait would). */
CT_TEST(openat, fifo_open_eintr)
{
	CT_OK(mkfifo("p", 0600));
	pid_t pid = CT_OK(fork());
	if (pid == 0) {
		struct sigaction sa = {.sa_handler = fifo_on_alarm, .sa_flags = 0};
		sigemptyset(&sa.sa_mask);
		sigaction(SIGALRM, &sa, NULL);
		alarm(1);
		errno = 0;
		int r = open("p", O_RDONLY); /* no writer ever comes */
		_exit(r == -1 && errno == EINTR && fifo_alarms == 1 ? 0 : 1);
	}
	int st = ct_wait(pid);
	CT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* An open of a FIFO blocks until the other end opens; a signal with an SA_RESTART handler runs
 * the handler and the open goes on waiting (restarted), as a signal that ends the process ends
 * it there. */
CT_TEST(openat, fifo_open_signals)
{
	CT_OK(mkfifo("p", 0600));
	pid_t pid = CT_OK(fork());
	if (pid == 0) {
		struct sigaction sa = {.sa_handler = fifo_on_alarm, .sa_flags = SA_RESTART};
		sigemptyset(&sa.sa_mask);
		sigaction(SIGALRM, &sa, NULL);
		alarm(1);
		int r = open("p", O_RDONLY); /* the writer comes after the alarm */
		char c = 0;
		_exit(r >= 0 && read(r, &c, 1) == 1 && c == 'x' && fifo_alarms == 1 ? 0 : 1);
	}
	usleep(1500 * 1000);
	int w = CT_OK(open("p", O_WRONLY));
	CT_EQ(write(w, "x", 1), 1);
	close(w);
	int st = ct_wait(pid);
	CT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* SIGTERM, not handled, ends a process waiting in the open. */
	pid = CT_OK(fork());
	if (pid == 0) {
		open("p", O_RDONLY);
		_exit(0);
	}
	usleep(200 * 1000);
	CT_OK(kill(pid, SIGTERM));
	st = ct_wait(pid);
	CT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
}
