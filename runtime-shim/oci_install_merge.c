/* cbox's entry merged into Docker's daemon.json, and the diff `cbox install` prints. */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cbox/cleanup.h"
#include "oci_install.h"

/* The diff is quadratic in lines; a daemon.json is a few dozen lines. */
#define MAX_LINES 2000

static void line_col(const char *s, size_t off, size_t *line, size_t *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off; i++) {
		if (s[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

static bool blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!strchr(" \t\r\n", s[i]) || !s[i])
			return false;
	return true;
}

/* Parse old as one JSON object; an all-blank text is {}. */
static int parse(const char *old, size_t len, const char *what, json_object **out,
                 struct cbox_err **err)
{
	if (blank(old, len)) {
		*out = json_object_new_object();
		return *out ? 0 : cbox_err_set(err, ENOMEM, "%s", what);
	}
	if (len > INT32_MAX)
		return cbox_err_set(err, EFBIG, "%s: too large", what);
	json_tokener *tok = json_tokener_new_ex(64);
	if (!tok)
		return cbox_err_set(err, ENOMEM, "%s", what);
	json_object *top = json_tokener_parse_ex(tok, old, (int)len);
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	size_t off = json_tokener_get_parse_end(tok), line, col;
	json_tokener_free(tok);
	const char *why = NULL;
	if (jerr == json_tokener_continue)
		why = "truncated", off = len;
	else if (!top || jerr != json_tokener_success)
		why = json_tokener_error_desc(jerr);
	else if (!blank(old + off, len - off))
		why = "data after the end of the JSON value";
	if (why) {
		json_object_put(top);
		line_col(old, off, &line, &col);
		return cbox_err_set(err, 0, "%s: malformed JSON at line %zu, column %zu: %s", what,
		                    line, col, why);
	}
	if (!json_object_is_type(top, json_type_object)) {
		json_object_put(top);
		return cbox_err_set(err, 0, "%s: the top level must be a JSON object", what);
	}
	*out = top;
	return 0;
}

static json_object *make_entry(const struct cbox_oci_install_entry *e)
{
	json_object *o = json_object_new_object();
	if (!o || json_object_object_add(o, "path", json_object_new_string(e->path)) < 0)
		goto fail;
	if (e->tier) {
		json_object *a = json_object_new_array();
		if (!a || json_object_object_add(o, "runtimeArgs", a) < 0 ||
		    json_object_array_add(a, json_object_new_string("--tier")) < 0 ||
		    json_object_array_add(a, json_object_new_string(e->tier)) < 0)
			goto fail;
	}
	return o;
fail:
	json_object_put(o);
	return NULL;
}

/* Put e under top.runtimes; 1 when that changed top, 0 when it was there already. */
static int merge(json_object *top, const char *what, const struct cbox_oci_install_entry *e,
                 struct cbox_err **err)
{
	json_object *runtimes = NULL, *cur = NULL;
	if (json_object_object_get_ex(top, "runtimes", &runtimes) && runtimes &&
	    !json_object_is_type(runtimes, json_type_object))
		return cbox_err_set(err, 0, "%s: \"runtimes\" must be a JSON object", what);
	if (!runtimes) {
		runtimes = json_object_new_object();
		if (!runtimes || json_object_object_add(top, "runtimes", runtimes) < 0)
			return cbox_err_set(err, ENOMEM, "%s", what);
	}
	if (json_object_object_get_ex(runtimes, e->name, &cur) && cur &&
	    !json_object_is_type(cur, json_type_object))
		return cbox_err_set(err, 0, "%s: \"runtimes\".\"%s\" must be a JSON object", what,
		                    e->name);
	json_object *want = make_entry(e);
	if (!want)
		return cbox_err_set(err, ENOMEM, "%s", what);
	if (cur && json_object_equal(cur, want)) {
		json_object_put(want);
		return 0;
	}
	if (json_object_object_add(runtimes, e->name, want) < 0) {
		json_object_put(want);
		return cbox_err_set(err, ENOMEM, "%s", what);
	}
	return 1;
}

int cbox_oci_install_merge(const char *old, size_t len, const char *what,
                           const struct cbox_oci_install_entry *e, char **out,
                           struct cbox_err **err)
{
	if (!e->name || !e->name[0])
		return cbox_err_set(err, 0, "the runtime name is empty");
	/* Docker runs the path it is given from its own cwd: only an absolute path is stable. */
	if (!e->path || e->path[0] != '/')
		return cbox_err_set(err, 0, "the runtime path '%s' is not absolute",
		                    e->path ? e->path : "");
	json_object *top = NULL;
	if (parse(old, len, what, &top, err) < 0)
		return -1;
	int r = merge(top, what, e, err);
	if (r == 0) {
		*out = strndup(old, len);
	} else if (r > 0) {
		const char *s = json_object_to_json_string_ext(
		    top, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
		             JSON_C_TO_STRING_NOSLASHESCAPE);
		*out = s ? malloc(strlen(s) + 2) : NULL;
		if (*out)
			strcat(strcpy(*out, s), "\n");
	}
	json_object_put(top);
	if (r >= 0 && !*out)
		return cbox_err_set(err, ENOMEM, "%s", what);
	return r;
}

struct lines {
	const char **start;
	size_t *len;
	size_t n;
};

static void lines_free(struct lines *l)
{
	free(l->start);
	free(l->len);
}

static int split(const char *s, struct lines *l)
{
	size_t n = 0;
	for (const char *p = s; *p; p++)
		n += *p == '\n' || !p[1];
	if (n > MAX_LINES)
		return -EFBIG;
	l->start = calloc(n + 1, sizeof(*l->start));
	l->len = calloc(n + 1, sizeof(*l->len));
	if (!l->start || !l->len)
		return -ENOMEM;
	l->n = 0;
	for (const char *p = s; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		l->start[l->n] = p;
		l->len[l->n++] = len;
		p += len + (nl != NULL);
	}
	return 0;
}

static bool same(const struct lines *a, size_t i, const struct lines *b, size_t j)
{
	return a->len[i] == b->len[j] && !memcmp(a->start[i], b->start[j], a->len[i]);
}

/* Longest common subsequence table, filled from the ends: t[i][j] is the LCS of a[i..], b[j..]. */
static uint32_t *lcs(const struct lines *a, const struct lines *b)
{
	size_t w = b->n + 1;
	uint32_t *t = calloc((a->n + 1) * w, sizeof(*t));
	if (!t)
		return NULL;
	for (size_t i = a->n; i-- > 0;)
		for (size_t j = b->n; j-- > 0;)
			t[i * w + j] = same(a, i, b, j) ? t[(i + 1) * w + j + 1] + 1
			               : t[(i + 1) * w + j] >= t[i * w + j + 1] ? t[(i + 1) * w + j]
			                                                        : t[i * w + j + 1];
	return t;
}

int cbox_oci_install_diff(FILE *f, const char *what, const char *old_text, const char *new_text,
                          struct cbox_err **err)
{
	struct lines a = {0}, b = {0};
	int r = split(old_text, &a);
	if (r == 0)
		r = split(new_text, &b);
	CBOX_AUTOFREE uint32_t *t = r == 0 ? lcs(&a, &b) : NULL;
	if (r == 0 && !t)
		r = -ENOMEM;
	if (r < 0) {
		lines_free(&a);
		lines_free(&b);
		return cbox_err_set(err, -r, "diff of %s", what);
	}
	size_t i = 0, j = 0, w = b.n + 1;
	fprintf(f, "--- %s\n+++ %s\n", what, what);
	while (i < a.n || j < b.n) {
		if (i < a.n && j < b.n && same(&a, i, &b, j)) {
			fprintf(f, " %.*s\n", (int)a.len[i], a.start[i]);
			i++, j++;
		} else if (j < b.n && (i == a.n || t[(i + 1) * w + j] < t[i * w + j + 1])) {
			fprintf(f, "+%.*s\n", (int)b.len[j], b.start[j]);
			j++;
		} else {
			fprintf(f, "-%.*s\n", (int)a.len[i], a.start[i]);
			i++;
		}
	}
	lines_free(&a);
	lines_free(&b);
	return 0;
}
