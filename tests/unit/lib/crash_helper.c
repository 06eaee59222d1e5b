/* Test helper for test_crash.c: installs the crash handler and then crashes on purpose.
 * Usage: cbox_crash_helper [segv|abort|overflow|seccomp] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/syscall.h>
#include <unistd.h>

#include "cbox/crash.h"
#include "cbox/log.h"
#include "cbox/seccomp_allow.h"

int cbox_test_crash_here(volatile int *p);
void cbox_test_abort_here(void);
int cbox_test_recurse(int depth);
extern const char __ehdr_start;

/* Global and never inlined so that the backtrace names it. The sanitizers are off here: the
 * point is a real fault, not UBSan's null-pointer report. */
__attribute__((visibility("default"), noinline, no_sanitize("address", "undefined"))) int
cbox_test_crash_here(volatile int *p)
{
	return *p + 1;
}

__attribute__((visibility("default"), noinline)) void cbox_test_abort_here(void)
{
	abort();
}

/* Recursion deep enough to overflow any stack (the bound only hides the intent from the
 * compiler's infinite-recursion warning): the report then needs the alternate stack. */
static volatile int max_depth = 1 << 30;

__attribute__((visibility("default"), noinline)) int cbox_test_recurse(int depth)
{
	volatile char pad[256];

	pad[depth % sizeof(pad)] = (char)depth;
	if (depth >= max_depth)
		return pad[0];
	return cbox_test_recurse(depth + 1) + pad[(depth + 1) % sizeof(pad)];
}

int main(int argc, char **argv)
{
	volatile int *null = NULL;

	cbox_log_init(2, CBOX_LOG_TEXT, CBOX_LOG_WARNING, "crash-helper");
	if (cbox_crash_install() < 0 || cbox_crash_install() < 0) {
		fprintf(stderr, "cbox_crash_install failed\n");
		return 2;
	}
	if (argc > 1 && strcmp(argv[1], "abort") == 0)
		cbox_test_abort_here();
	if (argc > 1 && strcmp(argv[1], "overflow") == 0)
		return cbox_test_recurse(0);
	if (argc > 1 && strcmp(argv[1], "seccomp") == 0) {
		/* What the report itself needs, and getppid not: its SIGSYS is reported. */
		static const int allowed[] = {
		    SYS_read,         SYS_write,          SYS_openat,       SYS_close,
		    SYS_pread64,      SYS_fstat,          SYS_newfstatat,   SYS_lseek,
		    SYS_mmap,         SYS_munmap,         SYS_brk,          SYS_futex,
		    SYS_rt_sigaction, SYS_rt_sigprocmask, SYS_rt_sigreturn, SYS_sigaltstack,
		    SYS_getpid,       SYS_gettid,         SYS_tgkill,       SYS_exit_group};
		if (cbox_allow_load_nrs(allowed, sizeof(allowed) / sizeof(allowed[0])) < 0) {
			fprintf(stderr, "cbox_allow_load_nrs failed\n");
			return 2;
		}
		syscall(SYS_getppid);
		fprintf(stderr, "survived a refused getppid\n");
		return 1;
	}
	/* Where the faulting function is, as the report of a stripped helper gives it. */
	fprintf(stderr, "cbox_test_crash_here is at exe+0x%lx\n",
	        (unsigned long)((uintptr_t)cbox_test_crash_here - (uintptr_t)&__ehdr_start));
	/* Not a tail call, so main stays on the stack at -O2 too. */
	int r = cbox_test_crash_here(null);
	fprintf(stderr, "survived a NULL dereference (%d)\n", r);
	return 1;
}
