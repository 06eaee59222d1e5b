#pragma once
/* The sentry tier's parts (tiers/sentry/ only). */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cbox/err.h"
#include "cbox/gofer.h"
#include "cbox/sentry.h"
#include "cbox/tier.h"
#include "oci_config.h"

/*
 * What one sentry sandbox is made of, translated from config.json before anything starts (so
 * that a config the sentry cannot honour fails `cbox create` with a message, nothing running).
 * Every string the gofer and sentry configs point to is owned by the plan or by the OCI config,
 * which must outlive it.
 */
struct sentry_plan {
	struct cbox_gofer_config gofer;
	struct cbox_sentry_config sentry; /* gofer_sock is filled in by the sentry process */
	const char *netns_path; /* a network namespace to join (Docker's), or NULL: a new one */
	const struct cbox_oci_rlimit *rlimits;
	size_t n_rlimits;
	/* linux.sysctl (checked by sentry_plan_build: the sandbox's network and IPC namespaces'
	 * only), applied by the monitor */
	const struct cbox_oci_kv *sysctl;
	size_t n_sysctl;
	bool root_readonly; /* root.readonly, or a readonlyPaths entry that leads to the root */
	/* storage */
	struct cbox_gofer_mount *mounts;
	size_t n_mounts;
	const char **hide;
	size_t n_hide;
	char **strings; /* allocated paths the mounts point to */
	size_t n_strings;
};

/*
 * Translate c->config (root, mounts, maskedPaths, readonlyPaths, process, hostname, namespaces,
 * annotations dev.cbox.platform / dev.cbox.strict) into *p. Errors (EINVAL/ENOTSUP, the message
 * names the config.json field): process.user other than 0:0 for a runtime not run as root
 * (p->sentry points into c->config for the groups), a mount type the sentry does not
 * serve, a malformed size= or annotation, an unknown platform; ENOMEM. On failure *p is freed.
 */
int sentry_plan_build(const struct cbox_tier_container *c, struct sentry_plan *p,
                      struct cbox_err **err);

/* Whether sysctl key (dotted) belongs to the sandbox's IPC namespace rather than its network
 * namespace (see sentry_plan.c). */
bool sentry_sysctl_is_ipc(const char *key);

/* Free what sentry_plan_build allocated; safe on a zeroed plan. */
void sentry_plan_free(struct sentry_plan *p);

/* The tier's create op (see cbox_tier_ops.create). */
int sentry_tier_create(struct cbox_tier_container *c, cbox_tier_created_fn created, void *data,
                       struct cbox_err **err);

/*
 * The sandbox monitor's whole life (the container's pid): see sentry_create.c. sock talks to
 * the runtime's create; state_dir holds exec.fifo and sentry.pid. Never returns.
 */
CBOX_NORETURN void sentry_monitor_main(struct sentry_plan *p, const char *state_dir, int sock);

/* Messages on the SOCK_SEQPACKET pair between the runtime's create and the monitor. */
enum sentry_msg_type {
	SENTRY_MSG_HOOKS = 1, /* monitor -> runtime: namespaces exist: run the hooks */
	SENTRY_MSG_READY,     /* monitor -> runtime: everything set up, waiting for start */
	SENTRY_MSG_ERROR,     /* monitor -> runtime: text = why; the monitor exits */
	SENTRY_MSG_GO,        /* runtime -> monitor: carry on */
};

/* Runtime <-> monitor messages: struct cbox_tier_msg (cbox/tier.h). */

/* <state_dir>/sentry.pid: "PID STARTTIME" of the sentry process, written by the monitor. */
#define SENTRY_PID_FILE "sentry.pid"
/* The host uid (and gid) the sandbox's uid 0 maps to when cbox runs as root. */
#define SENTRY_SANDBOX_UID 65534
#define SENTRY_EXEC_SOCK   "exec.sock" /* `cbox exec` connects here (sentry_monitor.c) */

/* The tier's exec op (sentry_exec.c), and the exec socket of a state directory: bound and
 * listening (the monitor) or connected (the op). */
int sentry_exec_socket(const char *state_dir, bool listen_on, struct cbox_err **err);
/* A pty for process.terminal (create, exec): the master sent over console_sock, the slave
 * returned (sentry_exec.c). */
int sentry_console_open(int console_sock, struct cbox_err **err);
int sentry_exec(struct cbox_tier_container *c, const struct cbox_tier_exec *x, pid_t *pid,
                struct cbox_err **err);
