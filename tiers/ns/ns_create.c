/*
 * The ns tier's create: the runtime forks stage 1, which joins the namespaces the config names
 * by path and unshares the new ones (the user namespace first, so that the runtime can write its
 * id maps), then forks the init (pid 1 of a new pid namespace) and exits. The init sets the
 * container up and blocks on <state_dir>/exec.fifo until `cbox start`. Like runc, the runtime
 * does not wait for the init: its subreaper (containerd-shim, `cbox run`) adopts it.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox/cgroup.h"
#include "cbox/cleanup.h"
#include "cbox/log.h"
#include "internal.h"

/* A new network namespace's loopback starts down; runc and crun bring it up, and programs
 * expect 127.0.0.1 to answer. */
static void loopback_up(void)
{
	CBOX_AUTOCLOSE int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		return;
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		cbox_warn("bringing up the container's loopback: %s", strerror(errno));
}

/* Report err to the runtime and exit: used by stage 1 and by the init before exec. */
static CBOX_NORETURN void child_fail(int sock, struct cbox_err **err)
{
	cbox_tier_msg_send(sock, NS_MSG_ERROR, 0,
	                   *err && (*err)->msg ? (*err)->msg : "unknown error");
	_exit(1);
}

/* Join the namespaces named by path: the user namespace first, since it owns the others. */
static int join_namespaces(const struct cbox_oci_linux *l, struct cbox_err **err)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < l->n_namespaces; i++) {
			const struct cbox_oci_namespace *ns = &l->namespaces[i];
			if (!ns->path || (pass == 0) != (ns->type == CLONE_NEWUSER))
				continue;
			CBOX_AUTOCLOSE int fd = open(ns->path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				return cbox_err_set(err, errno, "open namespace %s", ns->path);
			if (setns(fd, ns->type) < 0)
				return cbox_err_set(err, errno, "join namespace %s", ns->path);
		}
	return 0;
}

static CBOX_NORETURN void stage1(struct ns_init_args *a, int new_flags)
{
	struct cbox_err *err = NULL;
	struct cbox_tier_msg m;
	/* Into the cgroup first, while still in the runtime's namespaces and with its rights:
	 * the init and everything it starts are then born under the limits. */
	if (cbox_cgroup_join(a->cgroup, &err) < 0)
		child_fail(a->sock, &err);
	if (join_namespaces(&a->cfg->linux_, &err) < 0)
		child_fail(a->sock, &err);
	if (new_flags & CLONE_NEWUSER) {
		if (unshare(CLONE_NEWUSER) < 0) {
			cbox_err_set(&err, errno, "create a user namespace");
			child_fail(a->sock, &err);
		}
		if (cbox_tier_msg_send(a->sock, NS_MSG_USERNS, 0, NULL) < 0 ||
		    cbox_tier_msg_recv(a->sock, &m) <= 0 || m.type != NS_MSG_GO)
			_exit(1);
		if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0) {
			cbox_err_set(&err, errno,
			             "become root in the new user namespace (is uid 0 "
			             "mapped?)");
			child_fail(a->sock, &err);
		}
	}
	if (unshare(new_flags & ~CLONE_NEWUSER) < 0) {
		cbox_err_set(&err, errno, "create the container's namespaces");
		child_fail(a->sock, &err);
	}
	if (new_flags & CLONE_NEWNET)
		loopback_up();
	/* The init and this process share the socket to the runtime: the init says nothing
	 * until the pid is sent (the pipe's end, when this process exits). Otherwise its
	 * first message could come first, and the prestart hooks get the state of pid 0 (CI
	 * saw Docker's libnetwork-setkey fail so, under load). */
	int order[2];
	if (pipe2(order, O_CLOEXEC) < 0) {
		cbox_err_set(&err, errno, "pipe");
		child_fail(a->sock, &err);
	}
	pid_t pid = fork();
	if (pid < 0) {
		cbox_err_set(&err, errno, "fork the container's init");
		child_fail(a->sock, &err);
	}
	if (pid == 0) {
		char c;
		close(order[1]);
		while (read(order[0], &c, 1) < 0 && errno == EINTR)
			;
		close(order[0]);
		ns_init_main(a);
	}
	cbox_tier_msg_send(a->sock, NS_MSG_PID, pid, NULL);
	_exit(0);
}

static int write_map(pid_t pid, const char *file, const struct cbox_oci_idmap *m, size_t n,
                     struct cbox_err **err)
{
	char path[64], buf[4096];
	size_t used = 0;
	for (size_t i = 0; i < n && used < sizeof(buf); i++)
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%u %u %u\n",
		                         m[i].container_id, m[i].host_id, m[i].size);
	if (used >= sizeof(buf))
		return cbox_err_set(err, E2BIG, "%s: too many mappings", file);
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	CBOX_AUTOCLOSE int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, used) != (ssize_t)used)
		return cbox_err_set(err, errno, "write %s (linux.%s)", path,
		                    !strcmp(file, "uid_map") ? "uidMappings" : "gidMappings");
	return 0;
}

/*
 * Run by a user (rootless), the kernel takes a gid_map only once setgroups(2) is denied in the
 * new user namespace (user_namespaces(7)): otherwise the container's root could drop the
 * supplementary groups the user holds on the host and get past a file's "no access for this
 * group". The container then cannot change its groups (runc's rootless mode, the same).
 */
static int deny_setgroups(pid_t pid, struct cbox_err **err)
{
	if (geteuid() == 0)
		return 0;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)pid);
	CBOX_AUTOCLOSE int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "deny", 4) != 4)
		return cbox_err_set(err, errno, "write %s", path);
	return 0;
}

/* The runtime's side of the set-up conversation, until the init waits for start. */
static int converse(struct cbox_tier_container *c, int sock, pid_t stage1_pid,
                    cbox_tier_created_fn created, void *data, struct cbox_err **err)
{
	const struct cbox_oci_linux *l = &c->config->linux_;
	struct cbox_tier_msg m;
	for (;;) {
		int r = cbox_tier_msg_recv(sock, &m);
		if (r < 0)
			return cbox_err_set(err, -r, "talking to the container's init");
		if (r == 0)
			return cbox_err_set(err, 0, "the container's init exited during set-up");
		switch (m.type) {
		case NS_MSG_USERNS:
			if (deny_setgroups(stage1_pid, err) < 0 ||
			    write_map(stage1_pid, "uid_map", l->uid_mappings, l->n_uid_mappings,
			              err) < 0 ||
			    write_map(stage1_pid, "gid_map", l->gid_mappings, l->n_gid_mappings,
			              err) < 0)
				return -1;
			break;
		case NS_MSG_PID:
			c->pid = m.value;
			c->start_time = cbox_tier_proc_start_time(c->pid);
			waitpid(stage1_pid, NULL, 0);
			continue;
		case NS_MSG_HOOKS:
			if (c->pid <= 0)
				return cbox_err_set(err, EPROTO,
				                    "the container's init reported before its pid");
			if (created && created(data, c, err) < 0)
				return -1;
			break;
		case NS_MSG_READY:
			return 0;
		case NS_MSG_ERROR:
			return cbox_err_set(err, 0, "%s", m.text);
		default:
			return cbox_err_set(err, EPROTO, "unexpected message %d from the init",
			                    m.type);
		}
		if (cbox_tier_msg_send(sock, NS_MSG_GO, 0, NULL) < 0)
			return cbox_err_set(err, errno, "talking to the container's init");
	}
}

static int new_ns_flags(const struct cbox_oci_linux *l)
{
	int flags = 0;
	for (size_t i = 0; i < l->n_namespaces; i++)
		if (!l->namespaces[i].path)
			flags |= l->namespaces[i].type;
	return flags;
}

static bool has_ns(const struct cbox_oci_linux *l, int type)
{
	for (size_t i = 0; i < l->n_namespaces; i++)
		if (l->namespaces[i].type == type)
			return true;
	return false;
}

/* The host id that container id 0 maps to (the first mapping that covers it); 0 when none
 * does (the id maps have been checked to be present by then). */
static unsigned host_id_of_root(const struct cbox_oci_idmap *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (m[i].container_id == 0 && m[i].size > 0)
			return m[i].host_id;
	return 0;
}

int ns_create(struct cbox_tier_container *c, cbox_tier_created_fn created, void *data,
              struct cbox_err **err)
{
	const struct cbox_oci_config *cfg = c->config;
	int flags = new_ns_flags(&cfg->linux_);
	if ((flags & CLONE_NEWUSER) && !cfg->linux_.n_uid_mappings)
		return cbox_err_set(err, EINVAL,
		                    "config.json: linux.uidMappings: required with a "
		                    "new user namespace");
	if (cfg->hostname && cfg->hostname[0] && !has_ns(&cfg->linux_, CLONE_NEWUTS))
		return cbox_err_set(err, EINVAL, "config.json: hostname: needs a uts namespace");
	/* Run by a user (rootless), every other namespace needs the capabilities a new user
	 * namespace gives its root. */
	if (geteuid() != 0 && !(flags & CLONE_NEWUSER))
		return cbox_err_set(
		    err, EPERM,
		    "run by a user (rootless), config.json needs a new user "
		    "namespace mapping your ids (`cbox spec --rootless` writes one)");
	/* The tier writes into its rootfs (mount points, /dev nodes it unlinks and makes again):
	 * the host's own root must never be one. */
	struct stat rs, hs;
	if (stat(c->rootfs, &rs) == 0 && stat("/", &hs) == 0 && rs.st_dev == hs.st_dev &&
	    rs.st_ino == hs.st_ino)
		return cbox_err_set(err, EINVAL,
		                    "config.json: root.path: the host's root cannot be a "
		                    "container's rootfs (bind what it needs into a directory)");
	char fifo[4096];
	snprintf(fifo, sizeof(fifo), "%s/exec.fifo", c->state_dir);
	if (mkfifo(fifo, 0600) < 0)
		return cbox_err_set(err, errno, "mkfifo %s", fifo);
	/* With a user namespace the init that opens the fifo is the container's root, a mapped
	 * host id without privilege over the runtime's files: as with runc, the fifo is that id's
	 * (and the state directory lets others through, 0711). */
	if ((flags & CLONE_NEWUSER) &&
	    (chown(fifo, host_id_of_root(cfg->linux_.uid_mappings, cfg->linux_.n_uid_mappings),
	           host_id_of_root(cfg->linux_.gid_mappings, cfg->linux_.n_gid_mappings)) < 0 ||
	     chmod(c->state_dir, 0711) < 0)) {
		int e = errno;
		unlink(fifo);
		return cbox_err_set(err, e, "chown %s to the container's root", fifo);
	}
	CBOX_AUTOCLOSE int dirfd = open(c->state_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int sv[2];
	if (dirfd < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		unlink(fifo);
		return cbox_err_set(err, errno, "create: %s", c->state_dir);
	}
	CBOX_AUTO(cbox_cgroup) *cg = NULL;
	if (cbox_tier_cgroup_create(c, &cg, err) < 0) {
		close(sv[0]);
		close(sv[1]);
		unlink(fifo);
		return -1;
	}
	struct ns_init_args a = {.cfg = cfg,
	                         .rootfs = c->rootfs,
	                         .sock = sv[1],
	                         .state_dir = dirfd,
	                         .userns = has_ns(&cfg->linux_, CLONE_NEWUSER),
	                         .new_mountns = (flags & CLONE_NEWNS) != 0,
	                         .new_utsns = has_ns(&cfg->linux_, CLONE_NEWUTS),
	                         .cgroup = cg,
	                         .console_sock = c->has_console ? c->console_sock : -1};
	fflush(NULL);
	/* (born in the cgroup's v2 hierarchy: stage1 joins the rest, cbox_cgroup_fork) */
	pid_t pid = cbox_cgroup_fork(cg, 0);
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		cbox_tier_cgroup_abort(c, cg);
		unlink(fifo);
		return cbox_err_set(err, errno, "fork");
	}
	if (pid == 0) {
		close(sv[0]);
		stage1(&a, flags);
	}
	close(sv[1]);
	c->pid = 0;
	int r = converse(c, sv[0], pid, created, data, err);
	close(sv[0]);
	if (r < 0) {
		/* Nothing may be left running after a failed create. */
		kill(pid, SIGKILL);
		if (c->pid > 0)
			kill(c->pid, SIGKILL);
		waitpid(pid, NULL, 0);
		cbox_tier_cgroup_abort(c, cg);
		unlink(fifo);
		return r;
	}
	return 0;
}
