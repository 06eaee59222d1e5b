/* Unit tests of the strict config.json parser (runtime-shim/oci_config*.c). */
#include <criterion/criterion.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>

#include "oci_config.h"

static struct cbox_oci_config *parse_ok(const char *json)
{
	struct cbox_oci_config *c = NULL;
	struct cbox_err *err = NULL;
	int r = cbox_oci_config_parse(json, strlen(json), &c, &err);
	cr_assert_eq(r, 0, "parse failed: %s", err ? err->msg : "?");
	return c;
}

/* The message of a failing parse (caller frees). */
static char *parse_err(const char *json)
{
	struct cbox_oci_config *c = NULL;
	struct cbox_err *err = NULL;
	cr_assert_lt(cbox_oci_config_parse(json, strlen(json), &c, &err), 0);
	cr_assert_null(c);
	cr_assert_not_null(err);
	char *m = strdup(err->msg);
	cbox_err_free(&err);
	return m;
}

#define EXPECT_ERR(json, text)                                                                     \
	do {                                                                                       \
		char *m_ = parse_err(json);                                                        \
		cr_expect(strstr(m_, text) != NULL, "got '%s', want '%s'", m_, text);              \
		free(m_);                                                                          \
	} while (0)

Test(oci_config, full_config)
{
	struct cbox_oci_config *c = parse_ok(
	    "{\"ociVersion\":\"1.0.2\",\"unknown\":{\"x\":1},"
	    "\"process\":{\"args\":[\"sh\",\"-c\",\"x\"],\"env\":[\"A=1\"],\"cwd\":\"/w\","
	    "\"user\":{\"uid\":5,\"gid\":6,\"additionalGids\":[7,8],\"umask\":18},"
	    "\"capabilities\":{\"bounding\":[\"CAP_KILL\",\"CAP_NOT_A_CAP\"]},"
	    "\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"soft\":10,\"hard\":20}],"
	    "\"noNewPrivileges\":true,\"apparmorProfile\":\"x\"},"
	    "\"root\":{\"path\":\"rootfs\",\"readonly\":true},\"hostname\":\"h\","
	    "\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\",\"options\":[\"ro\"]}],"
	    "\"hooks\":{\"poststop\":[{\"path\":\"/bin/true\",\"timeout\":3}]},"
	    "\"annotations\":{\"dev.cbox.tier\":\"ns\"},"
	    "\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"network\",\"path\":\"/n\"}],"
	    "\"uidMappings\":[{\"containerID\":0,\"hostID\":1000,\"size\":1}],"
	    "\"resources\":{\"memory\":{\"limit\":-1},\"pids\":{\"limit\":10}},"
	    "\"sysctl\":{\"net.ipv4.ip_forward\":\"1\"},"
	    "\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[{\"names\":[\"read\"],"
	    "\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"value\":18446744073709551615,"
	    "\"op\":\"SCMP_CMP_EQ\"}]}]},"
	    "\"maskedPaths\":[\"/proc/kcore\"],\"rootfsPropagation\":\"rslave\"}}");
	cr_expect_eq(c->process.n_args, 3);
	cr_expect_null(c->process.args[3]);
	cr_expect_str_eq(c->process.cwd, "/w");
	cr_expect_eq(c->process.user.uid, 5);
	cr_expect_eq(c->process.user.n_additional_gids, 2);
	cr_expect_eq(c->process.user.umask, 18);
	cr_expect_eq(c->process.caps.bounding, 1ULL << 5);
	cr_expect_eq(c->process.rlimits[0].resource, RLIMIT_NOFILE);
	cr_expect_eq(c->process.rlimits[0].hard, 20);
	cr_expect(c->process.no_new_privileges);
	cr_expect(c->root_readonly);
	cr_expect_str_eq(c->mounts[0].options[0], "ro");
	cr_expect_eq(c->hooks[CBOX_OCI_HOOK_POSTSTOP][0].timeout, 3);
	cr_expect_str_eq(cbox_oci_config_annotation(c, "dev.cbox.tier"), "ns");
	cr_expect_eq(c->linux_.namespaces[1].type, CLONE_NEWNET);
	cr_expect_str_eq(c->linux_.namespaces[1].path, "/n");
	cr_expect_eq(c->linux_.uid_mappings[0].host_id, 1000);
	cr_expect_eq(c->linux_.resources.memory_limit, -1);
	cr_expect_eq(c->linux_.resources.pids_limit, 10);
	cr_expect_eq(c->linux_.seccomp->default_action, CBOX_OCI_SCMP_ERRNO);
	cr_expect_eq(c->linux_.seccomp->rules[0].args[0].value, UINT64_MAX);
	cr_expect_str_eq(c->linux_.sysctl[0].key, "net.ipv4.ip_forward");
	cbox_oci_config_free(c);
}

Test(oci_config, defaults_and_nulls)
{
	struct cbox_oci_config *c = parse_ok("{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"r\"},"
	                                     "\"process\":{\"args\":[\"a\"],\"env\":null},"
	                                     "\"hostname\":null}");
	cr_expect_str_eq(c->process.cwd, "/");
	cr_expect_null(c->process.env[0]);
	cr_expect_null(c->hostname);
	cr_expect_not(c->has_linux);
	cbox_oci_config_free(c);
}

Test(oci_config, wrong_types_name_the_path)
{
	EXPECT_ERR("{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\"},"
	           "\"process\":{\"args\":[\"a\",\"b\",3]}}",
	           "config.json: process.args[2]: expected a string");
	EXPECT_ERR("{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\"},\"mounts\":[{}]}",
	           "config.json: mounts[0].destination: missing");
	EXPECT_ERR("{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\"},"
	           "\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"bogus\"}]}}",
	           "linux.namespaces[1].type: unknown namespace type 'bogus'");
	EXPECT_ERR("{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\"},"
	           "\"process\":{\"args\":[\"a\"],\"user\":{\"uid\":-1}}}",
	           "process.user.uid: expected a non-negative integer");
	EXPECT_ERR("{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\"},"
	           "\"linux\":{\"seccomp\":{\"defaultAction\":\"SCMP_ACT_NOPE\"}}}",
	           "linux.seccomp.defaultAction: unknown seccomp action");
	EXPECT_ERR("{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\"},\"hooks\":{\"prestart\":"
	           "[{\"path\":\"x\"}]}}",
	           "hooks.prestart[0].path: must be an absolute path");
	EXPECT_ERR("{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\"},\"annotations\":{\"a\":1}}",
	           "annotations.a: expected a string");
	EXPECT_ERR("{\"ociVersion\":\"1.0.0\",\"root\":\"r\"}", "root: expected an object");
}

Test(oci_config, required_fields)
{
	EXPECT_ERR("{\"root\":{\"path\":\"r\"}}", "config.json: ociVersion: missing");
	EXPECT_ERR("{\"ociVersion\":\"1.0.0\"}", "config.json: root: missing");
	EXPECT_ERR("{\"ociVersion\":\"1.0.0\",\"root\":{}}", "config.json: root.path: missing");
	EXPECT_ERR("{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\"},\"process\":{}}",
	           "config.json: process.args: missing");
	EXPECT_ERR("{\"ociVersion\":\"2.0.0\",\"root\":{\"path\":\"r\"}}", "not supported");
}

Test(oci_config, malformed_json)
{
	EXPECT_ERR("{\"ociVersion\":", "truncated");
	EXPECT_ERR("{\"ociVersion\":\"1.0.0\",,}", "invalid JSON at byte");
	EXPECT_ERR("{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\"}} x", "data after the end");
	EXPECT_ERR("[1,2]", "(top level): expected an object");
	EXPECT_ERR("", "invalid JSON");
}

Test(oci_config, load_names_the_file)
{
	struct cbox_oci_config *c = NULL;
	struct cbox_err *err = NULL;
	cr_assert_lt(cbox_oci_config_load("/nonexistent-bundle", &c, &err), 0);
	cr_expect(strstr(err->msg, "/nonexistent-bundle/config.json") != NULL, "%s", err->msg);
	cbox_err_free(&err);
}

Test(oci_config, cap_names)
{
	cr_expect_eq(cbox_oci_cap_from_name("CAP_SYS_ADMIN"), 21);
	cr_expect_eq(cbox_oci_cap_from_name("CAP_CHECKPOINT_RESTORE"), 40);
	cr_expect_eq(cbox_oci_cap_from_name("CAP_NOPE"), -1);
}

Test(oci_process, parse_alone)
{
	const char *j =
	    "{\"args\": [\"sh\", \"-c\", \"true\"], \"env\": [\"A=1\"], \"cwd\": \"/tmp\","
	    "\"user\": {\"uid\": 5, \"gid\": 6}, \"noNewPrivileges\": true,"
	    "\"capabilities\": {\"bounding\": [\"CAP_KILL\"]}, \"consoleSize\": {}}";
	struct cbox_oci_process p;
	struct cbox_err *err = NULL;
	cr_assert_eq(cbox_oci_process_parse(j, strlen(j), "process.json", &p, &err), 0, "%s",
	             err ? err->msg : "?");
	cr_expect_eq(p.n_args, 3);
	cr_expect_str_eq(p.args[2], "true");
	cr_expect_null(p.args[3]);
	cr_expect_str_eq(p.cwd, "/tmp");
	cr_expect_eq(p.user.uid, 5);
	cr_expect(p.no_new_privileges);
	cr_expect(p.has_caps);
	cr_expect_eq(p.caps.bounding, 1ULL << 5);
	cbox_oci_process_release(&p);
}

/* The message of a failing process parse (caller frees). */
static char *process_err(const char *json)
{
	struct cbox_oci_process p;
	struct cbox_err *err = NULL;
	cr_assert_lt(cbox_oci_process_parse(json, strlen(json), "process.json", &p, &err), 0);
	cr_assert_null(p.args);
	cr_assert_not_null(err);
	char *m = strdup(err->msg);
	cbox_err_free(&err);
	return m;
}

Test(oci_process, errors_name_the_path)
{
	static const struct {
		const char *json, *want;
	} cases[] = {
	    {"{\"args\": [\"sh\", 7]}", "process.json: args[1]: expected a string"},
	    {"{\"args\": []}", "process.json: args: must hold at least the program"},
	    {"{}", "process.json: args: missing"},
	    {"[1]", "process.json: (top level): expected an object"},
	    {"{\"args\": [\"a\"], \"user\": {\"uid\": -1}}", "process.json: user.uid"},
	    {"{\"args\": [\"a\"], \"cwd\": \"rel\"}", "process.json: cwd: must be an absolute"},
	    {"{\"args\": ", "process.json: invalid JSON"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *m = process_err(cases[i].json);
		cr_expect(strstr(m, cases[i].want) != NULL, "got '%s', want '%s'", m,
		          cases[i].want);
		free(m);
	}
}

Test(oci_resources, parse_alone)
{
	const char *j =
	    "{\"memory\": {\"limit\": 67108864, \"swap\": -1}, \"pids\": {\"limit\": 50},"
	    "\"cpu\": {\"quota\": 50000, \"period\": 100000, \"shares\": 512},"
	    "\"blockIO\": {\"weight\": 10}}";
	struct cbox_oci_resources r;
	struct cbox_err *err = NULL;
	cr_assert_eq(cbox_oci_resources_parse(j, strlen(j), "resources", &r, &err), 0, "%s",
	             err ? err->msg : "?");
	cr_expect(r.has_memory_limit && r.memory_limit == 67108864);
	cr_expect(r.has_memory_swap && r.memory_swap == -1);
	cr_expect(r.has_pids_limit && r.pids_limit == 50);
	cr_expect(r.has_cpu_quota && r.cpu_quota == 50000);
	cr_expect(r.has_cpu_period && r.cpu_period == 100000);
	cr_expect(r.has_cpu_shares && r.cpu_shares == 512);
	cbox_oci_resources_release(&r);
}

Test(oci_resources, errors_name_the_path)
{
	static const struct {
		const char *json, *want;
	} cases[] = {
	    {"{\"memory\": {\"limit\": \"64m\"}}", "resources: memory.limit: expected"},
	    {"{\"pids\": {}}", "resources: pids.limit: missing"},
	    {"{\"cpu\": 3}", "resources: cpu: expected an object"},
	    {"\"x\"", "resources: (top level): expected an object"},
	    {"{} x", "resources: invalid JSON at byte 3"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cbox_oci_resources r;
		struct cbox_err *err = NULL;
		const char *j = cases[i].json;
		cr_assert_lt(cbox_oci_resources_parse(j, strlen(j), "resources", &r, &err), 0);
		cr_expect(strstr(err->msg, cases[i].want) != NULL, "got '%s', want '%s'", err->msg,
		          cases[i].want);
		cbox_err_free(&err);
	}
}
