/*
 * The sentry's event loop: trapped syscalls (seccomp notifications or ptrace stops) and the ptrace
 * events every guest task reports to the sentry, its tracer (new tasks, execs, signals, exits).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <unistd.h>

#include "cbox/fdpass.h"
#include "cbox/log.h"
#include "cbox/syscalls.h"
#include "internal.h"

/* Set up a new task's shared state from its parent's, as the clone flags say. */
static void inherit(struct cbox_sentry *s, struct cbox_task *child, struct cbox_task *parent,
                    uint64_t flags)
{
	if (flags & CLONE_THREAD) {
		child->tg = parent->tg;
		child->tg->refs++;
	} else {
		child->tg = calloc(1, sizeof(*child->tg));
		if (child->tg) {
			child->tg->refs = 1;
			child->tg->host_tgid = child->tid;
			child->tg->exe =
			    parent->tg && parent->tg->exe ? strdup(parent->tg->exe) : NULL;
			if (parent->tg) {
				cbox_text_fork(s, child->tg, parent->tg);
				child->tg->nondumpable = parent->tg->nondumpable;
			}
		}
	}
	child->files = (flags & CLONE_FILES) ? cbox_fdtable_get(parent->files)
	                                     : cbox_fdtable_copy(parent->files);
	child->new_channel = !(flags & CLONE_FILES) && s->platform->ops->needs_install_fd;
	if (flags & CLONE_FS) {
		child->fs = parent->fs;
		child->fs->refs++;
	} else {
		child->fs = calloc(1, sizeof(*child->fs));
		if (child->fs) {
			child->fs->refs = 1;
			child->fs->cwd = cbox_dentry_get(parent->fs->cwd);
			child->fs->root = cbox_dentry_get(parent->fs->root);
			child->fs->umask = parent->fs->umask;
		}
	}
	/* Credentials are per task in Linux (a thread's setuid is its own; glibc makes every
	 * thread call it), so a thread shares them only until one of them changes its own. */
	child->cred = parent->cred ? cbox_cred_get(parent->cred) : NULL;
	/* A thread's parent, and a CLONE_PARENT child's, is its creator's (PTRACE_TRACEME). */
	child->parent_tid =
	    (flags & (CLONE_THREAD | CLONE_PARENT)) ? parent->parent_tid : parent->tid;
	child->attached_parent = true;
	child->no_new_privs = parent->no_new_privs;
}

/* Let task tid (t: its state, when known) go on from a stop of the sentry's own, the way its
 * guest tracer, if any, last let it run (ptrace_emu.c). */
static void resume(struct cbox_task *t, pid_t tid, int sig)
{
	enum __ptrace_request how =
	    t ? (enum __ptrace_request)cbox_ptrace_emu_resume_req(t) : PTRACE_CONT;
	if (t)
		cbox_ptrace_emu_rearm(t);
	if (t && t->rest.done)
		how = PTRACE_SYSCALL; /* (to the exit of the cut call's rest: short_transfer.c) */
	if (ptrace(how, tid, 0, sig) < 0 && errno != ESRCH)
		cbox_warn("resume task %d: %s", tid, strerror(errno));
}

/* The flags of the clone, fork or vfork the parent is stopped in (regs: its registers at this
 * stop, inside the call). A clone on the fast path never reached the sentry, so they are read from
 * the registers (orig_rax is the call, rdi its flags); a clone the sentry checked also left them
 * in clone_flags. */
static uint64_t clone_flags_of(const struct cbox_task *parent, const struct user_regs_struct *regs,
                               int event)
{
	if (regs && regs->orig_rax == SYS_clone)
		return regs->rdi;
	if (event == PTRACE_EVENT_VFORK)
		return CLONE_VM | CLONE_VFORK;
	return event == PTRACE_EVENT_CLONE ? parent->clone_flags : 0;
}

/* Whether the call t is stopped in (regs) is the clone the sentry made of its clone3. */
static bool clone3_here(const struct cbox_task *t, const struct user_regs_struct *regs)
{
	return t->clone3_pending && regs && regs->orig_rax == SYS_clone &&
	       regs->rip == t->clone3.ip;
}

/* Give task tid back the argument registers of its clone3 (see syscalls/sys_clone.c). */
static void clone3_restore(pid_t tid, const struct cbox_clone3_fixup *fx)
{
	struct user_regs_struct r;
	if (ptrace(PTRACE_GETREGS, tid, 0, &r) < 0)
		return;
	r.rdi = fx->rdi;
	r.rsi = fx->rsi;
	r.rdx = fx->rdx;
	r.r10 = fx->r10;
	r.r8 = fx->r8;
	if (ptrace(PTRACE_SETREGS, tid, 0, &r) < 0 && errno != ESRCH)
		cbox_warn("restoring the clone3 registers of task %d: %s", tid, strerror(errno));
}

/* Let a new task run for the first time (both its own first stop and its parent's event have
 * been seen), unless a guest tracer attached to it meanwhile: it is then held at this stop. */
static void start_new_task(struct cbox_sentry *s, struct cbox_task *t)
{
	int sig = 0;
	if (t->new_channel) {
		t->new_channel = false;
		int sock = -1;
		sig = cbox_ptrace_new_channel(t->tid, &sock);
		if (sig >= 0 && t->files) {
			/* (-1 where the guest lowered its hard fd limit to 1022 or below, where no
			 * fd can be placed at the reserved one, as after `ulimit -n 256`: the child
			 * has no channel, and each install makes a pair inside it) */
			cbox_fdtable_set_install_sock(t->files, sock);
		} else {
			/* It would hold its parent's channel (see cbox_ptrace_new_channel). */
			if (sig != -ESRCH)
				cbox_warn("giving task %d its own install socket: %s; killing it",
				          t->tid, strerror(sig < 0 ? -sig : ENOMEM));
			if (sock >= 0)
				close(sock);
			kill(t->tid, SIGKILL);
			return;
		}
	}
	if (t->clone3_child) {
		if (t->clone3.clear_sighand) {
			int held = sig;
			sig = cbox_ptrace_clear_sighand(t->tid);
			if (sig == 0)
				sig = held;
			if (sig < 0) {
				/* Running it with its parent's handlers would break the promise the
				 * call made; the kernel's child would not get this far either (the
				 * failure is its stack, or its death). */
				if (sig != -ESRCH)
					cbox_warn("CLONE_CLEAR_SIGHAND in task %d: %s; killing it",
					          t->tid, strerror(-sig));
				kill(t->tid, SIGKILL);
				sig = 0;
			}
		}
		clone3_restore(t->tid, &t->clone3);
		t->clone3_child = false;
	}
	if (sig == 0 && cbox_ptrace_emu_stop(s, t, SIGTRAP, true))
		return;
	resume(t, t->tid, sig);
}

/*
 * A guest tracer that asked for this kind of event traces the new task too, from its first stop
 * (PTRACE_EVENT_STOP for a seizer's, else a SIGSTOP's), as Linux attaches it (ptrace_init_task).
 */
static void auto_attach(struct cbox_sentry *s, struct cbox_task *parent, struct cbox_task *child,
                        int event)
{
	if (!parent->pt.tracer || !(parent->pt.options & (1u << event)) || child->pt.tracer)
		return;
	struct cbox_task *tracer = cbox_task_find(s, parent->pt.tracer);
	if (!tracer)
		return;
	cbox_ptrace_emu_attach(s, child, tracer, parent->pt.seized, parent->pt.exitkill);
	child->pt.options = parent->pt.options;
	child->vtid = cbox_task_vpid_of(s, child->tid); /* (for its exit report, once gone) */
	child->pt.stop_wanted = true;
	child->pt.want_code = parent->pt.seized ? SIGTRAP | (PTRACE_EVENT_STOP << 8) : SIGSTOP;
}

static void on_new_task(struct cbox_sentry *s, struct cbox_task *parent, int event)
{
	unsigned long msg = 0;
	ptrace(PTRACE_GETEVENTMSG, parent->tid, 0, &msg);
	pid_t ctid = (pid_t)msg;
	struct user_regs_struct regs;
	bool have_regs = ptrace(PTRACE_GETREGS, parent->tid, 0, &regs) == 0;
	uint64_t flags = clone_flags_of(parent, have_regs ? &regs : NULL, event);
	bool clone3 = clone3_here(parent, have_regs ? &regs : NULL);
	parent->clone_flags = 0;
	parent->clone3_pending = false;
	struct cbox_task *child = cbox_task_find(s, ctid);
	if (!child)
		child = cbox_task_new(s, ctid);
	if (!child) {
		cbox_error("out of memory tracking task %d: killing it", ctid);
		kill(ctid, SIGKILL);
		resume(parent, parent->tid, 0);
		return;
	}
	inherit(s, child, parent, flags);
	auto_attach(s, parent, child, event);
	if (clone3) {
		/* Neither task has run on since the fork: the child waits for the sentry, the
		 * parent is at this stop. */
		if (parent->clone3.parent_tid) {
			pid_t v = cbox_task_vpid_of(s, ctid);
			cbox_mem_write(parent->tid, parent->clone3.parent_tid, &v, sizeof(v));
		}
		child->clone3 = parent->clone3;
		child->clone3_child = true;
		clone3_restore(parent->tid, &parent->clone3);
	}
	if (child->seen_first_stop)
		start_new_task(s, child);
	/* The parent's own event stop, for a tracer that asked for it: the new task's id. */
	if (!parent->pt.tracer ||
	    !cbox_ptrace_emu_event(s, parent, event, (unsigned long)cbox_task_vpid_of(s, ctid)))
		resume(parent, parent->tid, 0);
}

static void on_exec(struct cbox_sentry *s, struct cbox_task *t)
{
	unsigned long former = 0;
	ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &former);
	/* A thread other than the leader exec'd: the kernel gave it the leader's tid (t) and
	 * the former thread's tid is gone without an exit report. What the sentry prepared for
	 * that exec (the program the loader will ask for) moves with it. */
	struct cbox_task *ft =
	    former && (pid_t)former != t->tid ? cbox_task_find(s, (pid_t)former) : NULL;
	if (ft) {
		struct cbox_exec_pending *e = t->exec;
		t->exec = ft->exec;
		ft->exec = e;
		cbox_task_remove(s, ft);
	}
	/* The new image runs from the program and interpreter the sentry opened for it (the
	 * loader still has to ask for them); the old image's files are free again. */
	if (t->tg && t->exec)
		cbox_text_exec(s, t->tg, (const int[2]){t->exec->elf_fd, t->exec->interp_fd});
	/* As Linux's exec: dumpable again unless it runs with ids it did not start with. */
	if (t->tg)
		t->tg->nondumpable =
		    t->cred && (t->cred->euid != t->cred->uid || t->cred->egid != t->cred->gid);
	/* The tracer's stops for this exec come once the loader hands over (exec.c). */
	if (t->pt.tracer)
		t->pt.in_exec = true;
	/* exec unshares the fd table. One that another process shared (a thread's is gone by
	 * now) held that process's install channel too: the new image gets its own at its first
	 * trapped call, the loader's request (dispatch.c renew_channel). */
	if (t->files) {
		t->renew_channel = t->renew_channel || (s->platform->ops->needs_install_fd &&
		                                        cbox_fdtable_shared(t->files));
		struct cbox_fdtable *own = cbox_fdtable_copy(t->files);
		cbox_fdtable_put(s, t->files);
		t->files = own;
	}
}

static void on_task_exit(struct cbox_sentry *s, pid_t tid, int status)
{
	struct cbox_task *t = cbox_task_find(s, tid);
	if (tid == s->init_tid) {
		s->init_status = status;
		/* The program is done, and with it the sandbox. Under a tiny init the others
		 * lived on until the init saw the exit, while the sentry had already stopped
		 * answering: a background job still starting printed ENOSYS errors or the
		 * loader's "must be started by the cbox sentry". Killing the init kills them all,
		 * as the program's exit does when it is pid 1 itself, and the sentry serves on
		 * until the last of them is gone (cbox_tracer_loop). */
		if (s->tiny_init.tid > 0)
			kill(s->tiny_init.tid, SIGKILL);
	}
	if (tid == s->tiny_init.tid)
		s->tiny_init_exited = true;
	cbox_exec_ctl_task_exit(s, tid, status);
	if (t) {
		cbox_ptrace_emu_exited(s, t, status);
		cbox_task_zombie_add(s, t);
		cbox_task_remove(s, t);
	}
}

/* Whether sig, stopped on its way to task tid, is a fault the kernel raised (not a kill) that
 * the task does not catch. */
static bool fatal_fault(struct cbox_sentry *s, pid_t tid, int sig)
{
	(void)s;
	if (sig != SIGSEGV && sig != SIGBUS && sig != SIGILL && sig != SIGFPE && sig != SIGSYS &&
	    sig != SIGTRAP)
		return false;
	siginfo_t si;
	if (ptrace(PTRACE_GETSIGINFO, tid, 0, &si) < 0 || si.si_code <= 0)
		return false; /* sent by a process (SI_USER, SI_TKILL...): init ignores it */
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	unsigned long long caught = 0;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "SigCgt: %llx", &caught) == 1)
			break;
	fclose(f);
	return !(caught & (1ULL << (sig - 1)));
}

/*
 * The exit of a clone made from a clone3 that created no task (success ends at the new-task
 * event, which restores the registers). A clone interrupted by a signal is restarted by the
 * kernel from the rewritten registers, so those stay until the restart ends; the new-task event
 * of a restart that succeeds still restores them.
 */
static void clone3_failed(struct cbox_task *t, pid_t tid)
{
	struct user_regs_struct r;
	if (ptrace(PTRACE_GETREGS, tid, 0, &r) < 0)
		return;
	int64_t rv = (int64_t)r.rax;
	if (rv <= -CBOX_ERESTARTSYS && rv >= -CBOX_ERESTART_RESTARTBLOCK)
		return;
	if (clone3_here(t, &r))
		clone3_restore(tid, &t->clone3);
	t->clone3_pending = false;
}

/*
 * A SIGCONT ends a group-stop as it is sent (the kernel's prepare_signal), so the sender's kill
 * has returned by the time it reads the stopped task's state; but the sentry learns of it only
 * when it takes the task's next stop, which may still wait behind the sender's own trapped call
 * (psutil resumes a process and asks for its status at once). So its next stop is looked for
 * among those the trap loop took but has not handled, then peeked at in the kernel (WNOWAIT:
 * left for the loop): any stop but the group-stop's own means the task went on.
 */
struct reaped {
	pid_t tid;
	int status;
};

/* The stops reap() took from the kernel and has not handled yet (see reap). */
static const struct reaped *unhandled;
static size_t unhandled_n;

bool cbox_tracer_group_stop_ended(pid_t tid)
{
	/* (under ptrace the reader's own call is a stop of the batch that may hold the task's) */
	for (size_t i = 0; i < unhandled_n; i++)
		if (unhandled[i].tid == tid)
			return !cbox_ptrace_group_stop(unhandled[i].status);
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)tid, &si, WSTOPPED | WNOHANG | WNOWAIT | __WALL) < 0 ||
	    si.si_pid != tid)
		return false; /* no new stop yet: still listening, or running (the host says so) */
	/* (waitid's si_status holds the event bits above the signal, as waitpid's status does) */
	return si.si_code != CLD_TRAPPED || !cbox_ptrace_group_stop((si.si_status << 8) | 0x7f);
}

static void handle_stop(struct cbox_sentry *s, pid_t tid, int status)
{
	int sig = WSTOPSIG(status);
	int event = status >> 16;
	struct cbox_task *t = cbox_task_find(s, tid);
	if (!t) {
		/* A new task reporting before its parent's fork event: wait for that event. */
		t = cbox_task_new(s, tid);
		if (!t) {
			kill(tid, SIGKILL);
			return;
		}
	}
	t->stop_sig = 0; /* (a stop after a group-stop's PTRACE_LISTEN: SIGCONT ended it) */
	if (event && event != PTRACE_EVENT_STOP)
		t->rs_armed = false; /* (it made a call since: see restart_window) */
	if (event == PTRACE_EVENT_EXEC)
		t->rest.done = 0;
	switch (event) {
	case PTRACE_EVENT_SECCOMP: {
		struct cbox_trap trap = {.tid = tid, .ptrace_stop = true};
		if (ptrace(PTRACE_GETREGS, tid, 0, &trap.regs) < 0)
			return;
		trap.nr = (int)trap.regs.orig_rax;
		trap.args[0] = trap.regs.rdi;
		trap.args[1] = trap.regs.rsi;
		trap.args[2] = trap.regs.rdx;
		trap.args[3] = trap.regs.r10;
		trap.args[4] = trap.regs.r8;
		trap.args[5] = trap.regs.r9;
		trap.ip = trap.regs.rip;
		if (t->takes_listener && trap.nr == SYS_execve) {
			/* A task the sentry started (the guest's first, or one of `cbox exec`)
			 * carries the number of its seccomp listener in its first exec (see
			 * guest_init.c): take it before anything else runs under the filter. */
			t->takes_listener = false;
			int l = s->platform->ops->trap_action == SECCOMP_RET_USER_NOTIF
			            ? cbox_task_getfd(t, (int)trap.args[3])
			            : -1;
			int r = l;
			if (l >= 0 && (r = s->platform->ops->add_listener(s->platform, l)) < 0)
				close(l);
			if (r < 0 && s->platform->ops->trap_action == SECCOMP_RET_USER_NOTIF) {
				cbox_error("taking the seccomp listener of task %d: %s", tid,
				           strerror(-r));
				kill(tid, SIGKILL);
				return;
			}
		}
		cbox_dispatch(s, &trap);
		return;
	}
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		on_new_task(s, t, event); /* (resumes the parent, or holds it for its tracer) */
		return;
	case PTRACE_EVENT_EXEC:
		on_exec(s, t);
		resume(t, tid, 0);
		return;
	case PTRACE_EVENT_STOP:
		/* The stop the sentry asked for on behalf of the task's guest tracer. */
		if (t->seen_first_stop && cbox_ptrace_emu_stop(s, t, sig, true))
			return;
		if (cbox_ptrace_group_stop(status)) {
			/* group-stop: stay stopped, but keep reporting (SIGCONT ends it); the
			 * guest's /proc shows it stopped (fs_proc_pid.c) */
			t->stop_sig = sig;
			ptrace(PTRACE_LISTEN, tid, 0, 0);
			return;
		}
		if (!t->seen_first_stop) {
			t->seen_first_stop = true;
			if (!t->attached_parent)
				return; /* resumed by on_new_task */
			start_new_task(s, t);
			return;
		}
		resume(t, tid, 0);
		return;
	case PTRACE_EVENT_EXIT:
	case PTRACE_EVENT_VFORK_DONE: {
		/* Set on the host only for a tracer that asked for them (ptrace_emu.c). The exit's
		 * message is the wait status; vfork-done's the child's pid, the guest's number. */
		unsigned long msg = 0;
		ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg);
		if (event == PTRACE_EVENT_VFORK_DONE)
			msg = (unsigned long)cbox_task_vpid_of(s, (pid_t)msg);
		if (!cbox_ptrace_emu_event(s, t, event, msg))
			resume(t, tid, 0);
		return;
	}
	default:
		break;
	}
	if (sig == (SIGTRAP | 0x80)) {
		if (t->rest.done && cbox_rest_stop(t, tid))
			return;
		if (t->clone3_pending)
			clone3_failed(t, tid);
		/* A syscall stop the guest tracer asked for (PTRACE_SYSCALL): the host's own. */
		struct __ptrace_syscall_info info;
		if (t->pt.tracer && ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof(info), &info) > 0 &&
		    (info.op == PTRACE_SYSCALL_INFO_ENTRY || info.op == PTRACE_SYSCALL_INFO_EXIT) &&
		    cbox_ptrace_emu_syscall_stop(
		        s, t, info.op == PTRACE_SYSCALL_INFO_EXIT,
		        info.op == PTRACE_SYSCALL_INFO_ENTRY ? (long)info.entry.nr : -1,
		        info.instruction_pointer))
			return;
		resume(t, tid, 0);
		return;
	}
	if (t->tg && t->tg->host_tgid == s->init_tid && fatal_fault(s, tid, sig)) {
		/* The guest's pid 1 faulted with no handler. Linux kills such an init, but keeps it
		 * unkillable while it is traced, so a re-injected fault would only repeat forever:
		 * the sentry kills it and reports the fault signal as its death. */
		s->init_fault_sig = sig;
		kill(tid, SIGKILL);
		resume(NULL, tid, 0);
		return;
	}
	/* A signal on its way to the guest: deliver it as it is, or, when a guest task traces
	 * this one, stop it there for its tracer, who decides (ptrace_emu.c). */
	cbox_signal_stop_regs(s, t, tid, sig);
	if (cbox_ptrace_emu_stop(s, t, sig, false))
		return;
	resume(t, tid, sig);
}

/*
 * On the ptrace platform every trapped call is a ptrace stop, which the kernel reports with a
 * SIGCHLD: the sentry slept in poll() until the signalfd woke it, usually on the other CPU, and
 * on this nested 2-CPU VM that hand-off cost more than the call itself (stat 59 us). A guest that
 * just got its answer often traps again within microseconds, so once the stops are drained the
 * sentry asks again, yielding between tries, up to REAP_SPIN_TRIES times before it goes back to
 * poll(): stat fell to 28 us, gcc -O2 -c from 202 to 146-157 ms (medians of 8, interleaved; the
 * seccomp platform, whose notifications wake the sentry on the guest's CPU, gained nothing and
 * does not spin). At most REAP_SPIN_EVENTS stops are caught this way per call, so the other fds
 * of the loop (`cbox exec`, deferred answers) are served between bursts; returning is always
 * safe, as a stop that comes later raises SIGCHLD again. CBOX_NO_SPIN=1 turns it off.
 */
#define REAP_SPIN_TRIES  64
#define REAP_SPIN_EVENTS 64

/*
 * The stops and exits waiting to be taken are taken all at once, then handled in turn: a
 * waitpid(-1) reports the newest tracee first (the kernel adds each at the head of the tracer's
 * list), so taking one, handling it and asking again served a task that kept trapping before
 * every older one. Under ptrace a child of two threads opening files in a loop starved its
 * parent: a kill and the wait4 after it took 25 s (cbox-test-guest stop-hold 1). Knowing that
 * none is left costs a waitpid that finds nothing, which one task trapping alone paid at each
 * call (a trapped stat under ptrace 27.9 against 26.8 us): so only every REAP_FAIR_EVERY-th
 * round drains, the others take one, and an older task waits at most that many rounds.
 */
#define REAP_BATCH      64
#define REAP_FAIR_EVERY 4

static void reap(struct cbox_sentry *s, bool spin)
{
	static unsigned round;
	unsigned caught = 0;
	struct cbox_spin sp = {0};
	for (;;) {
		struct reaped batch[REAP_BATCH];
		size_t n = 0, want = ++round % REAP_FAIR_EVERY ? 1 : REAP_BATCH;
		while (n < want) {
			int status;
			pid_t tid = waitpid(-1, &status, __WALL | WNOHANG);
			if (tid <= 0)
				break;
			batch[n].tid = tid;
			batch[n++].status = status;
		}
		if (n == 0 && spin && s->init_status < 0 && caught < REAP_SPIN_EVENTS &&
		    cbox_spin_again(&sp, REAP_SPIN_TRIES))
			continue;
		if (n == 0)
			return;
		if (sp.tries) {
			caught += (unsigned)n;
			sp = (struct cbox_spin){0};
		}
		for (size_t i = 0; i < n; i++) {
			unhandled = batch + i + 1;
			unhandled_n = n - i - 1;
			if (WIFEXITED(batch[i].status) || WIFSIGNALED(batch[i].status))
				on_task_exit(s, batch[i].tid, batch[i].status);
			else if (WIFSTOPPED(batch[i].status))
				handle_stop(s, batch[i].tid, batch[i].status);
		}
		unhandled = NULL;
		unhandled_n = 0;
	}
}

int cbox_tracer_loop(struct cbox_sentry *s)
{
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		return -errno;
	bool spin = s->platform->ops->trap_action == SECCOMP_RET_TRACE && cbox_spin_allowed();
	reap(s, false); /* events that arrived before the signalfd existed */
	/* Under a tiny init the sandbox ends once the program and every other guest task, each
	 * traced and so reported here, are gone. The init itself is not waited for: it runs no
	 * guest code and holds nothing of the guest's, and its own exit (tearing down its copy of
	 * the sentry's memory, ~0.5 ms on this VM) followed the last task's and delayed the
	 * exit status. The sentry's own exit, as its pid namespace's init, reaps it. */
	while (s->init_status < 0 ||
	       (s->tiny_init.tid > 0 && !s->tiny_init_exited && s->ntasks > 0)) {
		/* The signalfd, the listeners (seccomp), `cbox exec`, then what deferred answers
		 * wait for. */
		struct pollfd pf[1 + CBOX_PLATFORM_MAX_LISTENERS + 1 + CBOX_EXEC_MAX_SESSIONS + 64];
		size_t nl = s->platform->nlisteners, n = 0;
		/* During a pause no new trapped call is taken (exec_ctl.c says why); a
		 * listener's hang-up is still seen. */
		short lev = cbox_exec_ctl_quiet(s) ? 0 : POLLIN;
		pf[n++] = (struct pollfd){.fd = sfd, .events = POLLIN};
		for (size_t i = 0; i < nl; i++)
			pf[n++] = (struct pollfd){.fd = s->platform->listeners[i], .events = lev};
		size_t ne = cbox_exec_ctl_pollfds(s, pf + n, 1 + CBOX_EXEC_MAX_SESSIONS);
		int timeout;
		size_t nd = cbox_defer_pollfds(s, pf + n + ne, 64, &timeout);
		int r = poll(pf, n + ne + nd, timeout);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (s->deferred)
			cbox_defer_run(s, pf + n + ne, nd);
		if (ne)
			cbox_exec_ctl_run(s, pf + n, ne);
		if (pf[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == sizeof(si))
				;
			reap(s, spin);
		}
		bool all_gone = false;
		for (size_t i = 1; i <= nl; i++) {
			/* (A pause that began in this round takes effect at once.) */
			if ((pf[i].revents & POLLIN) && !cbox_exec_ctl_quiet(s)) {
				struct cbox_trap trap;
				int rr = s->platform->ops->recv(s->platform, pf[i].fd, &trap);
				if (rr == 0)
					cbox_dispatch(s, &trap);
				else if (rr != -ENOENT && rr != -EINTR)
					cbox_warn("receiving a trapped syscall: %s", strerror(-rr));
			} else if (pf[i].revents & (POLLHUP | POLLERR)) {
				/* Every task under that filter is gone. */
				if (s->ntasks == 0)
					all_gone = true;
				else
					s->platform->ops->drop_listener(s->platform, pf[i].fd);
			}
		}
		if (all_gone)
			break;
	}
	close(sfd);
	return 0;
}
