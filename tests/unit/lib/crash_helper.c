/* Test helper for test_crash.c: installs the crash handler and then crashes on purpose.
 * Usage: cbox_crash_helper [segv|abort|overflow] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbox/crash.h"
#include "cbox/log.h"

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
	/* Where the faulting function is, as the report of a stripped helper gives it. */
	fprintf(stderr, "cbox_test_crash_here is at exe+0x%lx\n",
	        (unsigned long)((uintptr_t)cbox_test_crash_here - (uintptr_t)&__ehdr_start));
	/* Not a tail call, so main stays on the stack at -O2 too. */
	int r = cbox_test_crash_here(null);
	fprintf(stderr, "survived a NULL dereference (%d)\n", r);
	return 1;
}
