/* Dispatch of a trapped guest syscall: the table decides, the handler answers, the platform
 * delivers the answer. */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cbox/log.h"
#include "cbox/syscalls.h"
#include "internal.h"

int cbox_sys_read(struct cbox_sysctx *c, uint64_t addr, void *buf, size_t len)
{
	int r = cbox_mem_read(c->trap->tid, addr, buf, len);
	return r == -ESRCH ? -EFAULT : r;
}

int cbox_sys_write(struct cbox_sysctx *c, uint64_t addr, const void *buf, size_t len)
{
	int r = cbox_mem_write(c->trap->tid, addr, buf, len);
	return r == -ESRCH ? -EFAULT : r;
}

int cbox_sys_read_path(struct cbox_sysctx *c, uint64_t addr, char *buf)
{
	if (addr == 0)
		return -EFAULT;
	int r = cbox_mem_read_str(c->trap->tid, addr, buf, PATH_MAX);
	return r == -ESRCH ? -EFAULT : r;
}

static int install(struct cbox_sysctx *c, int hostfd, int flags, struct cbox_dentry *d, bool answer)
{
	struct cbox_platform *p = c->s->platform;
	struct stat st;
	if (fstat(hostfd, &st) < 0)
		return -EIO;
	bool cloexec = (flags & O_CLOEXEC) != 0;
	answer = answer && p->ops->install_fd_answer;
	c->trap->install_sock = cbox_fdtable_install_sock(c->task->files);
	int fd = answer ? p->ops->install_fd_answer(p, c->trap, hostfd, cloexec)
	                : p->ops->install_fd(p, c->trap, hostfd, cloexec);
	if (fd < 0)
		return fd;
	c->answered = answer;
	if (S_ISREG(st.st_mode) && (flags & O_ACCMODE) != O_RDONLY)
		cbox_text_note_writer(c->s, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
	/* (Recorded after the task may have resumed: the sentry takes its next call only after
	 * this one, so nothing can use the fd through the sentry before.) */
	if (d)
		cbox_fd_set(c->s, c->task, fd, d, flags, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
	return fd;
}

int cbox_sys_install(struct cbox_sysctx *c, int hostfd, int flags, struct cbox_dentry *d)
{
	return install(c, hostfd, flags, d, false);
}

int cbox_sys_install_answer(struct cbox_sysctx *c, int hostfd, int flags, struct cbox_dentry *d)
{
	return install(c, hostfd, flags, d, true);
}

static const char *outcome_name(const struct cbox_sys_entry *e, int64_t r)
{
	if (!e || e->kind == CBOX_SYS_REFUSE)
		return "refused";
	if (r == CBOX_SYSRET_CONTINUE)
		return e->kind == CBOX_SYS_FAST ? "fastpath" : "passthrough";
	return "emulated";
}

static void strace_line(struct cbox_sysctx *c, const struct cbox_sys_entry *e, int64_t r)
{
	const struct cbox_trap *t = c->trap;
	char res[48], line[256];
	if (r == CBOX_SYSRET_CONTINUE)
		snprintf(res, sizeof(res), "?");
	else if (r == CBOX_SYSRET_DONE)
		snprintf(res, sizeof(res), "(rewritten)");
	else if (r < 0 && r >= -4095)
		snprintf(res, sizeof(res), "-1 %s", strerrorname_np((int)-r) ?: "E?");
	else
		snprintf(res, sizeof(res), "%lld", (long long)r);
	int n = snprintf(line, sizeof(line), "[pid %d] %s(%#llx, %#llx, %#llx, %#llx) = %s (%s)\n",
	                 cbox_task_vpid(c->s, c->task), cbox_sys_name(t->nr),
	                 (unsigned long long)t->args[0], (unsigned long long)t->args[1],
	                 (unsigned long long)t->args[2], (unsigned long long)t->args[3], res,
	                 outcome_name(e, r));
	if (n > 0)
		cbox_log_raw(line,
		             (unsigned long)(n < (int)sizeof(line) ? n : (int)sizeof(line) - 1));
}

/* A refused syscall is logged once per number: a guest calling it in a loop must not flood the
 * log (and the disk behind it). */
static void log_refused(struct cbox_sentry *s, const struct cbox_sys_entry *e, int nr)
{
	unsigned idx = (unsigned)nr < 512 ? (unsigned)nr : 511;
	uint64_t bit = 1ULL << (idx % 64);
	if (s->refused_logged[idx / 64] & bit)
		return;
	s->refused_logged[idx / 64] |= bit;
	/* Info, not warning: most refusals are probes with a fallback (clone3, xattrs on
	 * /proc...), and the user's stderr is the program's. --log-level=info shows them. */
	cbox_info("guest syscall %s (%d) refused with %s: %s", cbox_sys_name(nr), nr,
	          e ? strerrorname_np(e->err) : "ENOSYS", e ? e->note : "not an x86_64 syscall");
}

/*
 * Security: after an exec or unshare(CLONE_FILES) of a table another process shared, the task's
 * copy still holds the install socket of that table at fd 1022, whose other holders could take
 * the fds the sentry installs for this task (a process that dropped to nobody read root's files,
 * or the other's new image's ELF, that way). So at the task's next trapped call (after an exec,
 * the loader's request), before any install, it gets a socket of its own, made inside it as a
 * fork's child gets one (cbox_ptrace_renew_channel), and the call then runs again from its entry
 * and traps anew: whatever its handler does (an open's install, execve's rewrite, the loader's
 * fds) runs on the new socket, at a fresh stop. A task that cannot be given one is killed: it
 * must not go on with the shared one.
 */
static bool renew_channel(struct cbox_sentry *s, struct cbox_task *task, struct cbox_trap *trap)
{
	if (!task->renew_channel || !trap->ptrace_stop || trap->at_exit)
		return false;
	task->renew_channel = false;
	int sock = -1;
	int r = cbox_ptrace_renew_channel(trap, &sock);
	if (r < 0) {
		if (r != -ESRCH)
			cbox_warn("giving task %d its own install socket: %s; killing it",
			          trap->tid, strerror(-r));
		kill(trap->tid, SIGKILL);
		s->platform->ops->reply(s->platform, trap, -EPERM);
		return true;
	}
	cbox_fdtable_set_install_sock(task->files, sock);
	/* (at its exit stop after the channel's calls: cont runs the call again from its entry) */
	struct cbox_sysctx c = {.s = s, .task = task, .trap = trap};
	cbox_dispatch_answer(&c, cbox_sys_lookup(trap->nr), CBOX_SYSRET_CONTINUE);
	return true;
}

void cbox_dispatch(struct cbox_sentry *s, struct cbox_trap *trap)
{
	struct cbox_task *task = cbox_task_find(s, trap->tid);
	/*
	 * Security: every guest task is traced from before its first instruction (the sentry
	 * seizes the tasks it starts; the kernel attaches each new one, which the sentry holds at
	 * its first stop until it is linked to its parent's state: tracer.c start_new_task). A
	 * call from a task the sentry does not know, or has not linked, therefore comes from one
	 * that escaped that: its calls were never checked against any state (a pass-through would
	 * run unchecked), so it is killed and the call refused.
	 */
	if (!task || !task->fs || !task->files || !task->tg || !task->cred) {
		cbox_warn("a call (%s) from task %d, which the sentry does not trace: killing it",
		          cbox_sys_name(trap->nr), trap->tid);
		kill(trap->tid, SIGKILL);
		s->platform->ops->reply(s->platform, trap, -EPERM);
		return;
	}
	if (renew_channel(s, task, trap))
		return;
	struct cbox_sysctx c = {.s = s, .task = task, .trap = trap};
	const struct cbox_sys_entry *e = cbox_sys_lookup(trap->nr);
	task->restart_answered = false; /* (a new call: restart.c restart_interrupted_trap) */
	s->trap_seq++;
	int64_t r;
	if (!e) {
		log_refused(s, NULL, trap->nr);
		r = -ENOSYS;
	} else if (e->kind == CBOX_SYS_REFUSE) {
		log_refused(s, e, trap->nr);
		r = -e->err;
	} else if (e->handler) {
		r = e->handler(&c);
	} else {
		r = e->kind == CBOX_SYS_EMU ? -ENOSYS : CBOX_SYSRET_CONTINUE;
	}
	cbox_dispatch_answer(&c, e, r);
}

void cbox_dispatch_answer(struct cbox_sysctx *c, const struct cbox_sys_entry *e, int64_t r)
{
	struct cbox_sentry *s = c->s;
	if (r == CBOX_SYSRET_DEFER)
		return; /* answered later by defer.c, which calls this again */
	if (s->cfg->strace)
		strace_line(c, e, r);
	struct cbox_platform *p = s->platform;
	struct cbox_trap *trap = c->trap;
	int err = 0;
	c->task->continued_nr1 = r == CBOX_SYSRET_CONTINUE ? trap->nr + 1 : 0;
	c->task->continued_ip = trap->ip;
	/* At a ptrace stop, the task goes on as its guest tracer last let it (ptrace_emu.c). */
	if (trap->ptrace_stop) {
		trap->resume = cbox_ptrace_emu_resume_req(c->task);
		cbox_ptrace_emu_rearm(c->task);
	}
	if (c->answered)
		; /* by cbox_sys_install_answer */
	else if (r == CBOX_SYSRET_CONTINUE)
		err = p->ops->cont(p, trap);
	else if (r != CBOX_SYSRET_DONE)
		err = p->ops->reply(p, trap, r);
	if (trap->hold_exit)
		cbox_ptrace_emu_hold_exit(s, c->task, trap->nr);
	if (trap->rerun)
		c->task->pt.skip_entry_ip = trap->ip;
	if (err < 0 && err != -ENOENT)
		cbox_warn("answering %s of task %d: %s", cbox_sys_name(trap->nr), trap->tid,
		          strerror(-err));
}
