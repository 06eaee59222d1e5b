/*
 * clone and clone3. Every guest task must stay a task the sentry traces (that is how it sees new
 * tasks and execs) and inside the sandbox's namespaces: namespace flags are refused before the
 * host makes the task, and CLONE_UNTRACED is taken out of the call the host runs.
 */
#include <errno.h>
#include <limits.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>

#include "internal.h"

#define ARG(i) (c->trap->args[i])

#define CBOX_CLONE_NEWTIME  0x80ULL
#define CBOX_CSIGNAL        0xffULL
#define CBOX_NSIG           64
#define CBOX_MAX_PID_LEVELS 32 /* MAX_PID_NS_LEVEL */
/* The end of x86_64 user space with 4-level paging: a clone3 stack past it fails access_ok. */
#define CBOX_USER_END (0x00007ffffffff000ULL)

/*
 * The checks clone and clone3 share, in copy_process's order: impossible combinations are
 * EINVAL for anyone, then namespaces are EPERM (as for a process without CAP_SYS_ADMIN: the
 * sandbox's namespaces are the runtime's, not the guest's to leave or nest).
 */
static int clone_flags_check(uint64_t flags)
{
	const uint64_t ns = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |
	                    CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP | CBOX_CLONE_NEWTIME;
	if ((flags & (CLONE_NEWNS | CLONE_FS)) == (CLONE_NEWNS | CLONE_FS) ||
	    (flags & (CLONE_NEWUSER | CLONE_FS)) == (CLONE_NEWUSER | CLONE_FS) ||
	    ((flags & CLONE_THREAD) && !(flags & CLONE_SIGHAND)) ||
	    ((flags & CLONE_SIGHAND) && !(flags & CLONE_VM)) ||
	    ((flags & CLONE_THREAD) && (flags & (CLONE_NEWUSER | CLONE_NEWPID))))
		return -EINVAL;
	if (flags & ns)
		return -EPERM;
	return 0;
}

/* The guest's argument registers at this stop, to be put back after the call (tracer.c). */
static struct cbox_clone3_fixup fixup_of(const struct cbox_trap *tr)
{
	return (struct cbox_clone3_fixup){.rdi = tr->regs.rdi,
	                                  .rsi = tr->regs.rsi,
	                                  .rdx = tr->regs.rdx,
	                                  .r10 = tr->regs.r10,
	                                  .r8 = tr->regs.r8,
	                                  .ip = tr->regs.rip};
}

/* Have the host run clone with regs at this ptrace stop, the guest's registers fx put back
 * after it (tracer.c: in the parent at the call's exit or new-task event, in the child before
 * it first runs). PTRACE_SYSCALL: a clone that fails (no new-task event) is seen at its exit. */
static int64_t run_clone(struct cbox_sysctx *c, const struct user_regs_struct *regs,
                         const struct cbox_clone3_fixup *fx)
{
	c->task->clone3 = *fx;
	c->task->clone3_pending = true;
	c->task->clone_flags = regs->rdi;
	if (ptrace(PTRACE_SETREGS, c->trap->tid, 0, regs) < 0 ||
	    ptrace(PTRACE_SYSCALL, c->trap->tid, 0, 0) < 0) {
		c->task->clone3_pending = false;
		return errno == ESRCH ? CBOX_SYSRET_DONE : -EAGAIN;
	}
	return CBOX_SYSRET_DONE;
}

/*
 * clone's flags are a register, so checking them here cannot race with the guest.
 *
 * CLONE_UNTRACED would make a child the sentry does not trace, outside everything it enforces.
 * Linux's flag only keeps a tracer from tracing the child without asking, which the emulated
 * ptrace never does (syscalls/sys_ptrace.c), so the child is made without it: the same child as
 * far as the guest can tell, and the sentry's. The sanitizers' leak check clones its tracer so.
 */
int64_t sys_clone(struct cbox_sysctx *c)
{
	uint64_t flags = ARG(0);
	int r = clone_flags_check(flags);
	if (r < 0)
		return r;
	if (flags & CLONE_UNTRACED) {
		if (!c->trap->ptrace_stop)
			return -EPERM; /* the filter sends it only as a ptrace stop */
		struct user_regs_struct regs = c->trap->regs;
		regs.rdi = flags & ~(uint64_t)CLONE_UNTRACED;
		struct cbox_clone3_fixup fx = fixup_of(c->trap);
		return run_clone(c, &regs, &fx);
	}
	c->task->clone_flags = flags;
	return CBOX_SYSRET_CONTINUE;
}

/* Read clone3's struct as copy_clone_args_from_user does: E2BIG past a page (first), EINVAL
 * below the first published size, then the versioned copy. */
static int read_clone_args(struct cbox_sysctx *c, uint64_t addr, uint64_t size,
                           struct clone_args *a)
{
	if (size <= CBOX_PAGE && size < CLONE_ARGS_SIZE_VER0)
		return -EINVAL;
	return cbox_sys_read_sized(c, addr, size, a, sizeof(*a));
}

/* The rest of the kernel's argument checks (copy_clone_args_from_user, clone3_args_valid,
 * kernel_clone), in its order. */
static int clone3_args_check(struct cbox_sysctx *c, const struct clone_args *a, uint64_t size)
{
	if (a->set_tid_size > CBOX_MAX_PID_LEVELS || (!a->set_tid && a->set_tid_size > 0) ||
	    (a->set_tid && a->set_tid_size == 0))
		return -EINVAL;
	if ((a->exit_signal & ~CBOX_CSIGNAL) || a->exit_signal > CBOX_NSIG)
		return -EINVAL;
	if ((a->flags & CLONE_INTO_CGROUP) && (a->cgroup > INT_MAX || size < CLONE_ARGS_SIZE_VER2))
		return -EINVAL;
	pid_t tids[CBOX_MAX_PID_LEVELS];
	if (a->set_tid && cbox_sys_read(c, a->set_tid, tids, a->set_tid_size * sizeof(pid_t)) < 0)
		return -EFAULT;
	if (a->flags & ~(0xffffffffULL | CLONE_CLEAR_SIGHAND | CLONE_INTO_CGROUP))
		return -EINVAL;
	if (a->flags & (CLONE_DETACHED | (CBOX_CSIGNAL & ~CBOX_CLONE_NEWTIME)))
		return -EINVAL;
	if ((a->flags & (CLONE_SIGHAND | CLONE_CLEAR_SIGHAND)) ==
	    (CLONE_SIGHAND | CLONE_CLEAR_SIGHAND))
		return -EINVAL;
	if ((a->flags & (CLONE_THREAD | CLONE_PARENT)) && a->exit_signal)
		return -EINVAL;
	if (a->stack == 0 ? a->stack_size > 0
	                  : a->stack_size == 0 || a->stack_size > CBOX_USER_END ||
	                        a->stack > CBOX_USER_END - a->stack_size)
		return -EINVAL;
	if ((a->flags & CLONE_PIDFD) && (a->flags & CLONE_PARENT_SETTID) &&
	    a->pidfd == a->parent_tid)
		return -EINVAL;
	int r = clone_flags_check(a->flags);
	if (r < 0)
		return r;
	if (a->set_tid) {
		for (uint64_t i = 0; i < a->set_tid_size; i++)
			if (tids[i] < 1)
				return -EINVAL;
		return -EPERM; /* choosing pids needs CAP_CHECKPOINT_RESTORE */
	}
	/* The sandbox's cgroup carries the limits its runtime set: moving a child out of it is
	 * never the guest's choice. */
	if (a->flags & CLONE_INTO_CGROUP)
		return -EPERM;
	return 0;
}

/*
 * clone3 keeps its arguments in guest memory, where another thread (or a process sharing the
 * page) could change them between the sentry's check and the host's own read: a
 * CLONE_NEWUSER or CLONE_UNTRACED slipped in there would give the guest a user namespace or an
 * untraced task. So the sentry reads the struct once, checks that copy, and has the host run the
 * same request as a legacy clone whose arguments are registers it sets at this ptrace stop. The
 * kernel re-runs the guest filter on the rewritten call, which passes clone with these flags.
 * The guest's argument registers are restored in the parent and the child by tracer.c.
 *
 * What a legacy clone cannot say: CLONE_PIDFD beside CLONE_PARENT_SETTID (both use one
 * argument), so the sentry writes parent_tid itself at the new-task event, before either task
 * runs on; and CLONE_CLEAR_SIGHAND (a bit past 32), which the sentry carries out in the child
 * before it first runs (cbox_ptrace_clear_sighand: rt_sigaction run inside it, its actions
 * written below its stack pointer). A child that shares its parent's memory and stack
 * (CLONE_VM without a stack or CLONE_VFORK) would have the parent running on those same bytes:
 * there the flag is ENOSYS, on which glibc falls back to clone and resets handlers itself.
 */
int64_t sys_clone3(struct cbox_sysctx *c)
{
	struct cbox_trap *tr = c->trap;
	if (!tr->ptrace_stop)
		return -ENOSYS; /* the filter sends clone3 only as a ptrace stop */
	uint64_t size = ARG(1);
	struct clone_args a;
	int r = read_clone_args(c, ARG(0), size, &a);
	if (r == 0)
		r = clone3_args_check(c, &a, size);
	if (r < 0)
		return r;
	if ((a.flags & CLONE_CLEAR_SIGHAND) && (a.flags & CLONE_VM) && !a.stack &&
	    !(a.flags & CLONE_VFORK))
		return -ENOSYS;

	/* CLONE_UNTRACED dropped as for clone (see sys_clone). */
	uint64_t flags = (a.flags & 0xffffffffULL & ~(uint64_t)CLONE_UNTRACED) | a.exit_signal;
	uint64_t ptid = 0;
	struct cbox_clone3_fixup fx = fixup_of(tr);
	fx.clear_sighand = (a.flags & CLONE_CLEAR_SIGHAND) != 0;
	if (flags & CLONE_PIDFD) {
		ptid = a.pidfd;
		if (flags & CLONE_PARENT_SETTID) {
			flags &= ~(uint64_t)CLONE_PARENT_SETTID;
			fx.parent_tid = a.parent_tid;
		}
	} else if (flags & CLONE_PARENT_SETTID) {
		ptid = a.parent_tid;
	}
	struct user_regs_struct regs = tr->regs;
	regs.orig_rax = SYS_clone;
	regs.rdi = flags;
	regs.rsi = a.stack ? a.stack + a.stack_size : 0;
	regs.rdx = ptid;
	regs.r10 = a.child_tid;
	regs.r8 = a.tls;
	return run_clone(c, &regs, &fx);
}
