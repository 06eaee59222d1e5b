/*
 * The ptrace platform, and the ptrace-stop operations both platforms use.
 *
 * Trapped calls arrive as PTRACE_EVENT_SECCOMP stops (the guest filter returns SECCOMP_RET_TRACE).
 * At such a stop the sentry can answer (skip the call with orig_rax = -1 and set rax), let it run
 * (after the stop the kernel re-runs the filter, which treats a second TRACE as allowed), or run
 * other syscalls inside the task first ("injection": change the registers, run to the
 * syscall-exit stop, rewind the instruction pointer onto the same syscall instruction).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sched.h>
#include <unistd.h>

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* a pidfd of one thread (linux/pidfd.h, Linux 6.9) */
#endif

#include "cbox/fdpass.h"
#include "cbox/log.h"
#include "internal.h"

/* How the task goes on from the stop: PTRACE_CONT, or what a guest tracer asked for. */
static enum __ptrace_request resume_of(const struct cbox_trap *t)
{
	return t->resume ? (enum __ptrace_request)t->resume : PTRACE_CONT;
}

/*
 * The call the sentry has a task run for itself (run_to_exit): its number and arguments, and
 * where it returns to (the address after its syscall instruction). from_user: the task runs
 * from user mode onto that instruction (rewound), so the call's entry stop comes first; else it
 * is already in the kernel (at a seccomp stop) and only its exit stop follows.
 */
struct injected {
	long nr;
	uint64_t args[6];
	uint64_t ip;
	bool from_user;
};

static struct injected injected_of(const struct user_regs_struct *r, bool from_user)
{
	return (struct injected){.nr = (long)r->orig_rax,
	                         .args = {r->rdi, r->rsi, r->rdx, r->r10, r->r8, r->r9},
	                         .ip = from_user ? r->rip + 2 : r->rip,
	                         .from_user = from_user};
}

static int run_to_exit(pid_t tid, const struct injected *x, int *pending, int64_t *rval);

/*
 * -ERESTARTSYS as the result of a call held at a ptrace stop (the sentry ended its wait for a
 * signal: sentry/defer.c). A call skipped at its entry is no call to the kernel's signal code,
 * which restarts or interrupts only a call that returned -ERESTARTSYS itself: so the call is
 * skipped, run to its syscall-exit stop, and given back its number and that result there. On the
 * way back to user mode the kernel then restarts it under SA_RESTART or when nothing handles the
 * signal, and gives a handler without SA_RESTART EINTR, as Linux does.
 */
static int reply_restart(struct cbox_trap *t)
{
	struct user_regs_struct r = t->regs;
	uint64_t nr = r.orig_rax;
	r.orig_rax = (unsigned long long)-1;
	r.rax = (unsigned long long)-ENOSYS;
	struct injected x = injected_of(&r, false);
	int rc = ptrace(PTRACE_SETREGS, t->tid, 0, &r) < 0 ? -errno
	                                                   : run_to_exit(t->tid, &x, NULL, NULL);
	if (rc == 0 && ptrace(PTRACE_GETREGS, t->tid, 0, &r) < 0)
		rc = -errno;
	if (rc == 0) {
		r.orig_rax = nr;
		r.rax = (unsigned long long)-CBOX_ERESTARTSYS;
		if (ptrace(PTRACE_SETREGS, t->tid, 0, &r) < 0 ||
		    ptrace(resume_of(t), t->tid, 0, 0) < 0)
			rc = -errno;
	}
	return rc == -ESRCH ? 0 : rc;
}

int cbox_ptrace_reply(struct cbox_trap *t, int64_t ret)
{
	if (ret == -CBOX_ERESTARTSYS && resume_of(t) == PTRACE_CONT)
		return reply_restart(t);
	struct user_regs_struct r = t->regs;
	r.orig_rax = (unsigned long long)-1; /* skip the call... */
	r.rax = (unsigned long long)ret;     /* ...and return this */
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &r) < 0 || ptrace(resume_of(t), t->tid, 0, 0) < 0)
		return errno == ESRCH ? 0 : -errno;
	return 0;
}

int cbox_ptrace_cont(struct cbox_trap *t)
{
	if (ptrace(resume_of(t), t->tid, 0, 0) < 0)
		return errno == ESRCH ? 0 : -errno;
	return 0;
}

/*
 * Wait for tid's next stop. The injected call is short (a recvmsg that finds its message
 * queued), so the stop usually comes within microseconds: asking again, yielding between tries,
 * before sleeping saves the cross-CPU wake-up the sleep would cost (as the tracer loop's reap
 * does). An open+close on this platform (one injected call) went from 99-116 to 70-76 us.
 */
static int wait_stop(pid_t tid, int *st)
{
	for (int i = 0; cbox_spin_allowed() && i < 64; i++) {
		pid_t r = waitpid(tid, st, __WALL | WNOHANG);
		if (r != 0)
			return r < 0 ? -errno : 0;
		sched_yield();
	}
	return waitpid(tid, st, __WALL) < 0 ? -errno : 0;
}

static bool same_call(const struct injected *x, uint64_t nr, const uint64_t args[6], uint64_t ip)
{
	return (long)nr == x->nr && ip == x->ip && memcmp(args, x->args, sizeof(x->args)) == 0;
}

/*
 * Resume with PTRACE_SYSCALL until the syscall-exit stop of the injected call x; *rval (when not
 * NULL) gets its result. Injected at a syscall stop, no signal can stop the task on the way
 * (signals wait until the return to user mode); from user mode one can, before the call: it is
 * held in *pending (the first one; when not NULL) to be delivered at the resume.
 *
 * Security: every stop on the way must be the injected call's own. Run from user mode, the task
 * executes whatever is at the rewound address by then, and that memory is the guest's: a thread
 * sharing it can turn the syscall instruction into a jump to code making any other call. The
 * entry stop of such a call would come here, and resuming a seccomp stop is what lets a trapped
 * call run (the kernel's recheck after a tracer takes RET_TRACE as allowed): resumed blindly, a
 * guest had unshare(CLONE_NEWUSER) and clone(CLONE_UNTRACED) run unchecked. So a stop of any
 * other call, or from any other place, kills the task before that call runs.
 */
static int run_to_exit(pid_t tid, const struct injected *x, int *pending, int64_t *rval)
{
	bool entered = !x->from_user;
	for (int i = 0; i < 8; i++) {
		if (ptrace(PTRACE_SYSCALL, tid, 0, 0) < 0)
			return -errno;
		int st;
		int rc = wait_stop(tid, &st);
		if (rc < 0)
			return rc;
		if (!WIFSTOPPED(st))
			return -ESRCH; /* died (SIGKILL) while we ran its call */
		if (WSTOPSIG(st) != (SIGTRAP | 0x80) && (st >> 16) == 0) {
			if (pending && !*pending)
				*pending = WSTOPSIG(st);
			continue;
		}
		struct __ptrace_syscall_info info;
		if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof(info), &info) < 0)
			return -errno;
		bool ours;
		switch (info.op) {
		case PTRACE_SYSCALL_INFO_ENTRY:
			ours = !entered &&
			       same_call(x, info.entry.nr, (const uint64_t *)info.entry.args,
			                 info.instruction_pointer);
			entered = true;
			break;
		case PTRACE_SYSCALL_INFO_SECCOMP:
			ours = entered &&
			       same_call(x, info.seccomp.nr, (const uint64_t *)info.seccomp.args,
			                 info.instruction_pointer);
			break;
		case PTRACE_SYSCALL_INFO_EXIT:
			if (!entered || info.instruction_pointer != x->ip)
				ours = false;
			else {
				if (rval)
					*rval = info.exit.rval;
				return 0;
			}
			break;
		default:
			/* An event stop of no call: the task's exit, or a group-stop; go on. */
			ours = (st >> 16) == PTRACE_EVENT_EXIT || (st >> 16) == PTRACE_EVENT_STOP;
			break;
		}
		if (!ours) {
			cbox_warn("task %d ran another call than the one the sentry put in it "
			          "(its code changed under it): killing it",
			          tid);
			kill(tid, SIGKILL);
			return -ESRCH;
		}
	}
	return -EIO;
}

/*
 * Signals that arrive while the sentry runs calls of its own in a task from user mode (every call
 * but the first of an install, a new task's channel, CLONE_CLEAR_SIGHAND) stay queued: the
 * task's mask blocks them all meanwhile (PTRACE_SETSIGMASK at a stop), and its own mask is put
 * back before it runs its own code again. Each is then delivered as it was sent, siginfo and
 * all. Before, a signal pending at the return to the rewound instruction stopped the task there
 * and was taken from it: only the first was queued again, by a tkill (another code, no value),
 * which the sentry's own seccomp filter did not even allow (the sentry died of SIGSYS).
 * SIGSTOP cannot be blocked: run_to_exit keeps it in *pending, and requeue_held sends it again.
 */
static bool hold_signals(pid_t tid, uint64_t *saved)
{
	uint64_t all = ~0ULL;
	return ptrace(PTRACE_GETSIGMASK, tid, sizeof(*saved), saved) == 0 &&
	       ptrace(PTRACE_SETSIGMASK, tid, sizeof(all), &all) == 0;
}

static void release_signals(pid_t tid, uint64_t saved)
{
	ptrace(PTRACE_SETSIGMASK, tid, sizeof(saved), &saved);
}

/* The thread group of task tid (/proc/TID/status), or -1. */
static pid_t tgid_of(pid_t tid);

/* Queue held signal sig again on thread tid (tgkill: the sentry's filter allows no tkill). */
static void requeue_held(pid_t tid, int sig)
{
	pid_t tgid = sig > 0 ? tgid_of(tid) : -1; /* (a read of /proc: only when one was held) */
	if (tgid > 0)
		syscall(SYS_tgkill, tgid, tid, sig);
}

static void trap_hold_signals(struct cbox_trap *t)
{
	if (!t->sigs_held)
		t->sigs_held = hold_signals(t->tid, &t->saved_sigmask);
}

static void trap_release_signals(struct cbox_trap *t)
{
	if (t->sigs_held)
		release_signals(t->tid, t->saved_sigmask);
	t->sigs_held = false;
}

/* The registers of the call nr(a...) from a task whose registers are base; rewind: back onto
 * the syscall instruction (0f 05) that base's instruction pointer follows. */
static struct user_regs_struct call_regs(const struct user_regs_struct *base, long nr,
                                         const uint64_t a[6], bool rewind)
{
	struct user_regs_struct r = *base;
	r.orig_rax = r.rax = (unsigned long long)nr;
	r.rdi = a[0];
	r.rsi = a[1];
	r.rdx = a[2];
	r.r10 = a[3];
	r.r8 = a[4];
	r.r9 = a[5];
	if (rewind)
		r.rip -= 2;
	return r;
}

/*
 * Run syscall nr with args inside a task stopped at a seccomp stop whose saved registers are
 * t->regs. Returns the call's result; the task is left at the call's syscall-exit stop, with
 * *at_exit set, so the caller can inject again (rewinding rip) or finish with finish_exit().
 */
static int64_t inject(struct cbox_trap *t, bool *at_exit, long nr, const uint64_t a[6])
{
	struct user_regs_struct r = call_regs(&t->regs, nr, a, *at_exit);
	struct injected x = injected_of(&r, *at_exit);
	if (*at_exit)
		trap_hold_signals(t); /* (put back at the answer: finish_exit, pt_cont) */
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &r) < 0)
		return -errno;
	int held = 0;
	int err = run_to_exit(t->tid, &x, &held, NULL);
	/* A SIGSTOP that stopped the task on its way back to the rewound instruction was taken
	 * from it there (resumed without it, so that the call runs): queued again, it stops the
	 * task when it returns from the call. */
	requeue_held(t->tid, held);
	if (err < 0)
		return err;
	*at_exit = true;
	if (ptrace(PTRACE_GETREGS, t->tid, 0, &r) < 0)
		return -errno;
	return (int64_t)r.rax;
}

/* The signals tid catches and ignores (/proc/TID/status SigCgt, SigIgn). */
static int signal_masks(pid_t tid, uint64_t *caught, uint64_t *ignored)
{
	char path[64], line[128];
	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	int found = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "SigCgt:", 7) == 0 && ++found)
			*caught = strtoull(line + 7, NULL, 16);
		else if (strncmp(line, "SigIgn:", 7) == 0 && ++found)
			*ignored = strtoull(line + 7, NULL, 16);
	}
	fclose(f);
	return found == 2 ? 0 : -EIO;
}

/* The kernel's struct sigaction on x86_64 (rt_sigaction's argument). */
struct kernel_sigaction {
	uint64_t handler, flags, restorer, mask;
};

/* Run the call nr(a...) in tid, which is at a stop outside any call (regs: its registers, just
 * after a syscall instruction): rewind onto that instruction and run to the call's exit stop. A
 * signal that stops the task on the way is kept in *pending (the first one), not delivered
 * now. The registers are left as the call's exit gives them: the caller puts regs back. */
static int64_t run_in_user(pid_t tid, const struct user_regs_struct *regs, long nr,
                           const uint64_t a[6], int *pending)
{
	struct user_regs_struct r = call_regs(regs, nr, a, true);
	struct injected x = injected_of(&r, true);
	if (ptrace(PTRACE_SETREGS, tid, 0, &r) < 0)
		return -errno;
	int64_t rval = 0;
	int rc = run_to_exit(tid, &x, pending, &rval);
	return rc < 0 ? rc : rval;
}

int cbox_ptrace_clear_sighand(pid_t tid)
{
	struct user_regs_struct regs;
	uint64_t caught = 0, ignored = 0;
	if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
		return -errno;
	int rc = signal_masks(tid, &caught, &ignored);
	if (rc < 0)
		return rc;
	/* The two actions live below the task's stack pointer, past the red zone, for the calls
	 * only; the bytes there are put back. (sys_clone3 refuses the flag for a task that shares
	 * its parent's memory and stack, where the parent could be using those bytes.) */
	struct kernel_sigaction acts[2] = {{.handler = (uint64_t)(uintptr_t)SIG_DFL},
	                                   {.handler = (uint64_t)(uintptr_t)SIG_IGN}};
	struct kernel_sigaction saved[2];
	uint64_t at = (regs.rsp - 128 - sizeof(acts)) & ~15ULL;
	if (cbox_mem_read(tid, at, saved, sizeof(saved)) < 0 ||
	    cbox_mem_write(tid, at, acts, sizeof(acts)) < 0)
		return -EFAULT;
	int pending = 0;
	uint64_t mask;
	bool held = hold_signals(tid, &mask);
	for (int sig = 1; sig <= 64 && rc == 0; sig++) {
		uint64_t bit = 1ULL << (sig - 1);
		if (sig == SIGKILL || sig == SIGSTOP || !((caught | ignored) & bit))
			continue;
		uint64_t act = at + ((ignored & bit) ? sizeof(acts[0]) : 0);
		uint64_t a[6] = {(uint64_t)sig, act, 0, 8, 0, 0};
		int64_t r = run_in_user(tid, &regs, SYS_rt_sigaction, a, &pending);
		rc = r < 0 ? (int)r : 0;
	}
	cbox_mem_write(tid, at, saved, sizeof(saved));
	if (held)
		release_signals(tid, mask);
	/* Back to where the clone returned to, with its result (0 in the child). */
	if (ptrace(PTRACE_SETREGS, tid, 0, &regs) < 0 && rc == 0)
		rc = -errno;
	return rc < 0 ? rc : pending;
}

/* Scratch memory of a channel's making, below the task's stack pointer. */
struct channel_scratch {
	int sv[2];
	struct rlimit old, raised;
};

/*
 * How the calls of a channel's making run in the task: from a stop outside any call (a new
 * task's first: run_in_user, the registers put back by the caller), or from a trapped call's
 * seccomp stop (inject, after which the call is answered at its exit stop).
 */
struct runner {
	pid_t tid;
	pid_t tgid;                          /* its process (pidfd_open names a process) */
	const struct user_regs_struct *regs; /* run_in_user */
	int *pending;
	struct cbox_trap *trap; /* inject */
	bool *at_exit;
};

static int64_t run_call(struct runner *rn, long nr, const uint64_t a[6])
{
	if (rn->trap)
		return inject(rn->trap, rn->at_exit, nr, a);
	return run_in_user(rn->tid, rn->regs, nr, a, rn->pending);
}

/*
 * dup3(fd, CBOX_PTRACE_INSTALL_FD) in the task, whose soft RLIMIT_NOFILE may be at or below
 * 1022, where dup3 refuses the target (EBADF): it is then raised for the call and put back, as
 * the first task's start does (guest_init.c reserve_install_fd). -EMFILE: the hard limit is
 * there too (the guest lowered it), so the fd cannot be placed.
 */
static int64_t dup_to_reserved(struct runner *rn, int fd, uint64_t at)
{
	uint64_t d[6] = {(uint64_t)fd, CBOX_PTRACE_INSTALL_FD, 0, 0, 0, 0};
	int64_t r = run_call(rn, SYS_dup3, d);
	if (r != -EBADF)
		return r;
	struct channel_scratch sc;
	uint64_t old_at = at + offsetof(struct channel_scratch, old);
	uint64_t raised_at = at + offsetof(struct channel_scratch, raised);
	uint64_t get[6] = {0, RLIMIT_NOFILE, 0, old_at, 0, 0};
	r = run_call(rn, SYS_prlimit64, get);
	if (r < 0 || cbox_mem_read(rn->tid, at, &sc, sizeof(sc)) < 0)
		return r < 0 ? r : -EFAULT;
	if (sc.old.rlim_cur > CBOX_PTRACE_INSTALL_FD)
		return -EBADF; /* not the limit */
	if (sc.old.rlim_max <= CBOX_PTRACE_INSTALL_FD)
		return -EMFILE;
	sc.raised =
	    (struct rlimit){.rlim_cur = CBOX_PTRACE_INSTALL_FD + 1, .rlim_max = sc.old.rlim_max};
	if (cbox_mem_write(rn->tid, raised_at, &sc.raised, sizeof(sc.raised)) < 0)
		return -EFAULT;
	uint64_t raise[6] = {0, RLIMIT_NOFILE, raised_at, 0, 0, 0};
	r = run_call(rn, SYS_prlimit64, raise);
	if (r == 0)
		r = run_call(rn, SYS_dup3, d);
	uint64_t back[6] = {0, RLIMIT_NOFILE, old_at, 0, 0, 0};
	int64_t b = run_call(rn, SYS_prlimit64, back);
	return r < 0 ? r : b < 0 ? b : r;
}

/*
 * Security: the two fd numbers came back through guest memory, which another thread sharing it
 * (a vfork child's parent's, say) may have changed meanwhile, to name some other socket of the
 * task (one connected to a process of its choice, which would then receive the fds the sentry
 * opens for this one). The sentry's end must be a datagram socket made by socketpair in this
 * process (SO_PEERCRED's pid, the creator's): a new process has run nothing else since it
 * stopped, and one the sentry installs into through a private pair can only swap in a pair of
 * its own (to receive its own fd).
 */
static bool own_pair(int sock, pid_t tgid)
{
	struct ucred uc;
	socklen_t ul = sizeof(uc);
	int type = 0;
	socklen_t tl = sizeof(type);
	return getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &uc, &ul) == 0 && uc.pid == tgid &&
	       getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 && type == SOCK_DGRAM;
}

/*
 * A socketpair made inside the task, the fds written at at: *sv the task's two fds, *mine the
 * sentry's copy of sv[1] (pidfd_getfd), or -errno (*mine -1; sv as far as they were made).
 */
static int make_pair(struct runner *rn, uint64_t at, int sv[2], int *mine)
{
	*mine = -1;
	uint64_t a[6] = {AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, at, 0, 0};
	int64_t r = run_call(rn, SYS_socketpair, a);
	if (r < 0)
		return (int)r;
	if (cbox_mem_read(rn->tid, at, sv, 2 * sizeof(int)) < 0) {
		sv[0] = sv[1] = -1;
		return -EFAULT;
	}
	/* pidfd_getfd reads the fd table of the pidfd's task: a thread that unshared its table
	 * needs a pidfd of its own (PIDFD_THREAD, Linux 6.9), not its process's. */
	int pidfd = rn->tgid <= 0         ? -1
	            : rn->tid == rn->tgid ? (int)syscall(SYS_pidfd_open, rn->tgid, 0)
	                                  : (int)syscall(SYS_pidfd_open, rn->tid, PIDFD_THREAD);
	*mine = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, sv[1], 0);
	int err = *mine < 0 ? (rn->tgid > 0 ? -errno : -ESRCH) : 0;
	if (pidfd >= 0)
		close(pidfd);
	if (err == 0 && !own_pair(*mine, rn->tgid)) {
		close(*mine);
		*mine = -1;
		err = -EIO;
	}
	return err;
}

/*
 * Security: the install channel is per fd table. A recvmsg on the channel takes whatever fd
 * is queued there, so a channel that two processes hold lets either take the fds the sentry
 * opens for the other, with the other's rights (a guest user reading a file only root may
 * read, a root process's fds taken by nobody), and leaves the victim's own recvmsg without
 * its message. A fork's child would hold its parent's channel: before the child first runs,
 * the sentry makes it a channel nobody else holds. The pair is made inside the child (the
 * sentry takes its end with pidfd_getfd), so it never travels through a channel another
 * process could read. Threads and CLONE_FILES children share the table, and with it every fd,
 * so they share its channel as well, until an exec or unshare(CLONE_FILES) unshares the table:
 * the task then gets a channel of its own at its next trapped call (cbox_ptrace_renew_channel).
 *
 * make_channel makes the task's channel, with its scratch at at: 0 and *mine the sentry's end
 * (-1: no fd can be placed at the reserved one, and the task now holds none), or -errno.
 */
static int make_channel(struct runner *rn, uint64_t at, int *mine)
{
	int sv[2] = {-1, -1};
	int64_t r = make_pair(rn, at, sv, mine);
	if (r == 0) {
		/* The guest's end onto the reserved fd, over the inherited channel, open across
		 * exec as the first task's is (guest_init.c). */
		r = dup_to_reserved(rn, sv[0], at);
		r = r == CBOX_PTRACE_INSTALL_FD ? 0 : r < 0 ? r : -EIO;
	}
	/* (closed on failure too) */
	for (int i = 0; i < 2; i++) {
		if (sv[i] < 0)
			continue;
		uint64_t c[6] = {(uint64_t)sv[i], 0, 0, 0, 0, 0};
		int64_t cr = run_call(rn, SYS_close, c);
		if (cr < 0 && r >= 0)
			r = cr;
	}
	/* No fd can be placed at the reserved one: the task drops the channel it held and
	 * gets a pair of its own for each install (cbox_ptrace_install). */
	if (r == -EMFILE) {
		uint64_t c[6] = {CBOX_PTRACE_INSTALL_FD, 0, 0, 0, 0, 0};
		int64_t cr = run_call(rn, SYS_close, c);
		r = cr < 0 && cr != -EBADF ? cr : 0;
		if (*mine >= 0)
			close(*mine);
		*mine = -1;
	}
	if (r < 0 && *mine >= 0) {
		close(*mine);
		*mine = -1;
	}
	return (int)r;
}

int cbox_ptrace_new_channel(pid_t tid, int *sentry_end)
{
	struct user_regs_struct regs;
	if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
		return -errno;
	/* The scratch lies below the stack pointer, past the red zone; its bytes are put back
	 * (a vfork child's parent, on the same stack, waits until the child execs or exits). */
	struct channel_scratch saved;
	uint64_t at = (regs.rsp - 128 - sizeof(saved)) & ~15ULL;
	if (cbox_mem_read(tid, at, &saved, sizeof(saved)) < 0)
		return -EFAULT;
	int pending = 0;
	/* (a fork's child is its process's leader) */
	struct runner rn = {.tid = tid, .tgid = tid, .regs = &regs, .pending = &pending};
	uint64_t mask;
	bool held = hold_signals(tid, &mask);
	int r = make_channel(&rn, at, sentry_end);
	cbox_mem_write(tid, at, &saved, sizeof(saved));
	if (held)
		release_signals(tid, mask);
	if (ptrace(PTRACE_SETREGS, tid, 0, &regs) < 0 && r >= 0) {
		r = -errno;
		if (*sentry_end >= 0)
			close(*sentry_end);
		*sentry_end = -1;
	}
	return r < 0 ? r : pending;
}

int cbox_ptrace_renew_channel(struct cbox_trap *t, int *sentry_end)
{
	*sentry_end = -1;
	if (!t->ptrace_stop)
		return -EINVAL;
	struct channel_scratch saved;
	uint64_t at = (t->regs.rsp - 128 - sizeof(saved)) & ~15ULL;
	if (cbox_mem_read(t->tid, at, &saved, sizeof(saved)) < 0)
		return -EFAULT;
	bool at_exit = t->at_exit;
	/* (not always its process's leader: a thread may unshare its table) */
	struct runner rn = {.tid = t->tid, .tgid = tgid_of(t->tid), .trap = t, .at_exit = &at_exit};
	int r = make_channel(&rn, at, sentry_end);
	cbox_mem_write(t->tid, at, &saved, sizeof(saved));
	/* (the task sits at an exit stop once anything ran: answered there, finish_exit) */
	t->at_exit = at_exit;
	return r;
}

/* From a syscall-exit stop: return to the guest as if its own call returned ret. A task whose
 * guest tracer follows its calls stays at this stop, which is its call's exit stop. */
static int finish_exit(struct cbox_trap *t, int64_t ret)
{
	trap_release_signals(t);
	struct user_regs_struct r = t->regs;
	r.rax = (unsigned long long)ret;
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &r) < 0)
		return errno == ESRCH ? 0 : -errno;
	if (t->resume == PTRACE_SYSCALL) {
		t->hold_exit = true;
		return 0;
	}
	if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0)
		return errno == ESRCH ? 0 : -errno;
	return 0;
}

struct install_scratch {
	struct msghdr msg;
	struct iovec iov;
	uint64_t tag;
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int))];
	} cmsg;
};

/* Send hostfd over the task's install channel, with tag as the message. Never waits: the
 * guest's end holds nothing the sentry did not send (a full queue is a failure). */
static int send_fd(int sock, int hostfd, uint64_t tag)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int))];
	} out;
	memset(&out, 0, sizeof(out));
	struct iovec iov = {.iov_base = &tag, .iov_len = sizeof(tag)};
	struct msghdr m = {.msg_iov = &iov,
	                   .msg_iovlen = 1,
	                   .msg_control = out.buf,
	                   .msg_controllen = sizeof(out.buf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &hostfd, sizeof(int));
	return sendmsg(sock, &m, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 ? -errno : 0;
}

/* The thread group of task tid (/proc/TID/status), or -1. */
static pid_t tgid_of(pid_t tid)
{
	char path[64], line[128];
	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	pid_t tgid = -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "Tgid:", 5) == 0) {
			tgid = (pid_t)strtol(line + 5, NULL, 10);
			break;
		}
	fclose(f);
	return tgid;
}

/*
 * Receive, by an injected recvmsg on the task's fd chan, the message tagged tag: the fd it
 * carries, now the task's, or -errno. The recvmsg never waits (MSG_DONTWAIT): a guest thread
 * that read the channel itself took the message (its own process's fd, no one else's: the
 * channel is the table's, see cbox_ptrace_new_channel), and waiting for a message that will
 * not come would stop the sentry. A message with another tag is a leftover of an install that
 * did not finish (its task killed between the send and the recvmsg): closed in the task and
 * skipped, never given as the answer to another call.
 */
static int receive_fd(struct cbox_trap *t, bool *at_exit, uint64_t at, int chan, uint64_t tag,
                      bool cloexec)
{
	struct install_scratch s;
	for (int tries = 0; tries < 4; tries++) {
		memset(&s, 0, sizeof(s));
		s.iov.iov_base = (void *)(uintptr_t)(at + offsetof(struct install_scratch, tag));
		s.iov.iov_len = sizeof(s.tag);
		s.msg.msg_iov = (void *)(uintptr_t)(at + offsetof(struct install_scratch, iov));
		s.msg.msg_iovlen = 1;
		s.msg.msg_control =
		    (void *)(uintptr_t)(at + offsetof(struct install_scratch, cmsg));
		s.msg.msg_controllen = sizeof(s.cmsg.buf);
		if (cbox_mem_write(t->tid, at, &s, sizeof(s)) < 0)
			return -EFAULT;
		uint64_t flags = MSG_DONTWAIT | (cloexec ? MSG_CMSG_CLOEXEC : 0);
		uint64_t a[6] = {(uint64_t)chan, at, flags, 0, 0, 0};
		int64_t n = inject(t, at_exit, SYS_recvmsg, a);
		int got = n >= 0 ? cbox_mem_read(t->tid, at, &s, sizeof(s)) : 0;
		int recvd = -1;
		if (n == (int64_t)sizeof(tag) && got == 0 &&
		    s.msg.msg_controllen >= CMSG_LEN(sizeof(int)) &&
		    s.cmsg.hdr.cmsg_type == SCM_RIGHTS)
			memcpy(&recvd, CMSG_DATA(&s.cmsg.hdr), sizeof(int));
		/* (EAGAIN: taken by the task itself) */
		if (n < 0)
			return n == -EAGAIN ? -EIO : (int)n;
		/* (killed after its recvmsg: a background job as the sandbox ends) */
		if (got == -ESRCH)
			return -ESRCH;
		/* (the kernel dropped the fd: the task is at its RLIMIT_NOFILE) */
		if (recvd < 0)
			return (s.msg.msg_flags & MSG_CTRUNC) ? -EMFILE : -EIO;
		if (s.tag == tag)
			return recvd;
		uint64_t c[6] = {(uint64_t)recvd, 0, 0, 0, 0, 0};
		int64_t cr = inject(t, at_exit, SYS_close, c);
		if (cr != 0)
			return cr == -ESRCH ? -ESRCH : -EIO;
	}
	return -EIO;
}

/*
 * A socketpair for one install, made inside a task whose fd table has no channel (its hard fd
 * limit is below the reserved fd: cbox_ptrace_new_channel): *sv the task's fds, *mine the
 * sentry's copy of sv[1] (make_pair). Both of the task's ends are closed after the install.
 */
static int private_pair(struct cbox_trap *t, bool *at_exit, uint64_t at, int sv[2], int *mine)
{
	struct runner rn = {.tid = t->tid, .tgid = tgid_of(t->tid), .trap = t, .at_exit = at_exit};
	return make_pair(&rn, at, sv, mine);
}

/*
 * Install hostfd in the task: send it over the install channel of the task's fd table
 * (t->install_sock; a pair made for this install when it has none), then inject a recvmsg on
 * the task's end (CBOX_PTRACE_INSTALL_FD). The message buffers live below the guest's stack
 * pointer, past the 128-byte red zone, and the bytes there are restored afterwards. The task is
 * left at the recvmsg's exit stop; the caller answers with ptrace_finish.
 */
int cbox_ptrace_install(struct cbox_platform *p, struct cbox_trap *t, int hostfd, bool cloexec)
{
	(void)p;
	static uint64_t next_tag;
	if (!t->ptrace_stop)
		return -EINVAL;
	uint64_t at = (t->regs.rsp - 128 - sizeof(struct install_scratch)) & ~15ULL;
	struct install_scratch saved;
	if (cbox_mem_read(t->tid, at, &saved, sizeof(saved)) < 0)
		return -EFAULT;
	bool at_exit = t->at_exit;
	int sock = t->install_sock, chan = CBOX_PTRACE_INSTALL_FD, sv[2] = {-1, -1}, mine = -1;
	int fd = 0;
	if (sock < 0) {
		fd = private_pair(t, &at_exit, at, sv, &mine);
		sock = mine;
		chan = sv[0];
	}
	uint64_t tag = ++next_tag;
	if (fd == 0)
		fd = send_fd(sock, hostfd, tag);
	if (fd == 0)
		fd = receive_fd(t, &at_exit, at, chan, tag, cloexec);
	for (int i = 0; i < 2; i++) {
		uint64_t c[6] = {(uint64_t)sv[i], 0, 0, 0, 0, 0};
		int64_t cr = sv[i] >= 0 ? inject(t, &at_exit, SYS_close, c) : 0;
		/* (-ESRCH: killed meanwhile, as by its process's exit_group: nothing to report) */
		if (cr != 0 && fd >= 0)
			fd = cr == -ESRCH ? -ESRCH : -EIO;
	}
	/* The pair took the lowest fds while the message came: the fd moves down to the lowest
	 * free one, where Linux's open would have put it. */
	if (mine >= 0 && fd >= 0) {
		uint64_t d[6] = {(uint64_t)fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, 0, 0, 0, 0};
		int64_t low = inject(t, &at_exit, SYS_fcntl, d);
		uint64_t c[6] = {(uint64_t)fd, 0, 0, 0, 0, 0};
		if (low >= 0 && low < fd && inject(t, &at_exit, SYS_close, c) == 0)
			fd = (int)low;
	}
	if (mine >= 0)
		close(mine);
	cbox_mem_write(t->tid, at, &saved, sizeof(saved));
	if (!at_exit)
		return fd < 0 ? fd : -EIO;
	/* The task now sits at an exit stop: the answer must be given there (finish_exit). */
	t->at_exit = true;
	/* (a task killed meanwhile is no failure to report: it never sees the answer) */
	if (fd < 0 && fd != -EMFILE && fd != -ESRCH)
		cbox_warn("installing an fd in task %d failed: %s", t->tid, strerror(-fd));
	return fd;
}

static int pt_reply(struct cbox_platform *p, struct cbox_trap *t, int64_t ret)
{
	(void)p;
	if (t->at_exit)
		return finish_exit(t, ret);
	return cbox_ptrace_reply(t, ret);
}

static int pt_cont(struct cbox_platform *p, struct cbox_trap *t)
{
	(void)p;
	if (t->at_exit) {
		/* The call was replaced by injections; run the original now. */
		trap_release_signals(t);
		struct user_regs_struct r = t->regs;
		r.rip -= 2;
		r.rax = r.orig_rax;
		t->rerun = t->resume == PTRACE_SYSCALL;
		if (ptrace(PTRACE_SETREGS, t->tid, 0, &r) < 0 ||
		    ptrace(resume_of(t), t->tid, 0, 0) < 0)
			return errno == ESRCH ? 0 : -errno;
		return 0;
	}
	return cbox_ptrace_cont(t);
}

static int pt_install(struct cbox_platform *p, struct cbox_trap *t, int hostfd, bool cloexec)
{
	return cbox_ptrace_install(p, t, hostfd, cloexec);
}

static bool pt_still_valid(struct cbox_platform *p, struct cbox_trap *t)
{
	(void)p;
	(void)t;
	return true; /* a stopped tracee stays until its tracer resumes it */
}

static int pt_add_listener(struct cbox_platform *p, int listener)
{
	(void)p;
	if (listener >= 0)
		close(listener);
	return 0;
}

static void pt_drop_listener(struct cbox_platform *p, int listener)
{
	(void)p;
	(void)listener;
}

static int pt_recv(struct cbox_platform *p, int listener, struct cbox_trap *t)
{
	(void)p;
	(void)listener;
	(void)t;
	return -EINVAL; /* traps arrive as ptrace stops */
}

static void pt_free(struct cbox_platform *p)
{
	(void)p;
}

const struct cbox_platform_ops cbox_platform_ptrace = {
    .name = "ptrace",
    .trap_action = SECCOMP_RET_TRACE,
    .needs_install_fd = true,
    .runs_on_guest_cpu = false,
    .installs_o_path = true,
    .add_listener = pt_add_listener,
    .drop_listener = pt_drop_listener,
    .recv = pt_recv,
    .reply = pt_reply,
    .cont = pt_cont,
    .install_fd = pt_install,
    .still_valid = pt_still_valid,
    .free = pt_free,
};
