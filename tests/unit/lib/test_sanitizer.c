/*
 * cbox_leak_check (lib/sanitizer.c), which the sentry runs at its end in sanitizer builds: it
 * finds a block nothing points to and passes one a global still points to; in a build without
 * AddressSanitizer it finds nothing. (Each Test runs in a process of its own.)
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cbox/sanitizer.h"

/* The lost block's address, complemented so that LeakSanitizer's scan of the globals does not
 * take it for a pointer: the test frees the block after the check. */
static uintptr_t hidden;
/* A block still reachable from a global: not a leak. */
static void *volatile kept;

static __attribute__((noinline)) void lose_block(void)
{
	char *p = malloc(4096);
	cr_assert_not_null(p);
	memset(p, 1, 4096);
	hidden = ~(uintptr_t)p;
}

/* Overwrite the stack below the caller, where lose_block's frame held the pointer. */
static __attribute__((noinline)) void scrub_stack(void)
{
	volatile char buf[16384];
	memset((char *)buf, 0, sizeof(buf));
}

Test(sanitizer, finds_a_lost_block)
{
	lose_block();
	scrub_stack();
	bool found = cbox_leak_check();
	free((void *)~hidden);
	cr_assert_eq(found, CBOX_ASAN_BUILD, "cbox_leak_check() said %d", found);
}

Test(sanitizer, a_reachable_block_is_no_leak)
{
	kept = malloc(4096);
	cr_assert_not_null(kept);
	scrub_stack();
	cr_assert_not(cbox_leak_check());
	free(kept);
}
