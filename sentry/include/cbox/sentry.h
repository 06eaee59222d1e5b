#pragma once
/*
 * The sentry: one per sandbox, the user-space kernel that answers the guest's syscalls.
 * cbox_sentry_main() runs in the sentry process, which its parent (cbox-run or the OCI runtime)
 * created in new user, mount, pid, net, ipc and uts namespaces, with uid/gid maps written.
 */
#include <stdbool.h>
#include <sys/types.h>
#include "cbox/compiler.h"
#include "cbox/platform.h"

/*
 * The sandbox's cgroup on the host, which the guest sees as its /sys/fs/cgroup
 * (sentry/fs_sys_cgroup.c): directory fds (O_PATH) the sentry reads it through, -1 where the host
 * has no such controller. v2: all three are the one directory of the unified hierarchy; else each
 * its v1 controller's, and unified the cgroup in the v2 hierarchy a hybrid host mounts beside them
 * (its CPU time), or -1 (cbox_cgroup_open_dirs).
 */
struct cbox_sentry_cgroup {
	bool v2;
	int memory, cpu, pids, unified;
};

struct cbox_sentry_config {
	const struct cbox_platform_ops *platform;
	bool strict;          /* no fast path */
	bool strace;          /* log every guest syscall */
	int gofer_sock;       /* connected to a running gofer (consumed) */
	char *const *argv;    /* the guest program and its arguments */
	char *const *envp;    /* the guest's environment */
	const char *cwd;      /* the guest's working directory ("/" when NULL) */
	const char *hostname; /* "cbox" when NULL */
	uid_t owner_uid;      /* the host ids the guest sees as its own (0) in file owners; */
	gid_t owner_gid;      /* others show as 65534 (see fs_gofer.c) */
	/* The guest's first task's credentials (cbox/cred.h). all_ids: guest ids are host ids
	 * (the OCI runtime as root); else the user namespace maps only one host id (owner_uid/gid
	 * above), which every guest id stands for. */
	bool all_ids;
	uint32_t uid, gid;
	size_t ngroups;
	const uint32_t *groups;
	uint64_t cap_bset; /* what uid 0 holds (masked to CBOX_CAP_EMULATED) */
	bool has_umask;    /* the first task's umask (OCI process.user.umask), else 022 */
	mode_t umask;
	bool no_new_privs;  /* the guest's first task starts with no_new_privs set, as the guest
	                     * sees it (OCI process.noNewPrivileges; a `cbox exec` task: its own) */
	bool low_ports;     /* let any guest user bind ports below 1024 in the sandbox's own network
	                     * namespace (cbox-run; the OCI runtime takes linux.sysctl instead) */
	bool tree_writable; /* the gofer's tree has writable mounts (else EROFS up front) */
	const char *dev_shm;   /* the gofer's directory shown as /dev/shm ("/dev/shm"), or NULL */
	bool tty;              /* fds 0-2 are a pseudo-terminal of the sandbox's: it becomes the */
	int tty_fd;            /* guest's controlling terminal, and /dev/tty reopens tty_fd */
	bool exec_service;     /* serve `cbox exec`: exec_ctl is the monitor's control socket, */
	int exec_ctl;          /* which hands over connections of <state>/exec.sock */
	bool init;             /* a tiny init is pid 1 of the guest, the program pid 2 (--init) */
	unsigned closed_stdio; /* bit n: fd n (0-2) is a placeholder the program must find closed */
	bool
	    report_status; /* write the exit status (an int) to status_fd once the guest is gone, */
	int status_fd;     /* before the sentry's own teardown, so the caller need not wait */
	bool gofer_pending; /* the gofer may still be building its tree: one byte arrives on */
	int gofer_ready_fd; /* gofer_ready_fd once it answers (consumed); the sentry sets itself
	                     * and the guest task up meanwhile and asks the gofer nothing before */
	const struct cbox_sentry_cgroup *cgroup; /* the sandbox's limits, or NULL: none */
};

/*
 * Set up the sandbox from inside the new namespaces (private mounts, an empty root for the guest,
 * the loader, loopback up, the hostname), start the guest's first task and serve its syscalls
 * until it exits. Returns the exit status cbox-run should give: the guest's, 128+N when it was
 * killed by signal N, 127 when the program does not exist, 126 when it cannot be executed, 125
 * when the sandbox could not be set up (logged).
 */
CBOX_API int cbox_sentry_main(const struct cbox_sentry_config *cfg);

/* For the sentry's host-side parent: the guest's first task, as a host pid (the sentry's first
 * child, from /proc/SENTRY/task/SENTRY/children), or 0 when there is none (yet, or any more).
 * Async-signal-safe: cbox-run calls it from its signal handler. */
CBOX_API pid_t cbox_sentry_guest_init(pid_t sentry);

/* Whether the sentry serves clean absolute path itself: /proc, /sys and /dev, but /dev/shm (a
 * tmpfs of the gofer's, sentry/mounts.c). A mount of the guest's tree there would not show: the
 * sentry's own file systems cover it. */
CBOX_API bool cbox_sentry_serves_path(const char *path);

/* The host syscalls the sentry's own seccomp filter allows (sorted); *n gets the count. */
CBOX_API const int *cbox_sentry_allowed_syscalls(size_t *n);
/* Likewise for the tiny init of cbox-run --init (sentry/guest_init.c). */
CBOX_API const int *cbox_guest_init_allowed_syscalls(size_t *n);
