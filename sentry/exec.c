/*
 * exec: the guest's execve becomes an exec of the loader, which gets the real program from the
 * sentry (see loader_abi.h). Everything that can fail the way Linux fails an execve (ENOENT,
 * EACCES, ENOEXEC, ELOOP...) is checked here, before the point of no return.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cbox/elf.h"
#include "cbox/loader_abi.h"
#include "cbox/log.h"
#include "cbox/syscalls.h"
#include "internal.h"

static int open_checked(struct cbox_sentry *s, struct cbox_task *t, int dirfd, const char *path,
                        int walk_flags, struct cbox_dentry **out)
{
	struct cbox_dentry *d;
	int r = cbox_vfs_walk(s, t, dirfd, path, walk_flags, &d, NULL);
	if (r < 0)
		return r;
	/* Linux: only regular files with an execute bit for the caller run; a symlink that was
	 * not to be followed (execveat AT_SYMLINK_NOFOLLOW) is ELOOP. */
	int r2 = S_ISLNK(d->mode) ? -ELOOP : !S_ISREG(d->mode) ? -EACCES : cbox_vfs_may(d, X_OK);
	if (r2 < 0) {
		cbox_dentry_put(s, d);
		return r2;
	}
	int fd = cbox_vfs_open(s, t, d, O_RDONLY);
	if (fd < 0) {
		cbox_dentry_put(s, d);
		return fd;
	}
	*out = d;
	return fd;
}

static int read_header(int fd, char *buf, size_t size, uint64_t *file_size)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -EIO;
	*file_size = (uint64_t)st.st_size;
	ssize_t n = pread(fd, buf, size, 0);
	return n < 0 ? -EIO : (int)n;
}

/* Validate the program and find its interpreter. Returns the interpreter's host fd, -1 for a
 * static program, or -errno. */
static int prepare(struct cbox_sentry *s, struct cbox_task *t, int elf_fd)
{
	char hdr[CBOX_ELF_HEADER_BYTES];
	uint64_t size;
	int n = read_header(elf_fd, hdr, sizeof(hdr), &size);
	if (n < 0)
		return n;
	struct cbox_elf_info info;
	int r = cbox_elf_parse(hdr, (size_t)n, size, &info);
	if (r < 0)
		return r == -EINVAL ? -EINVAL : -ENOEXEC;
	if (!info.has_interp)
		return -1;
	char interp[CBOX_ELF_INTERP_MAX + 1];
	ssize_t got = pread(elf_fd, interp, info.interp_len, (off_t)info.interp_offset);
	if (got != (ssize_t)info.interp_len || cbox_elf_check_interp(interp, info.interp_len) < 0)
		return -ENOEXEC;
	struct cbox_dentry *d;
	int fd = open_checked(s, t, AT_FDCWD, interp, CBOX_WALK_FOLLOW, &d);
	if (fd == -EACCES)
		fd = -ELIBBAD;
	if (fd < 0)
		return fd == -ENOENT ? -ENOENT : fd;
	cbox_dentry_put(s, d);
	return fd;
}

/* The loader's path, written below the guest's stack pointer (past the red zone): the register
 * rewrite needs it in guest memory, and exec replaces that memory anyway. */
static int64_t rewrite_to_loader(struct cbox_sysctx *c, uint64_t argv, uint64_t envp)
{
	struct cbox_trap *tr = c->trap;
	const char *lp = cbox_sentry_loader_path(c->s);
	size_t len = strlen(lp) + 1;
	uint64_t at = (tr->regs.rsp - 128 - 256) & ~15ULL;
	if (cbox_mem_write(tr->tid, at, lp, len) < 0)
		return -EFAULT;
	struct user_regs_struct r = tr->regs;
	r.orig_rax = SYS_execve;
	r.rdi = at;
	r.rsi = argv;
	r.rdx = envp;
	/* The kernel re-runs the guest filter on the rewritten call; execve returns TRACE there,
	 * and a second TRACE after a ptrace stop is allowed: exactly this call goes through. */
	if (ptrace(PTRACE_SETREGS, tr->tid, 0, &r) < 0 || ptrace(PTRACE_CONT, tr->tid, 0, 0) < 0)
		return errno == ESRCH ? CBOX_SYSRET_DONE : -errno;
	return CBOX_SYSRET_DONE;
}

int64_t cbox_exec(struct cbox_sysctx *c, int dirfd, uint64_t path_addr, uint64_t argv,
                  uint64_t envp, int flags)
{
	struct cbox_task *t = c->task;
	if (!c->trap->ptrace_stop)
		return -ENOSYS; /* the filter sends execve only as a ptrace stop */
	if (flags & ~(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW))
		return -EINVAL;
	char path[PATH_MAX];
	int r = cbox_sys_read_path(c, path_addr, path);
	if (r < 0)
		return r;
	int wf = (flags & AT_SYMLINK_NOFOLLOW) ? 0 : CBOX_WALK_FOLLOW;
	if (flags & AT_EMPTY_PATH)
		wf |= CBOX_WALK_EMPTY_OK;
	struct cbox_dentry *d;
	int elf_fd = open_checked(c->s, t, dirfd, path, wf, &d);
	if (elf_fd < 0)
		return elf_fd;
	int interp_fd = prepare(c->s, t, elf_fd);
	if (interp_fd < -1) {
		close(elf_fd);
		cbox_dentry_put(c->s, d);
		return interp_fd;
	}
	char exe[PATH_MAX];
	if (cbox_vfs_path(d, exe, sizeof(exe)) < 0)
		strcpy(exe, path);
	cbox_dentry_put(c->s, d);

	struct cbox_exec_pending *e = calloc(1, sizeof(*e));
	char *execfn = strdup(path[0] ? path : exe);
	char *exe_copy = strdup(exe);
	if (!e || !execfn || !exe_copy) {
		free(e);
		free(execfn);
		free(exe_copy);
		close(elf_fd);
		if (interp_fd >= 0)
			close(interp_fd);
		return -ENOMEM;
	}
	e->elf_fd = elf_fd;
	e->interp_fd = interp_fd;
	e->execfn = execfn;
	if (t->exec) {
		close(t->exec->elf_fd);
		if (t->exec->interp_fd >= 0)
			close(t->exec->interp_fd);
		free(t->exec->execfn);
		free(t->exec);
	}
	t->exec = e;
	free(t->tg->exe);
	t->tg->exe = exe_copy;
	return rewrite_to_loader(c, argv, envp);
}

/*
 * The loader's request for the program. Only a task whose exec the sentry prepared gets an
 * answer; for any other the call is an ordinary ioctl the host refuses.
 */
int64_t cbox_exec_loader_request(struct cbox_sysctx *c)
{
	struct cbox_task *t = c->task;
	struct cbox_exec_pending *e = t->exec;
	if (!e)
		return CBOX_SYSRET_CONTINUE;
	struct cbox_loader_info info;
	memset(&info, 0, sizeof(info));
	info.version = CBOX_LOADER_ABI_VERSION;
	info.interp_fd = -1;
	snprintf(info.execfn, sizeof(info.execfn), "%s", e->execfn);
	struct cbox_platform *p = c->s->platform;
	int fd = p->ops->install_fd(p, c->trap, e->elf_fd, true);
	if (fd < 0)
		return fd;
	info.elf_fd = fd;
	if (e->interp_fd >= 0) {
		fd = p->ops->install_fd(p, c->trap, e->interp_fd, true);
		if (fd < 0)
			return fd;
		info.interp_fd = fd;
	}
	int r = cbox_mem_write(c->trap->tid, c->trap->args[2], &info, sizeof(info));
	close(e->elf_fd);
	if (e->interp_fd >= 0)
		close(e->interp_fd);
	free(e->execfn);
	free(e);
	t->exec = NULL;
	return r < 0 ? r : 0;
}
