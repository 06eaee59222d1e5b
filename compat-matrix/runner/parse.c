/*
 * The parsers of cbox-compat's inputs: the test programs' result lines, suite files, exit maps,
 * --only globs, and the TSV escaping of messages. Pure: no file or process is touched here.
 *
 * Everything parsed here comes from programs under test, which may print anything (that is what
 * a failing or hostile test does): every parser bounds its work by the input length, never
 * trusts a NUL terminator inside the data, and rejects rather than guesses.
 */
#include "compat.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_names[CBOX_COMPAT_NSTATUS] = {
    [CBOX_COMPAT_PASS] = "pass",   [CBOX_COMPAT_FAIL] = "fail",       [CBOX_COMPAT_SKIP] = "skip",
    [CBOX_COMPAT_CRASH] = "crash", [CBOX_COMPAT_TIMEOUT] = "timeout",
};

const char *cbox_compat_status_name(enum cbox_compat_status status)
{
	return status < CBOX_COMPAT_NSTATUS ? status_names[status] : "?";
}

int cbox_compat_status_parse(const char *s, size_t len)
{
	for (int i = 0; i < CBOX_COMPAT_NSTATUS; i++) {
		if (strlen(status_names[i]) == len && strncasecmp(s, status_names[i], len) == 0) {
			/* Only the all-lower and all-upper spellings: "Pass" is not a case line. */
			bool lower = islower((unsigned char)s[0]);
			for (size_t j = 1; j < len; j++)
				if (!!islower((unsigned char)s[j]) != lower)
					return -1;
			return i;
		}
	}
	return -1;
}

char *cbox_compat_syscall_of(const char *name)
{
	const char *dot = strchr(name, '.');
	return dot ? strndup(name, (size_t)(dot - name)) : strdup(name);
}

struct cbox_compat_result *cbox_compat_result_new(const char *name, const char *syscall,
                                                  enum cbox_compat_status status, const char *msg)
{
	CBOX_AUTO(cbox_compat_result) *r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NULL;
	r->status = status;
	r->name = strdup(name);
	r->syscall = syscall ? strdup(syscall) : cbox_compat_syscall_of(name);
	r->msg = strdup(msg ? msg : "");
	if (r->name == NULL || r->syscall == NULL || r->msg == NULL)
		return NULL;
	return cbox_steal_ptr(&r);
}

void cbox_compat_result_free(struct cbox_compat_result *r)
{
	if (r == NULL)
		return;
	free(r->name);
	free(r->syscall);
	free(r->msg);
	free(r);
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-' || c == ':';
}

int cbox_compat_parse_case_line(const char *line, size_t len, struct cbox_compat_result **out,
                                struct cbox_err **err)
{
	*out = NULL;
	const char *sp = memchr(line, ' ', len);
	if (sp == NULL)
		return 0;
	int status = cbox_compat_status_parse(line, (size_t)(sp - line));
	if (status < 0 || !isupper((unsigned char)line[0]))
		return 0;

	const char *name = sp + 1, *end = line + len;
	const char *p = name;
	/* The name ends at ':' followed by a space (the message), or at the end of the line. */
	while (p < end && name_char(*p) && !(*p == ':' && (p + 1 == end || p[1] == ' ')))
		p++;
	if (p == name)
		return 0;
	if (p < end && *p != ':')
		return 0;

	CBOX_AUTOFREE char *n = strndup(name, (size_t)(p - name));
	const char *m = p < end ? p + 1 : end;
	while (m < end && *m == ' ')
		m++;
	CBOX_AUTOFREE char *msg = strndup(m, (size_t)(end - m));
	/* A NUL inside the message would silently cut it: make it visible instead. */
	if (memchr(m, '\0', (size_t)(end - m)) != NULL) {
		free(msg);
		msg = strdup("(message holds a NUL byte)");
	}
	if (n == NULL || msg == NULL)
		return cbox_err_set(err, ENOMEM, "parse a result line");
	*out = cbox_compat_result_new(n, NULL, status, msg);
	if (*out == NULL)
		return cbox_err_set(err, ENOMEM, "parse a result line");
	return 1;
}

bool cbox_compat_selected(const char *globs, const char *name)
{
	if (globs == NULL || *globs == '\0')
		return true;
	CBOX_AUTOFREE char *sys = cbox_compat_syscall_of(name);
	const char *p = globs;
	for (;;) {
		const char *comma = strchrnul(p, ',');
		size_t n = (size_t)(comma - p);
		if (n > 0) {
			CBOX_AUTOFREE char *g = strndup(p, n);
			if (g && (fnmatch(g, name, 0) == 0 || (sys && fnmatch(g, sys, 0) == 0)))
				return true;
		}
		if (*comma == '\0')
			return false;
		p = comma + 1;
	}
}

void cbox_compat_suite_free(struct cbox_compat_suite *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->cases[i].name);
		free(s->cases[i].cmd);
	}
	free(s->cases);
	s->cases = NULL;
	s->n = 0;
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isspace((unsigned char)s[i]))
			return false;
	return true;
}

static bool suite_has(const struct cbox_compat_suite *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->cases[i].name, name) == 0)
			return true;
	return false;
}

#define SUITE_LINE_MAX 4096

/* Check one line; returns NULL when fine, else why it is malformed. */
static const char *suite_line_problem(const char *line, size_t n, const char **tab)
{
	*tab = memchr(line, '\t', n);
	if (n > SUITE_LINE_MAX)
		return "line longer than 4096 bytes";
	if (memchr(line, '\0', n) != NULL)
		return "NUL byte in line";
	if (*tab != NULL && blank(line, (size_t)(*tab - line)))
		return "empty case name before the tab";
	if (*tab != NULL && blank(*tab + 1, n - (size_t)(*tab + 1 - line)))
		return "empty command after the name";
	if (*tab != NULL)
		for (const char *c = line; c < *tab; c++)
			if (!name_char(*c))
				return "case name holds a character other than [A-Za-z0-9_.:-]";
	return NULL;
}

static int suite_add(struct cbox_compat_suite *out, const char *line, size_t n, const char *tab,
                     size_t lineno, struct cbox_err **err)
{
	char *name = NULL, *cmd = NULL;
	if (tab) {
		name = strndup(line, (size_t)(tab - line));
		cmd = strndup(tab + 1, n - (size_t)(tab + 1 - line));
	} else {
		if (asprintf(&name, "line%zu", lineno) < 0)
			name = NULL;
		cmd = strndup(line, n);
	}
	struct cbox_compat_suite_case *c = reallocarray(out->cases, out->n + 1, sizeof(*c));
	if (name == NULL || cmd == NULL || c == NULL) {
		free(name);
		free(cmd);
		if (c)
			out->cases = c;
		return cbox_err_set(err, ENOMEM, "parse suite");
	}
	out->cases = c;
	out->cases[out->n++] = (struct cbox_compat_suite_case){.name = name, .cmd = cmd};
	return 0;
}

int cbox_compat_suite_parse(const char *file, const char *buf, size_t len, FILE *warn,
                            struct cbox_compat_suite *out, struct cbox_err **err)
{
	*out = (struct cbox_compat_suite){0};
	size_t lineno = 0;
	for (size_t off = 0; off < len;) {
		const char *line = buf + off;
		const char *nl = memchr(line, '\n', len - off);
		size_t n = nl ? (size_t)(nl - line) : len - off;
		off += n + (nl != NULL);
		lineno++;
		if (n > 0 && line[n - 1] == '\r')
			n--;
		size_t lead = 0;
		while (lead < n && (line[lead] == ' ' || line[lead] == '\t'))
			lead++;
		if (lead == n || line[lead] == '#')
			continue;

		const char *tab, *why = suite_line_problem(line, n, &tab);
		if (why == NULL && tab != NULL) {
			CBOX_AUTOFREE char *name = strndup(line, (size_t)(tab - line));
			if (name && suite_has(out, name))
				why = "case name already used";
		}
		if (why != NULL) {
			if (warn)
				fprintf(warn, "suite %s:%zu: %s; line skipped\n", file, lineno,
				        why);
			continue;
		}
		if (suite_add(out, line, n, tab, lineno, err) < 0) {
			cbox_compat_suite_free(out);
			return -ENOMEM;
		}
	}
	return (int)out->n;
}

static int exit_entry(const char *e, size_t n, struct cbox_compat_exit_map *map,
                      struct cbox_err **err)
{
	const char *eq = memchr(e, '=', n);
	if (eq == NULL || eq == e)
		return cbox_err_set(err, EINVAL, "exit map entry '%.*s': expected CODE=STATUS",
		                    (int)n, e);
	int st = cbox_compat_status_parse(eq + 1, n - (size_t)(eq + 1 - e));
	if (st < 0 || !islower((unsigned char)eq[1]))
		return cbox_err_set(err, EINVAL,
		                    "exit map entry '%.*s': status must be one of "
		                    "pass|fail|skip|crash|timeout",
		                    (int)n, e);
	if (eq - e == 1 && e[0] == '*') {
		map->fallback = st;
		return 0;
	}
	int code = 0;
	for (const char *c = e; c < eq; c++) {
		if (!isdigit((unsigned char)*c) || code > 255)
			return cbox_err_set(err, EINVAL,
			                    "exit map entry '%.*s': code must be 0..255 or '*'",
			                    (int)n, e);
		code = code * 10 + (*c - '0');
	}
	if (code > 255)
		return cbox_err_set(err, EINVAL,
		                    "exit map entry '%.*s': code must be 0..255 or '*'", (int)n, e);
	map->codes[code] = st;
	return 0;
}

int cbox_compat_exit_map_parse(const char *s, struct cbox_compat_exit_map *map,
                               struct cbox_err **err)
{
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(map->codes); i++)
		map->codes[i] = -1;
	map->fallback = CBOX_COMPAT_FAIL;
	if (*s == '\0')
		return cbox_err_set(err, EINVAL, "empty exit map");
	for (const char *p = s;;) {
		const char *comma = strchrnul(p, ',');
		if (exit_entry(p, (size_t)(comma - p), map, err) < 0)
			return -EINVAL;
		if (*comma == '\0')
			return 0;
		p = comma + 1;
	}
}

enum cbox_compat_status cbox_compat_exit_map_get(const struct cbox_compat_exit_map *map, int code)
{
	if (code >= 0 && code < 256 && map->codes[code] >= 0)
		return (enum cbox_compat_status)map->codes[code];
	return (enum cbox_compat_status)map->fallback;
}

char *cbox_compat_tsv_escape(const char *s)
{
	size_t n = strlen(s);
	char *out = malloc(n * 4 + 1), *o = out;
	if (out == NULL)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '\\':
			o = stpcpy(o, "\\\\");
			break;
		case '\t':
			o = stpcpy(o, "\\t");
			break;
		case '\n':
			o = stpcpy(o, "\\n");
			break;
		case '\r':
			o = stpcpy(o, "\\r");
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				o += sprintf(o, "\\x%02x", *p);
			else
				*o++ = (char)*p;
		}
	}
	*o = '\0';
	return out;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

char *cbox_compat_tsv_unescape(const char *s, size_t len)
{
	char *out = malloc(len + 1), *o = out;
	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] != '\\' || i + 1 == len) {
			*o++ = s[i];
			continue;
		}
		char c = s[i + 1];
		if (c == '\\' || c == 't' || c == 'n' || c == 'r') {
			*o++ = c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r' : '\\';
			i++;
		} else if (c == 'x' && i + 3 < len && hexval(s[i + 2]) >= 0 &&
		           hexval(s[i + 3]) >= 0 && hexval(s[i + 2]) * 16 + hexval(s[i + 3]) != 0) {
			*o++ = (char)(hexval(s[i + 2]) * 16 + hexval(s[i + 3]));
			i += 3;
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return out;
}
