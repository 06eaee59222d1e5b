/*
 * Syscalls answered later. Linux blocks some calls until another process acts (a FIFO's open
 * until its other end opens). The sentry is one thread serving every task, so it never blocks
 * itself: the task stays blocked where it is (in its seccomp notification, or at its ptrace
 * stop), the sentry keeps the trap, polls what the answer depends on from its main loop, and
 * answers when the step says so.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cbox/log.h"
#include "cbox/syscalls.h"
#include "internal.h"

struct cbox_deferred {
	struct cbox_deferred *next;
	struct cbox_trap trap;
	int fd;
	short events;
	int retry_ms;
	uint64_t due_ns; /* next retry */
	bool kicked;     /* cbox_defer_kick: step again at once */
	int64_t (*step)(struct cbox_sysctx *c, void *arg);
	void (*drop)(void *arg);
	void *arg;
};

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
		if (d->retry_ms > 0) {
			int left = d->due_ns > now ? (int)((d->due_ns - now) / 1000000ULL) + 1 : 0;
			if (*timeout_ms != 0 && (*timeout_ms < 0 || left < *timeout_ms))
				*timeout_ms = left;
		}
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

void cbox_defer_run(struct cbox_sentry *s, const struct pollfd *pf, size_t n)
{
	uint64_t now = now_ns();
	struct cbox_deferred **pp = &s->deferred;
	while (*pp) {
		struct cbox_deferred *d = *pp;
		struct cbox_task *t = cbox_task_find(s, d->trap.tid);
		int64_t r = CBOX_SYSRET_DEFER;
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
		if (r == CBOX_SYSRET_DEFER) {
			pp = &d->next;
			continue;
		}
		*pp = d->next;
		d->drop(d->arg);
		free(d);
	}
}
