#pragma once
/*
 * Tiers: the sibling sandbox implementations behind the one OCI front door (`cbox create`,
 * `cbox-run --tier`). A tier is a `const struct cbox_tier_ops`; the runtime shim owns the OCI
 * state (<root>/<id>/state.json, the config, the hooks' JSON) and calls the tier for what only
 * the tier knows: how to build the container, release it, signal it and tell its status.
 *
 * Threading: the verbs are single-threaded processes; a tier may fork.
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cbox/compiler.h"
#include "cbox/err.h"

struct cbox_oci_config;
struct cbox_oci_process;
struct cbox_oci_resources;

enum cbox_tier_status {
	CBOX_TIER_CREATING = 0,
	CBOX_TIER_CREATED,
	CBOX_TIER_RUNNING,
	CBOX_TIER_STOPPED,
	CBOX_TIER_PAUSED, /* created or running, with its cgroup frozen (`cbox pause`) */
};

/* One container as a tier sees it. Strings are owned by the caller and outlive the call. */
struct cbox_tier_container {
	const char *id;
	const char *bundle;    /* absolute */
	const char *rootfs;    /* absolute: root.path resolved against the bundle */
	const char *state_dir; /* <root>/<id>, exists; the tier may keep its own files there */
	const struct cbox_oci_config *config; /* NULL for start/kill/delete/status */
	pid_t pid;                            /* the container's init: set by create */
	unsigned long long start_time;        /* its start time (/proc/PID/stat field 22) */
	/* create with process.terminal: a unix socket connected to the caller's --console-socket,
	 * where the tier sends the pty's master (SCM_RIGHTS, "/dev/ptmx" as runc does) before
	 * create returns */
	bool has_console;
	int console_sock;
	/* cbox --allow-dangerous-mounts: the admin lets binds of a container engine's socket or of
	 * /dev/kvm into a sentry sandbox (refused otherwise: sentry_plan.c) */
	bool allow_dangerous_mounts;
	/* cbox --cgroup-manager=disabled (crun's option): the container gets no cgroup of its own
	 * and stays in its creator's; a config with limits is refused. Its clean-up is then the
	 * pid namespace's (the init's death ends every process in it); ps, pause and update
	 * say it has no cgroup. cbox-run asks for it when it sets no limit: a cgroup's creation,
	 * joins and removal cost 2.4 ms of a 15 ms ns-tier start where it was measured (19 ms of
	 * 42 while a join still waited for an RCU grace period: tiers/cgroup/cgroup.c). */
	bool no_cgroup;
};

/* A process to start in a running container (`cbox exec`). */
struct cbox_tier_exec {
	const struct cbox_oci_process *process; /* what to run, as whom, with what rights */
	int console_sock; /* process->terminal: a unix socket connected to the caller's
	                     --console-socket, where the pty's master goes (SCM_RIGHTS); else -1 */
};

/*
 * Called by a tier's create once the container's process and namespaces exist and before its
 * root is switched (the point of the OCI prestart and createRuntime hooks), with c->pid set.
 * Returns >= 0, or < 0 with *err set: the tier then aborts the create.
 */
typedef int (*cbox_tier_created_fn)(void *data, const struct cbox_tier_container *c,
                                    struct cbox_err **err);

struct cbox_tier_ops {
	const char *name;    /* "ns", "sentry", ... */
	const char *summary; /* one line for `cbox tiers` */
	/* >= 0 when this host can run the tier; else < 0 and why[0..n) says what is missing. */
	int (*available)(char *why, size_t n);
	/*
	 * Build the container described by c->config (which must have a process) so that its
	 * process waits for start, then return, leaving it running without a parent to wait for
	 * it (the caller's subreaper adopts it). Sets c->pid and c->start_time. Calls created()
	 * once as described above. On failure nothing is left running. NULL: the tier exists but
	 * cannot be started through the OCI runtime yet.
	 */
	int (*create)(struct cbox_tier_container *c, cbox_tier_created_fn created, void *data,
	              struct cbox_err **err);
	/* Let a created container's process run (exec process.args). Precondition: status is
	 * CBOX_TIER_CREATED. */
	int (*start)(struct cbox_tier_container *c, struct cbox_err **err);
	/* Send sig to the container's init, or to every process of the container when all. */
	int (*kill)(struct cbox_tier_container *c, int sig, bool all, struct cbox_err **err);
	/* Release what the tier holds for a stopped container (processes already gone). */
	int (*delete)(struct cbox_tier_container *c, struct cbox_err **err);
	/* The container's status from c->pid, c->start_time and the tier's files. */
	enum cbox_tier_status (*status)(const struct cbox_tier_container *c);
	/* The host pids of the container's own processes (what `cbox ps` lists: the program's,
	 * not the tier's machinery), into *pids (malloc'd, never NULL on success; the caller
	 * frees it) and *n. */
	int (*pids)(const struct cbox_tier_container *c, pid_t **pids, size_t *n,
	            struct cbox_err **err);
	/* Freeze (true) or thaw the container's processes. ENOTSUP when the host cannot. */
	int (*pause)(struct cbox_tier_container *c, bool frozen, struct cbox_err **err);
	/* Apply the limits set in r to the running container. */
	int (*update)(struct cbox_tier_container *c, const struct cbox_oci_resources *r,
	              struct cbox_err **err);
	/*
	 * Start x->process in the container (c->config is the container's config.json: its
	 * namespaces, seccomp) and return once it runs the program (or failed to: the error says
	 * why), its host pid in *pid: a child of the caller, who waits for it or leaves it to its
	 * subreaper. NULL: the tier cannot exec into a container. Precondition: the container
	 * runs (status CBOX_TIER_RUNNING).
	 */
	int (*exec)(struct cbox_tier_container *c, const struct cbox_tier_exec *x, pid_t *pid,
	            struct cbox_err **err);
};

/* Every tier cbox knows, in the order `cbox tiers` prints them; *n gets the count. */
CBOX_API const struct cbox_tier_ops *const *cbox_tier_list(size_t *n);

/*
 * The tier called name, usable on this host. Errors: an unknown name (errno 0), ENOTSUP when
 * this host cannot run it or the OCI runtime cannot start it yet; the message lists the tiers
 * this host supports.
 */
CBOX_API int cbox_tier_find(const char *name, const struct cbox_tier_ops **out,
                            struct cbox_err **err);

/* The name of a status as in the OCI state ("created", ...). */
CBOX_API const char *cbox_tier_status_name(enum cbox_tier_status s);

/* The default tier when neither --tier nor the dev.cbox.tier annotation chose one. */
#define CBOX_TIER_DEFAULT "sentry"
/* The annotation that chooses the tier of an OCI container. */
#define CBOX_TIER_ANNOTATION "dev.cbox.tier"

/* Start time of pid (field 22 of /proc/PID/stat), or 0 when it does not exist. */
CBOX_API unsigned long long cbox_tier_proc_start_time(pid_t pid);

/* True when pid is alive, is not a zombie, and started at start_time (not a reused pid). */
CBOX_API bool cbox_tier_proc_alive(pid_t pid, unsigned long long start_time);

/*
 * The host pids of every process in the pid namespace member is in, into *pids (malloc'd, the
 * caller frees it) and *n; only member when that namespace is the caller's own. Errors: ESRCH
 * when member is gone, reading /proc, ENOMEM.
 */
CBOX_API int cbox_tier_pidns_pids(pid_t member, pid_t **pids, size_t *n, struct cbox_err **err);

/*
 * `start` for tiers that block their container on <state>/exec.fifo (as runc does): open the
 * fifo's reading end, which releases the process blocked opening its writing end, and remove
 * it. who names that process in errors ("the container's init"). Fails when it is gone
 * (c->pid and c->start_time) or has not started within 10 s.
 */
CBOX_API int cbox_tier_release_fifo(struct cbox_tier_container *c, const char *who,
                                    struct cbox_err **err);

/* The ns tier: plain namespaces, pivot_root, capabilities, seccomp (like runc/crun). */
extern const struct cbox_tier_ops cbox_tier_ns;

/* ---- a tier's runtime and its container processes talk in these (SOCK_SEQPACKET pairs) ---- */
struct cbox_tier_msg {
	int type; /* the tier's own message kinds */
	int value;
	char text[1024]; /* an error message, NUL-terminated */
};
/* Send one message (text may be NULL). 0 or -errno. */
CBOX_API int cbox_tier_msg_send(int sock, int type, int value, const char *text);

/*
 * A container's terminal (process.terminal), as runc hands it over: a new pty (the caller's
 * /dev/ptmx: the container's own for the ns tier, the host's for the sentry's sandbox), its
 * master sent over console_sock with "/dev/ptmx" as the payload, its slave given to uid:gid
 * ((uid_t)-1: unchanged) and returned, close-on-exec. Errors name the step.
 */
CBOX_API int cbox_tier_console_open(int console_sock, uid_t uid, gid_t gid, struct cbox_err **err);
/* Receive one: 1, 0 when the peer is gone (EOF), -EPROTO for a wrong size, or -errno. */
CBOX_API int cbox_tier_msg_recv(int sock, struct cbox_tier_msg *m);

/* ---- the container's cgroup, shared by the tiers (tiers/tier_cgroup.c) ---- */
struct cbox_cgroup;
/* Create the container's cgroup (linux.cgroupsPath, or cbox/<id>) with linux.resources'
 * limits and record it in the state directory. *out is NULL when the host has no usable cgroup
 * and no limit was asked for. Errors name the file and the value. */
CBOX_API int cbox_tier_cgroup_create(const struct cbox_tier_container *c, struct cbox_cgroup **out,
                                     struct cbox_err **err);
/* After a failed create: kill what is in cg, remove it and its record. NULL-safe. */
CBOX_API void cbox_tier_cgroup_abort(const struct cbox_tier_container *c, struct cbox_cgroup *cg);
/* Whether create recorded a cgroup for c (a host without cgroups has none). */
CBOX_API bool cbox_tier_cgroup_recorded(const struct cbox_tier_container *c);
/* The recorded cgroup of c into *cg, NULL when it has none. Errors: a malformed record. */
CBOX_API int cbox_tier_cgroup_load(const struct cbox_tier_container *c, struct cbox_cgroup **cg,
                                   struct cbox_err **err);
/* Whether the recorded cgroup is frozen; false without a record or a freezer. */
CBOX_API bool cbox_tier_cgroup_frozen(const struct cbox_tier_container *c);
/* The pause op for tiers whose whole container lives in its cgroup: freeze or thaw it. Errors:
 * no record (the container has no cgroup), or the freezer's. */
CBOX_API int cbox_tier_cgroup_pause(struct cbox_tier_container *c, bool frozen,
                                    struct cbox_err **err);
/* The update op likewise: the limits set in r, written to the recorded cgroup. */
CBOX_API int cbox_tier_cgroup_update(struct cbox_tier_container *c,
                                     const struct cbox_oci_resources *r, struct cbox_err **err);
/* The processes in the recorded cgroup (see cbox_cgroup_pids). Errors as for pause. */
CBOX_API int cbox_tier_cgroup_pids(const struct cbox_tier_container *c, pid_t **pids, size_t *n,
                                   struct cbox_err **err);
/* `delete`: kill what is left in the recorded cgroup and remove it; warns when its memory
 * limit killed a process. No record: nothing to do. */
CBOX_API int cbox_tier_cgroup_delete(const struct cbox_tier_container *c, struct cbox_err **err);
