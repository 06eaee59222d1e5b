/*
 * ptrace between guest tasks, emulated. The sentry is the host tracer of every guest task (that
 * is how it sees their forks, execs and signals), and a task has only one tracer, so a guest's
 * ptrace can never reach the host. Instead the sentry keeps, for each guest task another one
 * traces, who traces it and the stop it holds it in, and shows that stop to the tracer's waits
 * (and sends it a SIGCHLD, as Linux's stop notice): a signal's delivery stop; its own
 * PTRACE_INTERRUPT's stop (ATTACH, INTERRUPT, a new task's first stop); the events the tracer
 * asked for (fork, vfork, clone, exec, exit, vfork-done: the host reports all but exec's to the
 * sentry, which passes them on); the host's syscall-entry and -exit stops when the tracer
 * resumed with PTRACE_SYSCALL; a single step's SIGTRAP. It resumes the tracee at the tracer's
 * CONT, SYSCALL, SINGLESTEP, LISTEN or DETACH, or when the tracer goes, and every later resume
 * of its own (after an answered call, an event) goes on the tracer's way. An exec runs the
 * sentry's loader first, whose calls are the sentry's: the exec's stops are made once the
 * loader has mapped the program and the task stands at its entry (exec.c). The requests
 * themselves, and what a tracer may read or change of a held tracee, are in
 * syscalls/sys_ptrace.c.
 *
 * Security: a held task is one the tracer was allowed to trace (Linux's permission check, made
 * by sys_ptrace.c on the ids the sentry keeps); holding it gives the tracer nothing the sentry's
 * own tracing depends on. The sentry stays the host tracer throughout: a tracee's forks, execs
 * and trapped calls still reach it, and a held task still dies of SIGKILL. A tracer's changes
 * (registers, memory, a syscall number at its entry stop) are the tracee's own to make, and the
 * guest filter judges every call after them.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cbox/log.h"
#include "internal.h"

size_t cbox_ptrace_emu_count(const struct cbox_sentry *s)
{
	return s->pt_tracees + (s->pt_zombies != NULL); /* (exits still owed count too) */
}

void cbox_ptrace_emu_attach(struct cbox_sentry *s, struct cbox_task *t, struct cbox_task *tracer,
                            bool seized, bool exitkill)
{
	t->pt = (struct cbox_ptrace_emu){.tracer = tracer->tid,
	                                 .tracer_tgid = tracer->tg ? tracer->tg->host_tgid : 0,
	                                 .seized = seized,
	                                 .exitkill = exitkill,
	                                 .options = exitkill ? PTRACE_O_EXITKILL : 0,
	                                 .sys_nr = -1};
	s->pt_tracees++;
}

int cbox_ptrace_emu_resume_req(const struct cbox_task *t)
{
	/* The loader's calls between an exec and the program are the sentry's: no stops there. */
	if (!t->pt.tracer || t->pt.in_exec || !t->pt.resume_req)
		return PTRACE_CONT;
	return t->pt.resume_req;
}

int cbox_ptrace_emu_interrupt(struct cbox_sentry *s, struct cbox_task *t, int code)
{
	(void)s;
	if (t->pt.held || t->pt.stop_wanted)
		return 0; /* stopped, or about to be */
	t->pt.stop_wanted = true;
	t->pt.want_code = code;
	/* A task the sentry has not started yet stops at its start (tracer.c). */
	if (!t->seen_first_stop || t->clone3_child)
		return 0;
	if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0 && errno != ESRCH) {
		int e = errno;
		t->pt.stop_wanted = false;
		cbox_warn("stopping task %d for its tracer: %s", t->tid, strerror(e));
		return -e;
	}
	return 0;
}

/*
 * Linux clears a pending PTRACE_INTERRUPT at any ptrace stop the task enters first ("any trap
 * clears pending STOP trap"), and every trapped call on the ptrace platform, and every
 * execve, is such a stop of the sentry's: a tracee making one just as its tracer attached lost
 * the stop its tracer waited for, which hung the tracer (1 run in ~50 of the ptrace compat cases
 * under --strict). So each time the sentry lets a task go on from a stop of its own while the
 * tracer's stop is still owed, it asks again: an interrupt still pending is not doubled.
 */
void cbox_ptrace_emu_rearm(struct cbox_task *t)
{
	if (t->pt.stop_wanted && t->seen_first_stop && !t->clone3_child)
		ptrace(PTRACE_INTERRUPT, t->tid, 0, 0);
}

/* The syscall host task tid is in (its /proc/TID/syscall), or -1. */
static long syscall_of(pid_t tid)
{
	char path[64], buf[64];
	snprintf(path, sizeof(path), "/proc/%d/syscall", tid);
	if (cbox_proc_read(path, buf, sizeof(buf)) <= 0)
		return -1;
	char *end;
	long nr = strtol(buf, &end, 10);
	return end == buf ? -1 : nr;
}

/*
 * A wait the tracer's process began before anything was traced went on to the host (a TRACEME
 * child's parent waits before the child asks), where it cannot see the stop the sentry now
 * holds. Such a wait is interrupted by the sentry's own PTRACE_INTERRUPT, which the guest does
 * not see: the call restarts, and reaches the sentry this time. Waits the sentry already keeps
 * (deferred) are woken by the kick.
 */
static void wake_host_waits(struct cbox_sentry *s, pid_t tgid)
{
	for (size_t h = 0; h < CBOX_TASK_HASH; h++)
		for (struct cbox_task *x = s->tasks[h]; x; x = x->next_in_hash) {
			if (!x->tg || x->tg->host_tgid != tgid || cbox_defer_has(s, x->tid))
				continue;
			long nr = syscall_of(x->tid);
			if (nr == SYS_wait4 || nr == SYS_waitid)
				ptrace(PTRACE_INTERRUPT, x->tid, 0, 0);
		}
}

/* The host options that make the host report what the tracer asked for beyond the sentry's own
 * (exit and vfork-done events): set while the task is at a host stop, as ptrace requires. */
static void host_options(struct cbox_task *t)
{
	unsigned want =
	    t->pt.tracer ? t->pt.options & (PTRACE_O_TRACEEXIT | PTRACE_O_TRACEVFORKDONE) : 0;
	if (want == t->pt.host_extra)
		return;
	if (ptrace(PTRACE_SETOPTIONS, t->tid, 0, (unsigned long)(CBOX_PTRACE_OPTIONS | want)) == 0)
		t->pt.host_extra = want;
}

/* A stop code of the sentry's own making for an exec's syscall-exit stop
 * (cbox_ptrace_emu_exec_done). */
#define CODE_EXEC_SYSCALL_EXIT (-1)

static void hold(struct cbox_sentry *s, struct cbox_task *t, int code, bool signal_stop,
                 bool group_stop)
{
	/* A seizer's PTRACE_INTERRUPT is answered by any stop, as Linux's is; ATTACH's SIGSTOP is
	 * a signal of its own, which still comes. */
	if (t->pt.seized)
		t->pt.stop_wanted = false;
	t->pt.held = true;
	t->pt.signal_stop = signal_stop;
	t->pt.group_stop = group_stop;
	t->pt.syscall_stop = false;
	t->pt.code = code;
	if (code == CODE_EXEC_SYSCALL_EXIT) {
		/* execve's return, as the tracer of a PTRACE_SYSCALL'd task sees it after the
		 * exec: at the new program's entry, 0 returned. */
		t->pt.code = SIGTRAP | ((t->pt.options & PTRACE_O_TRACESYSGOOD) ? 0x80 : 0);
		t->pt.syscall_stop = true;
		t->pt.sys_exit = true;
		t->pt.sys_made = true;
	}
	t->pt.reported = false;
	if (t->pt.exec_stops) {
		/* The exec's first stop: the program's own calls are the tracer's again. */
		t->pt.exec_stops = false;
		t->pt.in_exec = false;
	}
	host_options(t);
	cbox_defer_kick(s); /* a wait of the tracer may be waiting for it */
	wake_host_waits(s, t->pt.tracer_tgid);
	/* Linux tells the tracer of every ptrace stop with a SIGCHLD (CLD_TRAPPED), which the host
	 * sends to the sentry, the host tracer: gdb waits for it in sigsuspend. The sentry's has
	 * no siginfo of the kernel's (SI_USER, from outside the guest's pid namespace). */
	if (t->pt.tracer_tgid > 0)
		kill(t->pt.tracer_tgid, SIGCHLD);
}

bool cbox_ptrace_emu_event(struct cbox_sentry *s, struct cbox_task *t, int event, unsigned long msg)
{
	if (!t->pt.tracer || t->pt.held || !(t->pt.options & (1u << event)))
		return false;
	t->pt.msg = msg;
	hold(s, t, SIGTRAP | (event << 8), false, false);
	return true;
}

bool cbox_ptrace_emu_syscall_stop(struct cbox_sentry *s, struct cbox_task *t, bool exit_stop,
                                  long nr, uint64_t ip)
{
	if (!t->pt.tracer || t->pt.held || t->pt.in_exec || t->pt.resume_req != PTRACE_SYSCALL)
		return false;
	if (!exit_stop && t->pt.skip_entry_ip && t->pt.skip_entry_ip == ip) {
		t->pt.skip_entry_ip = 0; /* the sentry's re-run of a call already shown */
		return false;
	}
	hold(s, t, SIGTRAP | ((t->pt.options & PTRACE_O_TRACESYSGOOD) ? 0x80 : 0), false, false);
	t->pt.syscall_stop = true;
	t->pt.sys_exit = exit_stop;
	t->pt.sys_made = false;
	if (!exit_stop)
		t->pt.sys_nr = nr;
	return true;
}

void cbox_ptrace_emu_hold_exit(struct cbox_sentry *s, struct cbox_task *t, long nr)
{
	if (!t->pt.tracer || t->pt.held) {
		/* (the tracer went meanwhile: on, as the task's own resume would have) */
		ptrace(PTRACE_CONT, t->tid, 0, 0);
		return;
	}
	hold(s, t, SIGTRAP | ((t->pt.options & PTRACE_O_TRACESYSGOOD) ? 0x80 : 0), false, false);
	t->pt.syscall_stop = true;
	t->pt.sys_exit = true;
	t->pt.sys_made = false;
	t->pt.sys_nr = nr;
}

/*
 * The stops an exec owes its tracer, made once the loader has put the program in place and the
 * task stands at its entry with the registers a fresh exec gives (exec.c), as Linux makes them in
 * this order: PTRACE_EVENT_EXEC (with PTRACE_O_TRACEEXEC), the syscall-exit stop of the execve
 * (under PTRACE_SYSCALL), and for a tracee attached without PTRACE_SEIZE and without the option,
 * a SIGTRAP, a real signal the tracer may suppress or deliver. The first is made now (an
 * interrupt, or the signal), the others as the tracer resumes from each.
 */
void cbox_ptrace_emu_exec_done(struct cbox_sentry *s, struct cbox_task *t)
{
	if (!t->pt.tracer) {
		t->pt.in_exec = false;
		return;
	}
	int n = 0;
	if (t->pt.options & PTRACE_O_TRACEEXEC)
		t->pt.queued[n++] = SIGTRAP | (PTRACE_EVENT_EXEC << 8);
	if (t->pt.resume_req == PTRACE_SYSCALL)
		t->pt.queued[n++] = CODE_EXEC_SYSCALL_EXIT;
	if (!(t->pt.options & PTRACE_O_TRACEEXEC) && !t->pt.seized)
		t->pt.queued[n++] = SIGTRAP;
	t->pt.nqueued = n;
	t->pt.msg = (unsigned long)cbox_task_vpid_of(s, t->tid); /* the former thread's id */
	/* Until the first of them, the task still runs as the sentry's (its start request's
	 * answer resumes it with PTRACE_CONT). */
	t->pt.in_exec = n > 0;
	t->pt.exec_stops = n > 0;
	if (n == 0)
		return;
	int first = t->pt.queued[0];
	memmove(t->pt.queued, t->pt.queued + 1, sizeof(t->pt.queued) - sizeof(t->pt.queued[0]));
	t->pt.nqueued--;
	if (first == SIGTRAP)
		syscall(SYS_tgkill, t->tg ? t->tg->host_tgid : t->tid, t->tid, SIGTRAP);
	else
		cbox_ptrace_emu_interrupt(s, t, first);
}

bool cbox_ptrace_emu_stop(struct cbox_sentry *s, struct cbox_task *t, int sig, bool event_stop)
{
	if (!t->pt.tracer || t->pt.held)
		return false;
	if (event_stop) {
		if (!t->pt.stop_wanted)
			return false;
		/* The interrupt's stop (SIGTRAP), or a group-stop the interrupt found the task in,
		 * reported again with its stop signal: that one is resumed with PTRACE_LISTEN, so
		 * that the task stays stopped for its job control. */
		t->pt.stop_wanted = false;
		int code = t->pt.want_code;
		if (sig != SIGTRAP && t->pt.seized)
			code = sig | (PTRACE_EVENT_STOP << 8); /* as Linux reports it to a seizer */
		hold(s, t, code, false, sig != SIGTRAP);
		return true;
	}
	if (t->pt.pass_sig == sig) {
		t->pt.pass_sig = 0; /* injected by the tracer at an event stop: delivered as is */
		return false;
	}
	hold(s, t, sig, true, false);
	return true;
}

void cbox_ptrace_emu_resume(struct cbox_sentry *s, struct cbox_task *t, int req, int sig)
{
	if (!t->pt.held)
		return;
	t->pt.held = false;
	t->pt.syscall_stop = false;
	t->pt.skip_entry_ip = 0;
	t->pt.resume_req = req == PTRACE_CONT ? 0 : req;
	if (t->pt.nqueued && t->pt.tracer) {
		/* An exec's next stop, made without the task running (see exec_done). */
		int next = t->pt.queued[0];
		memmove(t->pt.queued, t->pt.queued + 1,
		        sizeof(t->pt.queued) - sizeof(t->pt.queued[0]));
		t->pt.nqueued--;
		if (next == CODE_EXEC_SYSCALL_EXIT && req != PTRACE_SYSCALL)
			next =
			    t->pt.nqueued ? t->pt.queued[--t->pt.nqueued] : 0; /* (not asked now) */
		if (next == SIGTRAP)
			syscall(SYS_tgkill, t->tg ? t->tg->host_tgid : t->tid, t->tid, SIGTRAP);
		else if (next) {
			hold(s, t, next, false, false);
			return;
		}
	}
	enum __ptrace_request how = (enum __ptrace_request)cbox_ptrace_emu_resume_req(t);
	cbox_ptrace_emu_rearm(t);
	int r;
	if (t->pt.signal_stop) {
		/* At a signal's delivery stop the host tracer chooses the signal delivered: the
		 * tracer's (0 suppresses it), as on Linux. */
		r = (int)ptrace(how, t->tid, 0, sig);
	} else {
		/* Any other stop delivers nothing: a signal the tracer passes is sent, and its
		 * delivery stop (still traced) let through. */
		if (sig > 0) {
			if (t->pt.tracer)
				t->pt.pass_sig = sig;
			syscall(SYS_tgkill, t->tg ? t->tg->host_tgid : t->tid, t->tid, sig);
		}
		r = (int)ptrace(t->pt.group_stop ? PTRACE_LISTEN : how, t->tid, 0, 0);
	}
	if (r < 0 && errno != ESRCH)
		cbox_warn("resuming task %d for its tracer: %s", t->tid, strerror(errno));
}

void cbox_ptrace_emu_detach(struct cbox_sentry *s, struct cbox_task *t, int sig)
{
	if (!t->pt.tracer)
		return;
	bool held = t->pt.held;
	/* A stop still on its way (stop_wanted) arrives untraced: tracer.c resumes it then. */
	t->pt.tracer = 0;
	t->pt.stop_wanted = false;
	t->pt.pass_sig = 0;
	s->pt_tracees--;
	t->pt.resume_req = 0;
	t->pt.nqueued = 0;
	t->pt.in_exec = false;
	if (held)
		cbox_ptrace_emu_resume(s, t, PTRACE_CONT, sig);
	t->pt = (struct cbox_ptrace_emu){.host_extra = t->pt.host_extra, .sys_nr = -1};
	cbox_defer_kick(s);
}

static void drop_zombies(struct cbox_sentry *s, pid_t tracer);

void cbox_ptrace_emu_forget(struct cbox_sentry *s, struct cbox_task *t)
{
	if (s->pt_zombies)
		drop_zombies(s, t->tid);
	if (!s->pt_tracees)
		return;
	if (t->pt.tracer) {
		t->pt.held = false; /* gone: nothing to resume */
		cbox_ptrace_emu_detach(s, t, 0);
	}
	/* A tracer that exits lets its tracees go (Linux's exit_ptrace), or kills those it
	 * seized with PTRACE_O_EXITKILL. */
	for (size_t h = 0; h < CBOX_TASK_HASH && s->pt_tracees; h++)
		for (struct cbox_task *x = s->tasks[h]; x; x = x->next_in_hash) {
			if (x->pt.tracer != t->tid || x == t)
				continue;
			if (x->pt.exitkill)
				kill(x->tid, SIGKILL);
			cbox_ptrace_emu_detach(s, x, 0);
		}
}

struct cbox_task *cbox_ptrace_emu_waitable(struct cbox_sentry *s, struct cbox_task *caller,
                                           pid_t pid, bool nothread, bool *any)
{
	*any = false;
	if (!s->pt_tracees || (pid <= 0 && pid != -1))
		return NULL;
	pid_t tgid = caller->tg ? caller->tg->host_tgid : caller->tid;
	struct cbox_task *found = NULL;
	for (size_t h = 0; h < CBOX_TASK_HASH; h++)
		for (struct cbox_task *x = s->tasks[h]; x; x = x->next_in_hash) {
			if (!x->pt.tracer ||
			    (nothread ? x->pt.tracer != caller->tid : x->pt.tracer_tgid != tgid))
				continue;
			if (pid > 0) {
				cbox_task_vpid(s, x); /* fills x->vtid */
				if (x->vtid != pid)
					continue;
			}
			*any = true;
			if (!found && x->pt.held && !x->pt.reported)
				found = x;
		}
	if (found)
		cbox_task_vpid(s, found); /* fills found->vtid */
	return found;
}

/* An exit owed to a tracer that is not the tracee's parent (ptrace's own exit report). */
struct cbox_pt_zombie {
	struct cbox_pt_zombie *next;
	pid_t tracer, tracer_tgid, vtid;
	int status;
};

/* The thread group of task tid's parent process, or 0. */
static pid_t parent_tgid(struct cbox_sentry *s, struct cbox_task *t)
{
	struct cbox_task *p = t->parent_tid ? cbox_task_find(s, t->parent_tid) : NULL;
	if (p && p->tg)
		return p->tg->host_tgid;
	struct cbox_task_stat st;
	if (cbox_task_stat(t->tid, &st) == 0 && (p = cbox_task_find(s, st.ppid)) && p->tg)
		return p->tg->host_tgid;
	return 0;
}

void cbox_ptrace_emu_exited(struct cbox_sentry *s, struct cbox_task *t, int status)
{
	if (!t->pt.tracer)
		return;
	/* The host reports a process's exit to its parent: a tracee that is the tracer's own
	 * child is the host's. A thread's exit, or another process's, reaches nobody but the
	 * sentry: Linux reports it to the tracer (its wait with __WALL), and so does the
	 * sentry. */
	bool leader = t->tg && t->tg->host_tgid == t->tid;
	if (leader && parent_tgid(s, t) == t->pt.tracer_tgid)
		return;
	struct cbox_pt_zombie *z = malloc(sizeof(*z));
	if (!z)
		return; /* (the tracer misses one exit report) */
	*z = (struct cbox_pt_zombie){.next = s->pt_zombies,
	                             .tracer = t->pt.tracer,
	                             .tracer_tgid = t->pt.tracer_tgid,
	                             .vtid = t->vtid ? t->vtid : cbox_task_vpid_of(s, t->tid),
	                             .status = status};
	s->pt_zombies = z;
	cbox_defer_kick(s);
	wake_host_waits(s, z->tracer_tgid);
	kill(z->tracer_tgid, SIGCHLD);
}

bool cbox_ptrace_emu_zombie(struct cbox_sentry *s, struct cbox_task *caller, pid_t pid,
                            bool nothread, bool peek, pid_t *vtid, int *status)
{
	pid_t tgid = caller->tg ? caller->tg->host_tgid : caller->tid;
	/* The oldest first: the list is newest first. */
	struct cbox_pt_zombie **found = NULL;
	for (struct cbox_pt_zombie **zp = &s->pt_zombies; *zp; zp = &(*zp)->next) {
		struct cbox_pt_zombie *z = *zp;
		if ((nothread ? z->tracer != caller->tid : z->tracer_tgid != tgid) ||
		    (pid > 0 && z->vtid != pid) || (pid <= 0 && pid != -1))
			continue;
		found = zp;
	}
	if (!found)
		return false;
	struct cbox_pt_zombie *z = *found;
	*vtid = z->vtid;
	*status = z->status;
	if (!peek) {
		*found = z->next;
		free(z);
	}
	return true;
}

/* A tracer's exit drops what it was owed. */
static void drop_zombies(struct cbox_sentry *s, pid_t tracer)
{
	for (struct cbox_pt_zombie **zp = &s->pt_zombies; *zp;) {
		struct cbox_pt_zombie *z = *zp;
		if (z->tracer == tracer) {
			*zp = z->next;
			free(z);
		} else {
			zp = &z->next;
		}
	}
}
