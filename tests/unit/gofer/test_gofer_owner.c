/* The owner the gofer gives each node it makes (CREATE, TMPFILE, MKDIR, SYMLINK, MKNOD, BIND),
 * in-process over a socketpair on a temp tree: the ids asked for, -1 keeping the gofer's own (and
 * a set-group-ID directory's group), the modes asked for, and no node left behind when the chown
 * fails. Giving a node another id needs root (CAP_CHOWN): those tests skip otherwise, unless
 * CBOX_TESTS_MUST_WORK=1. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/gofer.h"
#include "gofer_fixture.h"

#define KEEP ((uint32_t)-1)

static void need_root(void)
{
	if (geteuid() == 0)
		return;
	const char *must = getenv("CBOX_TESTS_MUST_WORK");
	if (must && strcmp(must, "1") == 0)
		cr_assert_fail("giving a node another owner needs root (CBOX_TESTS_MUST_WORK=1)");
	cr_skip_test("giving a node another owner needs root (CAP_CHOWN): run the tests as root");
}

/* The modes below are checked exactly: the server runs in this process, under its umask. */
static void init_rw(void)
{
	umask(022);
	setup_rw();
}

static void init_rw_no_chown(void)
{
	umask(022);
	setup_rw_no_chown();
}

TestSuite(gofer_owner, .init = init_rw, .fini = teardown);
TestSuite(gofer_owner_no_chown, .init = init_rw_no_chown, .fini = teardown);

enum kind { K_CREATE, K_TMPFILE, K_MKDIR, K_SYMLINK, K_MKNOD, K_BIND, K_N };
static const char *const kind_name[K_N] = {"create",  "tmpfile", "mkdir",
                                           "symlink", "mknod",   "bind"};
/* The permission bits each kind is made with (under umask 022); 0: not checked. */
static const mode_t kind_mode[K_N] = {0640, 0640, 0750, 0, 0640, 0};

struct made {
	int rc;
	bool has_reply; /* reply holds the reply's stat (CREATE, TMPFILE, MKNOD) */
	struct cbox_gofer_stat reply;
	struct stat host; /* lstat of the node on the host (fstat of a TMPFILE's fd) */
};

/* Make a node of kind k named name (its kind's name when NULL) in dir, the fid of rel (its path
 * under root, "" for the root), with owner uid, gid; every fd and fid it gives is released. */
static struct made make(enum kind k, uint32_t dir, const char *rel, uint32_t uid, uint32_t gid)
{
	struct made m = {0};
	const char *name = kind_name[k];
	char path[256];
	uint32_t nf = 0;
	int fd = -1;
	snprintf(path, sizeof(path), "%s%s%s", rel, *rel ? "/" : "", name);
	m.has_reply = k == K_CREATE || k == K_TMPFILE || k == K_MKNOD;
	switch (k) {
	case K_CREATE:
		fd = cbox_gofer_create(S.c, dir, name, O_RDWR, 0640, uid, gid, &nf, &m.reply);
		break;
	case K_TMPFILE:
		fd = cbox_gofer_tmpfile(S.c, dir, O_RDWR, 0640, uid, gid, &nf, &m.reply);
		if (fd >= 0)
			cr_assert_eq(fstat(fd, &m.host), 0);
		break;
	case K_MKDIR:
		m.rc = cbox_gofer_mkdir(S.c, dir, name, 0750, uid, gid);
		break;
	case K_SYMLINK:
		m.rc = cbox_gofer_symlink(S.c, dir, name, "file.txt", uid, gid);
		break;
	case K_MKNOD:
		m.rc = cbox_gofer_mknod(S.c, dir, name, S_IFIFO | 0640, uid, gid, &nf, &m.reply);
		break;
	default: {
		/* BIND resolves its path from a directory fid: the root, and the path under it. */
		int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		cr_assert_geq(s, 0);
		m.rc = cbox_gofer_bind(S.c, CBOX_GOFER_ROOT_FID, path, strlen(path), s, 0777, uid,
		                       gid);
		close(s);
		break;
	}
	}
	if (k == K_CREATE || k == K_TMPFILE) {
		m.rc = fd < 0 ? fd : 0;
		if (fd >= 0)
			close(fd);
	}
	if (m.rc == 0 && m.has_reply)
		cr_expect_eq(cbox_gofer_clunk(S.c, nf), 0);
	if (m.rc == 0 && k != K_TMPFILE)
		m.host = host_lstat(path);
	return m;
}

/* The node m of kind k is owned by uid:gid on the host and, when the reply had a stat, there. */
static void expect_owner(enum kind k, const struct made *m, uid_t uid, gid_t gid)
{
	cr_assert_eq(m->rc, 0, "%s: %s", kind_name[k], strerror(-m->rc));
	cr_expect_eq(m->host.st_uid, uid, "%s: host uid %u", kind_name[k], m->host.st_uid);
	cr_expect_eq(m->host.st_gid, gid, "%s: host gid %u", kind_name[k], m->host.st_gid);
	if (kind_mode[k])
		cr_expect_eq(m->host.st_mode & 07777, kind_mode[k], "%s: mode %o", kind_name[k],
		             m->host.st_mode & 07777);
	if (!m->has_reply)
		return;
	cr_expect_eq(m->reply.uid, uid, "%s: the reply's stat is taken after the chown",
	             kind_name[k]);
	cr_expect_eq(m->reply.gid, gid, "%s: reply gid", kind_name[k]);
	cr_expect_eq(m->reply.ino, m->host.st_ino, "%s: the reply names the node", kind_name[k]);
	cr_expect_eq(m->reply.mode, m->host.st_mode, "%s: reply mode", kind_name[k]);
}

static void remove_made(const char *rel)
{
	char p[256];
	for (int k = 0; k < K_N; k++) {
		snprintf(p, sizeof(p), "%s/%s%s%s", root, rel, *rel ? "/" : "", kind_name[k]);
		if (k == K_MKDIR)
			rmdir(p);
		else
			unlink(p);
	}
}

Test(gofer_owner, each_kind_gets_the_owner_asked_for)
{
	need_root();
	for (enum kind k = 0; k < K_N; k++) {
		struct made m = make(k, CBOX_GOFER_ROOT_FID, "", 1234, 5678);
		expect_owner(k, &m, 1234, 5678);
	}
	/* One id at a time: -1 keeps the other as the gofer made it. */
	remove_made("");
	for (enum kind k = 0; k < K_N; k++) {
		struct made m = make(k, CBOX_GOFER_ROOT_FID, "", 1234, KEEP);
		expect_owner(k, &m, 1234, getegid());
	}
	remove_made("");
	for (enum kind k = 0; k < K_N; k++) {
		struct made m = make(k, CBOX_GOFER_ROOT_FID, "", KEEP, 5678);
		expect_owner(k, &m, geteuid(), 5678);
	}
}

Test(gofer_owner, minus_one_keeps_the_gofers_ids)
{
	/* (no root needed: nothing is chowned) */
	for (enum kind k = 0; k < K_N; k++) {
		struct made m = make(k, CBOX_GOFER_ROOT_FID, "", KEEP, KEEP);
		expect_owner(k, &m, geteuid(), getegid());
	}
}

Test(gofer_owner, set_group_id_directory_keeps_its_group)
{
	need_root();
	char p[256];
	at(p, "sg");
	cr_assert_eq(mkdir(p, 0775), 0);
	cr_assert_eq(chown(p, 0, 5678), 0);
	cr_assert_eq(chmod(p, 02775), 0);
	uint32_t sg = walk("sg", NULL);
	/* gid -1: the group the kernel gave, the directory's, stays; a new directory also keeps
	 * the set-group-ID bit it inherited (a chown leaves a directory's mode alone). */
	for (enum kind k = 0; k < K_N; k++) {
		struct made m = make(k, sg, "sg", 1234, KEEP);
		cr_assert_eq(m.rc, 0, "%s: %s", kind_name[k], strerror(-m.rc));
		cr_expect_eq(m.host.st_uid, 1234, "%s", kind_name[k]);
		cr_expect_eq(m.host.st_gid, 5678, "%s: the directory's group", kind_name[k]);
		if (k == K_MKDIR)
			cr_expect_eq(m.host.st_mode & 07777, 02750, "mkdir: mode %o",
			             m.host.st_mode & 07777);
		else if (kind_mode[k])
			cr_expect_eq(m.host.st_mode & 07777, kind_mode[k], "%s: mode %o",
			             kind_name[k], m.host.st_mode & 07777);
	}
	/* An explicit group wins, and a directory still keeps its set-group-ID bit. */
	remove_made("sg");
	struct made m = make(K_MKDIR, sg, "sg", 1234, 4321);
	cr_assert_eq(m.rc, 0);
	cr_expect_eq(m.host.st_gid, 4321);
	cr_expect_eq(m.host.st_mode & 07777, 02750);
}

Test(gofer_owner, modes_survive_the_chown)
{
	need_root();
	/* setuid/setgid asked for are dropped by the gofer, so the chown (which would clear them on
	 * a file) has nothing to change: the mode is exactly the one kept. */
	struct cbox_gofer_stat st;
	uint32_t nf;
	int fd =
	    cbox_gofer_create(S.c, CBOX_GOFER_ROOT_FID, "f", O_RDWR, 06750, 1234, 5678, &nf, &st);
	cr_assert_geq(fd, 0, "create: %s", strerror(-fd));
	close(fd);
	cr_expect_eq(host_lstat("f").st_mode, S_IFREG | 0750);
	cr_expect_eq(st.mode, S_IFREG | 0750);
	cr_expect_eq(cbox_gofer_mkdir(S.c, CBOX_GOFER_ROOT_FID, "d", 01755, 1234, 5678), 0);
	cr_expect_eq(host_lstat("d").st_mode, S_IFDIR | 01755, "sticky kept");
	cr_expect_eq(
	    cbox_gofer_mknod(S.c, CBOX_GOFER_ROOT_FID, "p", S_IFIFO | 06640, 1234, 5678, &nf, &st),
	    0);
	cr_expect_eq(host_lstat("p").st_mode, S_IFIFO | 0640);
	cr_expect_eq(st.uid, 1234);
}

Test(gofer_owner_no_chown, failed_chown_leaves_no_node)
{
	/* The server thread has no CAP_CHOWN (as an unprivileged gofer): giving another id fails
	 * with the chown's EPERM, and the node just made is gone again. */
	char p[256];
	struct stat st;
	for (enum kind k = 0; k < K_N; k++) {
		struct made m = make(k, CBOX_GOFER_ROOT_FID, "", 1234, 5678);
		cr_expect_eq(m.rc, -EPERM, "%s: %d", kind_name[k], m.rc);
		at(p, kind_name[k]);
		cr_expect_eq(lstat(p, &st), -1, "%s left behind", kind_name[k]);
		cr_expect_eq(errno, ENOENT);
	}
	/* Nothing else appeared either (TMPFILE's unnamed file has no name to find). */
	at(p, "");
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "test $(ls -A '%s' | wc -l) -eq 5", p);
	cr_expect_eq(system(cmd), 0, "the tree holds only the fixture's five entries");
	/* The names are free, and the session goes on: without an owner, each is made. */
	for (enum kind k = 0; k < K_N; k++) {
		struct made m = make(k, CBOX_GOFER_ROOT_FID, "", KEEP, KEEP);
		expect_owner(k, &m, geteuid(), getegid());
	}
}
