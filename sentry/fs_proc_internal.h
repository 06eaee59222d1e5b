#pragma once
/*
 * Private to sentry/fs_proc*.c: the kinds of /proc entries and the generators of their contents.
 * fs_proc.c is the tree (lookup, readdir, open, readlink), fs_proc_pid.c the per-process files,
 * fs_proc_sys.c the system-wide files and the guest's mount table.
 */
#include <stdarg.h>
#include <stddef.h>
#include <sys/types.h>

#include "internal.h"

enum cbox_proc_kind {
	P_ROOT = 1, /* the mount's root: mounts.c sets priv = 1 */
	/* /proc */
	P_SELF,
	P_THREAD_SELF,
	P_MOUNTS_LINK,
	P_UPTIME,
	P_MEMINFO,
	P_CPUINFO,
	P_STATF, /* /proc/stat */
	P_LOADAVG,
	P_VERSION,
	P_VMSTAT,
	P_FILESYSTEMS,
	P_DISKSTATS,
	P_PARTITIONS,
	P_CGROUPS,
	P_CMDLINE_SYS,
	P_SYS,
	P_SYS_KERNEL,
	P_SYS_RANDOM,
	P_SYS_VM,
	P_SYS_FS,
	P_OSRELEASE,
	P_OSTYPE,
	P_HOSTNAME,
	P_DOMAINNAME,
	P_UUID,
	P_BOOT_ID,
	P_PID_MAX,
	P_NGROUPS_MAX,
	P_DMESG_RESTRICT,
	P_CAP_LAST_CAP,
	P_OVERFLOWUID,
	P_OVERFLOWGID,
	P_OVERCOMMIT,
	P_FILE_MAX,
	P_NR_OPEN,
	P_NET_LINK, /* /proc/net: self/net */
	/* /proc/<pid> and /proc/<pid>/task/<tid> */
	P_PIDDIR,
	P_TIDDIR,
	P_STAT,
	P_STATUS,
	P_STATM,
	P_MAPS,
	P_SMAPS,
	P_SMAPS_ROLLUP,
	P_IO,
	P_CMDLINE,
	P_ENVIRON,
	P_COMM,
	P_EXE,
	P_CWD,
	P_ROOTLINK,
	P_FDDIR,
	P_FD,
	P_FDINFODIR,
	P_FDINFO,
	P_LIMITS,
	P_MOUNTS,
	P_MOUNTINFO,
	P_CGROUP,
	P_UID_MAP,
	P_GID_MAP,
	P_SETGROUPS,
	P_NSDIR,
	P_NS,        /* ns/<name>, a symlink; arg: index in cbox_proc_ns_names */
	P_NS_TARGET, /* what ns/<name> points to (see fs_proc.c) */
	P_TASKDIR,
	P_OOM_ADJ,
	P_LOGINUID,
	P_FD_TARGET, /* what fd/<n> points to when it is not a served file (a pipe): fs_proc.c */
	P_AUXV,
	P_MEM,
	P_NETDIR,  /* net/ */
	P_NETFILE, /* net/<name>; arg: index in cbox_proc_net_names */
	P_WCHAN,
	P_SYSCALL,
};

/* A dentry's priv: kind (8 bits), guest pid or tid (32 bits), argument: an fd or an index. */
#define PRIV(k, pid, arg)                                                                          \
	((uint64_t)(k) | ((uint64_t)(uint32_t)(pid) << 8) | ((uint64_t)(arg) << 40))
#define KIND(p) ((enum cbox_proc_kind)((p)&0xff))
#define PID(p)  ((pid_t)(((p) >> 8) & 0xffffffff))
#define PARG(p) ((int)((p) >> 40))

/* A growing text buffer; a failed allocation sets err and later appends do nothing. */
struct cbox_proc_buf {
	char *data;
	size_t len, cap;
	int err;
};

/* Append n bytes / formatted text to b. */
void cbox_proc_append(struct cbox_proc_buf *b, const void *p, size_t n);
__attribute__((format(printf, 2, 3))) void cbox_proc_printf(struct cbox_proc_buf *b,
                                                            const char *fmt, ...);
/*
 * Append the whole of the sentry's own /proc/<what> (a path under the sentry's private procfs of
 * the sandbox, e.g. "123/maps" or "meminfo") to b. Returns 0, or -errno of the open/read (ENOENT
 * when the task went away).
 */
int cbox_proc_append_host(struct cbox_proc_buf *b, const char *what);

/* net/unix of the task's namespace: the sockets a guest task holds (fs_proc_net.c). */
int cbox_proc_gen_net_unix(struct cbox_sentry *s, struct cbox_task *pt, struct cbox_proc_buf *b);

/* The namespace names of ns/, in Linux's order; NULL-terminated. */
extern const char *const cbox_proc_ns_names[];

/* The files of net/ the guest is shown (fs_proc.c says which and why); NULL-terminated. */
extern const char *const cbox_proc_net_names[];

/*
 * Per-process files (fs_proc_pid.c): the contents of kind for the target task pt (host tid
 * pt->tid) as reader t sees them. 0 or -errno (ENOENT: the task is gone; EINVAL: not a
 * per-process file kind).
 */
int cbox_proc_gen_pid(struct cbox_sentry *s, struct cbox_task *t, struct cbox_task *pt,
                      enum cbox_proc_kind kind, int arg, struct cbox_proc_buf *b);

/*
 * System-wide files (fs_proc_sys.c), and the guest's mount table (P_MOUNTS, P_MOUNTINFO), the
 * same for every task. 0 or -errno (EINVAL: not a kind served here).
 */
int cbox_proc_gen_sys(struct cbox_sentry *s, struct cbox_task *t, enum cbox_proc_kind kind,
                      struct cbox_proc_buf *b);
