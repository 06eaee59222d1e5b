#pragma once
/*
 * The part of an OCI bundle's config.json (runtime-spec 1.x) that cbox uses, parsed strictly:
 * unknown fields are ignored, a JSON null counts as absent, a value of the wrong type or an
 * unknown enumeration value is refused with a message naming its JSON path
 * ("config.json: process.args[2]: expected a string"), and a missing required field (ociVersion,
 * root.path, process.args when process is present) is named.
 *
 * Every string array is also NULL-terminated, so args/env go to execve as they are.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cbox/cleanup.h"
#include "cbox/compiler.h"
#include "cbox/err.h"

struct cbox_oci_user {
	uint32_t uid, gid;
	uint32_t *additional_gids;
	size_t n_additional_gids;
	bool has_umask;
	uint32_t umask;
};

struct cbox_oci_rlimit {
	int resource; /* RLIMIT_* */
	uint64_t soft, hard;
};

/* Capability sets as bit masks (bit n = capability n). Unknown names are skipped. */
struct cbox_oci_caps {
	uint64_t bounding, effective, permitted, inheritable, ambient;
};

struct cbox_oci_process {
	bool terminal;
	struct cbox_oci_user user;
	char **args; /* at least one element */
	size_t n_args;
	char **env;
	size_t n_env;
	char *cwd; /* "/" when absent */
	bool has_caps;
	struct cbox_oci_caps caps;
	struct cbox_oci_rlimit *rlimits;
	size_t n_rlimits;
	bool no_new_privileges;
};

struct cbox_oci_mount {
	char *destination; /* required */
	char *type;        /* may be NULL */
	char *source;      /* may be NULL */
	char **options;
	size_t n_options;
};

enum cbox_oci_hook_kind {
	CBOX_OCI_HOOK_PRESTART = 0,
	CBOX_OCI_HOOK_CREATE_RUNTIME,
	CBOX_OCI_HOOK_CREATE_CONTAINER,
	CBOX_OCI_HOOK_START_CONTAINER,
	CBOX_OCI_HOOK_POSTSTART,
	CBOX_OCI_HOOK_POSTSTOP,
	CBOX_OCI_HOOK_KINDS,
};

struct cbox_oci_hook {
	char *path; /* required, absolute */
	char **args;
	size_t n_args;
	char **env;
	size_t n_env;
	int timeout; /* seconds; 0: none */
};

struct cbox_oci_kv {
	char *key, *value;
};

struct cbox_oci_namespace {
	int type;   /* CLONE_NEW* */
	char *path; /* NULL: a new namespace; else join the one at this path */
};

struct cbox_oci_idmap {
	uint32_t container_id, host_id, size;
};

struct cbox_oci_resources {
	bool has_memory_limit, has_memory_swap, has_cpu_shares, has_cpu_quota, has_cpu_period,
	    has_pids_limit;
	int64_t memory_limit, memory_swap, cpu_quota, pids_limit;
	uint64_t cpu_shares, cpu_period;
	char *cpus; /* cpuset, may be NULL */
};

enum cbox_oci_seccomp_action {
	CBOX_OCI_SCMP_KILL = 0, /* SCMP_ACT_KILL and SCMP_ACT_KILL_THREAD */
	CBOX_OCI_SCMP_KILL_PROCESS,
	CBOX_OCI_SCMP_TRAP,
	CBOX_OCI_SCMP_ERRNO,
	CBOX_OCI_SCMP_TRACE,
	CBOX_OCI_SCMP_ALLOW,
	CBOX_OCI_SCMP_LOG,
	CBOX_OCI_SCMP_NOTIFY,
};

enum cbox_oci_seccomp_op {
	CBOX_OCI_OP_NE = 0,
	CBOX_OCI_OP_LT,
	CBOX_OCI_OP_LE,
	CBOX_OCI_OP_EQ,
	CBOX_OCI_OP_GE,
	CBOX_OCI_OP_GT,
	CBOX_OCI_OP_MASKED_EQ,
};

struct cbox_oci_seccomp_arg {
	uint32_t index;
	uint64_t value, value_two;
	enum cbox_oci_seccomp_op op;
};

struct cbox_oci_seccomp_rule {
	char **names;
	size_t n_names;
	enum cbox_oci_seccomp_action action;
	bool has_errno_ret;
	uint32_t errno_ret;
	struct cbox_oci_seccomp_arg *args;
	size_t n_args;
};

struct cbox_oci_seccomp {
	enum cbox_oci_seccomp_action default_action;
	bool has_default_errno_ret;
	uint32_t default_errno_ret;
	char **architectures; /* "SCMP_ARCH_X86_64", ... */
	size_t n_architectures;
	struct cbox_oci_seccomp_rule *rules;
	size_t n_rules;
};

struct cbox_oci_linux {
	struct cbox_oci_namespace *namespaces;
	size_t n_namespaces;
	struct cbox_oci_idmap *uid_mappings, *gid_mappings;
	size_t n_uid_mappings, n_gid_mappings;
	bool has_resources;
	struct cbox_oci_resources resources;
	char *cgroups_path;
	struct cbox_oci_kv *sysctl;
	size_t n_sysctl;
	struct cbox_oci_seccomp *seccomp; /* NULL: none */
	char **masked_paths;
	size_t n_masked_paths;
	char **readonly_paths;
	size_t n_readonly_paths;
	char *rootfs_propagation; /* NULL, or shared|slave|private|unbindable (r-prefixed too) */
};

struct cbox_oci_config {
	char *oci_version;
	bool has_process;
	struct cbox_oci_process process;
	char *root_path; /* as written: relative to the bundle or absolute */
	bool root_readonly;
	char *hostname;
	struct cbox_oci_mount *mounts;
	size_t n_mounts;
	struct cbox_oci_hook *hooks[CBOX_OCI_HOOK_KINDS];
	size_t n_hooks[CBOX_OCI_HOOK_KINDS];
	struct cbox_oci_kv *annotations;
	size_t n_annotations;
	bool has_linux;
	struct cbox_oci_linux linux_;
};

/*
 * Parse len bytes of config.json. On success *out owns a new config (free it with
 * cbox_oci_config_free). Errors: EINVAL with "config.json: PATH: what was expected" or
 * "config.json: invalid JSON at byte N: why"; ENOMEM. The bytes need not be NUL-terminated.
 */
CBOX_API int cbox_oci_config_parse(const char *json, size_t len, struct cbox_oci_config **out,
                                   struct cbox_err **err);

/* Read fd to its end into *buf (malloc'd, NUL-terminated, *len bytes without the NUL): files
 * and pipes alike. Returns 0, -EFBIG when it holds more than max bytes, -ENOMEM, or the
 * -errno of a failed read. */
int cbox_oci_read_fd(int fd, size_t max, char **buf, size_t *len);

/* Read and parse BUNDLE/config.json (see cbox_oci_config_parse). Errors also: the errno of
 * opening or reading the file, naming it. */
CBOX_API int cbox_oci_config_load(const char *bundle, struct cbox_oci_config **out,
                                  struct cbox_err **err);

/* The value of annotation key, or NULL. */
CBOX_API const char *cbox_oci_config_annotation(const struct cbox_oci_config *c, const char *key);

/* The name of a hook kind as in config.json ("prestart", "createRuntime", ...). */
CBOX_API const char *cbox_oci_hook_kind_name(enum cbox_oci_hook_kind kind);

/* Capability number for a name such as "CAP_SYS_ADMIN", or -1 when unknown. */
CBOX_API int cbox_oci_cap_from_name(const char *name);
/* Every capability name cbox knows, by number, NULL-terminated (for `cbox features`). */
CBOX_API const char *const *cbox_oci_cap_names(void);

/*
 * Parse a process object on its own (runc's `exec --process FILE`), with config.json's rules for
 * "process"; errors name name and the path inside ("process.json: args[1]: expected a string").
 * On success *out owns what it points to (cbox_oci_process_release); on failure *out is empty.
 */
CBOX_API int cbox_oci_process_parse(const char *json, size_t len, const char *name,
                                    struct cbox_oci_process *out, struct cbox_err **err);
/* Free what p holds and zero it (not p itself). */
CBOX_API void cbox_oci_process_release(struct cbox_oci_process *p);

/*
 * Parse a LinuxResources object on its own (runc's `update --resources FILE`, what `docker
 * update` sends), with config.json's rules for linux.resources; errors name name and the path
 * inside ("resources: memory.limit: expected an integer"). Members cbox does not apply
 * (blockIO, hugepageLimits, ...) are ignored. Release with cbox_oci_resources_release.
 */
CBOX_API int cbox_oci_resources_parse(const char *json, size_t len, const char *name,
                                      struct cbox_oci_resources *out, struct cbox_err **err);
/* Free what r holds and zero it. */
CBOX_API void cbox_oci_resources_release(struct cbox_oci_resources *r);

/* Free a config and everything it holds; NULL-safe. */
CBOX_API void cbox_oci_config_free(struct cbox_oci_config *c);
CBOX_DEFINE_AUTO(cbox_oci_config, cbox_oci_config_free)
