/*
 * A container's cgroup, for every tier: linux.cgroupsPath (default cbox/<id>) with linux.resources'
 * memory, swap, cpu and pids limits. `create` makes it and the tier's first process joins it before
 * it starts anything else (the ns tier's stage 1, the sentry tier's monitor), so that every process
 * of the container is born inside; the record in the state directory lets `delete` (another
 * process) kill what is left and remove it.
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "cbox/cgroup.h"
#include "cbox/log.h"
#include "cbox/tier.h"
#include "oci_config.h"

#define RECORD "cgroup"

static void limits_from(const struct cbox_oci_resources *r, struct cbox_cgroup_limits *lim)
{
	*lim = (struct cbox_cgroup_limits){0};
	if (r->has_memory_limit)
		lim->memory = r->memory_limit;
	if (r->has_memory_swap)
		lim->memory_swap = r->memory_swap;
	if (r->has_cpu_quota)
		lim->cpu_quota = r->cpu_quota;
	if (r->has_cpu_period)
		lim->cpu_period = r->cpu_period;
	if (r->has_cpu_shares)
		lim->cpu_shares = r->cpu_shares;
	if (r->has_pids_limit)
		lim->pids = r->pids_limit;
}

/* The recorded cgroup of c into *cg. Errors: (errno 0) naming the container when it has none. */
static int load(const struct cbox_tier_container *c, struct cbox_cgroup **cg, struct cbox_err **err)
{
	char record[4096];
	snprintf(record, sizeof(record), "%s/" RECORD, c->state_dir);
	struct cbox_err *e = NULL;
	if (cbox_cgroup_load(record, cg, &e) == 0)
		return 0;
	if (e->errno_ != ENOENT) {
		*err = e;
		return -1;
	}
	cbox_err_free(&e);
	return cbox_err_set(
	    err, 0,
	    "container %s has no cgroup (created with --cgroup-manager=disabled, or "
	    "on a host without a usable cgroup file system)",
	    c->id);
}

int cbox_tier_cgroup_load(const struct cbox_tier_container *c, struct cbox_cgroup **cg,
                          struct cbox_err **err)
{
	*cg = NULL;
	return cbox_tier_cgroup_recorded(c) ? load(c, cg, err) : 0;
}

bool cbox_tier_cgroup_recorded(const struct cbox_tier_container *c)
{
	char record[4096];
	snprintf(record, sizeof(record), "%s/" RECORD, c->state_dir);
	return access(record, F_OK) == 0;
}

bool cbox_tier_cgroup_frozen(const struct cbox_tier_container *c)
{
	CBOX_AUTO(cbox_cgroup) *cg = NULL;
	bool frozen = false;
	if (load(c, &cg, NULL) < 0 || cbox_cgroup_frozen(cg, &frozen, NULL) < 0)
		return false;
	return frozen;
}

int cbox_tier_cgroup_pause(struct cbox_tier_container *c, bool frozen, struct cbox_err **err)
{
	CBOX_AUTO(cbox_cgroup) *cg = NULL;
	if (load(c, &cg, err) < 0)
		return -1;
	if (cbox_cgroup_freeze(cg, frozen, err) < 0) {
		/* A freeze that did not complete is undone, as runc does: half frozen, the
		 * container would report "paused" while parts of it still run, and refuse exec. */
		if (frozen)
			cbox_cgroup_freeze(cg, false, NULL);
		return -1;
	}
	return 0;
}

int cbox_tier_cgroup_pids(const struct cbox_tier_container *c, pid_t **pids, size_t *n,
                          struct cbox_err **err)
{
	CBOX_AUTO(cbox_cgroup) *cg = NULL;
	if (load(c, &cg, err) < 0 || cbox_cgroup_pids(cg, pids, n, err) < 0)
		return -1;
	return 0;
}

static bool any_limit(const struct cbox_cgroup_limits *l)
{
	return l->memory || l->memory_swap || l->cpu_quota || l->cpu_period || l->cpu_shares ||
	       l->pids;
}

int cbox_tier_cgroup_create(const struct cbox_tier_container *c, struct cbox_cgroup **out,
                            struct cbox_err **err)
{
	const struct cbox_oci_linux *l = &c->config->linux_;
	struct cbox_cgroup_limits lim;
	CBOX_AUTO(cbox_cgroup_layout) *layout = NULL;
	char record[4096];
	limits_from(&l->resources, &lim);
	if (!l->has_resources)
		lim = (struct cbox_cgroup_limits){0};
	*out = NULL;
	if (c->no_cgroup) {
		/* Refused rather than run without the limits the config asks for. */
		if (any_limit(&lim))
			return cbox_err_set(err, 0,
			                    "linux.resources: limits need a cgroup, and "
			                    "--cgroup-manager=disabled gives none");
		cbox_debug("container %s runs without a cgroup (--cgroup-manager=disabled)", c->id);
		return 0;
	}
	if (l->has_resources && l->resources.cpus)
		cbox_debug("linux.resources.cpu.cpus (%s) ignored: no cpuset support",
		           l->resources.cpus);
	struct cbox_err *e = NULL;
	if (cbox_cgroup_layout_detect(&layout, &e) < 0 ||
	    cbox_cgroup_create(layout, l->cgroups_path, c->id, out, &e) < 0) {
		/* Without limits a cgroup only helps the clean-up: go on without one. */
		if (!any_limit(&lim)) {
			cbox_debug("container %s runs without a cgroup: %s", c->id,
			           e && e->msg ? e->msg : "?");
			cbox_err_free(&e);
			return 0;
		}
		*err = e;
		return cbox_err_wrap(err, "linux.resources");
	}
	snprintf(record, sizeof(record), "%s/" RECORD, c->state_dir);
	if (cbox_cgroup_apply(*out, &lim, err) < 0 || cbox_cgroup_save(*out, record, err) < 0) {
		cbox_cgroup_destroy(*out, NULL);
		cbox_cgroup_free(*out);
		*out = NULL;
		unlink(record);
		return cbox_err_wrap(err, "linux.resources");
	}
	return 0;
}

int cbox_tier_cgroup_update(struct cbox_tier_container *c, const struct cbox_oci_resources *r,
                            struct cbox_err **err)
{
	CBOX_AUTO(cbox_cgroup) *cg = NULL;
	struct cbox_cgroup_limits lim;
	limits_from(r, &lim);
	if (r->cpus && r->cpus[0])
		cbox_warn("update: cpu.cpus (%s) ignored: no cpuset support", r->cpus);
	if (load(c, &cg, err) < 0 || cbox_cgroup_apply(cg, &lim, err) < 0)
		return -1;
	return 0;
}

void cbox_tier_cgroup_abort(const struct cbox_tier_container *c, struct cbox_cgroup *cg)
{
	char record[4096];
	if (!cg)
		return;
	snprintf(record, sizeof(record), "%s/" RECORD, c->state_dir);
	cbox_cgroup_destroy(cg, NULL);
	unlink(record);
}

int cbox_tier_cgroup_delete(const struct cbox_tier_container *c, struct cbox_err **err)
{
	char record[4096];
	snprintf(record, sizeof(record), "%s/" RECORD, c->state_dir);
	CBOX_AUTO(cbox_cgroup) *cg = NULL;
	struct cbox_err *e = NULL;
	if (cbox_cgroup_load(record, &cg, &e) < 0) {
		if (e->errno_ == ENOENT) {
			cbox_err_free(&e);
			return 0; /* created without a cgroup */
		}
		*err = e;
		return -1;
	}
	uint64_t kills = 0;
	int64_t limit = -1;
	if (cbox_cgroup_oom_kills(cg, &kills, NULL) == 0 && kills > 0 &&
	    cbox_cgroup_memory_limit(cg, &limit, NULL) == 0) {
		char size[64];
		cbox_cgroup_format_size(limit, size, sizeof(size));
		cbox_warn("container %s: killed: the memory limit of %s was reached", c->id, size);
	}
	if (cbox_cgroup_destroy(cg, err) < 0)
		return -1;
	if (unlink(record) < 0 && errno != ENOENT)
		return cbox_err_set(err, errno, "unlink %s", record);
	return 0;
}
