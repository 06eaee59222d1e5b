/*
 * ptrace between guest tasks, and the waits that see its stops. The sentry is the host tracer
 * of every guest task, so a guest's ptrace is answered here, on tasks the sentry holds for the
 * guest tracer (sentry/ptrace_emu.c): attaching (ATTACH, SEIZE, TRACEME), stopping (INTERRUPT),
 * reading and changing a stopped tracee (its registers, its memory, its siginfo: the host's own
 * requests on it, made by the sentry), letting it go on (CONT, SYSCALL, SINGLESTEP, LISTEN,
 * DETACH, KILL), and the event options (fork, vfork, clone, exec, exit and vfork-done events,
 * TRACESYSGOOD, EXITKILL). That is what gdb and strace need, and the sanitizers' leak check,
 * which stops its own threads to look at them. Not emulated: PTRACE_SYSEMU (EIO) and
 * PTRACE_O_TRACESECCOMP (EINVAL: the guest's filters are its own, and the sentry's stops are
 * not a tracer's), PTRACE_O_SUSPEND_SECCOMP (EPERM, as without CAP_SYS_ADMIN).
 *
 * The tracer sees a held tracee's stop through wait4 and waitid, which reach the sentry: with
 * nothing traced the host runs them at once (one notification more per wait: no difference
 * measured on 100 fork+exec+wait of a shell loop, both platforms). Only __WALL waits, which
 * tracers of threads pass, reached it at first; but Linux implies __WALL for a tracee, and
 * strace's start-up check waited for its TRACEME child without it, on the host, where the
 * child's stop never came: strace hung instead of failing at its SEIZE options.
 */
#include <dirent.h>
#include <fcntl.h>
#include <elf.h>
#include <linux/audit.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox/cred.h"
#include "internal.h"

#define ARG(i)  (c->trap->args[i])
#define IARG(i) ((int)c->trap->args[i])

#define CBOX_NSIG 64
/* The options a tracer may set (ptrace_emu.c makes their stops). */
#define PT_OPTIONS_KEPT                                                                            \
	(PTRACE_O_EXITKILL | PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |    \
	 PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEVFORKDONE | PTRACE_O_TRACEEXIT)
#define PT_OPTIONS_ALL 0x003000ffUL /* PTRACE_O_MASK */
/* The largest register set copied (x86's XSTATE with AMX is ~11 KiB). */
#define PT_REGSET_MAX 16384

/* ptrace_setoptions' checks: unknown bits EINVAL; SUSPEND_SECCOMP needs CAP_SYS_ADMIN (EPERM);
 * seccomp stops are not emulated (EINVAL). */
static int check_options(uint64_t flags)
{
	if (flags & ~PT_OPTIONS_ALL)
		return -EINVAL;
	if (flags & PTRACE_O_SUSPEND_SECCOMP)
		return -EPERM;
	if (flags & ~(uint64_t)PT_OPTIONS_KEPT)
		return -EINVAL;
	return 0;
}

/* The task lookup's ESRCH, then ptrace_attach's checks in its order. */
static int64_t attach(struct cbox_sysctx *c, struct cbox_task *t, bool seize, uint64_t addr,
                      uint64_t flags)
{
	if (!t)
		return -ESRCH;
	if (seize && (addr != 0 || (flags & ~PT_OPTIONS_ALL)))
		return -EIO;
	int r = seize ? check_options(flags) : 0;
	if (r < 0)
		return r;
	if (t->tg && t->tg == c->task->tg)
		return -EPERM; /* a thread of one's own process */
	/* PTRACE_MODE_ATTACH_REALCREDS. Security: the host would let any guest task trace any
	 * other (they are one host id); tried by t_ptrace_guard in
	 * tests/integration/test_attack.sh. */
	if (!cbox_task_may_access(c->task, t, false))
		return -EPERM;
	if (t->pt.tracer)
		return -EPERM; /* traced already */
	cbox_ptrace_emu_attach(c->s, t, c->task, seize, flags & PTRACE_O_EXITKILL);
	if (seize) {
		t->pt.options = (unsigned)flags;
		return 0;
	}
	/* PTRACE_ATTACH sends the tracee a SIGSTOP, whose delivery stop the tracer then sees; the
	 * sentry stops it with an interrupt instead (a SIGSTOP the tracer did not suppress would
	 * stop the whole process) and reports that stop as the SIGSTOP's. */
	r = cbox_ptrace_emu_interrupt(c->s, t, SIGSTOP);
	return r < 0 ? r : 0;
}

/* PTRACE_TRACEME: the caller's parent becomes its tracer (its creating thread while it lives,
 * else the leader of the process it belongs to, as Linux reparents to another thread). */
static int64_t traceme(struct cbox_sysctx *c)
{
	struct cbox_task *me = c->task;
	if (me->pt.tracer)
		return -EPERM;
	struct cbox_task *p = me->parent_tid ? cbox_task_find(c->s, me->parent_tid) : NULL;
	struct cbox_task_stat st;
	if (!p && cbox_task_stat(me->tid, &st) == 0) /* the creating thread is gone */
		p = cbox_task_find(c->s, st.ppid);
	if (!p || !p->tg)
		return -EPERM; /* the parent is outside the sandbox (its first task's) */
	cbox_ptrace_emu_attach(c->s, me, p, false, false); /* no stop: it runs on */
	return 0;
}

/* A word read by a PEEK request, stored where the raw call's data points (glibc's wrapper
 * passes its own variable there). */
static int64_t peek(struct cbox_sysctx *c, struct cbox_task *t, int req, uint64_t addr,
                    uint64_t data)
{
	errno = 0;
	long w = ptrace((enum __ptrace_request)req, t->tid, addr, 0);
	if (w == -1 && errno)
		return -errno; /* EIO: not mapped (PEEKDATA), a bad offset (PEEKUSER) */
	return cbox_sys_write(c, data, &w, sizeof(w)) < 0 ? -EFAULT : 0;
}

/*
 * The registers as Linux shows them at the held stop. At the exit stop of a call the sentry
 * answered at a ptrace stop (the ptrace platform), the host skipped the call (orig_rax -1); the
 * tracer saw the call at its entry stop and sees it again at its exit, as Linux shows it.
 */
static void shown_regs(const struct cbox_task *t, struct user_regs_struct *r)
{
	if (t->pt.syscall_stop && t->pt.sys_exit && t->pt.sys_nr >= 0 &&
	    r->orig_rax == (unsigned long long)-1)
		r->orig_rax = (unsigned long long)t->pt.sys_nr;
}

/* PTRACE_GETREGSET and PTRACE_SETREGSET (set): the guest's iovec at data names its buffer (up to
 * PT_REGSET_MAX bytes of it are used) and gets back the length the register set took. */
static int64_t regset(struct cbox_sysctx *c, struct cbox_task *t, bool set, uint64_t type,
                      uint64_t data)
{
	struct iovec giov;
	if (cbox_sys_read(c, data, &giov, sizeof(giov)) < 0)
		return -EFAULT;
	uint64_t gbuf = (uint64_t)(uintptr_t)giov.iov_base;
	size_t len = giov.iov_len < PT_REGSET_MAX ? giov.iov_len : PT_REGSET_MAX;
	void *buf = calloc(1, len ? len : 1);
	if (!buf)
		return -ENOMEM;
	struct iovec iov = {buf, len};
	int64_t r = 0;
	if (set && len && cbox_sys_read(c, gbuf, buf, len) < 0)
		r = -EFAULT;
	else if (ptrace(set ? PTRACE_SETREGSET : PTRACE_GETREGSET, t->tid, type, &iov) < 0)
		r = -errno; /* EINVAL: no such set, ENODEV: not on this CPU */
	if (r == 0 && !set && type == NT_PRSTATUS && iov.iov_len >= sizeof(struct user_regs_struct))
		shown_regs(t, buf);
	if (r == 0 && ((!set && iov.iov_len && cbox_sys_write(c, gbuf, buf, iov.iov_len) < 0) ||
	               cbox_sys_write(c, data + offsetof(struct iovec, iov_len), &iov.iov_len,
	                              sizeof(iov.iov_len)) < 0))
		r = -EFAULT;
	free(buf);
	return r;
}

/*
 * PTRACE_GET_SYSCALL_INFO, from what the sentry knows of the held stop (some syscall stops are
 * its own making: an exec's) and the task's registers: the op, its size, min(size, what the op
 * fills) bytes written.
 */
static int64_t syscall_info(struct cbox_sysctx *c, struct cbox_task *t, uint64_t size,
                            uint64_t data)
{
	struct user_regs_struct r;
	if (ptrace(PTRACE_GETREGS, t->tid, 0, &r) < 0)
		return -errno;
	shown_regs(t, &r);
	struct __ptrace_syscall_info info;
	memset(&info, 0, sizeof(info));
	info.arch = AUDIT_ARCH_X86_64;
	info.instruction_pointer = r.rip;
	info.stack_pointer = r.rsp;
	size_t n = offsetof(struct __ptrace_syscall_info, entry);
	if (t->pt.syscall_stop && !t->pt.sys_exit) {
		info.op = PTRACE_SYSCALL_INFO_ENTRY;
		info.entry.nr = r.orig_rax;
		uint64_t a[6] = {r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9};
		memcpy(info.entry.args, a, sizeof(a));
		n = offsetof(struct __ptrace_syscall_info, entry.args) + sizeof(info.entry.args);
	} else if (t->pt.syscall_stop) {
		info.op = PTRACE_SYSCALL_INFO_EXIT;
		info.exit.rval = (int64_t)r.rax;
		info.exit.is_error = (int64_t)r.rax < 0 && (int64_t)r.rax >= -4095;
		n = offsetof(struct __ptrace_syscall_info, exit.is_error) +
		    sizeof(info.exit.is_error);
	}
	size_t w = size < n ? size : n;
	if (w && cbox_sys_write(c, data, &info, w) < 0)
		return -EFAULT;
	return (int64_t)n;
}

static int64_t getsiginfo(struct cbox_sysctx *c, struct cbox_task *t, uint64_t data)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	if (t->pt.signal_stop) {
		if (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) < 0)
			return -errno;
	} else if (t->pt.seized || t->pt.syscall_stop || (t->pt.code >> 8) != 0) {
		/* An event or syscall stop's, as ptrace_do_notify makes it: the stop's code, from
		 * the tracee (vtid: filled by cbox_task_by_vtid, which found it). */
		si.si_signo = t->pt.code & 0x7f;
		si.si_code = t->pt.code;
		si.si_pid = t->vtid;
		si.si_uid = t->cred ? t->cred->uid : 0;
	} else if (!t->pt.group_stop) {
		/* The stop of PTRACE_ATTACH: its SIGSTOP, which the kernel sends (SI_KERNEL). */
		si.si_signo = SIGSTOP;
		si.si_code = SI_KERNEL;
	} else {
		return -EINVAL; /* a group-stop has no siginfo */
	}
	return cbox_sys_write(c, data, &si, sizeof(si)) < 0 ? -EFAULT : 0;
}

int64_t sys_ptrace(struct cbox_sysctx *c)
{
	long req = (long)ARG(0);
	pid_t pid = IARG(1);
	uint64_t addr = ARG(2), data = ARG(3);
	if (req == PTRACE_TRACEME)
		return traceme(c);
	struct cbox_task *t = cbox_task_by_vtid(c->s, pid);
	if (req == PTRACE_ATTACH || req == PTRACE_SEIZE)
		return attach(c, t, req == PTRACE_SEIZE, addr, data);
	/* Every other request is the tracer thread's, on its tracee (ptrace_check_attach). */
	if (!t || t->pt.tracer != c->task->tid)
		return -ESRCH;
	if (req == PTRACE_KILL) {
		kill(t->tid, SIGKILL);
		return 0;
	}
	if (req == PTRACE_INTERRUPT) {
		if (!t->pt.seized)
			return -EIO;
		int r = cbox_ptrace_emu_interrupt(c->s, t, SIGTRAP | (PTRACE_EVENT_STOP << 8));
		return r < 0 ? r : 0;
	}
	if (req == PTRACE_LISTEN) {
		/* Only a seizer's tracee in a group-stop (an event stop of its stop signal). */
		if (!t->pt.held || !t->pt.seized || !t->pt.group_stop)
			return -EIO;
		cbox_ptrace_emu_resume(c->s, t, PTRACE_CONT, 0); /* (a group-stop's: LISTEN) */
		return 0;
	}
	/* ...and the tracee must be stopped. */
	if (!t->pt.held)
		return -ESRCH;
	switch (req) {
	case PTRACE_CONT:
	case PTRACE_SYSCALL:
	case PTRACE_SINGLESTEP:
	case PTRACE_DETACH:
		if (data > CBOX_NSIG)
			return -EIO;
		if (req == PTRACE_DETACH)
			cbox_ptrace_emu_detach(c->s, t, (int)data);
		else
			cbox_ptrace_emu_resume(c->s, t, (int)req, (int)data);
		return 0;
	case PTRACE_PEEKTEXT:
	case PTRACE_PEEKDATA:
	case PTRACE_PEEKUSER:
		return peek(c, t, (int)req, addr, data);
	case PTRACE_POKETEXT:
	case PTRACE_POKEDATA:
	case PTRACE_POKEUSER:
		/* The host's own checks: EIO for an unmapped word or a bad offset, EINVAL... */
		return ptrace((enum __ptrace_request)req, t->tid, addr, data) < 0 ? -errno : 0;
	case PTRACE_GETREGS: {
		struct user_regs_struct r;
		if (ptrace(PTRACE_GETREGS, t->tid, 0, &r) < 0)
			return -errno;
		shown_regs(t, &r);
		return cbox_sys_write(c, data, &r, sizeof(r)) < 0 ? -EFAULT : 0;
	}
	case PTRACE_SETREGS: {
		struct user_regs_struct r;
		if (cbox_sys_read(c, data, &r, sizeof(r)) < 0)
			return -EFAULT;
		return ptrace(PTRACE_SETREGS, t->tid, 0, &r) < 0 ? -errno : 0;
	}
	case PTRACE_GETFPREGS: {
		struct user_fpregs_struct r;
		if (ptrace(PTRACE_GETFPREGS, t->tid, 0, &r) < 0)
			return -errno;
		return cbox_sys_write(c, data, &r, sizeof(r)) < 0 ? -EFAULT : 0;
	}
	case PTRACE_SETFPREGS: {
		struct user_fpregs_struct r;
		if (cbox_sys_read(c, data, &r, sizeof(r)) < 0)
			return -EFAULT;
		return ptrace(PTRACE_SETFPREGS, t->tid, 0, &r) < 0 ? -errno : 0;
	}
	case PTRACE_GETREGSET:
	case PTRACE_SETREGSET:
		return regset(c, t, req == PTRACE_SETREGSET, addr, data);
	case PTRACE_GETSIGINFO:
		return getsiginfo(c, t, data);
	case PTRACE_SETSIGINFO: {
		siginfo_t si;
		if (cbox_sys_read(c, data, &si, sizeof(si)) < 0)
			return -EFAULT;
		if (!t->pt.signal_stop)
			return 0; /* (no signal is being delivered: nothing it would change) */
		return ptrace(PTRACE_SETSIGINFO, t->tid, 0, &si) < 0 ? -errno : 0;
	}
	case PTRACE_GETSIGMASK:
	case PTRACE_SETSIGMASK: {
		uint64_t mask;
		if (addr != sizeof(mask))
			return -EINVAL;
		if (req == PTRACE_SETSIGMASK && cbox_sys_read(c, data, &mask, sizeof(mask)) < 0)
			return -EFAULT;
		if (ptrace((enum __ptrace_request)req, t->tid, sizeof(mask), &mask) < 0)
			return -errno;
		if (req == PTRACE_GETSIGMASK && cbox_sys_write(c, data, &mask, sizeof(mask)) < 0)
			return -EFAULT;
		return 0;
	}
	case PTRACE_GETEVENTMSG: {
		unsigned long msg = t->pt.msg;
		return cbox_sys_write(c, data, &msg, sizeof(msg)) < 0 ? -EFAULT : 0;
	}
	case PTRACE_SETOPTIONS: {
		int r = check_options(data);
		if (r < 0)
			return r;
		t->pt.options = (unsigned)data;
		t->pt.exitkill = (data & PTRACE_O_EXITKILL) != 0;
		return 0;
	}
	case PTRACE_GET_SYSCALL_INFO:
		return syscall_info(c, t, addr, data);
	default:
		return -EIO; /* PTRACE_SYSEMU, PTRACE_PEEKSIGINFO...: not emulated */
	}
}

/* ---- wait4 and waitid ---------------------------------------------------------------------- */

struct wait_req {
	pid_t pid; /* > 0: that task; -1: any */
	int options;
	bool waitid;
	uint64_t status, info, rusage; /* guest addresses (0: none) */
};

/*
 * What a wait reports of a tracee (vtid): for waitid its siginfo (info_code, info_status, the
 * tracee's uid), for wait4 the wait status wstatus and the tracee's id; its rusage, which is the
 * host's and which the sentry cannot ask for, zero.
 */
static int64_t report_wait(struct cbox_sysctx *c, const struct wait_req *w, pid_t vtid,
                           uint32_t uid, int info_code, int info_status, int wstatus)
{
	if (w->rusage) {
		struct rusage ru;
		memset(&ru, 0, sizeof(ru));
		if (cbox_sys_write(c, w->rusage, &ru, sizeof(ru)) < 0)
			return -EFAULT;
	}
	if (w->waitid) {
		if (w->info) {
			siginfo_t si;
			memset(&si, 0, sizeof(si));
			si.si_signo = SIGCHLD;
			si.si_code = info_code;
			si.si_pid = vtid;
			si.si_uid = uid;
			si.si_status = info_status;
			if (cbox_sys_write(c, w->info, &si, offsetof(siginfo_t, si_status) + 4) < 0)
				return -EFAULT;
		}
		return 0;
	}
	if (w->status && cbox_sys_write(c, w->status, &wstatus, sizeof(wstatus)) < 0)
		return -EFAULT;
	return vtid;
}

/* Tracee x's held stop, as wait_task_stopped reports a ptrace stop. */
static int64_t report(struct cbox_sysctx *c, const struct wait_req *w, struct cbox_task *x)
{
	int64_t r = report_wait(c, w, x->vtid, x->cred ? x->cred->uid : 0, CLD_TRAPPED, x->pt.code,
	                        (x->pt.code << 8) | 0x7f);
	if (r >= 0 && !(w->waitid && (w->options & WNOWAIT)))
		x->pt.reported = true;
	return r;
}

/* A tracee's exit the tracer is owed (not its child: ptrace_emu.c), as wait_task_zombie reports
 * it. */
static int64_t report_exit(struct cbox_sysctx *c, const struct wait_req *w, pid_t vtid, int status)
{
	int code = WIFEXITED(status) ? CLD_EXITED : WCOREDUMP(status) ? CLD_DUMPED : CLD_KILLED;
	return report_wait(c, w, vtid, 0, code,
	                   WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), status);
}

/* Whether thread tid of process tgid has a child it has not reaped (its /proc children list). */
static bool thread_has_children(pid_t tgid, long tid)
{
	char path[96], buf[16];
	snprintf(path, sizeof(path), "/proc/%d/task/%ld/children", (int)tgid, tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false; /* (the thread is gone) */
	ssize_t n = read(fd, buf, sizeof(buf));
	close(fd);
	return n != 0;
}

/* Whether the caller's process (the calling thread alone with nothread) has a child of its own
 * not yet reaped, which the host's wait would see. */
static bool has_real_children(struct cbox_sysctx *c, bool nothread)
{
	pid_t tgid = c->task->tg ? c->task->tg->host_tgid : c->task->tid;
	if (nothread)
		return thread_has_children(tgid, c->task->tid);
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)tgid);
	DIR *d = opendir(path);
	if (!d)
		return true; /* (cannot tell: the host decides) */
	bool found = false;
	struct dirent *e;
	while (!found && (e = readdir(d)) != NULL) {
		long tid = strtol(e->d_name, NULL, 10);
		found = tid > 0 && thread_has_children(tgid, tid);
	}
	closedir(d);
	return found;
}

/* One look: a report, the host's wait (CONTINUE), WNOHANG's nothing, or DEFER. */
static int64_t wait_once(struct cbox_sysctx *c, const struct wait_req *w)
{
	bool any, nothread = w->options & __WNOTHREAD;
	struct cbox_task *x = cbox_ptrace_emu_waitable(c->s, c->task, w->pid, nothread, &any);
	if (x)
		return report(c, w, x);
	pid_t vtid;
	int status;
	bool exits = !w->waitid || (w->options & WEXITED);
	if (exits && cbox_ptrace_emu_zombie(c->s, c->task, w->pid, nothread,
	                                    w->waitid && (w->options & WNOWAIT), &vtid, &status))
		return report_exit(c, w, vtid, status);
	any = any || cbox_ptrace_emu_zombie(c->s, c->task, w->pid, nothread, true, &vtid, &status);
	/* No tracee of the caller's is selected (none, gone, detached): the host's wait, with the
	 * caller's real children. Any child would do, and the caller has one of its own: the
	 * host's wait too, which a tracee's later stop interrupts (ptrace_emu.c). Only tracees:
	 * the sentry waits (the host would say ECHILD). */
	if (!any || (w->pid == -1 && has_real_children(c, nothread)))
		return CBOX_SYSRET_CONTINUE;
	if (!(w->options & WNOHANG))
		return CBOX_SYSRET_DEFER;
	if (w->waitid && w->info) {
		siginfo_t si;
		memset(&si, 0, sizeof(si));
		if (cbox_sys_write(c, w->info, &si, offsetof(siginfo_t, si_status) + 4) < 0)
			return -EFAULT;
	}
	return 0;
}

static int64_t wait_step(struct cbox_sysctx *c, void *arg)
{
	return wait_once(c, arg);
}

static int64_t wait_start(struct cbox_sysctx *c, const struct wait_req *w)
{
	int64_t r = wait_once(c, w);
	if (r != CBOX_SYSRET_DEFER)
		return r;
	struct wait_req *copy = malloc(sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	*copy = *w;
	/* Woken by a stop the sentry holds or a tracee leaving (cbox_defer_kick); the slow retry
	 * only collects a wait a signal ended. */
	return cbox_sys_defer(c, -1, 0, 1000, wait_step, free, copy);
}

int64_t sys_wait4(struct cbox_sysctx *c)
{
	struct wait_req w = {
	    .pid = IARG(0), .options = IARG(2), .status = ARG(1), .rusage = ARG(3)};
	if (!cbox_ptrace_emu_count(c->s) || w.pid == INT_MIN ||
	    (w.options & ~(WNOHANG | WUNTRACED | WCONTINUED | __WNOTHREAD | __WCLONE | __WALL)))
		return CBOX_SYSRET_CONTINUE; /* nothing traced; the host's ESRCH, EINVAL */
	return wait_start(c, &w);
}

int64_t sys_waitid(struct cbox_sysctx *c)
{
	int idtype = IARG(0);
	struct wait_req w = {
	    .pid = -1, .options = IARG(3), .waitid = true, .info = ARG(2), .rusage = ARG(4)};
	if (!cbox_ptrace_emu_count(c->s) ||
	    (w.options & ~(WNOHANG | WNOWAIT | WEXITED | WSTOPPED | WCONTINUED | __WNOTHREAD |
	                   __WCLONE | __WALL)) ||
	    !(w.options & (WEXITED | WSTOPPED | WCONTINUED)))
		return CBOX_SYSRET_CONTINUE; /* nothing traced; the host's EINVAL */
	if (idtype == P_PID && IARG(1) > 0)
		w.pid = IARG(1);
	else if (idtype != P_ALL)
		return CBOX_SYSRET_CONTINUE; /* process groups, pidfds: the host's */
	return wait_start(c, &w);
}
