/*
 * ptrace between guest tasks, emulated. The sentry is the host tracer of every guest task (that
 * is how it sees their forks, execs and signals), and a task has only one tracer, so a guest's
 * ptrace can never reach the host. Instead the sentry keeps, for each guest task another one
 * traces, who traces it and the stop it holds it in: it stops the tracee with PTRACE_INTERRUPT
 * (its own request, as the host tracer), keeps it at that stop - or at a signal's delivery stop -
 * instead of resuming it, shows the stop to the tracer's waits, and resumes it at the tracer's
 * CONT or DETACH, or when the tracer goes. The requests themselves, and what a tracer may read
 * of a held tracee, are in syscalls/sys_ptrace.c.
 *
 * Security: a held task is one the tracer was allowed to trace (Linux's permission check, made
 * by sys_ptrace.c on the ids the sentry keeps); holding it gives the tracer nothing the sentry's
 * own tracing depends on. The sentry stays the host tracer throughout: a tracee's forks, execs
 * and trapped calls still reach it, and a held task still dies of SIGKILL.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cbox/log.h"
#include "internal.h"

size_t cbox_ptrace_emu_count(const struct cbox_sentry *s)
{
	return s->pt_tracees;
}

void cbox_ptrace_emu_attach(struct cbox_sentry *s, struct cbox_task *t, struct cbox_task *tracer,
                            bool seized, bool exitkill)
{
	t->pt = (struct cbox_ptrace_emu){.tracer = tracer->tid,
	                                 .tracer_tgid = tracer->tg ? tracer->tg->host_tgid : 0,
	                                 .seized = seized,
	                                 .exitkill = exitkill};
	s->pt_tracees++;
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

/* The syscall host task tid is in (its /proc/TID/syscall), or -1. */
static long syscall_of(pid_t tid)
{
	char path[64], buf[64];
	snprintf(path, sizeof(path), "/proc/%d/syscall", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
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

static void hold(struct cbox_sentry *s, struct cbox_task *t, int code, bool signal_stop,
                 bool group_stop)
{
	t->pt.held = true;
	t->pt.signal_stop = signal_stop;
	t->pt.group_stop = group_stop;
	t->pt.code = code;
	t->pt.reported = false;
	cbox_defer_kick(s); /* a wait of the tracer may be waiting for it */
	wake_host_waits(s, t->pt.tracer_tgid);
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

void cbox_ptrace_emu_resume(struct cbox_sentry *s, struct cbox_task *t, int sig)
{
	(void)s;
	if (!t->pt.held)
		return;
	t->pt.held = false;
	int r;
	if (t->pt.signal_stop) {
		/* At a signal's delivery stop the host tracer chooses the signal delivered: the
		 * tracer's (0 suppresses it), as on Linux. */
		r = (int)ptrace(PTRACE_CONT, t->tid, 0, sig);
	} else {
		/* An event stop delivers nothing: a signal the tracer passes is sent, and its
		 * delivery stop (still traced) let through. */
		if (sig > 0) {
			if (t->pt.tracer)
				t->pt.pass_sig = sig;
			syscall(SYS_tgkill, t->tg ? t->tg->host_tgid : t->tid, t->tid, sig);
		}
		r = (int)ptrace(t->pt.group_stop ? PTRACE_LISTEN : PTRACE_CONT, t->tid, 0, 0);
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
	if (held)
		cbox_ptrace_emu_resume(s, t, sig);
	t->pt = (struct cbox_ptrace_emu){0};
	cbox_defer_kick(s);
}

void cbox_ptrace_emu_forget(struct cbox_sentry *s, struct cbox_task *t)
{
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
