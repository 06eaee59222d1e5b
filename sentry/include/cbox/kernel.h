#pragma once
/*
 * The sentry's kernel objects as the syscall handlers (syscalls/) see them: tasks, the VFS, the
 * shadow fd table, guest memory. The sentry is single-threaded: nothing here is locked.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "cbox/compiler.h"
#include "cbox/cred.h"
#include "cbox/platform.h"
#include "cbox/procfs.h"
#include "cbox/gofer.h"
#include "cbox/sentry.h"

struct cbox_sentry;
struct cbox_hashmap;
struct cbox_dentry;
struct cbox_task;

/* ---- VFS ------------------------------------------------------------------------------- */

/* What a file system does; every op is optional (NULL answers as documented). */
struct cbox_fs_ops {
	const char *name; /* "gofer", "proc", "dev" */
	/* Find child name of dir; on success *out is a new reference. -ENOENT when absent. */
	int (*lookup)(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *dir,
	              const char *name, struct cbox_dentry **out);
	/* Fill st (Linux struct stat). */
	int (*stat)(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d,
	            struct stat *st);
	/* Open: return a host fd the guest can hold (the sentry keeps no copy). */
	int (*open)(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d, int flags);
	/* Symlink target into buf (NUL-terminated); returns its length. NULL: -EINVAL. */
	int (*readlink)(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d,
	                char *buf, size_t size);
	/* List a directory: call emit for ".", ".." and every entry. NULL: the host lists it (the
	 * opened host fd is a real directory). */
	int (*readdir)(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d,
	               int (*emit)(void *ctx, const char *name, uint64_t ino, unsigned char type),
	               void *ctx);
	/* Drop fs-private data of a dentry about to be freed. */
	void (*release)(struct cbox_sentry *s, struct cbox_dentry *d);
	/* statfs's f_type for d. NULL: PROC_SUPER_MAGIC for "proc", else TMPFS_MAGIC (the gofer's
	 * mounts answer from the host). */
	uint64_t (*magic)(const struct cbox_dentry *d);
};

struct cbox_mount {
	const struct cbox_fs_ops *ops;
	struct cbox_dentry *root;       /* the mounted tree's root */
	struct cbox_dentry *mountpoint; /* where it is mounted (NULL for "/") */
	bool readonly;
	uint64_t dev; /* st_dev the guest sees for synthetic file systems */
};

struct cbox_dentry {
	int refs;
	struct cbox_dentry *parent; /* NULL at a mount's root */
	struct cbox_mount *mnt;
	char *name;
	uint32_t mode;     /* S_IFMT bits and permissions, cached at lookup */
	uint32_t uid, gid; /* owner as the guest sees it (0: the guest's own id), cached */
	bool unlinked;     /* removed from the tree (getcwd: ENOENT) */
	bool negative;     /* a cached "no such entry" of a read-only directory (vfs.c) */
	/* gofer, read-only file systems only (fs_gofer.c): the attributes as last seen, and an
	 * open fd kept so that later opens reopen it locally (fd + 1; 0: none) */
	struct stat *ro_stat;
	uint64_t ro_stat_ns;
	/* gofer, writable file systems: the attributes a walk or a STAT brought (the host's, as
	 * the gofer gave them), good for stats within the call that fetched them (walk_trap: the
	 * sentry's trap_seq then), or shortly after while nothing can have changed them (walk_ns,
	 * walk_changes: the gofer client's change count then; fs_gofer.c), or once the sentry's
	 * own stat of the name shows them unchanged (fs_gofer_local.c) */
	struct cbox_gofer_stat *walk_stat;
	uint64_t walk_trap, walk_ns, walk_changes;
	int ro_fd1;
	bool ro_fd_fresh; /* ro_fd1 came with the walk and was never handed out */
	/* gofer: an unnamed file (O_TMPFILE), which no path and so no gofer OPEN can reach: the
	 * sentry's own fd of it (fd + 1; 0: none), which a reopen through /proc/PID/fd/N uses;
	 * and the guest fd (host tid, fd number) that last led such a reopen to it (fs_proc.c) */
	int anon_fd1;
	pid_t anon_src_tid;
	int anon_src_fd;
	/* gofer directory: when the guest last read its listing (getdents64), how many entries the
	 * next WALKDIR read-ahead in it asks for, how many the last one brought and how many of
	 * those no lookup has used yet, and whether read-ahead is off in it (vfs.c) */
	uint64_t listed_ns;
	uint64_t found_ns, ra_started_ns; /* a walk's last miss in it that found its file; the
	                                   * misses' read-ahead (vfs.c, missed_again) */
	unsigned ra_count, ra_last, ra_unused;
	unsigned stat_checks; /* expired stats and opens of its entries before it had an fd for
	                       * the sentry's own (fs_gofer_local.c, check_dir_fd) */
	bool ra_off;
	bool ra_fresh; /* read ahead, and not looked up since */
	/* gofer: its last STAT said the name no longer leads to this file (the host removed or
	 * replaced it): a lookup by name should be made again (cbox_vfs_drop_stale) */
	bool stale;
	/* gofer: a symlink's target once read (NUL-terminated), and when it was read or last
	 * found to be still the name's (link_ns). A symlink's target never changes: replacing one
	 * makes a new inode, which a new walk finds (link_current, vfs.c). */
	char *link;
	uint64_t link_ns;
	uint64_t ino;      /* inode number the guest sees */
	uint64_t host_dev; /* gofer: the host file's dev/ino, to recognise its fds */
	uint64_t host_ino;
	/* gofer fid; CBOX_DENTRY_NO_FID for a name the sentry looked up itself (fs_gofer_local.c),
	 * which gets one when a request needs it (cbox_dentry_fid) */
	uint32_t fid;
	uint64_t mnt_id; /* gofer, read-only directory: the host mount of its ro_fd1 (0: unknown) */
	uint64_t priv;   /* synthetic fs: kind and argument (pid, fd...) */
	struct cbox_mount *covered_by; /* a mount on top of this dentry */
	struct cbox_dentry *children;  /* cache (gofer only): first child */
	unsigned nchildren;            /* how many, and past a few an index of them by name */
	struct cbox_hashmap *child_map;
	struct cbox_dentry *sibling; /* next child of parent */
	struct cbox_dentry **pprev;  /* the pointer that points at this one (O(1) unlinking) */
	bool cached;                 /* linked into parent's children */
	/* the sentry's LRU of unreferenced cached dentries (vfs.c) */
	struct cbox_dentry *lru_prev, *lru_next;
	bool in_lru;
};

#define CBOX_DENTRY_NO_FID UINT32_MAX

CBOX_API struct cbox_dentry *cbox_dentry_get(struct cbox_dentry *d);
CBOX_API void cbox_dentry_put(struct cbox_sentry *s, struct cbox_dentry *d);
/* A new dentry (one reference) under parent (referenced), not cached. */
CBOX_API struct cbox_dentry *cbox_dentry_new(struct cbox_mount *mnt, struct cbox_dentry *parent,
                                             const char *name, uint32_t mode);

/* Walk flags. */
#define CBOX_WALK_FOLLOW    0x1 /* follow a symlink in the last component */
#define CBOX_WALK_DIRECTORY 0x2 /* the result must be a directory (ENOTDIR) */
#define CBOX_WALK_PARENT    0x4 /* stop at the parent of the last component; *last gets its name */
#define CBOX_WALK_EMPTY_OK  0x8 /* an empty path names the start (AT_EMPTY_PATH) */
/* openat2's RESOLVE_* rules (the start is the dirfd's directory): */
#define CBOX_WALK_NO_SYMLINKS   0x10  /* any symlink: ELOOP */
#define CBOX_WALK_BENEATH       0x20  /* an absolute path or ".." above the start: EXDEV */
#define CBOX_WALK_IN_ROOT       0x40  /* the start is the root for "/" and ".." */
#define CBOX_WALK_NO_XDEV       0x80  /* crossing a mount point: EXDEV */
#define CBOX_WALK_NO_MAGICLINKS 0x100 /* a /proc magic link (fd/N, exe, cwd, root): ELOOP */
/* A hint, not a rule: the walk is for an open for reading, so the file it ends on, when the gofer
 * must be asked for it on a read-only mount, comes opened with the walk (one round trip, not a
 * walk and an OPEN; fs_gofer.c). */
#define CBOX_WALK_OPEN_READ 0x200

#define CBOX_SYMLOOP_MAX 40 /* Linux's limit on symlinks followed in one walk */

/*
 * Resolve path for task t, starting at dirfd (AT_FDCWD: the task's cwd; absolute paths start at
 * the task's root). Components are looked up one at a time through the file systems; ".." never
 * leaves the root; mount points are crossed; symlinks are followed up to CBOX_SYMLOOP_MAX times
 * in one walk (ELOOP). Errors as Linux: ENOENT, ENOTDIR, ENAMETOOLONG (path >= PATH_MAX or a
 * component > NAME_MAX), ELOOP, EBADF (dirfd), EFAULT is the caller's business.
 * On success *out is a new reference; with CBOX_WALK_PARENT *out is the parent and last (size
 * NAME_MAX + 1) the final component ("" when the path ends at the start, "." or "..").
 */
CBOX_API int cbox_vfs_walk(struct cbox_sentry *s, struct cbox_task *t, int dirfd, const char *path,
                           int flags, struct cbox_dentry **out, char *last);
/* The guest is reading d's listing (getdents64 of a directory the gofer serves): a walk from
 * an fd of d to one of its names may read ahead the entries that follow it (vfs.c). */
CBOX_API void cbox_vfs_listed(struct cbox_dentry *d);

/*
 * Linux's permission check (generic_permission) for task t on a file the gofer serves, with its
 * credentials (cbox_cred_permission): the owner's bits when the file is the fs uid's, the
 * group's for its fs gid or a supplementary group, else the others', then its capabilities.
 * mask: any of R_OK, W_OK, X_OK. Returns 0 or -EACCES. Files the sentry makes itself (/proc,
 * /dev) are checked by their own handlers.
 */
CBOX_API int cbox_vfs_may(const struct cbox_task *t, const struct cbox_dentry *d, int mask);

/* A file owner as the guest's checks see it (group: a gid) for host id host (CBOX_UNMAPPED_ID
 * for another host user's), and back: the host id of a guest id that cbox_cred_id_valid accepts
 * ((uint32_t)-1 stays -1). cbox_id_shown: the id stat shows for an owner as the checks see it
 * (CBOX_OVERFLOW_ID for an unmapped one). See fs_gofer.c. */
CBOX_API uint32_t cbox_id_to_guest(const struct cbox_sentry *s, uint32_t host, bool group);
CBOX_API uint32_t cbox_id_to_host(const struct cbox_sentry *s, uint32_t id, bool group);
CBOX_API uint32_t cbox_id_shown(const struct cbox_sentry *s, uint32_t id);
/* The ops of the gofer's file system (to tell a file of the tree from /proc and /dev). */
CBOX_API const struct cbox_fs_ops *cbox_vfs_gofer_ops(void);
/* stat of a dentry as the guest sees it. */
CBOX_API int cbox_vfs_stat(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d,
                           struct stat *st);
/* The stat of task t's fd fd, whose file is d (cbox_fd_lookup): cbox_vfs_stat, or where d's name
 * has moved and d has no fid, the fd's own file's (fs_gofer.c). */
CBOX_API int cbox_vfs_stat_fd(struct cbox_sentry *s, struct cbox_task *t, int fd,
                              struct cbox_dentry *d, struct stat *st);
/* The absolute guest path of d into buf. Returns the length or -ENAMETOOLONG. */
CBOX_API int cbox_vfs_path(struct cbox_dentry *d, char *buf, size_t size);
/* Open d for the guest: a host fd (owned by the caller) or -errno. Checks the open flags
 * against the file type (EISDIR, ENOTDIR, ELOOP) and the mount (EROFS). */
CBOX_API int cbox_vfs_open(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d,
                           int flags);

/*
 * Changes to the tree (sentry/vfs_mut.c). The caller has made Linux's path checks (EEXIST,
 * ENOTDIR, EISDIR...); these act on dir's file system and keep the dentry cache true. The
 * gofer's tree answers as the host kernel does (EROFS on its read-only mounts, EXDEV across
 * them); the sentry's /proc and /dev answer EPERM. Modes are final (umask applied by the
 * caller). Return 0 or -errno.
 */
/* The creations below make the node task t's own (cbox_vfs_new_owner). */
CBOX_API int cbox_vfs_mkdir(struct cbox_sentry *s, const struct cbox_task *t,
                            struct cbox_dentry *dir, const char *name, mode_t mode);
/* mode: S_IFIFO, S_IFREG or S_IFSOCK with permissions (devices: EPERM). */
CBOX_API int cbox_vfs_mknod(struct cbox_sentry *s, const struct cbox_task *t,
                            struct cbox_dentry *dir, const char *name, mode_t mode);
CBOX_API int cbox_vfs_symlink(struct cbox_sentry *s, const struct cbox_task *t,
                              struct cbox_dentry *dir, const char *name, const char *target);
/* The host owner a node task t makes in dir is given, for the gofer's creation requests
 * ((uint32_t)-1: as the gofer makes it). See vfs_mut.c. */
CBOX_API void cbox_vfs_new_owner(const struct cbox_sentry *s, const struct cbox_task *t,
                                 const struct cbox_dentry *dir, uint32_t *uid, uint32_t *gid);
/* After the node name was made in dir by task t: the owner Linux gives it, remembered by the
 * sentry when the host could not give it (one host id; st: the node's stat, or NULL to walk
 * name for it). See vfs_mut.c. */
CBOX_API void cbox_vfs_note_new_owner(struct cbox_sentry *s, const struct cbox_task *t,
                                      struct cbox_dentry *dir, const char *name,
                                      const struct cbox_gofer_stat *st);
/* A new name in dir for d (not a directory). */
CBOX_API int cbox_vfs_link(struct cbox_sentry *s, struct cbox_dentry *d, struct cbox_dentry *dir,
                           const char *name);
CBOX_API int cbox_vfs_unlink(struct cbox_sentry *s, struct cbox_dentry *dir, const char *name,
                             bool isdir);
/* flags: 0, RENAME_NOREPLACE or RENAME_EXCHANGE. */
CBOX_API int cbox_vfs_rename(struct cbox_sentry *s, struct cbox_dentry *odir, const char *oname,
                             struct cbox_dentry *ndir, const char *nname, unsigned flags);
/* chmod, chown, truncate, utimes of d (see struct cbox_gofer_setattr; uid and gid as the guest
 * names them, mapped to the host's here). The set-ID bits of a mode are the sentry's to keep
 * (owners.c); CBOX_VFS_KILL_SETID in valid, never sent to the gofer, drops them as a chown or an
 * unprivileged truncation does on Linux (and alone changes nothing else). */
#define CBOX_VFS_KILL_SETID (1u << 30)
CBOX_API int cbox_vfs_setattr(struct cbox_sentry *s, struct cbox_dentry *d,
                              const struct cbox_gofer_setattr *a);
/* Create a new regular file name in dir and open it with flags: returns the host fd (owned by
 * the caller) and *out, the new dentry (a reference, cached). -EEXIST when name exists. */
CBOX_API int cbox_vfs_create(struct cbox_sentry *s, const struct cbox_task *t,
                             struct cbox_dentry *dir, const char *name, int flags, mode_t mode,
                             struct cbox_dentry **out);
/* O_TMPFILE: an unnamed file in dir, opened with flags (its access mode, O_EXCL and the file
 * flags; the rest is ignored). Returns the host fd (the caller's) and sets *out to an unlinked,
 * uncached dentry for it, or -errno. */
CBOX_API int cbox_vfs_tmpfile(struct cbox_sentry *s, const struct cbox_task *t,
                              struct cbox_dentry *dir, int flags, mode_t mode,
                              struct cbox_dentry **out);
/* 0 when d lies on a writable mount, else -EROFS (access(W_OK), statfs). */
CBOX_API int cbox_vfs_writable(struct cbox_sentry *s, struct cbox_dentry *d);
/* Drop dir's cached child name, if any (after a change the sentry did not make itself). */
CBOX_API void cbox_vfs_forget(struct cbox_sentry *s, struct cbox_dentry *dir, const char *name);
/* d, reached by a path, turned out stale (the gofer said the host removed or replaced its file,
 * or a reopen by name failed with ESTALE or ENOENT): drop it from the cache, so that walking the
 * path again looks the name up anew. Returns whether the caller should walk again: only for a
 * cached gofer dentry, and only once it is dropped. */
CBOX_API bool cbox_vfs_drop_stale(struct cbox_sentry *s, struct cbox_dentry *d, int err);
/* cbox_vfs_walk (no last name), then for a file the gofer serves a stat of it, so that the mode
 * and owner the permission checks read are its current ones; a name (a non-empty path) the host
 * replaced or removed is dropped and the path walked once more, as stat does. */
CBOX_API int cbox_vfs_walk_current(struct cbox_sentry *s, struct cbox_task *t, int dirfd,
                                   const char *path, int flags, struct cbox_dentry **out);

/* getdents64's record. */
struct cbox_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* ---- shadow fd table --------------------------------------------------------------------- */

/*
 * What the sentry knows of the guest's fds: for each fd it installed, the dentry and the host
 * object's identity. The table is a cache, not the truth: the guest may close or replace an fd
 * on the fast path without the sentry seeing it, so an entry is trusted only after
 * cbox_fd_lookup() checked that the task's fd still refers to the same host object.
 */
struct cbox_fdtable;
CBOX_API struct cbox_fdtable *cbox_fdtable_new(void);
CBOX_API struct cbox_fdtable *cbox_fdtable_copy(struct cbox_fdtable *src);
CBOX_API struct cbox_fdtable *cbox_fdtable_get(struct cbox_fdtable *t);
CBOX_API void cbox_fdtable_put(struct cbox_sentry *s, struct cbox_fdtable *t);
/* The ptrace platform's install channel of the table (platform.h, cbox_ptrace_new_channel): the
 * sentry's end, -1 when none; set takes ownership of sock (closing the one before). */
CBOX_API int cbox_fdtable_install_sock(const struct cbox_fdtable *t);
CBOX_API void cbox_fdtable_set_install_sock(struct cbox_fdtable *t, int sock);
/* Whether another task (a thread, or a CLONE_FILES process) shares the table. */
CBOX_API bool cbox_fdtable_shared(const struct cbox_fdtable *t);
/* Record that fd of the task now refers to d, as host object (dev, ino). Takes a reference to d. */
CBOX_API int cbox_fd_set(struct cbox_sentry *s, struct cbox_task *t, int fd, struct cbox_dentry *d,
                         int flags, uint64_t dev, uint64_t ino);
/* The dentry behind the task's fd, verified against the live fd (pidfd_getfd + fstat), or NULL
 * with *err = -EBADF (not open), or -ENOENT (open, but not a file the sentry served: a pipe, a
 * socket...). *flags gets the open flags recorded. No reference is taken. */
CBOX_API struct cbox_dentry *cbox_fd_lookup(struct cbox_sentry *s, struct cbox_task *t, int fd,
                                            int *flags, int *err);
/* Forget fd (after a close the sentry saw). */
CBOX_API void cbox_fd_forget(struct cbox_sentry *s, struct cbox_task *t, int fd);
/* Call fn for each fd recorded (for /proc/<pid>/fd). */
CBOX_API void cbox_fd_each(struct cbox_fdtable *tab,
                           void (*fn)(void *ctx, int fd, struct cbox_dentry *d), void *ctx);
/* A duplicate (host fd, owned by the caller) of the task's fd, or -errno. */
CBOX_API int cbox_task_getfd(struct cbox_task *t, int fd);
/* Whether fd, in every guest task, is the sentry's own and not the guest's: the ptrace
 * platform's install socket. */
CBOX_API bool cbox_fd_reserved(struct cbox_sentry *s, int fd);
/* cbox_task_getfd for an fd number the guest gave: -EBADF for a reserved one. */
CBOX_API int cbox_fd_get(struct cbox_sentry *s, struct cbox_task *t, int fd);

/* ---- tasks ------------------------------------------------------------------------------- */

struct cbox_fs_ctx {
	int refs;
	struct cbox_dentry *cwd;
	struct cbox_dentry *root;
	mode_t umask;
};

struct cbox_thread_group {
	int refs;
	pid_t host_tgid;
	pid_t vpid;    /* pid inside the sandbox */
	char *exe;     /* guest path of the executable */
	char *cmdline; /* argv, NUL-separated */
	size_t cmdline_len;
	/* The name its last exec gave it (kbasename of the path, 15 bytes): /proc shows it while
	 * the host still names the task after the loader (fs_proc_pid.c, shown_comm) */
	char comm[16];
	/* The host files its image runs from (program, ELF interpreter): busy text (task.c) */
	struct cbox_text_id {
		uint64_t dev, ino;
	} text[2];
	int ntext;
	/* Linux's dumpable flag as the guest's own calls set it (PR_SET_DUMPABLE, a change of its
	 * effective or fs ids, an exec): a process that is not dumpable cannot be traced by
	 * another of the same user (syscalls/sys_ptrace.c). */
	bool nondumpable;
};

struct cbox_exec_pending {
	int elf_fd;    /* host fd of the program */
	int interp_fd; /* host fd of its interpreter or -1 */
	char *execfn;
};

/*
 * clone3 keeps its arguments in guest memory, where a racing thread could change them after the
 * sentry checked them; the sentry therefore runs it as a clone with the checked values in
 * registers. The guest's own argument registers are put back afterwards, in the parent at the
 * call's exit and in the child before it first runs (glibc's child code reads them). A clone whose
 * CLONE_UNTRACED the sentry takes out is run and restored the same way (syscalls/sys_clone.c).
 */
struct cbox_clone3_fixup {
	uint64_t rdi, rsi, rdx, r10, r8;
	uint64_t ip;         /* where the call was made (after the syscall instruction) */
	uint64_t parent_tid; /* CLONE_PARENT_SETTID beside CLONE_PIDFD: written by the sentry */
	bool clear_sighand;  /* CLONE_CLEAR_SIGHAND: done by the sentry in the child */
};

/*
 * A guest task another guest task traces (emulated ptrace, sentry/ptrace_emu.c). The sentry is
 * the host tracer of both; it holds the tracee at a stop for the tracer instead of resuming it.
 */
struct cbox_ptrace_emu {
	pid_t tracer;      /* host tid of the tracing task; 0: not traced */
	pid_t tracer_tgid; /* its thread group, whose waits see the tracee's stops */
	bool seized;       /* PTRACE_SEIZE (no stop at attach; PTRACE_INTERRUPT allowed) */
	bool exitkill;     /* PTRACE_O_EXITKILL: killed when the tracer exits */
	unsigned options;  /* the tracer's PTRACE_O_* (the emulated ones) */
	bool stop_wanted;  /* the sentry's PTRACE_INTERRUPT is on its way: hold at that stop */
	int want_code;     /* what that stop reports: SIGSTOP (ATTACH) or an event stop's code */
	bool held;         /* at a stop the sentry keeps for the tracer */
	bool signal_stop;  /* held at a signal's delivery (code: the signal), else an event stop */
	bool group_stop;   /* the held stop was a group-stop: resumed with PTRACE_LISTEN */
	bool syscall_stop; /* held at a syscall-entry or -exit stop */
	bool reported;     /* a wait of the tracer has seen the held stop */
	int code;          /* the held stop as a wait status shows it (status >> 8) */
	int pass_sig;      /* a signal the tracer injected: delivered without a stop */
	int resume_req;    /* how the tracer let it run: PTRACE_CONT (0), SYSCALL or SINGLESTEP */
	unsigned long msg; /* PTRACE_GETEVENTMSG of the held stop */
	/* A syscall stop: the call, whether this is its exit (and then its result, for a stop the
	 * sentry made itself: the exec's), shown as Linux shows it. */
	long sys_nr;
	bool sys_exit, sys_made;
	/* An exec the tracer is told of once the loader hands the program over (exec.c), and the
	 * stops owed after the held one without the task running (an exec's: its event, its
	 * syscall-exit, its SIGTRAP). */
	bool in_exec, exec_stops;
	int queued[3], nqueued;
	unsigned host_extra;    /* PTRACE_O_TRACEEXIT / TRACEVFORKDONE set on the host for it */
	uint64_t skip_entry_ip; /* a call the sentry re-runs: its second entry stop is not shown */
};

/* A blocking write (write, sendto, writev, sendmsg) or MSG_WAITALL receive (recvfrom, recvmsg)
 * that an ignored signal cut short, whose rest the task is moving in pieces (short_transfer.c). */
struct cbox_rest {
	uint64_t done;        /* bytes moved so far; 0 when no call is being finished */
	uint64_t ip, sp;      /* where the cut call returns, and its stack pointer */
	unsigned stops;       /* syscall stops seen while waiting for a piece's exit */
	long nr, piece_nr;    /* the cut call; the call moving a piece (write, sendto, recvfrom) */
	uint64_t args[6];     /* the cut call's arguments, given back when it returns */
	uint64_t piece;       /* bytes the piece under way asks for */
	uint64_t total;       /* bytes the cut call asked for */
	uint64_t iov;         /* writev, sendmsg, recvmsg: the guest's iovec array */
	unsigned iovcnt, idx; /* its length, and the element under way */
};

struct cbox_task {
	pid_t tid;  /* host tid, in the sentry's pid namespace */
	pid_t vtid; /* tid inside the sandbox */
	int pidfd;  /* for pidfd_getfd, -1 until needed */
	struct cbox_thread_group *tg;
	struct cbox_fdtable *files;
	struct cbox_fs_ctx *fs;
	struct cbox_cred *cred; /* ids and capabilities (cbox/cred.h); NULL until linked */
	struct cbox_exec_pending *exec;
	uint64_t clone_flags; /* flags of the clone the task is making, for the child's setup */
	bool seen_first_stop;
	bool attached_parent; /* child task: linked to its parent's state */
	bool new_channel;     /* ptrace platform: a fork's child, to get its own install channel */
	bool renew_channel;   /* ptrace platform: an exec or unshare(CLONE_FILES) unshared a
	                       * shared fd table: the same, at its next trapped call (dispatch.c) */
	int stop_sig;         /* the signal of the group-stop it is held in (tracer.c), else 0 */
	/* The last trapped call the sentry let the host run (nr + 1, 0: none) and where: a
	 * signal interrupting that one is the host's own EINTR (restart.c) */
	int continued_nr1;
	uint64_t continued_ip;
	/* A clone3 the sentry rewrote into clone (syscalls/sys_clone.c): in the parent until the
	 * call's exit (clone3_pending), then in the child until it first runs (clone3_child). */
	struct cbox_clone3_fixup clone3;
	bool clone3_pending, clone3_child;
	/* Started by the sentry: its first execve carries its seccomp listener (tracer.c) */
	bool takes_listener;
	/* The loader was told to end with its start request (exec.c, loader_abi.h) */
	bool loader_start;
	/* The sentry ended this task's waiting call for a signal with -ERESTARTSYS (defer.c), at
	 * restart_ip: the kernel's restart rules apply to it as they come (EINTR for a handler
	 * without SA_RESTART), not the always-restart of a wait the signal cut short (restart.c) */
	bool restart_answered;
	uint64_t restart_ip;
	/* At its last signal stop the task was in call rs_nr, interrupted with -rs_code at rs_ip,
	 * which the kernel restarts if that signal is ignored (restart.c) */
	bool rs_armed;
	uint64_t rs_ip, rs_nr;
	int64_t rs_code;
	/* A blocking transfer an ignored signal cut short, whose rest the task is moving
	 * (short_transfer.c) */
	struct cbox_rest rest;
	/* PR_SET_NO_NEW_PRIVS as the guest set it: inherited by every child, kept across exec
	 * (the host's flag is always set, for the filter each task installs: guest_init.c) */
	bool no_new_privs;
	/* The host tid of the task that forked this one (its real parent thread; 0 for a task
	 * the sentry started) */
	pid_t parent_tid;
	/* A record of an exited process its parent has not waited for, kept for /proc only
	 * (task.c, "zombies"): no fds, fs, program or thread group */
	bool zombie;
	struct cbox_ptrace_emu pt; /* traced by another guest task (sentry/ptrace_emu.c) */
	struct cbox_task *next_in_hash;
};

/* What /proc/TID/stat says of host task tid, numbered as the sentry's /proc numbers tasks: its
 * parent's pid, process group, session and controlling terminal (a device number, 0: none).
 * Returns 0 or -ESRCH. */
struct cbox_task_stat {
	pid_t ppid, pgid, sid;
	dev_t tty;
};
CBOX_API int cbox_task_stat(pid_t tid, struct cbox_task_stat *out);
/* A coarse monotonic clock (ns; a tick's resolution, read from the vDSO). */
CBOX_API uint64_t cbox_vfs_now_ns(void);

/* The process group of host task tid as the guest numbers it (its status's last NSpgid), or 0
 * when it is gone or outside the guest's pid namespace. */
CBOX_API pid_t cbox_task_vpgid_of(pid_t host_pid);
/* Call fn for each linked guest task (every thread), until it returns false. fn must not add or
 * remove tasks. */
CBOX_API void cbox_task_each(struct cbox_sentry *s, bool (*fn)(struct cbox_task *t, void *ctx),
                             void *ctx);
/* The task with host tid, or NULL. */
CBOX_API struct cbox_task *cbox_task_find(struct cbox_sentry *s, pid_t tid);
/* The linked task whose pid or tid in the sandbox is vid (> 0), or NULL. */
CBOX_API struct cbox_task *cbox_task_by_vtid(struct cbox_sentry *s, pid_t vid);
/* The pid of t's thread group inside the sandbox (read from the host once, then kept). */
CBOX_API pid_t cbox_task_vpid(struct cbox_sentry *s, struct cbox_task *t);

/*
 * Linux's ptrace_may_access between guest tasks, on the ids the sentry keeps: t's own thread
 * group, or cbox_cred_may_ptrace (fscreds: PTRACE_MODE_FSCREDS, else REALCREDS) with target
 * dumpable (else CAP_SYS_PTRACE). It guards what reads or changes another process: ptrace,
 * /proc/PID's memory, environment and fds, process_vm_readv, pidfd_getfd, kcmp.
 * Security: every guest task is the one host id, so the host's own check would let any guest
 * task into any other; this is what keeps one guest user out of another's processes.
 */
CBOX_API bool cbox_task_may_access(const struct cbox_task *t, const struct cbox_task *target,
                                   bool fscreds);

/*
 * Linux's check_kill_permission between guest tasks (sentry/signal.c): t may send sig (0 too)
 * to target when cbox_cred_may_signal allows it, or sig is SIGCONT and both are in one session.
 * Returns 0 or -EPERM.
 */
CBOX_API int cbox_signal_allowed(struct cbox_sentry *s, struct cbox_task *t,
                                 struct cbox_task *target, int sig);
/*
 * kill(pid, sig) for pid 0 (t's process group), -1 (every process but t's and the guest's pid 1)
 * or below -1 (process group -pid), with sig already known valid: CBOX_SYSRET_CONTINUE when t may
 * signal every target (the host sends, and finds none as Linux would), -EPERM when it may signal
 * none of a group (0 for -1, which Linux answers so), else the sentry sends to the allowed ones
 * itself and returns 0.
 */
CBOX_API int64_t cbox_signal_group(struct cbox_sentry *s, struct cbox_task *t, pid_t pid, int sig);

/*
 * Whether host file dev/ino is the program or the ELF interpreter of a running guest process.
 * Linux refuses to open such a file for writing or to truncate it (ETXTBSY): its pages are
 * read in as the program runs, so a write would change (or crash) it mid-run. The kernel cannot
 * enforce it here, because the sentry's loader maps the program rather than the kernel's exec.
 */
CBOX_API bool cbox_text_busy(struct cbox_sentry *s, uint64_t dev, uint64_t ino);

/* ---- a syscall being handled --------------------------------------------------------------- */

struct cbox_sysctx {
	struct cbox_sentry *s;
	struct cbox_task *task;
	struct cbox_trap *trap;
	bool answered; /* cbox_sys_install_answer has answered the call already */
};

/*
 * Answer the calling task's syscall later, as a blocking call in Linux would: the task stays
 * blocked (in its seccomp notification, or at its ptrace stop) while the sentry serves others.
 * step(c, arg) is called with a context for the same task and call whenever fd (>= 0) reports
 * one of events, and every retry_ms milliseconds (> 0); it returns CBOX_SYSRET_DEFER to go on
 * waiting, else the answer (a result, -errno or CBOX_SYSRET_CONTINUE). drop(arg) runs once the
 * wait ends either way (also when the task dies). fd stays the caller's until drop. Returns
 * CBOX_SYSRET_DEFER (the handler returns it) or -ENOMEM.
 */
CBOX_API int64_t cbox_sys_defer(struct cbox_sysctx *c, int fd, short events, int retry_ms,
                                int64_t (*step)(struct cbox_sysctx *c, void *arg),
                                void (*drop)(void *arg), void *arg);

/*
 * Emulated ptrace between guest tasks (sentry/ptrace_emu.c; the requests in
 * syscalls/sys_ptrace.c). attach: tracee t (not traced) is traced by tracer from now on, running
 * on (seized: PTRACE_SEIZE's, which allows PTRACE_INTERRUPT). interrupt: stop t (traced) as soon
 * as it can, reporting code (a wait status >> 8). resume: a held t runs on, sig delivered (0:
 * none). detach: t is no longer traced (resumed with sig when held). How many tasks are traced:
 * cbox_ptrace_emu_count (0: waits need no look).
 */
CBOX_API void cbox_ptrace_emu_attach(struct cbox_sentry *s, struct cbox_task *t,
                                     struct cbox_task *tracer, bool seized, bool exitkill);
CBOX_API int cbox_ptrace_emu_interrupt(struct cbox_sentry *s, struct cbox_task *t, int code);
CBOX_API void cbox_ptrace_emu_resume(struct cbox_sentry *s, struct cbox_task *t, int req, int sig);
/* The request that resumes t on the host after the sentry's own stops (an answered call, an
 * event): the guest tracer's PTRACE_SYSCALL or PTRACE_SINGLESTEP, else PTRACE_CONT. */
CBOX_API int cbox_ptrace_emu_resume_req(const struct cbox_task *t);
/* Before the sentry lets t go on from a stop of its own: the stop its tracer is owed, asked for
 * again (ptrace_emu.c says why). */
CBOX_API void cbox_ptrace_emu_rearm(struct cbox_task *t);
/* Hold t, at a syscall-exit stop the platform left it in (struct cbox_trap's hold_exit). */
CBOX_API void cbox_ptrace_emu_hold_exit(struct cbox_sentry *s, struct cbox_task *t, long nr);
/* The loader has mapped t's new program (exec.c): the stops its tracer is owed for the exec. */
CBOX_API void cbox_ptrace_emu_exec_done(struct cbox_sentry *s, struct cbox_task *t);
CBOX_API void cbox_ptrace_emu_detach(struct cbox_sentry *s, struct cbox_task *t, int sig);
CBOX_API size_t cbox_ptrace_emu_count(const struct cbox_sentry *s);
/*
 * The tracees of caller's thread group (of caller alone with nothread) that a wait for pid
 * selects (> 0: that tid; -1: any; other selectors select none): *any tells whether there is
 * one, and the first held at a stop no wait has seen is returned, its vtid filled (NULL: none).
 */
CBOX_API struct cbox_task *cbox_ptrace_emu_waitable(struct cbox_sentry *s, struct cbox_task *caller,
                                                    pid_t pid, bool nothread, bool *any);
/*
 * An exit of a tracee of caller's (as for cbox_ptrace_emu_waitable) that its wait is owed: true
 * with its guest tid and wait status, removed unless peek. *any is set when there is one.
 */
CBOX_API bool cbox_ptrace_emu_zombie(struct cbox_sentry *s, struct cbox_task *caller, pid_t pid,
                                     bool nothread, bool peek, pid_t *vtid, int *status);

/* Guest memory of the calling task (0 or -EFAULT). */
CBOX_API int cbox_sys_read(struct cbox_sysctx *c, uint64_t addr, void *buf, size_t len);
CBOX_API int cbox_sys_write(struct cbox_sysctx *c, uint64_t addr, const void *buf, size_t len);
/* A path argument: -EFAULT, -ENAMETOOLONG (no NUL within PATH_MAX), or its length. */
CBOX_API int cbox_sys_read_path(struct cbox_sysctx *c, uint64_t addr, char *buf /* PATH_MAX */);
/* Install a host fd (borrowed) in the calling task; record it for d. Returns the guest fd. */
CBOX_API int cbox_sys_install(struct cbox_sysctx *c, int hostfd, int flags, struct cbox_dentry *d);
/* The same, for a handler whose answer is the new fd: it must return what this returns. Where the
 * platform can, the call is answered here, in the same step (the task may run before the handler
 * returns); a failure (-errno) answers nothing. */
CBOX_API int cbox_sys_install_answer(struct cbox_sysctx *c, int hostfd, int flags,
                                     struct cbox_dentry *d);

/* Sentry-wide state handlers need. */
CBOX_API struct cbox_gofer_client *cbox_sentry_gofer(struct cbox_sentry *s);
/* d's gofer fid (d on a gofer mount), walked now when the sentry looked d up itself (a name of a
 * read-only mount: fs_gofer_local.c). -ESTALE when the host has replaced d's name since, or the
 * walk's -errno. */
CBOX_API int cbox_dentry_fid(struct cbox_sentry *s, struct cbox_dentry *d, uint32_t *fid);
CBOX_API const char *cbox_sentry_hostname(struct cbox_sentry *s);
CBOX_API const struct cbox_sentry_config *cbox_sentry_config(struct cbox_sentry *s);
/* The number of guest tasks (threads) the sentry tracks. */
CBOX_API size_t cbox_sentry_ntasks(struct cbox_sentry *s);
CBOX_API void cbox_sentry_set_hostname(struct cbox_sentry *s, const char *name, size_t len);
CBOX_API struct cbox_platform *cbox_sentry_platform(struct cbox_sentry *s);
/* The loader's path inside the guest's real (empty) mount namespace. */
CBOX_API const char *cbox_sentry_loader_path(struct cbox_sentry *s);

/* exec (sentry/exec.c): the guest's execve/execveat at its ptrace stop, rewritten into an exec
 * of the loader; returns CBOX_SYSRET_DONE or the -errno Linux gives before the point of no
 * return. */
CBOX_API int64_t cbox_exec(struct cbox_sysctx *c, int dirfd, uint64_t path, uint64_t argv,
                           uint64_t envp, int flags);
/* The loader's request for the program being exec'd (CBOX_LOADER_IOCTL). */
CBOX_API int64_t cbox_exec_loader_request(struct cbox_sysctx *c);
/* The loader's start request (loader_abi.h): 0 when it was this task's, answered; else
 * CBOX_SYSRET_CONTINUE (an ordinary execve). */
CBOX_API int64_t cbox_exec_loader_start(struct cbox_sysctx *c);
