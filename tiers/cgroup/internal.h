#pragma once
/* The parts of tiers/cgroup/ shared between its files (no other module includes this). */
#include <stdbool.h>
#include <stddef.h>

#include "cbox/cgroup.h"

/* The sandbox's directory in one hierarchy. */
struct cg_dir {
	char *path;  /* absolute; NULL: no directory in that hierarchy */
	int created; /* how many levels, the leaf first, cbox_cgroup_create made */
};

struct cbox_cgroup {
	bool v2; /* the controllers live on the cgroup2 hierarchy (d[CBOX_CGROUP_UNIFIED]) */
	struct cg_dir d[CBOX_CGROUP_NCTL];
	/* In a child of cbox_cgroup_fork: born in d[CBOX_CGROUP_UNIFIED] (cbox_cgroup_join skips
	 * it). Always false in the parent's copy. */
	bool born_v2;
};

/* Write value to dir/name; the error names both. */
int cg_write(const char *dir, const char *name, const char *value, struct cbox_err **err);
/* Read dir/name into buf[0..n) (NUL-terminated, truncated). Returns the length or < 0. */
int cg_read(const char *dir, const char *name, char *buf, size_t n, struct cbox_err **err);
/* True when dir/name exists. */
bool cg_has(const char *dir, const char *name);
