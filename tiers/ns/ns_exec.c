/*
 * The ns tier's exec (`cbox exec`, `docker exec`), as runc's: a new process joins the namespaces
 * of the container's init and its cgroup, then gets the process's rlimits, user, capabilities,
 * no_new_privs, cwd and environment and the container's seccomp filter, and execs the program.
 *
 *   cbox exec ─fork─> joiner (cgroup, setns into every namespace of the init, non-dumpable)
 *     │                 └─clone(CLONE_PARENT)─> the process (born in the container's pid ns)
 *     └ waits for it, or leaves it to its subreaper (--detach)
 *
 * A pid namespace applies to children only, hence the second process; CLONE_PARENT makes it the
 * caller's child, so that `cbox exec` (or, once that exits, its subreaper) reaps it.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox/cgroup.h"
#include "cbox/cleanup.h"
#include "cbox/log.h"
#include "internal.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

enum { EXEC_MSG_PID = 1, EXEC_MSG_ERROR };

/* The user namespace first: it owns the others, and joining it gives the rights to join them.
 * The mount namespace last: it changes the root, and the others are opened by /proc path. */
static const struct {
	const char *name;
	int type;
} namespaces[] = {
    {"user", CLONE_NEWUSER}, {"ipc", CLONE_NEWIPC}, {"uts", CLONE_NEWUTS},
    {"net", CLONE_NEWNET},   {"pid", CLONE_NEWPID}, {"cgroup", CLONE_NEWCGROUP},
    {"time", CLONE_NEWTIME}, {"mnt", CLONE_NEWNS},
};

struct joiner {
	int ns[CBOX_ARRAY_SIZE(namespaces)]; /* -1: the same as ours, nothing to join */
	struct cbox_cgroup *cgroup;          /* NULL: the container has none */
	const struct cbox_tier_container *c;
	const struct cbox_tier_exec *x;
	int sock; /* to the caller: the process's pid, or an error */
};

static void close_all(struct joiner *j)
{
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(j->ns); i++)
		if (j->ns[i] >= 0)
			close(j->ns[i]);
}

/* Open the init's namespaces that differ from ours, then check it is still the same process:
 * the descriptors then name the container's namespaces even if its pid is reused later. */
static int open_namespaces(const struct cbox_tier_container *c, struct joiner *j,
                           struct cbox_err **err)
{
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(namespaces); i++) {
		char path[64], own[64];
		struct stat theirs, mine;
		j->ns[i] = -1;
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)c->pid, namespaces[i].name);
		snprintf(own, sizeof(own), "/proc/self/ns/%s", namespaces[i].name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && access(own, F_OK) < 0)
			continue; /* a kind of namespace this kernel lacks */
		if (fd < 0 || fstat(fd, &theirs) < 0) {
			int e = errno;
			if (fd >= 0)
				close(fd);
			return cbox_err_set(err, e, "open %s", path);
		}
		if (stat(own, &mine) == 0 && mine.st_ino == theirs.st_ino &&
		    mine.st_dev == theirs.st_dev)
			close(fd);
		else
			j->ns[i] = fd;
	}
	if (!cbox_tier_proc_alive(c->pid, c->start_time))
		return cbox_err_set(err, 0, "container %s is not running", c->id);
	return 0;
}

static CBOX_NORETURN void report(int sock, struct cbox_err **err)
{
	cbox_tier_msg_send(sock, EXEC_MSG_ERROR, 0,
	                   *err && (*err)->msg ? (*err)->msg : "unknown error");
	_exit(1);
}

/* A pty made inside the container (its /dev/pts), the master sent to the console socket, the
 * slave as stdin, stdout, stderr and controlling terminal, owned by the process's user. The
 * caller is a session leader. */
int ns_console(const struct cbox_oci_process *p, int console_sock, struct cbox_err **err)
{
	CBOX_AUTOCLOSE int slave =
	    cbox_tier_console_open(console_sock, p->user.uid, p->user.gid, err);
	if (slave < 0)
		return cbox_err_wrap(err, "the container's terminal");
	for (int fd = 0; fd < 3; fd++)
		if (dup2(slave, fd) < 0)
			return cbox_err_set(err, errno, "dup the terminal to fd %d", fd);
	if (ioctl(0, TIOCSCTTY, 0) < 0)
		return cbox_err_set(err, errno, "make the terminal the controlling one");
	return 0;
}

/* The process, in every namespace of the container: never returns. */
static CBOX_NORETURN void process_main(struct joiner *j)
{
	const struct cbox_oci_process *p = j->x->process;
	struct cbox_err *err = NULL;
	char exe[4096];
	/* A session of its own, as runc's: a signal to the caller's group is not the process's. */
	if (setsid() < 0) {
		cbox_err_set(&err, errno, "setsid");
		report(j->sock, &err);
	}
	if (p->terminal && ns_console(p, j->x->console_sock, &err) < 0)
		report(j->sock, &err);
	/* Nothing of the runtime's (state files, sockets, the console socket) reaches the
	 * container's program: whatever descriptor is left above stderr closes on exec. */
	if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) < 0) {
		cbox_err_set(&err, errno, "close_range");
		report(j->sock, &err);
	}
	if (ns_apply_rlimits(p, &err) < 0 || ns_find_exec(p, exe, sizeof(exe), &err) < 0)
		report(j->sock, &err);
	/* The container's own filter, always: a process exec'd into it gets no wider syscall
	 * surface than its init (runc does the same; OCI has no per-process seccomp). */
	ns_drop_and_exec(p, j->c->config->linux_.seccomp, exe, &err);
	report(j->sock, &err);
}

/* Joins the cgroup and the namespaces, starts the process and reports its pid. */
static CBOX_NORETURN void joiner_main(struct joiner *j)
{
	struct cbox_err *err = NULL;
	cbox_log_set_who("exec");
	/* Non-dumpable until the program's exec: the container's processes (which may be root in
	 * its user namespace) must not ptrace us or open our /proc files while we hold the
	 * runtime's rights and descriptors (runc's CVE-2016-9962). */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		cbox_err_set(&err, errno, "prctl(PR_SET_DUMPABLE)");
		report(j->sock, &err);
	}
	/* The cgroup first, while the host's cgroup file system is still in view: the process is
	 * then born under the container's limits and freezer. */
	if (cbox_cgroup_join(j->cgroup, &err) < 0)
		report(j->sock, &err);
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(namespaces); i++) {
		if (j->ns[i] < 0)
			continue;
		if (setns(j->ns[i], namespaces[i].type) < 0) {
			cbox_err_set(&err, errno, "join the container's %s namespace",
			             namespaces[i].name);
			report(j->sock, &err);
		}
		close(j->ns[i]);
		j->ns[i] = -1;
	}
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, NULL, NULL, 0);
	if (pid < 0) {
		cbox_err_set(&err, errno, "start the process in the container");
		report(j->sock, &err);
	}
	if (pid == 0)
		process_main(j);
	cbox_tier_msg_send(j->sock, EXEC_MSG_PID, pid, NULL);
	_exit(0);
}

/* The caller's side: the pid, then EOF when the program runs (the socket is close-on-exec) or an
 * error. */
static int converse(int sock, pid_t joiner, pid_t *pid, struct cbox_err **err)
{
	struct cbox_tier_msg m;
	*pid = 0;
	for (;;) {
		int r = cbox_tier_msg_recv(sock, &m);
		if (r < 0)
			return cbox_err_set(err, -r, "talking to the exec'd process");
		if (r == 0) {
			waitpid(joiner, NULL, 0);
			if (*pid > 0)
				return 0;
			return cbox_err_set(err, 0, "the exec'd process exited during set-up");
		}
		if (m.type == EXEC_MSG_PID) {
			*pid = m.value;
			continue;
		}
		if (m.type == EXEC_MSG_ERROR)
			cbox_err_set(err, 0, "%s", m.text);
		else
			cbox_err_set(err, EPROTO, "unexpected message %d from exec", m.type);
		waitpid(joiner, NULL, 0);
		if (*pid > 0) {
			kill(*pid, SIGKILL);
			waitpid(*pid, NULL, 0);
		}
		return -1;
	}
}

int ns_exec(struct cbox_tier_container *c, const struct cbox_tier_exec *x, pid_t *pid,
            struct cbox_err **err)
{
	struct joiner j = {.c = c, .x = x, .sock = -1};
	CBOX_AUTO(cbox_cgroup) *cg = NULL;
	if (open_namespaces(c, &j, err) < 0) {
		close_all(&j);
		return -1;
	}
	if (cbox_tier_cgroup_load(c, &cg, err) < 0) {
		close_all(&j);
		return -1;
	}
	j.cgroup = cg;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		close_all(&j);
		return cbox_err_set(err, errno, "exec: socketpair");
	}
	fflush(NULL);
	/* (born in the cgroup's v2 hierarchy: joiner_main joins the rest, cbox_cgroup_fork) */
	pid_t joiner = cbox_cgroup_fork(j.cgroup, 0);
	if (joiner == 0) {
		close(sv[0]);
		j.sock = sv[1];
		joiner_main(&j);
	}
	close(sv[1]);
	close_all(&j);
	if (joiner < 0) {
		close(sv[0]);
		return cbox_err_set(err, errno, "exec: fork");
	}
	int r = converse(sv[0], joiner, pid, err);
	close(sv[0]);
	return r;
}
