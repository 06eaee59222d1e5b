#pragma once
/* The syscall handlers (one file per family) and what they share. */
#include <stdint.h>
#include "cbox/kernel.h"
#include "cbox/syscalls.h"

int64_t sys_access(struct cbox_sysctx *c);
int64_t sys_seccomp(struct cbox_sysctx *c);
int64_t sys_name_to_handle_at(struct cbox_sysctx *c);
int64_t sys_openat2(struct cbox_sysctx *c);
int64_t sys_inotify_add_watch(struct cbox_sysctx *c);
int64_t sys_fchmodat2(struct cbox_sysctx *c);
int64_t sys_unshare(struct cbox_sysctx *c);
int64_t sys_setns(struct cbox_sysctx *c);
/* A struct that grows by version (clone_args, bpf_attr, perf_event_attr), read as Linux's
 * copy_struct_from_user does: E2BIG past a page or for nonzero bytes past the known fields
 * (which this build knows), EFAULT; the rest of *out (known bytes) zeroed (sys_privileged.c). */
#define CBOX_PAGE 4096
/* seccomp's check of a new filter (sys_privileged.c): EFAULT, EINVAL, EACCES or CONTINUE. */
int64_t cbox_sys_filter_allowed(struct cbox_sysctx *c, uint64_t prog);
int cbox_sys_read_sized(struct cbox_sysctx *c, uint64_t addr, uint64_t size, void *out,
                        size_t known);
int64_t sys_bpf(struct cbox_sysctx *c);
int64_t sys_perf_event_open(struct cbox_sysctx *c);
int64_t sys_clock_settime(struct cbox_sysctx *c);
int64_t sys_settimeofday(struct cbox_sysctx *c);
int64_t sys_getuid(struct cbox_sysctx *c);
int64_t sys_geteuid(struct cbox_sysctx *c);
int64_t sys_getgid(struct cbox_sysctx *c);
int64_t sys_getegid(struct cbox_sysctx *c);
int64_t sys_getresuid(struct cbox_sysctx *c);
int64_t sys_getresgid(struct cbox_sysctx *c);
int64_t sys_getgroups(struct cbox_sysctx *c);
int64_t sys_capget(struct cbox_sysctx *c);
/* prctl's PR_CAPBSET_READ, PR_GET_KEEPCAPS and PR_SET_KEEPCAPS (sys_ident.c). */
int64_t cbox_sys_prctl_caps(struct cbox_sysctx *c);
int64_t sys_kill(struct cbox_sysctx *c);
int64_t sys_ptrace(struct cbox_sysctx *c);
int64_t sys_wait4(struct cbox_sysctx *c);
int64_t sys_waitid(struct cbox_sysctx *c);
int64_t sys_tkill(struct cbox_sysctx *c);
int64_t sys_tgkill(struct cbox_sysctx *c);
int64_t sys_rt_sigqueueinfo(struct cbox_sysctx *c);
int64_t sys_rt_tgsigqueueinfo(struct cbox_sysctx *c);
int64_t sys_pidfd_send_signal(struct cbox_sysctx *c);
/* The task a pidfd of the caller names: its fdinfo's "Pid:" line, numbered in the sentry's own
 * /proc as the sentry's tasks are. NULL when it is no pidfd or names no task of the sentry's
 * (sys_kill.c). */
struct cbox_task *cbox_sys_pidfd_task(struct cbox_sysctx *c, int pidfd);
/* Calls on another process, checked on the ids the sentry keeps (sys_xproc.c). */
int64_t sys_process_vm_readv(struct cbox_sysctx *c);
int64_t sys_process_vm_writev(struct cbox_sysctx *c);
int64_t sys_pidfd_getfd(struct cbox_sysctx *c);
int64_t sys_kcmp(struct cbox_sysctx *c);
int64_t sys_get_robust_list(struct cbox_sysctx *c);
int64_t sys_move_pages(struct cbox_sysctx *c);
int64_t sys_migrate_pages(struct cbox_sysctx *c);
int64_t sys_prlimit64(struct cbox_sysctx *c);
/* Another process's scheduling, checked on the ids the sentry keeps (sys_sched.c). */
int64_t sys_setpriority(struct cbox_sysctx *c);
int64_t sys_getpriority(struct cbox_sysctx *c);
int64_t sys_ioprio_set(struct cbox_sysctx *c);
int64_t sys_ioprio_get(struct cbox_sysctx *c);
int64_t sys_sched_setparam(struct cbox_sysctx *c);
int64_t sys_sched_setscheduler(struct cbox_sysctx *c);
int64_t sys_sched_setattr(struct cbox_sysctx *c);
int64_t sys_setuid(struct cbox_sysctx *c);
int64_t sys_setgid(struct cbox_sysctx *c);
int64_t sys_setreuid(struct cbox_sysctx *c);
int64_t sys_setregid(struct cbox_sysctx *c);
int64_t sys_setresuid(struct cbox_sysctx *c);
int64_t sys_setresgid(struct cbox_sysctx *c);
int64_t sys_setfsuid(struct cbox_sysctx *c);
int64_t sys_setfsgid(struct cbox_sysctx *c);
int64_t sys_setgroups(struct cbox_sysctx *c);
int64_t sys_capset(struct cbox_sysctx *c);
int64_t sys_bind(struct cbox_sysctx *c);
int64_t sys_chdir(struct cbox_sysctx *c);
int64_t sys_chmod(struct cbox_sysctx *c);
int64_t sys_chown(struct cbox_sysctx *c);
int64_t sys_clone(struct cbox_sysctx *c);
int64_t sys_clone3(struct cbox_sysctx *c);
int64_t sys_close(struct cbox_sysctx *c);
int64_t sys_close_range(struct cbox_sysctx *c);
int64_t sys_connect(struct cbox_sysctx *c);
int64_t sys_creat(struct cbox_sysctx *c);
int64_t sys_dup(struct cbox_sysctx *c);
int64_t sys_dup2(struct cbox_sysctx *c);
int64_t sys_dup3(struct cbox_sysctx *c);
int64_t sys_execve(struct cbox_sysctx *c);
int64_t sys_execveat(struct cbox_sysctx *c);
int64_t sys_faccessat(struct cbox_sysctx *c);
int64_t sys_faccessat2(struct cbox_sysctx *c);
int64_t sys_fchdir(struct cbox_sysctx *c);
int64_t sys_fchmod(struct cbox_sysctx *c);
int64_t sys_fchmodat(struct cbox_sysctx *c);
int64_t sys_fchown(struct cbox_sysctx *c);
int64_t sys_fchownat(struct cbox_sysctx *c);
int64_t sys_fcntl(struct cbox_sysctx *c);
int64_t sys_fstat(struct cbox_sysctx *c);
int64_t sys_fstatfs(struct cbox_sysctx *c);
int64_t sys_futimesat(struct cbox_sysctx *c);
int64_t sys_getcwd(struct cbox_sysctx *c);
int64_t sys_getdents(struct cbox_sysctx *c);
int64_t sys_getdents64(struct cbox_sysctx *c);
int64_t sys_ioctl(struct cbox_sysctx *c);
int64_t sys_lchown(struct cbox_sysctx *c);
int64_t sys_link(struct cbox_sysctx *c);
int64_t sys_linkat(struct cbox_sysctx *c);
int64_t sys_lstat(struct cbox_sysctx *c);
int64_t sys_mkdir(struct cbox_sysctx *c);
int64_t sys_mkdirat(struct cbox_sysctx *c);
int64_t sys_mknod(struct cbox_sysctx *c);
int64_t sys_mknodat(struct cbox_sysctx *c);
int64_t sys_newfstatat(struct cbox_sysctx *c);
int64_t sys_open(struct cbox_sysctx *c);
int64_t sys_openat(struct cbox_sysctx *c);
int64_t sys_prctl(struct cbox_sysctx *c);
int64_t sys_readlink(struct cbox_sysctx *c);
int64_t sys_readlinkat(struct cbox_sysctx *c);
int64_t sys_rename(struct cbox_sysctx *c);
int64_t sys_renameat(struct cbox_sysctx *c);
int64_t sys_renameat2(struct cbox_sysctx *c);
int64_t sys_rmdir(struct cbox_sysctx *c);
int64_t sys_setdomainname(struct cbox_sysctx *c);
int64_t sys_sethostname(struct cbox_sysctx *c);
int64_t sys_socket(struct cbox_sysctx *c);
int64_t sys_sendto(struct cbox_sysctx *c);
int64_t sys_sendmsg(struct cbox_sysctx *c);
int64_t sys_sendmmsg(struct cbox_sysctx *c);
/* extended attributes (sys_xattr.c) */
int64_t sys_setxattr(struct cbox_sysctx *c);
int64_t sys_lsetxattr(struct cbox_sysctx *c);
int64_t sys_fsetxattr(struct cbox_sysctx *c);
int64_t sys_getxattr(struct cbox_sysctx *c);
int64_t sys_lgetxattr(struct cbox_sysctx *c);
int64_t sys_fgetxattr(struct cbox_sysctx *c);
int64_t sys_listxattr(struct cbox_sysctx *c);
int64_t sys_llistxattr(struct cbox_sysctx *c);
int64_t sys_flistxattr(struct cbox_sysctx *c);
int64_t sys_removexattr(struct cbox_sysctx *c);
int64_t sys_lremovexattr(struct cbox_sysctx *c);
int64_t sys_fremovexattr(struct cbox_sysctx *c);
int64_t sys_stat(struct cbox_sysctx *c);
int64_t sys_statfs(struct cbox_sysctx *c);
int64_t sys_statx(struct cbox_sysctx *c);
int64_t sys_symlink(struct cbox_sysctx *c);
int64_t sys_symlinkat(struct cbox_sysctx *c);
int64_t sys_sysinfo(struct cbox_sysctx *c);
int64_t sys_sched_setaffinity(struct cbox_sysctx *c);
int64_t sys_sched_getaffinity(struct cbox_sysctx *c);
int64_t sys_truncate(struct cbox_sysctx *c);
int64_t sys_umask(struct cbox_sysctx *c);
int64_t sys_uname(struct cbox_sysctx *c);
int64_t sys_unlink(struct cbox_sysctx *c);
int64_t sys_unlinkat(struct cbox_sysctx *c);
int64_t sys_utime(struct cbox_sysctx *c);
int64_t sys_utimensat(struct cbox_sysctx *c);
int64_t sys_utimes(struct cbox_sysctx *c);

/* stat helpers (sys_stat.c) */
int64_t cbox_sys_stat_at(struct cbox_sysctx *c, int dirfd, uint64_t path, uint64_t buf, int flags);
