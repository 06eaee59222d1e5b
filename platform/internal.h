#pragma once
/* Shared by the two platforms: answering and injecting at a ptrace stop. */
#include "cbox/platform.h"

/* At a ptrace stop (PTRACE_EVENT_SECCOMP): skip the call and make it return ret; resume. */
int cbox_ptrace_reply(struct cbox_trap *t, int64_t ret);
/* At a ptrace stop: let the call run as it is; resume. */
int cbox_ptrace_cont(struct cbox_trap *t);
/* Install hostfd by an injected recvmsg on CBOX_PTRACE_INSTALL_FD (see ptrace.c). */
int cbox_ptrace_install(struct cbox_platform *p, struct cbox_trap *t, int hostfd, bool cloexec);
