/* `cbox features`: what this runtime supports, as the runtime-spec's features.md describes. */
#include <stdio.h>

#include "oci_cli.h"

static json_object *strings(const char *const *v)
{
	json_object *a = json_object_new_array();
	for (; *v; v++)
		json_object_array_add(a, json_object_new_string(*v));
	return a;
}

static const char *const hooks[] = {"prestart", "createRuntime", "poststart", "poststop", NULL};
static const char *const mount_opts[] = {
    "async",       "atime",   "bind",        "dev",        "diratime", "dirsync",
    "exec",        "noatime", "nodev",       "nodiratime", "noexec",   "norelatime",
    "nosuid",      "private", "rbind",       "relatime",   "ro",       "rprivate",
    "rshared",     "rslave",  "runbindable", "rw",         "shared",   "slave",
    "strictatime", "suid",    "sync",        "unbindable", NULL};
static const char *const namespaces[] = {"cgroup", "ipc",  "mount", "network", "pid",
                                         "time",   "user", "uts",   NULL};
static const char *const actions[] = {
    "SCMP_ACT_ALLOW",        "SCMP_ACT_ERRNO",       "SCMP_ACT_KILL",
    "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD", "SCMP_ACT_LOG",
    "SCMP_ACT_TRACE",        "SCMP_ACT_TRAP",        NULL};
static const char *const ops[] = {"SCMP_CMP_EQ", "SCMP_CMP_GE",        "SCMP_CMP_GT", "SCMP_CMP_LE",
                                  "SCMP_CMP_LT", "SCMP_CMP_MASKED_EQ", "SCMP_CMP_NE", NULL};
static const char *const archs[] = {"SCMP_ARCH_X86", "SCMP_ARCH_X86_64", "SCMP_ARCH_X32", NULL};
int cbox_oci_features(const struct cbox_oci_global *g, int argc, char **argv)
{
	(void)g, (void)argc, (void)argv;
	json_object *f = json_object_new_object();
	json_object_object_add(f, "ociVersionMin", json_object_new_string("1.0.0"));
	json_object_object_add(f, "ociVersionMax", json_object_new_string(CBOX_OCI_VERSION));
	json_object_object_add(f, "hooks", strings(hooks));
	json_object_object_add(f, "mountOptions", strings(mount_opts));
	json_object *l = json_object_new_object();
	json_object_object_add(l, "namespaces", strings(namespaces));
	json_object_object_add(l, "capabilities", strings(cbox_oci_cap_names()));
	json_object *cg = json_object_new_object();
	json_object_object_add(cg, "v1", json_object_new_boolean(0));
	json_object_object_add(cg, "v2", json_object_new_boolean(0));
	json_object_object_add(cg, "systemd", json_object_new_boolean(0));
	json_object_object_add(l, "cgroup", cg);
	json_object *sc = json_object_new_object();
	json_object_object_add(sc, "enabled", json_object_new_boolean(1));
	json_object_object_add(sc, "actions", strings(actions));
	json_object_object_add(sc, "operators", strings(ops));
	json_object_object_add(sc, "archs", strings(archs));
	json_object_object_add(l, "seccomp", sc);
	json_object *off = json_object_new_object();
	json_object_object_add(off, "enabled", json_object_new_boolean(0));
	json_object_object_add(l, "apparmor", off);
	json_object_object_add(l, "selinux", json_object_get(off));
	json_object_object_add(f, "linux", l);
	json_object *ann = json_object_new_object();
	json_object_object_add(ann, "dev.cbox.tiers",
	                       json_object_new_string("sentry,ns,os,wasm,microvm"));
	json_object_object_add(f, "annotations", ann);
	printf("%s\n", json_object_to_json_string_ext(f, JSON_C_TO_STRING_PRETTY |
	                                                     JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(f);
	return 0;
}
