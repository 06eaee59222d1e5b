/*
 * cbox-run --tier=ns: the sandbox cbox-run describes (its view of the host's tree, working
 * folder, -v binds, hidden paths, environment, no network, limits and --timeout), run by cbox's
 * ns tier (plain namespaces, like runc) instead of the sentry. cbox-run writes an OCI bundle
 * under a temporary directory and runs `cbox --tier ns run` on it (cbox beside cbox-run), killing
 * the container when --timeout expires.
 *
 * The tree is the gofer's description translated: the hidden paths come first (an empty tmpfs
 * over a directory, /dev/null over a file: the masked paths of OCI), then the mounts in order.
 * The host's root cannot be a container's root itself (the ns tier refuses it): the rootfs is an
 * empty directory with each entry of / bound read-only at its own name, as cbox-compat's ns
 * target does.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <linux/magic.h>

#include "cbox/fdpass.h"
#include "cbox/netif.h"
#include "cbox/rmtree.h"
#include "cbox/log.h"
#include "cbox/path.h"
#include "cbox_run.h"

static json_object *jstr(const char *s)
{
	return json_object_new_string(s);
}

static json_object *mount_obj(const char *dst, const char *type, const char *src,
                              const char *const *opts)
{
	json_object *m = json_object_new_object(), *o = json_object_new_array();
	json_object_object_add(m, "destination", jstr(dst));
	json_object_object_add(m, "type", jstr(type));
	json_object_object_add(m, "source", jstr(src));
	for (; opts && *opts; opts++)
		json_object_array_add(o, jstr(*opts));
	json_object_object_add(m, "options", o);
	return m;
}

/* The host's / as the rootfs: each entry bound read-only, symlinks copied (see above). */
static int host_root(const char *rootfs, json_object *mounts)
{
	struct dirent **ents = NULL;
	int n = scandir("/", &ents, NULL, alphasort);
	if (n < 0)
		return -errno;
	int r = 0;
	for (int i = 0; i < n; i++) {
		const char *e = ents[i]->d_name;
		char host[PATH_MAX], link[PATH_MAX], in[PATH_MAX + 256];
		struct stat st;
		snprintf(host, sizeof(host), "/%s", e);
		bool skip = !strcmp(e, ".") || !strcmp(e, "..") || !strcmp(e, "proc") ||
		            !strcmp(e, "dev") || !strcmp(e, "sys") || lstat(host, &st) < 0;
		if (r == 0 && !skip && S_ISLNK(st.st_mode)) {
			ssize_t k = readlink(host, link, sizeof(link) - 1);
			int w = snprintf(in, sizeof(in), "%s/%s", rootfs, e);
			if (w < 0 || (size_t)w >= sizeof(in))
				r = -ENAMETOOLONG;
			else if (k < 0 || (link[k] = '\0', symlink(link, in) < 0))
				r = -errno;
		} else if (r == 0 && !skip && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
			static const char *const ro[] = {"rbind", "ro", NULL};
			json_object_array_add(mounts, mount_obj(host, "bind", host, ro));
		}
		free(ents[i]);
	}
	free(ents);
	return r;
}

/* The container's own /proc, /dev and /sys, as a bundle of `cbox spec` has them; /sys/fs/cgroup
 * only with a limit (cgroup). */
static void own_mounts(json_object *mounts, bool cgroup)
{
	static const char *const dev[] = {"nosuid", "strictatime", "mode=755", "size=65536k", NULL};
	static const char *const pts[] = {"nosuid",        "noexec",    "newinstance",
	                                  "ptmxmode=0666", "mode=0620", NULL};
	static const char *const shm[] = {"nosuid", "noexec", "nodev", "mode=1777", NULL};
	static const char *const sys[] = {"nosuid", "noexec", "nodev", "ro", NULL};
	json_object_array_add(mounts, mount_obj("/proc", "proc", "proc", NULL));
	json_object_array_add(mounts, mount_obj("/dev", "tmpfs", "tmpfs", dev));
	json_object_array_add(mounts, mount_obj("/dev/pts", "devpts", "devpts", pts));
	json_object_array_add(mounts, mount_obj("/dev/shm", "tmpfs", "shm", shm));
	json_object_array_add(mounts, mount_obj("/sys", "sysfs", "sysfs", sys));
	/* The container's own cgroup, read-only, as Docker's config has it: runtimes size
	 * themselves by its limits (the JVM's heap by --memory). Without a limit it has none
	 * (cbox_run_ns), and the mount would show the caller's cgroup and every cgroup below it,
	 * other containers' names among them: sysfs's empty fs/cgroup stays, and runtimes find
	 * no limit, as in the sentry tier. */
	if (cgroup)
		json_object_array_add(mounts, mount_obj("/sys/fs/cgroup", "cgroup", "cgroup", sys));
}

/* stat(2) of path as the container sees it in the rootfs: symlinks followed inside it, as runc
 * resolves a mount's destination (and as the gofer finds the paths it hides). */
static int stat_in_rootfs(const char *rootfs, const char *path, struct stat *st)
{
	int root = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -1;
	int fd = cbox_open_in_root(root, path, O_PATH);
	int r = fd < 0 ? -1 : fstat(fd, st);
	if (fd >= 0)
		close(fd);
	close(root);
	return r;
}

/* Hidden path h of the gofer's tree as the bundle hides it: an empty tmpfs on a directory,
 * read-only unless a later mount needs its mount point made inside; anything else a masked path
 * (runc binds /dev/null over it, after every mount). Whether it is a directory is asked of the file
 * it is: below the bind mount that holds it (cbox_gofer_hide_after), that mount's source's; else
 * the rootfs's (a --rootfs's own, not the host's: a path only that rootfs has was left shown). */
static void add_hide(const struct cbox_gofer_config *gc, const char *h, json_object *mounts,
                     json_object *masked)
{
	char host[PATH_MAX];
	ssize_t k = cbox_gofer_hide_after(gc, h);
	const struct cbox_gofer_mount *in = k >= 0 ? &gc->mounts[k] : NULL;
	struct stat st;
	int r;
	if (in && in->kind == CBOX_GOFER_MOUNT_BIND) {
		snprintf(host, sizeof(host), "%s%s", in->source, h + strlen(in->target));
		r = stat(host, &st);
	} else {
		r = stat_in_rootfs(gc->rootfs ? gc->rootfs : "/", h, &st);
	}
	if (r < 0)
		return; /* the gofer skips hidden paths that do not exist, too */
	if (!S_ISDIR(st.st_mode)) {
		json_object_array_add(masked, jstr(h));
		return;
	}
	bool parent = false;
	for (size_t k2 = 0; k2 < gc->n_mounts; k2++)
		parent |= cbox_gofer_path_at_or_below(gc->mounts[k2].target, h);
	static const char *const ro[] = {"mode=755", "size=1m", "ro", NULL};
	static const char *const rw[] = {"mode=755", "size=1m", NULL};
	json_object_array_add(mounts, mount_obj(h, "tmpfs", "tmpfs", parent ? rw : ro));
}

/* The hidden paths that go right after mount i. */
static void add_hides_after(const struct cbox_gofer_config *gc, size_t i, json_object *mounts,
                            json_object *masked)
{
	for (size_t h = 0; h < gc->n_hide; h++)
		if (cbox_gofer_hide_after(gc, gc->hide[h]) == (ssize_t)i)
			add_hide(gc, gc->hide[h], mounts, masked);
}

/* The gofer's tree (hidden paths, then mounts, then directories to make) as OCI mounts and
 * masked paths, in the gofer's order: a hidden path inside a mount (the working folder, a -v)
 * right after that mount; a FILE mount is a bind of a file written in the bundle's directory
 * dir. The guest's own directories (a tmpfs with a mode of its own, the guest's home; those the
 * gofer makes, /tmp/home) are the guest's, uid:gid (-u), as the gofer's tmpfs mounts show to
 * the guest of the sentry tier: under -u 1000, /tmp/home was root's and HOME not writable. */
static int tree_mounts(const struct cbox_gofer_config *gc, json_object *mounts, json_object *masked,
                       const char *dir, uint32_t uid, uint32_t gid)
{
	char uid_opt[32], gid_opt[32];
	snprintf(uid_opt, sizeof(uid_opt), "uid=%" PRIu32, uid);
	snprintf(gid_opt, sizeof(gid_opt), "gid=%" PRIu32, gid);
	for (size_t i = 0; i < gc->n_hide; i++)
		if (cbox_gofer_hide_after(gc, gc->hide[i]) < 0)
			add_hide(gc, gc->hide[i], mounts, masked);
	for (size_t i = 0; i < gc->n_mounts; i++) {
		const struct cbox_gofer_mount *m = &gc->mounts[i];
		/* The sentry's /dev and /dev/shm: the container has its own (own_mounts). A
		 * second tmpfs on /dev covered the first, /dev/pts with it (no pty worked). */
		if (m->kind == CBOX_GOFER_MOUNT_TMPFS &&
		    (!strcmp(m->target, "/dev") || !strcmp(m->target, "/dev/shm"))) {
			add_hides_after(gc, i, mounts, masked);
			continue;
		}
		if (m->kind == CBOX_GOFER_MOUNT_FILE) {
			char path[PATH_MAX];
			if (snprintf(path, sizeof(path), "%s/file%zu", dir, i) >= (int)sizeof(path))
				return -1;
			FILE *f = fopen(path, "wx");
			/* 0644 whatever the caller's umask: the guest's user (-u) reads it too */
			bool ok = f && fchmod(fileno(f), 0644) == 0 && fputs(m->content, f) >= 0;
			if (!f || fclose(f) != 0 || !ok)
				return -1;
			const char *opts[] = {
			    "bind", "nodev", "nosuid", "noexec", m->readonly ? "ro" : "rw", NULL};
			json_object_array_add(mounts, mount_obj(m->target, "bind", path, opts));
		} else if (m->kind == CBOX_GOFER_MOUNT_BIND) {
			const char *opts[] = {"rbind", m->readonly ? "ro" : "rw", NULL};
			json_object_array_add(mounts,
			                      mount_obj(m->target, "bind", m->source, opts));
		} else {
			char size[48], mode[16];
			const char *opts[6] = {mode};
			size_t k = 1;
			snprintf(mode, sizeof(mode), "mode=%o",
			         m->mode_set ? (unsigned)m->mode : 01777u);
			if (m->size) {
				snprintf(size, sizeof(size), "size=%llu",
				         (unsigned long long)m->size);
				opts[k++] = size;
			}
			if (m->readonly)
				opts[k++] = "ro";
			if (m->mode_set) {
				opts[k++] = uid_opt;
				opts[k++] = gid_opt;
			}
			json_object_array_add(mounts, mount_obj(m->target, "tmpfs", "tmpfs", opts));
		}
		add_hides_after(gc, i, mounts, masked);
	}
	/* Directories the gofer makes in a writable mount (/tmp/home): a tmpfs of their own. */
	for (size_t i = 0; i < gc->n_mkdirs; i++) {
		const char *opts[] = {"mode=755", uid_opt, gid_opt, NULL};
		json_object_array_add(mounts, mount_obj(gc->mkdirs[i], "tmpfs", "tmpfs", opts));
	}
	return 0;
}

static json_object *resources(const struct cbox_run_opts *o)
{
	json_object *r = json_object_new_object();
	if (o->memory) {
		json_object *m = json_object_new_object();
		json_object_object_add(m, "limit", json_object_new_int64(o->memory));
		json_object_object_add(
		    m, "swap", json_object_new_int64(o->memory_swap ? o->memory_swap : o->memory));
		json_object_object_add(r, "memory", m);
	}
	if (o->cpu_quota) {
		json_object *c = json_object_new_object();
		json_object_object_add(c, "quota", json_object_new_int64(o->cpu_quota));
		json_object_object_add(c, "period", json_object_new_int64(100000));
		json_object_object_add(r, "cpu", c);
	}
	if (o->pids) {
		json_object *p = json_object_new_object();
		json_object_object_add(p, "limit", json_object_new_int64(o->pids));
		json_object_object_add(r, "pids", p);
	}
	return r;
}

/* Docker's default capability set, but CAP_SETFCAP: what a container of the ns tier gets by
 * default. Without it the program can leave no file with capabilities in a writable folder, a
 * privileged program for whoever runs it on the host later (cbox_run_ns_seccomp.c: the set-ID
 * bits). */
static json_object *caps(void)
{
	static const char *const names[] = {
	    "CAP_CHOWN",      "CAP_DAC_OVERRIDE",     "CAP_FSETID",     "CAP_FOWNER",
	    "CAP_MKNOD",      "CAP_NET_RAW",          "CAP_SETGID",     "CAP_SETUID",
	    "CAP_SETPCAP",    "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL",
	    "CAP_AUDIT_WRITE"};
	json_object *c = json_object_new_object();
	static const char *const sets[] = {"bounding", "effective", "permitted"};
	for (size_t s = 0; s < sizeof(sets) / sizeof(sets[0]); s++) {
		json_object *a = json_object_new_array();
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			json_object_array_add(a, jstr(names[i]));
		json_object_object_add(c, sets[s], a);
	}
	return c;
}

/* netns: the network namespace the container joins (--network slirp4netns), or NULL for a new
 * one holding loopback only. */
static int write_bundle(struct cbox_run_opts *o, char **argv, const char *dir, const char *netns)
{
	struct cbox_gofer_config gc;
	const char *cwd;
	if (cbox_run_tree(o, &gc, &cwd) < 0)
		return -1;
	char **envp = cbox_run_env(o);
	if (!envp)
		return -1;
	char rootfs[PATH_MAX + 16], cfgpath[PATH_MAX + 16];
	snprintf(rootfs, sizeof(rootfs), "%s/rootfs", dir);
	snprintf(cfgpath, sizeof(cfgpath), "%s/config.json", dir);
	bool host = strcmp(o->rootfs, "/") == 0;
	/* (chmod: a caller's umask of 077 made it 0700, and a -u user could not run anything) */
	if (host && (mkdir(rootfs, 0755) < 0 || chmod(rootfs, 0755) < 0))
		return -1;
	json_object *c = json_object_new_object(), *p = json_object_new_object();
	json_object *args = json_object_new_array(), *env = json_object_new_array();
	json_object_object_add(c, "ociVersion", jstr("1.2.0"));
	for (char **a = argv; *a; a++)
		json_object_array_add(args, jstr(*a));
	for (char **e = envp; *e; e++)
		json_object_array_add(env, jstr(*e));
	json_object *user = json_object_new_object();
	json_object_object_add(user, "uid", json_object_new_int64(o->uid));
	json_object_object_add(user, "gid", json_object_new_int64(o->gid));
	if (o->ngroups) {
		json_object *gids = json_object_new_array();
		for (size_t i = 0; i < o->ngroups; i++)
			json_object_array_add(gids, json_object_new_int64(o->groups[i]));
		json_object_object_add(user, "additionalGids", gids);
	}
	json_object_object_add(p, "user", user);
	json_object_object_add(p, "args", args);
	json_object_object_add(p, "env", env);
	json_object_object_add(p, "cwd", jstr(cwd));
	json_object_object_add(p, "capabilities", caps());
	json_object_object_add(p, "noNewPrivileges", json_object_new_boolean(1));
	json_object_object_add(c, "process", p);
	json_object *root = json_object_new_object();
	json_object_object_add(root, "path", jstr(host ? rootfs : o->rootfs));
	json_object_object_add(root, "readonly", json_object_new_boolean(1));
	json_object_object_add(c, "root", root);
	json_object *mounts = json_object_new_array(), *masked = json_object_new_array();
	int r = host ? host_root(rootfs, mounts) : 0;
	own_mounts(mounts, cbox_run_has_limits(o));
	if (r == 0 && tree_mounts(&gc, mounts, masked, dir, o->uid, o->gid) < 0)
		r = -1;
	json_object_object_add(c, "mounts", mounts);
	json_object *linux_ = json_object_new_object(), *ns = json_object_new_array();
	static const char *const types[] = {"pid", "network", "ipc", "uts", "mount", "cgroup"};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		json_object *t = json_object_new_object();
		json_object_object_add(t, "type", jstr(types[i]));
		if (netns && strcmp(types[i], "network") == 0)
			json_object_object_add(t, "path", jstr(netns));
		json_object_array_add(ns, t);
	}
	if (geteuid() != 0) {
		/* Run by a user: a user namespace of the container's own, its root the caller
		 * (`cbox spec --rootless`'s mapping). The files the caller owns are the root's
		 * inside, the working folder among them; the caller gains nothing.
		 * Security: the root of its own user namespace could unmount the tmpfs that hide
		 * the caller's secrets (~/.ssh, the rest of /home), but it holds Docker's
		 * capabilities only (caps(): no CAP_SYS_ADMIN), and the seccomp profile refuses
		 * umount and a nested user namespace without it (test_limits tries both). */
		json_object *t = json_object_new_object();
		json_object_object_add(t, "type", jstr("user"));
		json_object_array_add(ns, t);
		const char *keys[2] = {"uidMappings", "gidMappings"};
		unsigned ids[2] = {geteuid(), getegid()};
		for (int i = 0; i < 2; i++) {
			json_object *a = json_object_new_array(), *e = json_object_new_object();
			json_object_object_add(e, "containerID", json_object_new_int64(0));
			json_object_object_add(e, "hostID", json_object_new_int64(ids[i]));
			json_object_object_add(e, "size", json_object_new_int64(1));
			json_object_array_add(a, e);
			json_object_object_add(linux_, keys[i], a);
		}
	}
	json_object_object_add(linux_, "namespaces", ns);
	json_object_object_add(linux_, "maskedPaths", masked);
	json_object_object_add(linux_, "resources", resources(o));
	json_object_object_add(linux_, "seccomp", cbox_run_ns_seccomp());
	json_object_object_add(c, "linux", linux_);
	json_object_object_add(c, "hostname", jstr(CBOX_RUN_HOSTNAME));
	if (r == 0 && json_object_to_file_ext(cfgpath, c, JSON_C_TO_STRING_PRETTY) < 0)
		r = -EIO;
	json_object_put(c);
	return r < 0 ? -1 : 0; /* envp and the tree are o's (cbox_run_opts_free) */
}

/*
 * The template of the run's directory (bundle and state): on /dev/shm when that is a tmpfs
 * (nearly always), else /tmp. The container's tier makes a mount point for each entry of the
 * host's / in the bundle and cbox-run removes them at the end: ~100 us each way on the ext4
 * /tmp of the machine this was measured on, against ~7 on a tmpfs (3.5 ms of an 18 ms start).
 * mkdtemp makes it 0700 under a name no one else chose, on a sticky world-writable /dev/shm as
 * on /tmp; what it holds (config.json, with the environment) is only the caller's to read.
 */
static char *bundle_parent(char *dir, size_t n)
{
	struct statfs sf;
	bool shm = statfs("/dev/shm", &sf) == 0 && sf.f_type == TMPFS_MAGIC &&
	           access("/dev/shm", W_OK | X_OK) == 0;
	snprintf(dir, n, "%s/cbox-run-ns.XXXXXX", shm ? "/dev/shm" : "/tmp");
	return dir;
}

/*
 * --network slirp4netns and --allow-net: the container's network namespace, made by a process of
 * cbox-run's that holds it until the end (killed then, or with cbox-run: PR_SET_PDEATHSIG), so
 * that slirp4netns can bring its tap0 up, or the proxy listen in it, before the container starts;
 * the bundle joins it by path. The ns tier's bundle has no user namespace, so root makes it,
 * owned by the host's user namespace, as Docker's are. With --allow-net the holder brings the
 * namespace's loopback up and hands out the proxy's listener (*listener). Its pid, or -1 after a
 * message.
 */
static pid_t netns_holder(bool proxy, int *listener)
{
	int p[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1 ||
		    unshare(CLONE_NEWNET) < 0) {
			dprintf(2, "cbox-run: --network: a network namespace: %s\n",
			        strerror(errno));
			_exit(1);
		}
		int l = -1, e = 0;
		if (proxy) {
			e = -cbox_loopback_up();
			if (e == 0 && (l = cbox_run_proxy_listener()) < 0)
				e = -l;
		}
		if (e) {
			dprintf(2, "cbox-run: --allow-net: the proxy's port in the sandbox: %s\n",
			        strerror(e));
			_exit(1);
		}
		if (cbox_send_fds(p[1], "n", 1, &l, l >= 0 ? 1 : 0) < 0)
			_exit(1);
		if (l >= 0)
			close(l);
		close(p[1]);
		for (;;)
			pause();
	}
	close(p[1]);
	char c;
	int nfds = 0;
	*listener = -1;
	bool ok = pid > 0 && cbox_recv_fds(p[0], &c, 1, listener, 1, &nfds, 0) == 1 &&
	          nfds == (proxy ? 1 : 0);
	close(p[0]);
	if (!ok && pid > 0) {
		if (nfds == 1)
			close(*listener);
		*listener = -1;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return ok ? pid : -1;
}

/* Whether `cbox run` left its container recorded (it deletes it before it exits). */
static bool container_left(const char *state, const char *id)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/%s", state, id);
	return n > 0 && (size_t)n < sizeof(path) && access(path, F_OK) == 0;
}

/* `cbox kill --all ID SIG`: every process of the container (KILL: as the sentry tier's sandbox
 * is killed; STOP and CONT: ^Z and fg). */
static sigset_t ns_blocked; /* the signals cbox_run_ns's wait keeps blocked outside ppoll */

static void kill_all(const char *cbox, const char *state, const char *id, const char *sig)
{
	pid_t k = fork();
	if (k == 0) {
		sigprocmask(SIG_UNBLOCK, &ns_blocked, NULL); /* (a mask outlives execve) */
		execl(cbox, cbox, "--root", state, "kill", "--all", id, sig, (char *)NULL);
		_exit(1);
	}
	if (k > 0)
		waitpid(k, NULL, 0);
}

/*
 * Signals, as with the sentry tier (cbox_run.c): the first SIGINT, SIGTERM or SIGHUP goes to
 * `cbox run`, which passes it to the container's init; a second one, or a SIGQUIT, kills the
 * container. `cbox run` and the container get a process group of their own, so that a
 * terminal's ^C reaches cbox-run only, and once.
 */
static volatile sig_atomic_t ns_sig, ns_count, ns_tstp;

static void ns_on_signal(int sig)
{
	ns_sig = sig;
	ns_count++;
}

static void ns_on_tstp(int sig)
{
	(void)sig;
	ns_tstp = 1;
}

/*
 * ^Z: the terminal stops cbox-run's process group, which holds cbox-run alone (`cbox run` and
 * the container have their own). As with the sentry tier, cbox-run stops the container first,
 * every process of it (`cbox kill --all ID STOP`), then itself by SIGTSTP's default action; when
 * the shell continues it (fg, bg), it continues the container. Done from the main loop, not the
 * handler, since it runs `cbox`.
 */
static void stop_with_container(const char *cbox, const char *state, const char *id)
{
	kill_all(cbox, state, id, "STOP");
	cbox_run_stop_self(ns_on_tstp); /* until SIGCONT */
	kill_all(cbox, state, id, "CONT");
}

int cbox_run_ns(struct cbox_run_opts *o, char **argv)
{
	if (o->tty || o->overlay || o->strict || o->strace || o->init > 0 ||
	    strcmp(o->platform, "seccomp") != 0) {
		fprintf(stderr,
		        "cbox-run: --tier=ns does not take -t, --overlay, --strict, --strace, "
		        "--init or --platform yet (they are the sentry's)\n");
		return 125;
	}
	/* Run by a user, the container's user namespace maps one id, the caller's, to its root
	 * (write_bundle): no other user to become, no cgroup to make, and no network namespace
	 * for slirp4netns or the proxy that the container could join from its own. */
	if (geteuid() != 0) {
		const char *what = o->uid || o->gid || o->ngroups
		                       ? "-u and --group-add need cbox-run run as root (or the "
		                         "sentry tier)"
		                   : cbox_run_has_limits(o)
		                       ? "--memory, --cpus and --pids need cbox-run run as root"
		                   : o->net.slirp || o->net.n_allow
		                       ? "--network and --allow-net need cbox-run run as root (or "
		                         "the sentry tier, for --allow-net)"
		                       : NULL;
		if (what) {
			fprintf(
			    stderr,
			    "cbox-run: --tier=ns run by a user runs the program as the root of a "
			    "user namespace of its own (your ids): %s\n",
			    what);
			return 125;
		}
	}
	char cbox[PATH_MAX + 8];
	if (cbox_run_sibling("cbox", cbox, sizeof(cbox)) < 0) {
		fprintf(stderr, "cbox-run: --tier=ns needs cbox beside cbox-run (%s)\n", cbox);
		return 125;
	}
	char dir[32];
	if (!mkdtemp(bundle_parent(dir, sizeof(dir)))) {
		fprintf(stderr, "cbox-run: a bundle directory: %s\n", strerror(errno));
		return 125;
	}
	char bundle[PATH_MAX], state[PATH_MAX], id[64];
	snprintf(bundle, sizeof(bundle), "%s/bundle", dir);
	snprintf(state, sizeof(state), "%s/state", dir);
	snprintf(id, sizeof(id), "cbox-run-%d", (int)getpid());
	int status = 125;
	struct cbox_run_slirp slirp = {.pid = -1, .exit_fd = -1, .ready_fd = -1, .log_fd = -1};
	pid_t holder = -1;
	char netns[64] = "";
	if (o->net.slirp || o->net.n_allow) {
		int listener;
		if ((holder = netns_holder(o->net.n_allow > 0, &listener)) < 0)
			goto out;
		snprintf(netns, sizeof(netns), "/proc/%d/ns/net", (int)holder);
		if (o->net.slirp && (cbox_run_net_start(&o->net, holder, &slirp) < 0 ||
		                     cbox_run_net_ready(&o->net, &slirp) < 0))
			goto out;
		if (listener >= 0) {
			int feed = cbox_run_proxy_start(&o->net, o->level >= CBOX_LOG_INFO, NULL);
			int r = feed < 0 ? -1 : cbox_send_fds(feed, "l", 1, &listener, 1);
			close(listener);
			if (feed >= 0)
				close(feed);
			if (r < 0)
				goto out;
		}
	}
	if (mkdir(bundle, 0700) < 0 || write_bundle(o, argv, bundle, netns[0] ? netns : NULL) < 0) {
		fprintf(stderr, "cbox-run: writing the ns tier's bundle failed\n");
		goto out;
	}
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		/* No limit, no cgroup, as the sentry tier under cbox-run: the container's pid
		 * namespace still ends every process of it with its init (tier.h, no_cgroup). */
		execl(cbox, cbox, "--root", state, "--tier", "ns", "--cgroup-manager",
		      cbox_run_has_limits(o) ? "cgroupfs" : "disabled", "run", "--bundle", bundle,
		      id, (char *)NULL);
		_exit(125);
	}
	if (pid < 0)
		goto out;
	setpgid(pid, pid); /* (also done by the child: whichever runs first) */
	static const int handled[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	struct sigaction sa = {.sa_handler = ns_on_signal};
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++)
		sigaction(handled[i], &sa, NULL);
	signal(SIGTSTP, ns_on_tstp);
	/*
	 * The wait: `cbox run`'s exit makes its pidfd readable, and a signal ends the ppoll (the
	 * handled ones are blocked but there, so none arrives between a check and the wait). A
	 * 20 ms sleep between waitpid()s made every run 20-40 ms longer: `cbox-run --tier=ns --
	 * true` took 50.7 ms against 17.0 for the sentry tier (medians of 40, interleaved). Without
	 * pidfd_open (Linux < 5.3) the wait is a ppoll of at most 20 ms, as before.
	 */
	sigset_t unblocked;
	sigemptyset(&ns_blocked);
	for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++)
		sigaddset(&ns_blocked, handled[i]);
	sigaddset(&ns_blocked, SIGTSTP);
	sigprocmask(SIG_BLOCK, &ns_blocked, &unblocked);
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	int forwarded = 0, forced = 0;
	/* --timeout: the whole container is killed (cbox kill --all), as the sentry tier's
	 * sandbox is. */
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	bool timed_out = false;
	int st = 0;
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid || (r < 0 && errno != EINTR))
			break;
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long long ms =
		    (now.tv_sec - t0.tv_sec) * 1000LL + (now.tv_nsec - t0.tv_nsec) / 1000000;
		if (o->timeout_ms && !timed_out && ms >= o->timeout_ms) {
			timed_out = true;
			kill_all(cbox, state, id, "KILL");
		}
		if (ns_tstp) {
			ns_tstp = 0;
			stop_with_container(cbox, state, id);
			sigprocmask(SIG_BLOCK, &ns_blocked,
			            NULL); /* (SIGTSTP's, unblocked to stop) */
		}
		if (ns_count && !forwarded && !forced) {
			if (ns_count == 1 && ns_sig != SIGQUIT && kill(pid, ns_sig) == 0) {
				forwarded = ns_sig;
			} else {
				forced = ns_sig;
				kill_all(cbox, state, id, "KILL");
			}
		} else if (ns_count >= 2 && !forced) {
			forced = ns_sig;
			kill_all(cbox, state, id, "KILL");
		}
		long long wait_ms = pidfd < 0 ? 20 : -1;
		if (o->timeout_ms && !timed_out) {
			long long left = (long long)o->timeout_ms - ms;
			wait_ms = wait_ms < 0 || left < wait_ms ? (left > 0 ? left : 0) : wait_ms;
		}
		struct timespec ts = {.tv_sec = wait_ms / 1000,
		                      .tv_nsec = (wait_ms % 1000) * 1000000};
		struct pollfd pfd = {.fd = pidfd, .events = POLLIN};
		ppoll(pidfd < 0 ? NULL : &pfd, pidfd < 0 ? 0 : 1, wait_ms < 0 ? NULL : &ts,
		      &unblocked);
	}
	if (pidfd >= 0)
		close(pidfd);
	sigprocmask(SIG_SETMASK, &unblocked, NULL);
	status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (timed_out) {
		cbox_error("killed: the timeout of %u ms was reached", o->timeout_ms);
		status = 137;
	} else if (forced) {
		fprintf(stderr, "cbox-run: the container was killed on %s%s\n",
		        forwarded ? "a second " : "", strsignal(forced));
		status = 128 + forced;
	} else if ((WIFSIGNALED(st) && WTERMSIG(st) != forwarded) || container_left(state, id)) {
		/* `cbox run` passes the program's end on as an exit status (128+N for a signal)
		 * and deletes the container before it exits: dying of a signal nobody sent it (a
		 * crash, the OOM killer), or exiting with the container still recorded, is the
		 * runtime's own failure, and the program may still run. It was passed on as the
		 * program's status, and the container outlived cbox-run. */
		if (WIFSIGNALED(st))
			cbox_error("the ns tier's runtime (%s) died of signal %d (%s)", cbox,
			           WTERMSIG(st), strsignal(WTERMSIG(st)));
		else
			cbox_error(
			    "the ns tier's runtime (%s) ended (status %d) before its container",
			    cbox, WEXITSTATUS(st));
		kill_all(cbox, state, id, "KILL");
		status = 125;
	}
out:
	cbox_run_net_stop(&slirp);
	if (holder > 0) {
		kill(holder, SIGKILL);
		waitpid(holder, NULL, 0);
	}
	/* Only the bundle's own files (symlinks, empty directories): never across a mount. */
	cbox_rm_tree(dir);
	return status;
}
