#pragma once
/*
 * Resource limits through cgroups, for every tier: the hierarchies of this host (v1, hybrid: v1
 * controllers plus a cgroup2 mount at /sys/fs/cgroup/unified, or v2 unified), one cgroup per
 * sandbox (one directory per v1 controller), its limits (memory, memory+swap, cpu quota/period
 * and shares, pids), its members, its OOM kills, freeze/thaw, and its removal.
 *
 * The pure part (layout parsing, conversions, sizes) touches no file and is unit-tested with
 * fixture strings; the rest writes under the cgroup mounts and needs root (or a delegated tree).
 * Not thread-safe; a handle may be used in a forked child (cbox_cgroup_fork, cbox_cgroup_join).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cbox/cleanup.h"
#include "cbox/compiler.h"
#include "cbox/err.h"

enum cbox_cgroup_mode {
	CBOX_CGROUP_NONE = 0, /* no cgroup file system mounted */
	CBOX_CGROUP_V1,       /* v1 controllers only */
	CBOX_CGROUP_HYBRID,   /* v1 controllers and a cgroup2 mount without them */
	CBOX_CGROUP_V2,       /* unified: the controllers are on the cgroup2 mount */
};

/* The controllers cbox uses, and the v2 hierarchy itself (CBOX_CGROUP_UNIFIED). */
enum cbox_cgroup_ctl {
	CBOX_CGROUP_MEMORY = 0,
	CBOX_CGROUP_PIDS,
	CBOX_CGROUP_CPU,
	CBOX_CGROUP_FREEZER,
	CBOX_CGROUP_UNIFIED,
	CBOX_CGROUP_NCTL,
};

/*
 * Where the hierarchies are mounted and where the calling process sits in them. mount[c] is
 * the mount point of the v1 hierarchy holding controller c (for CBOX_CGROUP_UNIFIED: the
 * cgroup2 mount), NULL when absent; own[c] is the process's cgroup in that hierarchy relative to
 * the mount ("/" or "/a/b"), never NULL when mount[c] is set. In V2 mode only UNIFIED is set.
 */
struct cbox_cgroup_layout {
	enum cbox_cgroup_mode mode;
	char *mount[CBOX_CGROUP_NCTL];
	char *own[CBOX_CGROUP_NCTL];
};

/*
 * Build a layout from the text of /proc/self/mountinfo and /proc/self/cgroup (both
 * NUL-terminated). A hierarchy mounted with a root other than "/" (a bind mount or a cgroup
 * namespace) has that root taken off the process's path. Errors: EINVAL naming the malformed
 * line; ENOMEM. *out is owned by the caller (cbox_cgroup_layout_free). No cgroup mount at all
 * is not an error: mode is then CBOX_CGROUP_NONE.
 */
CBOX_API int cbox_cgroup_layout_parse(const char *mountinfo, const char *self_cgroup,
                                      struct cbox_cgroup_layout **out, struct cbox_err **err);

/* A cgroup hierarchy's mount, as a line of /proc/self/mountinfo gives it (pointers into a copy
 * of the line, valid during the callback). */
struct cbox_cgroup_mount {
	bool v2;           /* cgroup2, else cgroup (v1) */
	const char *point; /* its mount point, unescaped ("/sys/fs/cgroup/memory") */
	const char *root;  /* the hierarchy's directory it shows, unescaped: "/", or "/docker/x" for
	                    * a  bind of a subtree or a mount made in a cgroup namespace */
	const char *super; /* its super options: "rw,memory", "rw,xattr,name=systemd" */
};

/*
 * fn(m, arg) for each cgroup and cgroup2 mount of a mountinfo text, in order; a negative return
 * of fn stops the walk and is returned. A line without mountinfo's fields is EINVAL naming it
 * when strict, else skipped. Errors also: ENOMEM.
 */
CBOX_API int cbox_cgroup_mounts_each(const char *mountinfo, bool strict,
                                     int (*fn)(const struct cbox_cgroup_mount *m, void *arg),
                                     void *arg, struct cbox_err **err);

/* A process's cgroup (a path of /proc/self/cgroup) as a path under a mount of its hierarchy that
 * shows root: "/" or "/a/b" (root taken off; a path not below root is kept as it is). Malloc'd;
 * NULL without memory. */
CBOX_API char *cbox_cgroup_below_root(const char *path, const char *root);

/* cbox_cgroup_layout_parse of this process's own files. Errors also: reading them. */
CBOX_API int cbox_cgroup_layout_detect(struct cbox_cgroup_layout **out, struct cbox_err **err);

/* NULL-safe. */
CBOX_API void cbox_cgroup_layout_free(struct cbox_cgroup_layout *l);
CBOX_DEFINE_AUTO(cbox_cgroup_layout, cbox_cgroup_layout_free)

/* "none", "v1", "hybrid" or "v2". */
CBOX_API const char *cbox_cgroup_mode_name(enum cbox_cgroup_mode m);

/*
 * Limits, with the OCI runtime-spec's meaning (linux.resources). 0 leaves a value as the kernel
 * has it; -1 means unlimited ("max") for the signed ones. memory_swap is memory plus swap, as
 * in OCI and docker (so memory_swap == memory: no swap); it needs memory.
 */
struct cbox_cgroup_limits {
	int64_t memory;      /* bytes */
	int64_t memory_swap; /* bytes, >= memory */
	int64_t cpu_quota;   /* microseconds of cpu time per period */
	uint64_t cpu_period; /* microseconds; 0 with a quota: 100000 */
	uint64_t cpu_shares; /* v1 shares (2..262144); converted to cpu.weight on v2 */
	int64_t pids;        /* tasks (processes and threads) */
};

/* runc's conversion of v1 cpu shares to a v2 cpu.weight: 1 + (shares - 2) * 9999 / 262142,
 * shares clamped to 2..262144 first. 0 for 0 (not set). */
CBOX_API uint64_t cbox_cgroup_shares_to_weight(uint64_t shares);

/* The quota for cpus CPUs over period microseconds (--cpus 0.5 -> 50000 of 100000). Returns
 * < 0 when cpus is not a finite number > 0 and <= 1024, or the quota is under 1000 µs (the
 * kernel's minimum). */
CBOX_API int cbox_cgroup_cpus_to_quota(double cpus, uint64_t period, int64_t *quota);

/* "64m", "1.5g", "512k", "100", "64MiB", "64mb" (binary units, case-insensitive, b bytes) ->
 * bytes. Returns < 0 on a malformed, zero, negative or overflowing size. */
CBOX_API int cbox_cgroup_parse_size(const char *s, int64_t *bytes);

/* "256 MiB", "1.5 GiB", "512 KiB", "100 bytes", "unlimited" for < 0: into buf[0..n). */
CBOX_API void cbox_cgroup_format_size(int64_t bytes, char *buf, size_t n);

/* The value of key in a flat keyed file ("oom_kill 3\nunder_oom 0\n"). Returns < 0 when the
 * key is absent or its value is not a number. */
CBOX_API int cbox_cgroup_read_key(const char *text, const char *key, uint64_t *out);

/*
 * The sandbox's cgroup path from linux.cgroupsPath (may be NULL: "cbox/<id>"), into
 * out[0..n). systemd's "slice:prefix:name" form (what docker passes with --systemd-cgroup,
 * used here without systemd) becomes "/slice/prefix-name.scope". An absolute result is from the
 * hierarchy's root; a relative one is under the caller's own cgroup. Errors: EINVAL for an
 * empty path, a ".." or "." component (it would leave the hierarchy) or one too long.
 */
CBOX_API int cbox_cgroup_resolve_path(const char *cgroups_path, const char *id, char *out, size_t n,
                                      struct cbox_err **err);

/* One sandbox's cgroup: its directory in each hierarchy used. Opaque. */
struct cbox_cgroup;

/*
 * Create the sandbox's cgroup (see cbox_cgroup_resolve_path) in each hierarchy of l cbox uses:
 * v1 memory, pids, cpu and freezer, and the cgroup2 mount (in hybrid mode it holds no
 * controllers but gives cgroup.kill and cgroup.freeze). A relative path goes under the caller's
 * own cgroup when that directory is writable (on v2: only when it is the root, since v2 forbids
 * processes in a cgroup that delegates controllers), else under the root. Directories that
 * exist are joined, not refused. On v2 the controllers are enabled in every ancestor's
 * cgroup.subtree_control. Errors name the directory; on failure nothing created is left.
 * Precondition: l->mode != CBOX_CGROUP_NONE. *out: free with cbox_cgroup_free.
 */
CBOX_API int cbox_cgroup_create(const struct cbox_cgroup_layout *l, const char *cgroups_path,
                                const char *id, struct cbox_cgroup **out, struct cbox_err **err);

/* Write the limits set in lim (see struct cbox_cgroup_limits). Errors name the file and the
 * value ("write 100 to .../pids.max: ..."); EINVAL for memory_swap without memory or below it,
 * or for a limit the hierarchy has no controller for. */
CBOX_API int cbox_cgroup_apply(struct cbox_cgroup *cg, const struct cbox_cgroup_limits *lim,
                               struct cbox_err **err);

/* Fork, as fork() or, with clone flags such as CLONE_NEWUSER | CLONE_NEWPID, as clone() with
 * SIGCHLD: the child is born in the cgroup's v2 hierarchy when it has one (clone3
 * CLONE_INTO_CGROUP), without the wait a move costs. cg may be NULL (a plain fork). The child,
 * still single-threaded, then calls cbox_cgroup_join. -1 and errno on failure. */
CBOX_API pid_t cbox_cgroup_fork(struct cbox_cgroup *cg, unsigned long flags);

/* In a child of cbox_cgroup_fork, before it starts a thread or a process: join the cgroup's
 * other hierarchies by itself (v1: through tasks, without the kernel's global lock). NULL-safe. */
CBOX_API int cbox_cgroup_join(struct cbox_cgroup *cg, struct cbox_err **err);

/* The number of processes the kernel's OOM killer killed in the cgroup because of its memory
 * limit (v2 memory.events oom_kill; v1 memory.oom_control oom_kill). 0 without a memory
 * hierarchy. */
CBOX_API int cbox_cgroup_oom_kills(struct cbox_cgroup *cg, uint64_t *n, struct cbox_err **err);

/*
 * Directory fds (O_PATH) of the cgroup in the hierarchies of its memory, cpu and pids
 * controllers, for a reader that will no longer see the cgroup mounts: the sentry, which shows
 * the cgroup to its guest as /sys/fs/cgroup (sentry/fs_sys_cgroup.c). On v2 (*v2 true) all three
 * are the one unified directory; on v1 each is its controller's, -1 where the host has none.
 * *unified: on a v1 host that mounts the v2 hierarchy too (hybrid), the cgroup there, which counts
 * the CPU time of its tasks as every v2 cgroup does; else -1. Returns 0, or -errno with no fd left
 * open.
 */
CBOX_API int cbox_cgroup_open_dirs(struct cbox_cgroup *cg, bool *v2, int *memory, int *cpu,
                                   int *pids, int *unified);

/* The memory limit the kernel holds for the cgroup (-1: none), for messages. */
CBOX_API int cbox_cgroup_memory_limit(struct cbox_cgroup *cg, int64_t *bytes,
                                      struct cbox_err **err);

/* Freeze (true) or thaw every process of the cgroup: cgroup.freeze on cgroup2, else the v1
 * freezer. Waits until the kernel reports the state. ENOTSUP without either. */
CBOX_API int cbox_cgroup_freeze(struct cbox_cgroup *cg, bool frozen, struct cbox_err **err);

/* Whether the cgroup is frozen, or being frozen (cgroup.freeze reads 1, or freezer.state is not
 * THAWED), read from the same file cbox_cgroup_freeze uses. ENOTSUP without either. */
CBOX_API int cbox_cgroup_frozen(struct cbox_cgroup *cg, bool *frozen, struct cbox_err **err);

/* The processes (not threads) in the cgroup, from the cgroup.procs of its first hierarchy (the
 * cgroup2 one first); *pids is malloc'd (the caller frees it; never NULL on success), *n their
 * count. Errors name the file. */
CBOX_API int cbox_cgroup_pids(struct cbox_cgroup *cg, pid_t **pids, size_t *n,
                              struct cbox_err **err);

/* SIGKILL every process of the cgroup (cgroup.kill when the kernel has it, else by walking
 * cgroup.procs with the group frozen so that none can fork away) and wait until it is empty.
 * ETIMEDOUT when processes remain after 5 s. */
CBOX_API int cbox_cgroup_kill(struct cbox_cgroup *cg, struct cbox_err **err);

/* Kill what is left (cbox_cgroup_kill), then remove the directories, and their parents that
 * cbox_cgroup_create made when they are empty. The handle stays valid (for free). */
CBOX_API int cbox_cgroup_destroy(struct cbox_cgroup *cg, struct cbox_err **err);

/* The cgroup's directory in hierarchy c, or NULL when it has none. */
CBOX_API const char *cbox_cgroup_dir(const struct cbox_cgroup *cg, enum cbox_cgroup_ctl c);

/* Record the handle in file (mode 0600, replaced), so that another process (`cbox delete`)
 * can load it. Errors name the file. */
CBOX_API int cbox_cgroup_save(const struct cbox_cgroup *cg, const char *file,
                              struct cbox_err **err);

/* Load a handle saved by cbox_cgroup_save. Errors: the file's errno (ENOENT: none saved);
 * EINVAL naming the file for a malformed one or a directory that is not on a cgroup file
 * system (it would otherwise let a bad state file make cbox remove any directory). */
CBOX_API int cbox_cgroup_load(const char *file, struct cbox_cgroup **out, struct cbox_err **err);

/* NULL-safe; does not remove anything. */
CBOX_API void cbox_cgroup_free(struct cbox_cgroup *cg);
CBOX_DEFINE_AUTO(cbox_cgroup, cbox_cgroup_free)
