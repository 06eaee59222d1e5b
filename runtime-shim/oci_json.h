#pragma once
/*
 * Typed access to a json-c tree for the strict config.json parser (oci_config*.c only). Each
 * getter records where it is (a JSON path such as "process.args[2]") so a failure names it.
 * A JSON null counts as absent. Every getter returns 0 when the key is absent (and leaves *out
 * alone), 1 when it set *out, and < 0 with *err set ("config.json: PATH: expected a string").
 */
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cbox/err.h"

struct oci_path {
	char buf[512];
	size_t len;
	struct cbox_err **err;
	const char *file; /* the document's name in messages; NULL: "config.json" */
};

/* The document's name for messages. */
const char *oci_path_file(const struct oci_path *p);

/* Append ".key" (or "key" at the root) / "[i]"; return the previous length for oci_path_pop. */
size_t oci_path_key(struct oci_path *p, const char *key);
size_t oci_path_index(struct oci_path *p, size_t i);
void oci_path_pop(struct oci_path *p, size_t len);

/* Fail naming the current path: "FILE: PATH: MSG" (FILE: config.json). Returns -EINVAL. */
int oci_fail(struct oci_path *p, const char *fmt, ...) CBOX_PRINTF(2, 3);
/* Fail naming PATH.key. */
int oci_fail_key(struct oci_path *p, const char *key, const char *fmt, ...) CBOX_PRINTF(3, 4);

/* The member key of obj (NULL when absent or null). obj must be an object. */
json_object *oci_member(json_object *obj, const char *key);

int oci_get_object(struct oci_path *p, json_object *obj, const char *key, json_object **out);
int oci_get_array(struct oci_path *p, json_object *obj, const char *key, json_object **out);
int oci_get_string(struct oci_path *p, json_object *obj, const char *key, char **out);
int oci_get_bool(struct oci_path *p, json_object *obj, const char *key, bool *out);
int oci_get_u32(struct oci_path *p, json_object *obj, const char *key, uint32_t *out);
int oci_get_u64(struct oci_path *p, json_object *obj, const char *key, uint64_t *out);
int oci_get_i64(struct oci_path *p, json_object *obj, const char *key, int64_t *out);
/* An array of strings, NULL-terminated, with its count in *n. */
int oci_get_strv(struct oci_path *p, json_object *obj, const char *key, char ***out, size_t *n);
/* Free a NULL-terminated string array; NULL-safe. */
void oci_strv_free(char **v);
/* A required member: like the getters, but absence fails with "PATH.key: missing". */
int oci_require(struct oci_path *p, int r, const char *key);
