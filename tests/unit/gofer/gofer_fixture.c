/* The fixture the gofer server tests share: a temp tree, and a server on it in a thread of the
 * test, over a socketpair (see gofer_fixture.h). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "cbox/gofer.h"
#include "gofer_fixture.h"
#include "internal.h"

char root[64];

void put(const char *rel, const char *data)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	FILE *f = fopen(p, "w");
	cr_assert_not_null(f, "create %s", p);
	fputs(data, f);
	fclose(f);
}

void at(char *out, const char *rel)
{
	snprintf(out, 256, "%s/%s", root, rel);
}

void make_tree(void)
{
	char p[256];
	strcpy(root, "/tmp/cbox-gofer-test-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	put("file.txt", "hello");
	at(p, "dir");
	cr_assert_eq(mkdir(p, 0755), 0);
	put("dir/inner", "x");
	at(p, "link");
	cr_assert_eq(symlink("file.txt", p), 0);
	at(p, "fifo");
	cr_assert_eq(mkfifo(p, 0644), 0);
	at(p, "sock");
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	cr_assert_lt(strlen(p), sizeof(sa.sun_path));
	memcpy(sa.sun_path, p, strlen(p) + 1);
	cr_assert_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(s);
}

void remove_tree(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	cr_expect_eq(system(cmd), 0);
}

int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

struct session S;
static int fds_before;

/* Clear CAP_CHOWN from the calling thread's effective set: capset acts on one thread, so the
 * test's own thread keeps it (to remove the tree). A failure shows as chowns that succeed. */
static void drop_cap_chown(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) != 0)
		return;
	d[0].effective &= ~(1u << CAP_CHOWN);
	syscall(SYS_capset, &h, d);
}

static void *serve_thread(void *arg)
{
	struct session *s = arg;
	if (s->no_chown)
		drop_cap_chown();
	s->rc = cbox_gofer_serve(s->sv[1], s->root_fd, s->readonly);
	close(s->sv[1]);
	return NULL;
}

static void start(bool readonly, bool no_chown)
{
	fds_before = count_fds();
	S.no_chown = no_chown;
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, S.sv), 0);
	S.root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(S.root_fd, 0);
	S.readonly = readonly;
	S.rc = 99;
	cr_assert_eq(pthread_create(&S.th, NULL, serve_thread, &S), 0);
	S.c = cbox_gofer_client_new(S.sv[0]);
	cr_assert_not_null(S.c);
}

/* Close the client; the server must end in order and every fd must be gone. */
static int stop(void)
{
	cbox_gofer_client_free(S.c);
	pthread_join(S.th, NULL);
	cr_expect_eq(count_fds(), fds_before, "fd leak");
	return S.rc;
}

void setup_ro(void)
{
	make_tree();
	start(true, false);
}

void setup_rw(void)
{
	make_tree();
	start(false, false);
}

void setup_rw_no_chown(void)
{
	make_tree();
	start(false, true);
}

void setup_ro_mount(void)
{
	make_tree();
	/* As root a mount namespace is enough; otherwise a user namespace brings the right. */
	if (unshare(CLONE_NEWNS) < 0 && unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
		remove_tree();
		if (getenv("CBOX_TESTS_MUST_WORK"))
			cr_assert_fail("a read-only mount needs a mount namespace: %s",
			               strerror(errno));
		cr_skip_test("a read-only mount needs a mount namespace: %s", strerror(errno));
	}
	cr_assert_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0, "%s", strerror(errno));
	cr_assert_eq(mount(root, root, NULL, MS_BIND, NULL), 0, "%s", strerror(errno));
	cr_assert_eq(mount(NULL, root, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL), 0, "%s",
	             strerror(errno));
	start(true, false);
}

void teardown_ro_mount(void)
{
	cr_expect_eq(stop(), 0);
	umount2(root, MNT_DETACH);
	remove_tree();
}

void teardown(void)
{
	cr_expect_eq(stop(), 0);
	remove_tree();
}

uint32_t walk(const char *name, struct cbox_gofer_stat *st)
{
	uint32_t fid = 0;
	int rc = cbox_gofer_walk(S.c, CBOX_GOFER_ROOT_FID, name, &fid, st);
	cr_assert_eq(rc, 0, "walk %s: %s", name, strerror(-rc));
	return fid;
}

struct stat host_lstat(const char *rel)
{
	char p[256];
	struct stat st;
	at(p, rel);
	cr_assert_eq(lstat(p, &st), 0, "lstat %s", p);
	return st;
}
