/* Writing a sandbox's limits into its cgroup, and reading back what the kernel reports. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "internal.h"

int cg_write(const char *dir, const char *name, const char *value, struct cbox_err **err)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	CBOX_AUTOCLOSE int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return cbox_err_set(err, errno, "open %s", path);
	size_t len = strlen(value);
	if (write(fd, value, len) != (ssize_t)len)
		return cbox_err_set(err, errno, "write %s to %s", value, path);
	return 0;
}

int cg_read(const char *dir, const char *name, char *buf, size_t n, struct cbox_err **err)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	CBOX_AUTOCLOSE int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cbox_err_set(err, errno, "open %s", path);
	size_t used = 0;
	for (ssize_t r; used + 1 < n; used += (size_t)r) {
		r = read(fd, buf + used, n - 1 - used);
		if (r < 0 && errno == EINTR) {
			r = 0;
			continue;
		}
		if (r < 0)
			return cbox_err_set(err, errno, "read %s", path);
		if (r == 0)
			break;
	}
	buf[used] = '\0';
	return (int)used;
}

bool cg_has(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* v2 spells unlimited "max", v1 "-1". */
static void fmt_limit(bool v2, int64_t v, char *buf, size_t n)
{
	if (v < 0)
		snprintf(buf, n, "%s", v2 ? "max" : "-1");
	else
		snprintf(buf, n, "%" PRId64, v);
}

static int no_controller(const char *what, struct cbox_err **err)
{
	return cbox_err_set(err, EINVAL,
	                    "%s limit: this host has no %s cgroup controller mounted for cbox",
	                    what, what);
}

static int apply_memory_v1(const char *dir, const struct cbox_cgroup_limits *lim,
                           struct cbox_err **err)
{
	char mem[32], sw[32];
	fmt_limit(false, lim->memory, mem, sizeof(mem));
	fmt_limit(false, lim->memory_swap, sw, sizeof(sw));
	if (lim->memory_swap && !cg_has(dir, "memory.memsw.limit_in_bytes"))
		return cbox_err_set(err, ENOTSUP,
		                    "memory+swap limit: %s/memory.memsw.limit_in_bytes is missing "
		                    "(boot the kernel with swapaccount=1)",
		                    dir);
	/* v1 refuses a memory limit above the memory+swap one and the reverse, so the order
	 * depends on the values the cgroup holds: try memory first, else memsw first. */
	struct cbox_err *first = NULL;
	if (cg_write(dir, "memory.limit_in_bytes", mem, &first) == 0) {
		if (lim->memory_swap)
			return cg_write(dir, "memory.memsw.limit_in_bytes", sw, err);
		return 0;
	}
	if (!lim->memory_swap) {
		*err = first;
		return cbox_err_code(first);
	}
	cbox_err_free(&first);
	if (cg_write(dir, "memory.memsw.limit_in_bytes", sw, err) < 0)
		return -1;
	return cg_write(dir, "memory.limit_in_bytes", mem, err);
}

static int apply_memory_v2(const char *dir, const struct cbox_cgroup_limits *lim,
                           struct cbox_err **err)
{
	char v[32];
	fmt_limit(true, lim->memory, v, sizeof(v));
	if (cg_write(dir, "memory.max", v, err) < 0)
		return -1;
	if (!lim->memory_swap)
		return 0;
	/* OCI's swap is memory + swap; memory.swap.max is the swap alone. */
	int64_t swap =
	    lim->memory_swap < 0 || lim->memory < 0 ? -1 : lim->memory_swap - lim->memory;
	if (swap == 0 && !cg_has(dir, "memory.swap.max"))
		return 0; /* no swap accounting, and none is allowed anyway */
	fmt_limit(true, swap, v, sizeof(v));
	return cg_write(dir, "memory.swap.max", v, err);
}

static int apply_cpu(struct cbox_cgroup *cg, const struct cbox_cgroup_limits *lim,
                     struct cbox_err **err)
{
	const char *dir = cg->d[cg->v2 ? CBOX_CGROUP_UNIFIED : CBOX_CGROUP_CPU].path;
	bool quota = lim->cpu_quota || lim->cpu_period;
	if (!quota && !lim->cpu_shares)
		return 0;
	if (!dir)
		return no_controller("cpu", err);
	char v[64], q[32];
	uint64_t period = lim->cpu_period ? lim->cpu_period : 100000;
	if (cg->v2) {
		fmt_limit(true, lim->cpu_quota ? lim->cpu_quota : -1, q, sizeof(q));
		snprintf(v, sizeof(v), "%s %" PRIu64, q, period);
		if (quota && cg_write(dir, "cpu.max", v, err) < 0)
			return -1;
		snprintf(v, sizeof(v), "%" PRIu64, cbox_cgroup_shares_to_weight(lim->cpu_shares));
		return lim->cpu_shares ? cg_write(dir, "cpu.weight", v, err) : 0;
	}
	snprintf(v, sizeof(v), "%" PRIu64, period);
	if (quota && cg_write(dir, "cpu.cfs_period_us", v, err) < 0)
		return -1;
	fmt_limit(false, lim->cpu_quota ? lim->cpu_quota : -1, q, sizeof(q));
	if (quota && cg_write(dir, "cpu.cfs_quota_us", q, err) < 0)
		return -1;
	snprintf(v, sizeof(v), "%" PRIu64, lim->cpu_shares);
	return lim->cpu_shares ? cg_write(dir, "cpu.shares", v, err) : 0;
}

int cbox_cgroup_apply(struct cbox_cgroup *cg, const struct cbox_cgroup_limits *lim,
                      struct cbox_err **err)
{
	if (lim->memory_swap && !lim->memory)
		return cbox_err_set(err, EINVAL, "a memory+swap limit needs a memory limit");
	if (lim->memory_swap > 0 && (lim->memory < 0 || lim->memory_swap < lim->memory))
		return cbox_err_set(err, EINVAL,
		                    "the memory+swap limit (%" PRId64
		                    ") is below the memory limit (%" PRId64 ")",
		                    lim->memory_swap, lim->memory);
	if (lim->memory) {
		const char *dir = cg->d[cg->v2 ? CBOX_CGROUP_UNIFIED : CBOX_CGROUP_MEMORY].path;
		if (!dir)
			return no_controller("memory", err);
		if ((cg->v2 ? apply_memory_v2 : apply_memory_v1)(dir, lim, err) < 0)
			return -1;
	}
	if (lim->pids) {
		const char *dir = cg->d[cg->v2 ? CBOX_CGROUP_UNIFIED : CBOX_CGROUP_PIDS].path;
		char v[32];
		fmt_limit(true, lim->pids, v, sizeof(v)); /* pids.max says "max" on v1 too */
		if (!dir)
			return no_controller("pids", err);
		if (cg_write(dir, "pids.max", v, err) < 0)
			return -1;
	}
	return apply_cpu(cg, lim, err);
}

int cbox_cgroup_oom_kills(struct cbox_cgroup *cg, uint64_t *n, struct cbox_err **err)
{
	const char *dir = cg->d[cg->v2 ? CBOX_CGROUP_UNIFIED : CBOX_CGROUP_MEMORY].path;
	const char *file = cg->v2 ? "memory.events" : "memory.oom_control";
	char buf[1024];
	*n = 0;
	if (!dir)
		return 0;
	if (cg_read(dir, file, buf, sizeof(buf), err) < 0)
		return -1;
	if (cbox_cgroup_read_key(buf, "oom_kill", n) < 0)
		return cbox_err_set(err, EINVAL, "%s/%s: no oom_kill counter", dir, file);
	return 0;
}

int cbox_cgroup_memory_limit(struct cbox_cgroup *cg, int64_t *bytes, struct cbox_err **err)
{
	const char *dir = cg->d[cg->v2 ? CBOX_CGROUP_UNIFIED : CBOX_CGROUP_MEMORY].path;
	const char *file = cg->v2 ? "memory.max" : "memory.limit_in_bytes";
	char buf[64];
	*bytes = -1;
	if (!dir)
		return 0;
	if (cg_read(dir, file, buf, sizeof(buf), err) < 0)
		return -1;
	if (strncmp(buf, "max", 3) == 0)
		return 0;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(buf, &end, 10);
	if (errno || end == buf)
		return cbox_err_set(err, EINVAL, "%s/%s: not a number: %s", dir, file, buf);
	/* v1 reports "no limit" as a huge page-aligned number. */
	*bytes = v >= (1ULL << 62) ? -1 : (int64_t)v;
	return 0;
}

int cbox_cgroup_open_dirs(struct cbox_cgroup *cg, bool *v2, int *memory, int *cpu, int *pids,
                          int *unified)
{
	const enum cbox_cgroup_ctl ctl[4] = {CBOX_CGROUP_MEMORY, CBOX_CGROUP_CPU, CBOX_CGROUP_PIDS,
	                                     CBOX_CGROUP_UNIFIED};
	int *out[4] = {memory, cpu, pids, unified};
	*v2 = cg->v2;
	*unified = -1;
	for (int i = 0; i < (cg->v2 ? 3 : 4); i++) {
		const char *dir = cg->d[cg->v2 ? CBOX_CGROUP_UNIFIED : ctl[i]].path;
		*out[i] = dir ? open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
		if (dir && *out[i] < 0) {
			int err = errno;
			for (int j = 0; j < i; j++)
				if (*out[j] >= 0)
					close(*out[j]);
			return -err;
		}
	}
	return 0;
}
