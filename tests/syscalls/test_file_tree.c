/*
 * Compatibility cases: reading a tree the way du, find, tar and rm -r do: getdents64 of a
 * directory, then newfstatat of each name through the directory's fd, in the listing's order or
 * another. A sandbox that caches names or reads ahead (cbox's sentry does both) must answer each
 * look as the file is now, whatever changed since the listing.
 */
#include "compat_test.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static long sys_lstat(const char *p, struct stat *st)
{
	return syscall(SYS_lstat, p, st);
}

/* Read dir (an open directory fd) to its end; returns the number of names ("." and ".." left
 * out), at most max, into names. */
static int list_names(int dfd, char (*names)[32], int max)
{
	char buf[4096];
	int n = 0;
	long got;
	while ((got = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < got;) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *e = (void *)(buf + off);
			off += e->reclen;
			if (strcmp(e->name, ".") && strcmp(e->name, "..") && n < max)
				snprintf(names[n++], 32, "%s", e->name);
		}
	}
	return n;
}

/*
 * The way du, find and tar read a tree: list a directory, then fstatat each name through the
 * directory's fd, in the listing's order. Every answer must be the file's own, whatever was
 * removed or made between the listing and the look (a sandbox that reads ahead must not answer
 * from what it read before).
 */
CT_TEST(newfstatat, listing_then_each_name)
{
	enum { N = 300 };
	CT_OK(mkdir("d", 0755));
	char p[64];
	for (int i = 0; i < N; i++) {
		snprintf(p, sizeof(p), "d/f%03d", i);
		ct_put_file(p, i % 2 ? "odd" : "even!", 0644);
	}
	int dfd = CT_OK(open("d", O_RDONLY | O_DIRECTORY));
	static char names[N + 8][32];
	CT_EQ(list_names(dfd, names, N + 8), N);
	/* Changed after the listing: one removed, one rewritten, one made. */
	CT_OK(unlink("d/f150"));
	ct_put_file("d/f151", "longer than before", 0600);
	ct_put_file("d/new", "n", 0644);
	for (int i = 0; i < N; i++) {
		struct stat by_fd, by_path;
		snprintf(p, sizeof(p), "d/%.32s", names[i]);
		if (strcmp(names[i], "f150") == 0) {
			CT_ERR(syscall(SYS_newfstatat, dfd, names[i], &by_fd, AT_SYMLINK_NOFOLLOW),
			       ENOENT);
			continue;
		}
		CT_OK(syscall(SYS_newfstatat, dfd, names[i], &by_fd, AT_SYMLINK_NOFOLLOW));
		CT_OK(sys_lstat(p, &by_path));
		CT_EQ(by_fd.st_ino, by_path.st_ino);
		CT_EQ(by_fd.st_size, by_path.st_size);
		CT_EQ(by_fd.st_mode, by_path.st_mode);
		int n = atoi(names[i] + 1);
		CT_EQ(by_fd.st_size, n == 151 ? 18 : n % 2 ? 3 : 5);
	}
	struct stat st;
	CT_OK(syscall(SYS_newfstatat, dfd, "new", &st, 0));
	CT_EQ(st.st_size, 1);
	close(dfd);
}

/*
 * More files than a sandbox keeps cached (cbox: 4096 unreferenced entries), looked at through
 * the directory's fd in the reverse of the listing's order (as du does, by inode, in a large
 * directory), then all again by path: each answer is still the file's own.
 */
CT_TEST(newfstatat, many_files_any_order)
{
	enum { N = 5000 };
	CT_OK(mkdir("d", 0755));
	char p[64];
	for (int i = 0; i < N; i++) {
		snprintf(p, sizeof(p), "d/%d", i);
		int fd = CT_OK(open(p, O_CREAT | O_WRONLY | O_EXCL, 0644));
		CT_EQ(ftruncate(fd, i % 97), 0);
		close(fd);
	}
	int dfd = CT_OK(open("d", O_RDONLY | O_DIRECTORY));
	static char names[N + 8][32];
	CT_EQ(list_names(dfd, names, N + 8), N);
	for (int round = 0; round < 2; round++) {
		for (int k = 0; k < N; k++) {
			int i = round == 0 ? N - 1 - k : k;
			struct stat st;
			if (round == 0) {
				CT_OK(syscall(SYS_newfstatat, dfd, names[i], &st,
				              AT_SYMLINK_NOFOLLOW));
			} else {
				snprintf(p, sizeof(p), "d/%.32s", names[i]);
				CT_OK(sys_lstat(p, &st));
			}
			CT_EQ(st.st_size, atoi(names[i]) % 97);
		}
	}
	close(dfd);
}

/* The same through a read-only tree the sandbox did not make: the system's /etc. */
CT_TEST(newfstatat, listing_of_etc)
{
	int dfd = CT_OK(open("/etc", O_RDONLY | O_DIRECTORY));
	static char names[4096][32];
	int n = list_names(dfd, names, 4096);
	CT_TRUE(n > 10);
	for (int i = 0; i < n; i++) {
		struct stat by_fd, by_path;
		char p[64];
		snprintf(p, sizeof(p), "/etc/%.32s", names[i]);
		long a = syscall(SYS_newfstatat, dfd, names[i], &by_fd, AT_SYMLINK_NOFOLLOW);
		long b = sys_lstat(p, &by_path);
		CT_EQ(a, b);
		if (a == 0) {
			CT_EQ(by_fd.st_ino, by_path.st_ino);
			CT_EQ(by_fd.st_mode, by_path.st_mode);
			CT_EQ(by_fd.st_size, by_path.st_size);
		}
	}
	close(dfd);
}
