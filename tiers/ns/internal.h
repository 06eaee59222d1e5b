#pragma once
/* The ns tier's parts (tiers/ns/ only). */
#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "cbox/err.h"
#include "cbox/tier.h"
#include "oci_config.h"

/* Messages on the SOCK_SEQPACKET pair between the runtime (create) and stage 1 / the init. */
enum ns_msg_type {
	NS_MSG_USERNS = 1, /* stage 1 -> runtime: in a new user ns, write its id maps */
	NS_MSG_PID,        /* stage 1 -> runtime: value = the init's pid (runtime's view) */
	NS_MSG_HOOKS,      /* init -> runtime: namespaces and mounts ready: run the hooks */
	NS_MSG_READY,      /* init -> runtime: waiting for start */
	NS_MSG_ERROR,      /* stage 1 or init -> runtime: text = why; the sender exits */
	NS_MSG_GO,         /* runtime -> stage 1 or init: carry on */
};

/* Runtime <-> stage 1 and init messages: struct cbox_tier_msg (cbox/tier.h). */

struct cbox_cgroup;

/* What the init needs; everything was resolved by the runtime before the fork. */
struct ns_init_args {
	const struct cbox_oci_config *cfg;
	const char *rootfs;
	int sock;      /* to the runtime */
	int state_dir; /* O_PATH fd of <root>/<id>: holds exec.fifo */
	bool userns;   /* the container has a user namespace of its own */
	bool new_mountns, new_utsns;
	struct cbox_cgroup *cgroup; /* stage 1 joins it before forking the init; may be NULL */
	int console_sock;           /* process.terminal: where the pty's master goes; else -1 */
};

/* The container's terminal, made inside it (ns_exec.c): see there. */
int ns_console(const struct cbox_oci_process *p, int console_sock, struct cbox_err **err);

/* The init's whole life: set up, wait for start, exec process.args. Never returns. */
CBOX_NORETURN void ns_init_main(const struct ns_init_args *a);

/* Mount namespace set-up before pivot_root: propagation, the rootfs bind, config mounts, /dev. */
int ns_mount_prepare(const struct ns_init_args *a, struct cbox_err **err);
/* Helper of ns_mount.c (paths under the root: cbox_open_in_root, cbox/path.h): mount(2) onto
 * the /proc/self/fd path of the fd target. */
int ns_do_mount(const char *src, int target, const char *type, unsigned long flags,
                const char *data);
/* One cgroup hierarchy of the host, from the init's /proc/self/mountinfo before the pivot. */
struct ns_cg_hier {
	char name[64];  /* its directory under /sys/fs/cgroup: "memory", "cpu,cpuacct", "unified" */
	char data[128]; /* the mount's data: its controllers, or "name=systemd"; "" for cgroup2 */
	bool v2, at_top;    /* cgroup2; mounted on /sys/fs/cgroup itself (a v2-only host) */
	bool fresh;         /* the init's cgroup is the root it sees (its own cgroup namespace) */
	char src[PATH_MAX]; /* else: the host directory of the init's cgroup, to bind */
};
/* The cgroup hierarchies of a mountinfo text (at most max, one per directory name), with the
 * process's own cgroups from the text of its /proc/self/cgroup. Pure: ns_cgroupfs.c. */
size_t ns_cgroup_parse(const char *mountinfo, const char *self, struct ns_cg_hier *h, size_t max);
/* An OCI mount of type cgroup/cgroup2 on m->destination, target its O_PATH fd under root (flags:
 * parsed from its options): ns_cgroupfs.c. In a user namespace (userns) a refused mount is
 * warned about and skipped. */
int ns_mount_cgroup(int root, const struct cbox_oci_mount *m, int target, unsigned long flags,
                    bool userns, struct cbox_err **err);
/* pivot_root into the rootfs, then masked and read-only paths and a read-only root. */
int ns_mount_finish(const struct ns_init_args *a, struct cbox_err **err);
/* Write linux.sysctl under the container's /proc/sys (after the pivot, before readonlyPaths).
 * Errors: a key with "/" or "..", or the write failing (named). */
int ns_apply_sysctl(const struct cbox_oci_linux *l, struct cbox_err **err);

/* The tier's create op (see cbox_tier_ops.create). */
int ns_create(struct cbox_tier_container *c, cbox_tier_created_fn created, void *data,
              struct cbox_err **err);

/* setrlimit for every process.rlimits entry. */
int ns_apply_rlimits(const struct cbox_oci_process *p, struct cbox_err **err);
/* Drop the bounding set, switch to process.user, set the other capability sets. */
int ns_apply_user_caps(const struct cbox_oci_process *p, struct cbox_err **err);
/* The file process.args[0] names inside the current root (PATH from process.env). */
int ns_find_exec(const struct cbox_oci_process *p, char *out, size_t n, struct cbox_err **err);
/*
 * The last steps before the program (the init's and exec's): the seccomp filter, process.user and
 * its capabilities, no_new_privs, umask, process.cwd, then execve of exe with process.args and
 * process.env. Returns only on failure (< 0, *err set).
 */
int ns_drop_and_exec(const struct cbox_oci_process *p, const struct cbox_oci_seccomp *sc,
                     const char *exe, struct cbox_err **err);
/* Load linux.seccomp (libseccomp). Precondition: no_new_privs or CAP_SYS_ADMIN. */
int ns_apply_seccomp(const struct cbox_oci_seccomp *s, struct cbox_err **err);

/* The tier's exec op (see cbox_tier_ops.exec): ns_exec.c. */
int ns_exec(struct cbox_tier_container *c, const struct cbox_tier_exec *x, pid_t *pid,
            struct cbox_err **err);
