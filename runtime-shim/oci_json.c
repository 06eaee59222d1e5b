/* Typed, path-naming access to a json-c tree for the config.json parser (see oci_json.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci_json.h"

size_t oci_path_key(struct oci_path *p, const char *key)
{
	size_t old = p->len;
	int n = snprintf(p->buf + p->len, sizeof(p->buf) - p->len, "%s%s", p->len ? "." : "", key);
	if (n > 0)
		p->len =
		    p->len + (size_t)n < sizeof(p->buf) ? p->len + (size_t)n : sizeof(p->buf) - 1;
	return old;
}

size_t oci_path_index(struct oci_path *p, size_t i)
{
	size_t old = p->len;
	int n = snprintf(p->buf + p->len, sizeof(p->buf) - p->len, "[%zu]", i);
	if (n > 0)
		p->len =
		    p->len + (size_t)n < sizeof(p->buf) ? p->len + (size_t)n : sizeof(p->buf) - 1;
	return old;
}

void oci_path_pop(struct oci_path *p, size_t len)
{
	p->len = len;
	p->buf[len] = '\0';
}

const char *oci_path_file(const struct oci_path *p)
{
	return p->file ? p->file : "config.json";
}

static CBOX_PRINTF(2, 0) int vfail(struct oci_path *p, const char *fmt, va_list ap)
{
	char msg[256];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	cbox_err_set(p->err, 0, "%s: %s: %s", oci_path_file(p), p->len ? p->buf : "(top level)",
	             msg);
	return -EINVAL;
}

int oci_fail(struct oci_path *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vfail(p, fmt, ap);
	va_end(ap);
	return r;
}

int oci_fail_key(struct oci_path *p, const char *key, const char *fmt, ...)
{
	size_t old = oci_path_key(p, key);
	va_list ap;
	va_start(ap, fmt);
	int r = vfail(p, fmt, ap);
	va_end(ap);
	oci_path_pop(p, old);
	return r;
}

json_object *oci_member(json_object *obj, const char *key)
{
	json_object *v = NULL;
	if (!json_object_object_get_ex(obj, key, &v))
		return NULL;
	return v; /* NULL for a JSON null */
}

/* The member, type-checked; 0 absent, 1 found, <0 wrong type. */
static int typed(struct oci_path *p, json_object *obj, const char *key, enum json_type t,
                 const char *what, json_object **out)
{
	json_object *v = oci_member(obj, key);
	if (!v)
		return 0;
	if (!json_object_is_type(v, t))
		return oci_fail_key(p, key, "expected %s", what);
	*out = v;
	return 1;
}

int oci_get_object(struct oci_path *p, json_object *obj, const char *key, json_object **out)
{
	return typed(p, obj, key, json_type_object, "an object", out);
}

int oci_get_array(struct oci_path *p, json_object *obj, const char *key, json_object **out)
{
	return typed(p, obj, key, json_type_array, "an array", out);
}

int oci_get_string(struct oci_path *p, json_object *obj, const char *key, char **out)
{
	json_object *v = NULL;
	int r = typed(p, obj, key, json_type_string, "a string", &v);
	if (r <= 0)
		return r;
	char *s = strdup(json_object_get_string(v));
	if (!s)
		return cbox_err_set(p->err, ENOMEM, "%s", oci_path_file(p));
	free(*out);
	*out = s;
	return 1;
}

int oci_get_bool(struct oci_path *p, json_object *obj, const char *key, bool *out)
{
	json_object *v = NULL;
	int r = typed(p, obj, key, json_type_boolean, "a boolean", &v);
	if (r > 0)
		*out = json_object_get_boolean(v);
	return r;
}

int oci_get_i64(struct oci_path *p, json_object *obj, const char *key, int64_t *out)
{
	json_object *v = NULL;
	int r = typed(p, obj, key, json_type_int, "an integer", &v);
	if (r <= 0)
		return r;
	int64_t x = json_object_get_int64(v);
	/* json-c saturates a value above INT64_MAX; that is never a valid signed field here. */
	if (x == INT64_MAX && json_object_get_uint64(v) > (uint64_t)INT64_MAX)
		return oci_fail_key(p, key, "integer out of range");
	*out = x;
	return 1;
}

int oci_get_u64(struct oci_path *p, json_object *obj, const char *key, uint64_t *out)
{
	json_object *v = NULL;
	int r = typed(p, obj, key, json_type_int, "an integer", &v);
	if (r <= 0)
		return r;
	if (json_object_get_int64(v) < 0)
		return oci_fail_key(p, key, "expected a non-negative integer");
	*out = json_object_get_uint64(v);
	return 1;
}

int oci_get_u32(struct oci_path *p, json_object *obj, const char *key, uint32_t *out)
{
	uint64_t x = 0;
	int r = oci_get_u64(p, obj, key, &x);
	if (r <= 0)
		return r;
	if (x > UINT32_MAX)
		return oci_fail_key(p, key, "integer out of range (at most %u)", UINT32_MAX);
	*out = (uint32_t)x;
	return 1;
}

void oci_strv_free(char **v)
{
	if (!v)
		return;
	for (char **s = v; *s; s++)
		free(*s);
	free(v);
}

int oci_get_strv(struct oci_path *p, json_object *obj, const char *key, char ***out, size_t *n)
{
	json_object *a = NULL; /* (set when oci_get_array returns 1; -O3 cannot tell) */
	int r = oci_get_array(p, obj, key, &a);
	if (r <= 0)
		return r;
	size_t len = json_object_array_length(a);
	char **v = calloc(len + 1, sizeof(*v));
	if (!v)
		return cbox_err_set(p->err, ENOMEM, "%s", oci_path_file(p));
	size_t old = oci_path_key(p, key);
	for (size_t i = 0; i < len; i++) {
		json_object *e = json_object_array_get_idx(a, i);
		if (!e || !json_object_is_type(e, json_type_string)) {
			oci_path_index(p, i);
			r = oci_fail(p, "expected a string");
			oci_path_pop(p, old);
			oci_strv_free(v);
			return r;
		}
		if (!(v[i] = strdup(json_object_get_string(e)))) {
			oci_path_pop(p, old);
			oci_strv_free(v);
			return cbox_err_set(p->err, ENOMEM, "%s", oci_path_file(p));
		}
	}
	oci_path_pop(p, old);
	oci_strv_free(*out);
	*out = v;
	*n = len;
	return 1;
}

int oci_require(struct oci_path *p, int r, const char *key)
{
	if (r == 0)
		return oci_fail_key(p, key, "missing (required)");
	return r;
}
