/*
 * The guest's seccomp filter, generated from the syscall table: a balanced binary search over
 * ranges of syscall numbers that share one action, so a syscall costs about log2(ranges)
 * comparisons instead of a walk over every fast-path entry.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "cbox/platform.h"
#include "cbox/syscalls.h"

enum action {
	ACT_TRAP,      /* to the sentry (the platform's trap action) */
	ACT_ALLOW,     /* fast path */
	ACT_EXEC,      /* SECCOMP_RET_TRACE: rewritten at a ptrace stop */
	ACT_FD_GUARD0, /* fast path unless arg0 is the reserved install fd */
	ACT_FD_GUARD1, /* fast path unless arg1 is the reserved install fd */
	ACT_CLONE,     /* fast path unless the flags ask for namespaces or CLONE_UNTRACED */
	ACT_NO_ADDR4,  /* fast path unless arg4 (sendto's address) is not NULL */
	ACT_BY_VALUE,  /* fast path or not by one argument's value (by_value below) */
	ACT_RETURN,    /* a fixed return value (the refuse filter's SECCOMP_RET_ERRNO) */
};

/*
 * Calls the filter decides by one argument compared with two values. The arguments are an
 * unsigned int (an ioctl request, an fcntl command) or an int (a prctl option): the low 32 bits
 * decide, as the kernel truncates them too, so bits above them cannot pass a refused value off
 * as an allowed one. listed: a match is allowed and anything else trapped; without it, a match
 * is trapped and anything else allowed. fd0: arg 0 is an fd, trapped on the ptrace platform's
 * reserved install fd whatever the value.
 */
static const struct by_value {
	int nr, arg;
	uint32_t v1, v2;
	bool listed, fd0;
	/* Two more values for an entry without listed, both 0 when none (then unused). */
	uint32_t x1, x2;
} by_value[] = {
    /* Reads of terminal state: ENOTTY on any other kind of fd, as on
     * Linux; on a terminal (the sandbox's pty, or the caller's as stdin) nothing that is not
     * the guest's to know. Programs make them for every file they open (Python's isatty).
     * Requests that change a terminal or read the console still reach the sentry (sys_ioctl:
     * TIOCSTI is EPERM). */
    {SYS_ioctl, 1, TCGETS, TIOCGWINSZ, true, true, 0, 0},
    /* The commands the sentry checks (sys_fcntl: leases are refused, directory notification
     * answered on the directories it makes up), and F_GETFL and F_SETFL, which
     * it answers on an O_PATH fd as Linux does: the host would show a stand-in's own flags
     * on the seccomp platform (sys_file.c path_stand_in), and the flags of the sentry's own
     * open on the ptrace platform (node makes ~14 at its start, python none). The others
     * run on the host fd, where the sentry would only continue them (node makes dozens). */
    {SYS_fcntl, 1, F_NOTIFY, F_SETLEASE, false, true, F_GETFL, F_SETFL},
    /* The thread's name (the loader sets it at every exec), which
     * the sentry only continued; every other option still reaches it (sys_proc.c). */
    {SYS_prctl, 0, PR_SET_NAME, PR_GET_NAME, true, false, 0, 0},
    /* A task's own CPU mask (pid 0). Another task's is read or set by the sentry
     * (syscalls/sys_proc.c): never while that task is held on one CPU for an fd install
     * (seccomp.c), when its mask is not its own. */
    {SYS_sched_setaffinity, 0, 0, 0, true, false, 0, 0},
    {SYS_sched_getaffinity, 0, 0, 0, true, false, 0, 0},
    /* The caller's own (pid 0: glibc's getrlimit and setrlimit are prlimit64 on 0); another
     * process's goes through the sentry's permission check on the guest's ids
     * (syscalls/sys_xproc.c), which the host cannot make: every guest task is one host id. */
    {SYS_prlimit64, 0, 0, 0, true, false, 0, 0},
    {SYS_get_robust_list, 0, 0, 0, true, false, 0, 0},
    {SYS_migrate_pages, 0, 0, 0, true, false, 0, 0},
    {SYS_move_pages, 0, 0, 0, true, false, 0, 0},
    {SYS_sched_setparam, 0, 0, 0, true, false, 0, 0},
    {SYS_sched_setscheduler, 0, 0, 0, true, false, 0, 0},
    {SYS_sched_setattr, 0, 0, 0, true, false, 0, 0},
    /* A process or a process group (PRIO_PROCESS 0, PRIO_PGRP 1; IOPRIO_WHO_PROCESS 1,
     * IOPRIO_WHO_PGRP 2): the host resolves them in the sandbox's pid namespace, and Linux lets
     * anyone read them. A user is a guest id the host cannot tell apart (sys_sched.c). */
    {SYS_getpriority, 0, 0, 1, true, false, 0, 0},
    {SYS_ioprio_get, 0, 1, 2, true, false, 0, 0},
};

static const struct by_value *by_value_of(int nr)
{
	for (size_t i = 0; i < sizeof(by_value) / sizeof(by_value[0]); i++)
		if (by_value[i].nr == nr)
			return &by_value[i];
	return NULL;
}

/* The values a by_value call is compared with: 2, or 4 with x1 and x2. */
static unsigned by_value_values(const struct by_value *v, uint32_t out[4])
{
	unsigned n = 0;
	out[n++] = v->v1;
	out[n++] = v->v2;
	if (v->x1 || v->x2) {
		out[n++] = v->x1;
		out[n++] = v->x2;
	}
	return n;
}

/* clone flags the sentry must see (see sys_clone): namespaces, which it refuses, and
 * CLONE_UNTRACED, which would hide the child from it and which it takes out of the call. */
#define CLONE_REFUSED_FLAGS                                                                        \
	(0x00020000u | 0x00800000u | 0x02000000u | 0x04000000u | 0x08000000u | 0x10000000u |       \
	 0x20000000u | 0x40000000u | 0x00000080u)

/*
 * Under --strict on the seccomp platform these stay on the fast path. A signal that arrives while
 * a call waits for the sentry to receive its notification makes the kernel restart the call after
 * the handler when the handler has SA_RESTART (seccomp_unotify(2)), but Linux never restarts these
 * (they fail with EINTR, or sleep only the time left): a trapped pause() would sleep again after
 * the very signal it waited for. They name no file, so the sentry has nothing to check in them;
 * the ptrace platform's stops do not have the problem and trap them as every other call.
 */
static bool waits_for_signal(int nr)
{
	switch (nr) {
	case SYS_pause:
	case SYS_rt_sigsuspend:
	case SYS_rt_sigtimedwait:
	case SYS_nanosleep:
	case SYS_clock_nanosleep:
	case SYS_poll:
	case SYS_ppoll:
	case SYS_select:
	case SYS_pselect6:
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
	case SYS_epoll_pwait2:
		return true;
	default:
		return false;
	}
}

bool cbox_platform_fastpath(const struct cbox_platform_ops *ops, bool strict, int nr)
{
	if (strict)
		return ops->trap_action == SECCOMP_RET_USER_NOTIF && waits_for_signal(nr);
	if (nr == SYS_fork || nr == SYS_vfork || nr == SYS_clone || by_value_of(nr))
		return true; /* see action_of: allowed by the filter (clone after a flags check,
		              * the others by an argument's value) */
	/* sendto is on the fast path only without an address (see action_of): the published
	 * list names it, the table's note says it is conditional. */
	const struct cbox_sys_entry *e = cbox_sys_lookup(nr);
	return e && e->kind == CBOX_SYS_FAST;
}

const char *cbox_platform_fastpath_condition(const struct cbox_platform_ops *ops, bool strict,
                                             int nr)
{
	if (!cbox_platform_fastpath(ops, strict, nr))
		return NULL;
	/* Kept beside action_of, which makes these the filter's actual conditions. */
	if (nr == SYS_clone)
		return "trapped with namespace flags or CLONE_UNTRACED";
	if (nr == SYS_sendto)
		return "trapped with a destination address";
	if (nr == SYS_ioctl)
		return ops->needs_install_fd ? "trapped except TCGETS and TIOCGWINSZ, and on the "
		                               "install fd (ptrace)"
		                             : "trapped except TCGETS and TIOCGWINSZ";
	if (nr == SYS_fcntl)
		return ops->needs_install_fd
		           ? "trapped for F_NOTIFY, F_SETLEASE, F_GETFL and F_SETFL, and on the "
		             "install fd (ptrace)"
		           : "trapped for F_NOTIFY, F_SETLEASE, F_GETFL and F_SETFL";
	if (nr == SYS_prctl)
		return "trapped except PR_SET_NAME and PR_GET_NAME";
	if (nr == SYS_getpriority || nr == SYS_ioprio_get)
		return "trapped for a user (PRIO_USER, IOPRIO_WHO_USER)";
	if (by_value_of(nr) && by_value_of(nr)->arg == 0 && by_value_of(nr)->listed &&
	    by_value_of(nr)->v1 == 0 && by_value_of(nr)->v2 == 0)
		return "trapped except on the caller itself (pid 0)";
	if (ops->needs_install_fd && (nr == SYS_close || nr == SYS_dup))
		return "trapped on the install fd (ptrace)";
	if (ops->needs_install_fd && (nr == SYS_dup2 || nr == SYS_dup3))
		return "trapped onto the install fd (ptrace)";
	return NULL;
}

static enum action action_of(const struct cbox_platform_ops *ops, bool strict, int nr)
{
	/* clone3 too: the sentry makes it a clone at the ptrace stop (syscalls/sys_clone.c). */
	if (nr == SYS_execve || nr == SYS_execveat || nr == SYS_clone3)
		return ACT_EXEC;
	/* Process creation never waits in a seccomp notification: a signal arriving there would
	 * turn the fork's transparent restart into EINTR. It is checked in the filter (clone's
	 * flags are a register) or, when it must reach the sentry, at a ptrace stop. */
	if (nr == SYS_clone)
		return strict ? ACT_EXEC : ACT_CLONE;
	if (nr == SYS_fork || nr == SYS_vfork)
		return strict ? ACT_EXEC : ACT_ALLOW;
	/* The sentry runs rt_sigaction inside a new task for CLONE_CLEAR_SIGHAND and waits for
	 * it (cbox_ptrace_clear_sighand): as a seccomp notification it would wait for the sentry
	 * in turn. It is on the fast path; --strict sends it as a ptrace stop instead. */
	if (nr == SYS_rt_sigaction && strict)
		return ACT_EXEC;
	if (!cbox_platform_fastpath(ops, strict, nr))
		return ACT_TRAP;
	/* An AF_UNIX path in sendto's address must be resolved in the guest's tree by the sentry
	 * (syscalls/sys_net.c); without an address (a connected socket) nothing names a file. */
	if (nr == SYS_sendto)
		return ACT_NO_ADDR4;
	if (by_value_of(nr))
		return ACT_BY_VALUE;
	/* On the ptrace platform every task holds the install socket at a reserved fd. The guest
	 * must not close it or dup over it behind the sentry's back, nor copy it (fcntl's
	 * F_DUPFD is guarded with fcntl's other commands above): a copy stays in the table of a
	 * child forked after it, whose own channel is another, and the child could read the
	 * fds the sentry installs in the parent (a root parent's, read by a child of nobody).
	 * Those calls reach the sentry (which answers EBADF) when they name that fd. */
	if (ops->needs_install_fd) {
		if (nr == SYS_close || nr == SYS_dup)
			return ACT_FD_GUARD0;
		if (nr == SYS_dup2 || nr == SYS_dup3)
			return ACT_FD_GUARD1;
	}
	return ACT_ALLOW;
}

bool cbox_platform_traps(const struct cbox_platform_ops *ops, bool strict, int nr,
                         const uint64_t args[6])
{
	uint32_t fd0 = (uint32_t)args[0];
	switch (action_of(ops, strict, nr)) {
	case ACT_TRAP:
		return true;
	case ACT_NO_ADDR4:
		return args[4] != 0;
	case ACT_FD_GUARD0:
		return fd0 == CBOX_PTRACE_INSTALL_FD;
	case ACT_FD_GUARD1:
		return (uint32_t)args[1] == CBOX_PTRACE_INSTALL_FD;
	case ACT_BY_VALUE: {
		const struct by_value *v = by_value_of(nr);
		uint32_t x = (uint32_t)args[v->arg], val[4];
		unsigned n = by_value_values(v, val);
		bool match = false;
		for (unsigned i = 0; i < n; i++)
			match |= x == val[i];
		if (ops->needs_install_fd && v->fd0 && fd0 == CBOX_PTRACE_INSTALL_FD)
			return true;
		return v->listed ? !match : match;
	}
	default: /* allowed, or a ptrace stop (SECCOMP_RET_TRACE), not a trap */
		return false;
	}
}

struct range {
	int lo, hi; /* inclusive */
	enum action act;
	uint32_t ret; /* ACT_RETURN */
};

struct prog {
	struct sock_filter *ins;
	size_t len, cap;
	uint32_t trap;
	bool guard; /* the ptrace platform: its reserved install fd is guarded */
};

static int emit(struct prog *p, struct sock_filter f)
{
	if (p->len == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		struct sock_filter *n = realloc(p->ins, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		p->ins = n;
		p->cap = cap;
	}
	p->ins[p->len++] = f;
	return 0;
}

#define ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n))

/* The leaf of a by_value call; guard: the ptrace platform's install fd in arg 0 is trapped. */
static int emit_by_value(struct prog *p, const struct by_value *v, bool guard)
{
	uint8_t g = guard ? 2 : 0; /* the guard's instructions, between the tests and ALLOW */
	uint32_t val[4];
	unsigned n = by_value_values(v, val);
	int r = emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(v->arg)));
	if (v->listed) {
		r |= emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, v->v1, 1, 0));
		r |= emit(p,
		          (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, v->v2, 0, 1 + g));
	} else {
		/* Each match jumps over the tests after it, the guard and ALLOW, to the trap. */
		for (unsigned i = 0; i < n; i++)
			r |= emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, val[i],
			                                          (uint8_t)(n - i + g), 0));
	}
	if (guard) {
		r |= emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)));
		r |= emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		                                          CBOX_PTRACE_INSTALL_FD, 1, 0));
	}
	r |= emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	r |= emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, p->trap));
	return r ? -ENOMEM : 0;
}

static int emit_leaf(struct prog *p, const struct range *leaf)
{
	enum action act = leaf->act;
	int nr = leaf->lo;
	int r = 0;
	switch (act) {
	case ACT_RETURN:
		return emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, leaf->ret));
	case ACT_TRAP:
		return emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, p->trap));
	case ACT_ALLOW:
		return emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	case ACT_EXEC:
		return emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE));
	case ACT_CLONE:
		r |= emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)));
		r |= emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K,
		                                          CLONE_REFUSED_FLAGS, 0, 1));
		r |= emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE));
		r |= emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
		return r ? -ENOMEM : 0;
	case ACT_NO_ADDR4:
		/* A pointer is NULL only when both halves are 0. */
		r |= emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(4)));
		r |= emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3));
		r |= emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(4) + 4));
		r |= emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1));
		r |= emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
		r |= emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, p->trap));
		return r ? -ENOMEM : 0;
	case ACT_BY_VALUE: {
		const struct by_value *v = by_value_of(nr);
		return emit_by_value(p, v, p->guard && v->fd0);
	}
	case ACT_FD_GUARD0:
	case ACT_FD_GUARD1: {
		int arg = act == ACT_FD_GUARD0 ? 0 : 1;
		/* fds are ints: the low 32 bits decide (the kernel truncates to int too). */
		r |= emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(arg)));
		r |= emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		                                          CBOX_PTRACE_INSTALL_FD, 0, 1));
		r |= emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, p->trap));
		r |= emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
		return r ? -ENOMEM : 0;
	}
	}
	return -EINVAL;
}

/* Emit a decision tree over ranges[lo, hi). The accumulator holds the syscall number on entry;
 * leaves that load arguments end in a return, so the tree never needs it reloaded. */
static int emit_tree(struct prog *p, const struct range *ranges, size_t lo, size_t hi)
{
	if (hi - lo == 1)
		return emit_leaf(p, &ranges[lo]);
	size_t mid = lo + (hi - lo) / 2;
	/* if (nr >= ranges[mid].lo) goto right; the jump over the left subtree is a 32-bit ja. */
	if (emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K,
	                                         (uint32_t)ranges[mid].lo, 0, 1)) < 0)
		return -ENOMEM;
	size_t ja = p->len;
	if (emit(p, (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, 0)) < 0)
		return -ENOMEM;
	int r = emit_tree(p, ranges, lo, mid);
	if (r < 0)
		return r;
	p->ins[ja].k = (uint32_t)(p->len - ja - 1);
	return emit_tree(p, ranges, mid, hi);
}

/* The ABI check, then the tree over ranges; the program goes to *out (the caller frees it). */
static int finish(struct prog *p, const struct range *ranges, size_t n, struct sock_filter **out,
                  unsigned short *len)
{
	int r = 0;
	/* Only the x86_64 ABI is emulated: a 32-bit int 0x80 call or an x32 call would name
	 * different syscalls with the same numbers, so such a task is killed. */
	r |= emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	                                          offsetof(struct seccomp_data, arch)));
	r |= emit(p,
	          (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0));
	r |= emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
	r |= emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	                                          offsetof(struct seccomp_data, nr)));
	r |= emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1));
	r |= emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
	if (r == 0)
		r = emit_tree(p, ranges, 0, n);
	if (r < 0 || p->len > BPF_MAXINSNS) {
		free(p->ins);
		return r < 0 ? r : -E2BIG;
	}
	*out = p->ins;
	*len = (unsigned short)p->len;
	return 0;
}

int cbox_platform_build_filter(const struct cbox_platform_ops *ops, bool strict,
                               struct sock_filter **out, unsigned short *len)
{
	struct range ranges[CBOX_SYS_MAX + 1];
	size_t n = 0;
	for (int nr = 0; nr < CBOX_SYS_MAX; nr++) {
		enum action a = action_of(ops, strict, nr);
		if (n > 0 && ranges[n - 1].act == a && a <= ACT_EXEC)
			ranges[n - 1].hi = nr;
		else
			ranges[n++] = (struct range){nr, nr, a, 0};
	}
	/* Numbers past the table (and the x32 bit, checked below) go to the sentry: ENOSYS. */
	ranges[n++] = (struct range){CBOX_SYS_MAX, 0x3fffffff, ACT_TRAP, 0};

	struct prog p = {.trap = ops->trap_action, .guard = ops->needs_install_fd};
	return finish(&p, ranges, n, out, len);
}

int cbox_platform_build_refuse_filter(struct sock_filter **out, unsigned short *len)
{
	struct range ranges[CBOX_SYS_MAX + 1];
	size_t n = 0;
	for (int nr = 0; nr < CBOX_SYS_MAX; nr++) {
		const struct cbox_sys_entry *e = cbox_sys_lookup(nr);
		/* What the sentry answers without looking further: the entry's errno, or ENOSYS
		 * for a number the table does not have. */
		struct range x = {nr, nr, ACT_ALLOW, 0};
		if (!e || e->kind == CBOX_SYS_REFUSE)
			x = (struct range){nr, nr, ACT_RETURN,
			                   SECCOMP_RET_ERRNO | (uint32_t)(e ? e->err : ENOSYS)};
		if (n > 0 && ranges[n - 1].act == x.act && ranges[n - 1].ret == x.ret)
			ranges[n - 1].hi = nr;
		else
			ranges[n++] = x;
	}
	ranges[n++] =
	    (struct range){CBOX_SYS_MAX, 0x3fffffff, ACT_RETURN, SECCOMP_RET_ERRNO | ENOSYS};
	struct prog p = {.trap = SECCOMP_RET_KILL_PROCESS};
	return finish(&p, ranges, n, out, len);
}
