/*
 * config.json -> the gofer's tree and the sentry's settings. The sentry serves /proc, /sys and
 * /dev itself, so the mounts and paths the config puts there are its business, not the gofer's:
 * they are skipped with a debug line. What the guest would otherwise miss or get wrong (a
 * mount type the gofer cannot build, a user the sentry cannot show) is refused here, before
 * anything runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/cred.h"
#include "cbox/log.h"
#include "cbox/path.h"
#include "internal.h"

static const char *keep_string(struct sentry_plan *p, char *s)
{
	if (!s)
		return NULL;
	p->strings[p->n_strings++] = s;
	return s;
}

static bool has_option(const struct cbox_oci_mount *m, const char *opt)
{
	for (size_t i = 0; i < m->n_options; i++)
		if (strcmp(m->options[i], opt) == 0)
			return true;
	return false;
}

/* tmpfs's size=: bytes with an optional k/m/g suffix; a percentage keeps tmpfs's default
 * (*size unchanged). 0, or -1 for a value that is not one. */
static int tmpfs_size(const struct cbox_oci_mount *m, const char *v, uint64_t *size)
{
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	unsigned shift = 0;
	if (*end && strchr("kK", *end))
		shift = 10;
	else if (*end && strchr("mM", *end))
		shift = 20;
	else if (*end && strchr("gG", *end))
		shift = 30;
	if (*end == '%' && end[1] == '\0') {
		cbox_debug("mount %s: size=%s: tmpfs's default size used", m->destination, v);
		return 0;
	}
	if (errno || end == v || (shift && end[1]) || (!shift && *end) || n > (UINT64_MAX >> shift))
		return -1;
	*size = (uint64_t)n << shift;
	return 0;
}

/*
 * A tmpfs's options the gofer's tmpfs takes: size= (above) and mode=OCTAL (Docker's --tmpfs
 * /x:mode=755), its root's permission bits, at most 07777; the last of each wins, the others
 * (nosuid, nodev, noexec: the gofer's tmpfs has the first two always) are not the gofer's.
 */
static int tmpfs_options(const struct cbox_oci_mount *m, struct cbox_gofer_mount *g,
                         struct cbox_err **err)
{
	g->size = 0;
	for (size_t i = 0; i < m->n_options; i++) {
		const char *v = m->options[i];
		int r = 0;
		if (strncmp(v, "size=", 5) == 0) {
			r = tmpfs_size(m, v + 5, &g->size);
		} else if (strncmp(v, "mode=", 5) == 0) {
			char *end;
			errno = 0;
			unsigned long n = strtoul(v + 5, &end, 8);
			r = errno || end == v + 5 || *end || v[5] == '-' || n > 07777 ? -1 : 0;
			g->mode_set = r == 0;
			g->mode = (uint32_t)n;
		}
		if (r < 0)
			return cbox_err_set(err, EINVAL,
			                    "config.json: mounts: %s: bad option '%s' (expected "
			                    "size=BYTES[k|m|g] or mode=OCTAL, at most 7777)",
			                    m->destination, v);
	}
	return 0;
}

static bool is_pseudo(const char *type)
{
	static const char *const types[] = {"proc",   "sysfs",   "devpts",  "mqueue",
	                                    "cgroup", "cgroup2", "devtmpfs"};
	for (size_t i = 0; type && i < CBOX_ARRAY_SIZE(types); i++)
		if (strcmp(type, types[i]) == 0)
			return true;
	return false;
}

/* The gofer's /dev/shm lives on a tmpfs /dev of its own (the host's /dev is never served). */
static int add_dev_for_shm(const struct cbox_tier_container *c, struct sentry_plan *p)
{
	char dev[4096];
	struct stat st;
	snprintf(dev, sizeof(dev), "%s/dev", c->rootfs);
	if (stat(dev, &st) < 0 || !S_ISDIR(st.st_mode)) {
		cbox_warn("mount /dev/shm skipped: the rootfs has no /dev directory");
		return 0;
	}
	p->mounts[p->n_mounts++] =
	    (struct cbox_gofer_mount){.kind = CBOX_GOFER_MOUNT_TMPFS, .target = "/dev"};
	p->sentry.dev_shm = "/dev/shm";
	return 1;
}

/*
 * Make a mount's missing target in the rootfs, as runc does (the gofer never creates anything in
 * the rootfs): containerd's default spec mounts a tmpfs at /run, which images need not have.
 * Each component is opened beneath the previous one without following a symlink, so nothing is
 * ever made outside the rootfs; a symlink or any failure leaves the target to the gofer, whose
 * error then names it. Targets inside an earlier mount are the gofer's to make.
 */
static void make_target(const struct cbox_tier_container *c, const struct sentry_plan *p,
                        const struct cbox_gofer_mount *g)
{
	for (size_t i = 0; i < p->n_mounts; i++)
		if (cbox_path_under(g->target, p->mounts[i].target))
			return;
	struct stat st;
	bool dir =
	    g->kind == CBOX_GOFER_MOUNT_TMPFS || stat(g->source, &st) < 0 || S_ISDIR(st.st_mode);
	int fd = open(c->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	char path[4096];
	snprintf(path, sizeof(path), "%s", g->target);
	for (char *name = strtok(path, "/"); name && fd >= 0;) {
		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			break; /* (never: add_mount cleaned the target) */
		char *next = strtok(NULL, "/");
		bool last = !next;
		if (last && !dir) {
			/* Only made, never opened when there: O_EXCL. The image's own file at a
			 * target may be a FIFO (an open for writing waited for a reader forever:
			 * Docker binds /etc/hosts, /etc/hostname and /etc/resolv.conf in every
			 * container) or a device, which must never be opened on the host. */
			int f = openat(fd, name,
			               O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
			if (f >= 0)
				close(f);
			break;
		}
		if (mkdirat(fd, name, 0755) == 0)
			cbox_debug("mount %s: made %s in the rootfs", g->target, name);
		int sub = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = sub;
		name = next;
	}
	if (fd >= 0)
		close(fd);
}

/*
 * Bind sources that hand the sandbox the host: a container engine's API socket (whoever can
 * talk to it starts a privileged container, or mounts the host's root) and /dev/kvm (the host
 * kernel's hypervisor interface, which the threat model keeps the guest away from). A directory
 * that holds one of them counts too (-v /var/run:/x), and so does an engine's socket anywhere
 * (rootless Docker's is under /run/user). Returns what the source gives away, or NULL.
 */
static const char *dangerous_source(const char *src)
{
	static const char *const known[] = {"/run/docker.sock", "/run/containerd/containerd.sock",
	                                    "/run/crio/crio.sock", "/run/podman/podman.sock",
	                                    "/dev/kvm"};
	static const char *const sockets[] = {"docker.sock", "containerd.sock", "crio.sock",
	                                      "podman.sock"};
	char real[PATH_MAX], k[PATH_MAX];
	struct stat st;
	if (!realpath(src, real) || stat(real, &st) < 0)
		return NULL; /* a missing source fails later, with the gofer's message */
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(known); i++) {
		if (!realpath(known[i], k))
			continue; /* not on this host */
		size_t n = strlen(real);
		if (!strcmp(real, k) || !strcmp(real, "/") || (!strncmp(k, real, n) && k[n] == '/'))
			return i == CBOX_ARRAY_SIZE(known) - 1 ? "/dev/kvm" : known[i];
	}
	const char *base = strrchr(real, '/') + 1;
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(sockets); i++) {
		char in[PATH_MAX + 32];
		struct stat s2;
		if (S_ISSOCK(st.st_mode) && !strcmp(base, sockets[i]))
			return sockets[i];
		snprintf(in, sizeof(in), "%s/%s", real, sockets[i]);
		if (S_ISDIR(st.st_mode) && stat(in, &s2) == 0 && S_ISSOCK(s2.st_mode))
			return sockets[i];
	}
	struct stat kvm;
	if (S_ISCHR(st.st_mode) && stat("/dev/kvm", &kvm) == 0 && st.st_rdev == kvm.st_rdev)
		return "/dev/kvm";
	return NULL;
}

static int add_mount(const struct cbox_tier_container *c, struct sentry_plan *p,
                     const struct cbox_oci_mount *m, struct cbox_err **err)
{
	const char *dst = m->destination;
	bool bind = (m->type && strcmp(m->type, "bind") == 0) || has_option(m, "bind") ||
	            has_option(m, "rbind");
	bool tmpfs = !bind && m->type && strcmp(m->type, "tmpfs") == 0;
	if (dst[0] != '/')
		return cbox_err_set(err, EINVAL,
		                    "config.json: mounts: destination '%s' is not absolute", dst);
	/* Security: make_target below makes the destination in the rootfs on the host, as root, one
	 * component at a time: a ".." there ("/../../etc/x") walked out of the rootfs and made
	 * directories and files anywhere on the host before the gofer refused the target. The
	 * destination is cleaned first, so ".." stops at the rootfs's "/" as in runc (and the ns
	 * tier, which resolves it RESOLVE_IN_ROOT). Tested in test_oci_sentry.sh. */
	if (!(dst = keep_string(p, cbox_path_clean(dst))))
		return cbox_err_set(err, ENOMEM, "mount %s", m->destination);
	if (!bind && !tmpfs && is_pseudo(m->type)) {
		cbox_debug("mount %s (%s) skipped: the sentry serves its own", dst, m->type);
		return 0;
	}
	if (!bind && !tmpfs)
		return cbox_err_set(err, ENOTSUP,
		                    "config.json: mounts: %s: type '%s' is not supported by the "
		                    "sentry tier (bind and tmpfs are; use the ns tier)",
		                    dst, m->type ? m->type : "(none)");
	if (cbox_sentry_serves_path(dst)) {
		cbox_debug("mount %s skipped: the sentry serves /proc, /sys and /dev", dst);
		return 0;
	}
	if (strcmp(dst, "/dev/shm") == 0 && add_dev_for_shm(c, p) == 0)
		return 0;
	struct cbox_gofer_mount g = {.target = dst, .readonly = has_option(m, "ro")};
	if (tmpfs) {
		g.kind = CBOX_GOFER_MOUNT_TMPFS;
		if (tmpfs_options(m, &g, err) < 0)
			return -1;
	} else {
		if (!m->source || !m->source[0])
			return cbox_err_set(err, EINVAL,
			                    "config.json: mounts: %s: a bind mount needs a source",
			                    dst);
		g.kind = CBOX_GOFER_MOUNT_BIND;
		/* A relative source is relative to the bundle, as runc reads it. */
		char *src = NULL;
		if (m->source[0] == '/')
			src = strdup(m->source);
		else if (asprintf(&src, "%s/%s", c->bundle, m->source) < 0)
			src = NULL;
		if (!(g.source = keep_string(p, src)))
			return cbox_err_set(err, ENOMEM, "mount %s", dst);
		const char *gives = c->allow_dangerous_mounts ? NULL : dangerous_source(g.source);
		if (gives)
			return cbox_err_set(
			    err, EPERM,
			    "config.json: mounts: %s: the source %s gives the sandbox "
			    "%s, which hands it the host (a container engine's socket "
			    "starts privileged containers; /dev/kvm is the host's "
			    "hypervisor); refused unless cbox runs with "
			    "--allow-dangerous-mounts",
			    dst, m->source, gives);
	}
	make_target(c, p, &g);
	p->mounts[p->n_mounts++] = g;
	return 0;
}

/*
 * The host path that path names inside the rootfs, resolved as runc resolves it (securejoin):
 * symlinks are followed as if the rootfs were /, so an absolute link or a ".." stops at the
 * rootfs's top and never leaves it; magic links (/proc/self/...) are refused. Returns a
 * malloc'ed host path beneath the rootfs, whose part from *inside on is the path inside the
 * rootfs, or NULL with errno set.
 */
static char *resolve_in_rootfs(const char *rootfs, const char *path, size_t *inside)
{
	char top[PATH_MAX], link[64], host[PATH_MAX];
	if (!realpath(rootfs, top))
		return NULL;
	CBOX_AUTOCLOSE int root = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return NULL;
	CBOX_AUTOCLOSE int fd = cbox_open_in_root(root, path, O_PATH);
	if (fd < 0)
		return NULL;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, host, sizeof(host) - 1);
	if (n < 0)
		return NULL;
	host[n] = '\0';
	/* (RESOLVE_IN_ROOT keeps the walk beneath the rootfs; a name the kernel cannot print
	 * as a path of ours, such as an unlinked directory's, is refused all the same) */
	size_t len = strlen(top);
	if (strcmp(top, "/") == 0)
		len = 0;
	if (strncmp(host, top, len) != 0 || (host[len] != '/' && host[len] != '\0')) {
		errno = EXDEV;
		return NULL;
	}
	*inside = len;
	return strdup(host);
}

/*
 * A read-only path becomes a read-only bind of the rootfs's own file over itself, where the
 * path leads inside the rootfs: a symlink in it is followed within the rootfs (runc's
 * readonlyPaths do the same), so an image's /etc/x -> /usr/x makes /usr/x read-only. The
 * gofer resolves the source again on the host, following symlinks; the resolved path has
 * none, and a symlink in the image can therefore never name a host file outside the rootfs.
 */
static int add_readonly_path(const struct cbox_tier_container *c, struct sentry_plan *p,
                             const char *path)
{
	if (path[0] != '/' || cbox_sentry_serves_path(path)) {
		cbox_debug("readonlyPaths: %s skipped (the sentry's own, or not absolute)", path);
		return 0;
	}
	size_t inside = 0;
	char *src = resolve_in_rootfs(c->rootfs, path, &inside);
	if (!src) {
		/* A path the rootfs does not have is skipped as runc skips it; one that stays
		 * writable although the config asked otherwise is said. */
		if (errno == ENOENT || errno == ENOTDIR)
			cbox_debug("readonlyPaths: %s skipped: %s", path, strerror(errno));
		else if (errno == ENOMEM)
			return -1;
		else
			cbox_warn("readonlyPaths: %s stays writable: %s", path, strerror(errno));
		return 0;
	}
	if (!keep_string(p, src))
		return -1;
	if (!src[inside]) {
		/* (a link to /, or "/."): the whole root, as runc remounts it */
		p->root_readonly = true;
		return 0;
	}
	const char *target = src + inside;
	if (cbox_sentry_serves_path(target)) {
		cbox_debug("readonlyPaths: %s skipped: it leads to %s, the sentry's own", path,
		           target);
		return 0;
	}
	p->mounts[p->n_mounts++] = (struct cbox_gofer_mount){
	    .kind = CBOX_GOFER_MOUNT_BIND, .source = src, .target = target, .readonly = true};
	return 0;
}

static int add_tree(const struct cbox_tier_container *c, struct sentry_plan *p,
                    struct cbox_err **err)
{
	const struct cbox_oci_config *cfg = c->config;
	const struct cbox_oci_linux *l = &cfg->linux_;
	for (size_t i = 0; i < l->n_masked_paths; i++) {
		if (cbox_sentry_serves_path(l->masked_paths[i]))
			cbox_debug("maskedPaths: %s skipped: the sentry serves it",
			           l->masked_paths[i]);
		else
			p->hide[p->n_hide++] = l->masked_paths[i];
	}
	for (size_t i = 0; i < cfg->n_mounts; i++)
		if (add_mount(c, p, &cfg->mounts[i], err) < 0)
			return -1;
	for (size_t i = 0; i < l->n_readonly_paths; i++)
		if (add_readonly_path(c, p, l->readonly_paths[i]) < 0)
			return cbox_err_set(err, ENOMEM, "readonlyPaths");
	p->root_readonly |= cfg->root_readonly;
	bool writable = !p->root_readonly;
	for (size_t i = 0; i < p->n_mounts; i++)
		writable |= !p->mounts[i].readonly;
	p->gofer = (struct cbox_gofer_config){.rootfs = c->rootfs,
	                                      .readonly = p->root_readonly,
	                                      .hide = p->hide,
	                                      .n_hide = p->n_hide,
	                                      .mounts = p->mounts,
	                                      .n_mounts = p->n_mounts};
	p->sentry.tree_writable = writable;
	return 0;
}

static int read_annotations(const struct cbox_oci_config *cfg, struct sentry_plan *p,
                            struct cbox_err **err)
{
	const char *platform = cbox_oci_config_annotation(cfg, "dev.cbox.platform");
	const char *strict = cbox_oci_config_annotation(cfg, "dev.cbox.strict");
	p->sentry.platform = cbox_platform_find(platform ? platform : "seccomp");
	if (!p->sentry.platform)
		return cbox_err_set(err, EINVAL,
		                    "config.json: annotations: dev.cbox.platform: unknown platform "
		                    "'%s' (use seccomp or ptrace)",
		                    platform);
	if (strict && strcmp(strict, "true") != 0 && strcmp(strict, "false") != 0)
		return cbox_err_set(err, EINVAL,
		                    "config.json: annotations: dev.cbox.strict: expected 'true' or "
		                    "'false', not '%s'",
		                    strict);
	p->sentry.strict = strict && strcmp(strict, "true") == 0;
	return 0;
}

static char *empty_env[] = {NULL};

/* The process, the namespaces and what the sentry does not apply (logged, so a user who looks
 * can see it). */
static int read_process(const struct cbox_oci_config *cfg, struct sentry_plan *p,
                        struct cbox_err **err)
{
	const struct cbox_oci_process *proc = &cfg->process;
	const struct cbox_oci_linux *l = &cfg->linux_;
	/* Run as root, the runtime serves the guest's files with their host ids (all_ids, as runc
	 * without a user namespace), and the sentry keeps the guest's ids itself: any user of the
	 * config runs, and its files are its own. A runtime run by another user has one host id to
	 * give, so the guest can only be 0:0 (another user would silently get root's view). */
	p->sentry.all_ids = geteuid() == 0;
	if (!p->sentry.all_ids &&
	    (proc->user.uid != 0 || proc->user.gid != 0 || proc->user.n_additional_gids))
		return cbox_err_set(
		    err, ENOTSUP,
		    "config.json: process.user: uid %u gid %u: a sentry sandbox whose runtime is "
		    "not "
		    "run as root has one id to give: run the runtime as root, drop --user, or use "
		    "the ns tier",
		    proc->user.uid, proc->user.gid);
	/* (uint32_t)-1 is no id in Linux (set*id's "unchanged"), and the kernel takes at most
	 * NGROUPS_MAX supplementary groups: runc fails such a config at setgroups/setuid. */
	bool bad = proc->user.uid == (uint32_t)-1 || proc->user.gid == (uint32_t)-1;
	for (size_t i = 0; i < proc->user.n_additional_gids; i++)
		bad |= proc->user.additional_gids[i] == (uint32_t)-1;
	if (bad || proc->user.n_additional_gids > CBOX_NGROUPS_MAX)
		return cbox_err_set(
		    err, EINVAL,
		    "config.json: process.user: 4294967295 is not an id, and at most "
		    "%d additionalGids are allowed",
		    CBOX_NGROUPS_MAX);
	p->sentry.uid = proc->user.uid;
	p->sentry.gid = proc->user.gid;
	p->sentry.groups = proc->user.additional_gids;
	p->sentry.ngroups = proc->user.n_additional_gids;
	/* uid 0's capabilities, of those the sentry emulates (cbox/cred.h): the config's bounding
	 * set, which an exec gives root, as runc's final exec of the entrypoint does. No
	 * capabilities in the config: none. */
	p->sentry.cap_bset = p->sentry.all_ids && proc->has_caps ? proc->caps.bounding : 0;
	p->sentry.has_umask = proc->user.has_umask;
	p->sentry.no_new_privs = proc->no_new_privileges;
	p->sentry.umask = (mode_t)proc->user.umask;
	p->sentry.argv = proc->args;
	/* The environment is the config's, as given: nothing of the runtime's leaks in. */
	p->sentry.envp = proc->env ? proc->env : empty_env;
	p->sentry.cwd = proc->cwd ? proc->cwd : "/";
	p->sentry.hostname = cfg->hostname && cfg->hostname[0] ? cfg->hostname : NULL;
	p->rlimits = proc->rlimits;
	p->n_rlimits = proc->n_rlimits;
	if (proc->has_caps || l->seccomp)
		cbox_debug(
		    "process.capabilities beyond CAP_CHOWN, CAP_DAC_OVERRIDE, "
		    "CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_FSETID, CAP_SETGID and CAP_SETUID, "
		    "and linux.seccomp, ignored: the sentry emulates those and has its own "
		    "filter");
	for (size_t i = 0; i < l->n_namespaces; i++) {
		const struct cbox_oci_namespace *ns = &l->namespaces[i];
		if (ns->type == CLONE_NEWNET && ns->path)
			p->netns_path = ns->path;
		else if (ns->path)
			cbox_debug("linux.namespaces: %s ignored: the sentry makes its own",
			           ns->path);
	}
	return 0;
}

static bool has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

bool sentry_sysctl_is_ipc(const char *key)
{
	return !strcmp(key, "kernel.msgmax") || !strcmp(key, "kernel.msgmnb") ||
	       !strcmp(key, "kernel.msgmni") || !strcmp(key, "kernel.sem") ||
	       !strcmp(key, "kernel.shmall") || !strcmp(key, "kernel.shmmax") ||
	       !strcmp(key, "kernel.shmmni") || !strcmp(key, "kernel.shm_rmid_forced") ||
	       has_prefix(key, "fs.mqueue.");
}

/*
 * linux.sysctl: only keys of namespaces the sandbox owns or was given (its network namespace:
 * net.*, and its IPC namespace), as runc allows. Any other key would set the host's own value for
 * every process on it, so it is refused. Docker passes net.ipv4.ip_unprivileged_port_start=0
 * this way, which lets a server in the container bind port 80.
 */
static int read_sysctl(const struct cbox_oci_linux *l, struct sentry_plan *p, struct cbox_err **err)
{
	for (size_t i = 0; i < l->n_sysctl; i++) {
		const char *k = l->sysctl[i].key;
		if (!k[0] || strstr(k, "..") || strchr(k, '/') || k[0] == '.')
			return cbox_err_set(err, EINVAL, "config.json: linux.sysctl: bad key '%s'",
			                    k);
		if (!has_prefix(k, "net.") && !sentry_sysctl_is_ipc(k))
			return cbox_err_set(
			    err, EINVAL,
			    "config.json: linux.sysctl: %s is not in a namespace of the "
			    "sandbox's (only net.* and the IPC namespace's keys are)",
			    k);
	}
	p->sysctl = l->sysctl;
	p->n_sysctl = l->n_sysctl;
	return 0;
}

int sentry_plan_build(const struct cbox_tier_container *c, struct sentry_plan *p,
                      struct cbox_err **err)
{
	const struct cbox_oci_config *cfg = c->config;
	const struct cbox_oci_linux *l = &cfg->linux_;
	*p = (struct sentry_plan){0};
	/* At most: every config mount, a /dev for /dev/shm, every read-only path; two strings a
	 * mount (its cleaned target, a bind's source). */
	size_t max = cfg->n_mounts + 1 + l->n_readonly_paths;
	p->mounts = calloc(max, sizeof(*p->mounts));
	p->strings = calloc(2 * max, sizeof(*p->strings));
	p->hide = calloc(l->n_masked_paths + 1, sizeof(*p->hide));
	if (!p->mounts || !p->strings || !p->hide) {
		sentry_plan_free(p);
		return cbox_err_set(err, ENOMEM, "sentry tier: plan");
	}
	p->sentry.owner_uid = geteuid();
	p->sentry.owner_gid = getegid();
	if (read_annotations(cfg, p, err) < 0 || read_process(cfg, p, err) < 0 ||
	    read_sysctl(l, p, err) < 0 || add_tree(c, p, err) < 0) {
		sentry_plan_free(p);
		return -1;
	}
	return 0;
}

void sentry_plan_free(struct sentry_plan *p)
{
	for (size_t i = 0; i < p->n_strings; i++)
		free(p->strings[i]);
	free(p->strings);
	free(p->mounts);
	free(p->hide);
	*p = (struct sentry_plan){0};
}
