/*
 * Crash reports (see cbox/crash.h). The handler runs in a process whose state is broken, so it
 * is async-signal-safe: no malloc, no stdio, no locks of ours. Lines are formatted by hand into
 * a stack buffer and written with cbox_log_raw().
 *
 * Under AddressSanitizer: ASan installs its own SIGSEGV/SIGBUS/SIGFPE handlers while the
 * process starts, before main. cbox_crash_install() runs later and sigaction() simply replaces
 * them (the interceptor honours user handlers: allow_user_segv_handler defaults to 1), so no
 * ASAN_OPTIONS such as handle_segv=0 are needed. ASan still reports its own findings (bad
 * accesses it instruments) itself; ours covers the faults it does not see.
 */
#define UNW_LOCAL_ONLY
#include "cbox/crash.h"

#include <errno.h>
#include <libunwind.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cbox/log.h"

#define ALTSTACK_SIZE (64 * 1024)
#define MAX_FRAMES    64

static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS};

static bool installed;

struct line {
	char buf[512];
	size_t len;
};

static void put_str(struct line *l, const char *s)
{
	while (*s != '\0' && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = *s++;
}

static void put_num(struct line *l, uint64_t v, unsigned base, int min_digits)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[32];
	int n = 0;

	do {
		tmp[n++] = digits[v % base];
		v /= base;
	} while (v != 0 && n < (int)sizeof(tmp));
	while (n < min_digits && n < (int)sizeof(tmp))
		tmp[n++] = '0';
	while (n > 0 && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = tmp[--n];
}

static void flush(struct line *l)
{
	l->buf[l->len++] = '\n';
	cbox_log_raw(l->buf, l->len);
	l->len = 0;
}

static const char *signal_name(int sig)
{
	switch (sig) {
	case SIGSEGV:
		return "SIGSEGV";
	case SIGBUS:
		return "SIGBUS";
	case SIGILL:
		return "SIGILL";
	case SIGFPE:
		return "SIGFPE";
	case SIGABRT:
		return "SIGABRT";
	case SIGSYS:
		return "SIGSYS";
	default:
		return "?";
	}
}

static void print_backtrace(ucontext_t *uc)
{
	unw_context_t ctx;
	unw_cursor_t cursor;
	struct line l = {.len = 0};

	/* Start at the interrupted instruction rather than in this handler: on x86_64 the
	 * unw_context_t is a ucontext_t. Fall back to the handler's own frame if that fails. */
	if (uc == NULL ||
	    unw_init_local2(&cursor, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0) {
		if (unw_getcontext(&ctx) < 0 || unw_init_local(&cursor, &ctx) < 0) {
			put_str(&l, "  (no backtrace: libunwind could not start)");
			flush(&l);
			return;
		}
	}
	for (int i = 0; i < MAX_FRAMES; i++) {
		unw_word_t pc = 0, off = 0;
		char name[256];

		if (unw_get_reg(&cursor, UNW_REG_IP, &pc) < 0)
			break;
		put_str(&l, "  #");
		put_num(&l, (uint64_t)i, 10, 1);
		put_str(&l, " 0x");
		put_num(&l, pc, 16, 16);
		if (unw_get_proc_name(&cursor, name, sizeof(name), &off) == 0) {
			put_str(&l, " ");
			put_str(&l, name);
			put_str(&l, "+0x");
			put_num(&l, off, 16, 1);
		} else {
			put_str(&l, " ??");
		}
		flush(&l);
		if (unw_step(&cursor) <= 0)
			break;
	}
}

static void crash_handler(int sig, siginfo_t *si, void *uctx)
{
	int saved = errno;
	struct line l = {.len = 0};

	put_str(&l, "fatal signal ");
	put_num(&l, (uint64_t)sig, 10, 1);
	put_str(&l, " (");
	put_str(&l, signal_name(sig));
	put_str(&l, ")");
	if (si != NULL && si->si_code <= 0) {
		/* Sent by kill(), raise() or abort(): there is no fault address, name the sender.
		 */
		put_str(&l, " sent by pid ");
		put_num(&l, (uint64_t)si->si_pid, 10, 1);
	} else {
		put_str(&l, " at 0x");
		put_num(&l, (uint64_t)(uintptr_t)(si ? si->si_addr : NULL), 16, 16);
	}
	put_str(&l, " in ");
	put_str(&l, cbox_log_get_who());
	put_str(&l, " pid ");
	put_num(&l, (uint64_t)getpid(), 10, 1);
	flush(&l);

	print_backtrace(uctx);

	errno = saved;
	/* SA_RESETHAND restored the default action and sig is blocked until we return: the
	 * re-raised signal is delivered then and kills the process, so the exit status names the
	 * signal. A fault would re-trigger by itself; raise() also covers abort() and kill(). */
	raise(sig);
}

int cbox_crash_install(void)
{
	struct sigaction sa;
	stack_t ss;
	long page = sysconf(_SC_PAGESIZE);

	if (installed)
		return 0;
	if (page <= 0)
		page = 4096;

	/* The handler must run on its own stack so a stack overflow can still be reported. The
	 * lowest page stays PROT_NONE: a handler that overflows its stack faults instead of
	 * silently writing into whatever lies below. */
	size_t size = ALTSTACK_SIZE + (size_t)page;
	char *mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
	                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (mem == MAP_FAILED)
		return -errno;
	if (mprotect(mem, (size_t)page, PROT_NONE) < 0) {
		int e = errno;
		munmap(mem, size);
		return -e;
	}
	ss = (stack_t){.ss_sp = mem + page, .ss_size = ALTSTACK_SIZE, .ss_flags = 0};
	if (sigaltstack(&ss, NULL) < 0) {
		int e = errno;
		munmap(mem, size);
		return -e;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = crash_handler;
	sa.sa_flags = SA_ONSTACK | SA_SIGINFO | SA_RESETHAND;
	/* Block every crash signal while reporting: a second fault inside the handler is then
	 * fatal at once (the kernel forces the default action) instead of recursing. */
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(crash_signals); i++)
		sigaddset(&sa.sa_mask, crash_signals[i]);
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(crash_signals); i++) {
		if (sigaction(crash_signals[i], &sa, NULL) < 0)
			return -errno;
	}
	installed = true;
	return 0;
}
