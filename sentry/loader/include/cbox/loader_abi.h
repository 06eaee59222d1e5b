#pragma once
/*
 * The contract between the sentry and the userland loader (sentry/loader/).
 *
 * The guest's mount namespace is empty, so the host kernel cannot open a guest binary or its
 * interpreter. The sentry turns a guest execve into
 *     execveat(CBOX_LOADER_FD, "", argv, envp, AT_EMPTY_PATH)
 * which makes the kernel exec the loader (cbox_loader_image, held in a memfd) with the guest's
 * own argv and envp. The loader's first syscall is
 *     ioctl(CBOX_LOADER_FD, CBOX_LOADER_IOCTL, &info)
 * which the sentry traps and answers: it installs the program (and its PT_INTERP) read-only in
 * the task, fills *info in guest memory and returns 0. The loader then maps both, fixes up the
 * auxiliary vector in place, closes the two fds, sets the task name (PR_SET_NAME) to the
 * basename of execfn and jumps to the entry point.
 *
 * The loader is linked at CBOX_LOADER_BASE (16 TiB), far from where programs live. The kernel
 * places the initial brk right after the loader's image, so the guest's brk heap grows from
 * just above 16 TiB: harmless, since programs only ever ask brk for "more", never for an
 * address.
 */
#include <stdint.h>

#include "cbox/compiler.h"

/* Every guest task holds the loader memfd at this fd. It must not be O_CLOEXEC: the next exec of
 * the guest goes through it again. */
#define CBOX_LOADER_FD 1023
/* The request of the loader's ioctl on CBOX_LOADER_FD (not a real ioctl of any host file). */
#define CBOX_LOADER_IOCTL       0xCB0C0001u
#define CBOX_LOADER_ABI_VERSION 1
/* Where the loader's text is linked. */
#define CBOX_LOADER_BASE 0x100000000000ULL
/* Exit status of the loader when it was not started by the sentry. */
#define CBOX_LOADER_EXIT_NOT_SENTRY 127

struct cbox_loader_info {
	uint32_t version;  /* CBOX_LOADER_ABI_VERSION */
	int32_t elf_fd;    /* the program, open read-only in the task */
	int32_t interp_fd; /* its PT_INTERP, open read-only, or -1 when it has none */
	uint32_t flags;    /* 0; reserved */
	char execfn[4096]; /* AT_EXECFN, NUL-terminated (the path the guest passed to execve) */
};

/*
 * The loader binary (a static, freestanding x86_64 ELF), to be written into a memfd that every
 * guest task holds at CBOX_LOADER_FD. Read-only, lives as long as the process. Linked from the
 * cbox_loader_blob library.
 */
CBOX_API extern const unsigned char cbox_loader_image[];
CBOX_API extern const unsigned long cbox_loader_image_size;
