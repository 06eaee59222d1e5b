#pragma once
/*
 * Crash reports. cbox_crash_install() installs a handler for SIGSEGV, SIGBUS, SIGILL, SIGFPE,
 * SIGABRT and SIGSYS (on a 64 KiB alternate stack of the calling thread) that writes
 * "fatal signal N (NAME) at ADDR in WHO pid PID" ("sent by pid P" instead of "at ADDR" when
 * the signal came from kill/raise/abort) and a backtrace from the interrupted instruction, one
 * frame per line as "  #i 0xPC function+0xOFF" (names from the executable's symbol table;
 * "exe+0xOFF" when it cannot be read, "??" outside the executable), to the log fd with
 * cbox_log_raw() (plain text even in JSON mode), then re-raises the signal with the default
 * action so the exit status shows it. Call after cbox_log_init(); a second call is a no-op.
 * Only the calling thread gets the alternate stack. Works under ASan without ASAN_OPTIONS (the
 * handler replaces ASan's). Returns 0 or -errno (mmap, mprotect, sigaltstack or sigaction
 * failed).
 */
#include "cbox/compiler.h"

CBOX_API int cbox_crash_install(void);
