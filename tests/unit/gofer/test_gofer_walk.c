/* The gofer's batched requests (serve_batch.c), in-process on a temp tree: WALKN, WALKDIR with
 * its listing cursor, CLUNKN, and the client's refusal of WALKDIR replies that do not fit. Also
 * STAT's word on names the host replaced or removed, which WALKDIR's caching relies on. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/gofer.h"
#include "gofer_fixture.h"
#include "internal.h"

TestSuite(gofer_ro, .init = setup_ro, .fini = teardown);

/* WALKDIR replies that do not fit the request: more entries than asked for, a first entry that
 * is not the name, the name again later. Each breaks the session. */
Test(gofer_client, walkdir_lies)
{
	static const char *const lies[][3] = {
	    {"a", "b", "c"}, /* count 2 */
	    {"b", "a", NULL},
	    {"a", "a", NULL},
	};
	static struct cbox_gofer_dirent out[CBOX_GOFER_WALKDIR_MAX];
	for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		int sv[2];
		cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
		struct cbox_gofer_client *c = cbox_gofer_client_new(sv[0]);
		char rec[1024];
		size_t len = 0;
		uint32_t n = 0;
		for (; n < 3 && lies[i][n]; n++) {
			struct cbox_gofer_walked w = {.fid = 5 + n};
			cr_assert_eq(
			    cbox_gofer_put_dirent(rec, sizeof(rec), &len, &w, lies[i][n], 1), 0);
		}
		struct cbox_gofer_reply r = {.type = CBOX_GOFER_REPLY_OK | CBOX_GOFER_WALKDIR,
		                             .tag = 1,
		                             .nwalked = n,
		                             .walked = rec,
		                             .walked_len = len};
		unsigned char b[2048];
		int blen = cbox_gofer_encode_reply(&r, b, sizeof(b));
		cr_assert_gt(blen, 0);
		cr_assert_eq(send(sv[1], b, (size_t)blen, 0), blen);
		cr_expect_eq(cbox_gofer_walk_dir(c, 0, "a", 2, out), -EIO, "lie %zu", i);
		cbox_gofer_client_free(c);
		close(sv[1]);
	}
}

/* The names of dir in the order the host lists them ("." and ".." left out). */
static size_t listing(const char *rel, char names[][NAME_MAX + 1], size_t max)
{
	char p[256];
	at(p, rel);
	DIR *d = opendir(p);
	cr_assert_not_null(d);
	size_t n = 0;
	for (struct dirent *e; (e = readdir(d)) && n < max;)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			snprintf(names[n++], NAME_MAX + 1, "%s", e->d_name);
	closedir(d);
	return n;
}

/* WALKDIR: a name and the entries that follow it in the listing, each as a WALK of it. */
Test(gofer_ro, walk_dir)
{
	char p[256];
	at(p, "many");
	cr_assert_eq(mkdir(p, 0755), 0);
	for (int i = 0; i < 10; i++) {
		char rel[32];
		snprintf(rel, sizeof(rel), "many/e%d", i);
		put(rel, &"0123456789"[i]);
	}
	at(p, "many/sub");
	cr_assert_eq(mkdir(p, 0755), 0);
	char names[16][NAME_MAX + 1];
	size_t n = listing("many", names, 16);
	cr_assert_eq(n, 11);
	uint32_t dir = walk("many", NULL);
	static struct cbox_gofer_dirent got[CBOX_GOFER_WALKDIR_MAX];
	/* From the third entry: it and the three after it, in the listing's order. */
	cr_assert_eq(cbox_gofer_walk_dir(S.c, dir, names[2], 4, got), 4);
	for (int i = 0; i < 4; i++) {
		cr_expect_str_eq(got[i].name, names[2 + i]);
		struct stat st = host_lstat(strcat(strcpy(p, "many/"), got[i].name));
		cr_expect_eq(got[i].stat.ino, st.st_ino);
		cr_expect_eq(got[i].stat.size, st.st_size);
	}
	/* Each is a fid like any other. */
	for (int i = 0; i < 4; i++) {
		struct cbox_gofer_stat st;
		cr_expect_eq(cbox_gofer_stat(S.c, got[i].fid, &st), 0);
		cr_expect_eq(st.ino, got[i].stat.ino);
		cr_expect_eq(cbox_gofer_clunk(S.c, got[i].fid), 0);
	}
	/* A count past the end: the name and everything after it; a count of 1: the name. */
	cr_assert_eq(cbox_gofer_walk_dir(S.c, dir, names[8], 100, got), 3);
	cr_expect_str_eq(got[2].name, names[10]);
	for (int i = 0; i < 3; i++)
		cr_expect_eq(cbox_gofer_clunk(S.c, got[i].fid), 0);
	cr_assert_eq(cbox_gofer_walk_dir(S.c, dir, names[0], 1, got), 1);
	cr_expect_eq(cbox_gofer_clunk(S.c, got[0].fid), 0);
	/* The last entry: just itself. */
	cr_assert_eq(cbox_gofer_walk_dir(S.c, dir, names[10], 8, got), 1);
	cr_expect_eq(cbox_gofer_clunk(S.c, got[0].fid), 0);
	/* WRAP: after the listing's end, the entries before the name, up to it: from any name,
	 * the whole directory, each entry once; a smaller count stops it as before. */
	for (size_t from = 0; from < n; from += 3) {
		int k =
		    cbox_gofer_walk_dir(S.c, dir, names[from], 100 | CBOX_GOFER_WALKDIR_WRAP, got);
		cr_assert_eq(k, (int)n, "from %zu", from);
		for (size_t i = 0; i < n; i++) {
			cr_expect_str_eq(got[i].name, names[(from + i) % n], "from %zu", from);
			cr_expect_eq(cbox_gofer_clunk(S.c, got[i].fid), 0);
		}
	}
	cr_assert_eq(cbox_gofer_walk_dir(S.c, dir, names[9], 4 | CBOX_GOFER_WALKDIR_WRAP, got), 4);
	cr_expect_str_eq(got[1].name, names[10]);
	cr_expect_str_eq(got[2].name, names[0]);
	cr_expect_str_eq(got[3].name, names[1]);
	for (int i = 0; i < 4; i++)
		cr_expect_eq(cbox_gofer_clunk(S.c, got[i].fid), 0);
	/* The name fails as its WALK would; refused arguments. */
	cr_expect_eq(cbox_gofer_walk_dir(S.c, dir, "nope", 8 | CBOX_GOFER_WALKDIR_WRAP, got),
	             -ENOENT);
	cr_expect_eq(cbox_gofer_walk_dir(S.c, dir, "nope", 8, got), -ENOENT);
	uint32_t file = walk("file.txt", NULL);
	cr_expect_eq(cbox_gofer_walk_dir(S.c, file, "x", 8, got), -ENOTDIR);
	cr_expect_eq(cbox_gofer_walk_dir(S.c, 4242, "x", 8, got), -EBADF);
	cr_expect_eq(cbox_gofer_walk_dir(S.c, dir, "..", 8, got), -EINVAL);
	cr_expect_eq(cbox_gofer_walk_dir(S.c, dir, names[0], 0, got), -EINVAL);
	cr_expect_eq(cbox_gofer_walk_dir(S.c, dir, names[0], CBOX_GOFER_WALKDIR_MAX + 1, got),
	             -EINVAL);
	/* A symlink comes back as itself. */
	n = listing("", names, 16);
	size_t li = 0;
	while (li < n && strcmp(names[li], "link"))
		li++;
	cr_assert_lt(li, n);
	cr_assert_eq(cbox_gofer_walk_dir(S.c, CBOX_GOFER_ROOT_FID, "link", 1, got), 1);
	cr_expect(S_ISLNK(got[0].stat.mode));
	cr_expect_eq(cbox_gofer_clunk(S.c, got[0].fid), 0);
	cr_expect_eq(cbox_gofer_clunk(S.c, file), 0);
	cr_expect_eq(cbox_gofer_clunk(S.c, dir), 0);
	walk("dir", NULL);
}

/* A directory read batch by batch, as the sentry reads ahead through du's lookups: every entry
 * comes exactly once and in the listing's order, also when another directory's batches come in
 * between and when a batch starts elsewhere than where the last one stopped. */
Test(gofer_ro, walk_dir_batches)
{
	enum { N = 300 };
	char p[256];
	at(p, "big");
	cr_assert_eq(mkdir(p, 0755), 0);
	for (int i = 0; i < N; i++) {
		char rel[32];
		snprintf(rel, sizeof(rel), "big/entry-%03d", i);
		put(rel, "x");
	}
	static char names[N][NAME_MAX + 1];
	cr_assert_eq(listing("big", names, N), N);
	uint32_t dir = walk("big", NULL), other = walk("dir", NULL);
	static struct cbox_gofer_dirent got[CBOX_GOFER_WALKDIR_MAX];
	int next = 0, batch = 0;
	while (next < N) {
		int n = cbox_gofer_walk_dir(S.c, dir, names[next], 7 + batch % 5, got);
		cr_assert_gt(n, 0);
		for (int i = 0; i < n; i++) {
			cr_assert_str_eq(got[i].name, names[next + i]);
			cr_expect_eq(cbox_gofer_clunk(S.c, got[i].fid), 0);
		}
		next += n;
		/* Another directory's batch in between, now and then. */
		if (batch++ % 4 == 0) {
			cr_assert_eq(cbox_gofer_walk_dir(S.c, other, "inner", 4, got), 1);
			cr_expect_eq(cbox_gofer_clunk(S.c, got[0].fid), 0);
		}
	}
	/* Elsewhere than where the last batch stopped, backwards and forwards. */
	int from[] = {5, 290, 0, 150};
	for (int k = 0; k < 4; k++) {
		int n = cbox_gofer_walk_dir(S.c, dir, names[from[k]], 3, got);
		cr_assert_eq(n, from[k] + 3 <= N ? 3 : N - from[k]);
		for (int i = 0; i < n; i++) {
			cr_expect_str_eq(got[i].name, names[from[k] + i]);
			cr_expect_eq(cbox_gofer_clunk(S.c, got[i].fid), 0);
		}
	}
	cr_expect_eq(cbox_gofer_clunk(S.c, dir), 0);
	cr_expect_eq(cbox_gofer_clunk(S.c, other), 0);
}

/* STAT says when the name a fid was walked by no longer leads to its file: replaced by a rename
 * over it, or removed. The stat is still the walked file's own. */
Test(gofer_ro, stat_says_stale)
{
	struct cbox_gofer_stat st, first;
	uint32_t f = walk("file.txt", &first), d = walk("dir", NULL);
	cr_assert_eq(cbox_gofer_stat(S.c, f, &st), 0);
	cr_expect_eq(st.flags & CBOX_GOFER_STAT_STALE, 0);
	cr_assert_eq(cbox_gofer_stat(S.c, CBOX_GOFER_ROOT_FID, &st), 0);
	cr_expect_eq(st.flags & CBOX_GOFER_STAT_STALE, 0);
	/* An editor's save: a new file renamed over the old name. */
	put("new.txt", "replaced");
	char a[256], b[256];
	at(a, "new.txt");
	at(b, "file.txt");
	cr_assert_eq(rename(a, b), 0);
	cr_assert_eq(cbox_gofer_stat(S.c, f, &st), 0);
	cr_expect_neq(st.flags & CBOX_GOFER_STAT_STALE, 0);
	cr_expect_eq(st.ino, first.ino);
	cr_expect_eq(st.size, 5);
	/* A removed file (still open as the fid). */
	uint32_t inner = 0;
	cr_assert_eq(cbox_gofer_walk(S.c, d, "inner", &inner, NULL), 0);
	at(a, "dir/inner");
	cr_assert_eq(unlink(a), 0);
	cr_assert_eq(cbox_gofer_stat(S.c, inner, &st), 0);
	cr_expect_neq(st.flags & CBOX_GOFER_STAT_STALE, 0);
	cr_expect_eq(st.nlink, 0);
	cr_expect_eq(cbox_gofer_clunk(S.c, f), 0);
	cr_expect_eq(cbox_gofer_clunk(S.c, inner), 0);
	cr_expect_eq(cbox_gofer_clunk(S.c, d), 0);
}

/* CLUNKN: many fids in one round trip; a bad one does not keep the others. */
Test(gofer_ro, clunk_many)
{
	uint32_t fids[5];
	for (int i = 0; i < 4; i++)
		fids[i] = walk("file.txt", NULL);
	fids[4] = 4242;
	cr_expect_eq(cbox_gofer_clunk_many(S.c, fids, 5), -EBADF);
	for (int i = 0; i < 4; i++)
		cr_expect_eq(cbox_gofer_clunk(S.c, fids[i]), -EBADF, "fid %u released", fids[i]);
	/* The root is never released, whatever else is. */
	uint32_t with_root[2] = {walk("dir", NULL), CBOX_GOFER_ROOT_FID};
	cr_expect_eq(cbox_gofer_clunk_many(S.c, with_root, 2), -EINVAL);
	cr_expect_eq(cbox_gofer_clunk(S.c, with_root[0]), -EBADF);
	walk("dir", NULL);
	/* More than one packet holds. */
	static uint32_t lots[CBOX_GOFER_CLUNKN_MAX + 10];
	for (size_t i = 0; i < sizeof(lots) / sizeof(lots[0]); i++)
		lots[i] = walk("file.txt", NULL);
	cr_expect_eq(cbox_gofer_clunk_many(S.c, lots, sizeof(lots) / sizeof(lots[0])), 0);
	cr_expect_eq(cbox_gofer_clunk(S.c, lots[CBOX_GOFER_CLUNKN_MAX + 5]), -EBADF);
}

/* WALKN: the names of a path in one round trip, each exactly as a WALK of it. */
Test(gofer_ro, walk_many)
{
	char p[256];
	at(p, "dir/sub");
	cr_assert_eq(mkdir(p, 0755), 0);
	put("dir/sub/deep", "d");
	struct cbox_gofer_walked w[CBOX_GOFER_WALKN_MAX];
	int err = -1;
	cr_assert_eq(
	    cbox_gofer_walk_many(S.c, CBOX_GOFER_ROOT_FID, "dir/sub/deep", 12, w, &err, NULL), 3);
	cr_expect_eq(err, 0);
	cr_expect(S_ISDIR(w[0].stat.mode) && S_ISDIR(w[1].stat.mode));
	cr_expect(S_ISREG(w[2].stat.mode));
	cr_expect_eq(w[2].stat.size, 1);
	/* Each is a fid like any other: it opens, stats and clunks. */
	int fd = cbox_gofer_open(S.c, w[2].fid, O_RDONLY);
	cr_assert_geq(fd, 0);
	close(fd);
	struct cbox_gofer_stat st;
	uint32_t again;
	cr_assert_eq(cbox_gofer_walk(S.c, w[1].fid, "deep", &again, &st), 0);
	cr_expect_eq(st.ino, w[2].stat.ino);
	for (int i = 0; i < 3; i++)
		cr_expect_eq(cbox_gofer_clunk(S.c, w[i].fid), 0);
	cr_expect_eq(cbox_gofer_clunk(S.c, again), 0);

	/* A symlink ends the walk, returned as itself: the sentry resolves it in the guest's
	 * root. So does a file: what follows it is the sentry's ENOTDIR. */
	cr_assert_eq(cbox_gofer_walk_many(S.c, CBOX_GOFER_ROOT_FID, "link/x/y", 8, w, &err, NULL),
	             1);
	cr_expect(S_ISLNK(w[0].stat.mode));
	cr_expect_eq(err, 0);
	cr_expect_eq(cbox_gofer_clunk(S.c, w[0].fid), 0);
	cr_assert_eq(
	    cbox_gofer_walk_many(S.c, CBOX_GOFER_ROOT_FID, "file.txt/x", 10, w, &err, NULL), 1);
	cr_expect_eq(err, 0);
	cr_expect_eq(cbox_gofer_clunk(S.c, w[0].fid), 0);
	/* A missing name after the first: what was walked, and its errno. */
	cr_assert_eq(
	    cbox_gofer_walk_many(S.c, CBOX_GOFER_ROOT_FID, "dir/nope/z", 10, w, &err, NULL), 1);
	cr_expect_eq(err, ENOENT);
	cr_expect_eq(cbox_gofer_clunk(S.c, w[0].fid), 0);
	/* The first name missing, or not from a directory: the reply is the error. */
	cr_expect_eq(cbox_gofer_walk_many(S.c, CBOX_GOFER_ROOT_FID, "nope/z", 6, w, &err, NULL),
	             -ENOENT);
	uint32_t file = walk("file.txt", NULL);
	cr_expect_eq(cbox_gofer_walk_many(S.c, file, "a/b", 3, w, &err, NULL), -ENOTDIR);
	cr_expect_eq(cbox_gofer_walk_many(S.c, 4242, "a/b", 3, w, &err, NULL), -EBADF);
	cr_expect_eq(cbox_gofer_clunk(S.c, file), 0);
	/* Refused by the client before sending: "..", an empty name. */
	cr_expect_eq(cbox_gofer_walk_many(S.c, CBOX_GOFER_ROOT_FID, "dir/../..", 9, w, &err, NULL),
	             -EINVAL);
	cr_expect_eq(cbox_gofer_walk_many(S.c, CBOX_GOFER_ROOT_FID, "dir//x", 6, w, &err, NULL),
	             -EINVAL);
	walk("dir", NULL);
}

TestSuite(gofer_ro_mount, .init = setup_ro_mount, .fini = teardown_ro_mount);

/* The read of fd, asserted, as a string. */
static void expect_reads(int fd, const char *want)
{
	char got[64] = "";
	ssize_t n = pread(fd, got, sizeof(got) - 1, 0);
	cr_assert_geq(n, 0);
	got[n] = '\0';
	cr_expect_str_eq(got, want);
}

/* WALKOPEN on a read-only mount: a regular file or a directory comes opened for reading (O_RDONLY
 * and nothing else); a symlink, a FIFO or a socket does not, and a name that is not there is the
 * walk's error. */
Test(gofer_ro_mount, walk_open)
{
	uint32_t fid[3];
	struct cbox_gofer_stat st;
	int fd = 42;
	cr_assert_eq(cbox_gofer_walk_open(S.c, CBOX_GOFER_ROOT_FID, "file.txt", &fid[0], &st, &fd),
	             0);
	cr_assert_geq(fd, 0);
	cr_expect_eq(st.flags, CBOX_GOFER_STAT_RDONLY, "the client keeps OPENED to itself");
	expect_reads(fd, "hello");
	cr_expect_eq(fcntl(fd, F_GETFL) & (O_ACCMODE | O_NONBLOCK | O_APPEND), O_RDONLY);
	cr_expect(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	cr_assert_eq(cbox_gofer_walk_open(S.c, CBOX_GOFER_ROOT_FID, "dir", &fid[1], &st, &fd), 0);
	struct stat hs;
	cr_assert_eq(fstat(fd, &hs), 0);
	cr_expect(S_ISDIR(hs.st_mode));
	close(fd);
	static const char *const closed[] = {"link", "fifo", "sock"};
	for (size_t i = 0; i < sizeof(closed) / sizeof(closed[0]); i++) {
		fd = 42;
		cr_assert_eq(
		    cbox_gofer_walk_open(S.c, CBOX_GOFER_ROOT_FID, closed[i], &fid[2], &st, &fd),
		    0);
		cr_expect_eq(fd, -1, "%s", closed[i]);
		cr_expect_eq(cbox_gofer_clunk(S.c, fid[2]), 0);
	}
	cr_expect_eq(cbox_gofer_walk_open(S.c, CBOX_GOFER_ROOT_FID, "nope", &fid[2], &st, &fd),
	             -ENOENT);
	cr_expect_eq(cbox_gofer_clunk(S.c, fid[0]), 0);
	cr_expect_eq(cbox_gofer_clunk(S.c, fid[1]), 0);
}

/* WALKNOPEN opens the path's last name, and only when the walk reached it. */
Test(gofer_ro_mount, walkn_open)
{
	struct cbox_gofer_walked w[CBOX_GOFER_WALKN_MAX];
	int err = 0, fd = 42;
	cr_assert_eq(cbox_gofer_walk_many(S.c, CBOX_GOFER_ROOT_FID, "dir/inner", 9, w, &err, &fd),
	             2);
	cr_assert_geq(fd, 0);
	cr_expect_eq(err, 0);
	cr_expect_eq(w[1].stat.flags, CBOX_GOFER_STAT_RDONLY);
	struct stat hs, want = host_lstat("dir/inner");
	cr_assert_eq(fstat(fd, &hs), 0);
	cr_expect(hs.st_ino == want.st_ino && hs.st_dev == want.st_dev);
	close(fd);
	cbox_gofer_clunk(S.c, w[0].fid);
	cbox_gofer_clunk(S.c, w[1].fid);
	/* A name that fails after the first, and a walk that stops at a file: nothing opened. */
	fd = 42;
	cr_assert_eq(cbox_gofer_walk_many(S.c, CBOX_GOFER_ROOT_FID, "dir/nope", 8, w, &err, &fd),
	             1);
	cr_expect_eq(err, ENOENT);
	cr_expect_eq(fd, -1);
	cbox_gofer_clunk(S.c, w[0].fid);
	fd = 42;
	cr_assert_eq(cbox_gofer_walk_many(S.c, CBOX_GOFER_ROOT_FID, "file.txt/x", 10, w, &err, &fd),
	             1);
	cr_expect_eq(fd, -1);
	cbox_gofer_clunk(S.c, w[0].fid);
}

/* On a writable mount nothing comes opened: the sentry keeps no fd of such files. */
Test(gofer_ro, walk_open_writable_mount)
{
	uint32_t fid;
	struct cbox_gofer_stat st;
	int fd = 42;
	cr_assert_eq(cbox_gofer_walk_open(S.c, CBOX_GOFER_ROOT_FID, "file.txt", &fid, &st, &fd), 0);
	cr_expect_eq(fd, -1);
	cr_expect_eq(st.flags & CBOX_GOFER_STAT_RDONLY, 0);
	cbox_gofer_clunk(S.c, fid);
}

/* The read-only mark follows the mount, not the parent: a writable mount on a directory of the
 * read-only tree (as the working folder is on the rootfs) is not marked, nor is what is in it,
 * while the read-only tree around it still is. The gofer asks once per mount it reaches. */
Test(gofer_ro_mount, marks_follow_the_mount)
{
	char p[256];
	at(p, "dir");
	cr_assert_eq(mount("cbox-test", p, "tmpfs", 0, "size=64k"), 0, "%s", strerror(errno));
	put("dir/w", "x");
	struct cbox_gofer_stat st;
	/* The root's answer first, so that a child that wrongly took its parent's would show. */
	cr_assert_eq(cbox_gofer_stat(S.c, CBOX_GOFER_ROOT_FID, &st), 0);
	cr_expect_eq(st.flags & CBOX_GOFER_STAT_RDONLY, CBOX_GOFER_STAT_RDONLY);
	uint32_t f = walk("file.txt", &st);
	cr_expect_eq(st.flags & CBOX_GOFER_STAT_RDONLY, CBOX_GOFER_STAT_RDONLY);
	uint32_t d = walk("dir", &st);
	cr_expect_eq(st.flags & CBOX_GOFER_STAT_RDONLY, 0, "the writable mount's root");
	uint32_t w;
	cr_assert_eq(cbox_gofer_walk(S.c, d, "w", &w, &st), 0);
	cr_expect_eq(st.flags & CBOX_GOFER_STAT_RDONLY, 0, "a file on the writable mount");
	cr_assert_eq(cbox_gofer_stat(S.c, w, &st), 0);
	cr_expect_eq(st.flags & CBOX_GOFER_STAT_RDONLY, 0);
	cr_assert_eq(cbox_gofer_stat(S.c, f, &st), 0);
	cr_expect_eq(st.flags & CBOX_GOFER_STAT_RDONLY, CBOX_GOFER_STAT_RDONLY);
	cbox_gofer_clunk(S.c, w);
	cbox_gofer_clunk(S.c, d);
	cbox_gofer_clunk(S.c, f);
	umount2(p, MNT_DETACH);
}
