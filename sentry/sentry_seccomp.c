/*
 * The sentry's own seccomp allowlist. The sentry reads hostile memory and answers hostile calls;
 * if it were ever subverted, this list is what it could ask of the host kernel. It is installed
 * once the sandbox is set up (mounts, namespaces and the guest's first task exist).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include "cbox/log.h"
#include "cbox/sanitizer.h"
#include "cbox/seccomp_allow.h"
#include "internal.h"

static const int allowed[] = {
    SYS_read,
    SYS_write,
    SYS_close,
    SYS_fstat,
    SYS_lseek,
    SYS_mmap,
    SYS_mprotect,
    SYS_munmap,
    SYS_brk,
    SYS_rt_sigaction,
    SYS_rt_sigprocmask,
    SYS_rt_sigreturn,
    SYS_ioctl,
    SYS_pread64,
    SYS_pwrite64,
    SYS_readv,
    SYS_writev,
    SYS_poll,
    SYS_sched_yield,
    SYS_mremap,
    SYS_madvise,
    SYS_getpid,
    SYS_sendmsg,
    SYS_recvmsg,
    SYS_exit,
    SYS_wait4,
    SYS_waitid, /* (stops only, for one tracee: platform/ptrace.c wait_stop) */
    SYS_kill,
    SYS_fcntl,
    SYS_getdents64,
    SYS_readlink,
    SYS_gettid,
    SYS_tgkill,
    SYS_futex,
    SYS_exit_group,
    SYS_openat,
    SYS_newfstatat,
    SYS_readlinkat,
    SYS_ppoll,
    SYS_signalfd4,
    SYS_ptrace,
    SYS_process_vm_readv,
    SYS_process_vm_writev,
    SYS_memfd_create,
    SYS_pidfd_open,
    SYS_pidfd_getfd,
    SYS_sigaltstack,
    SYS_clock_gettime,
    SYS_getrandom,
    SYS_prlimit64,
    SYS_getpriority, /* another guest user's threads, read or set one by one */
    SYS_setpriority, /* (syscalls/sys_sched.c) */
    SYS_ioprio_set,
    SYS_ioprio_get,
    SYS_sched_getaffinity,
    SYS_sched_setaffinity, /* holding a task on one CPU while an fd is installed
                            * (platform/seccomp.c); its pid names only a task of the
                            * sandbox's pid namespace, never one of the host's */
    SYS_sysinfo,
    SYS_uname,
    SYS_statx,
    SYS_getppid,
    SYS_getuid,
    SYS_sendto,
    SYS_getsockopt,
    SYS_recvfrom,
    SYS_nanosleep,
    SYS_clock_nanosleep,
    SYS_restart_syscall,
    SYS_inotify_add_watch, /* a guest's watch, added on its instance (syscalls/sys_inotify.c) */
#ifdef CBOX_ASAN
    /* Sanitizer builds only (the tests' debug preset): LeakSanitizer's check at the sentry's
     * end (cbox_leak_check) stops the sentry's threads from a clone that traces them, after
     * prctl(PR_SET_DUMPABLE) and PR_SET_PTRACER, listing them with getdents (not the 64-bit
     * call: sanitizer_linux.cpp's on x86_64). Published with the rest, so that `cbox
     * syscalls --host-surface` prints exactly what this build allows; a release build never
     * allows them. */
    SYS_clone,
    SYS_prctl,
    SYS_getdents,
    SYS_open,
#endif
};

const int *cbox_sentry_allowed_syscalls(size_t *n)
{
	*n = CBOX_ARRAY_SIZE(allowed);
	return allowed;
}

int cbox_sentry_seccomp_install(void)
{
	return cbox_allow_load_nrs(allowed, CBOX_ARRAY_SIZE(allowed));
}
