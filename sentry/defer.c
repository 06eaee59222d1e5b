/*
 * Syscalls answered later. Linux blocks some calls until another process acts (a FIFO's open
 * until its other end opens). The sentry is one thread serving every task, so it never blocks
 * itself: the task stays blocked where it is (in its seccomp notification, or at its ptrace
 * stop), the sentry keeps the trap, polls what the answer depends on from its main loop, and
 * answers when the step says so.
 *
 * A signal must end the wait as Linux's would, but nothing tells the sentry of it: the task waits
 * killably in its notification (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, and a traced task's
 * fatal signal is not made a SIGKILL), or stays at its ptrace stop, so `timeout 1 cat fifo`
 * waited for the FIFO's writer forever, SIGTERM or not. So every SIG_CHECK_MS the sentry looks
 * at each waiting task's pending signals, and one it does not block, sent to the thread or to
 * its process when this thread is the one to take it (signal_ends_wait), ends the wait: the call
 * returns -ERESTARTSYS, on which the kernel does what Linux does (runs the handler, then
 * restarts the call under SA_RESTART or when nothing handles the signal, else EINTR; a fatal
 * signal ends the process). At a ptrace stop the sentry skips the call, so its -ERESTARTSYS
 * is made the call's own at its syscall-exit stop (platform/ptrace.c, cbox_ptrace_reply), with
 * the same outcome; only under a guest tracer that steps through the task's calls is the task
 * put back onto its syscall instruction instead, to make the call again after the signal (always
 * restarted, where Linux gives a handler without SA_RESTART EINTR).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <time.h>
#include <unistd.h>

#include "cbox/log.h"
#include "cbox/syscalls.h"
#include "internal.h"

struct cbox_deferred {
	struct cbox_deferred *next;
	struct cbox_trap trap;
	int fd;
	short events;
	int retry_ms;
	uint64_t due_ns;     /* next retry */
	uint64_t sig_due_ns; /* next look at the task's pending signals */
	bool kicked;         /* cbox_defer_kick: step again at once */
	int64_t (*step)(struct cbox_sysctx *c, void *arg);
	void (*drop)(void *arg);
	void *arg;
};

#define SIG_CHECK_MS 50

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

int64_t cbox_sys_defer(struct cbox_sysctx *c, int fd, short events, int retry_ms,
                       int64_t (*step)(struct cbox_sysctx *c, void *arg), void (*drop)(void *arg),
                       void *arg)
{
	struct cbox_deferred *d = calloc(1, sizeof(*d));
	if (!d) {
		drop(arg);
		return -ENOMEM;
	}
	*d = (struct cbox_deferred){.next = c->s->deferred,
	                            .trap = *c->trap,
	                            .fd = fd,
	                            .events = events,
	                            .retry_ms = retry_ms,
	                            .due_ns = now_ns() + (uint64_t)retry_ms * 1000000ULL,
	                            .sig_due_ns = now_ns() + SIG_CHECK_MS * 1000000ULL,
	                            .step = step,
	                            .drop = drop,
	                            .arg = arg};
	c->s->deferred = d;
	return CBOX_SYSRET_DEFER;
}

size_t cbox_defer_pollfds(struct cbox_sentry *s, struct pollfd *pf, size_t n, int *timeout_ms)
{
	size_t k = 0;
	uint64_t now = now_ns();
	*timeout_ms = -1;
	for (struct cbox_deferred *d = s->deferred; d; d = d->next) {
		if (d->kicked)
			*timeout_ms = 0;
		if (d->fd >= 0 && k < n)
			pf[k++] = (struct pollfd){.fd = d->fd, .events = d->events};
		uint64_t due =
		    d->retry_ms > 0 && d->due_ns < d->sig_due_ns ? d->due_ns : d->sig_due_ns;
		int left = due > now ? (int)((due - now) / 1000000ULL) + 1 : 0;
		if (*timeout_ms != 0 && (*timeout_ms < 0 || left < *timeout_ms))
			*timeout_ms = left;
	}
	return k;
}

bool cbox_defer_has(const struct cbox_sentry *s, pid_t tid)
{
	for (const struct cbox_deferred *d = s->deferred; d; d = d->next)
		if (d->trap.tid == tid)
			return true;
	return false;
}

void cbox_defer_kick(struct cbox_sentry *s)
{
	for (struct cbox_deferred *d = s->deferred; d; d = d->next)
		d->kicked = true;
}

static bool ready(const struct cbox_deferred *d, const struct pollfd *pf, size_t n, uint64_t now)
{
	if (d->kicked || (d->retry_ms > 0 && now >= d->due_ns))
		return true;
	for (size_t i = 0; d->fd >= 0 && i < n; i++)
		if (pf[i].fd == d->fd && (pf[i].revents & (d->events | POLLHUP | POLLERR)))
			return true;
	return false;
}

/* What a /proc status says of a task's signals: the thread's own pending ones, its process's
 * (ShdPnd), the ones it blocks, ignores (SigIgn) and catches (SigCgt), and its state letter. */
struct sigstate {
	uint64_t own, shared, blocked, ignored, caught;
	char state;
};

static bool read_sigstate(pid_t tid, struct sigstate *st)
{
	char path[64], buf[2048];
	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	if (cbox_proc_read(path, buf, sizeof(buf)) <= 0)
		return false;
	const char *p = strstr(buf, "\nSigPnd:"), *q = strstr(buf, "\nShdPnd:");
	const char *b = strstr(buf, "\nSigBlk:"), *s = strstr(buf, "\nState:");
	const char *i = strstr(buf, "\nSigIgn:"), *c = strstr(buf, "\nSigCgt:");
	if (!p || !q || !b || !s || !i || !c)
		return false;
	st->own = strtoull(p + 8, NULL, 16);
	st->shared = strtoull(q + 8, NULL, 16);
	st->blocked = strtoull(b + 8, NULL, 16);
	st->ignored = strtoull(i + 8, NULL, 16);
	st->caught = strtoull(c + 8, NULL, 16);
	s += 7;
	while (*s == ' ' || *s == '\t')
		s++;
	st->state = *s;
	return true;
}

/* Whether a thread in state st could take signal bit: not gone, not blocking it. */
static bool may_take(const struct sigstate *st, uint64_t bit)
{
	return st->state != 'Z' && st->state != 'X' && !(st->blocked & bit);
}

struct pick {
	const struct cbox_thread_group *tg;
	uint64_t bit;
	pid_t best;
};

static bool consider(struct cbox_task *t, void *ctx)
{
	struct pick *p = ctx;
	struct sigstate st;
	if (t->tg == p->tg && t->tid != p->tg->host_tgid && (p->best == 0 || t->tid < p->best) &&
	    read_sigstate(t->tid, &st) && may_take(&st, p->bit))
		p->best = t->tid;
	return true;
}

/*
 * The thread of tg that takes a signal sent to the whole process. Linux picks it when the signal
 * is sent (complete_signal): the main thread unless it blocks the signal or has exited, else the
 * next thread, after the one it picked last, that does not block it; only the picked thread's
 * wait is interrupted, and the others' go on. The sentry cannot see the kernel's last pick: the
 * lowest tid stands in for it. 0: no thread takes it now.
 */
static pid_t taker_of(struct cbox_sentry *s, const struct cbox_thread_group *tg, uint64_t bit)
{
	struct sigstate st;
	if (read_sigstate(tg->host_tgid, &st) && may_take(&st, bit))
		return tg->host_tgid;
	struct pick p = {.tg = tg, .bit = bit};
	cbox_task_each(s, consider, &p);
	return p.best;
}

/*
 * Whether a signal ends the wait of task t: one sent to the thread that it does not block, or
 * one sent to its process that this thread is the one to take (taker_of). Interrupting another
 * thread's wait would be wrong twice over: Linux lets that wait go on, and the kernel, which
 * marked only the taker for the signal, would hand the -ERESTARTSYS answer to the program as an
 * error of its own (errno 512).
 */
static bool signal_ends_wait(struct cbox_sentry *s, const struct cbox_task *t, uint64_t now)
{
	/* The taker found last, for the other waits of the same pass over the kept calls: a
	 * process of many threads waiting at once must not make each pass read every thread's
	 * status once for each of them. */
	static struct {
		const struct cbox_thread_group *tg;
		pid_t taker;
		uint64_t bit, now;
	} last;
	struct sigstate st;
	if (!read_sigstate(t->tid, &st))
		return false;
	/* A signal the task ignores (cbox_signals_ignored) Linux drops as it is sent, and never
	 * wakes a wait; it is queued here only because the sentry traces the task. A child's exit
	 * ended its parent's wait for a FIFO's writer, whose reader fd the sentry then closed,
	 * losing what that child had written: the restarted open waited for a writer forever
	 * (mknodat.fifo_roundtrip under ptrace). Under a guest tracer Linux queues them too, and
	 * they do end the wait. */
	uint64_t ign = t->pt.tracer ? 0 : cbox_signals_ignored(st.caught, st.ignored);
	if (st.own & ~st.blocked & ~ign)
		return true;
	uint64_t shared = st.shared & ~st.blocked & ~ign;
	for (int sig = 1; sig <= 64 && shared && t->tg; sig++) {
		uint64_t bit = 1ULL << (sig - 1);
		if (!(shared & bit))
			continue;
		if (last.tg != t->tg || last.bit != bit || last.now != now) {
			last.tg = t->tg;
			last.bit = bit;
			last.now = now;
			last.taker = taker_of(s, t->tg, bit);
		}
		if (last.taker == t->tid)
			return true;
		shared &= ~bit;
	}
	return false;
}

/* End the wait of c's call for a signal (see above). */
static void interrupt_call(struct cbox_sysctx *c)
{
	struct cbox_trap *t = c->trap;
	/* -ERESTARTSYS as the call's result: in a notification, the kernel returns it; at a
	 * ptrace stop, the platform makes it the call's own (cbox_ptrace_reply). */
	if (!t->ptrace_stop || cbox_ptrace_emu_resume_req(c->task) == PTRACE_CONT) {
		c->task->restart_answered = true;
		c->task->restart_ip = t->ip;
		cbox_dispatch_answer(c, cbox_sys_lookup(t->nr), -CBOX_ERESTARTSYS);
		return;
	}
	/* (a guest tracer stepping through the task's calls: the call is made again) */
	struct user_regs_struct r = t->regs;
	r.rip -= 2; /* back onto the syscall instruction (0f 05), the call's number in rax */
	r.rax = r.orig_rax;
	r.orig_rax = (unsigned long long)-1; /* skipped now */
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &r) == 0)
		ptrace((enum __ptrace_request)cbox_ptrace_emu_resume_req(c->task), t->tid, 0, 0);
}

void cbox_defer_run(struct cbox_sentry *s, const struct pollfd *pf, size_t n)
{
	uint64_t now = now_ns();
	struct cbox_deferred **pp = &s->deferred;
	while (*pp) {
		struct cbox_deferred *d = *pp;
		struct cbox_task *t = cbox_task_find(s, d->trap.tid);
		int64_t r = CBOX_SYSRET_DEFER;
		bool look = now >= d->sig_due_ns;
		if (look)
			d->sig_due_ns = now + SIG_CHECK_MS * 1000000ULL;
		if (!t) {
			r = -EINTR; /* the task is gone: nobody to answer */
		} else if (ready(d, pf, n, now)) {
			d->kicked = false;
			struct cbox_sysctx c = {.s = s, .task = t, .trap = &d->trap};
			/* A signal ended the wait (the seccomp platform withdraws the notification,
			 * and the call, restarted, is a new one): a step must not consume what it
			 * waits for (a tracee's stop) for an answer nobody would receive. */
			if (!s->platform->ops->still_valid(s->platform, &d->trap)) {
				r = -EINTR; /* withdrawn: nobody to answer */
			} else {
				r = d->step(&c, d->arg);
				if (r == CBOX_SYSRET_DEFER)
					d->due_ns = now + (uint64_t)d->retry_ms * 1000000ULL;
				else
					cbox_dispatch_answer(&c, cbox_sys_lookup(d->trap.nr), r);
			}
		}
		/* A signal ends a wait whose answer is not there yet: what it waited for and
		 * came first (a FIFO's writer that wrote and left) is the call's, as on Linux,
		 * where the writer's open had already woken the reader's. */
		if (r == CBOX_SYSRET_DEFER && t && look &&
		    s->platform->ops->still_valid(s->platform, &d->trap) &&
		    signal_ends_wait(s, t, now)) {
			struct cbox_sysctx c = {.s = s, .task = t, .trap = &d->trap};
			interrupt_call(&c);
			r = -EINTR; /* (answered) */
		}
		if (r == CBOX_SYSRET_DEFER) {
			pp = &d->next;
			continue;
		}
		*pp = d->next;
		d->drop(d->arg);
		free(d);
	}
}
