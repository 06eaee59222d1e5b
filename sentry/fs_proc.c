/*
 * /proc for the guest: the tree (lookup, readdir, open, readlink). The contents come from
 * fs_proc_pid.c (per process) and fs_proc_sys.c (system-wide), built from the sentry's task table
 * and from the sentry's private procfs of the sandbox's pid namespace (mounted at /proc in the
 * sentry's own mount namespace), with every pid translated into the guest's pid namespace and the
 * sentry itself hidden.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/log.h"
#include "fs_proc_internal.h"

#define DIR_MODE (S_IFDIR | 0555)
#define LNK_MODE (S_IFLNK | 0777)
#define RO_MODE  (S_IFREG | 0444)
#define RW_MODE  (S_IFREG | 0644)

struct entry {
	const char *name;
	enum cbox_proc_kind kind;
	uint32_t mode;
};

static const struct entry root_entries[] = {
    {"cgroups", P_CGROUPS, RO_MODE},
    {"cmdline", P_CMDLINE_SYS, RO_MODE},
    {"cpuinfo", P_CPUINFO, RO_MODE},
    {"diskstats", P_DISKSTATS, RO_MODE},
    {"filesystems", P_FILESYSTEMS, RO_MODE},
    {"loadavg", P_LOADAVG, RO_MODE},
    {"meminfo", P_MEMINFO, RO_MODE},
    {"mounts", P_MOUNTS_LINK, LNK_MODE},
    {"net", P_NET_LINK, LNK_MODE},
    {"partitions", P_PARTITIONS, RO_MODE},
    {"self", P_SELF, LNK_MODE},
    {"stat", P_STATF, RO_MODE},
    {"sys", P_SYS, DIR_MODE},
    {"thread-self", P_THREAD_SELF, LNK_MODE},
    {"uptime", P_UPTIME, RO_MODE},
    {"version", P_VERSION, RO_MODE},
    {"vmstat", P_VMSTAT, RO_MODE},
};

static const struct entry sys_entries[] = {
    {"fs", P_SYS_FS, DIR_MODE},
    {"kernel", P_SYS_KERNEL, DIR_MODE},
    {"vm", P_SYS_VM, DIR_MODE},
};

/* Linux shows most sysctls 0644 (root may write them); the guest's root lacks the capability,
 * so a write is refused at open (EACCES), as for any read-only proc file. */
static const struct entry kernel_entries[] = {
    {"cap_last_cap", P_CAP_LAST_CAP, RO_MODE},
    {"dmesg_restrict", P_DMESG_RESTRICT, RW_MODE},
    {"domainname", P_DOMAINNAME, RW_MODE},
    {"hostname", P_HOSTNAME, RW_MODE},
    {"ngroups_max", P_NGROUPS_MAX, RO_MODE},
    {"osrelease", P_OSRELEASE, RO_MODE},
    {"ostype", P_OSTYPE, RO_MODE},
    {"overflowgid", P_OVERFLOWGID, RW_MODE},
    {"overflowuid", P_OVERFLOWUID, RW_MODE},
    {"pid_max", P_PID_MAX, RW_MODE},
    {"random", P_SYS_RANDOM, DIR_MODE},
};

static const struct entry random_entries[] = {
    {"boot_id", P_BOOT_ID, RO_MODE},
    {"uuid", P_UUID, RO_MODE},
};

static const struct entry vm_entries[] = {{"overcommit_memory", P_OVERCOMMIT, RW_MODE}};

static const struct entry fs_entries[] = {
    {"file-max", P_FILE_MAX, RW_MODE},
    {"nr_open", P_NR_OPEN, RW_MODE},
};

/* "task" must stay last: a thread's directory (task/<tid>) has everything else. */
static const struct entry pid_entries[] = {
    {"auxv", P_AUXV, S_IFREG | 0400},
    {"cgroup", P_CGROUP, RO_MODE},
    {"cmdline", P_CMDLINE, RO_MODE},
    {"comm", P_COMM, RW_MODE},
    {"cwd", P_CWD, LNK_MODE},
    {"environ", P_ENVIRON, S_IFREG | 0400},
    {"exe", P_EXE, LNK_MODE},
    {"fd", P_FDDIR, S_IFDIR | 0500},
    {"fdinfo", P_FDINFODIR, S_IFDIR | 0500},
    {"gid_map", P_GID_MAP, RW_MODE},
    {"io", P_IO, S_IFREG | 0400},
    {"limits", P_LIMITS, RO_MODE},
    {"loginuid", P_LOGINUID, RW_MODE},
    {"maps", P_MAPS, RO_MODE},
    {"mem", P_MEM, S_IFREG | 0600},
    {"mountinfo", P_MOUNTINFO, RO_MODE},
    {"mounts", P_MOUNTS, RO_MODE},
    {"net", P_NETDIR, DIR_MODE},
    {"ns", P_NSDIR, S_IFDIR | 0511},
    {"oom_score_adj", P_OOM_ADJ, RW_MODE},
    {"root", P_ROOTLINK, LNK_MODE},
    {"setgroups", P_SETGROUPS, RW_MODE},
    {"smaps", P_SMAPS, RO_MODE},
    {"smaps_rollup", P_SMAPS_ROLLUP, RO_MODE},
    {"stat", P_STAT, RO_MODE},
    {"statm", P_STATM, RO_MODE},
    {"status", P_STATUS, RO_MODE},
    {"syscall", P_SYSCALL, S_IFREG | 0400},
    {"uid_map", P_UID_MAP, RW_MODE},
    {"wchan", P_WCHAN, RO_MODE},
    {"task", P_TASKDIR, DIR_MODE},
};

const char *const cbox_proc_ns_names[] = {
    "cgroup", "ipc", "mnt", "net", "pid", "pid_for_children", "time", "time_for_children",
    "user",   "uts", NULL,
};

/*
 * net/: the sockets, interfaces, routes and counters of the task's network namespace, which is
 * the sandbox's own (the host's are never the guest's: sandbox or container, the sentry and
 * every guest task share one namespace of their own), read from the host's file of the task
 * when the guest opens one: ss and netstat (which fall back on these files when the sock_diag
 * netlink the sentry refuses is missing), lsof -i, psutil. The socket owners are shown as the
 * kernel shows them to a reader in the sandbox's user namespace (the sentry opens the file
 * there), inode numbers as the guest's fd links name them.
 *
 * Security: only files that describe the namespace itself, and of unix only the guest's sockets
 * (fs_proc_net.c). Left out: netlink (the owners' host pids), packet and sockstat's memory
 * (host-wide), and the machine-wide softnet_stat, ptype and protocols.
 */
const char *const cbox_proc_net_names[] = {
    "arp", "dev",  "if_inet6", "igmp",     "igmp6", "ipv6_route", "netstat",
    "raw", "raw6", "route",    "snmp",     "snmp6", "tcp",        "tcp6",
    "udp", "udp6", "udplite",  "udplite6", "unix",  NULL,
};

/* Whether the task's namespace has net/<name> (IPv6 may be off: no tcp6, if_inet6...). */
static bool net_file_exists(const struct cbox_task *pt, int idx)
{
	char path[96];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d/net/%s", pt->tid, cbox_proc_net_names[idx]);
	return stat(path, &st) == 0;
}

#define TABLE(t) ((*n = CBOX_ARRAY_SIZE(t)), (t))

static const struct entry *table_of(enum cbox_proc_kind k, size_t *n)
{
	switch (k) {
	case P_ROOT:
		return TABLE(root_entries);
	case P_SYS:
		return TABLE(sys_entries);
	case P_SYS_KERNEL:
		return TABLE(kernel_entries);
	case P_SYS_RANDOM:
		return TABLE(random_entries);
	case P_SYS_VM:
		return TABLE(vm_entries);
	case P_SYS_FS:
		return TABLE(fs_entries);
	case P_PIDDIR:
		return TABLE(pid_entries);
	case P_TIDDIR:
		*n = CBOX_ARRAY_SIZE(pid_entries) - 1;
		return pid_entries;
	default:
		*n = 0;
		return NULL;
	}
}

static uint64_t ino_of(uint64_t priv)
{
	return (priv * 2654435761u) | 1;
}

static struct cbox_dentry *mk(struct cbox_dentry *dir, const char *name, uint32_t mode,
                              uint64_t priv)
{
	struct cbox_dentry *d = cbox_dentry_new(dir->mnt, dir, name, mode);
	if (d) {
		d->priv = priv;
		d->ino = ino_of(priv);
	}
	return d;
}

/* Entries below /proc/<pid> carry the pid (or tid) of the task they describe. */
static bool has_task(enum cbox_proc_kind k)
{
	return k >= P_PIDDIR;
}

/* The task /proc/<vid> describes: a guest task, with --init the tiny init as pid 1, or a zombie
 * (task.c). */
static struct cbox_task *proc_task(struct cbox_sentry *s, pid_t vid)
{
	struct cbox_task *t = cbox_task_by_vtid(s, vid);
	if (!t && vid == 1 && s->tiny_init.tid > 0)
		t = &s->tiny_init;
	if (!t)
		t = cbox_task_zombie(s, vid);
	return t;
}

static int parse_num(const char *name)
{
	if (!*name || strlen(name) > 9)
		return -1;
	for (const char *p = name; *p; p++)
		if (!isdigit((unsigned char)*p))
			return -1;
	return atoi(name);
}

/* ns/<name> reads as the host's link ("net:[4026531840]"); the walker follows it as a relative
 * name in ns/, where lookup finds the P_NS_TARGET that opens the namespace (a magic link). */
static int ns_link(struct cbox_task *pt, int idx, char *buf, size_t size)
{
	char path[96];
	snprintf(path, sizeof(path), "/proc/%d/ns/%s", pt->tid, cbox_proc_ns_names[idx]);
	ssize_t n = readlink(path, buf, size - 1);
	if (n < 0)
		return -ENOENT;
	buf[n] = '\0';
	return (int)n;
}

static int lookup_dynamic(struct cbox_sentry *s, struct cbox_dentry *dir, const char *name,
                          struct cbox_dentry **out)
{
	enum cbox_proc_kind k = KIND(dir->priv);
	pid_t pid = PID(dir->priv);
	struct cbox_task *pt = has_task(k) ? proc_task(s, pid) : NULL;
	if (has_task(k) && !pt)
		return -ENOENT;
	int v = parse_num(name);
	switch (k) {
	case P_ROOT:
		if (!proc_task(s, v))
			return -ENOENT;
		*out = mk(dir, name, DIR_MODE, PRIV(P_PIDDIR, v, 0));
		break;
	case P_TASKDIR: {
		struct cbox_task *th = proc_task(s, v);
		if (!th || th->tg != pt->tg)
			return -ENOENT;
		*out = mk(dir, name, DIR_MODE, PRIV(P_TIDDIR, v, 0));
		break;
	}
	case P_FDDIR:
	case P_FDINFODIR: {
		char path[64];
		struct stat st;
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", pt->tid, v);
		if (v < 0 || cbox_fd_reserved(s, v) || lstat(path, &st) < 0)
			return -ENOENT;
		*out = k == P_FDDIR ? mk(dir, name, S_IFLNK | 0700, PRIV(P_FD, pid, v))
		                    : mk(dir, name, S_IFREG | 0400, PRIV(P_FDINFO, pid, v));
		break;
	}
	case P_NETDIR:
		for (int i = 0; cbox_proc_net_names[i]; i++)
			if (strcmp(name, cbox_proc_net_names[i]) == 0 && net_file_exists(pt, i)) {
				*out = mk(dir, name, RO_MODE, PRIV(P_NETFILE, pid, i));
				return *out ? 0 : -ENOMEM;
			}
		return -ENOENT;
	case P_NSDIR:
		for (int i = 0; cbox_proc_ns_names[i]; i++) {
			char target[64];
			if (strcmp(name, cbox_proc_ns_names[i]) == 0) {
				*out = mk(dir, name, LNK_MODE, PRIV(P_NS, pid, i));
				return *out ? 0 : -ENOMEM;
			}
			if (ns_link(pt, i, target, sizeof(target)) > 0 && !strcmp(name, target)) {
				*out = mk(dir, name, RO_MODE, PRIV(P_NS_TARGET, pid, i));
				if (*out) /* nsfs shows the namespace's inode number */
					(*out)->ino = strtoull(strchr(target, '[') + 1, NULL, 10);
				return *out ? 0 : -ENOMEM;
			}
		}
		return -ENOENT;
	default:
		/* A directory without the name (/proc/sys/crypto where the kernel has no crypto
		 * sysctls: libgcrypt reads fips_enabled and treats anything but ENOENT as fatal, so
		 * gpg aborted), or a file, under which nothing is. */
		return S_ISDIR(dir->mode) ? -ENOENT : -ENOTDIR;
	}
	return *out ? 0 : -ENOMEM;
}

/*
 * Linux's ptrace_may_access(PTRACE_MODE_READ_FSCREDS), which guards what shows a process's
 * memory, environment and open files (environ, maps, fdinfo, the fd, exe, cwd, root and ns
 * links). This is what keeps one guest user's environment (a token it was given) from the
 * sandbox's other users, such as the nobody a harness drops to before running the code it
 * tests. A process that made itself not dumpable (ssh-agent, gpg-agent: PR_SET_DUMPABLE 0), or
 * changed ids, is closed to the others of its user too (the flag: syscalls/sys_proc.c); so is
 * the tiny init, which is not dumpable on the host (guest_init.c): EACCES, as Linux answers
 * for its exe.
 */
static bool may_inspect(const struct cbox_task *t, const struct cbox_task *pt)
{
	return cbox_task_may_access(t, pt, true);
}

/* fd/ and fdinfo/ are 0500 directories of the task's effective ids (Linux's
 * proc_fd_permission: their mode, or the task's own thread group). */
static int may_list_fds(const struct cbox_task *t, const struct cbox_task *pt, int mask)
{
	if ((t->tg && t->tg == pt->tg) || !pt->cred)
		return 0;
	if (!t->cred)
		return -EACCES;
	return cbox_cred_permission(t->cred, S_IFDIR | 0500, pt->cred->euid, pt->cred->egid, mask);
}

static int p_lookup(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *dir,
                    const char *name, struct cbox_dentry **out)
{
	enum cbox_proc_kind dk = KIND(dir->priv);
	if (dk == P_FDDIR || dk == P_FDINFODIR) {
		struct cbox_task *pt = proc_task(s, PID(dir->priv));
		int r = pt ? may_list_fds(t, pt, X_OK) : -ENOENT;
		if (r < 0)
			return r;
	}
	size_t n;
	const struct entry *e = table_of(KIND(dir->priv), &n);
	for (size_t i = 0; i < n; i++)
		if (strcmp(name, e[i].name) == 0) {
			if (has_task(e[i].kind) && !proc_task(s, PID(dir->priv)))
				return -ENOENT;
			*out = mk(dir, name, e[i].mode, PRIV(e[i].kind, PID(dir->priv), 0));
			return *out ? 0 : -ENOMEM;
		}
	return lookup_dynamic(s, dir, name, out);
}

static int p_stat(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d,
                  struct stat *st)
{
	(void)t;
	memset(st, 0, sizeof(*st));
	st->st_mode = d->mode;
	st->st_nlink = S_ISDIR(d->mode) ? 2 : 1;
	st->st_dev = d->mnt->dev;
	st->st_ino = d->ino;
	st->st_blksize = 1024;
	st->st_atim = st->st_mtim = st->st_ctim = s->born;
	if (!has_task(KIND(d->priv)))
		return 0;
	struct cbox_task *pt = proc_task(s, PID(d->priv));
	if (!pt)
		return -ENOENT; /* the process went away */
	/* A process's files belong to its effective ids, as Linux shows them (ps reads them). */
	if (pt->cred) {
		st->st_uid = pt->cred->euid;
		st->st_gid = pt->cred->egid;
	}
	char path[64];
	struct stat h;
	if (KIND(d->priv) == P_FD_TARGET &&
	    snprintf(path, sizeof(path), "/proc/%d/fd/%d", pt->tid, PARG(d->priv)) > 0 &&
	    stat(path, &h) == 0) {
		/* the object's own size and times (`stat -L /dev/stdin` on the caller's file), and
		 * its device and inode, which fstat on the fd shows (the host's: the sentry passes
		 * fstat through for what it did not serve), and by which lsof finds a socket in
		 * /proc/net */
		st->st_dev = h.st_dev;
		st->st_ino = h.st_ino;
		st->st_size = h.st_size;
		st->st_blocks = h.st_blocks;
		st->st_blksize = h.st_blksize;
		st->st_atim = h.st_atim;
		st->st_mtim = h.st_mtim;
		st->st_ctim = h.st_ctim;
	}
	return 0;
}

/*
 * Opening for writing. Only files a task may change about itself on Linux are writable, and for
 * those the guest gets the host's own proc file of its task, opened by the sentry: the host
 * kernel then applies Linux's own rules on write (comm: only from the same thread group, else
 * EINVAL; oom_score_adj: lowering needs CAP_SYS_RESOURCE, which the guest lacks), so the sentry
 * neither parses the guest's bytes nor keeps a second copy of the state.
 */
static int open_write(struct cbox_task *pt, struct cbox_dentry *d, int flags)
{
	enum cbox_proc_kind k = KIND(d->priv);
	if (k == P_UID_MAP || k == P_GID_MAP || k == P_SETGROUPS || k == P_LOGINUID)
		return -EPERM; /* written once by cbox-run / needs CAP_AUDIT_CONTROL */
	if ((k != P_COMM && k != P_OOM_ADJ) || !pt)
		return -EACCES;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", pt->tid,
	         k == P_COMM ? "comm" : "oom_score_adj");
	int fd = open(path, (flags & (O_ACCMODE | O_APPEND | O_TRUNC | O_NONBLOCK)) | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * Opening fd/<n> of a file the sentry did not serve: a pipe, a socket, an anonymous inode, or a
 * file the caller of cbox-run gave as stdin, stdout or stderr (`cbox-run -- cat /dev/stdin <
 * in.txt`, a script's `echo oops > /dev/stderr`). Linux opens the object again with the new
 * flags, checking the opener's permission on it, and so does the sentry, through its own procfs
 * (a socket says ENXIO there, an eventfd ENXIO, as on Linux).
 *
 * Security: the reopen must not give the guest more than the fd it holds. The caller's
 * `< notes.txt` is a read-only fd, and opening it again for writing (allowed whenever the
 * sentry's host identity may write that file) would let the guest change the caller's file. So
 * for anything but a pipe or FIFO (whose reopen gives either end on Linux, and which holds no
 * data of the caller's to change) the access asked must be one the fd already has: else EACCES.
 *
 * The host may refuse the sentry what Linux would give the task: a pipe or file of the caller's
 * that another host user owns than the sentry's (everything of root's when cbox-run runs as
 * root: the sandbox's root is host nobody). Then the guest gets a copy of its own fd, as gVisor
 * gives for a host fd: the same open file, so it shares the offset and status flags, and
 * O_TRUNC is not applied (`echo x > /dev/stdout` then appends to the caller's file where Linux
 * would clobber it from offset 0).
 */
static int reopen_target(struct cbox_task *pt, int n, int flags)
{
	int copy = cbox_task_getfd(pt, n);
	if (copy < 0)
		return -ENOENT; /* closed meanwhile */
	struct stat st;
	int have = fcntl(copy, F_GETFL);
	if (fstat(copy, &st) < 0 || have < 0) {
		close(copy);
		return -ENOENT;
	}
	bool within = cbox_access_within(have, flags);
	if (S_ISSOCK(st.st_mode) || (!within && !S_ISFIFO(st.st_mode))) {
		close(copy);
		return S_ISSOCK(st.st_mode) ? -ENXIO : -EACCES;
	}
	int keep = O_ACCMODE | O_NONBLOCK | O_APPEND | (S_ISREG(st.st_mode) ? O_TRUNC : 0);
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", copy);
	int fd = open(path, (flags & keep) | O_CLOEXEC);
	if (fd >= 0 || (errno != EACCES && errno != EPERM) || !within) {
		int err = errno;
		close(copy);
		return fd >= 0 ? fd : -err;
	}
	return copy;
}

/*
 * /proc/PID/mem (a debugger reads and writes its tracee's memory there: gdb has no other way).
 * The guest gets the host's own mem file of the task, opened by the sentry, which is the host
 * tracer of every guest task: the host kernel then reads and writes as Linux does for a ptracer
 * (a breakpoint goes into read-only text), on the memory the task had at the open.
 *
 * Security: Linux lets only a process with ptrace access to the task open it
 * (PTRACE_MODE_ATTACH_FSCREDS), the check made above (may_inspect: the same test on the ids the
 * sentry keeps); the tiny init, a copy of the sentry, is refused there. The host would let any
 * guest task open any other's, as they are one host id.
 */
static int open_mem(struct cbox_task *pt, int flags)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", pt->tid);
	int fd = open(path, (flags & (O_ACCMODE | O_NONBLOCK)) | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * A zombie's files that show its memory (environ, auxv, mem): its memory is gone, and Linux then
 * has the files owned by root (task_dump_owner: a task without an mm is global root's, 0400 and
 * mem 0600), so another user gets EACCES (psutil: AccessDenied). A reader they let in finds
 * them empty on the interface the sandbox offers (Linux 6.1: proc_mem_open takes the missing mm
 * for none, and the reads return 0 bytes; newer ones, as 6.18, fail the open with ESRCH, which
 * Debian's psutil 5.9 takes for a process gone and its test_zombie_process fails). Returns 0
 * when the caller may open the file.
 */
static int zombie_memory_file(const struct cbox_task *t, enum cbox_proc_kind k, int flags)
{
	int acc = flags & O_ACCMODE;
	int want = acc == O_RDONLY ? R_OK : acc == O_WRONLY ? W_OK : R_OK | W_OK;
	mode_t mode = S_IFREG | (k == P_MEM ? 0600 : 0400);
	if (!t->cred || cbox_cred_permission(t->cred, mode, 0, 0, want) < 0)
		return -EACCES;
	return 0;
}

static int p_open(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d, int flags)
{
	enum cbox_proc_kind k = KIND(d->priv);
	struct cbox_task *pt = has_task(k) ? proc_task(s, PID(d->priv)) : NULL;
	if (has_task(k) && !pt)
		return -ENOENT;
	if ((k == P_ENVIRON || k == P_MAPS || k == P_SMAPS || k == P_SMAPS_ROLLUP || k == P_IO ||
	     k == P_FDINFO || k == P_FD_TARGET || k == P_NS_TARGET || k == P_AUXV || k == P_MEM ||
	     k == P_SYSCALL) &&
	    !may_inspect(t, pt))
		return -EACCES;
	if (pt && pt->zombie && (k == P_ENVIRON || k == P_AUXV || k == P_MEM)) {
		int r = zombie_memory_file(t, k, flags);
		return r < 0 ? r : cbox_memfd_with(d->name, "", 0);
	}
	if (k == P_FD_TARGET)
		return reopen_target(pt, PARG(d->priv), flags);
	if (k == P_MEM)
		return open_mem(pt, flags);
	if ((flags & O_ACCMODE) != O_RDONLY)
		return open_write(pt, d, flags);
	if (k == P_NS_TARGET) {
		/* The task's own namespace, read-only: what Linux gives. setns() on it is refused
		 * by the sentry and ioctls on /proc fds answer ENOTTY (sys_file.c), so the fd
		 * cannot reach a parent namespace. */
		char path[96];
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", pt->tid,
		         cbox_proc_ns_names[PARG(d->priv)]);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		return fd < 0 ? -ENOENT : fd;
	}
	struct cbox_proc_buf b = {0};
	int r = (has_task(k) && k != P_MOUNTS && k != P_MOUNTINFO)
	            ? cbox_proc_gen_pid(s, t, pt, k, PARG(d->priv), &b)
	            : cbox_proc_gen_sys(s, t, k, &b);
	if (r == 0 && b.err)
		r = b.err;
	int fd = r < 0 ? r : cbox_memfd_with(d->name, b.data ? b.data : "", b.len);
	free(b.data);
	return fd;
}

static int fd_readlink(struct cbox_sentry *s, struct cbox_task *pt, int fd, char *buf, size_t size)
{
	int err = 0;
	struct cbox_dentry *f = pt->files ? cbox_fd_lookup(s, pt, fd, NULL, &err) : NULL;
	if (f) {
		int n = cbox_vfs_path(f, buf, size);
		/* An unlinked file (an O_TMPFILE one too) reads as Linux shows it. */
		static const char deleted[] = " (deleted)";
		if (n >= 0 && f->unlinked && (size_t)n + sizeof(deleted) <= size) {
			memcpy(buf + n, deleted, sizeof(deleted));
			n += (int)sizeof(deleted) - 1;
		}
		return n;
	}
	/* Not a file the sentry served: pipes, sockets and anonymous inodes are named as the host
	 * names them; nothing else (a host path) is shown. */
	char path[64], target[256];
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pt->tid, fd);
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return -ENOENT;
	target[n] = '\0';
	struct stat st;
	if (target[0] == '/' && stat(path, &st) == 0 && S_ISCHR(st.st_mode) &&
	    cbox_dev_tty_name(s, &st, buf, size) > 0)
		return (int)strlen(buf); /* the sandbox's own terminal: ttyname works */
	if (target[0] == '/')
		return snprintf(buf, size, "anon_inode:[cbox]");
	return snprintf(buf, size, "%s", target);
}

struct cbox_dentry *cbox_proc_fd_target(struct cbox_sentry *s, struct cbox_task *t,
                                        struct cbox_dentry *d)
{
	if (d->mnt->ops != &cbox_fs_proc || KIND(d->priv) != P_FD)
		return NULL;
	struct cbox_task *pt = proc_task(s, PID(d->priv));
	int n = PARG(d->priv), err = 0;
	/* (not to be inspected: NULL, and the link's readlink says EACCES) */
	if (!pt || !pt->files || cbox_fd_reserved(s, n) || !may_inspect(t, pt))
		return NULL;
	struct cbox_dentry *f = cbox_fd_lookup(s, pt, n, NULL, &err);
	if (!f && err == -ENOENT) {
		/* Not a file the sentry served: the link leads to the object itself (a pipe, or
		 * the caller's stdin), whichever name it reads as; opening it reopens the task's
		 * fd (reopen_target). */
		char path[64];
		struct stat st;
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", pt->tid, n);
		if (stat(path, &st) < 0)
			return NULL;
		return mk(d->parent, d->name, (st.st_mode & S_IFMT) | 0600,
		          PRIV(P_FD_TARGET, PID(d->priv), n));
	}
	if (!f || !f->unlinked)
		return NULL;
	/* A named file unlinked while open (a bash here-document, `cat /dev/stdin` on it) is no
	 * longer the gofer's to open: its name is gone. Linux reopens the open file itself, and
	 * so does the sentry, from a copy of the task's fd kept as an unnamed file's is
	 * (reopen_anon, fs_gofer.c): a new open file description, opened with the sentry's own
	 * host identity after cbox_vfs_open's checks on the guest's. */
	if (!f->anon_fd1 && f->mnt->ops == &cbox_fs_gofer) {
		int fd = cbox_task_getfd(pt, n);
		if (fd >= 0) {
			cbox_fs_gofer_keep_anon(s, f, fd);
			close(fd);
		}
	}
	f->anon_src_tid = pt->tid;
	f->anon_src_fd = n;
	return cbox_dentry_get(f);
}

static int p_readlink(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d, char *buf,
                      size_t size)
{
	enum cbox_proc_kind k = KIND(d->priv);
	struct cbox_task *pt = has_task(k) ? proc_task(s, PID(d->priv)) : NULL;
	if (has_task(k) && !pt)
		return -ENOENT;
	if ((k == P_EXE || k == P_CWD || k == P_ROOTLINK || k == P_FD || k == P_NS) &&
	    !may_inspect(t, pt))
		return -EACCES;
	switch (k) {
	case P_SELF:
		return snprintf(buf, size, "%d", cbox_task_vpid(s, t));
	case P_THREAD_SELF:
		return snprintf(buf, size, "%d/task/%d", cbox_task_vpid(s, t),
		                t->vtid ? t->vtid : cbox_task_vpid(s, t));
	case P_MOUNTS_LINK:
		return snprintf(buf, size, "self/mounts");
	case P_NET_LINK:
		return snprintf(buf, size, "self/net");
	case P_EXE:
		if (!pt->tg || !pt->tg->exe)
			return -ENOENT;
		return snprintf(buf, size, "%s", pt->tg->exe);
	case P_CWD:
	case P_ROOTLINK:
		if (!pt->fs)
			return -ENOENT;
		return cbox_vfs_path(k == P_CWD ? pt->fs->cwd : pt->fs->root, buf, size);
	case P_FD:
		return fd_readlink(s, pt, PARG(d->priv), buf, size);
	case P_NS:
		return ns_link(pt, PARG(d->priv), buf, size);
	default:
		return -EINVAL;
	}
}

typedef int (*emit_fn)(void *ctx, const char *name, uint64_t ino, unsigned char type);

static unsigned char dtype(uint32_t mode)
{
	return S_ISDIR(mode) ? DT_DIR : S_ISLNK(mode) ? DT_LNK : DT_REG;
}

static int list_fds(struct cbox_sentry *s, struct cbox_task *t, struct cbox_task *pt, bool info,
                    emit_fn emit, void *ctx)
{
	char path[64], name[16];
	snprintf(path, sizeof(path), "/proc/%d/fd", pt->tid);
	DIR *dir = opendir(path);
	if (!dir)
		return 0;
	struct dirent *e;
	uint64_t seen[16] = {0}; /* fds 0..1023 present, to find the lowest free one */
	int r = 0;
	while (r == 0 && (e = readdir(dir))) {
		int n = parse_num(e->d_name);
		if (n < 0 || cbox_fd_reserved(s, n))
			continue;
		if (n < 1024)
			seen[n / 64] |= 1ULL << (n % 64);
		r = emit(ctx, e->d_name, ino_of(PRIV(info ? P_FDINFO : P_FD, 0, n)),
		         info ? DT_REG : DT_LNK);
	}
	closedir(dir);
	/* A task listing its own fds holds this directory open too, at the lowest free number
	 * (where the sentry is about to install it), as on Linux. */
	if (r == 0 && t && t->tg && pt->tg == t->tg) {
		for (int n = 0; n < 1024; n++)
			if (!(seen[n / 64] & (1ULL << (n % 64)))) {
				snprintf(name, sizeof(name), "%d", n);
				r = emit(ctx, name, ino_of(PRIV(info ? P_FDINFO : P_FD, 0, n)),
				         info ? DT_REG : DT_LNK);
				break;
			}
	}
	return r;
}

/* The thread groups (root) or the threads of pt's group (task/), as guest ids. */
static int list_tasks(struct cbox_sentry *s, struct cbox_task *pt, emit_fn emit, void *ctx)
{
	char name[16];
	int r = 0;
	if (pt && pt->zombie) { /* (its one thread) */
		snprintf(name, sizeof(name), "%d", pt->vtid);
		return emit(ctx, name, ino_of(PRIV(P_TIDDIR, pt->vtid, 0)), DT_DIR);
	}
	if (!pt) {
		cbox_task_zombies_sweep(s);
		for (struct cbox_task *z = s->zombies; r == 0 && z; z = z->next_in_hash) {
			snprintf(name, sizeof(name), "%d", z->vtid);
			r = emit(ctx, name, ino_of(PRIV(P_PIDDIR, z->vtid, 0)), DT_DIR);
		}
	}
	for (size_t h = 0; r == 0 && h < CBOX_TASK_HASH; h++)
		for (struct cbox_task *x = s->tasks[h]; r == 0 && x; x = x->next_in_hash) {
			if (!x->tg || (pt ? x->tg != pt->tg : x->tg->host_tgid != x->tid))
				continue;
			pid_t id = cbox_task_vpid(s, x);
			if (pt)
				id = x->vtid;
			if (id <= 0)
				continue;
			snprintf(name, sizeof(name), "%d", id);
			r = emit(ctx, name, ino_of(PRIV(pt ? P_TIDDIR : P_PIDDIR, id, 0)), DT_DIR);
		}
	return r;
}

static int p_readdir(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d,
                     emit_fn emit, void *ctx)
{
	enum cbox_proc_kind k = KIND(d->priv);
	struct cbox_task *pt = has_task(k) ? proc_task(s, PID(d->priv)) : NULL;
	if (has_task(k) && !pt)
		return -ENOENT;
	if (k == P_FDDIR || k == P_FDINFODIR) {
		int r = may_list_fds(t, pt, R_OK);
		if (r < 0)
			return r;
	}
	int r = emit(ctx, ".", d->ino, DT_DIR);
	if (r == 0)
		r = emit(ctx, "..", d->parent ? d->parent->ino : 1, DT_DIR);
	size_t n;
	const struct entry *e = table_of(k, &n);
	for (size_t i = 0; r == 0 && i < n; i++)
		r = emit(ctx, e[i].name, ino_of(PRIV(e[i].kind, PID(d->priv), 0)),
		         dtype(e[i].mode));
	if (r != 0)
		return r;
	switch (k) {
	case P_ROOT:
		if (s->tiny_init.tid > 0)
			r = emit(ctx, "1", ino_of(PRIV(P_PIDDIR, 1, 0)), DT_DIR);
		return r ? r : list_tasks(s, NULL, emit, ctx);
	case P_TASKDIR:
		if (pt == &s->tiny_init)
			return emit(ctx, "1", ino_of(PRIV(P_TIDDIR, 1, 0)), DT_DIR);
		return list_tasks(s, pt, emit, ctx);
	case P_FDDIR:
	case P_FDINFODIR:
		return list_fds(s, t, pt, k == P_FDINFODIR, emit, ctx);
	case P_NSDIR:
		for (int i = 0; r == 0 && cbox_proc_ns_names[i]; i++)
			r = emit(ctx, cbox_proc_ns_names[i], ino_of(PRIV(P_NS, PID(d->priv), i)),
			         DT_LNK);
		return r;
	case P_NETDIR:
		for (int i = 0; r == 0 && cbox_proc_net_names[i]; i++)
			if (net_file_exists(pt, i))
				r = emit(ctx, cbox_proc_net_names[i],
				         ino_of(PRIV(P_NETFILE, PID(d->priv), i)), DT_REG);
		return r;
	default:
		return e ? 0 : -ENOTDIR;
	}
}

const struct cbox_fs_ops cbox_fs_proc = {
    .name = "proc",
    .lookup = p_lookup,
    .stat = p_stat,
    .open = p_open,
    .readlink = p_readlink,
    .readdir = p_readdir,
};
