/*
 * The ptrace platform, and the ptrace-stop operations both platforms use.
 *
 * Trapped calls arrive as PTRACE_EVENT_SECCOMP stops (the guest filter returns SECCOMP_RET_TRACE).
 * At such a stop the sentry can answer (skip the call with orig_rax = -1 and set rax), let it run
 * (after the stop the kernel re-runs the filter, which treats a second TRACE as allowed), or run
 * other syscalls inside the task first ("injection": change the registers, run to the
 * syscall-exit stop, rewind the instruction pointer onto the same syscall instruction). The
 * install channel that fds reach a task through is ptrace_install.c's.
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sched.h>
#include <unistd.h>

#include "cbox/fdpass.h"
#include "cbox/log.h"
#include "cbox/procfs.h"
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
 * Take tid's stop, if it has one: 1 and its wait status in *st, 0 if it has none yet. Only stops
 * are taken (waitid without WEXITED): an exit stays for the tracer loop's reap, which must see
 * every one (the program's ends the sandbox, and each task's record goes with it). It used to be
 * taken here and lost: a program SIGKILLed while the sentry ran a call in it (kill -9, the OOM
 * killer; 2 runs in 6 of a loop of opens under ulimit -n 256) left the sandbox waiting for an
 * exit it would never see.
 */
static int take_stop(pid_t tid, int *st)
{
	siginfo_t si;
	si.si_pid = 0;
	if (waitid(P_PID, (id_t)tid, &si, WSTOPPED | __WALL | WNOHANG) < 0)
		return errno == ECHILD ? -ESRCH : -errno;
	if (si.si_pid != tid)
		return 0;
	*st = (si.si_status << 8) | 0x7f; /* as waitpid gives it: the event bits above the signal */
	return 1;
}

/* Whether thread tid has exited (a zombie, or gone), from /proc: for kernels before 6.9, which
 * have no pidfd of one thread to poll. */
static bool thread_exited(pid_t tid)
{
	char buf[512];
	const char *state = cbox_task_stat_fields(tid, buf, sizeof(buf));
	return !state || *state == 'Z' || *state == 'X';
}

/*
 * Sleep until something may have happened to tid: a SIGCHLD (every stop of a tracee raises one;
 * SIGCHLD is blocked in the sentry, for the tracer loop's signalfd) or tid's own exit. -ESRCH
 * once tid has exited. *took is set when a SIGCHLD was taken: the caller raises it again for the
 * tracer loop, whose other tracees' stops it may have announced.
 *
 * Waiting for tid's stop alone could wait forever: a thread group's leader that dies while other
 * threads of it are not yet reaped is not reported to its tracer until they are, and they are
 * the sentry's to reap (a process of two threads SIGKILLed while the sentry ran a call in its
 * leader hung the sandbox, the sentry in waitpid for the leader). So the exit of the thread
 * itself ends the wait (a pidfd of the thread, PIDFD_THREAD, polls readable then; before Linux
 * 6.9, /proc says so, looked at every 20 ms).
 */
static int sleep_for_stop(pid_t tid, int *pidfd, bool *took)
{
	static int chld = -1;
	if (chld < 0) {
		sigset_t m;
		sigemptyset(&m);
		sigaddset(&m, SIGCHLD);
		chld = signalfd(-1, &m, SFD_CLOEXEC | SFD_NONBLOCK);
		if (chld < 0)
			return -errno;
	}
	if (*pidfd == -1) {
		*pidfd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
		if (*pidfd < 0 && errno == ESRCH)
			return -ESRCH;
		if (*pidfd < 0)
			*pidfd = -2; /* (no thread pidfds: /proc) */
	}
	struct pollfd pf[2] = {{.fd = chld, .events = POLLIN}, {.fd = *pidfd, .events = POLLIN}};
	int r = poll(pf, *pidfd >= 0 ? 2 : 1, *pidfd >= 0 ? -1 : 20);
	if (r < 0 && errno != EINTR)
		return -errno;
	if (pf[0].revents & POLLIN) {
		struct signalfd_siginfo si;
		while (read(chld, &si, sizeof(si)) == sizeof(si))
			*took = true;
	}
	if (*pidfd >= 0 ? (pf[1].revents & POLLIN) != 0 : thread_exited(tid))
		return -ESRCH;
	return 0;
}

/*
 * Wait for tid's next stop; -ESRCH if it exits first (its exit is the tracer loop's to take). The
 * injected call is short (a recvmsg that finds its message queued), so the stop usually comes
 * within microseconds: asking again, yielding between tries, before sleeping saves the cross-CPU
 * wake-up the sleep would cost (as the tracer loop's reap does). An open+close on this platform
 * (one injected call) went from 99-116 to 70-76 us.
 */
static int wait_stop(pid_t tid, int *st)
{
	int pidfd = -1, r;
	bool took = false;
	struct cbox_spin sp = {0};
	for (;;) {
		r = take_stop(tid, st);
		if (r != 0)
			break;
		if (cbox_spin_again(&sp, 64))
			continue;
		r = sleep_for_stop(tid, &pidfd, &took);
		if (r < 0)
			break;
	}
	if (pidfd >= 0)
		close(pidfd);
	if (took)
		kill(getpid(), SIGCHLD);
	return r < 0 ? r : 0;
}

bool cbox_ptrace_group_stop(int st)
{
	int sig = WSTOPSIG(st);
	return WIFSTOPPED(st) && (st >> 16) == PTRACE_EVENT_STOP &&
	       (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU);
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
 *
 * A group-stop can reach the task on the way (another thread took a stop signal): it is resumed
 * past, as the call must end, and once it has, a PTRACE_INTERRUPT makes the task stop again
 * before it runs another instruction of its own (the kernel takes that trap on its way back to
 * user mode, and reports it with the stop signal while the group is still stopped, which the
 * tracer loop keeps as a group-stop). Before, the thread ran on in a stopped process until the
 * next stop signal (198 stops in 200 of a two-thread process opening files under ulimit -n 256).
 */
static int run_to_exit(pid_t tid, const struct injected *x, int *pending, int64_t *rval)
{
	bool entered = !x->from_user, group_stop = false;
	for (int i = 0; i < 8; i++) {
		if (ptrace(PTRACE_SYSCALL, tid, 0, 0) < 0)
			return -errno;
		int st;
		int rc = wait_stop(tid, &st);
		if (rc < 0)
			return rc; /* (-ESRCH: it died meanwhile, by a SIGKILL or its exit_group) */
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
				if (group_stop)
					ptrace(PTRACE_INTERRUPT, tid, 0, 0);
				return 0;
			}
			break;
		default:
			/* An event stop of no call: the task's exit, or a group-stop; go on. */
			ours = (st >> 16) == PTRACE_EVENT_EXIT || (st >> 16) == PTRACE_EVENT_STOP;
			if (cbox_ptrace_group_stop(st))
				group_stop = true;
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
bool cbox_ptrace_hold_signals(pid_t tid, uint64_t *saved)
{
	uint64_t all = ~0ULL;
	return ptrace(PTRACE_GETSIGMASK, tid, sizeof(*saved), saved) == 0 &&
	       ptrace(PTRACE_SETSIGMASK, tid, sizeof(all), &all) == 0;
}

void cbox_ptrace_release_signals(pid_t tid, uint64_t saved)
{
	ptrace(PTRACE_SETSIGMASK, tid, sizeof(saved), &saved);
}

/* The thread group of task tid (/proc/TID/status), or -1. */
pid_t cbox_ptrace_tgid_of(pid_t tid)
{
	char path[64], buf[1024]; /* (Tgid is the fourth line) */
	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	if (cbox_proc_read(path, buf, sizeof(buf)) <= 0)
		return -1;
	const char *line = strstr(buf, "\nTgid:");
	return line ? (pid_t)strtol(line + 6, NULL, 10) : -1;
}

/* Queue held signal sig again on thread tid (tgkill: the sentry's filter allows no tkill). */
static void requeue_held(pid_t tid, int sig)
{
	pid_t tgid =
	    sig > 0 ? cbox_ptrace_tgid_of(tid) : -1; /* (a read of /proc: only when one was held) */
	if (tgid > 0)
		syscall(SYS_tgkill, tgid, tid, sig);
}

static void trap_hold_signals(struct cbox_trap *t)
{
	if (!t->sigs_held)
		t->sigs_held = cbox_ptrace_hold_signals(t->tid, &t->saved_sigmask);
}

static void trap_release_signals(struct cbox_trap *t)
{
	if (t->sigs_held)
		cbox_ptrace_release_signals(t->tid, t->saved_sigmask);
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
int64_t cbox_ptrace_inject(struct cbox_trap *t, bool *at_exit, long nr, const uint64_t a[6])
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

int cbox_signal_masks(pid_t tid, uint64_t *caught, uint64_t *ignored)
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

uint64_t cbox_signals_ignored(uint64_t caught, uint64_t ignored)
{
	const uint64_t dfl = 1ULL << (SIGCHLD - 1) | 1ULL << (SIGURG - 1) | 1ULL << (SIGWINCH - 1) |
	                     1ULL << (SIGCONT - 1);
	return ignored | (dfl & ~caught);
}

/* The kernel's struct sigaction on x86_64 (rt_sigaction's argument). */
struct kernel_sigaction {
	uint64_t handler, flags, restorer, mask;
};

/* Run the call nr(a...) in tid, which is at a stop outside any call (regs: its registers, just
 * after a syscall instruction): rewind onto that instruction and run to the call's exit stop. A
 * signal that stops the task on the way is kept in *pending (the first one), not delivered
 * now. The registers are left as the call's exit gives them: the caller puts regs back. */
int64_t cbox_ptrace_run_in_user(pid_t tid, const struct user_regs_struct *regs, long nr,
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
	int rc = cbox_signal_masks(tid, &caught, &ignored);
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
	bool held = cbox_ptrace_hold_signals(tid, &mask);
	for (int sig = 1; sig <= 64 && rc == 0; sig++) {
		uint64_t bit = 1ULL << (sig - 1);
		if (sig == SIGKILL || sig == SIGSTOP || !((caught | ignored) & bit))
			continue;
		uint64_t act = at + ((ignored & bit) ? sizeof(acts[0]) : 0);
		uint64_t a[6] = {(uint64_t)sig, act, 0, 8, 0, 0};
		int64_t r = cbox_ptrace_run_in_user(tid, &regs, SYS_rt_sigaction, a, &pending);
		rc = r < 0 ? (int)r : 0;
	}
	cbox_mem_write(tid, at, saved, sizeof(saved));
	if (held)
		cbox_ptrace_release_signals(tid, mask);
	/* Back to where the clone returned to, with its result (0 in the child). */
	if (ptrace(PTRACE_SETREGS, tid, 0, &regs) < 0 && rc == 0)
		rc = -errno;
	return rc < 0 ? rc : pending;
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
