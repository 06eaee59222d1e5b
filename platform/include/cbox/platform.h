#pragma once
/*
 * A platform traps guest syscalls and lets the sentry act on the stopped task (gVisor's
 * platform.Platform). Two implementations behind one ops table:
 *   seccomp  SECCOMP_RET_USER_NOTIF: answer by value, CONTINUE for checked pass-through, ADDFD to
 *            install fds. execve/execveat and clone3 return SECCOMP_RET_TRACE instead, because a
 *            notification reply cannot rewrite the call; the sentry rewrites it at that ptrace
 *            stop.
 *   ptrace   SECCOMP_RET_TRACE for every trapped call: the sentry answers at the
 * PTRACE_EVENT_SECCOMP stop by skipping the call (orig_rax = -1) and setting rax, lets it run with
 * PTRACE_CONT, and installs fds by injecting a recvmsg on a socket reserved in every task. In both,
 * the sentry is the ptracer of every guest task (PTRACE_SEIZE with EXITKILL and auto-attach on
 * fork, vfork and clone), which is how it learns of new tasks, execs and exits.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>
#include "cbox/compiler.h"
#include "cbox/err.h"

/* One trapped guest syscall in flight. */
struct cbox_trap {
	pid_t tid;         /* host tid, in the sentry's pid namespace */
	int nr;            /* syscall number */
	uint64_t args[6];  /* register arguments */
	uint64_t ip;       /* instruction pointer after the syscall instruction */
	uint64_t notif_id; /* seccomp platform: the notification id; 0 at a ptrace stop */
	int listener;      /* seccomp platform: the listener it came from */
	bool ptrace_stop;  /* the task is at a ptrace stop: regs is valid and may be rewritten */
	bool at_exit;      /* ptrace: injected calls left the task at a syscall-exit stop */
	int resume;        /* ptrace stops: the request that resumes the task (0: PTRACE_CONT) */
	bool hold_exit;    /* set by the platform: left at the call's syscall-exit stop (resume
	                    * PTRACE_SYSCALL), for the sentry to show a guest tracer */
	bool rerun;        /* set by the platform: the call runs again from its entry (resume
	                    * PTRACE_SYSCALL), whose second entry stop is not a guest tracer's */
	int install_sock;  /* ptrace platform: the sentry's end of the install channel of the
	                    * task's fd table, set by the sentry before each install_fd */
	bool sigs_held;    /* ptrace platform: the task's signals are blocked while the sentry
	                    * runs calls in it from user mode; saved_sigmask goes back at the
	                    * answer (platform/ptrace.c, cbox_ptrace_hold_signals) */
	uint64_t saved_sigmask;
	struct user_regs_struct regs;
};

struct cbox_platform;

/* The x86_64 fd reserved in every guest task on the ptrace platform for installing fds
 * (a unix socket whose peer the sentry holds). -1 on platforms that need none. */
#define CBOX_PTRACE_INSTALL_FD 1022

struct cbox_platform_ops {
	const char *name;
	/* BPF return action of the guest filter for a syscall the sentry handles. */
	uint32_t trap_action;
	/* Whether the guest needs CBOX_PTRACE_INSTALL_FD. */
	bool needs_install_fd;
	/* Whether the sentry is woken on the CPU of the task that trapped (seccomp's synchronous
	 * wake-up), so that the gofer may wait for its requests there (cbox_gofer_client_hint_cpu).
	 * A ptrace stop wakes the sentry wherever the scheduler puts it. */
	bool runs_on_guest_cpu;
	/* Whether install_fd takes O_PATH fds. SECCOMP_IOCTL_NOTIF_ADDFD refuses them (the
	 * kernel's fget skips FMODE_PATH files): the sentry installs a stand-in instead
	 * (syscalls/sys_file.c). */
	bool installs_o_path;
	/* Take a seccomp listener (seccomp platform): the guest's first task's, and one per task
	 * started later by `cbox exec` (each installed a filter of its own); the platform owns it.
	 * Platforms that use none close it. -ENOSPC when CBOX_PLATFORM_MAX_LISTENERS are held. */
	int (*add_listener)(struct cbox_platform *p, int listener);
	/* Close a listener whose tasks are all gone (it polled POLLHUP). */
	void (*drop_listener)(struct cbox_platform *p, int listener);
	/* Receive one trapped syscall from listener (one of p->listeners). 0 on success, -ENOENT
	 * when the task died before it could be received (not an error), other -errno on failure.
	 */
	int (*recv)(struct cbox_platform *p, int listener, struct cbox_trap *t);
	/* Answer with a result (>= 0 or -errno); the task resumes. */
	int (*reply)(struct cbox_platform *p, struct cbox_trap *t, int64_t ret);
	/* Let the host run the call as it is (checked pass-through); the task resumes. */
	int (*cont)(struct cbox_platform *p, struct cbox_trap *t);
	/* Install hostfd (borrowed) in the task as the lowest free fd, with O_CLOEXEC when cloexec.
	 * Returns the fd number in the task or -errno. The task stays stopped. */
	int (*install_fd)(struct cbox_platform *p, struct cbox_trap *t, int hostfd, bool cloexec);
	/* Optional: install_fd, and answer the call with the new fd in the same step (the task
	 * resumes). Saves the task one wake-up and sleep. NULL when the platform cannot. */
	int (*install_fd_answer)(struct cbox_platform *p, struct cbox_trap *t, int hostfd,
	                         bool cloexec);
	/* Whether the trapped task still waits for this answer (TOCTOU check after reading guest
	 * memory: the pid could otherwise have been reused). */
	bool (*still_valid)(struct cbox_platform *p, struct cbox_trap *t);
	void (*free)(struct cbox_platform *p);
};

/* Kernel-internal restart codes (include/linux/errno.h): a call's result the kernel's signal
 * code acts on before the caller sees it (never seen by user space itself). */
#define CBOX_ERESTARTSYS           512
#define CBOX_ERESTARTNOINTR        513
#define CBOX_ERESTARTNOHAND        514
#define CBOX_ERESTART_RESTARTBLOCK 516

#define CBOX_PLATFORM_MAX_LISTENERS 64

struct cbox_platform {
	const struct cbox_platform_ops *ops;
	int listeners[CBOX_PLATFORM_MAX_LISTENERS]; /* seccomp platform: the fds to poll */
	size_t nlisteners;
};

/* The platforms by name ("seccomp", "ptrace"); NULL when unknown. */
CBOX_API const struct cbox_platform_ops *cbox_platform_find(const char *name);
/* Create a platform instance. */
CBOX_API struct cbox_platform *cbox_platform_new(const struct cbox_platform_ops *ops);
CBOX_API void cbox_platform_free(struct cbox_platform *p);

/*
 * The guest filter. Every syscall of the table's kind FAST is allowed (unless strict), execve,
 * execveat and clone3 return SECCOMP_RET_TRACE, everything else returns ops->trap_action.
 * Non-x86_64 calls (i386 int 0x80, x32) kill the task: the sentry emulates one ABI. Fills *prog
 * (malloc'd array owned by the caller) and *len. Returns 0 or -ENOMEM.
 */
struct sock_filter;
CBOX_API int cbox_platform_build_filter(const struct cbox_platform_ops *ops, bool strict,
                                        struct sock_filter **prog, unsigned short *len);

/*
 * The refuse filter: every syscall the table refuses (kind REFUSE) returns its errno, a number
 * the table does not have ENOSYS, everything else is allowed; non-x86_64 calls kill, as in the
 * guest filter. It answers exactly as the sentry would for those calls, so a process under it
 * (the `cbox exec` spawner, and through inheritance each task it starts, whose guest filter
 * stacks on it) behaves as before while the kernel never runs one of them for it. Fills *prog
 * (malloc'd, the caller's) and *len. Returns 0 or -ENOMEM.
 */
CBOX_API int cbox_platform_build_refuse_filter(struct sock_filter **prog, unsigned short *len);

/*
 * Whether the filter allows nr on the fast path (for a given platform and strictness). The
 * host-surface listing and the filter are built from this one predicate. Strict keeps only the
 * calls that wait for a signal or a time on the seccomp platform's fast path (see filter.c).
 */
CBOX_API bool cbox_platform_fastpath(const struct cbox_platform_ops *ops, bool strict, int nr);
/* For a fast-path syscall that the filter still traps in some cases, a phrase saying when
 * ("with a destination address"); NULL when it is always on the fast path. */
CBOX_API const char *cbox_platform_fastpath_condition(const struct cbox_platform_ops *ops,
                                                      bool strict, int nr);

/* Whether the guest filter sends nr with these arguments to the sentry with the platform's trap
 * action (a seccomp notification, or a ptrace stop on the ptrace platform), as the filter built
 * by cbox_platform_build_filter decides; false for the fast path and for the calls it turns
 * into ptrace stops to be rewritten (execve, clone3, clone with refused flags). */
CBOX_API bool cbox_platform_traps(const struct cbox_platform_ops *ops, bool strict, int nr,
                                  const uint64_t args[6]);

/* Whether wait status st reports a group-stop of a seized task (PTRACE_EVENT_STOP with a stop
 * signal: SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU), not another PTRACE_EVENT_STOP. */
CBOX_API bool cbox_ptrace_group_stop(int st);

/* The signals task tid catches and ignores (/proc/TID/status SigCgt, SigIgn; bit sig-1 each):
 * 0, or -ESRCH or -EIO. */
CBOX_API int cbox_signal_masks(pid_t tid, uint64_t *caught, uint64_t *ignored);

/* The signals a task with those masks ignores, which Linux drops as they are sent (bit sig-1):
 * SIG_IGN ones, and SIGCHLD, SIGURG, SIGWINCH and SIGCONT where it does not catch them (their
 * default action is to ignore them, sig_kernel_ignore). */
CBOX_API uint64_t cbox_signals_ignored(uint64_t caught, uint64_t ignored);

/*
 * clone3's CLONE_CLEAR_SIGHAND, for a new task at its first ptrace stop (both platforms trace
 * every task): every signal it catches goes back to SIG_DFL and every one it ignores stays
 * ignored, each with no flags and an empty mask, as the kernel's flush_signal_handlers leaves
 * them. Done by running rt_sigaction inside the task. Returns the signal that arrived for the
 * task meanwhile (to be delivered when it is resumed; 0: none), or -errno.
 */
CBOX_API int cbox_ptrace_clear_sighand(pid_t tid);

/*
 * The ptrace platform's install channel of a new process (a fork's child, which has its own fd
 * table), made at its first ptrace stop, before it runs: a socketpair made inside it, whose one
 * end replaces the CBOX_PTRACE_INSTALL_FD it inherited (its parent's channel) and whose other
 * end goes to the sentry (*sentry_end, close-on-exec) and out of the task. Returns the signal
 * that arrived for the task meanwhile (as cbox_ptrace_clear_sighand), or -errno. Where the
 * task's hard RLIMIT_NOFILE is at or below the reserved fd no fd can be placed there:
 * *sentry_end is then -1, the task holds no channel (the inherited one closed), and
 * cbox_ptrace_install makes a pair inside it for each install (trap->install_sock -1).
 */
CBOX_API int cbox_ptrace_new_channel(pid_t tid, int *sentry_end);

/*
 * The same for a task whose fd table was shared with another process (CLONE_FILES) until an
 * exec or an unshare(CLONE_FILES) gave it its own copy, made at the task's next trapped call t:
 * the calls are injected there, and t is left at the call's exit stop (t->at_exit) once any ran.
 * Returns 0 (*sentry_end -1 when no fd can be placed at the reserved one) or -errno.
 */
CBOX_API int cbox_ptrace_renew_channel(struct cbox_trap *t, int *sentry_end);

/* Guest memory access (both platforms): process_vm_readv/writev on tid. Return 0 or -EFAULT
 * (or -ESRCH when the task is gone). read_str stops at NUL; -ENAMETOOLONG when no NUL within
 * size bytes. */
CBOX_API int cbox_mem_read(pid_t tid, uint64_t addr, void *buf, size_t len);
CBOX_API int cbox_mem_write(pid_t tid, uint64_t addr, const void *buf, size_t len);
CBOX_API int cbox_mem_read_str(pid_t tid, uint64_t addr, char *buf, size_t size);
