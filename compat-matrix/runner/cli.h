#pragma once
/*
 * What the subcommands of cbox-compat share: the targets, the paths of the binaries beside
 * cbox-compat, loading the syscall table and the results of every target. Each subcommand is
 * `int cbox_compat_cmd_<verb>(int argc, char **argv)` (argv[0] is the verb) returning the
 * process exit status.
 */
#include <stdbool.h>
#include <stddef.h>

#include "compat.h"

/* Exit status of a usage or setup error. */
#define CBOX_COMPAT_EXIT_USAGE 2

struct cbox_compat_target {
	const char *name;
	const char *platform; /* cbox-run --platform=..., NULL for native and the tiers */
	bool strict;          /* cbox-run --strict */
	bool tier;            /* a sibling tier: not implemented yet */
	const char *oci_tier; /* an OCI tier run through `cbox --tier NAME run`, else NULL */
};

/* Whether the target runs its jobs in a sandbox (cbox-run or an OCI tier), whose exit status
 * 128+N reports its guest's death by signal N. */
bool cbox_compat_target_sandboxed(const struct cbox_compat_target *t);

/* Whether the target runs under the sentry, whose syscall table `check` judges: the ns tier
 * runs the host kernel, so its failures are reported, never errors of the table. */
bool cbox_compat_target_judged(const struct cbox_compat_target *t);

/* Every target, in the order of reports: native first. */
extern const struct cbox_compat_target cbox_compat_targets[];
extern const size_t cbox_compat_ntargets;

/* The target named name, or NULL. */
const struct cbox_compat_target *cbox_compat_target_find(const char *name);

/* Paths resolved once per process; every string owned by the struct. */
struct cbox_compat_paths {
	char *self_dir; /* directory of cbox-compat (readlink /proc/self/exe) */
	char *cbox_run; /* $CBOX_RUN or <self_dir>/cbox-run */
	char *cbox;     /* $CBOX or <self_dir>/cbox */
};

/* Resolve the paths. Returns 0, < 0 with err (readlink failing, ENOMEM). */
int cbox_compat_paths_init(struct cbox_compat_paths *p, struct cbox_err **err);
void cbox_compat_paths_free(struct cbox_compat_paths *p);

/* Whether target t can run here; when not, *why (static string or NULL) says why. For the
 * sandbox targets: cbox-run must be an executable file. For an OCI tier: running as root, and
 * `cbox tiers` must list the tier as available (asked once per process, then cached). */
bool cbox_compat_target_available(const struct cbox_compat_target *t,
                                  const struct cbox_compat_paths *p, const char **why);

/*
 * Parse a --target list (comma-separated names) into a new array of targets (free() it) and
 * *n. NULL list: every available target. An unknown or unavailable name is an error whose
 * message lists the available targets.
 */
const struct cbox_compat_target **cbox_compat_targets_select(const char *list,
                                                             const struct cbox_compat_paths *p,
                                                             size_t *n, struct cbox_err **err);

/* The syscall table: parsed from file when not NULL, else from `<cbox> syscalls --json`.
 * Returns 0, < 0 with err. */
int cbox_compat_table_load(const char *file, const struct cbox_compat_paths *p,
                           struct cbox_compat_table *out, struct cbox_err **err);

/* The results of every target in dir (<dir>/<target>.tsv; a missing file gives an empty set
 * with present[i] false). out and present have cbox_compat_ntargets entries; free the sets
 * with cbox_compat_results_free. Returns 0, < 0 with err. */
int cbox_compat_results_load_all(const char *dir, struct cbox_compat_results **out, bool *present,
                                 struct cbox_err **err);

/*
 * The capabilities object ("process.capabilities", as JSON text) of the config `<cbox> spec`
 * writes, so that the OCI tier targets give their jobs the same defaults as a new bundle.
 * Returns a new string, or NULL with err (cbox spec failing, no such object in its output).
 */
char *cbox_compat_spec_capabilities(const char *cbox, struct cbox_err **err);

/* Read a whole file (at most max bytes) into a new NUL-terminated buffer. Returns 0, < 0. */
int cbox_compat_read_file(const char *path, size_t max, char **buf, size_t *len,
                          struct cbox_err **err);

int cbox_compat_cmd_run(int argc, char **argv);
int cbox_compat_cmd_report(int argc, char **argv);
int cbox_compat_cmd_check(int argc, char **argv);
int cbox_compat_cmd_targets(int argc, char **argv);
