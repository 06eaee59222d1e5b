#pragma once
/*
 * Sanitizer builds (the debug preset the tests run): CBOX_ASAN is defined when the unit is
 * built with AddressSanitizer (gcc's __SANITIZE_ADDRESS__, clang's __has_feature), and
 * CBOX_ASAN_BUILD is then true (false otherwise), for plain ifs.
 */
#include <stdbool.h>

#include "cbox/compiler.h"

#if defined(__SANITIZE_ADDRESS__)
#define CBOX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CBOX_ASAN 1
#endif
#endif

#ifdef CBOX_ASAN
#define CBOX_ASAN_BUILD true
#else
#define CBOX_ASAN_BUILD false
#endif

/*
 * Run LeakSanitizer now, in a process that ends with _exit (which LeakSanitizer's own check at
 * exit never sees): the sentry, whose leaks over a long sandbox no test would otherwise find.
 * Blocks still reachable (from globals, stacks, registers) are not leaks; unreachable ones are
 * reported on stderr, with their allocation stacks. Returns true when it found leaks; false,
 * and does nothing, in a build without AddressSanitizer or when the leak checker is off
 * (ASAN_OPTIONS=detect_leaks=0). LeakSanitizer stops the process's threads by tracing them
 * from a clone of its own, which lists them in /proc: the caller's seccomp filter must allow
 * clone, prctl, ptrace, wait4, open, getdents, read and close (sentry/sentry_seccomp.c), and
 * /proc must be the process's own.
 */
CBOX_API bool cbox_leak_check(void);
