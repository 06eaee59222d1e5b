/*
 * The gofer's seccomp allowlist: exactly the host syscalls cbox_gofer_serve() makes, plus what
 * glibc's malloc, the logger and the crash handler's re-raise need. Everything else kills the
 * gofer. The same array is published by `cbox syscalls --host-surface`.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include "cbox/gofer.h"
#include "cbox/sanitizer.h"
#include "cbox/seccomp_allow.h"
#include "internal.h"

/* fchmodat2 (Linux 6.6) has no __NR_ macro in glibc 2.36's headers. */
#ifdef __NR_fchmodat2
#define CBOX_NR_FCHMODAT2 __NR_fchmodat2
#else
#define CBOX_NR_FCHMODAT2 452
#endif

/* Sorted by number (x86_64); a unit test checks the order. */
static const int allowed[] = {
    __NR_write,          /* 1: the logger (only on the log fd, see below) */
    __NR_close,          /* 3: clunk, error paths */
    __NR_lseek,          /* 8: WALKDIR goes on reading a listing where it stopped */
    __NR_mmap,           /* 9: malloc of large blocks */
    __NR_munmap,         /* 11: free of large blocks */
    __NR_brk,            /* 12: malloc */
    __NR_rt_sigprocmask, /* 14: the crash handler's re-raise; abort() */
    __NR_rt_sigreturn,   /* 15: return from a signal handler */
    __NR_sched_yield,    /* 24: harmless; once the wait for a request, kept for spin locks */
    __NR_mremap,         /* 25: realloc of the fid table */
    __NR_madvise,        /* 28: free trimming memory */
    __NR_getpid,         /* 39: the logger's "cbox[gofer PID]" */
    __NR_connect,        /* 42: CONNECT (an AF_UNIX socket the request carried) */
    __NR_sendto,         /* 44: SENDTO (likewise) */
    __NR_sendmsg,        /* 46: replies (only on the socket) */
    __NR_recvmsg,        /* 47: requests (only on the socket) */
    __NR_bind,           /* 49: BIND (an AF_UNIX socket the request carried) */
    __NR_getsockopt,     /* 55: BIND, CONNECT, SENDTO check SO_DOMAIN */
    __NR_fcntl,          /* 72: O_NONBLOCK after an open; OPEN O_PATH (dup) */
    __NR_ftruncate,      /* 77: SETATTR size (on a freshly reopened, checked fd) */
    __NR_fchdir,         /* 81: BIND, CONNECT, SENDTO resolve from a dir, then the root */
    __NR_umask,          /* 95: BIND gives the socket node the guest's mode, as bind(2) */
    __NR_geteuid,        /* 107: CONNECT, SENDTO: the gofer's own ids, */
    __NR_getegid,        /* 108: taken back after */
    __NR_setresuid,      /* 117: CONNECT, SENDTO as the guest's effective ids (its own fs ids), */
    __NR_setresgid,      /* 119: then back (serve_ext.c, as_guest_begin) */
    __NR_setfsuid,       /* 122 */
    __NR_setfsgid,       /* 123 */
#ifdef CBOX_ASAN
    /* 131: sanitizer builds only (the tests' debug preset): AddressSanitizer's _exit
     * interceptor tears down the alternate signal stack. Published with the rest, so that
     * `cbox syscalls --host-surface` prints exactly what this build allows; a release build
     * never allows it. */
    __NR_sigaltstack,
#endif
    __NR_fstatfs,           /* 138: STATFS (glibc's fstatfs) */
    __NR_gettid,            /* 186: the crash handler's re-raise */
    __NR_fsetxattr,         /* 190: SETXATTR on kernels before 6.13 (no setxattrat) */
    __NR_fgetxattr,         /* 193: GETXATTR, likewise */
    __NR_flistxattr,        /* 196: LISTXATTR, likewise */
    __NR_fremovexattr,      /* 199: REMOVEXATTR, likewise */
    __NR_sched_setaffinity, /* 203: waiting on the sentry's CPU (its own only, see below) */
    __NR_getdents64,        /* 217: WALKDIR reads the directory's listing */
    __NR_clock_gettime,     /* 228: the logger's time stamp when the vDSO is unavailable */
    __NR_exit_group,        /* 231: exit */
    __NR_tgkill,            /* 234: the crash handler's re-raise; abort() */
    __NR_inotify_add_watch, /* 254: INOTIFY (on the inotify fd the request carried) */
    __NR_openat,            /* 257: WALK, OPEN, CREATE */
    __NR_mkdirat,           /* 258: MKDIR */
    __NR_mknodat,           /* 259: MKNOD (FIFO, socket node, regular file; never a device) */
    __NR_fchownat,          /* 260: SETATTR uid/gid, and the owner of a node just made, always
                             * AT_EMPTY_PATH on the node's own fd (on an open file it is
                             * fchown, which is therefore not allowed as well) */
    __NR_newfstatat,        /* 262: WALK, STAT, identity checks (glibc's fstat) */
    __NR_unlinkat,          /* 263: UNLINK, undoing a failed creation or LINK */
    __NR_linkat,            /* 265: LINK */
    __NR_symlinkat,         /* 266: SYMLINK */
    __NR_readlinkat,        /* 267: READLINK */
    __NR_utimensat,         /* 280: SETATTR times (AT_EMPTY_PATH, never following a symlink) */
    __NR_renameat2,         /* 316: RENAME (with RENAME_NOREPLACE / RENAME_EXCHANGE) */
    __NR_statx,             /* 332: WALK's lstat, with the mount id (mark_mount) */
    CBOX_NR_FCHMODAT2,      /* 452: SETATTR mode (AT_EMPTY_PATH on the fid's own fd) */
    463,                    /* setxattrat: SETXATTR (user.* only, never following a symlink) */
    464,                    /* getxattrat: GETXATTR */
    465,                    /* listxattrat: LISTXATTR */
    466,                    /* removexattrat: REMOVEXATTR */
};

const int *cbox_gofer_allowed_syscalls(size_t *n)
{
	*n = CBOX_ARRAY_SIZE(allowed);
	return allowed;
}

int cbox_gofer_seccomp_install(int sock, int log_fd)
{
	/* Kill the whole process: a gofer that makes an unexpected call is compromised or broken,
	 * and an errno it could handle would let an exploit probe the filter. The socket calls
	 * and write are pinned to their one fd: a gofer taken over through a bug cannot talk on,
	 * or write into, anything else it holds (without a log fd it cannot write at all); and
	 * sched_setaffinity to pid 0, the gofer itself. */
	if (sock < 0)
		return -EBADF;
	struct cbox_allow rules[CBOX_ARRAY_SIZE(allowed)];
	size_t n = 0;
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(allowed); i++) {
		int nr = allowed[i], arg0 = CBOX_ALLOW_ANY;
		if (nr == __NR_sendmsg || nr == __NR_recvmsg)
			arg0 = sock;
		else if (nr == __NR_sched_setaffinity)
			arg0 = 0; /* pid 0, itself: never another process's CPUs */
		else if (nr == __NR_write && log_fd < 0)
			continue;
		else if (nr == __NR_write)
			arg0 = log_fd;
		rules[n++] = (struct cbox_allow){.nr = nr, .arg0 = arg0};
	}
	return cbox_allow_load(rules, n);
}
