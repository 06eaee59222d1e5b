/* The gofer server's requests that change the tree (gofer/serve_mut.c), in-process over a
 * socketpair on a temp tree: creations and their undoing, TMPFILE and LINK, SETATTR, MKNOD, their
 * refusal on a read-only server, and the client's count of them. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/gofer.h"
#include "gofer_fixture.h"
#include "internal.h"

TestSuite(gofer_ro, .init = setup_ro, .fini = teardown);
TestSuite(gofer_rw, .init = setup_rw, .fini = teardown);

Test(gofer_ro, mutations_refused)
{
	uint32_t f = walk("file.txt", NULL), nf;
	cr_expect_eq(cbox_gofer_open(S.c, f, O_WRONLY), -EROFS);
	cr_expect_eq(cbox_gofer_open(S.c, f, O_RDWR), -EROFS);
	cr_expect_eq(cbox_gofer_open(S.c, f, O_RDONLY | O_TRUNC), -EROFS);
	cr_expect_eq(
	    cbox_gofer_create(S.c, 0, "new", O_WRONLY, 0644, (uint32_t)-1, (uint32_t)-1, &nf, NULL),
	    -EROFS);
	cr_expect_eq(cbox_gofer_mkdir(S.c, 0, "newdir", 0755, (uint32_t)-1, (uint32_t)-1), -EROFS);
	cr_expect_eq(cbox_gofer_unlink(S.c, 0, "file.txt", false), -EROFS);
	cr_expect_eq(cbox_gofer_unlink(S.c, 0, "dir", true), -EROFS);
	cr_expect_eq(cbox_gofer_rename(S.c, 0, "file.txt", 0, "moved", 0), -EROFS);
	cr_expect_eq(cbox_gofer_symlink(S.c, 0, "sl", "file.txt", (uint32_t)-1, (uint32_t)-1),
	             -EROFS);
	cr_expect_eq(cbox_gofer_link(S.c, f, 0, "hard"), -EROFS);
	cr_expect_eq(
	    cbox_gofer_tmpfile(S.c, 0, O_RDWR, 0600, (uint32_t)-1, (uint32_t)-1, &nf, NULL),
	    -EROFS);
	struct stat st;
	char p[256];
	at(p, "file.txt");
	cr_expect_eq(stat(p, &st), 0);
	cr_expect_eq(st.st_size, 5);
	cr_expect_eq(st.st_nlink, 1);
	at(p, "new");
	cr_expect_neq(access(p, F_OK), 0);
}

Test(gofer_rw, mutations_work)
{
	struct cbox_gofer_stat st;
	uint32_t nf = 0;
	char p[256], b[64];
	int fd =
	    cbox_gofer_create(S.c, 0, "new", O_RDWR, 04755, (uint32_t)-1, (uint32_t)-1, &nf, &st);
	cr_assert_geq(fd, 0, "create: %s", strerror(-fd));
	cr_expect(S_ISREG(st.mode));
	cr_expect_eq(st.mode & 06000, 0, "setuid stripped");
	cr_expect_eq(write(fd, "data", 4), 4);
	close(fd);
	cr_expect_eq(cbox_gofer_create(S.c, 0, "new", O_RDWR | O_CREAT | O_EXCL, 0644, (uint32_t)-1,
	                               (uint32_t)-1, &nf, &st),
	             -EEXIST);
	cr_expect_eq(cbox_gofer_create(S.c, 0, "d2", O_RDWR | O_DIRECTORY, 0755, (uint32_t)-1,
	                               (uint32_t)-1, &nf, &st),
	             -EINVAL);
	cr_expect_eq(cbox_gofer_create(S.c, 0, "d2", O_RDWR | O_PATH, 0755, (uint32_t)-1,
	                               (uint32_t)-1, &nf, &st),
	             -EINVAL);
	fd = cbox_gofer_open(S.c, nf, O_WRONLY | O_APPEND);
	cr_assert_geq(fd, 0);
	cr_expect_eq(write(fd, "++", 2), 2);
	close(fd);
	at(p, "new");
	FILE *f = fopen(p, "r");
	cr_assert_not_null(f);
	cr_expect_str_eq(fgets(b, sizeof(b), f), "data++");
	fclose(f);

	cr_expect_eq(cbox_gofer_mkdir(S.c, 0, "d", 0700, (uint32_t)-1, (uint32_t)-1), 0);
	cr_expect_eq(cbox_gofer_symlink(S.c, 0, "sl", "new", (uint32_t)-1, (uint32_t)-1), 0);
	cr_expect_eq(cbox_gofer_link(S.c, nf, 0, "hard"), 0);
	cr_expect_eq(cbox_gofer_rename(S.c, 0, "hard", 0, "hard2", 0), 0);
	at(p, "hard2");
	struct stat hs;
	cr_expect_eq(stat(p, &hs), 0);
	cr_expect_eq(hs.st_ino, st.ino);
	at(p, "sl");
	cr_expect_eq(readlink(p, b, sizeof(b)), 3);
	at(p, "d");
	cr_expect_eq(stat(p, &hs), 0);
	cr_expect(S_ISDIR(hs.st_mode));
	cr_expect_eq(cbox_gofer_unlink(S.c, 0, "d", true), 0);
	cr_expect_eq(cbox_gofer_unlink(S.c, 0, "hard2", false), 0);
	cr_expect_eq(cbox_gofer_unlink(S.c, 0, "hard2", false), -ENOENT);
	cr_expect_neq(access(p, F_OK), 0);
	/* Truncate through OPEN on a writable mount. */
	fd = cbox_gofer_open(S.c, nf, O_WRONLY | O_TRUNC);
	cr_assert_geq(fd, 0);
	close(fd);
	at(p, "new");
	cr_expect_eq(stat(p, &hs), 0);
	cr_expect_eq(hs.st_size, 0);
}

Test(gofer_rw, tmpfile_then_link)
{
	struct cbox_gofer_stat st;
	uint32_t nf = 0, xf = 0;
	char p[256];
	int fd = cbox_gofer_tmpfile(S.c, 0, O_RDWR, 04640, (uint32_t)-1, (uint32_t)-1, &nf, &st);
	cr_assert_geq(fd, 0, "tmpfile: %s", strerror(-fd));
	cr_expect(S_ISREG(st.mode));
	cr_expect_eq(st.nlink, 0, "unnamed");
	cr_expect_eq(st.mode & 07777, 0640, "setuid stripped");
	cr_expect_eq(write(fd, "tmp", 3), 3);
	/* STAT of the fid works, OPEN does not (an unnamed file cannot be reopened here). */
	struct cbox_gofer_stat st2;
	cr_expect_eq(cbox_gofer_stat(S.c, nf, &st2), 0);
	cr_expect_eq(st2.ino, st.ino);
	cr_expect_eq(st2.size, 3);
	cr_expect_eq(cbox_gofer_open(S.c, nf, O_RDONLY), -EINVAL);
	/* Not even O_PATH: the node's fd is the open file, which must not be handed out twice. */
	cr_expect_eq(cbox_gofer_open(S.c, nf, O_PATH), -EINVAL);
	/* Its user.* attributes, through the open file (it has no name yet). */
	cr_expect_eq(cbox_gofer_setxattr(S.c, nf, "user.k", "v", 1, 0), 0);
	char xv[8];
	cr_expect_eq(cbox_gofer_getxattr(S.c, nf, "user.k", xv, sizeof(xv)), 1);
	cr_expect_eq(cbox_gofer_setxattr(S.c, nf, "trusted.k", "v", 1, 0), -EPERM);
	/* LINK names it; walking the name finds the same file. */
	cr_expect_eq(cbox_gofer_link(S.c, nf, 0, "named"), 0);
	cr_expect_eq(cbox_gofer_link(S.c, nf, 0, "named"), -EEXIST);
	struct cbox_gofer_stat ws;
	uint32_t wf = walk("named", &ws);
	cr_expect_eq(ws.ino, st.ino);
	cr_expect_eq(ws.size, 3);
	cr_expect_eq(cbox_gofer_clunk(S.c, wf), 0);
	cr_expect_eq(cbox_gofer_clunk(S.c, nf), 0);
	close(fd);
	/* O_EXCL: never linkable. */
	fd = cbox_gofer_tmpfile(S.c, 0, O_WRONLY | O_EXCL, 0600, (uint32_t)-1, (uint32_t)-1, &xf,
	                        NULL);
	cr_assert_geq(fd, 0);
	cr_expect_eq(cbox_gofer_link(S.c, xf, 0, "never"), -ENOENT);
	at(p, "never");
	cr_expect_neq(access(p, F_OK), 0);
	close(fd);
	/* A read-only one is EINVAL (as Linux), as are flags OPEN refuses; a file is no dir. */
	cr_expect_eq(
	    cbox_gofer_tmpfile(S.c, 0, O_RDONLY, 0600, (uint32_t)-1, (uint32_t)-1, &nf, NULL),
	    -EINVAL);
	cr_expect_eq(cbox_gofer_tmpfile(S.c, 0, O_RDWR | O_PATH, 0600, (uint32_t)-1, (uint32_t)-1,
	                                &nf, NULL),
	             -EINVAL);
	cr_expect_eq(cbox_gofer_tmpfile(S.c, 0, O_RDWR | O_CREAT, 0600, (uint32_t)-1, (uint32_t)-1,
	                                &nf, NULL),
	             -EINVAL);
	cr_expect_eq(cbox_gofer_tmpfile(S.c, 0, O_RDWR | O_DIRECTORY, 0600, (uint32_t)-1,
	                                (uint32_t)-1, &nf, NULL),
	             -EINVAL);
	uint32_t f = walk("file.txt", NULL);
	cr_expect_eq(
	    cbox_gofer_tmpfile(S.c, f, O_RDWR, 0600, (uint32_t)-1, (uint32_t)-1, &nf, NULL),
	    -ENOTDIR);
}

static int setattr(uint32_t fid, struct cbox_gofer_setattr a)
{
	return cbox_gofer_setattr(S.c, fid, &a);
}

/* SETATTR by name refuses (ESTALE, nothing changed) once the name leads elsewhere or nowhere;
 * without SET_BY_NAME the fid's own file is changed, as fchmod of an open fd does. */
Test(gofer_rw, setattr_by_name_checks_the_name)
{
	uint32_t f = walk("file.txt", NULL);
	struct cbox_gofer_setattr by_name = {.valid = CBOX_GOFER_SET_MODE | CBOX_GOFER_SET_BY_NAME,
	                                     .mode = 0600};
	cr_expect_eq(setattr(f, by_name), 0); /* the name still holds it */
	cr_expect_eq(host_lstat("file.txt").st_mode & 07777, 0600);
	struct stat before = host_lstat("file.txt");
	char p[256], q[256];
	at(p, "file.txt");
	at(q, "moved.txt");
	cr_assert_eq(rename(p, q), 0);
	int fd = open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	close(fd);
	by_name.mode = 0640;
	cr_expect_eq(setattr(f, by_name), -ESTALE);
	cr_expect_eq(host_lstat("file.txt").st_mode & 07777, 0644, "the new file is untouched");
	cr_expect_eq(host_lstat("moved.txt").st_mode & 07777, 0600, "the old one too");
	cr_expect_eq(
	    setattr(f, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_MODE, .mode = 0640}), 0);
	struct stat after = host_lstat("moved.txt");
	cr_expect_eq(after.st_ino, before.st_ino);
	cr_expect_eq(after.st_mode & 07777, 0640, "without BY_NAME: the fid's own file");
	cr_assert_eq(unlink(p), 0);
	cr_expect_eq(setattr(f, by_name), -ESTALE, "a removed name");
}

Test(gofer_rw, setattr_each_field)
{
	uint32_t f = walk("file.txt", NULL), d = walk("dir", NULL);
	/* mode: a file's setuid/setgid dropped, a directory's setgid and sticky kept, type bits
	 * ignored */
	cr_expect_eq(
	    setattr(f, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_MODE, .mode = 0106751}),
	    0);
	cr_expect_eq(host_lstat("file.txt").st_mode, S_IFREG | 0751);
	cr_expect_eq(
	    setattr(d, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_MODE, .mode = 03700}),
	    0);
	cr_expect_eq(host_lstat("dir").st_mode, S_IFDIR | 03700, "setuid dropped, setgid kept");
	/* owner: -1 keeps a field, and only the fields asked for change */
	cr_expect_eq(
	    setattr(f, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_UID | CBOX_GOFER_SET_GID,
	                                           .uid = 1234,
	                                           .gid = 5678}),
	    0);
	cr_expect_eq(host_lstat("file.txt").st_uid, 1234);
	cr_expect_eq(host_lstat("file.txt").st_gid, 5678);
	cr_expect_eq(setattr(f, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_GID,
	                                                    .uid = 1,
	                                                    .gid = (uint32_t)-1}),
	             0);
	cr_expect_eq(host_lstat("file.txt").st_uid, 1234);
	cr_expect_eq(host_lstat("file.txt").st_gid, 5678);
	cr_expect_eq(setattr(f, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_UID, .uid = 0}),
	             0);
	cr_expect_eq(host_lstat("file.txt").st_uid, 0);
	/* size: grow and shrink a file; a directory and a FIFO refuse */
	cr_expect_eq(
	    setattr(f, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_SIZE, .size = 3}), 0);
	cr_expect_eq(host_lstat("file.txt").st_size, 3);
	cr_expect_eq(
	    setattr(f, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_SIZE, .size = 100000}),
	    0);
	cr_expect_eq(host_lstat("file.txt").st_size, 100000);
	cr_expect_eq(setattr(d, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_SIZE}),
	             -EISDIR);
	cr_expect_eq(
	    setattr(walk("fifo", NULL), (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_SIZE}),
	    -EINVAL);
	/* times: exact values, UTIME_OMIT keeps one */
	cr_expect_eq(setattr(f, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_TIMES,
	                                                    .atime_sec = 1000000000,
	                                                    .atime_nsec = 5,
	                                                    .mtime_sec = 1200000000,
	                                                    .mtime_nsec = 999999999}),
	             0);
	struct stat st = host_lstat("file.txt");
	cr_expect_eq(st.st_atim.tv_sec, 1000000000);
	cr_expect_eq(st.st_atim.tv_nsec, 5);
	cr_expect_eq(st.st_mtim.tv_sec, 1200000000);
	cr_expect_eq(st.st_mtim.tv_nsec, 999999999);
	cr_expect_eq(setattr(f, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_TIMES,
	                                                    .atime_sec = 7,
	                                                    .atime_nsec = UTIME_OMIT,
	                                                    .mtime_sec = 1300000000}),
	             0);
	st = host_lstat("file.txt");
	cr_expect_eq(st.st_atim.tv_sec, 1000000000);
	cr_expect_eq(st.st_mtim.tv_sec, 1300000000);
	/* unknown fid */
	cr_expect_eq(setattr(4242, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_MODE}),
	             -EBADF);
}

Test(gofer_rw, setattr_order_and_first_error)
{
	uint32_t d = walk("dir", NULL);
	/* mode applies, then size fails on a directory, and the times are not applied */
	struct stat before = host_lstat("dir");
	cr_expect_eq(setattr(d, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_MODE |
	                                                             CBOX_GOFER_SET_SIZE |
	                                                             CBOX_GOFER_SET_TIMES,
	                                                    .mode = 0711,
	                                                    .mtime_sec = 42}),
	             -EISDIR);
	struct stat st = host_lstat("dir");
	cr_expect_eq(st.st_mode & 07777, 0711);
	cr_expect_eq(st.st_mtim.tv_sec, before.st_mtim.tv_sec);
}

Test(gofer_rw, setattr_symlink)
{
	uint32_t l = walk("link", NULL);
	struct stat target_before = host_lstat("file.txt");
	cr_expect_eq(
	    setattr(l, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_MODE, .mode = 0600}),
	    -EOPNOTSUPP);
	cr_expect_eq(setattr(l, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_SIZE}),
	             -EINVAL);
	/* Owner and times apply to the link itself, never to what it points at. */
	cr_expect_eq(setattr(l, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_UID |
	                                                             CBOX_GOFER_SET_TIMES,
	                                                    .uid = 4321,
	                                                    .mtime_sec = 1234567}),
	             0);
	cr_expect_eq(host_lstat("link").st_uid, 4321);
	cr_expect_eq(host_lstat("link").st_mtim.tv_sec, 1234567);
	struct stat t = host_lstat("file.txt");
	cr_expect_eq(t.st_uid, target_before.st_uid);
	cr_expect_eq(t.st_mode, target_before.st_mode);
	cr_expect_eq(t.st_mtim.tv_sec, target_before.st_mtim.tv_sec);
}

Test(gofer_rw, mknod_types)
{
	struct cbox_gofer_stat st;
	uint32_t nf = 0;
	cr_assert_eq(
	    cbox_gofer_mknod(S.c, 0, "p", S_IFIFO | 06640, (uint32_t)-1, (uint32_t)-1, &nf, &st),
	    0);
	cr_expect(S_ISFIFO(st.mode));
	cr_expect_eq(st.mode & 07777, 0640, "setuid/setgid dropped");
	cr_expect_eq(host_lstat("p").st_ino, st.ino);
	/* The new fid is usable at once: a FIFO opens without blocking the gofer. */
	int fd = cbox_gofer_open(S.c, nf, O_RDONLY | O_NONBLOCK);
	cr_assert_geq(fd, 0, "open: %s", strerror(-fd));
	close(fd);
	cr_expect_eq(
	    cbox_gofer_mknod(S.c, 0, "p", S_IFIFO | 0600, (uint32_t)-1, (uint32_t)-1, &nf, &st),
	    -EEXIST);
	cr_expect_eq(
	    cbox_gofer_mknod(S.c, 0, "s", S_IFSOCK | 0755, (uint32_t)-1, (uint32_t)-1, &nf, &st),
	    0);
	cr_expect(S_ISSOCK(host_lstat("s").st_mode));
	cr_expect_eq(cbox_gofer_open(S.c, nf, O_RDONLY), -ENXIO);
	cr_expect_eq(cbox_gofer_mknod(S.c, 0, "r", 0600, (uint32_t)-1, (uint32_t)-1, &nf, &st), 0,
	             "type 0 is a file");
	cr_expect(S_ISREG(st.mode));
	cr_expect_eq(cbox_gofer_mknod(S.c, walk("dir", NULL), "r2", S_IFREG | 0644, (uint32_t)-1,
	                              (uint32_t)-1, &nf, &st),
	             0);
	cr_expect(S_ISREG(host_lstat("dir/r2").st_mode));
	/* No devices, ever; no other types through MKNOD. */
	cr_expect_eq(
	    cbox_gofer_mknod(S.c, 0, "c", S_IFCHR | 0666, (uint32_t)-1, (uint32_t)-1, &nf, &st),
	    -EPERM);
	cr_expect_eq(
	    cbox_gofer_mknod(S.c, 0, "b", S_IFBLK | 0666, (uint32_t)-1, (uint32_t)-1, &nf, &st),
	    -EPERM);
	cr_expect_eq(
	    cbox_gofer_mknod(S.c, 0, "d", S_IFDIR | 0755, (uint32_t)-1, (uint32_t)-1, &nf, &st),
	    -EINVAL);
	cr_expect_eq(
	    cbox_gofer_mknod(S.c, 0, "l", S_IFLNK | 0777, (uint32_t)-1, (uint32_t)-1, &nf, &st),
	    -EINVAL);
	cr_expect_eq(
	    cbox_gofer_mknod(S.c, 0, "x", 0x100000 | S_IFIFO, (uint32_t)-1, (uint32_t)-1, &nf, &st),
	    -EINVAL);
	char p[256];
	at(p, "c");
	cr_expect_neq(access(p, F_OK), 0);
	cr_expect_eq(cbox_gofer_mknod(S.c, walk("file.txt", NULL), "x", S_IFIFO, (uint32_t)-1,
	                              (uint32_t)-1, &nf, &st),
	             -ENOTDIR);
}

Test(gofer_ro, setattr_mknod_refused)
{
	uint32_t f = walk("file.txt", NULL), nf;
	struct stat before = host_lstat("file.txt");
	cr_expect_eq(
	    setattr(f, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_MODE, .mode = 0600}),
	    -EROFS);
	cr_expect_eq(setattr(f, (struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_SIZE}), -EROFS);
	cr_expect_eq(setattr(f, (struct cbox_gofer_setattr){.valid = 0}), -EROFS);
	cr_expect_eq(
	    cbox_gofer_mknod(S.c, 0, "p", S_IFIFO | 0600, (uint32_t)-1, (uint32_t)-1, &nf, NULL),
	    -EROFS);
	struct stat st = host_lstat("file.txt");
	cr_expect_eq(st.st_mode, before.st_mode);
	cr_expect_eq(st.st_size, 5);
	char p[256];
	at(p, "p");
	cr_expect_neq(access(p, F_OK), 0);
	/* Refused locally by the client: the session goes on. */
	cr_expect_eq(setattr(f, (struct cbox_gofer_setattr){.valid = 1u << 7}), -EINVAL);
	walk("dir", NULL);
}

/* The client's change count (cbox_gofer_changes): what the sentry's attribute reuse relies on
 * (fs_gofer.c). Lookups, stats, reads and read-only opens leave it; every request that may
 * change a file moves it, failed or not. */
Test(gofer_rw, change_count)
{
	struct cbox_gofer_client *c = S.c;
	uint64_t n = cbox_gofer_changes(c);
	struct cbox_gofer_stat st;
	uint32_t f = walk("file.txt", &st);
	cr_expect_eq(cbox_gofer_stat(c, f, &st), 0);
	int fd = cbox_gofer_open(c, f, O_RDONLY);
	cr_assert(fd >= 0);
	close(fd);
	char buf[64];
	cr_expect_eq(cbox_gofer_readlink(c, walk("link", NULL), buf, sizeof(buf)), 8);
	cr_expect_eq(cbox_gofer_changes(c), n, "lookups and reads change nothing");
	fd = cbox_gofer_open(c, f, O_WRONLY);
	cr_assert(fd >= 0);
	close(fd);
	cr_expect_eq(cbox_gofer_changes(c), n + 1, "an open for writing");
	fd = cbox_gofer_open(c, f, O_RDONLY | O_TRUNC);
	if (fd >= 0)
		close(fd);
	cr_expect_eq(cbox_gofer_changes(c), n + 2, "an open that truncates");
	struct cbox_gofer_setattr a = {.valid = CBOX_GOFER_SET_MODE, .mode = 0600};
	cr_expect_eq(cbox_gofer_setattr(c, f, &a), 0);
	cr_expect_eq(cbox_gofer_changes(c), n + 3, "a chmod");
	cr_expect_eq(cbox_gofer_mkdir(c, 0, "dir", 0755, (uint32_t)-1, (uint32_t)-1), -EEXIST);
	cr_expect_eq(cbox_gofer_changes(c), n + 4, "a failed mkdir counts too");
	cr_expect_eq(cbox_gofer_unlink(c, 0, "file.txt", false), 0);
	cr_expect_eq(cbox_gofer_changes(c), n + 5, "an unlink");
	cr_expect_eq(cbox_gofer_changes(NULL), 0);
}
