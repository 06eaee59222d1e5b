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
#include "cbox/crash.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <unwind.h>

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1 /* si_code of a SIGSYS from SECCOMP_RET_TRAP (asm-generic/siginfo.h) */
#endif

#include "cbox/log.h"

#define ALTSTACK_SIZE (64 * 1024)
#define MAX_FRAMES    64
/* The handler's own frames and the signal trampoline come before the interrupted one. */
#define MAX_WALKED (MAX_FRAMES + 16)

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

/*
 * The walk: libgcc's unwinder (the one C++ exceptions use) reads the .eh_frame tables and steps
 * through the signal trampoline into the interrupted code. It replaces libunwind, which Debian
 * ships as a static archive built without -fPIC, so that cbox-run and cbox can be static PIEs.
 */
struct walk {
	uintptr_t ip[MAX_WALKED];
	bool exact[MAX_WALKED]; /* ip is the faulting instruction, not a return address */
	int n;
};

static _Unwind_Reason_Code walk_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct walk *w = arg;
	int before = 0;
	uintptr_t ip = _Unwind_GetIPInfo(ctx, &before);

	if (ip == 0)
		return _URC_END_OF_STACK;
	w->ip[w->n] = ip;
	w->exact[w->n] = before != 0;
	return ++w->n == MAX_WALKED ? _URC_END_OF_STACK : _URC_NO_REASON;
}

/* The running executable as it is mapped: where it starts (its ELF header, which the linker
 * names __ehdr_start), the bias added to its link-time addresses, and its end. */
struct image {
	uintptr_t bias, start, end;
};

extern const Elf64_Ehdr __ehdr_start;

static struct image image_of_self(void)
{
	const Elf64_Ehdr *eh = &__ehdr_start;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)((const char *)eh + eh->e_phoff);
	uintptr_t lo = UINTPTR_MAX, hi = 0;

	for (unsigned i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (ph[i].p_vaddr < lo)
			lo = ph[i].p_vaddr;
		if (ph[i].p_vaddr + ph[i].p_memsz > hi)
			hi = ph[i].p_vaddr + ph[i].p_memsz;
	}
	if (lo > hi)
		return (struct image){0, 0, 0};
	/* The lowest segment starts at file offset 0, where the header is. */
	uintptr_t bias = (uintptr_t)eh - (lo & ~(uintptr_t)0xfff);
	return (struct image){bias, bias + lo, bias + hi};
}

static bool pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	return pread(fd, buf, len, (off_t)off) == (ssize_t)len;
}

/*
 * Name the function holding link-time address addr from the executable's symbol table, read
 * from /proc/self/exe with pread into stack buffers (no allocation: the process may be broken).
 * False when the file cannot be opened (the sentry and the gofer live in mount namespaces
 * without it) or has no symbol table (stripped): the caller then prints the offset, which
 * addr2line resolves.
 */
static bool symbol_name(int fd, uint64_t addr, char *name, size_t cap, uint64_t *off)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh, strtab;
	Elf64_Sym syms[64];
	/* A sized function that holds addr wins; else the nearest function start below it. */
	bool holds = false, below = false;
	uint64_t holds_at = 0, holds_name = 0, below_at = 0, below_name = 0;

	if (!pread_all(fd, &eh, sizeof(eh), 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr))
		return false;
	for (unsigned i = 0;; i++) {
		if (i == eh.e_shnum ||
		    !pread_all(fd, &sh, sizeof(sh), eh.e_shoff + (uint64_t)i * sizeof(sh)))
			return false;
		if (sh.sh_type == SHT_SYMTAB && sh.sh_entsize == sizeof(Elf64_Sym))
			break;
	}
	if (sh.sh_link >= eh.e_shnum ||
	    !pread_all(fd, &strtab, sizeof(strtab), eh.e_shoff + sh.sh_link * sizeof(strtab)))
		return false;
	for (uint64_t done = 0, total = sh.sh_size / sizeof(Elf64_Sym); done < total;) {
		uint64_t n = total - done;
		if (n > CBOX_ARRAY_SIZE(syms))
			n = CBOX_ARRAY_SIZE(syms);
		if (!pread_all(fd, syms, n * sizeof(Elf64_Sym),
		               sh.sh_offset + done * sizeof(Elf64_Sym)))
			return false;
		done += n;
		for (uint64_t i = 0; i < n; i++) {
			const Elf64_Sym *s = &syms[i];
			if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_value > addr)
				continue;
			if (addr < s->st_value + s->st_size) {
				holds = true;
				holds_at = s->st_value;
				holds_name = s->st_name;
			} else if (!below || s->st_value > below_at) {
				below = true;
				below_at = s->st_value;
				below_name = s->st_name;
			}
		}
	}
	if (!holds && !below)
		return false;
	uint64_t best = holds ? holds_at : below_at, best_name = holds ? holds_name : below_name;
	if (best_name >= strtab.sh_size)
		return false;
	ssize_t got = pread(fd, name, cap - 1, (off_t)(strtab.sh_offset + best_name));
	if (got <= 0)
		return false;
	name[got] = '\0'; /* the string ends earlier; a longer name is cut */
	*off = addr - best;
	return true;
}

static void print_backtrace(const ucontext_t *uc)
{
	struct walk w = {.n = 0};
	struct line l = {.len = 0};
	struct image self = image_of_self();
	int first = 0, fd;

	_Unwind_Backtrace(walk_frame, &w);
	if (w.n == 0) {
		put_str(&l, "  (no backtrace: the unwinder found no frame)");
		flush(&l);
		return;
	}
	/* Start at the interrupted instruction rather than in this handler. */
	if (uc != NULL) {
		uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
		for (int i = 0; i < w.n; i++) {
			if (w.ip[i] == pc) {
				first = i;
				break;
			}
		}
	}
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	for (int i = first; i < w.n && i - first < MAX_FRAMES; i++) {
		uintptr_t pc = w.ip[i];
		/* A return address may be one past a call that never returns: name the call. */
		uintptr_t at = w.exact[i] ? pc : pc - 1;
		char name[256];
		uint64_t off = 0;

		put_str(&l, "  #");
		put_num(&l, (uint64_t)(i - first), 10, 1);
		put_str(&l, " 0x");
		put_num(&l, pc, 16, 16);
		if (at < self.start || at >= self.end) {
			put_str(&l, " ??");
		} else if (fd >= 0 && symbol_name(fd, at - self.bias, name, sizeof(name), &off)) {
			put_str(&l, " ");
			put_str(&l, name);
			put_str(&l, "+0x");
			put_num(&l, off + (pc - at), 16, 1);
		} else {
			put_str(&l, " exe+0x");
			put_num(&l, pc - self.bias, 16, 1);
		}
		flush(&l);
	}
	if (fd >= 0)
		close(fd);
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
	if (sig == SIGSYS && si != NULL && si->si_code == SYS_SECCOMP) {
		/* A call the process's own seccomp allowlist refuses (lib/seccomp_allow.c). */
		put_str(&l, " refused by the seccomp filter: syscall ");
		put_num(&l, (uint64_t)(unsigned)si->si_syscall, 10, 1);
	} else if (si != NULL && si->si_code <= 0) {
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
