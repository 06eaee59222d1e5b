/* The sentry's table of guest tasks, keyed by host tid. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/capability.h>

#include "cbox/log.h"
#include "cbox/procfs.h"
#include "internal.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

struct cbox_task *cbox_task_find(struct cbox_sentry *s, pid_t tid)
{
	for (struct cbox_task *t = s->tasks[(unsigned)tid % CBOX_TASK_HASH]; t; t = t->next_in_hash)
		if (t->tid == tid)
			return t;
	return NULL;
}

static void zombie_drop_tid(struct cbox_sentry *s, pid_t tid);

struct cbox_task *cbox_task_new(struct cbox_sentry *s, pid_t tid)
{
	zombie_drop_tid(s, tid); /* (its tid was free: the zombie was waited for) */
	struct cbox_task *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->pidfd = -1;
	unsigned h = (unsigned)tid % CBOX_TASK_HASH;
	t->next_in_hash = s->tasks[h];
	s->tasks[h] = t;
	s->ntasks++;
	return t;
}

/* ---- busy text ---- */

static struct cbox_text *text_find(struct cbox_sentry *s, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < s->ntext; i++)
		if (s->text[i].dev == dev && s->text[i].ino == ino)
			return &s->text[i];
	return NULL;
}

bool cbox_text_busy(struct cbox_sentry *s, uint64_t dev, uint64_t ino)
{
	return (dev || ino) && text_find(s, dev, ino) != NULL;
}

/* Count one more thread group running dev/ino. Out of memory: not counted (the file is then
 * writable while it runs, as it was before the sentry tracked this). */
static bool text_hold(struct cbox_sentry *s, uint64_t dev, uint64_t ino)
{
	struct cbox_text *x = text_find(s, dev, ino);
	if (x) {
		x->refs++;
		return true;
	}
	if (s->ntext == s->text_cap) {
		size_t cap = s->text_cap ? s->text_cap * 2 : 16;
		struct cbox_text *n = realloc(s->text, cap * sizeof(*n));
		if (!n)
			return false;
		s->text = n;
		s->text_cap = cap;
	}
	s->text[s->ntext++] = (struct cbox_text){dev, ino, 1};
	return true;
}

static void text_drop(struct cbox_sentry *s, struct cbox_thread_group *tg)
{
	for (int i = 0; i < tg->ntext; i++) {
		struct cbox_text *x = text_find(s, tg->text[i].dev, tg->text[i].ino);
		if (x && --x->refs == 0)
			*x = s->text[--s->ntext];
	}
	tg->ntext = 0;
}

void cbox_text_exec(struct cbox_sentry *s, struct cbox_thread_group *tg, const int fds[2])
{
	text_drop(s, tg);
	for (int i = 0; i < 2; i++) {
		struct stat st;
		if (fds[i] < 0 || fstat(fds[i], &st) < 0)
			continue;
		if (text_hold(s, (uint64_t)st.st_dev, (uint64_t)st.st_ino))
			tg->text[tg->ntext++] =
			    (struct cbox_text_id){(uint64_t)st.st_dev, (uint64_t)st.st_ino};
	}
}

void cbox_text_fork(struct cbox_sentry *s, struct cbox_thread_group *to,
                    const struct cbox_thread_group *from)
{
	to->ntext = 0;
	for (int i = 0; i < from->ntext; i++)
		if (text_hold(s, from->text[i].dev, from->text[i].ino))
			to->text[to->ntext++] = from->text[i];
}

/* ---- files opened for writing ----
 * cbox_text_writers reads every guest process's fd table from /proc, about 100 us an exec, and
 * an exec makes it twice (program and interpreter). Programs are nearly always files no guest
 * task ever opened for writing. Every way a guest task gets a file open for writing passes the
 * sentry: its opens are installed by the sentry (cbox_sys_install notes them), dup, fork and
 * SCM_RIGHTS only share such an fd, and the fds a task the sentry starts already holds (the
 * caller's stdout redirected to a file) are noted at its start. So a file not in this filter
 * is not open for writing by any guest task, and the scan is needed only for the others.
 * False positives (a full filter included) only cost the scan. */
static uint64_t written_bit(uint64_t dev, uint64_t ino, uint64_t k)
{
	uint64_t x = ino * 0x9e3779b97f4a7c15ULL ^ (dev + k) * 0xc2b2ae3d27d4eb4fULL;
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 29;
	return x % CBOX_WRITTEN_BITS;
}

void cbox_text_note_writer(struct cbox_sentry *s, uint64_t dev, uint64_t ino)
{
	for (uint64_t k = 0; k < 2; k++) {
		uint64_t b = written_bit(dev, ino, k);
		s->written[b / 64] |= 1ULL << (b % 64);
	}
}

bool cbox_text_maybe_written(const struct cbox_sentry *s, uint64_t dev, uint64_t ino)
{
	for (uint64_t k = 0; k < 2; k++) {
		uint64_t b = written_bit(dev, ino, k);
		if (!(s->written[b / 64] & (1ULL << (b % 64))))
			return false;
	}
	return true;
}

/* Whether fd (a name in /proc/tgid/fd, open as dir) of process tgid is a regular file open with
 * write access (its fdinfo's flags), and with want, want's file; *st is its stat. */
static bool opened_for_writing(int dir, pid_t tgid, const char *fd, const struct stat *want,
                               struct stat *st)
{
	if (fstatat(dir, fd, st, 0) < 0 || !S_ISREG(st->st_mode) ||
	    (want && (st->st_dev != want->st_dev || st->st_ino != want->st_ino)))
		return false;
	char info[320], buf[256];
	snprintf(info, sizeof(info), "/proc/%d/fdinfo/%s", tgid, fd);
	int f = open(info, O_RDONLY | O_CLOEXEC);
	ssize_t n = f < 0 ? -1 : read(f, buf, sizeof(buf) - 1);
	if (f >= 0)
		close(f);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	char *flags = strstr(buf, "flags:");
	return flags && (strtoul(flags + 6, NULL, 8) & O_ACCMODE) != O_RDONLY;
}

/* Whether process tgid has want's file open with write access (its /proc fd and fdinfo files;
 * only the fds of want's file have their fdinfo read). */
static bool write_opens(pid_t tgid, const struct stat *want)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", tgid);
	DIR *dir = opendir(path);
	if (!dir)
		return false;
	bool found = false;
	struct dirent *e;
	struct stat st;
	while (!found && (e = readdir(dir)) != NULL)
		found = e->d_name[0] != '.' &&
		        opened_for_writing(dirfd(dir), tgid, e->d_name, want, &st);
	closedir(dir);
	return found;
}

/* A task the sentry starts holds the caller's stdin, stdout and stderr, and nothing else past
 * its exec (every other fd it has then is the sentry's, close-on-exec: guest_init.c). Only
 * those three are looked at: listing all of /proc/PID/fd took 0.2-0.4 ms of every start. */
void cbox_text_note_fds(struct cbox_sentry *s, pid_t tgid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", tgid);
	int dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return;
	static const char *const stdio[] = {"0", "1", "2"};
	struct stat st;
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(stdio); i++)
		if (opened_for_writing(dir, tgid, stdio[i], NULL, &st))
			cbox_text_note_writer(s, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
	close(dir);
}

bool cbox_text_writers(struct cbox_sentry *s, int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return false;
	if (!cbox_text_maybe_written(s, (uint64_t)st.st_dev, (uint64_t)st.st_ino))
		return false;
	for (unsigned h = 0; h < CBOX_TASK_HASH; h++)
		for (struct cbox_task *t = s->tasks[h]; t; t = t->next_in_hash)
			if (t->tg && t->tid == t->tg->host_tgid && write_opens(t->tid, &st))
				return true;
	return false;
}

static void tg_put(struct cbox_sentry *s, struct cbox_thread_group *tg)
{
	if (!tg || --tg->refs > 0)
		return;
	text_drop(s, tg);
	free(tg->exe);
	free(tg->cmdline);
	free(tg);
}

static void fs_put(struct cbox_sentry *s, struct cbox_fs_ctx *fs)
{
	if (!fs || --fs->refs > 0)
		return;
	cbox_dentry_put(s, fs->cwd);
	cbox_dentry_put(s, fs->root);
	free(fs);
}

static void exec_free(struct cbox_exec_pending *e)
{
	if (!e)
		return;
	if (e->elf_fd >= 0)
		close(e->elf_fd);
	if (e->interp_fd >= 0)
		close(e->interp_fd);
	free(e->execfn);
	free(e);
}

void cbox_task_remove(struct cbox_sentry *s, struct cbox_task *t)
{
	cbox_ptrace_emu_forget(s, t);
	struct cbox_task **pp = &s->tasks[(unsigned)t->tid % CBOX_TASK_HASH];
	while (*pp && *pp != t)
		pp = &(*pp)->next_in_hash;
	if (*pp)
		*pp = t->next_in_hash;
	s->ntasks--;
	if (t->pidfd >= 0)
		close(t->pidfd);
	tg_put(s, t->tg);
	fs_put(s, t->fs);
	cbox_fdtable_put(s, t->files);
	cbox_cred_put(t->cred);
	exec_free(t->exec);
	free(t);
}

/* ---- zombies ----
 *
 * A process that has exited and whose parent has not waited for it yet is a zombie: Linux keeps
 * its /proc/PID (stat and status say Z, ps shows it <defunct>, psutil finds it) until the wait.
 * The sentry forgets a task when it exits (its fds, cwd and program go with it), so it keeps a
 * small record of each process that exits, for /proc only, while the host's task is a zombie:
 * checked against the sentry's procfs each time a record is found, and every record at each
 * process's exit and each listing of /proc, so that the list holds no more than the zombies
 * there are.
 * Its files are the host's files of the zombie (as for any task), its links (exe, cwd, root)
 * and fd directory empty, as Linux has them for a zombie.
 */
static bool host_zombie(pid_t tid)
{
	char buf[512];
	const char *f = cbox_task_stat_fields(tid, buf, sizeof(buf));
	return f && f[0] == 'Z';
}

static void zombie_free(struct cbox_task *z)
{
	cbox_cred_put(z->cred);
	free(z);
}

/* Drop the record of host tid (> 0), or (0) those of every zombie the host no longer has. */
static void zombie_drop_tid(struct cbox_sentry *s, pid_t tid)
{
	for (struct cbox_task **pp = &s->zombies; *pp;) {
		struct cbox_task *z = *pp;
		if (tid > 0 ? z->tid == tid : !host_zombie(z->tid)) {
			*pp = z->next_in_hash;
			zombie_free(z);
		} else {
			pp = &z->next_in_hash;
		}
	}
}

void cbox_task_zombies_sweep(struct cbox_sentry *s)
{
	zombie_drop_tid(s, 0);
}

void cbox_task_zombie_add(struct cbox_sentry *s, struct cbox_task *t)
{
	/* A process's last task is its leader (Linux reports the leader's exit after its other
	 * threads'); the guest's first task ends the sandbox. (No record can hold t's tid:
	 * cbox_task_new dropped it.) */
	if (!t->tg || t->tg->host_tgid != t->tid || t->tid == s->init_tid)
		return;
	cbox_task_zombies_sweep(s);
	pid_t vid = cbox_task_vpid(s, t);
	if (vid <= 0 || !host_zombie(t->tid))
		return;
	struct cbox_task *z = calloc(1, sizeof(*z));
	if (!z)
		return; /* (/proc then does not show it, as before records were kept) */
	z->tid = t->tid;
	z->vtid = vid;
	z->pidfd = -1;
	z->zombie = true;
	z->parent_tid = t->parent_tid;
	z->cred = t->cred ? cbox_cred_get(t->cred) : NULL;
	z->next_in_hash = s->zombies;
	s->zombies = z;
}

struct cbox_task *cbox_task_zombie(struct cbox_sentry *s, pid_t vid)
{
	for (struct cbox_task **pp = &s->zombies; *pp; pp = &(*pp)->next_in_hash) {
		struct cbox_task *z = *pp;
		if (z->vtid != vid)
			continue;
		if (host_zombie(z->tid))
			return z;
		*pp = z->next_in_hash;
		zombie_free(z);
		return NULL;
	}
	return NULL;
}

/* The last of the numbers on the line of /proc/PID/status that starts with field ("NSpid:"),
 * when there are at least two (the task is in a namespace below the sentry's), else 0. */
static pid_t ns_last(pid_t host_pid, const char *field)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/status", host_pid);
	if (cbox_proc_read(path, buf, sizeof(buf)) <= 0)
		return 0;
	char key[32];
	snprintf(key, sizeof(key), "\n%s", field);
	char *line = strstr(buf, key);
	if (!line)
		return 0;
	line += strlen(key);
	char *end = strchr(line, '\n');
	if (end)
		*end = '\0';
	int fields = 0;
	long last = 0;
	char *save = NULL;
	for (char *tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		last = strtol(tok, NULL, 10);
		fields++;
	}
	return fields >= 2 ? (pid_t)last : 0;
}

/*
 * The pid a host task has inside the guest's pid namespace: the last NSpid field of its status in
 * the sentry's private /proc (which shows the sandbox's outer pid namespace). 0 when the task is
 * not in the guest's namespace or is gone.
 */
pid_t cbox_task_vpid_of(struct cbox_sentry *s, pid_t host_pid)
{
	(void)s;
	return ns_last(host_pid, "NSpid:");
}

pid_t cbox_task_vpgid_of(pid_t host_pid)
{
	return ns_last(host_pid, "NSpgid:");
}

pid_t cbox_task_vpid(struct cbox_sentry *s, struct cbox_task *t)
{
	if (!t->vtid)
		t->vtid = cbox_task_vpid_of(s, t->tid);
	/* (a group's leader is the group: one read of its status, ~25 us, not two) */
	if (t->tg && !t->tg->vpid)
		t->tg->vpid =
		    t->tg->host_tgid == t->tid ? t->vtid : cbox_task_vpid_of(s, t->tg->host_tgid);
	return t->tg ? t->tg->vpid : t->vtid;
}

int cbox_task_stat(pid_t tid, struct cbox_task_stat *out)
{
	char buf[1024];
	const char *f = cbox_task_stat_fields(tid, buf, sizeof(buf));
	char state;
	int ppid, pgid, sid;
	unsigned tty;
	if (!f || sscanf(f, "%c %d %d %d %u", &state, &ppid, &pgid, &sid, &tty) != 5)
		return -ESRCH;
	/* tty_nr: the minor's low 8 bits, the major, then the minor's high bits */
	*out = (struct cbox_task_stat){
	    .ppid = ppid,
	    .pgid = pgid,
	    .sid = sid,
	    .tty = tty ? makedev((tty >> 8) & 0xfff, (tty & 0xff) | ((tty >> 12) & 0xfff00)) : 0};
	return 0;
}

struct cbox_task *cbox_task_by_vtid(struct cbox_sentry *s, pid_t vid)
{
	if (vid <= 0)
		return NULL;
	for (size_t h = 0; h < CBOX_TASK_HASH; h++)
		for (struct cbox_task *x = s->tasks[h]; x; x = x->next_in_hash) {
			if (!x->tg)
				continue;
			cbox_task_vpid(s, x); /* fills x->vtid */
			if (x->vtid == vid)
				return x;
		}
	return NULL;
}

bool cbox_task_may_access(const struct cbox_task *t, const struct cbox_task *target, bool fscreds)
{
	if (t->tg && t->tg == target->tg)
		return true;
	/* A zombie's memory is gone, and with it the dumpable flag: Linux checks the ids only. */
	if (target->zombie)
		return t->cred && target->cred &&
		       cbox_cred_may_ptrace(t->cred, target->cred, fscreds);
	/* The tiny init has no thread group of the guest's: not dumpable on the host, and
	 * closed to every guest task (guest_init.c). */
	if (!target->tg || !t->cred || !target->cred)
		return false;
	if (!cbox_cred_may_ptrace(t->cred, target->cred, fscreds))
		return false;
	return !target->tg->nondumpable || cbox_cred_capable(t->cred, CAP_SYS_PTRACE);
}

void cbox_task_each(struct cbox_sentry *s, bool (*fn)(struct cbox_task *t, void *ctx), void *ctx)
{
	for (size_t h = 0; h < CBOX_TASK_HASH; h++)
		for (struct cbox_task *x = s->tasks[h]; x; x = x->next_in_hash)
			if (x->tg && !fn(x, ctx))
				return;
}

struct cbox_task *cbox_task_find_vpid(struct cbox_sentry *s, pid_t vpid)
{
	for (size_t h = 0; h < CBOX_TASK_HASH; h++)
		for (struct cbox_task *t = s->tasks[h]; t; t = t->next_in_hash)
			if (t->tg && t->tg->host_tgid == t->tid && cbox_task_vpid(s, t) == vpid)
				return t;
	return NULL;
}

/*
 * A copy of the task's fd. pidfd_getfd needs ptrace access to the task, which the sentry has as
 * its tracer; the copy shares the open file description (offset, flags) with the guest's fd.
 */
int cbox_task_getfd(struct cbox_task *t, int fd)
{
	if (t->pidfd < 0) {
		t->pidfd = (int)syscall(SYS_pidfd_open, t->tid, PIDFD_THREAD);
		if (t->pidfd < 0)
			t->pidfd = (int)syscall(SYS_pidfd_open, t->tid, 0);
		if (t->pidfd < 0)
			return -errno;
	}
	int r = (int)syscall(SYS_pidfd_getfd, t->pidfd, fd, 0);
	return r < 0 ? -errno : r;
}
