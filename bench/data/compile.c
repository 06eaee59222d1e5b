/* bench/data/compile.c: the input of the gcc-c benchmark (`gcc -O2 -c compile.c`), never linked
 * into cbox. A small calculator: a tokenizer, a recursive-descent parser for arithmetic with
 * variables, an open-addressing symbol table and a line-oriented driver. It includes the usual
 * libc headers so that the compile reads and parses them, as a real translation unit does.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum tok_kind { TOK_END, TOK_NUM, TOK_IDENT, TOK_OP, TOK_ERROR };

struct token {
	enum tok_kind kind;
	double num;
	char text[32];
	char op;
};

struct lexer {
	const char *src;
	size_t pos;
	struct token cur;
};

struct symbol {
	char name[32];
	double value;
	int used;
};

struct symtab {
	struct symbol *slots;
	size_t cap, len;
};

struct parser {
	struct lexer lex;
	struct symtab *syms;
	char error[128];
};

static uint64_t hash_name(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ULL;
	}
	return h;
}

static int symtab_grow(struct symtab *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 16;
	struct symbol *ns = calloc(ncap, sizeof(*ns));

	if (ns == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->slots[i].used)
			continue;
		size_t j = hash_name(t->slots[i].name) & (ncap - 1);
		while (ns[j].used)
			j = (j + 1) & (ncap - 1);
		ns[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = ns;
	t->cap = ncap;
	return 0;
}

static struct symbol *symtab_find(struct symtab *t, const char *name, int create)
{
	if (t->cap == 0 || (create && (t->len + 1) * 4 > t->cap * 3)) {
		if (!create || symtab_grow(t) < 0)
			return NULL;
	}
	size_t i = hash_name(name) & (t->cap - 1);
	while (t->slots[i].used) {
		if (strcmp(t->slots[i].name, name) == 0)
			return &t->slots[i];
		i = (i + 1) & (t->cap - 1);
	}
	if (!create)
		return NULL;
	snprintf(t->slots[i].name, sizeof(t->slots[i].name), "%s", name);
	t->slots[i].used = 1;
	t->slots[i].value = 0.0;
	t->len++;
	return &t->slots[i];
}

static void lex_next(struct lexer *lx)
{
	const char *s = lx->src;

	while (isspace((unsigned char)s[lx->pos]))
		lx->pos++;
	memset(&lx->cur, 0, sizeof(lx->cur));
	if (s[lx->pos] == '\0') {
		lx->cur.kind = TOK_END;
	} else if (isdigit((unsigned char)s[lx->pos]) || s[lx->pos] == '.') {
		char *end;
		errno = 0;
		lx->cur.num = strtod(s + lx->pos, &end);
		lx->cur.kind = errno ? TOK_ERROR : TOK_NUM;
		lx->pos = (size_t)(end - s);
	} else if (isalpha((unsigned char)s[lx->pos]) || s[lx->pos] == '_') {
		size_t n = 0;
		while ((isalnum((unsigned char)s[lx->pos]) || s[lx->pos] == '_') &&
		       n + 1 < sizeof(lx->cur.text))
			lx->cur.text[n++] = s[lx->pos++];
		lx->cur.kind = TOK_IDENT;
	} else if (strchr("+-*/%^()=", s[lx->pos]) != NULL) {
		lx->cur.op = s[lx->pos++];
		lx->cur.kind = TOK_OP;
	} else {
		lx->cur.kind = TOK_ERROR;
		lx->cur.op = s[lx->pos++];
	}
}

static double parse_expr(struct parser *p);

static int fail(struct parser *p, const char *msg)
{
	if (p->error[0] == '\0')
		snprintf(p->error, sizeof(p->error), "%s at column %zu", msg, p->lex.pos);
	return -1;
}

static double parse_primary(struct parser *p)
{
	struct token t = p->lex.cur;

	if (t.kind == TOK_NUM) {
		lex_next(&p->lex);
		return t.num;
	}
	if (t.kind == TOK_IDENT) {
		lex_next(&p->lex);
		struct symbol *sym = symtab_find(p->syms, t.text, 0);
		if (sym == NULL)
			return fail(p, "unknown variable"), 0.0;
		return sym->value;
	}
	if (t.kind == TOK_OP && t.op == '(') {
		lex_next(&p->lex);
		double v = parse_expr(p);
		if (p->lex.cur.kind != TOK_OP || p->lex.cur.op != ')')
			return fail(p, "expected ')'"), 0.0;
		lex_next(&p->lex);
		return v;
	}
	if (t.kind == TOK_OP && t.op == '-') {
		lex_next(&p->lex);
		return -parse_primary(p);
	}
	return fail(p, "expected a number, a name or '('"), 0.0;
}

static double ipow(double base, long e)
{
	double r = 1.0;
	int neg = e < 0;

	for (e = neg ? -e : e; e > 0; e >>= 1, base *= base)
		if (e & 1)
			r *= base;
	return neg ? 1.0 / r : r;
}

static double parse_power(struct parser *p)
{
	double v = parse_primary(p);

	if (p->lex.cur.kind == TOK_OP && p->lex.cur.op == '^') {
		lex_next(&p->lex);
		double e = parse_power(p); /* right-associative */
		if (e != (double)(long)e)
			return fail(p, "exponent must be an integer"), 0.0;
		v = ipow(v, (long)e);
	}
	return v;
}

static double parse_term(struct parser *p)
{
	double v = parse_power(p);

	while (p->lex.cur.kind == TOK_OP && strchr("*/%", p->lex.cur.op) != NULL) {
		char op = p->lex.cur.op;
		lex_next(&p->lex);
		double r = parse_power(p);
		if (op != '*' && r == 0.0)
			return fail(p, "division by zero"), 0.0;
		if (op == '*')
			v *= r;
		else if (op == '/')
			v /= r;
		else
			v -= r * (double)(long)(v / r);
	}
	return v;
}

static double parse_expr(struct parser *p)
{
	double v = parse_term(p);

	while (p->lex.cur.kind == TOK_OP && (p->lex.cur.op == '+' || p->lex.cur.op == '-')) {
		char op = p->lex.cur.op;
		lex_next(&p->lex);
		double r = parse_term(p);
		v = op == '+' ? v + r : v - r;
	}
	return v;
}

/* Evaluates one line: "name = expr" assigns, "expr" prints. Returns 0 or -1 with p->error set. */
int calc_line(struct symtab *syms, const char *line, double *out)
{
	struct parser p = {.lex = {.src = line}, .syms = syms};
	struct lexer save;

	lex_next(&p.lex);
	save = p.lex;
	if (p.lex.cur.kind == TOK_IDENT) {
		char name[32];
		memcpy(name, p.lex.cur.text, sizeof(name));
		lex_next(&p.lex);
		if (p.lex.cur.kind == TOK_OP && p.lex.cur.op == '=') {
			lex_next(&p.lex);
			double v = parse_expr(&p);
			struct symbol *sym = symtab_find(syms, name, 1);
			if (sym == NULL)
				return fail(&p, "out of memory");
			sym->value = v;
			*out = v;
			return p.error[0] || p.lex.cur.kind != TOK_END ? -1 : 0;
		}
		p.lex = save;
	}
	*out = parse_expr(&p);
	if (p.lex.cur.kind != TOK_END)
		fail(&p, "trailing input");
	if (p.error[0])
		fprintf(stderr, "calc: %s\n", p.error);
	return p.error[0] ? -1 : 0;
}

/* Reads expressions from f, one a line, and prints each result; returns the number of errors. */
int calc_stream(FILE *f, FILE *out)
{
	struct symtab syms = {0};
	char line[512];
	int errors = 0;
	double v;

	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\r\n#")] = '\0';
		if (line[strspn(line, " \t")] == '\0')
			continue;
		if (calc_line(&syms, line, &v) < 0)
			errors++;
		else
			fprintf(out, "%.17g\n", v);
	}
	free(syms.slots);
	return errors;
}
