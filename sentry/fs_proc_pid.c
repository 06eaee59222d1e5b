/*
 * The files of /proc/<pid> (and /proc/<pid>/task/<tid>): the host's own file of the task where it
 * describes only the task (its address space, its limits, its open files), rewritten where the
 * guest's view differs from the host's (pids in the guest's namespace, the guest's ids and
 * capabilities, the sentry hidden as tracer).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs_proc_internal.h"

void cbox_proc_append(struct cbox_proc_buf *b, const void *p, size_t n)
{
	if (b->err)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *d = realloc(b->data, cap);
		if (!d) {
			b->err = -ENOMEM;
			return;
		}
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void cbox_proc_printf(struct cbox_proc_buf *b, const char *fmt, ...)
{
	char small[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->err = -EINVAL;
		return;
	}
	if ((size_t)n < sizeof(small)) {
		cbox_proc_append(b, small, (size_t)n);
		return;
	}
	char *big = malloc((size_t)n + 1);
	if (!big) {
		b->err = -ENOMEM;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	cbox_proc_append(b, big, (size_t)n);
	free(big);
}

int cbox_proc_append_host(struct cbox_proc_buf *b, const char *what)
{
	char path[128], chunk[8192];
	snprintf(path, sizeof(path), "/proc/%s", what);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		cbox_proc_append(b, chunk, (size_t)n);
	int e = n < 0 ? -errno : 0;
	close(fd);
	/* ESRCH: the task exited between open and read. */
	return e == -ESRCH ? -ENOENT : e;
}

static int append_task(struct cbox_proc_buf *b, struct cbox_task *pt, const char *what)
{
	char path[96];
	snprintf(path, sizeof(path), "%d/%s", pt->tid, what);
	return cbox_proc_append_host(b, path);
}

/* A whole host file of the task as a NUL-terminated string (caller frees), or NULL. */
static char *task_text(struct cbox_task *pt, const char *what, int *err)
{
	struct cbox_proc_buf b = {0};
	*err = append_task(&b, pt, what);
	if (*err == 0 && b.err)
		*err = b.err;
	if (*err == 0 && !b.data)
		*err = -ENOENT;
	if (*err < 0) {
		free(b.data);
		return NULL;
	}
	return b.data;
}

/*
 * maps and smaps: the host's, but for the mappings of the loader (sentry/exec.c), which stays
 * mapped in every program: its file is in the task's host-side root, not in the guest's tree,
 * where the path names nothing (or another file). Such a mapping is shown as Linux shows one
 * whose file is no longer reachable by its path, " (deleted)" after it (as a memfd's
 * "/memfd:NAME (deleted)"): psutil's memory_maps checks that every path exists or is deleted,
 * and gdb and lsof do not look for a file there.
 */
static int gen_maps(struct cbox_sentry *s, struct cbox_task *pt, const char *what,
                    struct cbox_proc_buf *b)
{
	struct cbox_proc_buf raw = {0};
	int r = append_task(&raw, pt, what);
	if (r == 0 && raw.err)
		r = raw.err;
	if (r < 0 || !raw.data) { /* (an error, or no mapping: a zombie's) */
		free(raw.data);
		return r;
	}
	char *text = raw.data;
	const char *lp = cbox_sentry_loader_path(s);
	size_t lp_len = strlen(lp);
	for (char *line = text; *line;) {
		char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		unsigned long ino;
		int n = 0;
		bool loader = false;
		/* a mapping's line: "lo-hi perms offset maj:min inode   path" (smaps adds
		 * "Key: value" lines, which do not parse as one) */
		if (sscanf(line, "%*x-%*x %*4s %*x %*x:%*x %lu%n", &ino, &n) == 1 &&
		    ino == (unsigned long)s->loader_ino) {
			const char *p = line + n;
			while (*p == ' ')
				p++;
			loader = (size_t)(line + len - p) == lp_len && memcmp(p, lp, lp_len) == 0;
		}
		cbox_proc_append(b, line, len);
		if (loader)
			cbox_proc_printf(b, " (deleted)");
		if (!nl)
			break;
		cbox_proc_append(b, "\n", 1);
		line = nl + 1;
	}
	free(text);
	return 0;
}

static pid_t vpid_or_zero(struct cbox_sentry *s, long host)
{
	return host > 0 ? cbox_task_vpid_of(s, (pid_t)host) : 0;
}

/*
 * The state letter the guest sees. A task reading its own file is running, as Linux shows it;
 * another task stopped for the sentry ("t", tracing stop) is waiting for the kernel, which the
 * guest knows as sleeping: the tracer is the sentry and stays hidden. One held in a group-stop
 * (SIGSTOP, SIGTSTP...: the sentry keeps it there with PTRACE_LISTEN, still a tracing stop to
 * the host) is stopped, "T", as ps shows a stopped job; one the sentry holds at a stop for its
 * guest tracer (ptrace_emu.c: gdb, strace) is "t", tracing stop, as Linux shows a tracee. One
 * a SIGCONT has just woken is sleeping again, though the sentry has not yet taken its stop.
 */
static char guest_state(struct cbox_task *t, struct cbox_task *pt, char host)
{
	if (t == pt)
		return 'R';
	if (host == 't' && pt->pt.held)
		return 't';
	if (host == 't')
		return pt->stop_sig && !cbox_tracer_group_stop_ended(pt->tid) ? 'T' : 'S';
	return host;
}

/*
 * The task's name as /proc shows it. The host names a task that has just exec'd "cbox-loader",
 * the file it ran, until the loader names it after the program (loader.c's set_comm): a parent
 * reading its child's name right after the exec returned (ps, psutil's Process.name) saw that.
 * Linux names the task in the exec itself: shown here is the name that exec gave it.
 */
static const char *shown_comm(const struct cbox_task *pt, const char *host)
{
	if (pt->tg && pt->tg->comm[0] && strcmp(host, "cbox-loader") == 0)
		return pt->tg->comm;
	return host;
}

/* /proc/<pid>/stat with pid, ppid, pgrp, session and tpgid in the guest's namespace. */
static int gen_stat(struct cbox_sentry *s, struct cbox_task *t, struct cbox_task *pt,
                    struct cbox_proc_buf *b)
{
	int err;
	char *buf = task_text(pt, "stat", &err);
	if (!buf)
		return err;
	char *rp = strrchr(buf, ')');
	char *lp = strchr(buf, '(');
	char state;
	long ppid, pgrp, sid, tty, tpgid;
	int used = 0;
	if (!rp || !lp || lp > rp ||
	    sscanf(rp + 1, " %c %ld %ld %ld %ld %ld%n", &state, &ppid, &pgrp, &sid, &tty, &tpgid,
	           &used) < 6) {
		free(buf);
		return -EIO;
	}
	*rp = '\0';
	cbox_proc_printf(b, "%d (%s) %c %d %d %d %ld %d", cbox_task_vpid_of(s, pt->tid),
	                 shown_comm(pt, lp + 1), guest_state(t, pt, state), vpid_or_zero(s, ppid),
	                 vpid_or_zero(s, pgrp), vpid_or_zero(s, sid), tty,
	                 tpgid > 0 ? vpid_or_zero(s, tpgid) : -1);
	cbox_proc_append(b, rp + 1 + used, strlen(rp + 1 + used));
	free(buf);
	return 0;
}

static bool key_in(const char *key, const char *const *keys)
{
	for (; *keys; keys++)
		if (strcmp(key, *keys) == 0)
			return true;
	return false;
}

/* One line of status ("Key:\tvalue") as the guest sees it; false: keep the host's line. */
static bool status_line(struct cbox_sentry *s, struct cbox_task *t, struct cbox_task *pt,
                        const char *key, const char *val, struct cbox_proc_buf *b)
{
	static const char *const pids[] = {"Pid",   "PPid",   "Tgid",  "NStgid",
	                                   "NSpid", "NSpgid", "NSsid", NULL};
	static const char *const caps[] = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", NULL};
	const struct cbox_cred *cr = pt->cred;
	if (key_in(key, pids)) {
		/* NS*: the guest sees its own namespace only, so one level. */
		cbox_proc_printf(b, "%s:\t%d\n", key, vpid_or_zero(s, strtol(val, NULL, 10)));
	} else if (!strcmp(key, "TracerPid") || !strcmp(key, "Ngid")) {
		cbox_proc_printf(b, "%s:\t0\n", key); /* the sentry is nobody's tracer */
	} else if (cr && (!strcmp(key, "Uid") || !strcmp(key, "Gid"))) {
		/* The ids and capabilities are the sentry's (cbox/cred.h), not the host task's. */
		bool u = key[0] == 'U';
		cbox_proc_printf(b, "%s:\t%u\t%u\t%u\t%u\n", key, u ? cr->uid : cr->gid,
		                 u ? cr->euid : cr->egid, u ? cr->suid : cr->sgid,
		                 u ? cr->fsuid : cr->fsgid);
	} else if (cr && !strcmp(key, "Groups")) {
		cbox_proc_printf(b, "Groups:\t");
		for (uint32_t i = 0; i < cr->ngroups; i++)
			cbox_proc_printf(b, "%u ", cr->groups[i]);
		cbox_proc_printf(b, "\n");
	} else if (key_in(key, caps)) {
		uint64_t v = !cr                      ? 0
		             : !strcmp(key, "CapInh") ? cr->cap_inh
		             : !strcmp(key, "CapPrm") ? cr->cap_prm
		             : !strcmp(key, "CapEff") ? cr->cap_eff
		             : !strcmp(key, "CapBnd") ? cr->cap_bnd
		                                      : 0; /* no ambient capabilities */
		cbox_proc_printf(b, "%s:\t%016llx\n", key, (unsigned long long)v);
	} else if (!strcmp(key, "Name") && shown_comm(pt, val) != val) {
		cbox_proc_printf(b, "Name:\t%s\n", shown_comm(pt, val));
	} else if (!strcmp(key, "NoNewPrivs")) {
		cbox_proc_printf(b, "NoNewPrivs:\t%d\n", pt->no_new_privs ? 1 : 0);
	} else if (!strcmp(key, "Seccomp")) {
		cbox_proc_printf(b, "Seccomp:\t2\n");
	} else if (!strcmp(key, "State")) {
		char st = guest_state(t, pt, val[0]);
		const char *name = st == 'R'   ? "running"
		                   : st == 'S' ? "sleeping"
		                   : st == 'T' ? "stopped"
		                   : st == 't' ? "tracing stop"
		                               : NULL;
		if (!name)
			return false;
		cbox_proc_printf(b, "State:\t%c (%s)\n", st, name);
	} else if (!strcmp(key, "Umask") && pt->fs) {
		/* umask is the sentry's (sys_umask), the host task's stays as it started. */
		cbox_proc_printf(b, "Umask:\t%04o\n", (unsigned)pt->fs->umask);
	} else {
		return false;
	}
	return true;
}

static int gen_status(struct cbox_sentry *s, struct cbox_task *t, struct cbox_task *pt,
                      struct cbox_proc_buf *b)
{
	int err;
	char *buf = task_text(pt, "status", &err);
	if (!buf)
		return err;
	char *save = NULL;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');
		if (colon) {
			*colon = '\0';
			const char *val = colon + 1 + strspn(colon + 1, " \t");
			if (status_line(s, t, pt, line, val, b))
				continue;
			*colon = ':';
		}
		cbox_proc_printf(b, "%s\n", line);
	}
	free(buf);
	return 0;
}

/*
 * /proc/PID/auxv. The host's is the loader's (its exec was the loader's), so it is read where the
 * loader left the program's, fixed up in place: on the task's initial stack (its /proc/TID/stat
 * startstack, the argc word), after argv and envp. Linux keeps a copy made at the exec; a
 * program that overwrote its own initial stack changes what it reads here, which only it could.
 */
static int gen_auxv(struct cbox_task *pt, struct cbox_proc_buf *b)
{
	char buf[2048];
	const char *p = cbox_task_stat_field(cbox_task_stat_fields(pt->tid, buf, sizeof(buf)), 28);
	if (!p)
		return -ESRCH;
	uint64_t at = strtoull(p, NULL, 10), word;
	if (at == 0 || cbox_mem_read(pt->tid, at, &word, sizeof(word)) < 0)
		return 0; /* (a kernel thread's, or gone: empty, as Linux shows none) */
	at += (word + 2) * sizeof(word); /* argc, argv[], NULL */
	for (int i = 0; i < 65536; i++, at += sizeof(word)) {
		if (cbox_mem_read(pt->tid, at, &word, sizeof(word)) < 0)
			return 0;
		if (word == 0)
			break; /* the end of envp */
	}
	at += sizeof(word);
	for (int i = 0; i < 64; i++, at += 2 * sizeof(word)) {
		uint64_t pair[2];
		if (cbox_mem_read(pt->tid, at, pair, sizeof(pair)) < 0)
			return 0;
		cbox_proc_append(b, pair, sizeof(pair));
		if (pair[0] == 0) /* AT_NULL, included as Linux includes it */
			break;
	}
	return 0;
}

int cbox_proc_gen_pid(struct cbox_sentry *s, struct cbox_task *t, struct cbox_task *pt,
                      enum cbox_proc_kind kind, int arg, struct cbox_proc_buf *b)
{
	char what[64];
	switch (kind) {
	case P_STAT:
		return gen_stat(s, t, pt, b);
	case P_STATUS:
		return gen_status(s, t, pt, b);
	case P_CGROUP:
		/* The guest sees the root of its own cgroup namespace, as in a container. */
		cbox_proc_printf(b, "0::/\n");
		return 0;
	case P_FDINFO:
		snprintf(what, sizeof(what), "fdinfo/%d", arg);
		return append_task(b, pt, what);
	case P_AUXV:
		return pt == &s->tiny_init ? 0 : gen_auxv(pt, b);
	case P_SYSCALL:
		/* The call the task is in, as the host sees it: the guest's own number, arguments,
		 * stack and instruction pointers (a trapped call waits in it for the sentry's
		 * answer), "running", or "-1 SP PC" when it is stopped outside one. Opened only by
		 * a task that may inspect it (p_open), never for the tiny init, whose addresses are
		 * the sentry's. */
		return append_task(b, pt, "syscall");
	case P_WCHAN:
		/* Where in the kernel the task sleeps: "0", as Linux shows it for a running task
		 * or to a reader without ptrace access (ps -l: "-"). The host's answer would name
		 * its own functions (the seccomp notification a trapped call waits in), not a
		 * place in the kernel the guest sees. */
		cbox_proc_printf(b, "0");
		return 0;
	case P_NETFILE:
		/* (the sandbox's namespace: see cbox_proc_net_names) */
		if (strcmp(cbox_proc_net_names[arg], "unix") == 0)
			return cbox_proc_gen_net_unix(s, pt, b);
		snprintf(what, sizeof(what), "net/%s", cbox_proc_net_names[arg]);
		return append_task(b, pt, what);
	case P_CMDLINE:
	case P_ENVIRON:
	case P_MAPS:
	case P_SMAPS:
	case P_SMAPS_ROLLUP: {
		/* The tiny init is a copy of the sentry: its arguments are cbox-run's and its
		 * mappings the sentry's. It shows as its name, with no environment and, like a
		 * kernel thread, no mappings. */
		if (pt == &s->tiny_init) {
			if (kind == P_CMDLINE)
				cbox_proc_append(b, "cbox-init", sizeof("cbox-init"));
			return 0;
		}
		/* smaps and smaps_rollup: maps with each mapping's memory counted (psutil's USS,
		 * PSS and memory_maps, pmap -X); PSS divides a page among the processes that map
		 * it, the host's others included, as Linux counts it in a container. */
		static const char *const names[] = {
		    [P_CMDLINE] = "cmdline", [P_ENVIRON] = "environ",           [P_MAPS] = "maps",
		    [P_SMAPS] = "smaps",     [P_SMAPS_ROLLUP] = "smaps_rollup",
		};
		if (kind == P_MAPS || kind == P_SMAPS)
			return gen_maps(s, pt, names[kind], b);
		return append_task(b, pt, names[kind]);
	}
	case P_STATM:
	case P_COMM:
	case P_LIMITS:
	case P_UID_MAP:
	case P_GID_MAP:
	case P_SETGROUPS:
	case P_OOM_ADJ:
	case P_LOGINUID:
	case P_IO: {
		/* The task's own state, as the host keeps it: its address space (the loader's
		 * mappings included: they are the task's), its rlimits, its I/O counters (the
		 * reads and writes it made on the host: on its fds and the files the gofer opened
		 * for it, not the sentry's own reads of its /proc files). */
		static const char *const names[] = {
		    [P_STATM] = "statm",
		    [P_COMM] = "comm",
		    [P_LIMITS] = "limits",
		    [P_UID_MAP] = "uid_map",
		    [P_GID_MAP] = "gid_map",
		    [P_SETGROUPS] = "setgroups",
		    [P_OOM_ADJ] = "oom_score_adj",
		    [P_LOGINUID] = "loginuid",
		    [P_IO] = "io",
		};
		/* Every id is a guest id (cbox/cred.h), as in a container without a user namespace:
		 * the maps say so, not the host's one id (with which every guest id stands, but for
		 * the one that stands for the others). */
		if (kind == P_UID_MAP || kind == P_GID_MAP) {
			cbox_proc_printf(b, "%10u %10u %10u\n", 0u, 0u, 4294967295u);
			return 0;
		}
		if (kind == P_SETGROUPS) {
			cbox_proc_printf(b, "allow\n"); /* setgroups is the sentry's (cred.c) */
			return 0;
		}
		if (kind == P_COMM && pt->tg && pt->tg->comm[0]) {
			int err;
			char *host = task_text(pt, "comm", &err);
			if (!host)
				return err;
			host[strcspn(host, "\n")] = '\0';
			cbox_proc_printf(b, "%s\n", shown_comm(pt, host));
			free(host);
			return 0;
		}
		return append_task(b, pt, names[kind]);
	}
	default:
		return -EINVAL;
	}
}
