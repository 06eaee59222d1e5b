/* The guest's tree as the real gofer builds it: host pseudo-filesystems hidden (as root and as a
 * user), hides, tmpfs and bind mounts, set-up errors named, the host root as cbox-run gives it,
 * an overlay root. Needs root; skips otherwise unless CBOX_TESTS_MUST_WORK=1. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <grp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cbox/gofer.h"
#include "spawn_fixture.h"

Test(gofer_spawn, host_root_hides_pseudo_filesystems)
{
	need_root();
	pid_t pid;
	struct cbox_gofer_client *c = spawn("/", true, &pid);
	uint32_t proc = 0, x;
	struct cbox_gofer_stat st;
	cr_assert_eq(cbox_gofer_walk(c, 0, "proc", &proc, &st), 0);
	/* The directory is there (it is part of the rootfs), the host's procfs is not. */
	cr_expect_eq(cbox_gofer_walk(c, proc, "self", &x, NULL), -ENOENT);
	cr_expect_eq(cbox_gofer_walk(c, proc, "1", &x, NULL), -ENOENT);
	uint32_t dev = 0;
	if (cbox_gofer_walk(c, 0, "dev", &dev, NULL) == 0)
		cr_expect_eq(cbox_gofer_walk(c, dev, "null", &x, NULL), -ENOENT);
	uint32_t etc = 0, passwd = 0;
	cr_assert_eq(cbox_gofer_walk(c, 0, "etc", &etc, NULL), 0);
	cr_assert_eq(cbox_gofer_walk(c, etc, "passwd", &passwd, NULL), 0);
	cr_expect_eq(cbox_gofer_open(c, passwd, O_RDWR), -EROFS);
	end_gofer(c, pid);
}

/* A temp tree for the tests below; paths are "<dir>/<rel>". */
static void tmp_dir(char *out)
{
	strcpy(out, "/tmp/cbox-gofer-tree-XXXXXX");
	cr_assert_not_null(mkdtemp(out));
}

static void mk(const char *base, const char *rel, const char *content)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", base, rel);
	if (content == NULL) {
		cr_assert_eq(mkdir(p, 0755), 0, "mkdir %s", p);
		return;
	}
	FILE *f = fopen(p, "w");
	cr_assert_not_null(f, "create %s", p);
	fputs(content, f);
	fclose(f);
}

static bool host_exists(const char *base, const char *rel)
{
	char p[256];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", base, rel);
	return lstat(p, &st) == 0;
}

static void rm_rf(const char *dir)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

/* Everything under dir, one path per line, sorted: what the spawn must not change. */
static char *listing(const char *dir)
{
	char cmd[160];
	static char out[4096];
	snprintf(cmd, sizeof(cmd), "cd '%s' && find . | sort", dir);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	pclose(p);
	return strdup(out);
}

/* Walk a guest path from the root, one component at a time. */
static int walk_path(struct cbox_gofer_client *c, const char *path, uint32_t *fid,
                     struct cbox_gofer_stat *st)
{
	char copy[256], *save = NULL;
	snprintf(copy, sizeof(copy), "%s", path);
	uint32_t cur = CBOX_GOFER_ROOT_FID;
	for (char *t = strtok_r(copy, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
		int rc = cbox_gofer_walk(c, cur, t, &cur, st);
		if (rc < 0)
			return rc;
	}
	*fid = cur;
	return 0;
}

static uint32_t must_walk(struct cbox_gofer_client *c, const char *path, struct cbox_gofer_stat *st)
{
	uint32_t fid = 0;
	int rc = walk_path(c, path, &fid, st);
	cr_assert_eq(rc, 0, "walk %s: %s", path, strerror(-rc));
	return fid;
}

/* The names in a directory of the guest's tree, read through an fd the gofer opened. */
static int count_entries(struct cbox_gofer_client *c, uint32_t dir, char *names, size_t size)
{
	int fd = cbox_gofer_open(c, dir, O_RDONLY | O_DIRECTORY);
	cr_assert_geq(fd, 0, "open dir: %s", strerror(-fd));
	DIR *d = fdopendir(fd);
	int n = 0;
	names[0] = '\0';
	for (struct dirent *e; (e = readdir(d));) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		n++;
		strncat(names, e->d_name, size - strlen(names) - 2);
		strcat(names, " ");
	}
	closedir(d);
	return n;
}

/* Entries of a directory of the guest's tree, or -1 (no cr_ asserts: also used in a forked
 * child). */
static int entries_in(struct cbox_gofer_client *c, const char *path)
{
	uint32_t fid = 0;
	if (walk_path(c, path, &fid, NULL) < 0)
		return -1;
	int fd = cbox_gofer_open(c, fid, O_RDONLY | O_DIRECTORY);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (d == NULL)
		return -1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

/* The host's /proc, /sys and /dev as a gofer serving the host's root shows them: 0 when they
 * are empty and nothing below them is reachable, else 1 (with a message). */
static int host_pseudo_hidden(struct cbox_gofer_client *c)
{
	uint32_t x;
	static const char *const gone[] = {"/proc/1", "/proc/self", "/sys/kernel", "/sys/fs/cgroup",
	                                   "/dev/null"};
	for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++)
		if (walk_path(c, gone[i], &x, NULL) != -ENOENT) {
			fprintf(stderr, "%s is reachable through the gofer\n", gone[i]);
			return 1;
		}
	static const char *const empty[] = {"/proc", "/sys"};
	for (size_t i = 0; i < sizeof(empty) / sizeof(empty[0]); i++) {
		int n = entries_in(c, empty[i]);
		if (n != 0) {
			fprintf(stderr, "%s has %d entries through the gofer\n", empty[i], n);
			return 1;
		}
	}
	if (walk_path(c, "/etc/passwd", &x, NULL) != 0) {
		fprintf(stderr, "/etc/passwd is not served\n");
		return 1;
	}
	return 0;
}

/*
 * The same as a user: the gofer then makes a user namespace, in which its copies of the host's
 * mounts are locked together and cannot be detached (umount2 says EINVAL); they used to stay
 * there, and /proc listed the host's processes. A covered mount hides them for both.
 */
Test(gofer_spawn, host_pseudo_filesystems_hidden_for_root_and_a_user)
{
	need_root();
	pid_t pid;
	struct cbox_gofer_client *c = spawn("/", true, &pid);
	cr_expect_eq(host_pseudo_hidden(c), 0, "as root");
	cbox_gofer_client_free(c);
	wait_exit(pid);

	pid_t child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(65534, 65534, 65534) < 0)
			_exit(3);
		/* (a change of ids made the process undumpable, its /proc files root's: the
		 * gofer could not write its own uid_map, as a freshly started cbox-run can) */
		prctl(PR_SET_DUMPABLE, 1);
		struct cbox_gofer_config cfg = {.rootfs = "/", .readonly = true};
		struct cbox_err *err = NULL;
		int sock = -1;
		pid_t g;
		if (cbox_gofer_spawn(&cfg, &sock, &g, &err) < 0) {
			fprintf(stderr, "spawn as a user: %s\n", err ? err->msg : "?");
			_exit(2);
		}
		struct cbox_gofer_client *uc = cbox_gofer_client_new(sock);
		int rc = host_pseudo_hidden(uc);
		cbox_gofer_client_free(uc);
		waitpid(g, NULL, 0);
		_exit(rc);
	}
	int status = 0;
	cr_assert_eq(waitpid(child, &status, 0), child);
	cr_assert(WIFEXITED(status), "status %#x", status);
	const char *must = getenv("CBOX_TESTS_MUST_WORK");
	if (WEXITSTATUS(status) == 2 && !(must && strcmp(must, "1") == 0))
		cr_skip_test("no unprivileged user namespace here for the gofer");
	cr_expect_eq(WEXITSTATUS(status), 0, "as a user (see above)");
}

struct tree {
	char root[64], rw[64], ro[64], proj[64], cfgfile[96];
};

static void make_tree(struct tree *t)
{
	tmp_dir(t->root);
	tmp_dir(t->rw);
	tmp_dir(t->ro);
	tmp_dir(t->proj);
	mk(t->root, "etc", NULL);
	mk(t->root, "etc/shadow", "SECRET-SHADOW");
	mk(t->root, "etc/passwd", "root:x:0:0");
	mk(t->root, "home", NULL);
	mk(t->root, "home/user", NULL);
	mk(t->root, "home/user/.ssh", NULL);
	mk(t->root, "home/user/.ssh/id", "SECRET-KEY");
	mk(t->root, "data", NULL);
	mk(t->root, "rodata", NULL);
	mk(t->root, "tmp", NULL);
	cr_assert_eq(symlink("etc/passwd", strcat(strcpy(t->cfgfile, t->root), "/lnk")), 0);
	/* A host socket in the rootfs, like /var/run/docker.sock. */
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", t->root);
	cr_assert_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(s);
	mk(t->ro, "ro.txt", "read-only");
	mk(t->proj, "main.c", "int main;");
	snprintf(t->cfgfile, sizeof(t->cfgfile), "%s/cfg.txt", t->ro);
}

static void free_tree(struct tree *t)
{
	rm_rf(t->root);
	rm_rf(t->rw);
	rm_rf(t->ro);
	rm_rf(t->proj);
}

Test(gofer_spawn, builds_the_guest_tree)
{
	need_root();
	struct tree t;
	make_tree(&t);
	mk(t.ro, "cfg.txt", "config");
	char *before = listing(t.root);
	const char *hide[] = {"/home", "/etc/shadow", "/sock", "/missing/x", "/lnk"};
	const struct cbox_gofer_mount mounts[] = {
	    {.kind = CBOX_GOFER_MOUNT_BIND, .source = t.rw, .target = "/data"},
	    {.kind = CBOX_GOFER_MOUNT_BIND, .source = t.ro, .target = "/rodata", .readonly = true},
	    {.kind = CBOX_GOFER_MOUNT_TMPFS, .target = "/tmp", .size = 1 << 20},
	    /* a mode of its own (a home's) */
	    {.kind = CBOX_GOFER_MOUNT_TMPFS, .target = "/tmp/own", .mode_set = true, .mode = 0710},
	    /* Inside a hidden dir: the mount points are made in its tmpfs. */
	    {.kind = CBOX_GOFER_MOUNT_BIND, .source = t.proj, .target = "/home/user/proj"},
	    {.kind = CBOX_GOFER_MOUNT_BIND,
	     .source = t.cfgfile,
	     .target = "/home/cfg.txt",
	     .readonly = true},
	};
	const char *mkdirs[] = {"/tmp/a/b", "/data/made/deep"};
	struct cbox_gofer_config cfg = {.rootfs = t.root,
	                                .readonly = true,
	                                .hide = hide,
	                                .n_hide = CBOX_ARRAY_SIZE(hide),
	                                .mounts = mounts,
	                                .n_mounts = CBOX_ARRAY_SIZE(mounts),
	                                .mkdirs = mkdirs,
	                                .n_mkdirs = CBOX_ARRAY_SIZE(mkdirs)};
	struct cbox_err *err = NULL;
	int sock = -1;
	pid_t pid;
	cr_assert_eq(cbox_gofer_spawn(&cfg, &sock, &pid, &err), 0, "spawn: %s",
	             err ? err->msg : "?");
	struct cbox_gofer_client *c = cbox_gofer_client_new(sock);
	struct cbox_gofer_stat st;
	uint32_t nf = 0;
	char names[512], b[64] = {0};

	/* hide: a dir shows only the mount points made in it, then refuses writes */
	uint32_t home = must_walk(c, "/home", &st);
	cr_expect_eq(count_entries(c, home, names, sizeof(names)), 2, "home has: %s", names);
	uint32_t user = must_walk(c, "/home/user", NULL);
	cr_expect_eq(cbox_gofer_walk(c, user, ".ssh", &nf, NULL), -ENOENT);
	cr_expect_eq(cbox_gofer_mkdir(c, home, "x", 0755, (uint32_t)-1, (uint32_t)-1), -EROFS);
	/* hide: a file is empty and read-only; a socket is an empty file too */
	uint32_t shadow = must_walk(c, "/etc/shadow", &st);
	cr_expect(S_ISREG(st.mode));
	cr_expect_eq(st.size, 0);
	int fd = cbox_gofer_open(c, shadow, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_expect_eq(read(fd, b, sizeof(b)), 0, "the shadow content must never be readable");
	close(fd);
	cr_expect_eq(cbox_gofer_open(c, shadow, O_WRONLY), -EROFS);
	must_walk(c, "/sock", &st);
	cr_expect(S_ISREG(st.mode) && st.size == 0, "socket hidden by an empty file");
	/* a symlink in hide is skipped: it stays a symlink (to what is not hidden) */
	must_walk(c, "/lnk", &st);
	cr_expect(S_ISLNK(st.mode));
	/* the ro rootfs refuses writes; the kernel says so, not the server */
	cr_expect_eq(
	    cbox_gofer_create(c, 0, "new", O_WRONLY, 0644, (uint32_t)-1, (uint32_t)-1, &nf, NULL),
	    -EROFS);

	/* a writable bind: what is made here lands on the host */
	uint32_t data = must_walk(c, "/data", NULL);
	fd = cbox_gofer_create(c, data, "out.txt", O_WRONLY, 0644, (uint32_t)-1, (uint32_t)-1, &nf,
	                       NULL);
	cr_assert_geq(fd, 0, "create in /data: %s", strerror(-fd));
	cr_expect_eq(write(fd, "hello", 5), 5);
	close(fd);
	/* SETATTR and MKNOD under the real seccomp filter */
	struct cbox_gofer_setattr a = {.valid = CBOX_GOFER_SET_ALL,
	                               .mode = 0600,
	                               .uid = 1000,
	                               .gid = 1000,
	                               .size = 2,
	                               .atime_nsec = UTIME_NOW,
	                               .mtime_sec = 1500000000};
	cr_expect_eq(cbox_gofer_setattr(c, nf, &a), 0);
	uint32_t fifo;
	cr_expect_eq(cbox_gofer_mknod(c, data, "fifo", S_IFIFO | 0644, (uint32_t)-1, (uint32_t)-1,
	                              &fifo, &st),
	             0);
	cr_expect_eq(cbox_gofer_mknod(c, data, "dev", S_IFCHR | 0644, (uint32_t)-1, (uint32_t)-1,
	                              &fifo, &st),
	             -EPERM);
	/* a read-only bind */
	uint32_t rof = must_walk(c, "/rodata/ro.txt", NULL);
	cr_expect_eq(cbox_gofer_open(c, rof, O_WRONLY), -EROFS);
	cr_expect_eq(cbox_gofer_create(c, must_walk(c, "/rodata", NULL), "n", O_WRONLY, 0644,
	                               (uint32_t)-1, (uint32_t)-1, &nf, NULL),
	             -EROFS);
	cr_expect_eq(
	    cbox_gofer_setattr(
	        c, rof, &(struct cbox_gofer_setattr){.valid = CBOX_GOFER_SET_MODE, .mode = 0777}),
	    -EROFS);
	/* a tmpfs: writable, mkdirs made in it */
	uint32_t tmp = must_walk(c, "/tmp", &st);
	cr_expect_eq(st.mode & 07777, 01777);
	fd = cbox_gofer_create(c, tmp, "t", O_WRONLY, 0600, (uint32_t)-1, (uint32_t)-1, &nf, NULL);
	cr_expect_geq(fd, 0);
	close(fd);
	must_walk(c, "/tmp/a/b", &st);
	cr_expect(S_ISDIR(st.mode));
	cr_expect_eq(st.mode & 07777, 0755);
	must_walk(c, "/tmp/own", &st);
	cr_expect_eq(st.mode & 07777, 0710);
	/* the bind inside the hidden dir, and the file bind */
	uint32_t proj = must_walk(c, "/home/user/proj", NULL);
	must_walk(c, "/home/user/proj/main.c", NULL);
	fd = cbox_gofer_create(c, proj, "built", O_WRONLY, 0644, (uint32_t)-1, (uint32_t)-1, &nf,
	                       NULL);
	cr_expect_geq(fd, 0, "the workdir bind stays writable under the read-only mask");
	close(fd);
	uint32_t cf = must_walk(c, "/home/cfg.txt", NULL);
	fd = cbox_gofer_open(c, cf, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_expect_eq(read(fd, b, sizeof(b)), 6);
	close(fd);
	cr_expect_eq(cbox_gofer_open(c, cf, O_WRONLY), -EROFS);

	end_gofer(c, pid);
	/* the host sees the writes to the writable binds, and nothing else changed */
	char p[160];
	struct stat hs;
	snprintf(p, sizeof(p), "%s/out.txt", t.rw);
	cr_assert_eq(stat(p, &hs), 0);
	cr_expect_eq(hs.st_size, 2);
	cr_expect_eq(hs.st_mode & 07777, 0600);
	cr_expect_eq(hs.st_uid, 1000);
	cr_expect_eq(hs.st_mtim.tv_sec, 1500000000);
	cr_expect(host_exists(t.rw, "fifo"));
	cr_expect(host_exists(t.rw, "made/deep"));
	cr_expect(host_exists(t.proj, "built"));
	cr_expect(!host_exists(t.rw, "dev"));
	char *after = listing(t.root);
	cr_expect_str_eq(after, before, "the rootfs was changed by the spawn");
	cr_expect(!host_exists(t.root, "tmp/t"));
	free(before);
	free(after);
	free_tree(&t);
}

/* Spawn cfg and expect a failure with code and a message naming what. */
static void expect_spawn_error(const struct cbox_gofer_config *cfg, int code, const char *what)
{
	struct cbox_err *err = NULL;
	int sock = -1;
	pid_t pid = 0;
	cr_expect_eq(cbox_gofer_spawn(cfg, &sock, &pid, &err), -code, "expected %s",
	             strerror(code));
	cr_assert_not_null(err);
	cr_expect_not_null(strstr(err->msg, what), "message: %s", err->msg);
	cr_expect_eq(err->errno_, code);
	cbox_err_free(&err);
}

Test(gofer_spawn, setup_errors_are_reported)
{
	need_root();
	struct tree t;
	make_tree(&t);
	mk(t.root, "many", NULL);
	for (int i = 0; i < 257; i++) {
		char name[32];
		snprintf(name, sizeof(name), "many/f%d", i);
		mk(t.root, name, "");
	}
	char *before = listing(t.root);
	struct cbox_gofer_mount m[2] = {
	    {.kind = CBOX_GOFER_MOUNT_BIND, .source = t.rw, .target = "/many/deeper"}};
	struct cbox_gofer_config cfg = {
	    .rootfs = t.root, .readonly = true, .mounts = m, .n_mounts = 1};
	/* a missing target in the rootfs beside more than 256 entries: no room is made for it
	 * (a bind per entry), and it is never created in the rootfs */
	expect_spawn_error(&cfg, ENOENT, "more than 256 entries");
	/* a missing target in a bind (a host directory): never created there either */
	m[1] = (struct cbox_gofer_mount){.kind = CBOX_GOFER_MOUNT_TMPFS, .target = "/data/sub/dir"};
	m[0].target = "/data";
	cfg.n_mounts = 2;
	expect_spawn_error(&cfg, ENOENT, "/data/sub/dir");
	cr_expect(!host_exists(t.rw, "sub"));
	/* a file bound on a directory */
	m[0] = (struct cbox_gofer_mount){
	    .kind = CBOX_GOFER_MOUNT_BIND, .source = "/etc/hostname", .target = "/data"};
	cfg.n_mounts = 1;
	expect_spawn_error(&cfg, EISDIR, "/data");
	/* mkdirs in the read-only rootfs */
	const char *mkdirs[] = {"/newdir/x"};
	cfg = (struct cbox_gofer_config){
	    .rootfs = t.root, .readonly = true, .mkdirs = mkdirs, .n_mkdirs = 1};
	expect_spawn_error(&cfg, EROFS, "/newdir/x");
	/* checked before any process starts */
	m[0] = (struct cbox_gofer_mount){
	    .kind = CBOX_GOFER_MOUNT_BIND, .source = "/nonexistent/src", .target = "/data"};
	cfg = (struct cbox_gofer_config){.rootfs = t.root, .mounts = m, .n_mounts = 1};
	expect_spawn_error(&cfg, ENOENT, "/nonexistent/src");
	m[0] = (struct cbox_gofer_mount){.kind = CBOX_GOFER_MOUNT_TMPFS, .target = "rel/path"};
	expect_spawn_error(&cfg, EINVAL, "rel/path");
	m[0].target = "/data/../etc";
	expect_spawn_error(&cfg, EINVAL, "/data/../etc");
	m[0].target = "/";
	expect_spawn_error(&cfg, EINVAL, "root");
	m[0] = (struct cbox_gofer_mount){
	    .kind = CBOX_GOFER_MOUNT_TMPFS, .target = "/t", .mode_set = true, .mode = 010000};
	expect_spawn_error(&cfg, EINVAL, "mode 10000");
	const char *hide[] = {"/ok", "etc"};
	cfg = (struct cbox_gofer_config){.rootfs = t.root, .hide = hide, .n_hide = 2};
	expect_spawn_error(&cfg, EINVAL, "etc");
	char *after = listing(t.root);
	cr_expect_str_eq(after, before, "the rootfs was changed by a failed spawn");
	free(before);
	free(after);
	free_tree(&t);
}

/* A mount target the read-only rootfs lacks: the directory that lacks it is shown by a tmpfs of
 * the sandbox's holding binds of its entries, read-only, and the rootfs is left alone; the hides
 * apply through it. */
Test(gofer_spawn, room_for_a_mount_point_the_rootfs_lacks)
{
	need_root();
	struct tree t;
	make_tree(&t);
	char *before = listing(t.root);
	const char *hide[] = {"/etc/shadow"};
	const struct cbox_gofer_mount m[] = {
	    {.kind = CBOX_GOFER_MOUNT_BIND, .source = t.ro, .target = "/new/deeper"},
	    {.kind = CBOX_GOFER_MOUNT_BIND, .source = t.rw, .target = "/etc/newdir"},
	};
	struct cbox_gofer_config cfg = {.rootfs = t.root,
	                                .readonly = true,
	                                .hide = hide,
	                                .n_hide = 1,
	                                .mounts = m,
	                                .n_mounts = CBOX_ARRAY_SIZE(m)};
	pid_t pid;
	struct cbox_gofer_client *c = spawn_cfg(&cfg, &pid);
	struct cbox_gofer_stat st;
	must_walk(c, "/new/deeper/ro.txt", NULL);
	must_walk(c, "/etc/newdir", NULL);
	/* the rest of the root and of /etc as before, the symlink a symlink */
	must_walk(c, "/etc/passwd", &st);
	must_walk(c, "/data", NULL);
	must_walk(c, "/lnk", &st);
	cr_expect(S_ISLNK(st.mode));
	char names[512];
	cr_expect_eq(count_entries(c, must_walk(c, "/etc", NULL), names, sizeof(names)), 3,
	             "/etc: %s", names);
	/* still hidden, read-only around the new points */
	int fd = cbox_gofer_open(c, must_walk(c, "/etc/shadow", NULL), O_RDONLY);
	char buf[32] = "";
	cr_expect_eq(fd >= 0 ? read(fd, buf, sizeof(buf)) : -1, 0, "shadow: %s", buf);
	if (fd >= 0)
		close(fd);
	cr_expect_eq(
	    cbox_gofer_mkdir(c, CBOX_GOFER_ROOT_FID, "x", 0755, (uint32_t)-1, (uint32_t)-1),
	    -EROFS);
	end_gofer(c, pid);
	char *after = listing(t.root);
	cr_expect_str_eq(after, before, "the rootfs was changed by the spawn");
	free(before);
	free(after);
	free_tree(&t);
}

Test(gofer_spawn, writable_rootfs_with_mounts)
{
	need_root();
	struct tree t;
	make_tree(&t);
	const struct cbox_gofer_mount m[] = {
	    {.kind = CBOX_GOFER_MOUNT_BIND, .source = t.ro, .target = "/rodata", .readonly = true},
	};
	const char *mkdirs[] = {"/made"};
	struct cbox_gofer_config cfg = {
	    .rootfs = t.root, .mounts = m, .n_mounts = 1, .mkdirs = mkdirs, .n_mkdirs = 1};
	pid_t pid;
	struct cbox_gofer_client *c = spawn_cfg(&cfg, &pid);
	uint32_t nf;
	/* Every mount read-only but the rootfs writable: the server does not refuse writes. */
	int fd =
	    cbox_gofer_create(c, 0, "x", O_WRONLY, 0644, (uint32_t)-1, (uint32_t)-1, &nf, NULL);
	cr_expect_geq(fd, 0);
	close(fd);
	cr_expect_eq(cbox_gofer_open(c, must_walk(c, "/rodata/ro.txt", NULL), O_RDWR), -EROFS);
	end_gofer(c, pid);
	cr_expect(host_exists(t.root, "x"));
	cr_expect(host_exists(t.root, "made"));
	free_tree(&t);
}

/* What cbox-run asks for: the host root read-only with secrets hidden, a tmpfs /tmp and the
 * working folder (here under the host's /tmp, which the guest's tmpfs /tmp covers) bound
 * writable at its own path. */
Test(gofer_spawn, host_root_like_cbox_run)
{
	need_root();
	char work[64], target[80];
	tmp_dir(work);
	mk(work, "src.c", "x");
	snprintf(target, sizeof(target), "%s", work);
	const char *hide[] = {"/root",    "/etc/shadow", "/etc/gshadow",
	                      "/etc/ssh", "/run",        "/var/lib"};
	const struct cbox_gofer_mount m[] = {
	    {.kind = CBOX_GOFER_MOUNT_TMPFS, .target = "/tmp"},
	    {.kind = CBOX_GOFER_MOUNT_BIND, .source = work, .target = target},
	};
	struct cbox_gofer_config cfg = {.rootfs = "/",
	                                .readonly = true,
	                                .hide = hide,
	                                .n_hide = CBOX_ARRAY_SIZE(hide),
	                                .mounts = m,
	                                .n_mounts = CBOX_ARRAY_SIZE(m)};
	pid_t pid;
	struct cbox_gofer_client *c = spawn_cfg(&cfg, &pid);
	struct cbox_gofer_stat st;
	char names[512];
	uint32_t nf;
	cr_expect_eq(count_entries(c, must_walk(c, "/root", NULL), names, sizeof(names)), 0,
	             "/root has: %s", names);
	cr_expect_eq(count_entries(c, must_walk(c, "/var/lib", NULL), names, sizeof(names)), 0);
	cr_expect_eq(count_entries(c, must_walk(c, "/run", NULL), names, sizeof(names)), 0);
	must_walk(c, "/etc/shadow", &st);
	cr_expect_eq(st.size, 0);
	cr_expect_eq(walk_path(c, "/proc/self", &nf, NULL), -ENOENT);
	/* /tmp is the guest's own: only the mount point of the working folder is in it */
	cr_expect_eq(count_entries(c, must_walk(c, "/tmp", NULL), names, sizeof(names)), 1,
	             "/tmp has: %s", names);
	char p[128];
	snprintf(p, sizeof(p), "%s/src.c", target);
	must_walk(c, p, NULL);
	int fd = cbox_gofer_create(c, must_walk(c, target, NULL), "out", O_WRONLY, 0644,
	                           (uint32_t)-1, (uint32_t)-1, &nf, NULL);
	cr_expect_geq(fd, 0, "create in the working folder: %s", strerror(-fd));
	close(fd);
	cr_expect_eq(cbox_gofer_create(c, must_walk(c, "/etc", NULL), "x", O_WRONLY, 0644,
	                               (uint32_t)-1, (uint32_t)-1, &nf, NULL),
	             -EROFS);
	end_gofer(c, pid);
	cr_expect(host_exists(work, "out"));
	rm_rf(work);
}

Test(gofer_spawn, overlay_root_leaves_the_rootfs_alone)
{
	need_root();
	struct tree t;
	make_tree(&t);
	char *before = listing(t.root);
	const struct cbox_gofer_mount m[] = {
	    {.kind = CBOX_GOFER_MOUNT_TMPFS, .target = "/newdir"}, /* made in the upper layer */
	};
	struct cbox_gofer_config cfg = {
	    .rootfs = t.root, .readonly = true, .overlay = true, .mounts = m, .n_mounts = 1};
	pid_t pid;
	struct cbox_gofer_client *c = spawn_cfg(&cfg, &pid);
	uint32_t nf;
	/* A new file, a copied-up file and a removed lower file: all in the upper layer. */
	int fd =
	    cbox_gofer_create(c, 0, "new", O_WRONLY, 0644, (uint32_t)-1, (uint32_t)-1, &nf, NULL);
	cr_expect_geq(fd, 0, "create: %s", strerror(-fd));
	close(fd);
	fd = cbox_gofer_open(c, must_walk(c, "/etc/passwd", NULL), O_WRONLY | O_TRUNC);
	cr_expect_geq(fd, 0, "open a lower file for writing: %s", strerror(-fd));
	cr_expect_eq(write(fd, "changed", 7), 7);
	close(fd);
	uint32_t etc = must_walk(c, "/etc", NULL);
	cr_expect_eq(cbox_gofer_unlink(c, etc, "shadow", false), 0);
	uint32_t gone;
	struct cbox_gofer_stat st;
	cr_expect_eq(cbox_gofer_walk(c, etc, "shadow", &gone, &st), -ENOENT, "a whiteout");
	cr_expect_eq(walk_path(c, "/newdir", &nf, &st), 0, "a mount point made in the overlay");
	end_gofer(c, pid);
	char *after = listing(t.root);
	cr_expect_str_eq(after, before, "the rootfs changed under an overlay");
	char buf[32] = {0};
	char path[128];
	snprintf(path, sizeof(path), "%s/etc/passwd", t.root);
	int hf = open(path, O_RDONLY);
	cr_assert_geq(hf, 0);
	cr_expect_eq(read(hf, buf, sizeof(buf) - 1), 10);
	cr_expect_str_eq(buf, "root:x:0:0");
	close(hf);
	free(before);
	free(after);
	free_tree(&t);
}

/* FILE mounts (cbox-run's /etc/hostname and /etc/hosts): the content is served at the target,
 * read-only when asked (a write must fail), writable otherwise, and the rootfs's own file is
 * never touched either way. */
Test(gofer_spawn, file_mounts_serve_their_content)
{
	need_root();
	struct tree t;
	make_tree(&t);
	mk(t.root, "etc/hosts", "10.0.0.1 host-only\n");
	mk(t.root, "etc/hostname", "hostbox\n");
	char *before = listing(t.root);
	static const char hosts[] = "127.0.0.1\tlocalhost\n127.0.1.1\tcbox\n";
	const struct cbox_gofer_mount m[] = {
	    {.kind = CBOX_GOFER_MOUNT_FILE,
	     .target = "/etc/hosts",
	     .content = hosts,
	     .readonly = true},
	    {.kind = CBOX_GOFER_MOUNT_FILE, .target = "/etc/hostname", .content = "cbox\n"},
	};
	struct cbox_gofer_config cfg = {
	    .rootfs = t.root, .readonly = true, .mounts = m, .n_mounts = CBOX_ARRAY_SIZE(m)};
	pid_t pid;
	struct cbox_gofer_client *c = spawn_cfg(&cfg, &pid);
	struct cbox_gofer_stat st;
	uint32_t fid = must_walk(c, "/etc/hosts", &st);
	cr_expect_eq(st.size, sizeof(hosts) - 1);
	cr_expect_eq(st.mode & 07777, 0644);
	char buf[128] = "";
	int fd = cbox_gofer_open(c, fid, O_RDONLY);
	cr_assert_geq(fd, 0, "open /etc/hosts: %s", strerror(-fd));
	cr_expect_eq(read(fd, buf, sizeof(buf) - 1), (ssize_t)sizeof(hosts) - 1);
	cr_expect_str_eq(buf, hosts);
	close(fd);
	cr_expect_eq(cbox_gofer_open(c, fid, O_WRONLY), -EROFS, "a read-only FILE mount");
	fd = cbox_gofer_open(c, must_walk(c, "/etc/hostname", NULL), O_WRONLY | O_TRUNC);
	cr_assert_geq(fd, 0, "open /etc/hostname for writing: %s", strerror(-fd));
	cr_expect_eq(write(fd, "renamed\n", 8), 8);
	close(fd);
	end_gofer(c, pid);
	char *after = listing(t.root);
	cr_expect_str_eq(after, before, "the rootfs was changed");
	free(after);
	char path[128], host[32] = "";
	snprintf(path, sizeof(path), "%s/etc/hostname", t.root);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f);
	cr_expect_not_null(fgets(host, sizeof(host), f));
	fclose(f);
	cr_expect_str_eq(host, "hostbox\n", "the rootfs's own /etc/hostname was written");
	/* the bad ones: no content, too much of it, a directory as the target */
	struct cbox_gofer_mount bad = {.kind = CBOX_GOFER_MOUNT_FILE, .target = "/etc/hosts"};
	cfg.mounts = &bad;
	cfg.n_mounts = 1;
	expect_spawn_error(&cfg, EINVAL, "/etc/hosts");
	char *big = malloc(CBOX_GOFER_FILE_MAX + 2);
	cr_assert(big);
	memset(big, 'x', CBOX_GOFER_FILE_MAX + 1);
	big[CBOX_GOFER_FILE_MAX + 1] = '\0';
	bad.content = big;
	expect_spawn_error(&cfg, EINVAL, "/etc/hosts");
	free(big);
	bad = (struct cbox_gofer_mount){
	    .kind = CBOX_GOFER_MOUNT_FILE, .target = "/etc", .content = "x"};
	expect_spawn_error(&cfg, EISDIR, "/etc");
	after = listing(t.root);
	cr_expect_str_eq(after, before, "the rootfs was changed by a failed spawn");
	free(after);
	free(before);
	free_tree(&t);
}
