#pragma once
/* Shared by the two platforms: answering and injecting at a ptrace stop. */
#include <fcntl.h>
#include <sys/user.h>

#include "cbox/platform.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* a pidfd of one thread (linux/pidfd.h, Linux 6.9) */
#endif

/* At a ptrace stop (PTRACE_EVENT_SECCOMP): skip the call and make it return ret; resume. */
int cbox_ptrace_reply(struct cbox_trap *t, int64_t ret);
/* At a ptrace stop: let the call run as it is; resume. */
int cbox_ptrace_cont(struct cbox_trap *t);
/* Install hostfd by an injected recvmsg on CBOX_PTRACE_INSTALL_FD (see ptrace_install.c). */
int cbox_ptrace_install(struct cbox_platform *p, struct cbox_trap *t, int hostfd, bool cloexec);

/* The injection primitives of ptrace.c, for the install channel (ptrace_install.c). Run
 * nr(a...) in t at its trapped call's stop (*at_exit: the task already sits at an exit stop,
 * which the call then leaves from user mode; set once it ran), or in tid at a stop outside any
 * call (regs its registers; a SIGSTOP met on the way in *pending): the call's result or -errno;
 * a task running another call than the injected one is killed (-ESRCH). */
int64_t cbox_ptrace_inject(struct cbox_trap *t, bool *at_exit, long nr, const uint64_t a[6]);
int64_t cbox_ptrace_run_in_user(pid_t tid, const struct user_regs_struct *regs, long nr,
                                const uint64_t a[6], int *pending);
/* Block every signal of stopped task tid while the sentry runs calls in it (the mask before in
 * *saved; false when it could not), and put the mask back. */
bool cbox_ptrace_hold_signals(pid_t tid, uint64_t *saved);
void cbox_ptrace_release_signals(pid_t tid, uint64_t saved);
/* The thread group of task tid (/proc/TID/status), or -1. */
pid_t cbox_ptrace_tgid_of(pid_t tid);
