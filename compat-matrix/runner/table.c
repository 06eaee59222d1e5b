/*
 * The sentry's syscall table as `cbox syscalls --json` prints it: an array of flat objects
 * ({"nr":0,"name":"read","kind":"fast","level":"full","errno":"","note":""}). A small parser
 * for exactly that shape (strings, integers, true/false/null values; no nesting): the runner
 * needs no general JSON library, and a table it cannot read fully is an error, never a guess.
 */
#include "compat.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct jp {
	const char *s;
	size_t len, pos;
};

static void ws(struct jp *p)
{
	while (p->pos < p->len && strchr(" \t\r\n", p->s[p->pos]) && p->s[p->pos])
		p->pos++;
}

static bool eat(struct jp *p, char c)
{
	ws(p);
	if (p->pos < p->len && p->s[p->pos] == c) {
		p->pos++;
		return true;
	}
	return false;
}

static int hex4(const char *s)
{
	int v = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9'   ? c - '0'
		        : c >= 'a' && c <= 'f' ? c - 'a' + 10
		        : c >= 'A' && c <= 'F' ? c - 'A' + 10
		                               : -1;
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* Append code point cp (< 0x10000) as UTF-8. */
static char *put_utf8(char *o, int cp)
{
	if (cp < 0x80) {
		*o++ = (char)cp;
	} else if (cp < 0x800) {
		*o++ = (char)(0xc0 | (cp >> 6));
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*o++ = (char)(0xe0 | (cp >> 12));
		*o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	}
	return o;
}

/* A JSON string at p (after whitespace); a new C string, or NULL on a syntax error. */
static char *jstring(struct jp *p)
{
	if (!eat(p, '"'))
		return NULL;
	char *out = malloc(p->len - p->pos + 1), *o = out;
	if (out == NULL)
		return NULL;
	while (p->pos < p->len) {
		char c = p->s[p->pos++];
		if (c == '"') {
			*o = '\0';
			return out;
		}
		if ((unsigned char)c < 0x20)
			break;
		if (c != '\\') {
			*o++ = c;
			continue;
		}
		if (p->pos >= p->len)
			break;
		c = p->s[p->pos++];
		const char *esc = strchr("\"\\/bfnrt", c);
		if (esc != NULL && c != '\0') {
			*o++ = "\"\\/\b\f\n\r\t"[esc - "\"\\/bfnrt"];
		} else if (c == 'u' && p->pos + 4 <= p->len) {
			int cp = hex4(p->s + p->pos);
			/* Surrogates and NUL have no place in a syscall name or note. */
			if (cp <= 0 || (cp >= 0xd800 && cp < 0xe000))
				break;
			o = put_utf8(o, cp);
			p->pos += 4;
		} else {
			break;
		}
	}
	free(out);
	return NULL;
}

/* A scalar value: a string (returned), or a number/true/false/null (returned as its text). */
static char *jscalar(struct jp *p)
{
	ws(p);
	if (p->pos < p->len && p->s[p->pos] == '"')
		return jstring(p);
	size_t start = p->pos;
	while (p->pos < p->len && strchr("-+.0123456789eEtruefalsn", p->s[p->pos]) && p->s[p->pos])
		p->pos++;
	if (p->pos == start)
		return NULL;
	return strndup(p->s + start, p->pos - start);
}

static int level_parse(const char *s)
{
	static const char *const names[] = {"full", "partial", "refused"};
	for (int i = 0; i < 3; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

const char *cbox_compat_level_name(enum cbox_compat_level level)
{
	return level == CBOX_COMPAT_FULL      ? "full"
	       : level == CBOX_COMPAT_PARTIAL ? "partial"
	                                      : "refused";
}

static void row_free(struct cbox_compat_syscall *r)
{
	free(r->name);
	free(r->err_name);
	free(r->note);
}

/* Store one key's value into row r; takes ownership of v. */
static int row_set(struct cbox_compat_syscall *r, const char *key, char *v, unsigned *seen)
{
	char **slot = NULL;
	if (strcmp(key, "nr") == 0) {
		char *end;
		errno = 0;
		r->nr = strtol(v, &end, 10);
		bool ok = errno == 0 && *end == '\0' && end != v && r->nr >= 0;
		free(v);
		*seen |= 1;
		return ok ? 0 : -1;
	}
	if (strcmp(key, "level") == 0) {
		int l = level_parse(v);
		free(v);
		r->level = (enum cbox_compat_level)l;
		*seen |= 4;
		return l < 0 ? -1 : 0;
	}
	if (strcmp(key, "name") == 0) {
		slot = &r->name;
		*seen |= 2;
	} else if (strcmp(key, "errno") == 0) {
		slot = &r->err_name;
	} else if (strcmp(key, "note") == 0) {
		slot = &r->note;
	}
	if (slot == NULL) {
		free(v);
		return 0;
	}
	free(*slot);
	*slot = v;
	return 0;
}

static int parse_row(struct jp *p, struct cbox_compat_syscall *r, struct cbox_err **err)
{
	unsigned seen = 0;
	if (!eat(p, '{'))
		return cbox_err_set(err, EINVAL, "syscall table: '{' expected at offset %zu",
		                    p->pos);
	if (!eat(p, '}')) {
		do {
			CBOX_AUTOFREE char *key = jstring(p);
			if (key == NULL || !eat(p, ':'))
				return cbox_err_set(err, EINVAL,
				                    "syscall table: key expected at offset %zu",
				                    p->pos);
			char *v = jscalar(p);
			if (v == NULL)
				return cbox_err_set(
				    err, EINVAL, "syscall table: bad value of \"%s\" at offset %zu",
				    key, p->pos);
			if (row_set(r, key, v, &seen) < 0)
				return cbox_err_set(err, EINVAL,
				                    "syscall table: bad \"%s\" before offset %zu",
				                    key, p->pos);
		} while (eat(p, ','));
		if (!eat(p, '}'))
			return cbox_err_set(err, EINVAL,
			                    "syscall table: '}' expected at offset %zu", p->pos);
	}
	if (seen != 7)
		return cbox_err_set(
		    err, EINVAL, "syscall table: entry before offset %zu lacks nr, name or level",
		    p->pos);
	if ((r->err_name == NULL && (r->err_name = strdup("")) == NULL) ||
	    (r->note == NULL && (r->note = strdup("")) == NULL))
		return cbox_err_set(err, ENOMEM, "syscall table");
	return 0;
}

static int by_nr(const void *a, const void *b)
{
	const struct cbox_compat_syscall *x = a, *y = b;
	return (x->nr > y->nr) - (x->nr < y->nr);
}

static int index_rows(struct cbox_compat_table *t, struct cbox_err **err)
{
	qsort(t->rows, t->n, sizeof(*t->rows), by_nr);
	t->by_name = cbox_hashmap_new(true, NULL);
	if (t->by_name == NULL)
		return cbox_err_set(err, ENOMEM, "syscall table");
	for (size_t i = 0; i < t->n; i++) {
		const char *name = t->rows[i].name;
		if (cbox_hashmap_get(t->by_name, name, strlen(name)) != NULL)
			return cbox_err_set(err, EINVAL, "syscall table: duplicate name %s", name);
		if (cbox_hashmap_put(t->by_name, name, strlen(name), &t->rows[i]) < 0)
			return cbox_err_set(err, ENOMEM, "syscall table");
	}
	return 0;
}

int cbox_compat_table_parse(const char *json, size_t len, struct cbox_compat_table *out,
                            struct cbox_err **err)
{
	struct jp p = {.s = json, .len = len};
	*out = (struct cbox_compat_table){0};
	if (!eat(&p, '['))
		return cbox_err_set(err, EINVAL, "syscall table: '[' expected at offset %zu",
		                    p.pos);
	if (!eat(&p, ']')) {
		do {
			struct cbox_compat_syscall *rows =
			    reallocarray(out->rows, out->n + 1, sizeof(*rows));
			if (rows == NULL) {
				cbox_compat_table_free(out);
				return cbox_err_set(err, ENOMEM, "syscall table");
			}
			out->rows = rows;
			rows[out->n] = (struct cbox_compat_syscall){0};
			out->n++;
			if (parse_row(&p, &rows[out->n - 1], err) < 0) {
				cbox_compat_table_free(out);
				return -EINVAL;
			}
		} while (eat(&p, ','));
		if (!eat(&p, ']')) {
			cbox_compat_table_free(out);
			return cbox_err_set(err, EINVAL,
			                    "syscall table: ']' expected at offset %zu", p.pos);
		}
	}
	ws(&p);
	if (p.pos != p.len || index_rows(out, err) < 0) {
		cbox_compat_table_free(out);
		return cbox_err_set(err, EINVAL, "syscall table: trailing data at offset %zu",
		                    p.pos);
	}
	return 0;
}

void cbox_compat_table_free(struct cbox_compat_table *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->n; i++)
		row_free(&t->rows[i]);
	free(t->rows);
	cbox_hashmap_free(t->by_name);
	*t = (struct cbox_compat_table){0};
}

const struct cbox_compat_syscall *cbox_compat_table_get(const struct cbox_compat_table *t,
                                                        const char *name)
{
	return t->by_name ? cbox_hashmap_get(t->by_name, name, strlen(name)) : NULL;
}
