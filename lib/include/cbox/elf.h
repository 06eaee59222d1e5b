#pragma once
/*
 * ELF64 validator shared by the sentry (before it hands a binary to the loader) and by the
 * freestanding userland loader (sentry/loader/), which runs it again on the bytes it maps.
 *
 * Pure: no allocation, no libc, no errno. Errors are negative errno values, as Linux's
 * binfmt_elf would answer an execve of the same file. Only x86_64 little-endian ELF64 is
 * accepted.
 */
#include <stddef.h>
#include <stdint.h>

#include "cbox/compiler.h"

/* Most PT_LOAD segments accepted; real programs have 2-5. */
#define CBOX_ELF_MAX_LOAD 32
/* Linux refuses program header tables over 64 KiB: 1024 entries of 56 bytes fit. */
#define CBOX_ELF_MAX_PHNUM 1024
#define CBOX_ELF_PAGE_SIZE 4096ULL
/* First address above the x86_64 user address space (TASK_SIZE_MAX with 4-level paging). */
#define CBOX_ELF_USER_TOP 0x7ffffffff000ULL
/* Largest distance between the lowest and the highest byte of the loaded segments. */
#define CBOX_ELF_MAX_SPAN (1ULL << 40)
/* Largest PT_INTERP, including its NUL (PATH_MAX). */
#define CBOX_ELF_INTERP_MAX 4096
/* How many leading bytes of a file a caller should pass first: the ELF header and, for every
 * ordinary binary, its program headers. */
#define CBOX_ELF_HEADER_BYTES 4096

/* Values of cbox_elf_info.type (the ELF e_type values). */
#define CBOX_ELF_EXEC 2 /* ET_EXEC: loaded at its link addresses */
#define CBOX_ELF_DYN  3 /* ET_DYN: position independent, loaded at a bias */

/* Bits of cbox_elf_load.prot: the same values as PROT_READ, PROT_WRITE and PROT_EXEC. */
#define CBOX_ELF_PROT_READ  0x1
#define CBOX_ELF_PROT_WRITE 0x2
#define CBOX_ELF_PROT_EXEC  0x4

/* One PT_LOAD segment, as found in the file (no bias applied). */
struct cbox_elf_load {
	uint64_t vaddr;  /* p_vaddr */
	uint64_t memsz;  /* p_memsz, >= filesz */
	uint64_t offset; /* p_offset, congruent to vaddr modulo CBOX_ELF_PAGE_SIZE */
	uint64_t filesz; /* p_filesz; offset + filesz <= file size */
	int prot;        /* CBOX_ELF_PROT_* from p_flags */
};

struct cbox_elf_info {
	uint16_t type;      /* CBOX_ELF_EXEC or CBOX_ELF_DYN */
	uint16_t phentsize; /* always 56 (sizeof(Elf64_Phdr)) */
	uint16_t phnum;     /* 1..CBOX_ELF_MAX_PHNUM */
	uint64_t entry;     /* e_entry, no bias */
	uint64_t phoff;     /* e_phoff */
	/* Address of the program headers once loaded, no bias: from PT_PHDR, else from the PT_LOAD
	 * whose file bytes hold them. 0 when neither exists (has_phdr_vaddr is then 0). */
	uint64_t phdr_vaddr;
	int has_phdr_vaddr;
	uint64_t min_vaddr; /* lowest load address, rounded down to a page */
	uint64_t max_vaddr; /* end of the highest load (vaddr + memsz), rounded up to a page */
	uint64_t align; /* largest power-of-two p_align of the loads, at least a page, <= 1 GiB */
	/* The PT_INTERP path: interp_len bytes (including the NUL) at interp_offset in the file.
	 * has_interp is 0 for static programs. */
	int has_interp;
	uint64_t interp_offset;
	uint32_t interp_len;
	/* From PT_GNU_STACK: 1 if the program asks for an executable stack (or, as on Linux for
	 * x86_64, has no PT_GNU_STACK at all). */
	int exec_stack;
	/* Bytes of the file the caller must pass for the parse to go on; set with -ENOBUFS. */
	uint64_t need;
	uint32_t nload;                               /* 1..CBOX_ELF_MAX_LOAD */
	struct cbox_elf_load load[CBOX_ELF_MAX_LOAD]; /* sorted by vaddr, not overlapping */
};

/*
 * Validate an ELF file from its first bytes and describe how to load it.
 *
 * buf holds the first len bytes of a file of file_size bytes (len <= file_size). Pass
 * CBOX_ELF_HEADER_BYTES (or the whole file if smaller) first. If the program headers lie inside
 * the file but beyond buf, returns -ENOBUFS and sets out->need to the number of leading bytes
 * to pass instead (at most e_phoff + 64 KiB); the caller decides whether to read that much.
 * With len < 64 the first answer asks for the ELF header only, so a caller that passes fewer
 * than 64 bytes may need two rounds.
 * If the PT_INTERP bytes lie inside buf they are checked here; otherwise the caller reads them
 * and must call cbox_elf_check_interp().
 *
 * Returns 0 and fills *out on success. Errors:
 *   -ENOEXEC  not an x86_64 ELF64 executable or shared object, or any header or segment that
 *             Linux would refuse (bad magic/class/data/version/machine/type/phentsize/phnum,
 *             phdrs or segment data outside the file, filesz > memsz, p_offset and p_vaddr not
 *             congruent, arithmetic overflow, segments outside the user address space or
 *             spanning 1 TiB or more, no PT_LOAD or more than CBOX_ELF_MAX_LOAD, more than one
 *             PT_INTERP, or one that is not 2..4096 bytes inside the file ending in its only NUL)
 *   -EINVAL   PT_LOAD segments that are out of order or overlap
 *   -ENOBUFS  see above
 * out is written even on failure (its contents are then meaningless apart from need).
 * Preconditions: buf readable for len bytes; out not NULL. Thread-safe, no side effects.
 */
CBOX_API int cbox_elf_parse(const void *buf, size_t len, uint64_t file_size,
                            struct cbox_elf_info *out);

/*
 * Check an interpreter path read from the file: len (the PT_INTERP p_filesz) bytes with the only
 * NUL in the last byte. Returns 0, or -ENOEXEC. Preconditions: path readable for len bytes.
 */
CBOX_API int cbox_elf_check_interp(const char *path, size_t len);
