/* config.json: the "linux" object, and freeing a parsed config. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "oci_config_internal.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static const struct {
	const char *name;
	int flag;
} ns_names[] = {
    {"pid", CLONE_NEWPID},       {"network", CLONE_NEWNET}, {"mount", CLONE_NEWNS},
    {"ipc", CLONE_NEWIPC},       {"uts", CLONE_NEWUTS},     {"user", CLONE_NEWUSER},
    {"cgroup", CLONE_NEWCGROUP}, {"time", CLONE_NEWTIME},
};

static int parse_ns(struct oci_path *p, json_object *e, void *out)
{
	struct cbox_oci_namespace *o = out;
	CBOX_AUTOFREE char *type = NULL;
	int r;
	if ((r = oci_require(p, oci_get_string(p, e, "type", &type), "type")) < 0 ||
	    (r = oci_get_string(p, e, "path", &o->path)) < 0)
		return r;
	if (o->path && o->path[0] != '/')
		return oci_fail_key(p, "path", "must be an absolute path");
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(ns_names); i++)
		if (!strcmp(type, ns_names[i].name)) {
			o->type = ns_names[i].flag;
			return 1;
		}
	return oci_fail_key(p, "type", "unknown namespace type '%s'", type);
}

static int parse_idmap(struct oci_path *p, json_object *e, void *out)
{
	struct cbox_oci_idmap *o = out;
	int r;
	if ((r = oci_require(p, oci_get_u32(p, e, "containerID", &o->container_id),
	                     "containerID")) < 0 ||
	    (r = oci_require(p, oci_get_u32(p, e, "hostID", &o->host_id), "hostID")) < 0 ||
	    (r = oci_require(p, oci_get_u32(p, e, "size", &o->size), "size")) < 0)
		return r;
	return 1;
}

static int parse_resources(struct oci_path *p, json_object *res, struct cbox_oci_resources *o)
{
	json_object *x;
	int r;
	if ((r = oci_get_object(p, res, "memory", &x)) < 0)
		return r;
	if (r > 0) {
		size_t old = oci_path_key(p, "memory");
		if ((r = oci_get_i64(p, x, "limit", &o->memory_limit)) < 0)
			return r;
		o->has_memory_limit = r > 0;
		if ((r = oci_get_i64(p, x, "swap", &o->memory_swap)) < 0)
			return r;
		o->has_memory_swap = r > 0;
		oci_path_pop(p, old);
	}
	if ((r = oci_get_object(p, res, "cpu", &x)) < 0)
		return r;
	if (r > 0) {
		size_t old = oci_path_key(p, "cpu");
		if ((r = oci_get_u64(p, x, "shares", &o->cpu_shares)) < 0)
			return r;
		o->has_cpu_shares = r > 0;
		if ((r = oci_get_i64(p, x, "quota", &o->cpu_quota)) < 0)
			return r;
		o->has_cpu_quota = r > 0;
		if ((r = oci_get_u64(p, x, "period", &o->cpu_period)) < 0)
			return r;
		o->has_cpu_period = r > 0;
		if ((r = oci_get_string(p, x, "cpus", &o->cpus)) < 0)
			return r;
		oci_path_pop(p, old);
	}
	if ((r = oci_get_object(p, res, "pids", &x)) < 0)
		return r;
	if (r > 0) {
		size_t old = oci_path_key(p, "pids");
		if ((r = oci_require(p, oci_get_i64(p, x, "limit", &o->pids_limit), "limit")) < 0)
			return r;
		o->has_pids_limit = true;
		oci_path_pop(p, old);
	}
	return 1;
}

int cbox_oci_resources_parse(const char *json, size_t len, const char *name,
                             struct cbox_oci_resources *out, struct cbox_err **err)
{
	json_object *top;
	memset(out, 0, sizeof(*out));
	if (oci_parse_document(json, len, name, &top, err) < 0)
		return -1;
	struct oci_path p = {.err = err, .file = name};
	int r = json_object_is_type(top, json_type_object) ? parse_resources(&p, top, out)
	                                                   : oci_fail(&p, "expected an object");
	json_object_put(top);
	if (r < 0) {
		cbox_oci_resources_release(out);
		return r;
	}
	return 0;
}

void cbox_oci_resources_release(struct cbox_oci_resources *r)
{
	free(r->cpus);
	memset(r, 0, sizeof(*r));
}

static const char *const action_names[] = {
    [CBOX_OCI_SCMP_KILL] = "SCMP_ACT_KILL",
    [CBOX_OCI_SCMP_KILL_PROCESS] = "SCMP_ACT_KILL_PROCESS",
    [CBOX_OCI_SCMP_TRAP] = "SCMP_ACT_TRAP",
    [CBOX_OCI_SCMP_ERRNO] = "SCMP_ACT_ERRNO",
    [CBOX_OCI_SCMP_TRACE] = "SCMP_ACT_TRACE",
    [CBOX_OCI_SCMP_ALLOW] = "SCMP_ACT_ALLOW",
    [CBOX_OCI_SCMP_LOG] = "SCMP_ACT_LOG",
    [CBOX_OCI_SCMP_NOTIFY] = "SCMP_ACT_NOTIFY",
};

static int parse_action(struct oci_path *p, json_object *e, const char *key, bool required,
                        enum cbox_oci_seccomp_action *out)
{
	CBOX_AUTOFREE char *s = NULL;
	int r = oci_get_string(p, e, key, &s);
	if (required)
		r = oci_require(p, r, key);
	if (r <= 0)
		return r;
	if (!strcmp(s, "SCMP_ACT_KILL_THREAD")) {
		*out = CBOX_OCI_SCMP_KILL;
		return 1;
	}
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(action_names); i++)
		if (!strcmp(s, action_names[i])) {
			*out = (enum cbox_oci_seccomp_action)i;
			return 1;
		}
	return oci_fail_key(p, key, "unknown seccomp action '%s'", s);
}

static const char *const op_names[] = {
    [CBOX_OCI_OP_NE] = "SCMP_CMP_NE",
    [CBOX_OCI_OP_LT] = "SCMP_CMP_LT",
    [CBOX_OCI_OP_LE] = "SCMP_CMP_LE",
    [CBOX_OCI_OP_EQ] = "SCMP_CMP_EQ",
    [CBOX_OCI_OP_GE] = "SCMP_CMP_GE",
    [CBOX_OCI_OP_GT] = "SCMP_CMP_GT",
    [CBOX_OCI_OP_MASKED_EQ] = "SCMP_CMP_MASKED_EQ",
};

static int parse_arg(struct oci_path *p, json_object *e, void *out)
{
	struct cbox_oci_seccomp_arg *o = out;
	CBOX_AUTOFREE char *op = NULL;
	int r;
	if ((r = oci_require(p, oci_get_u32(p, e, "index", &o->index), "index")) < 0 ||
	    (r = oci_require(p, oci_get_u64(p, e, "value", &o->value), "value")) < 0 ||
	    (r = oci_get_u64(p, e, "valueTwo", &o->value_two)) < 0 ||
	    (r = oci_require(p, oci_get_string(p, e, "op", &op), "op")) < 0)
		return r;
	if (o->index > 5)
		return oci_fail_key(p, "index", "must be between 0 and 5");
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(op_names); i++)
		if (!strcmp(op, op_names[i])) {
			o->op = (enum cbox_oci_seccomp_op)i;
			return 1;
		}
	return oci_fail_key(p, "op", "unknown operator '%s'", op);
}

static int parse_rule(struct oci_path *p, json_object *e, void *out)
{
	struct cbox_oci_seccomp_rule *o = out;
	int r;
	if ((r = oci_require(p, oci_get_strv(p, e, "names", &o->names, &o->n_names), "names")) <
	        0 ||
	    (r = parse_action(p, e, "action", true, &o->action)) < 0 ||
	    (r = oci_get_u32(p, e, "errnoRet", &o->errno_ret)) < 0)
		return r;
	o->has_errno_ret = r > 0;
	return oci_for_each(p, e, "args", (void **)&o->args, &o->n_args, sizeof(*o->args),
	                    parse_arg);
}

static int parse_seccomp(struct oci_path *p, json_object *s, struct cbox_oci_seccomp *o)
{
	int r;
	if ((r = parse_action(p, s, "defaultAction", true, &o->default_action)) < 0 ||
	    (r = oci_get_u32(p, s, "defaultErrnoRet", &o->default_errno_ret)) < 0)
		return r;
	o->has_default_errno_ret = r > 0;
	if ((r = oci_get_strv(p, s, "architectures", &o->architectures, &o->n_architectures)) < 0)
		return r;
	return oci_for_each(p, s, "syscalls", (void **)&o->rules, &o->n_rules, sizeof(*o->rules),
	                    parse_rule);
}

static int parse_linux_objects(struct oci_path *p, json_object *l, struct cbox_oci_linux *o)
{
	json_object *x;
	int r = oci_get_object(p, l, "resources", &x);
	if (r < 0)
		return r;
	if (r > 0) {
		o->has_resources = true;
		size_t old = oci_path_key(p, "resources");
		if ((r = parse_resources(p, x, &o->resources)) < 0)
			return r;
		oci_path_pop(p, old);
	}
	if ((r = oci_get_object(p, l, "seccomp", &x)) <= 0)
		return r;
	if (!(o->seccomp = calloc(1, sizeof(*o->seccomp))))
		return cbox_err_set(p->err, ENOMEM, "%s", oci_path_file(p));
	size_t old = oci_path_key(p, "seccomp");
	if ((r = parse_seccomp(p, x, o->seccomp)) < 0)
		return r;
	oci_path_pop(p, old);
	return 1;
}

int oci_parse_linux(struct oci_path *p, json_object *l, struct cbox_oci_linux *o)
{
	int r;
	static const char *const props[] = {"shared",  "slave",  "private",  "unbindable",
	                                    "rshared", "rslave", "rprivate", "runbindable"};
	if ((r = oci_for_each(p, l, "namespaces", (void **)&o->namespaces, &o->n_namespaces,
	                      sizeof(*o->namespaces), parse_ns)) < 0 ||
	    (r = oci_for_each(p, l, "uidMappings", (void **)&o->uid_mappings, &o->n_uid_mappings,
	                      sizeof(*o->uid_mappings), parse_idmap)) < 0 ||
	    (r = oci_for_each(p, l, "gidMappings", (void **)&o->gid_mappings, &o->n_gid_mappings,
	                      sizeof(*o->gid_mappings), parse_idmap)) < 0 ||
	    (r = oci_get_string(p, l, "cgroupsPath", &o->cgroups_path)) < 0 ||
	    (r = oci_get_kv(p, l, "sysctl", &o->sysctl, &o->n_sysctl)) < 0 ||
	    (r = oci_get_strv(p, l, "maskedPaths", &o->masked_paths, &o->n_masked_paths)) < 0 ||
	    (r = oci_get_strv(p, l, "readonlyPaths", &o->readonly_paths, &o->n_readonly_paths)) <
	        0 ||
	    (r = oci_get_string(p, l, "rootfsPropagation", &o->rootfs_propagation)) < 0 ||
	    (r = parse_linux_objects(p, l, o)) < 0)
		return r;
	if (o->rootfs_propagation) {
		for (size_t i = 0; i < CBOX_ARRAY_SIZE(props); i++)
			if (!strcmp(o->rootfs_propagation, props[i]))
				return 1;
		return oci_fail_key(p, "rootfsPropagation", "unknown propagation '%s'",
		                    o->rootfs_propagation);
	}
	return 1;
}

static void free_kv(struct cbox_oci_kv *kv, size_t n)
{
	for (size_t i = 0; kv && i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

static void free_seccomp(struct cbox_oci_seccomp *s)
{
	if (!s)
		return;
	oci_strv_free(s->architectures);
	for (size_t i = 0; s->rules && i < s->n_rules; i++) {
		oci_strv_free(s->rules[i].names);
		free(s->rules[i].args);
	}
	free(s->rules);
	free(s);
}

static void free_linux(struct cbox_oci_linux *l)
{
	for (size_t i = 0; l->namespaces && i < l->n_namespaces; i++)
		free(l->namespaces[i].path);
	free(l->namespaces);
	free(l->uid_mappings);
	free(l->gid_mappings);
	cbox_oci_resources_release(&l->resources);
	free(l->cgroups_path);
	free_kv(l->sysctl, l->n_sysctl);
	free_seccomp(l->seccomp);
	oci_strv_free(l->masked_paths);
	oci_strv_free(l->readonly_paths);
	free(l->rootfs_propagation);
}

void cbox_oci_config_free(struct cbox_oci_config *c)
{
	if (!c)
		return;
	free(c->oci_version);
	cbox_oci_process_release(&c->process);
	free(c->root_path);
	free(c->hostname);
	for (size_t i = 0; c->mounts && i < c->n_mounts; i++) {
		free(c->mounts[i].destination);
		free(c->mounts[i].type);
		free(c->mounts[i].source);
		oci_strv_free(c->mounts[i].options);
	}
	free(c->mounts);
	for (int k = 0; k < CBOX_OCI_HOOK_KINDS; k++) {
		for (size_t i = 0; c->hooks[k] && i < c->n_hooks[k]; i++) {
			free(c->hooks[k][i].path);
			oci_strv_free(c->hooks[k][i].args);
			oci_strv_free(c->hooks[k][i].env);
		}
		free(c->hooks[k]);
	}
	free_kv(c->annotations, c->n_annotations);
	free_linux(&c->linux_);
	free(c);
}
