/*
 * cbox-filter-dump PID: prints the x86_64 syscalls that the seccomp filters of task PID let
 * through (SECCOMP_RET_ALLOW or SECCOMP_RET_LOG from every filter) for at least one tried
 * argument set, one name per line, sorted by number.
 *
 * The filters are read with PTRACE_SECCOMP_GET_FILTER (needs CAP_SYS_ADMIN and a ptrace stop, so
 * the task is seized, interrupted, then detached) and run through a classic-BPF interpreter of
 * our own: the published host surface is checked against the program the kernel really runs,
 * not against the code that generated it.
 *
 * Each syscall number 0..460 is tried with arch AUDIT_ARCH_X86_64 and every argument value (the
 * paths of the programs are explored, see explore()). A syscall allowed under another ABI (i386
 * numbers, x32 numbers) is printed as "i386:NR" or "x32:NR": a filter must refuse those outright.
 *
 * Exit status: 0 with the list; 3 when PID is already traced by another process (its filter is
 * unreadable while the sentry traces it); 1 on any other error, with a message on stderr.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "syscall_names.h"

#define MAX_FILTERS 32
#define MAX_INSNS   BPF_MAXINSNS
#define NR_MAX      470
#define X32_BIT     0x40000000u

struct filter {
	struct sock_filter insns[MAX_INSNS];
	int len;
};

static struct filter filters[MAX_FILTERS];
static int nfilters;

static uint32_t alu(uint16_t op, uint32_t a, uint32_t x, int *bad)
{
	switch (op) {
	case BPF_ADD:
		return a + x;
	case BPF_SUB:
		return a - x;
	case BPF_MUL:
		return a * x;
	case BPF_DIV:
		if (x == 0)
			return 0; /* the kernel's classic-BPF division by zero ends with 0 */
		return a / x;
	case BPF_MOD:
		return x ? a % x : 0;
	case BPF_OR:
		return a | x;
	case BPF_AND:
		return a & x;
	case BPF_XOR:
		return a ^ x;
	case BPF_LSH:
		return x < 32 ? a << x : 0;
	case BPF_RSH:
		return x < 32 ? a >> x : 0;
	case BPF_NEG:
		return -a;
	}
	*bad = 1;
	return 0;
}

static int jump_taken(uint16_t op, uint32_t a, uint32_t v, int *bad)
{
	switch (op) {
	case BPF_JEQ:
		return a == v;
	case BPF_JGT:
		return a > v;
	case BPF_JGE:
		return a >= v;
	case BPF_JSET:
		return (a & v) != 0;
	}
	*bad = 1;
	return 0;
}

/*
 * The interpreter explores every path of the programs instead of trying a few argument values:
 * the syscall number and arch are fixed, the other 32-bit words of seccomp_data (instruction
 * pointer, arguments) are unknowns. A JEQ on an unknown word splits the path into "word == k"
 * and "word != k" (remembered, so a later test of the same word is decided consistently); other
 * tests on unknown or computed values take both branches. A call counts as allowed when some path
 * through every filter (with one consistent set of word values) returns ALLOW or LOG. The result
 * can over-report (a range test combined with another test of the same word) but never misses a
 * syscall that some argument values let through.
 */
#define NWORDS     (sizeof(struct seccomp_data) / 4)
#define MAX_EXCL   16
#define STEP_LIMIT 2000000L

enum { V_CONST, V_WORD, V_OPAQUE };

struct val {
	int kind;
	uint32_t v; /* V_CONST: the value; V_WORD: the word index */
};

struct word {
	int known;
	uint32_t value;
	int nexcl;
	uint32_t excl[MAX_EXCL];
};

struct state {
	struct word w[NWORDS];
};

static long steps;

static struct val word_val(const struct state *s, uint32_t idx)
{
	if (s->w[idx].known)
		return (struct val){V_CONST, s->w[idx].value};
	return (struct val){V_WORD, idx};
}

static int explore(int fi, int pc, struct val a, struct val x, struct val *mem, struct state *s,
                   int *err);

/* Follows a conditional jump whose outcome depends on unknown data: both ways, constraining the
 * word on a JEQ. */
static int branch_unknown(int fi, int pc, const struct sock_filter *i, struct val a, struct val x,
                          struct val *mem, struct state *s, int *err)
{
	struct val m[BPF_MEMWORDS];
	int tpc = pc + 1 + i->jt, fpc = pc + 1 + i->jf;

	if (a.kind == V_WORD && BPF_OP(i->code) == BPF_JEQ && BPF_SRC(i->code) == BPF_K) {
		struct word *w = &s->w[a.v], saved = *w;
		int excluded = 0;
		for (int e = 0; e < w->nexcl; e++)
			excluded |= w->excl[e] == i->k;
		if (!excluded) {
			w->known = 1;
			w->value = i->k;
			memcpy(m, mem, sizeof(m));
			if (explore(fi, tpc, (struct val){V_CONST, i->k}, x, m, s, err))
				return 1;
			*w = saved;
		}
		if (w->nexcl < MAX_EXCL)
			w->excl[w->nexcl++] = i->k;
		memcpy(m, mem, sizeof(m));
		int r = explore(fi, fpc, a, x, m, s, err);
		*w = saved;
		return r;
	}
	memcpy(m, mem, sizeof(m));
	if (explore(fi, tpc, a, x, m, s, err))
		return 1;
	memcpy(m, mem, sizeof(m));
	return explore(fi, fpc, a, x, m, s, err);
}

static struct val alu_val(const struct sock_filter *i, struct val a, struct val x, int *bad)
{
	struct val src = BPF_SRC(i->code) == BPF_X ? x : (struct val){V_CONST, i->k};
	if (a.kind != V_CONST || (BPF_OP(i->code) != BPF_NEG && src.kind != V_CONST))
		return (struct val){V_OPAQUE, 0};
	return (struct val){V_CONST, alu(BPF_OP(i->code), a.v, src.v, bad)};
}

/* Explores filter fi from pc; returns 1 when some path through this and the later filters
 * allows the call. */
static int explore(int fi, int pc, struct val a, struct val x, struct val *mem, struct state *s,
                   int *err)
{
	const struct filter *f = &filters[fi];
	int bad = 0;

	for (; pc < f->len && !bad && !*err; pc++) {
		const struct sock_filter *i = &f->insns[pc];
		if (++steps > STEP_LIMIT) {
			*err = 2;
			return 0;
		}
		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
		case BPF_LDX: {
			struct val v = {V_CONST, i->k};
			if (BPF_MODE(i->code) == BPF_ABS && BPF_CLASS(i->code) == BPF_LD) {
				if (i->k % 4 || i->k >= sizeof(struct seccomp_data))
					bad = 1;
				else
					v = word_val(s, i->k / 4);
			} else if (BPF_MODE(i->code) == BPF_MEM && i->k < BPF_MEMWORDS) {
				v = mem[i->k];
			} else if (BPF_MODE(i->code) == BPF_LEN) {
				v.v = sizeof(struct seccomp_data);
			} else if (BPF_MODE(i->code) != BPF_IMM) {
				bad = 1;
			}
			if (BPF_CLASS(i->code) == BPF_LD)
				a = v;
			else
				x = v;
			break;
		}
		case BPF_ST:
		case BPF_STX:
			if (i->k >= BPF_MEMWORDS)
				bad = 1;
			else
				mem[i->k] = BPF_CLASS(i->code) == BPF_ST ? a : x;
			break;
		case BPF_ALU:
			a = alu_val(i, a, x, &bad);
			break;
		case BPF_JMP: {
			if (BPF_OP(i->code) == BPF_JA) {
				pc += i->k;
				break;
			}
			struct val src =
			    BPF_SRC(i->code) == BPF_X ? x : (struct val){V_CONST, i->k};
			if (a.kind != V_CONST || src.kind != V_CONST)
				return branch_unknown(fi, pc, i, a, x, mem, s, err);
			pc += jump_taken(BPF_OP(i->code), a.v, src.v, &bad) ? i->jt : i->jf;
			break;
		}
		case BPF_RET: {
			if (BPF_RVAL(i->code) == BPF_A && a.kind != V_CONST) {
				*err = 1; /* an action computed from the arguments: not supported */
				return 0;
			}
			uint32_t act =
			    (BPF_RVAL(i->code) == BPF_A ? a.v : i->k) & SECCOMP_RET_ACTION_FULL;
			if (act != SECCOMP_RET_ALLOW && act != SECCOMP_RET_LOG)
				return 0;
			if (fi + 1 == nfilters)
				return 1;
			struct val m[BPF_MEMWORDS] = {0};
			return explore(fi + 1, 0, (struct val){V_CONST, 0},
			               (struct val){V_CONST, 0}, m, s, err);
		}
		case BPF_MISC:
			if (BPF_MISCOP(i->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		default:
			bad = 1;
		}
	}
	*err = 1; /* fell off the end or met an unknown instruction: our reading is wrong */
	return 0;
}

/* The kernel runs every filter and keeps the action of highest precedence; a call proceeds only
 * when that action is ALLOW or LOG, so a path must be allowed by each filter in turn. */
static int allowed_any(uint32_t nr, uint32_t arch, int *err)
{
	struct state s = {0};
	struct val m[BPF_MEMWORDS] = {0};

	s.w[offsetof(struct seccomp_data, nr) / 4] = (struct word){.known = 1, .value = nr};
	s.w[offsetof(struct seccomp_data, arch) / 4] = (struct word){.known = 1, .value = arch};
	steps = 0;
	return explore(0, 0, (struct val){V_CONST, 0}, (struct val){V_CONST, 0}, m, &s, err);
}

static int tracer_of(pid_t pid)
{
	char path[64], line[256];
	int tracer = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %d", &tracer) == 1)
			break;
	fclose(f);
	return tracer;
}

/* Seizes and interrupts pid, copies its filters, detaches. */
static int read_filters(pid_t pid)
{
	int st, ret = 0;

	if (ptrace(PTRACE_SEIZE, pid, 0, 0) < 0) {
		int e = errno, tracer = tracer_of(pid);
		if (tracer > 0) {
			fprintf(stderr,
			        "cbox-filter-dump: pid %d is traced by pid %d: its filter "
			        "cannot be read while that tracer is attached\n",
			        pid, tracer);
			return 3;
		}
		fprintf(stderr, "cbox-filter-dump: PTRACE_SEIZE %d: %s\n", pid, strerror(e));
		return 1;
	}
	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) < 0 || waitpid(pid, &st, __WALL) != pid) {
		fprintf(stderr, "cbox-filter-dump: interrupt %d: %s\n", pid, strerror(errno));
		return 1;
	}
	for (nfilters = 0; nfilters < MAX_FILTERS; nfilters++) {
		struct filter *f = &filters[nfilters];
		long n = ptrace(PTRACE_SECCOMP_GET_FILTER, pid, nfilters, f->insns);
		if (n < 0 && errno == ENOENT)
			break;
		if (n < 0 || n > MAX_INSNS) {
			fprintf(stderr, "cbox-filter-dump: PTRACE_SECCOMP_GET_FILTER %d #%d: %s\n",
			        pid, nfilters, n < 0 ? strerror(errno) : "too long");
			ret = 1;
			break;
		}
		f->len = (int)n;
	}
	ptrace(PTRACE_DETACH, pid, 0, 0);
	return ret;
}

static void print_other_abis(int *err)
{
	for (uint32_t nr = 0; nr <= NR_MAX; nr++)
		if (allowed_any(nr, AUDIT_ARCH_I386, err))
			printf("i386:%u\n", nr);
	for (uint32_t nr = 0; nr <= 547; nr++)
		if (allowed_any(nr | X32_BIT, AUDIT_ARCH_X86_64, err))
			printf("x32:%u\n", nr);
}

int main(int argc, char **argv)
{
	int err = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: cbox-filter-dump PID\n");
		return 1;
	}
	int ret = read_filters(atoi(argv[1]));
	if (ret)
		return ret;
	if (nfilters == 0) {
		fprintf(stderr, "cbox-filter-dump: pid %s has no seccomp filter\n", argv[1]);
		printf("*all*\n");
		return 0;
	}
	for (uint32_t nr = 0; nr <= NR_MAX; nr++) {
		if (!allowed_any(nr, AUDIT_ARCH_X86_64, &err))
			continue;
		if (nr < sizeof(cbox_syscall_names) / sizeof(*cbox_syscall_names) &&
		    cbox_syscall_names[nr])
			printf("%s\n", cbox_syscall_names[nr]);
		else
			printf("nr%u\n", nr);
	}
	print_other_abis(&err);
	if (err) {
		fprintf(stderr, "cbox-filter-dump: the filter holds an instruction this "
		                "interpreter does not know\n");
		return 1;
	}
	return 0;
}
