#pragma once
/*
 * The OCI runtime verbs of `cbox` (runc's command line: create, start, state, kill, delete, run,
 * list, spec, features, ps, pause, resume, update, exec) and what they share: the global options
 * and the container's state in <root>/<id>/state.json.
 */
#include <json-c/json.h>
#include <stdbool.h>
#include <sys/types.h>

#include "cbox/err.h"
#include "cbox/tier.h"
#include "oci_config.h"

/* The OCI runtime-spec version cbox implements. */
#define CBOX_OCI_VERSION "1.2.0"

struct cbox_oci_global {
	const char *root; /* state root, default /run/cbox */
	const char *tier; /* --tier, or NULL */
	bool debug;
	bool systemd_cgroup;         /* accepted; cgroupfs is used */
	bool no_cgroup;              /* --cgroup-manager=disabled: see struct cbox_tier_container */
	bool allow_dangerous_mounts; /* see struct cbox_tier_container */
};

/* A container's saved state (state.json). Strings owned by the struct. */
struct cbox_oci_state {
	char *id, *bundle, *rootfs, *tier, *created;
	pid_t pid;
	unsigned long long start_time;
	json_object *annotations; /* an object, never NULL after a load */
	char dir[4096];           /* <root>/<id> */
};

/* Every verb: argc/argv start at the verb's name; returns the process exit status. */
int cbox_oci_create(const struct cbox_oci_global *g, int argc, char **argv);
int cbox_oci_start(const struct cbox_oci_global *g, int argc, char **argv);
int cbox_oci_state_verb(const struct cbox_oci_global *g, int argc, char **argv);
int cbox_oci_kill(const struct cbox_oci_global *g, int argc, char **argv);
int cbox_oci_delete(const struct cbox_oci_global *g, int argc, char **argv);
int cbox_oci_run(const struct cbox_oci_global *g, int argc, char **argv);
int cbox_oci_list(const struct cbox_oci_global *g, int argc, char **argv);
int cbox_oci_spec(const struct cbox_oci_global *g, int argc, char **argv);
int cbox_oci_features(const struct cbox_oci_global *g, int argc, char **argv);
int cbox_oci_tiers(const struct cbox_oci_global *g, int argc, char **argv);
int cbox_oci_ps(const struct cbox_oci_global *g, int argc, char **argv);
int cbox_oci_pause(const struct cbox_oci_global *g, int argc, char **argv);
int cbox_oci_resume(const struct cbox_oci_global *g, int argc, char **argv);
int cbox_oci_update(const struct cbox_oci_global *g, int argc, char **argv);
int cbox_oci_exec(const struct cbox_oci_global *g, int argc, char **argv);
/* `cbox install`: add cbox to Docker's daemon.json (see oci_install.c); --tier is the default of
 * the entry's tier. */
int cbox_oci_install(const struct cbox_oci_global *g, int argc, char **argv);

/*
 * Check a container id: 1..1024 characters of [A-Za-z0-9_+.-], not "." or "..", so that
 * <root>/<id> always names one directory directly under root. Errors: EINVAL naming the id.
 */
int cbox_oci_id_check(const char *id, struct cbox_err **err);

/* Write st to st->dir/state.json atomically (a temporary file renamed over it). */
int cbox_oci_state_save(const struct cbox_oci_state *st, struct cbox_err **err);

/* Load the state of container id under root. Errors: "container X does not exist" (errno 0). */
int cbox_oci_state_load(const char *root, const char *id, struct cbox_oci_state *st,
                        struct cbox_err **err);

/* Free what st holds (not st itself). */
void cbox_oci_state_release(struct cbox_oci_state *st);

/* The tier st names, and a tier view of the container (strings borrowed from st). */
int cbox_oci_state_tier(const struct cbox_oci_state *st, const struct cbox_tier_ops **tier,
                        struct cbox_tier_container *c, struct cbox_err **err);

/*
 * Load the state of container id and its tier (cbox_oci_state_load, then cbox_oci_state_tier), and
 * its status into *status. On failure st holds nothing. The caller releases st.
 */
int cbox_oci_container_open(const struct cbox_oci_global *g, const char *id,
                            struct cbox_oci_state *st, const struct cbox_tier_ops **tier,
                            struct cbox_tier_container *c, enum cbox_tier_status *status,
                            struct cbox_err **err);

/* The OCI state JSON of st with status (what `state` prints and hooks read on stdin). Caller
 * frees with json_object_put. */
json_object *cbox_oci_state_json(const struct cbox_oci_state *st, const char *status);

/*
 * Run the hooks of kind from cfg in order, each with the state JSON on stdin, its args and env,
 * killed after its timeout. Errors: the first hook that could not run, failed or timed out.
 */
int cbox_oci_hooks_run(const struct cbox_oci_config *cfg, enum cbox_oci_hook_kind kind,
                       const char *state_json, struct cbox_err **err);

/*
 * Run st's hooks of kind (poststart, poststop) with st's state JSON at status. These run after
 * the container changed state, so a failure is only logged: the runtime-spec says the start or
 * delete goes on.
 */
void cbox_oci_post_hooks_run(const struct cbox_oci_state *st, enum cbox_oci_hook_kind kind,
                             const char *status);

/* Remove <dir> and the files in it (state dirs hold no subdirectories). */
int cbox_oci_state_remove(const char *dir, struct cbox_err **err);

/*
 * Re-exec this process (same argv and environment) from a sealed memfd copy of its binary, unless
 * it already runs from one (then return 0): see oci_sealed.c. Returns only on failure, naming
 * the step.
 */
int cbox_oci_reexec_sealed(char **argv, struct cbox_err **err);

/* Write pid to path through a temporary file renamed over it (what --pid-file names). */
int cbox_oci_write_pid_file(const char *path, pid_t pid, struct cbox_err **err);

/* Parse a signal: a number, "KILL" or "SIGKILL". Returns it, or -1. */
int cbox_oci_signal_parse(const char *s);

/* create's work, shared by run: the container exists and waits for start on success. */
int cbox_oci_do_create(const struct cbox_oci_global *g, const char *id, const char *bundle,
                       const char *pid_file, int console_sock, struct cbox_err **err);
/* start's work, shared by run. */
int cbox_oci_do_start(const struct cbox_oci_global *g, const char *id, struct cbox_err **err);
/* delete's work, shared by run: force kills a running container first. */
int cbox_oci_do_delete(const struct cbox_oci_global *g, const char *id, bool force,
                       struct cbox_err **err);

/* Consoles (oci_console.c). Connect to a --console-socket path; errors name it. */
int cbox_oci_console_connect(const char *path, struct cbox_err **err);
/* The terminal's master, sent over sock (SCM_RIGHTS) by whoever made the pty, or -1. */
int cbox_oci_console_recv(int sock, struct cbox_err **err);
/* Copy between the caller's terminal and master until pid exits (the caller's child); its
 * status as a shell's. */
int cbox_oci_console_relay(int master, pid_t pid);
