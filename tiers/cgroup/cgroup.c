/*
 * A sandbox's cgroup on the host: create it in each hierarchy, move processes in, freeze, kill,
 * remove; and its record in the OCI state directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "internal.h"

/*
 * Waiting for the kernel to finish something (exiting tasks leaving a cgroup, a freezer settling):
 * v1 tells no one, so the state is read again after 0.1 ms, then twice as long each time up to
 * 10 ms a wait, until limit_ms have passed. A task's exit takes well under a millisecond: the
 * fixed 10 ms wait this replaced was the most of a teardown (10 ms of the 22 that `cbox-run
 * --pids 100 -- true` took on the machine it was measured on).
 */
struct waiting {
	struct timespec start;
	long next_us, limit_ms;
};

static void wait_begin(struct waiting *w, long limit_ms)
{
	clock_gettime(CLOCK_MONOTONIC, &w->start);
	w->next_us = 100;
	w->limit_ms = limit_ms;
}

/* Sleeps before the next try; false (without sleeping) once the time is up. */
static bool wait_more(struct waiting *w)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long ms =
	    (now.tv_sec - w->start.tv_sec) * 1000 + (now.tv_nsec - w->start.tv_nsec) / 1000000;
	if (ms >= w->limit_ms)
		return false;
	struct timespec ts = {.tv_sec = 0, .tv_nsec = w->next_us * 1000};
	nanosleep(&ts, NULL);
	w->next_us = w->next_us * 2 > 10000 ? 10000 : w->next_us * 2;
	return true;
}

static int read_text(const char *path, char *buf, size_t n, struct cbox_err **err)
{
	CBOX_AUTOCLOSE int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cbox_err_set(err, errno, "open %s", path);
	size_t used = 0;
	for (ssize_t r; used + 1 < n; used += (size_t)r)
		if ((r = read(fd, buf + used, n - 1 - used)) <= 0) {
			if (r < 0 && errno == EINTR)
				r = 0;
			else if (r < 0)
				return cbox_err_set(err, errno, "read %s", path);
			else
				break;
		}
	buf[used] = '\0';
	return 0;
}

int cbox_cgroup_layout_detect(struct cbox_cgroup_layout **out, struct cbox_err **err)
{
	CBOX_AUTOFREE char *mi = malloc(1 << 20);
	char self[8192];
	if (!mi)
		return cbox_err_set(err, ENOMEM, "mountinfo");
	if (read_text("/proc/self/mountinfo", mi, 1 << 20, err) < 0 ||
	    read_text("/proc/self/cgroup", self, sizeof(self), err) < 0)
		return -1;
	return cbox_cgroup_layout_parse(mi, self, out, err);
}

void cbox_cgroup_free(struct cbox_cgroup *cg)
{
	if (!cg)
		return;
	for (int c = 0; c < CBOX_CGROUP_NCTL; c++)
		free(cg->d[c].path);
	free(cg);
}

const char *cbox_cgroup_dir(const struct cbox_cgroup *cg, enum cbox_cgroup_ctl c)
{
	return c < CBOX_CGROUP_NCTL ? cg->d[c].path : NULL;
}

/* mkdir base/rel one level at a time; d->created counts the levels made here. */
static int mkdir_under(const char *base, const char *rel, struct cg_dir *d, struct cbox_err **err)
{
	char path[PATH_MAX];
	int len = snprintf(path, sizeof(path), "%s%s%s", base,
	                   base[strlen(base) - 1] == '/' ? "" : "/", rel[0] == '/' ? rel + 1 : rel);
	if (len < 0 || (size_t)len >= sizeof(path))
		return cbox_err_set(err, ENAMETOOLONG, "cgroup %s/%s", base, rel);
	if (!(d->path = strdup(path)))
		return cbox_err_set(err, ENOMEM, "cgroup");
	for (char *p = path + strlen(base) + 1; p;) {
		char *slash = strchr(p, '/');
		if (slash)
			*slash = '\0';
		if (mkdir(path, 0755) == 0)
			d->created++;
		else if (errno != EEXIST)
			return cbox_err_set(err, errno, "create cgroup %s", path);
		if (slash)
			*slash = '/';
		p = slash ? slash + 1 : NULL;
	}
	return 0;
}

/* rmdir the leaf, retrying while the kernel still holds exiting tasks, then the empty parents
 * this handle made. */
static int remove_dir(struct cg_dir *d, struct cbox_err **err)
{
	if (!d->path)
		return 0;
	struct waiting w;
	wait_begin(&w, 1000);
	int r;
	while ((r = rmdir(d->path)) < 0 && errno == EBUSY && wait_more(&w))
		;
	if (r < 0 && errno == ENOENT)
		r = 0;
	if (r < 0)
		return cbox_err_set(err, errno, "remove cgroup %s", d->path);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s", d->path);
	for (int i = 1; i < d->created; i++) {
		char *slash = strrchr(path, '/');
		if (!slash || slash == path)
			break;
		*slash = '\0';
		/* Another sandbox may share the parent (cbox/): leave it when it is in use. */
		if (rmdir(path) < 0)
			break;
	}
	d->created = 0;
	return 0;
}

/* True when the space-separated list holds the word. */
static bool has_word(const char *list, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = list; (p = strstr(p, w)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
			return true;
	return false;
}

/* On v2, a controller works in a cgroup only when every ancestor lists it in
 * cgroup.subtree_control. */
static int enable_controllers(const char *mount, const char *leaf, struct cbox_err **err)
{
	static const char *const want[] = {"memory", "pids", "cpu"};
	char dir[PATH_MAX], avail[512], on[512];
	snprintf(dir, sizeof(dir), "%s", leaf);
	size_t mlen = strlen(mount);
	/* From the mount point down to the leaf's parent. */
	for (char *end = dir + mlen; end;) {
		char *next = strchr(end + 1, '/');
		char saved = *end;
		*end = '\0';
		const char *at = dir[0] ? dir : "/";
		if (cg_read(at, "cgroup.controllers", avail, sizeof(avail), err) < 0 ||
		    cg_read(at, "cgroup.subtree_control", on, sizeof(on), err) < 0)
			return -1;
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			char add[32];
			snprintf(add, sizeof(add), "+%s", want[i]);
			if (has_word(avail, want[i]) && !has_word(on, want[i]) &&
			    cg_write(at, "cgroup.subtree_control", add, err) < 0)
				return -1;
		}
		*end = saved;
		end = next;
	}
	return 0;
}

static const char *choose_base(const struct cbox_cgroup_layout *l, int c, bool absolute, char *buf,
                               size_t n)
{
	if (absolute)
		return l->mount[c];
	snprintf(buf, n, "%s%s", l->mount[c], strcmp(l->own[c], "/") == 0 ? "" : l->own[c]);
	/* v2's rule of no processes in a cgroup that hands controllers to its children means
	 * the caller's own cgroup (which holds the caller) cannot be the parent there. */
	if (l->mode == CBOX_CGROUP_V2 && strcmp(l->own[c], "/") != 0)
		return l->mount[c];
	return access(buf, W_OK) == 0 ? buf : l->mount[c];
}

int cbox_cgroup_create(const struct cbox_cgroup_layout *l, const char *cgroups_path, const char *id,
                       struct cbox_cgroup **out, struct cbox_err **err)
{
	char rel[PATH_MAX], base[PATH_MAX];
	if (l->mode == CBOX_CGROUP_NONE)
		return cbox_err_set(err, ENOTSUP, "no cgroup file system is mounted");
	if (cbox_cgroup_resolve_path(cgroups_path, id, rel, sizeof(rel), err) < 0)
		return -1;
	CBOX_AUTO(cbox_cgroup) *cg = calloc(1, sizeof(*cg));
	if (!cg)
		return cbox_err_set(err, ENOMEM, "cgroup");
	cg->v2 = l->mode == CBOX_CGROUP_V2;
	for (int c = 0; c < CBOX_CGROUP_NCTL; c++) {
		if (!l->mount[c])
			continue;
		const char *b = choose_base(l, c, rel[0] == '/', base, sizeof(base));
		int r = mkdir_under(b, rel, &cg->d[c], err);
		if (r == 0 && cg->v2 && c == CBOX_CGROUP_UNIFIED)
			r = enable_controllers(l->mount[c], cg->d[c].path, err);
		if (r < 0) {
			for (int k = 0; k <= c; k++)
				remove_dir(&cg->d[k], NULL);
			return -1;
		}
	}
	/* The directory bears the container's name, so one left by a runtime killed in the middle
	 * of a pause is reused, still frozen: every process that joined it would stop at once. A
	 * new sandbox starts thawed in both freezers (whichever the dead runtime used; a host
	 * without one has nothing to undo). */
	const char *u = cg->d[CBOX_CGROUP_UNIFIED].path, *f = cg->d[CBOX_CGROUP_FREEZER].path;
	struct cbox_err *ignored = NULL;
	if (u && cg_has(u, "cgroup.freeze") && cg_write(u, "cgroup.freeze", "0", &ignored) < 0)
		cbox_err_free(&ignored);
	if (f && cg_write(f, "freezer.state", "THAWED", &ignored) < 0)
		cbox_err_free(&ignored);
	*out = cbox_steal_ptr(&cg);
	return 0;
}

/*
 * Joining without waiting. A move through cgroup.procs takes the kernel's global
 * cgroup_threadgroup_rwsem for writing, and the first such write after a quiet while waits for
 * an RCU grace period: 8-27 ms on this nested VM, most of `cbox-run --memory 1g -- true` (20 ms
 * against 5 without a limit). Two ways around it, one per kind of hierarchy:
 *  - v2: the child is born in the cgroup (clone3 with CLONE_INTO_CGROUP, Linux 5.7), which takes
 *    that lock only for reading, as every fork does;
 *  - v1: the child moves itself through the per-thread file ("0" to tasks), for which the
 *    kernel skips the lock (the thread cannot exit or exec meanwhile; cgroup_mutex orders the
 *    writers): 22 us. The child is single-threaded, just forked, so its thread is all of it.
 * Where clone3 or CLONE_INTO_CGROUP is missing, the child joins the v2 hierarchy through
 * cgroup.procs, as before: slower, the same result.
 */
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* (A raw clone: in the child, glibc's thread descriptor keeps the parent's tid, as after the
 * sentry's own clone with namespaces; raise() and fork() there ask the kernel, and the children
 * made here use no robust or PI mutex.) */
struct clone3_args { /* struct clone_args up to its cgroup field (CLONE_ARGS_SIZE_VER2) */
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
	uint64_t set_tid, set_tid_size, cgroup;
};

pid_t cbox_cgroup_fork(struct cbox_cgroup *cg, unsigned long flags)
{
	const char *u = cg ? cg->d[CBOX_CGROUP_UNIFIED].path : NULL;
	int dir = u ? open(u, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (dir >= 0) {
		struct clone3_args a = {.flags = (uint64_t)flags | CLONE_INTO_CGROUP,
		                        .exit_signal = SIGCHLD,
		                        .cgroup = (uint64_t)dir};
		long pid = syscall(SYS_clone3, &a, sizeof(a));
		int e = errno;
		if (pid == 0) {
			cg->born_v2 = true;
			close(dir);
			return 0;
		}
		close(dir);
		if (pid > 0)
			return (pid_t)pid;
		/* (a kernel without clone3 or CLONE_INTO_CGROUP: the plain way below) */
		if (e != ENOSYS && e != EINVAL && e != E2BIG && e != EOPNOTSUPP) {
			errno = e;
			return -1;
		}
	}
	return flags ? (pid_t)syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0) : fork();
}

int cbox_cgroup_join(struct cbox_cgroup *cg, struct cbox_err **err)
{
	if (!cg)
		return 0;
	for (int c = 0; c < CBOX_CGROUP_NCTL; c++) {
		if (!cg->d[c].path || (c == CBOX_CGROUP_UNIFIED && cg->born_v2))
			continue;
		const char *file = c == CBOX_CGROUP_UNIFIED ? "cgroup.procs" : "tasks";
		if (cg_write(cg->d[c].path, file, "0", err) < 0)
			return -1;
	}
	return 0;
}

/* Wait (up to 5 s) until the state file reads want. */
static int wait_state(const char *dir, const char *file, const char *want, struct cbox_err **err)
{
	char buf[512];
	struct waiting w;
	wait_begin(&w, 5000);
	do {
		if (cg_read(dir, file, buf, sizeof(buf), err) < 0)
			return -1;
		if (strstr(buf, want))
			return 0;
	} while (wait_more(&w));
	return cbox_err_set(err, ETIMEDOUT, "%s/%s did not reach '%s'", dir, file, want);
}

int cbox_cgroup_freeze(struct cbox_cgroup *cg, bool frozen, struct cbox_err **err)
{
	const char *u = cg->d[CBOX_CGROUP_UNIFIED].path, *f = cg->d[CBOX_CGROUP_FREEZER].path;
	if (u && cg_has(u, "cgroup.freeze")) {
		if (cg_write(u, "cgroup.freeze", frozen ? "1" : "0", err) < 0)
			return -1;
		return wait_state(u, "cgroup.events", frozen ? "frozen 1" : "frozen 0", err);
	}
	if (f) {
		const char *s = frozen ? "FROZEN" : "THAWED";
		if (cg_write(f, "freezer.state", s, err) < 0)
			return -1;
		return wait_state(f, "freezer.state", s, err);
	}
	return cbox_err_set(err, ENOTSUP, "no freezer: neither cgroup.freeze nor the v1 freezer");
}

int cbox_cgroup_frozen(struct cbox_cgroup *cg, bool *frozen, struct cbox_err **err)
{
	const char *u = cg->d[CBOX_CGROUP_UNIFIED].path, *f = cg->d[CBOX_CGROUP_FREEZER].path;
	char buf[64];
	if (u && cg_has(u, "cgroup.freeze")) {
		if (cg_read(u, "cgroup.freeze", buf, sizeof(buf), err) < 0)
			return -1;
		*frozen = buf[0] == '1';
		return 0;
	}
	if (f) {
		if (cg_read(f, "freezer.state", buf, sizeof(buf), err) < 0)
			return -1;
		*frozen = strncmp(buf, "THAWED", 6) != 0;
		return 0;
	}
	return cbox_err_set(err, ENOTSUP, "no freezer: neither cgroup.freeze nor the v1 freezer");
}

int cbox_cgroup_pids(struct cbox_cgroup *cg, pid_t **pids, size_t *n, struct cbox_err **err)
{
	static const enum cbox_cgroup_ctl order[] = {CBOX_CGROUP_UNIFIED, CBOX_CGROUP_PIDS,
	                                             CBOX_CGROUP_MEMORY, CBOX_CGROUP_FREEZER,
	                                             CBOX_CGROUP_CPU};
	const char *dir = NULL;
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(order) && !dir; i++)
		dir = cg->d[order[i]].path;
	if (!dir)
		return cbox_err_set(err, ENOENT, "the cgroup has no directory");
	char path[4200];
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return cbox_err_set(err, errno, "open %s", path);
	size_t cap = 16;
	pid_t *v = malloc(cap * sizeof(*v));
	*n = 0;
	for (long pid; v && fscanf(f, "%ld", &pid) == 1;) {
		if (*n == cap) {
			pid_t *bigger = realloc(v, 2 * cap * sizeof(*v));
			if (!bigger) {
				free(v);
				v = NULL;
				break;
			}
			v = bigger;
			cap *= 2;
		}
		v[(*n)++] = (pid_t)pid;
	}
	fclose(f);
	if (!v)
		return cbox_err_set(err, ENOMEM, "reading %s", path);
	*pids = v;
	return 0;
}

/* SIGKILL every pid listed in any hierarchy; the number of pids seen. */
static int kill_listed(struct cbox_cgroup *cg)
{
	static char buf[1 << 16];
	int seen = 0;
	for (int c = 0; c < CBOX_CGROUP_NCTL; c++) {
		if (!cg->d[c].path ||
		    cg_read(cg->d[c].path, "cgroup.procs", buf, sizeof(buf), NULL) < 0)
			continue;
		for (char *p = buf; *p;) {
			char *end;
			long pid = strtol(p, &end, 10);
			if (end == p)
				break;
			if (pid > 0 && kill((pid_t)pid, SIGKILL) == 0)
				seen++;
			p = *end ? end + 1 : end;
		}
	}
	return seen;
}

int cbox_cgroup_kill(struct cbox_cgroup *cg, struct cbox_err **err)
{
	const char *u = cg->d[CBOX_CGROUP_UNIFIED].path;
	bool kill_file = u && cg_has(u, "cgroup.kill");
	struct waiting w;
	wait_begin(&w, 5000);
	do {
		if (kill_file)
			cg_write(u, "cgroup.kill", "1", NULL);
		/* Frozen, none of them can fork a child that the walk would miss; v1 keeps frozen
		 * tasks from dying, so the group is thawed right after the signals. */
		bool frozen = !kill_file && cbox_cgroup_freeze(cg, true, NULL) == 0;
		int seen = kill_listed(cg);
		if (frozen)
			cbox_cgroup_freeze(cg, false, NULL);
		if (seen == 0)
			return 0;
	} while (wait_more(&w));
	return cbox_err_set(err, ETIMEDOUT, "processes are left in cgroup %s after SIGKILL",
	                    u ? u : cg->d[CBOX_CGROUP_MEMORY].path);
}

int cbox_cgroup_destroy(struct cbox_cgroup *cg, struct cbox_err **err)
{
	if (cbox_cgroup_kill(cg, err) < 0)
		return -1;
	int r = 0;
	for (int c = 0; c < CBOX_CGROUP_NCTL; c++)
		if (remove_dir(&cg->d[c], r < 0 ? NULL : err) < 0)
			r = -1;
	return r;
}
