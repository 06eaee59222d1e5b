/*
 * Allowlist filters in classic BPF, made directly (see seccomp_allow.h for why not libseccomp).
 * The program checks the architecture and the x32 bit, then finds the syscall number in a
 * binary search over the rules sorted by number: a compare per level, each picking one half,
 * down to runs of a few rules compared in turn. Each run ends in its own REFUSE, and a far half is
 * reached with a JA (a 32-bit offset), so no jump depends on the size of what it skips.
 *
 * Why a search and not one compare per rule: the kernel works out at install time which calls a
 * filter allows whatever the arguments (seccomp's action cache), by running the filter for every
 * syscall number; with ~60 rules in a row that took ~0.25 ms per filter on this VM, on the
 * critical path of every sandbox start (the gofer's and the sentry's filters). A search runs a
 * few instructions per number.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cbox/seccomp_allow.h"

#define X32_SYSCALL_BIT 0x40000000u

#define LD_ABS(off)    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define RET(v)         BPF_STMT(BPF_RET | BPF_K, (v))
#define JEQ(k, jt, jf) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (jt), (jf))
#define JGE(k, jt, jf) BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (k), (jt), (jf))
#define JA(k)          BPF_STMT(BPF_JMP | BPF_JA, (k))
#define ARG_LO(i)      (offsetof(struct seccomp_data, args) + 8 * (i))
#define ARG_HI(i)      (ARG_LO(i) + 4)
#define OFF_NR         offsetof(struct seccomp_data, nr)
#define OFF_ARCH       offsetof(struct seccomp_data, arch)
#define KILL           SECCOMP_RET_KILL_PROCESS
/* A call not on the list: SIGSYS, which the crash handler (lib/crash.c) reports with the call's
 * number before it dies of it; without a handler the process dies of it all the same. The call
 * itself never runs either way. (KILL_PROCESS gave only "died of signal 31": the sentry's own
 * tkill was found that way only by reading.) */
#define REFUSE      SECCOMP_RET_TRAP
#define ALLOW       SECCOMP_RET_ALLOW
#define HEAD_LEN    6
#define RULE_LEN(r) ((r)->arg0 == CBOX_ALLOW_ANY ? 2 : 7)
#define RUN_MAX     4 /* rules a leaf of the search compares in turn */

static int by_nr(const void *a, const void *b)
{
	const struct cbox_allow *x = a, *y = b;
	return (x->nr > y->nr) - (x->nr < y->nr);
}

/* Rules r[0..n), sorted by number, the number loaded: a run for a few, else a split at a rule
 * that starts a number (so that both rules of one number land on the same side). */
static struct sock_filter *emit(struct sock_filter *q, const struct cbox_allow *r, size_t n)
{
	size_t mid = n / 2;
	while (mid > 0 && r[mid].nr == r[mid - 1].nr)
		mid--;
	if (n <= RUN_MAX || mid == 0) {
		for (size_t i = 0; i < n; i++) {
			if (r[i].arg0 == CBOX_ALLOW_ANY) {
				*q++ = (struct sock_filter)JEQ((uint32_t)r[i].nr, 0, 1);
				*q++ = (struct sock_filter)RET(ALLOW);
				continue;
			}
			/* The whole 64-bit register must equal the (non-negative) value: the high
			 * half zero, as the kernel's own fd argument would not look at it. A
			 * mismatch reloads the number and goes on with the next rule. */
			*q++ = (struct sock_filter)JEQ((uint32_t)r[i].nr, 0, 6);
			*q++ = (struct sock_filter)LD_ABS(ARG_LO(0));
			*q++ = (struct sock_filter)JEQ((uint32_t)r[i].arg0, 0, 3);
			*q++ = (struct sock_filter)LD_ABS(ARG_HI(0));
			*q++ = (struct sock_filter)JEQ(0, 0, 1);
			*q++ = (struct sock_filter)RET(ALLOW);
			*q++ = (struct sock_filter)LD_ABS(OFF_NR);
		}
		*q++ = (struct sock_filter)RET(REFUSE);
		return q;
	}
	/* nr >= r[mid].nr: the JA to the upper half; below it: the lower half, which follows. */
	*q++ = (struct sock_filter)JGE((uint32_t)r[mid].nr, 0, 1);
	struct sock_filter *ja = q++;
	struct sock_filter *upper = emit(q, r, mid);
	*ja = (struct sock_filter)JA((uint32_t)(upper - q));
	return emit(upper, r + mid, n - mid);
}

int cbox_allow_build(const struct cbox_allow *rules, size_t n, struct sock_filter **prog,
                     unsigned short *len)
{
	/* An upper bound: each split adds two instructions and ends one more run with a REFUSE. */
	size_t total = HEAD_LEN + 1 + 3 * n;
	for (size_t i = 0; i < n; i++)
		total += RULE_LEN(&rules[i]);
	struct cbox_allow *sorted = malloc((n ? n : 1) * sizeof(*sorted));
	struct sock_filter *p = malloc(total * sizeof(*p)), *q = p;
	if (!sorted || !p) {
		free(sorted);
		free(p);
		return -ENOMEM;
	}
	if (n)
		memcpy(sorted, rules, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), by_nr);
	/* Another architecture's numbers mean other calls (i386 through int 0x80), and x32
	 * calls reuse x86_64's with a high bit: both kill. */
	*q++ = (struct sock_filter)LD_ABS(OFF_ARCH);
	*q++ = (struct sock_filter)JEQ(AUDIT_ARCH_X86_64, 1, 0);
	*q++ = (struct sock_filter)RET(KILL);
	*q++ = (struct sock_filter)LD_ABS(OFF_NR);
	*q++ = (struct sock_filter)JGE(X32_SYSCALL_BIT, 0, 1);
	*q++ = (struct sock_filter)RET(KILL);
	q = emit(q, sorted, n);
	free(sorted);
	if (q - p > BPF_MAXINSNS) {
		free(p);
		return -E2BIG;
	}
	*prog = p;
	*len = (unsigned short)(q - p);
	return 0;
}

int cbox_allow_load(const struct cbox_allow *rules, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (rules[i].nr < 0 || (rules[i].arg0 < 0 && rules[i].arg0 != CBOX_ALLOW_ANY))
			return -EINVAL;
	struct sock_filter *prog;
	unsigned short len;
	int r = cbox_allow_build(rules, n, &prog, &len);
	if (r < 0)
		return r;
	/* As libseccomp's seccomp_load did for its callers: without no_new_privs an unprivileged
	 * task may not install a filter. */
	struct sock_fprog fp = {.len = len, .filter = prog};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) < 0)
		r = -errno;
	free(prog);
	return r;
}

int cbox_allow_load_nrs(const int *nrs, size_t n)
{
	struct cbox_allow *rules = calloc(n ? n : 1, sizeof(*rules));
	if (!rules)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		rules[i] = (struct cbox_allow){.nr = nrs[i], .arg0 = CBOX_ALLOW_ANY};
	int r = cbox_allow_load(rules, n);
	free(rules);
	return r;
}
