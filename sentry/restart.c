/*
 * What a signal's delivery stop does to the call the signal interrupted (the tracer loop,
 * tracer.c, calls cbox_signal_stop_regs at each one). The sentry traces every guest task, and
 * tracing changes how the kernel treats an interrupted call: a trapped call's seccomp wait can be
 * cut short where Linux would have run the handler first, and a signal the task ignores, which
 * Linux drops as it is sent, is queued for a traced task and wakes it. Each fix below puts the
 * call back where Linux would have left it; a transfer such a signal cut short is finished in
 * short_transfer.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <linux/ptrace.h>
#include <linux/seccomp.h>

#include "cbox/log.h"
#include "cbox/syscalls.h"
#include "internal.h"

/*
 * On the seccomp platform the kernel waits interruptibly for the sentry to receive a
 * notification. A signal in that window aborts the call with -ERESTARTSYS, which a handler
 * without SA_RESTART turns into EINTR - even for calls that never fail so on Linux (pipe,
 * close, openat of a file). On Linux such a signal simply runs its handler before the call.
 * So at the signal's delivery stop, a trapped call the sentry never let run is restarted
 * unconditionally (-ERESTARTNOINTR); a call the sentry continued on the host, and the host
 * interrupted, keeps Linux's own answer.
 */
/*
 * Whether the host's own run of nr can end in -ERESTARTSYS (it sleeps interruptibly). The
 * continued marker below names the task's last continued call, and it goes stale: a task that
 * repeats a continued call at the same address (close in a loop) may be interrupted before the
 * sentry receives the repeat, and nothing in the registers tells the two apart. These calls
 * never sleep interruptibly on the host (close turns the code into EINTR itself; the memory
 * calls, pidfd_getfd and process_vm_* wait only killably; sending a signal, the scheduler's,
 * priority and limit calls, socket, bind, prctl, unshare, seccomp and fcntl's F_GETFL and
 * F_SETFL do not wait at all), so for them -ERESTARTSYS can only come from the seccomp wait.
 * fstat and getdents wait killably on local and NFS files; a FUSE server's may be interrupted,
 * and is then restarted here as under SA_RESTART. Any other call keeps the marker's verdict.
 * At worst a stale marker then gives a call that may fail with EINTR on Linux an EINTR. (kill
 * and getdents64 were not listed: under a handler without SA_RESTART, as Python installs its
 * handlers, a process stopping and continuing a child in a loop got EINTR from about one kill in
 * 40, and os.listdir under a 0.1 ms timer raised InterruptedError ~30 times a second.)
 */
static bool host_never_interrupts(long nr, const uint64_t args[6])
{
	switch (nr) {
	case SYS_fcntl:
		return (int)args[1] == F_GETFL || (int)args[1] == F_SETFL;
	case SYS_fstat:
	case SYS_getdents:
	case SYS_getdents64:
	case SYS_bind:
	case SYS_prctl:
	case SYS_close:
	case SYS_close_range:
	case SYS_dup:
	case SYS_dup2:
	case SYS_dup3:
	case SYS_pipe:
	case SYS_pipe2:
	case SYS_brk:
	case SYS_munmap:
	case SYS_mprotect:
	case SYS_kill:
	case SYS_tkill:
	case SYS_tgkill:
	case SYS_rt_sigqueueinfo:
	case SYS_rt_tgsigqueueinfo:
	case SYS_pidfd_send_signal:
	case SYS_getpriority:
	case SYS_setpriority:
	case SYS_ioprio_get:
	case SYS_ioprio_set:
	case SYS_sched_setparam:
	case SYS_sched_setscheduler:
	case SYS_sched_setattr:
	case SYS_sched_setaffinity:
	case SYS_sched_getaffinity:
	case SYS_prlimit64:
	case SYS_get_robust_list:
	case SYS_kcmp:
	case SYS_pidfd_getfd:
	case SYS_process_vm_readv:
	case SYS_process_vm_writev:
	case SYS_socket:
	case SYS_unshare:
	case SYS_seccomp:
		return true;
	default:
		return false;
	}
}

static bool restart_interrupted_trap(struct cbox_sentry *s, struct cbox_task *t,
                                     struct user_regs_struct *r)
{
	if (s->platform->ops->trap_action != SECCOMP_RET_USER_NOTIF)
		return false; /* ptrace platform: traps are ptrace stops, not interruptible waits */
	if ((int64_t)r->rax != -CBOX_ERESTARTSYS)
		return false;
	/* (the sentry's own answer to a wait it ended for this signal: defer.c) */
	bool answered = t->restart_answered && t->restart_ip == r->rip;
	t->restart_answered = false;
	if (answered)
		return false;
	long nr = (long)r->orig_rax;
	/* Whether the call waited in a notification is the filter's decision, which for some
	 * calls depends on their arguments (an fcntl F_SETLKW runs on the host, where an
	 * interruption is its own; an fcntl F_NOTIFY waits for the sentry). */
	uint64_t args[6] = {r->rdi, r->rsi, r->rdx, r->r10, r->r8, r->r9};
	if (nr < 0 || !cbox_platform_traps(s->platform->ops, s->cfg->strict, (int)nr, args))
		return false; /* the host's own call, or a ptrace stop */
	if (t->continued_nr1 == nr + 1 && t->continued_ip == r->rip &&
	    !host_never_interrupts(nr, args))
		return false; /* continued by the sentry: the host interrupted it */
	r->rax = (uint64_t)-CBOX_ERESTARTNOINTR;
	return true;
}

static bool is_restart_code(int64_t rv)
{
	return rv == -CBOX_ERESTARTSYS || rv == -CBOX_ERESTARTNOINTR ||
	       rv == -CBOX_ERESTARTNOHAND || rv == -CBOX_ERESTART_RESTARTBLOCK;
}

/*
 * Linux drops a signal its target ignores (SIGCONT or SIGCHLD left at their default, any
 * signal at SIG_IGN) as it is sent, but queues it for a traced task so that its tracer sees it:
 * under the sentry such a signal wakes the task, interrupts the call it sleeps in and, once the
 * sentry lets the signal go, the kernel restarts the call (it rewinds the instruction pointer
 * onto the syscall instruction and puts the call's number back). A second signal that comes
 * after that restart but before the task is back in user mode finds no interrupted call: its
 * handler runs, then the call starts again from the top, where on Linux (whose task was never
 * woken by the first) the call ends with EINTR. psutil's terminate sends SIGCONT then SIGTERM:
 * a python child ran its SIGTERM handler (its flags were set, read in its memory), then went
 * back to its time.sleep(60) instead of raising SystemExit (about one run in eight of psutil's
 * suite; the sentry's turn between the two kills puts the SIGTERM right in that window).
 *
 * So at each signal stop in an interrupted call the sentry notes where the call would go on
 * (note_restart), and a signal stop found exactly at the restart, the instruction pointer back
 * on that syscall instruction and the number put back, gets the interrupted call's state back
 * (restart_window): the kernel then treats the new signal as if both had come together (EINTR
 * for a handler without SA_RESTART; a restart for one with it, or an ignored one). A sigreturn
 * sets orig_rax to -1, so a task that merely returned there from a handler does not match.
 */
static bool restart_window(struct cbox_task *t, struct user_regs_struct *r)
{
	if (!t->rs_armed)
		return false;
	t->rs_armed = false;
	uint64_t back = t->rs_code == -CBOX_ERESTART_RESTARTBLOCK ? SYS_restart_syscall : t->rs_nr;
	if (r->rip + 2 != t->rs_ip || r->rax != back || r->orig_rax != t->rs_nr)
		return false;
	r->rax = (uint64_t)t->rs_code;
	r->rip = t->rs_ip;
	return true;
}

static void note_restart(struct cbox_task *t, const struct user_regs_struct *r)
{
	t->rs_armed = (int64_t)r->orig_rax >= 0 && is_restart_code((int64_t)r->rax);
	t->rs_ip = r->rip;
	t->rs_nr = r->orig_rax;
	t->rs_code = (int64_t)r->rax;
}

/*
 * The same queued ignored signal ends, with EINTR, the calls that fail so whenever a signal
 * wakes them rather than leave the choice to the kernel's restart rules: epoll_wait and its
 * kin, sigtimedwait, semop, io_getevents. On Linux a child's exit (SIGCHLD, ignored by default)
 * never touches its parent's epoll_wait; under the sentry it failed with EINTR, and a loop that
 * takes EINTR for an error stopped. Where the call waits without a time limit, a restart is
 * exactly what not being woken would have been, and the kernel makes one from
 * -ERESTARTNOHAND once it has ignored the signal. A call with a time limit keeps its EINTR:
 * restarted, it would wait its whole time again (an event loop's timer would fire late), and
 * a loop with a timeout recomputes it after an EINTR. Under a guest tracer (strace) Linux
 * queues the signal too, and so wakes the call as here: left as it is.
 */
static bool waits_without_limit(const struct user_regs_struct *r)
{
	switch ((long)r->orig_rax) {
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
		return (int)r->r10 < 0;
	case SYS_epoll_pwait2:
	case SYS_semtimedop:
		return r->r10 == 0;
	case SYS_rt_sigtimedwait:
		return r->rdx == 0;
	case SYS_semop:
		return true;
	case SYS_io_getevents:
	case SYS_io_pgetevents:
		return r->r8 == 0;
	default:
		return false;
	}
}

/* Whether task tid ignores sig (SIG_IGN, or a default of ignoring it), which Linux would have
 * dropped as it was sent. SIGCONT is left out: after a stop Linux wakes the task for it. */
bool cbox_signal_ignored_by(pid_t tid, int sig)
{
	if (sig < 1 || sig > 64 || sig == SIGCONT)
		return false;
	uint64_t caught = 0, ignored = 0;
	return cbox_signal_masks(tid, &caught, &ignored) == 0 &&
	       (cbox_signals_ignored(caught, ignored) & (1ULL << (sig - 1)));
}

static bool ignored_wakes(struct cbox_task *t, pid_t tid, int sig, struct user_regs_struct *r)
{
	if ((int64_t)r->rax != -EINTR || t->pt.tracer || !waits_without_limit(r) ||
	    !cbox_signal_ignored_by(tid, sig))
		return false;
	r->rax = (uint64_t)-CBOX_ERESTARTNOHAND;
	return true;
}

/* The registers at a signal's delivery stop: the fixes above, then the note for the next. */
void cbox_signal_stop_regs(struct cbox_sentry *s, struct cbox_task *t, pid_t tid, int sig)
{
	struct user_regs_struct r;
	if (ptrace(PTRACE_GETREGS, tid, 0, &r) < 0)
		return;
	bool changed = restart_window(t, &r);
	changed |= ignored_wakes(t, tid, sig, &r);
	changed |= cbox_short_transfer(s, t, tid, sig, &r);
	changed |= restart_interrupted_trap(s, t, &r);
	if (changed && ptrace(PTRACE_SETREGS, tid, 0, &r) < 0)
		return;
	note_restart(t, &r);
}
