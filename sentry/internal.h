#pragma once
/* The sentry's private state. */
#include <fcntl.h>
#include <poll.h>
#include <sys/ptrace.h>
#include <stdbool.h>
#include "cbox/kernel.h"
#include "cbox/sentry.h"
#include "cbox/syscalls.h"

#define CBOX_TASK_HASH         1024
#define CBOX_EXEC_MAX_SESSIONS 16
/* How the sentry traces every guest task. EXITKILL: if the sentry dies, every guest task dies
 * with it. */
#define CBOX_PTRACE_OPTIONS                                                                        \
	(PTRACE_O_EXITKILL | PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |    \
	 PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC | PTRACE_O_TRACESECCOMP)
#define CBOX_DEV_COUNT 5
/* /sys (fs_sys.c): the devices of its two mounts (sysfs, cgroup2) */
#define CBOX_SYS_DEV        0x15
#define CBOX_SYS_CGROUP_DEV 0x1a
/* Where the sentry mounts its private tmpfs, its root once it pivots (sentry.c); the guest's
 * first task is cloned before that pivot and finds guest/ there (guest_init.c). */
#define CBOX_SENTRY_ROOT "/tmp"

#define CBOX_WRITTEN_BITS 65536u
/* Pseudo-terminals the sandbox may hold at once (its devpts instance's max=) */
#define CBOX_PTS_MAX 256

struct cbox_sentry {
	const struct cbox_sentry_config *cfg;
	struct cbox_platform *platform;
	struct cbox_gofer_client *gofer;
	struct cbox_task *tasks[CBOX_TASK_HASH];
	size_t ntasks;
	struct cbox_task *zombies; /* exited processes not yet waited for (task.c), a list */
	pid_t init_tid;            /* the guest's first task */
	/* With a tiny init (cbox-run --init): pid 1 as the guest's /proc shows it. Not a traced
	 * task and in no table: only fs_proc*.c see it (tid 0 without one). */
	struct cbox_task tiny_init;
	bool tiny_init_exited; /* reaped: every guest task is gone (tracer.c) */
	int init_status;       /* its wait status once it exited, -1 before */
	int init_fault_sig;    /* a fault that killed it (see tracer.c), else 0 */
	int exec_fail_status;  /* exit status when the first exec failed (127/126), else 0 */
	char hostname[65];
	char loader_path[64];
	ino_t loader_ino; /* its inode, as the guest's maps name it (fs_proc_pid.c) */
	/* the mount table: "/", "/proc", "/dev", "/sys" */
	struct cbox_mount root_mnt, proc_mnt, dev_mnt, sys_mnt;
	int sys_fd;    /* the host's /sys, which the guest's shows parts of (fs_sys.c), or -1 */
	int sysnet_fd; /* a sysfs of the sandbox's network namespace (fs_sys_net.c), or -1 */
	/* /dev/shm: a directory of the gofer's tree mounted on the sentry's /dev (NULL mp: none) */
	struct cbox_mount shm_mnt;
	struct cbox_dentry *shm_mp;
	struct cbox_dentry *root;
	int dev_fds[CBOX_DEV_COUNT]; /* /dev/null, zero, full, random, urandom, opened at start */
	/* unreferenced gofer dentries kept for reuse, oldest first (dcache.c) */
	struct cbox_dentry *lru_head, *lru_tail;
	size_t lru_len;
	size_t lru_cap; /* how many it may hold: CBOX_VFS_LRU_MAX, less once the gofer ran out of
	                   fds */
	/* Fids released while clunks are batched (cbox_fs_gofer_batch_clunks): sent as one
	 * CLUNKN */
	bool batch_clunks;
	size_t n_clunks;
	uint32_t clunks[CBOX_GOFER_CLUNKN_MAX];
	uint64_t trap_seq; /* counts the calls dispatched: "within this call" (fs_gofer.c) */
	/* Files served lately, by host identity, so that an fd the guest made on the fast path
	 * (dup2 of a closed original) can be named again (fdtable.c) */
	struct cbox_recent {
		uint64_t dev, ino;
		char *path;
	} recent[256];
	unsigned recent_next;
	struct cbox_deferred *deferred;    /* syscalls answered later (defer.c) */
	size_t pt_tracees;                 /* guest tasks another one traces (ptrace_emu.c) */
	struct cbox_pt_zombie *pt_zombies; /* their exits owed to tracers (ptrace_emu.c) */
	size_t n_ro_fds;                   /* fds kept by read-only dentries */
	size_t ro_fds_max;                 /* at most this many (a share of the fd limit) */
	/* The sentry's own stat shows the owners the gofer's would (fs_gofer_local.c): its
	 * view of the host owner is local_uid:local_gid, any other id is the overflow id. */
	bool local_ids;
	uint32_t local_uid, local_gid;
	/* Run by root: the mount id of the gofer's view (VIEW), on which alone the sentry looks
	 * names up itself (fs_gofer_local.c); 0 for none. */
	uint64_t view_mnt_id;
	bool view_wanted;    /* (run by root with one host id: ask the gofer for its view) */
	size_t n_anon_fds;   /* fds kept by unnamed files (anon_fd1) */
	size_t anon_fds_max; /* likewise */
	uint64_t refused_logged[(512 + 63) / 64]; /* refused syscalls already logged */
	/* Busy text: the host files running guest images come from, with how many thread
	 * groups run each (task.c) */
	struct cbox_text {
		uint64_t dev, ino;
		unsigned refs;
	} * text;
	size_t ntext, text_cap;
	struct cbox_owners *owners; /* owners the guest gave files (owners.c); NULL: none */
	/* Every host file a guest task may have held open for writing, as a Bloom filter (task.c):
	 * a file never noted cannot be open for writing now, and needs no ETXTBSY scan. */
	uint64_t written[CBOX_WRITTEN_BITS / 64];
	/* `cbox exec` (exec_ctl.c): the monitor's control socket (-1: none), the spawner, the
	 * connections waiting for their request, and the tasks started with their connection */
	int exec_ctl, spawner_sock;
	int pending[CBOX_EXEC_MAX_SESSIONS];
	size_t npending;
	struct cbox_exec_session {
		pid_t tgid;
		int conn;
	} exec[CBOX_EXEC_MAX_SESSIONS];
	size_t nexec;
	/* `cbox pause`'s connection while the sentry takes no new trapped call from its
	 * listeners (-1: it takes them); see cbox_exec_ctl_quiet */
	int quiet_conn;
	/* The sandbox's own pseudo-terminals (/dev/ptmx, /dev/pts; fs_dev.c): a private devpts
	 * instance in the sentry's root (pts_dir: its directory, -1 when it could not be mounted),
	 * with -t its pty 0 held (pts_hold) so that the -t terminal alone is /dev/pts/0, and the
	 * guest ids that opened each (devpts gives the sentry's own host id) */
	int pts_dir, pts_hold;
	struct cbox_pts_owner {
		uint32_t uid;
		bool set;
	} pts_owner[CBOX_PTS_MAX];
	/* CLOCK_REALTIME at the sentry's start: the times of its own /proc and /dev nodes, as
	 * Linux gives a new inode the time it was made (they showed 1970) */
	struct timespec born;
};

/* tasks (task.c) */
struct cbox_task *cbox_task_new(struct cbox_sentry *s, pid_t tid);
void cbox_task_remove(struct cbox_sentry *s, struct cbox_task *t);
/* Task t, a process's last task, exits: keep a zombie record of it while the host's task is a
 * zombie (call before cbox_task_remove). */
void cbox_task_zombie_add(struct cbox_sentry *s, struct cbox_task *t);
/* Drop the records of zombies the host no longer has (waited for, or reaped by themselves). */
void cbox_task_zombies_sweep(struct cbox_sentry *s);
/* The zombie record of guest pid vid, checked against the host, or NULL. */
struct cbox_task *cbox_task_zombie(struct cbox_sentry *s, pid_t vid);
pid_t cbox_task_vpid_of(struct cbox_sentry *s, pid_t host_pid);
/* tg now runs the files of the host fds (its program and interpreter; -1 skipped), instead of
 * what it ran before. */
void cbox_text_exec(struct cbox_sentry *s, struct cbox_thread_group *tg, const int fds[2]);
/* Whether a guest process has the file of host fd open for writing: exec of it is then
 * ETXTBSY, as on Linux. Only the sandbox's own processes are seen (a host process writing the
 * file is not). */
bool cbox_text_writers(struct cbox_sentry *s, int fd);
/* A guest task got (dev, ino) open for writing (an fd the sentry installed), or may hold one:
 * cbox_text_note_fds notes every regular file task tgid has open for writing (a task the
 * sentry starts, whose fds it did not install). */
void cbox_text_note_writer(struct cbox_sentry *s, uint64_t dev, uint64_t ino);
/* Whether a guest task may hold the file open for writing (false: certainly not; task.c). */
bool cbox_text_maybe_written(const struct cbox_sentry *s, uint64_t dev, uint64_t ino);
void cbox_text_note_fds(struct cbox_sentry *s, pid_t tgid);
/* A forked thread group (to) runs the same image as from. */
void cbox_text_fork(struct cbox_sentry *s, struct cbox_thread_group *to,
                    const struct cbox_thread_group *from);

/* What the guest gave a file that its host file does not keep (owners.c). cbox_owner_of: the
 * owner of the file g describes as the guest's checks see it (cbox_id_to_guest, then what the
 * guest gave it), and *mode (when not NULL) its mode with the set-ID bits the guest gave it.
 * cbox_owner_set: remember uid:gid (guest ids) for (dev, ino) of a file the sandbox's host id
 * owns (the ids that host id shows as forget it; nothing with all ids); -ENOMEM past a bound.
 * cbox_owner_chown: the same for a chown ((uint32_t)-1 keeps what is remembered).
 * cbox_owner_setid, cbox_owner_set_setid: the S_ISUID and S_ISGID bits remembered (0: none).
 * cbox_owner_kill_setid: drop them as Linux does on a chown or an unprivileged truncation of a
 * file of mode mode (set-group-ID only with group execute).
 * cbox_owner_known: anything is remembered. cbox_owner_gone: the file's last name went. */
void cbox_owner_of(const struct cbox_sentry *s, const struct cbox_gofer_stat *g, uint32_t *uid,
                   uint32_t *gid, uint32_t *mode);
int cbox_owner_set(struct cbox_sentry *s, uint64_t dev, uint64_t ino, uint32_t uid, uint32_t gid);
int cbox_owner_chown(struct cbox_sentry *s, uint64_t dev, uint64_t ino, uint32_t uid, uint32_t gid);
uint32_t cbox_owner_setid(const struct cbox_sentry *s, uint64_t dev, uint64_t ino);
int cbox_owner_set_setid(struct cbox_sentry *s, uint64_t dev, uint64_t ino, uint32_t setid);
void cbox_owner_kill_setid(struct cbox_sentry *s, uint64_t dev, uint64_t ino, uint32_t mode);
bool cbox_owner_known(const struct cbox_sentry *s, uint64_t dev, uint64_t ino);
void cbox_owner_gone(struct cbox_sentry *s, uint64_t dev, uint64_t ino);
void cbox_owners_free(struct cbox_sentry *s);
struct cbox_task *cbox_task_find_vpid(struct cbox_sentry *s, pid_t vpid);

/* deferred answers (defer.c) */
struct cbox_deferred;
/* Fill pf (room for n) with the deferred calls' fds; returns how many, and *timeout_ms the
 * time to the next retry (-1: none). */
size_t cbox_defer_pollfds(struct cbox_sentry *s, struct pollfd *pf, size_t n, int *timeout_ms);
/* Run the steps that are due (pf as filled by cbox_defer_pollfds, with revents). */
void cbox_defer_run(struct cbox_sentry *s, const struct pollfd *pf, size_t n);
/* Something a deferred call may wait for happened (a stop held for a tracer, a tracee gone):
 * run every deferred step again at the next turn of the loop. */
void cbox_defer_kick(struct cbox_sentry *s);
/* Whether task tid waits in a deferred call. */
bool cbox_defer_has(const struct cbox_sentry *s, pid_t tid);
/* Answer a trapped call with r, as the dispatcher does (reply, continue, or nothing). */
void cbox_dispatch_answer(struct cbox_sysctx *c, const struct cbox_sys_entry *e, int64_t r);

/* emulated ptrace (ptrace_emu.c). stop: task t, traced by a guest task, reported a stop to the
 * sentry (event_stop: a PTRACE_EVENT_STOP, else sig's delivery): true when the sentry now holds
 * it for its tracer (the caller must not resume it). forget: t is going away (as a tracee, and as
 * a tracer whose tracees are let go). */
bool cbox_ptrace_emu_stop(struct cbox_sentry *s, struct cbox_task *t, int sig, bool event_stop);
/* Tracee t exited with wait status status: its tracer's wait is owed the exit, unless it is
 * the tracer's own child, whose exit the host reports. Call before cbox_task_remove. */
void cbox_ptrace_emu_exited(struct cbox_sentry *s, struct cbox_task *t, int status);
/* Hold t at the host's event stop (PTRACE_EVENT_*) when its tracer asked for the event; msg is
 * what PTRACE_GETEVENTMSG then gives. */
bool cbox_ptrace_emu_event(struct cbox_sentry *s, struct cbox_task *t, int event,
                           unsigned long msg);
/* Hold t at the host's syscall-entry or -exit stop of call nr (made at ip) when its tracer
 * resumed it with PTRACE_SYSCALL. */
bool cbox_ptrace_emu_syscall_stop(struct cbox_sentry *s, struct cbox_task *t, bool exit_stop,
                                  long nr, uint64_t ip);
void cbox_ptrace_emu_forget(struct cbox_sentry *s, struct cbox_task *t);

/* the trap loop (tracer.c) */
int cbox_tracer_loop(struct cbox_sentry *s);
/* Whether task tid, held in a group-stop (stop_sig), was continued since (tracer.c). */
bool cbox_tracer_group_stop_ended(pid_t tid);
/* The registers of task t (host tid) at the delivery stop of signal sig, put where Linux would
 * have left the call it interrupted (restart.c); call before resuming it. */
void cbox_signal_stop_regs(struct cbox_sentry *s, struct cbox_task *t, pid_t tid, int sig);
struct user_regs_struct;
/* Whether task tid ignores signal sig, which Linux would have dropped as it was sent
 * (restart.c). */
bool cbox_signal_ignored_by(pid_t tid, int sig);
/* At the delivery stop of signal sig: a transfer it cut short (registers r) started again on
 * its rest, true when r was changed; and a syscall stop of task t while it moves that rest
 * (t->rest.done), true when handled (the task resumed) (short_transfer.c). */
bool cbox_short_transfer(struct cbox_sentry *s, struct cbox_task *t, pid_t tid, int sig,
                         struct user_regs_struct *r);
bool cbox_rest_stop(struct cbox_task *t, pid_t tid);
void cbox_dispatch(struct cbox_sentry *s, struct cbox_trap *trap);

/* file systems */
extern const struct cbox_fs_ops cbox_fs_gofer;
extern const struct cbox_fs_ops cbox_fs_proc;
/* The cache of gofer directories' children (dcache.c): link d under dir, find dir's child name. */
void cbox_vfs_cache_link(struct cbox_dentry *dir, struct cbox_dentry *d);
struct cbox_dentry *cbox_vfs_cached_child(const struct cbox_dentry *dir, const char *name);
/* d is /proc/PID/fd/N: what following the link reaches, as Linux's magic link does, where its
 * text would not lead there (a new reference): an unlinked file (an O_TMPFILE one, or removed
 * while open), or the object of an fd the sentry did not serve (a pipe, the caller's stdin).
 * NULL otherwise: the link's text is followed (and says EACCES where task t may not inspect the
 * process, fs_proc.c). */
/* Whether an open with flags asks only for access that an fd whose status flags (F_GETFL) are
 * have already holds. Security: a copy of a guest's own fd given where the host refuses the
 * sentry a reopen (reopen_target, fs_proc.c; guests_own, fs_gofer.c) must not give it more. */
static inline bool cbox_access_within(int have, int flags)
{
	return (have & O_ACCMODE) == (flags & O_ACCMODE) || (have & O_ACCMODE) == O_RDWR;
}
struct cbox_dentry *cbox_proc_fd_target(struct cbox_sentry *s, struct cbox_task *t,
                                        struct cbox_dentry *d);
extern const struct cbox_fs_ops cbox_fs_dev;
/* /sys (fs_sys.c): cbox_fs_sys_init keeps the host's /sys, whose files it shows, while the
 * sentry still sees it; cbox_fs_sys_free closes it. st_dev of d: CBOX_SYS_DEV, or
 * CBOX_SYS_CGROUP_DEV below /sys/fs/cgroup, a mount of its own (fs_proc_sys.c's mount table). */
extern const struct cbox_fs_ops cbox_fs_sys;
void cbox_fs_sys_init(struct cbox_sentry *s);
void cbox_fs_sys_free(struct cbox_sentry *s);
uint64_t cbox_fs_sys_dev(const struct cbox_dentry *d);
uint64_t cbox_fs_sys_magic(const struct cbox_dentry *d);
/* Unreferenced gofer dentries the cache keeps at most (dcache.c). */
#define CBOX_VFS_LRU_MAX 4096

/* Size the fds the sentry keeps (for reopens of read-only and unnamed files) to a share of its
 * fd limit (fs_gofer.c). */
void cbox_fs_gofer_fd_budget(struct cbox_sentry *s, long fd_limit);
/* The gofer answered err: when it is out of fds (EMFILE, ENFILE), shrink the dentry cache, whose
 * every entry holds an fd there, to half of what it holds, and return true (the caller retries
 * once); else false (dcache.c). */
bool cbox_vfs_relieve(struct cbox_sentry *s, int err);
/* At the sentry's start, once its id maps are written: decide how names are looked up and send
 * the gofer its first requests (cbox_gofer_early_send: the root, its view, the walks to the
 * mount points of /proc and /dev), which it answers while the sentry sets itself up. Then, once the
 * gofer is ready, cbox_vfs_init takes the answers and builds the root and the mounts (mounts.c). */
int cbox_vfs_init_early(struct cbox_sentry *s);
int cbox_vfs_init(struct cbox_sentry *s);
/* Decide whether the sentry may look names up itself (fs_gofer_local.c): once its id maps are
 * written. */
void cbox_fs_gofer_init_local(struct cbox_sentry *s);
/* Then, once s->root is made: run by root, the gofer's view (fd, its VIEW answer: consumed)
 * gives the sentry its lookups. */
void cbox_fs_gofer_init_view(struct cbox_sentry *s, int fd);
/* A new (uncached) gofer dentry for fid under dir; on failure the fid is clunked and NULL. */
struct cbox_dentry *cbox_fs_gofer_dentry(struct cbox_sentry *s, struct cbox_dentry *dir,
                                         const char *name, uint32_t fid,
                                         const struct cbox_gofer_stat *st);
/* d is an unnamed file the gofer made (TMPFILE) and fd the sentry's copy of it: keep a dup of
 * fd, through which later opens of d reopen it (within a budget; fs_gofer.c). */
void cbox_fs_gofer_keep_anon(struct cbox_sentry *s, struct cbox_dentry *d, int fd);
/* Collect the fids dentries release (on) and send them as CLUNKN when turned off, instead of a
 * CLUNK round trip each (eviction frees a thousand at a time). */
void cbox_fs_gofer_batch_clunks(struct cbox_sentry *s, bool on);
/* The same from a walk's answer, keeping the attributes of a read-only one (fs_gofer.c). */
struct cbox_dentry *cbox_fs_gofer_walked(struct cbox_sentry *s, struct cbox_dentry *dir,
                                         const char *name, uint32_t fid,
                                         const struct cbox_gofer_stat *st);
/* Keep what st says of d (new, on a gofer mount) as a walk's answer does: the attributes of a
 * read-only file for a while, of a writable one for a stat in the same call. */
void cbox_fs_gofer_keep_stat(struct cbox_sentry *s, struct cbox_dentry *d,
                             const struct cbox_gofer_stat *st);
/* fd is d's file opened read-only by the walk that found it (WALKOPEN, WALKNOPEN): keep it as
 * the fd later opens of d reopen, as an OPEN's would be kept; closed when d cannot keep it. */
void cbox_fs_gofer_keep_walk_fd(struct cbox_sentry *s, struct cbox_dentry *d, int fd);
/* Look name up in dir (a gofer directory on a read-only mount) for an open for reading: one
 * WALKOPEN round trip brings the dentry and the fd an OPEN would have (kept as above). */
int cbox_fs_gofer_lookup_open(struct cbox_sentry *s, struct cbox_dentry *dir, const char *name,
                              struct cbox_dentry **out);
/* Whether the sentry looks names of dir up itself (a directory of a read-only gofer mount, within
 * the fd budget; fs_gofer_local.c): a batched walk would cost more than it saves. */
bool cbox_fs_gofer_local(const struct cbox_sentry *s, const struct cbox_dentry *dir);
/* Look name up in dir as the gofer's WALK would (fs_gofer_local.c): 0 with *out (a dentry with no
 * fid yet), -ENOENT or -ENOTDIR as the gofer would answer, or 1: ask the gofer. */
int cbox_fs_gofer_local_lookup(struct cbox_sentry *s, struct cbox_dentry *dir, const char *name,
                               struct cbox_dentry **out);
/* The gofer's STAT of d (on a read-only mount, its parent's fd at hand) made by the sentry: the
 * attributes of d's own file (its fd's, else its name's) and whether its name still leads to it
 * (CBOX_GOFER_STAT_STALE). Returns 0, -errno, or 1: ask the gofer. */
int cbox_fs_gofer_local_restat(const struct cbox_sentry *s, const struct cbox_dentry *d,
                               struct cbox_gofer_stat *g);
/* Whether writable d's name, stat'ed by the sentry, still shows the file whose kept attributes g
 * holds, unchanged: 0 with g's access time and blocks brought up to date, or 1: ask the gofer
 * (fs_gofer_local.c). */
int cbox_fs_gofer_local_check(struct cbox_sentry *s, struct cbox_dentry *d,
                              struct cbox_gofer_stat *g);
/* Writable regular file d opened for reading by the sentry itself (flags: the guest's open
 * flags), or -1: ask the gofer (fs_gofer_local.c). */
int cbox_fs_gofer_local_open(struct cbox_sentry *s, struct cbox_dentry *d, int flags);
/* Whether name is absent from writable directory dir by the sentry's own stat (false: ask the
 * gofer; fs_gofer_local.c). */
bool cbox_fs_gofer_local_absent(struct cbox_sentry *s, struct cbox_dentry *dir, const char *name);
/* The gofer's STAT of d made by the sentry's fstat of hostfd, a guest's fd of d's file (run by a
 * user only): 0, or 1: ask the gofer (fs_gofer_local.c). */
int cbox_fs_gofer_local_fd_stat(const struct cbox_sentry *s, const struct cbox_dentry *d,
                                int hostfd, struct cbox_gofer_stat *g);
/* Whether d's cached read-only facts are still fresh (cbox_vfs_now_ns: kernel.h). */
bool cbox_vfs_ro_fresh(const struct cbox_dentry *d);
/* Drop the set-ID bits the sentry keeps for non-directory d as Linux drops them on a chown or an
 * unprivileged truncation (owners.c), in the remembered entry and in d's mode. */
void cbox_vfs_kill_setid(struct cbox_sentry *s, struct cbox_dentry *d);
/* Take d out of its parent's cache (it lives on while referenced). */
void cbox_vfs_uncache(struct cbox_dentry *d);
/* d (cached) is about to gain a reference: out of the LRU (dcache.c). */
void cbox_vfs_lru_del(struct cbox_sentry *s, struct cbox_dentry *d);
/* Put d (a gofer dentry) in dir's cache, replacing a stale entry of the same name. */
void cbox_vfs_cache(struct cbox_sentry *s, struct cbox_dentry *dir, struct cbox_dentry *d);
int cbox_sentry_seccomp_install(void);
/* A traced task the sentry started (the first, or one of `cbox exec`): its state, with its
 * working directory at cwd (guest path; "/" when not in the tree), credentials cred
 * (consumed; NULL, from a failed cbox_cred_new, gives -ENOMEM) and no_new_privs as the guest
 * sees it; install_sock: the sentry's end of its install channel (ptrace platform, consumed;
 * else -1). */
int cbox_sentry_task_start(struct cbox_sentry *s, pid_t pid, const char *cwd,
                           struct cbox_cred *cred, bool no_new_privs, int install_sock);

/* `cbox exec` (exec_ctl.c): the spawner, forked before the sentry locks itself down (after
 * the guest's first task exists); the loop's fds; a task's exit. */
int cbox_exec_ctl_init(struct cbox_sentry *s);
size_t cbox_exec_ctl_pollfds(struct cbox_sentry *s, struct pollfd *pf, size_t n);
void cbox_exec_ctl_run(struct cbox_sentry *s, const struct pollfd *pf, size_t n);
void cbox_exec_ctl_task_exit(struct cbox_sentry *s, pid_t tid, int status);
/* Whether the sentry must leave its seccomp listeners alone for now (a pause is under way). */
bool cbox_exec_ctl_quiet(const struct cbox_sentry *s);

/* The guest's first task, between the sentry's clone and its first exec (guest_init.c). */
CBOX_NORETURN void cbox_guest_init(struct cbox_sentry *s, int sync_fd, int install_fd);
/* --init: pid 1 of the guest, the program's parent (guest_init.c). */
CBOX_NORETURN void cbox_guest_tiny_init(struct cbox_sentry *s, int sync_fd, int install_fd);
/* What every task the sentry starts does before it says it is ready: its own session, the
 * terminal, no privileges, the guest filter built (exits on failure). */
void cbox_guest_prepare(struct cbox_sentry *s, bool tty);
/* Then, once the sentry traces it: the guest filter installed (unless it is already: listener
 * is then install_filter's result, -2 when not installed), and exec of argv[0] (searched in
 * the environment's PATH; resolved, when not NULL, is tried first). */
CBOX_NORETURN void cbox_guest_exec(struct cbox_sentry *s, char *const *argv, char *const *envp,
                                   const char *resolved, int listener);
/* The sentry's side: argv[0] looked up along envp's PATH for task t, into out (size bytes), as
 * the guest's search would find it; false when it has no answer for it (the guest searches). */
bool cbox_guest_resolve(struct cbox_sentry *s, struct cbox_task *t, char *const *argv,
                        char *const *envp, char *out, size_t size);
struct cbox_exec_req;
/* A `cbox exec` task: stdio from the request, the install fd (ptrace), then waits for 'g' on
 * sync_fd (sent once the sentry traces it) and runs the request. */
CBOX_NORETURN void cbox_guest_exec_task(struct cbox_sentry *s, const struct cbox_exec_req *req,
                                        const int stdio[3], int install_fd, int sync_fd);
int cbox_vfs_open_synthetic_dir(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d);
void cbox_vfs_fini(struct cbox_sentry *s);
/* "/dev/pts/N" for a terminal of the sandbox's (st: the host's stat of it): the -t one or one of
 * its devpts instance, else -ENOENT. */
int cbox_dev_tty_name(const struct cbox_sentry *s, const struct stat *st, char *buf, size_t size);
/* Mount the sandbox's devpts instance (fs_dev.c), in the sentry's root-to-be dir (before its
 * pivot_root). No instance is no error: /dev/ptmx is then absent. */
void cbox_dev_pts_setup(struct cbox_sentry *s, const char *dir);
/* A memfd holding data, sealed against writes, positioned at 0 (synthetic files). */
int cbox_memfd_with(const char *name, const void *data, size_t len);
/* A new open of fd's file with flags, through the sentry's /proc/self/fd; fd is closed either
 * way. The new fd, or -errno. */
int cbox_reopen_fd(int fd, int flags);
