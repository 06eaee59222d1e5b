/* Unit tests of `cbox install`'s daemon.json merge and diff (runtime-shim/oci_install_merge.c). */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci_install.h"

static const struct cbox_oci_install_entry cbox_e = {.name = "cbox", .path = "/usr/bin/cbox"};

/* Merge e into text; returns the merge's result and the new text in *out. */
static int merge(const char *text, const struct cbox_oci_install_entry *e, char **out)
{
	struct cbox_err *err = NULL;
	*out = NULL;
	int r = cbox_oci_install_merge(text, strlen(text), "daemon.json", e, out, &err);
	cr_assert_geq(r, 0, "merge failed: %s", err ? err->msg : "?");
	cr_assert_not_null(*out);
	cr_assert_null(err);
	return r;
}

static json_object *member(json_object *o, const char *path)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *save = NULL, *k = strtok_r(buf, ".", &save); k; k = strtok_r(NULL, ".", &save))
		cr_assert(json_object_object_get_ex(o, k, &o), "no %s in %s", k, path);
	return o;
}

static char *merge_err(const char *text, const struct cbox_oci_install_entry *e)
{
	struct cbox_err *err = NULL;
	char *out = NULL;
	cr_assert_lt(
	    cbox_oci_install_merge(text, strlen(text), "/etc/docker/daemon.json", e, &out, &err),
	    0);
	cr_assert_null(out);
	cr_assert_not_null(err);
	char *m = strdup(err->msg);
	cbox_err_free(&err);
	return m;
}

#define EXPECT_ERR(text, e, want)                                                                  \
	do {                                                                                       \
		char *m_ = merge_err(text, e);                                                     \
		cr_expect(strstr(m_, want) != NULL, "got '%s', want '%s'", m_, want);              \
		free(m_);                                                                          \
	} while (0)

Test(install, keeps_every_other_key_in_order)
{
	char *out;
	const char *in = "{\"log-level\": \"warn\", \"storage-driver\": \"overlay2\",\n"
	                 " \"runtimes\": {\"runsc\": {\"path\": \"/usr/bin/runsc\"}},\n"
	                 " \"default-ulimits\": {\"nofile\": {\"Hard\": 64000, \"Soft\": 64000}},\n"
	                 " \"debug\": true, \"mtu\": 1400.5, \"x\": null}";
	cr_assert_eq(merge(in, &cbox_e, &out), 1);
	json_object *j = json_tokener_parse(out);
	cr_assert_not_null(j, "output is not JSON: %s", out);
	cr_expect_str_eq(json_object_get_string(member(j, "log-level")), "warn");
	cr_expect_str_eq(json_object_get_string(member(j, "runtimes.runsc.path")),
	                 "/usr/bin/runsc");
	cr_expect_str_eq(json_object_get_string(member(j, "runtimes.cbox.path")), "/usr/bin/cbox");
	cr_expect_eq(json_object_get_int(member(j, "default-ulimits.nofile.Hard")), 64000);
	cr_expect(json_object_get_boolean(member(j, "debug")));
	cr_expect(json_object_object_get_ex(j, "x", NULL));
	cr_expect_eq(json_object_object_length(j), 7);
	/* The order of the file is kept: log-level first, x last. */
	cr_expect_lt(strstr(out, "log-level") - out, strstr(out, "storage-driver") - out);
	cr_expect_lt(strstr(out, "debug") - out, strstr(out, "\"x\"") - out);
	cr_expect_eq(out[strlen(out) - 1], '\n');
	json_object_put(j);
	free(out);
}

Test(install, empty_or_blank_file_is_an_empty_object)
{
	char *out;
	cr_assert_eq(merge("", &cbox_e, &out), 1);
	json_object *j = json_tokener_parse(out);
	cr_expect_str_eq(json_object_get_string(member(j, "runtimes.cbox.path")), "/usr/bin/cbox");
	cr_expect_eq(json_object_object_length(j), 1);
	json_object_put(j);
	free(out);
	cr_assert_eq(merge(" \n\t", &cbox_e, &out), 1);
	free(out);
}

Test(install, already_installed_is_unchanged)
{
	char *out;
	const char *in = "{ \"runtimes\" : { \"cbox\" : { \"path\" : \"/usr/bin/cbox\" } } }";
	cr_assert_eq(merge(in, &cbox_e, &out), 0);
	cr_expect_str_eq(out, in, "an unchanged file keeps its bytes");
	free(out);
}

Test(install, replaces_an_old_entry_and_adds_the_tier)
{
	char *out;
	struct cbox_oci_install_entry e = {.name = "cbox-ns", .path = "/opt/cbox", .tier = "ns"};
	const char *in = "{\"runtimes\": {\"cbox-ns\": {\"path\": \"/old/cbox\"}}}";
	cr_assert_eq(merge(in, &e, &out), 1);
	json_object *j = json_tokener_parse(out);
	json_object *args = member(j, "runtimes.cbox-ns.runtimeArgs");
	cr_expect_str_eq(json_object_get_string(member(j, "runtimes.cbox-ns.path")), "/opt/cbox");
	cr_assert_eq(json_object_array_length(args), 2);
	cr_expect_str_eq(json_object_get_string(json_object_array_get_idx(args, 0)), "--tier");
	cr_expect_str_eq(json_object_get_string(json_object_array_get_idx(args, 1)), "ns");
	json_object_put(j);
	char *again;
	cr_expect_eq(merge(out, &e, &again), 0, "merging twice changes nothing");
	free(again);
	free(out);
}

Test(install, malformed_files_are_named_with_the_place)
{
	EXPECT_ERR("{\"a\": 1,\n \"b\": }", &cbox_e,
	           "/etc/docker/daemon.json: malformed JSON at line 2, column 7");
	EXPECT_ERR("{\"a\": 1", &cbox_e, "malformed JSON at line 1, column 8: truncated");
	EXPECT_ERR("{} {}", &cbox_e, "data after the end");
	EXPECT_ERR("[1, 2]", &cbox_e, "daemon.json: the top level must be a JSON object");
	EXPECT_ERR("{\"runtimes\": [\"cbox\"]}", &cbox_e, "\"runtimes\" must be a JSON object");
	EXPECT_ERR("{\"runtimes\": {\"cbox\": \"/usr/bin/cbox\"}}", &cbox_e,
	           "\"runtimes\".\"cbox\" must be a JSON object");
}

Test(install, bad_entries)
{
	struct cbox_oci_install_entry rel = {.name = "cbox", .path = "build/cbox"};
	struct cbox_oci_install_entry noname = {.name = "", .path = "/usr/bin/cbox"};
	EXPECT_ERR("{}", &rel, "the runtime path 'build/cbox' is not absolute");
	EXPECT_ERR("{}", &noname, "the runtime name is empty");
}

/* The diff of two texts as a string (caller frees). */
static char *diff(const char *a, const char *b)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct cbox_err *err = NULL;
	cr_assert_eq(cbox_oci_install_diff(f, "d.json", a, b, &err), 0);
	fclose(f);
	return buf;
}

Test(install, diff_marks_removed_and_added_lines)
{
	char *d = diff("{\n  \"a\": 1\n}\n", "{\n  \"a\": 1,\n  \"b\": 2\n}\n");
	cr_expect_str_eq(
	    d, "--- d.json\n+++ d.json\n {\n-  \"a\": 1\n+  \"a\": 1,\n+  \"b\": 2\n }\n");
	free(d);
	d = diff("", "{}\n");
	cr_expect_str_eq(d, "--- d.json\n+++ d.json\n+{}\n");
	free(d);
	d = diff("x\ny", "x\ny");
	cr_expect_str_eq(d, "--- d.json\n+++ d.json\n x\n y\n");
	free(d);
}

Test(install, diff_refuses_huge_input)
{
	size_t n = 3000;
	char *big = malloc(n * 2 + 1);
	for (size_t i = 0; i < n; i++)
		memcpy(big + 2 * i, "x\n", 2);
	big[2 * n] = '\0';
	struct cbox_err *err = NULL;
	FILE *f = fopen("/dev/null", "w");
	cr_expect_lt(cbox_oci_install_diff(f, "big.json", big, "", &err), 0);
	cr_expect(err && strstr(err->msg, "diff of big.json"));
	cbox_err_free(&err);
	fclose(f);
	free(big);
}
