/*
 * exec: the guest's execve becomes an exec of the loader, which gets the real program from the
 * sentry (see loader_abi.h). Everything that can fail the way Linux fails an execve (ENOENT,
 * EACCES, ENOEXEC, ELOOP...) is checked here, before the point of no return. "#!" scripts are
 * resolved here too, as binfmt_script does: the interpreter becomes the program and the argv
 * the loader receives is rewritten to [interpreter, optional argument, script, argv[1]...].
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
#include "cbox/shebang.h"
#include "cbox/loader_abi.h"
#include "cbox/log.h"
#include "cbox/syscalls.h"
#include "internal.h"

static int open_checked(struct cbox_sentry *s, struct cbox_task *t, int dirfd, const char *path,
                        int walk_flags, struct cbox_dentry **out)
{
	for (int tries = 0;; tries++) {
		struct cbox_dentry *d;
		int r =
		    cbox_vfs_walk(s, t, dirfd, path, walk_flags | CBOX_WALK_OPEN_READ, &d, NULL);
		if (r < 0)
			return r;
		/* Linux: only regular files with an execute bit for the caller run; a symlink that
		 * was not to be followed (execveat AT_SYMLINK_NOFOLLOW) is ELOOP. */
		r = S_ISLNK(d->mode)    ? -ELOOP
		    : !S_ISREG(d->mode) ? -EACCES
		                        : cbox_vfs_may(t, d, X_OK);
		int fd = r < 0 ? r : cbox_vfs_open(s, t, d, O_RDONLY);
		if (fd >= 0) {
			*out = d;
			return fd;
		}
		/* A program the host rebuilt or removed since the sentry cached its name: look it
		 * up once more (see open_path in syscalls/sys_file.c). */
		bool again = r == 0 && tries == 0 && cbox_vfs_drop_stale(s, d, fd);
		cbox_dentry_put(s, d);
		if (!again)
			return fd;
	}
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
	if (cbox_text_writers(s, fd)) {
		close(fd);
		return -ETXTBSY;
	}
	return fd;
}

/* The argv of the program being exec'd, as scripts rewrite it: pre[] (owned strings), then the
 * guest's own argv from index skip. */
struct argv_edit {
	char *pre[3 * CBOX_SHEBANG_MAX_DEPTH + 1];
	int npre;
	size_t skip;
};

static void argv_edit_free(struct argv_edit *a)
{
	for (int i = 0; i < a->npre; i++)
		free(a->pre[i]);
	a->npre = 0;
}

/* binfmt_script: argv[0] is dropped, [interp, arg?, filename] put in front. */
static int argv_edit_script(struct argv_edit *a, const struct cbox_shebang *sb, const char *file)
{
	if (a->npre > 0) {
		free(a->pre[0]);
		memmove(a->pre, a->pre + 1, (size_t)(a->npre - 1) * sizeof(a->pre[0]));
		a->npre--;
	} else {
		a->skip++;
	}
	const char *add[3] = {sb->interp, sb->has_arg ? sb->arg : NULL, file};
	char *copies[3] = {NULL, NULL, NULL};
	int n = 0;
	for (int i = 0; i < 3; i++) {
		if (!add[i])
			continue;
		if (!(copies[n++] = strdup(add[i]))) {
			for (int j = 0; j < n; j++)
				free(copies[j]);
			return -ENOMEM;
		}
	}
	memmove(a->pre + n, a->pre, (size_t)a->npre * sizeof(a->pre[0]));
	memcpy(a->pre, copies, (size_t)n * sizeof(char *));
	a->npre += n;
	return 0;
}

/* Most argv entries read back when a script's argv is rebuilt (Linux's limit is the 6 MiB of
 * MAX_ARG_STRLEN * ... and the stack rlimit; past this the exec gives E2BIG). */
#define ARGV_MAX 131072

/*
 * Write the edited argv below `below` in the guest's stack (exec replaces that memory anyway):
 * the prepended strings, then the pointer array (the guest's own argv entries are reused by
 * address). *out gets its address. -E2BIG when it does not fit in the mapped stack.
 */
static int write_argv(struct cbox_sysctx *c, const struct argv_edit *a, uint64_t argv,
                      uint64_t below, uint64_t *out)
{
	size_t n = 0;
	uint64_t *orig = NULL;
	if (argv) {
		orig = malloc(ARGV_MAX * sizeof(*orig));
		if (!orig)
			return -ENOMEM;
		for (; n < ARGV_MAX; n++) {
			int r = cbox_sys_read(c, argv + n * 8, &orig[n], 8);
			if (r < 0) {
				free(orig);
				return r;
			}
			if (!orig[n])
				break;
		}
		if (n == ARGV_MAX) {
			free(orig);
			return -E2BIG;
		}
	}
	size_t rest = n > a->skip ? n - a->skip : 0;
	size_t nptr = (size_t)a->npre + rest + 1, strs = 0;
	for (int i = 0; i < a->npre; i++)
		strs += strlen(a->pre[i]) + 1;
	uint64_t base = (below - strs - nptr * 8) & ~15ULL;
	uint64_t *ptrs = malloc(nptr * sizeof(*ptrs));
	int r = ptrs ? 0 : -ENOMEM;
	uint64_t at = base + nptr * 8;
	for (int i = 0; r == 0 && i < a->npre; i++) {
		size_t l = strlen(a->pre[i]) + 1;
		r = cbox_mem_write(c->trap->tid, at, a->pre[i], l) < 0 ? -E2BIG : 0;
		ptrs[i] = at;
		at += l;
	}
	for (size_t i = 0; r == 0 && i < rest; i++)
		ptrs[a->npre + i] = orig[a->skip + i];
	if (r == 0) {
		ptrs[nptr - 1] = 0;
		r = cbox_mem_write(c->trap->tid, base, ptrs, nptr * 8) < 0 ? -E2BIG : 0;
	}
	free(ptrs);
	free(orig);
	*out = base;
	return r;
}

/* The loader's path, written below the guest's stack pointer (past the red zone): the register
 * rewrite needs it in guest memory, and exec replaces that memory anyway. A script's argv goes
 * below it. */
static int64_t rewrite_to_loader(struct cbox_sysctx *c, const struct argv_edit *edit, uint64_t argv,
                                 uint64_t envp)
{
	struct cbox_trap *tr = c->trap;
	const char *lp = cbox_sentry_loader_path(c->s);
	size_t len = strlen(lp) + 1;
	uint64_t at = (tr->regs.rsp - 128 - 256) & ~15ULL;
	if (cbox_mem_write(tr->tid, at, lp, len) < 0)
		return -EFAULT;
	if (edit->npre > 0 || edit->skip > 0) {
		int r = write_argv(c, edit, argv, at, &argv);
		if (r < 0)
			return r;
	}
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

/*
 * Open the program for path, following "#!" interpreters as binfmt_script does (at most
 * CBOX_SHEBANG_MAX_DEPTH of them, else ELOOP) and recording the argv changes in edit. Returns the
 * host fd of the final (ELF) file and *out its dentry, or -errno.
 */
static int open_program(struct cbox_sentry *s, struct cbox_task *t, int dirfd, const char *path,
                        int wf, struct argv_edit *edit, struct cbox_dentry **out)
{
	char cur[PATH_MAX];
	snprintf(cur, sizeof(cur), "%s", path);
	for (int depth = 0;; depth++) {
		struct cbox_dentry *d;
		int fd = open_checked(s, t, dirfd, cur, wf, &d);
		if (fd < 0)
			return depth > 0 && fd == -EACCES ? -EACCES : fd;
		char hdr[CBOX_SHEBANG_BUF];
		ssize_t n = pread(fd, hdr, sizeof(hdr), 0);
		struct cbox_shebang sb;
		int r = n < 0 ? -EIO : cbox_shebang_parse(hdr, (size_t)n, &sb);
		if (r == 0) {
			*out = d;
			return fd;
		}
		close(fd);
		cbox_dentry_put(s, d);
		if (r < 0)
			return r;
		if (depth == CBOX_SHEBANG_MAX_DEPTH)
			return -ELOOP;
		/* The script's name as the interpreter gets it: the path given to execve, or for
		 * execveat on an fd with an empty path, /dev/fd/N. */
		char file[PATH_MAX];
		if (depth == 0 && cur[0] == '\0')
			snprintf(file, sizeof(file), "/dev/fd/%d", dirfd);
		else
			snprintf(file, sizeof(file), "%s", cur);
		r = argv_edit_script(edit, &sb, file);
		if (r < 0)
			return r;
		snprintf(cur, sizeof(cur), "%s", sb.interp);
		dirfd = AT_FDCWD;
		wf = CBOX_WALK_FOLLOW;
	}
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
	struct argv_edit edit = {.npre = 0};
	int elf_fd = open_program(c->s, t, dirfd, path, wf, &edit, &d);
	if (elf_fd < 0) {
		argv_edit_free(&edit);
		return elf_fd;
	}
	/* Linux refuses to run a file some process has open for writing (ETXTBSY): it could
	 * change under the running program. The program's own file, then its interpreter's. */
	if (cbox_text_writers(c->s, elf_fd)) {
		close(elf_fd);
		cbox_dentry_put(c->s, d);
		argv_edit_free(&edit);
		return -ETXTBSY;
	}
	int interp_fd = prepare(c->s, t, elf_fd);
	if (interp_fd < -1) {
		close(elf_fd);
		cbox_dentry_put(c->s, d);
		argv_edit_free(&edit);
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
		argv_edit_free(&edit);
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
	/* (the name the loader gives the task, loader.c's set_comm, from the same execfn) */
	const char *base = strrchr(execfn, '/');
	snprintf(t->tg->comm, sizeof(t->tg->comm), "%s", base ? base + 1 : execfn);
	int64_t ret = rewrite_to_loader(c, &edit, argv, envp);
	argv_edit_free(&edit);
	return ret;
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
	/* The host's exec of the loader succeeded: the new image's credentials are exec's (an
	 * exec that fails earlier keeps the old ones, as in Linux). */
	if (cbox_cred_exec(&t->cred) < 0)
		return -ENOMEM;
	struct cbox_loader_info info;
	memset(&info, 0, sizeof(info));
	info.version = CBOX_LOADER_ABI_VERSION;
	info.interp_fd = -1;
	/* A guest tracer is owed the exec's stops at the program's entry (see below). */
	if (t->pt.tracer) {
		info.flags = CBOX_LOADER_REPORT_START;
		t->loader_start = true;
	}
	snprintf(info.execfn, sizeof(info.execfn), "%s", e->execfn);
	struct cbox_platform *p = c->s->platform;
	c->trap->install_sock = cbox_fdtable_install_sock(c->task->files);
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

/*
 * The loader's start request (loader_abi.h): the task leaves the loader at the program's entry
 * with the registers a fresh exec gives (all zero but the stack pointer, the instruction pointer
 * and the interrupt flag), set by the sentry at this ptrace stop; then its tracer gets the exec's
 * stops (ptrace_emu.c). Only the task whose loader the sentry told to make the request gets this
 * answer, once; CBOX_SYSRET_CONTINUE otherwise (an ordinary execve).
 */
int64_t cbox_exec_loader_start(struct cbox_sysctx *c)
{
	struct cbox_task *t = c->task;
	const uint64_t *a = c->trap->args;
	if (!t->loader_start || !c->trap->ptrace_stop || a[0] != 0 ||
	    (uint32_t)a[3] != CBOX_LOADER_START)
		return CBOX_SYSRET_CONTINUE;
	t->loader_start = false;
	struct user_regs_struct *r = &c->trap->regs;
	struct user_regs_struct fresh = {.rip = a[1],
	                                 .rsp = a[2],
	                                 .eflags = 0x202, /* IF (and the reserved bit 1) */
	                                 .cs = r->cs,
	                                 .ss = r->ss,
	                                 .ds = r->ds,
	                                 .es = r->es,
	                                 .fs = r->fs,
	                                 .gs = r->gs,
	                                 .fs_base = r->fs_base,
	                                 .gs_base = r->gs_base,
	                                 .orig_rax = r->orig_rax};
	*r = fresh; /* (rcx and r11 zero: the kernel returns by IRET, restoring each exactly) */
	cbox_ptrace_emu_exec_done(c->s, t);
	return 0;
}
