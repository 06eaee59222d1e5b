#pragma once
/*
 * The contract between the sentry and the userland loader (sentry/loader/).
 *
 * The guest's mount namespace is empty, so the host kernel cannot open a guest binary or its
 * interpreter. The guest's root directory on the host side holds one file, the loader, and the
 * sentry turns a guest execve (at its ptrace stop) into
 *     execve("/cbox-loader", argv, envp)
 * with the guest's own argv and envp. The loader's first syscall is
 *     ioctl(CBOX_LOADER_IOCTL_FD, CBOX_LOADER_IOCTL, &info)
 * which the sentry traps and answers for a task whose exec it prepared: it installs the program
 * (and its PT_INTERP) read-only in the task, fills *info in guest memory and returns 0. For any
 * other task the call is an ordinary ioctl on a bad fd (EBADF). The loader then maps both, fixes
 * up the auxiliary vector in place, closes the two fds, sets the task name (PR_SET_NAME) to the
 * basename of execfn and jumps to the entry point.
 *
 * When info.flags has CBOX_LOADER_REPORT_START (the task's guest tracer is owed the exec's
 * stops, which must show the program, not the loader), the loader instead ends with
 *     execve(NULL, entry, sp) with CBOX_LOADER_START in the fourth argument register
 * which the sentry traps (execve is always a ptrace stop, and a filter of the guest's own let
 * the exec of the loader through) and answers by giving the task the registers of a fresh exec
 * at entry, with sp as its stack pointer: the call never returns to the loader. Any other
 * task's such call is an ordinary execve the host refuses (EFAULT); if it does return, the
 * loader jumps itself.
 *
 * The loader is linked at CBOX_LOADER_BASE (126 TiB), far from where programs live. The kernel
 * places the initial brk right after the loader's image, so the guest's brk heap grows from
 * just above it: harmless, since programs only ever ask brk for "more", never for an address.
 * The image stays mapped, so the address must be one every sanitizer's runtime lets the
 * program have: at 16 TiB it lay in ASan's shadow (and TSan's), and a program built with
 * -fsanitize=address aborted at start ("Shadow memory range interleaves with an existing memory
 * mapping"). 0x7e8000000000 is in ASan's high memory, TSan's and MSan's high application
 * ranges, 1.5 TiB below where the kernel starts the mmap area and the stack.
 */
#include <stdint.h>

#include "cbox/compiler.h"

/* The fd of the loader's request: none (the request is answered by the sentry, never the host). */
#define CBOX_LOADER_IOCTL_FD (-1)
/* The request of the loader's ioctl (not a real ioctl of any host file). */
#define CBOX_LOADER_IOCTL       0xCB0C0001u
#define CBOX_LOADER_ABI_VERSION 1
/* info.flags: end with the start request below. */
#define CBOX_LOADER_REPORT_START 1u
/* The flags argument of the loader's start request (no flag execveat knows). */
#define CBOX_LOADER_START 0xCB0C0002u
/* Where the loader's text is linked. */
#define CBOX_LOADER_BASE 0x7e8000000000ULL
/* Exit status of the loader when it was not started by the sentry. */
#define CBOX_LOADER_EXIT_NOT_SENTRY 127

struct cbox_loader_info {
	uint32_t version;  /* CBOX_LOADER_ABI_VERSION */
	int32_t elf_fd;    /* the program, open read-only in the task */
	int32_t interp_fd; /* its PT_INTERP, open read-only, or -1 when it has none */
	uint32_t flags;    /* CBOX_LOADER_REPORT_START, or 0 */
	char execfn[4096]; /* AT_EXECFN, NUL-terminated (the path the guest passed to execve) */
};

/*
 * The loader binary (a static, freestanding x86_64 ELF), written by the sentry into the guest's
 * host-side root as /cbox-loader. Read-only, lives as long as the process. Linked from the
 * cbox_loader_blob library.
 */
CBOX_API extern const unsigned char cbox_loader_image[];
CBOX_API extern const unsigned long cbox_loader_image_size;
