/*
 * cbox-loader: the userland ELF loader every guest exec goes through (see cbox/loader_abi.h).
 *
 * Freestanding and static: it runs in the guest task between the kernel's exec of the loader
 * memfd and the guest program's first instruction, so it can rely on nothing but raw syscalls.
 * Every byte it maps comes from fds the sentry installed after resolving the path itself; the
 * headers are validated again here with cbox_elf_parse because the loader is the one that acts
 * on them.
 */
#include <stdbool.h>
#include <linux/auxvec.h>
#include <linux/errno.h>
#include <linux/mman.h>
#include <linux/personality.h>
#include <linux/prctl.h>

#include "cbox/elf.h"
#include "cbox/loader_abi.h"
#include "sys.h"

#define PAGE       CBOX_ELF_PAGE_SIZE
#define SIGKILL_NR 9
#define SEEK_END_  2

struct image {
	struct cbox_elf_info elf;
	uintptr_t bias; /* added to every address of elf */
};

/* The address the build links the loader at is the one the header documents. */
_Static_assert(CBOX_LOADER_LINK_BASE == CBOX_LOADER_BASE,
               "loader_abi.h and CMakeLists.txt disagree");

static struct cbox_loader_info info;
/* Room for the header page plus the largest program header table Linux accepts (64 KiB). */
static unsigned char hdr[CBOX_ELF_HEADER_BYTES + 65536];
static struct image prog, interp;

void *memcpy(void *dst, const void *src, size_t n)
{
	void *d = dst;
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(src), "+c"(n) : : "memory");
	return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if (d <= s || d >= s + n)
		return memcpy(dst, src, n);
	while (n--)
		d[n] = s[n];
	return dst;
}

void *memset(void *dst, int c, size_t n)
{
	void *d = dst;
	__asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
	return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;

	for (size_t i = 0; i < n; i++)
		if (x[i] != y[i])
			return x[i] - y[i];
	return 0;
}

static size_t str_len(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

static void put(const char *s)
{
	size_t n = str_len(s);

	while (n > 0) {
		long rc = sys3(__NR_write, 2, (long)s, (long)n);
		if (rc == -EINTR)
			continue;
		if (rc <= 0)
			return;
		s += rc;
		n -= (size_t)rc;
	}
}

/* Past the point of no return the old program image is gone, so, like Linux when an exec fails
 * this late, the only honest outcome is SIGKILL: returning an error would run nothing. */
__attribute__((noreturn)) static void fatal(const char *why)
{
	put("cbox-loader: ");
	put(info.execfn);
	put(": exec format error after the point of no return (");
	put(why);
	put(")\n");
	sys3(__NR_kill, sys3(__NR_getpid, 0, 0, 0), SIGKILL_NR, 0);
	for (;;)
		sys3(__NR_exit_group, 127, 0, 0);
}

static void read_full(int fd, void *buf, size_t len, uint64_t off)
{
	unsigned char *p = buf;

	while (len > 0) {
		long rc = sys6(__NR_pread64, fd, (long)p, (long)len, (long)off, 0, 0);
		if (rc == -EINTR)
			continue;
		if (rc <= 0)
			fatal("short read of the ELF headers");
		p += rc;
		len -= (size_t)rc;
		off += (uint64_t)rc;
	}
}

static void parse_fd(int fd, struct cbox_elf_info *elf)
{
	long size = sys3(__NR_lseek, fd, 0, SEEK_END_);
	size_t len;
	int rc;

	if (size < 0)
		fatal("cannot size the file");
	len = (uint64_t)size < CBOX_ELF_HEADER_BYTES ? (size_t)size : CBOX_ELF_HEADER_BYTES;
	read_full(fd, hdr, len, 0);
	rc = cbox_elf_parse(hdr, len, (uint64_t)size, elf);
	if (rc == -ENOBUFS && elf->need <= sizeof(hdr)) {
		len = (size_t)elf->need;
		read_full(fd, hdr, len, 0);
		rc = cbox_elf_parse(hdr, len, (uint64_t)size, elf);
	}
	if (rc < 0)
		fatal("invalid ELF headers");
	if (elf->has_interp && elf->interp_offset + elf->interp_len > len) {
		char path[CBOX_ELF_INTERP_MAX];
		read_full(fd, path, elf->interp_len, elf->interp_offset);
		if (cbox_elf_check_interp(path, elf->interp_len) < 0)
			fatal("invalid PT_INTERP");
	}
}

static void map_fixed(uintptr_t addr, size_t len, int prot, int flags, int fd, uint64_t off)
{
	long rc = sys6(__NR_mmap, (long)addr, (long)len, prot, flags | MAP_FIXED, fd, (long)off);

	if (sys_failed(rc) || (uintptr_t)rc != addr)
		fatal("cannot map a segment");
}

/*
 * A program writes nearly every page of its data segment as it starts: the dynamic linker's
 * relocations (.got, .data.rel.ro), then its own initialised objects (python's static type
 * objects and dicts: 317 of the 318 pages of its segment in `python3 -c pass`). Each first write
 * is a copy-on-write fault, ~15 us on the nested VM this is measured on, where one madvise that
 * makes all the private copies at once costs ~1 us a page. So the file part of a writable
 * segment is populated for writing here, up to POPULATE_MAX bytes (the relocated sections come
 * first; a huge .data may be written sparsely, and each populated page is private memory the
 * program might never have used). Only a cost changes: the pages hold the file's bytes either
 * way, and an error (a kernel older than 5.14 says EINVAL) leaves them to fault in as before.
 */
#define POPULATE_MAX (4UL << 20)

static void populate_written(uintptr_t start, size_t len)
{
	sys3(__NR_madvise, (long)start, (long)(len < POPULATE_MAX ? len : POPULATE_MAX),
	     MADV_POPULATE_WRITE);
}

/*
 * The same for the top of the stack, which every program's start writes downwards from its
 * arguments (python3: 7 faults, one left after this). 64 KiB lies inside the stack the kernel
 * set up for the exec (128 KiB at least, short of a stack limit below that, when the madvise
 * fails on the part outside and nothing else changes).
 */
static void populate_stack(const uintptr_t *sp)
{
	uintptr_t top = (uintptr_t)sp & ~(PAGE - 1);
	sys3(__NR_madvise, (long)(top - 15 * PAGE), 16 * PAGE, MADV_POPULATE_WRITE);
}

/* Map one PT_LOAD at bias: file pages, the zeroed tail of the last file page, anonymous rest. */
static void map_segment(int fd, const struct cbox_elf_load *l, uintptr_t bias)
{
	uintptr_t start = bias + l->vaddr, page = start & ~(PAGE - 1);
	uintptr_t file_end = start + l->filesz, mem_end = start + l->memsz;
	uintptr_t anon = page;

	if (l->filesz > 0) {
		/* The bytes after p_filesz in the last file page are whatever follows in the file;
		 * they belong to the bss and must read as zero. */
		int zero = l->memsz > l->filesz && (file_end & (PAGE - 1)) != 0;
		int prot = l->prot | (zero ? PROT_WRITE : 0);
		anon = (file_end + PAGE - 1) & ~(PAGE - 1);
		map_fixed(page, anon - page, prot, MAP_PRIVATE, fd, l->offset & ~(PAGE - 1));
		if (l->prot & PROT_WRITE)
			populate_written(page, anon - page);
		if (zero) {
			memset((void *)file_end, 0, anon - file_end);
			/* Drop the write access the zeroing needed, from every file page. */
			if (!(l->prot & PROT_WRITE) &&
			    sys3(__NR_mprotect, (long)page, (long)(anon - page), l->prot) < 0)
				fatal("cannot protect a segment");
		}
	}
	mem_end = (mem_end + PAGE - 1) & ~(PAGE - 1);
	if (mem_end > anon)
		map_fixed(anon, mem_end - anon, l->prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

/* Reserve the whole span first so that the segments and the gaps between them belong to this
 * image and nothing else can land in between. */
/*
 * Where Linux's exec puts a position-independent program that has an interpreter (load_elf_binary):
 * at ELF_ET_DYN_BASE, two thirds of the 47-bit user space (0x555555554000 for an image linked
 * at 0), moved up by a random number of pages below 2^28 unless the process asked for no
 * randomization (personality ADDR_NO_RANDOMIZE, as gdb runs a program), aligned to the image's
 * largest segment alignment. 0 when the random bytes cannot be had: mmap then chooses.
 */
static uintptr_t dyn_base(const struct cbox_elf_info *e)
{
	uintptr_t base = ((1UL << 47) - PAGE) / 3 * 2;
	long persona = sys3(__NR_personality, 0xffffffffL, 0, 0);
	if (sys_failed(persona) || !(persona & ADDR_NO_RANDOMIZE)) {
		uint64_t rnd;
		if (sys3(__NR_getrandom, (long)&rnd, sizeof(rnd), 0) != (long)sizeof(rnd))
			return 0;
		base += (uintptr_t)(rnd & ((1UL << 28) - 1)) * PAGE;
	}
	if (e->align > PAGE)
		base &= ~(uintptr_t)(e->align - 1);
	return (base - e->min_vaddr) & ~(uintptr_t)(PAGE - 1);
}

static void map_image(int fd, struct image *im, bool program)
{
	const struct cbox_elf_info *e = &im->elf;
	uintptr_t span = e->max_vaddr - e->min_vaddr, start;
	long rc;

	if (e->type == CBOX_ELF_EXEC) {
		/* NOREPLACE: an ET_EXEC that overlaps the loader, the stack or the vdso must fail,
		 * not silently replace them. */
		rc = sys6(__NR_mmap, (long)e->min_vaddr, (long)span, PROT_NONE,
		          MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (sys_failed(rc) || (uintptr_t)rc != e->min_vaddr)
			fatal("the program's addresses are not free");
		im->bias = 0;
	} else if (program && e->has_interp && (start = dyn_base(e)) != 0 &&
	           !sys_failed(
	               rc = sys6(__NR_mmap, (long)(start + e->min_vaddr), (long)span, PROT_NONE,
	                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0)) &&
	           (uintptr_t)rc == start + e->min_vaddr) {
		im->bias = start; /* (else: wherever mmap finds room, below) */
	} else {
		uintptr_t extra = e->align > PAGE ? e->align - PAGE : 0;
		rc = sys6(__NR_mmap, 0, (long)(span + extra), PROT_NONE,
		          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (sys_failed(rc))
			fatal("cannot reserve address space");
		start = ((uintptr_t)rc + e->align - 1) & ~(uintptr_t)(e->align - 1);
		if (start > (uintptr_t)rc)
			sys3(__NR_munmap, rc, (long)(start - (uintptr_t)rc), 0);
		if ((uintptr_t)rc + span + extra > start + span)
			sys3(__NR_munmap, (long)(start + span),
			     (long)((uintptr_t)rc + span + extra - start - span), 0);
		im->bias = start - e->min_vaddr;
	}
	for (uint32_t i = 0; i < e->nload; i++)
		map_segment(fd, &e->load[i], im->bias);
}

/* A fresh read-only page holding AT_EXECFN, so the string outlives nothing of the loader's. */
static uintptr_t execfn_page(void)
{
	size_t n = str_len(info.execfn) + 1;
	long rc =
	    sys6(__NR_mmap, 0, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (sys_failed(rc))
		fatal("cannot map AT_EXECFN");
	memcpy((void *)rc, info.execfn, n);
	sys3(__NR_mprotect, rc, PAGE, PROT_READ);
	return (uintptr_t)rc;
}

/* Rewrite, in the kernel-built auxv, the entries that described the loader. */
static void fix_auxv(uintptr_t *sp)
{
	uintptr_t *p = sp + 1 + sp[0] + 1; /* skip argc, argv[], NULL */
	uintptr_t execfn = execfn_page();
	unsigned seen = 0;

	while (*p)
		p++;
	for (p++; p[0] != AT_NULL; p += 2) {
		switch (p[0]) {
		case AT_PHDR:
			p[1] = prog.elf.has_phdr_vaddr ? prog.elf.phdr_vaddr + prog.bias : 0;
			break;
		case AT_PHENT:
			p[1] = prog.elf.phentsize;
			break;
		case AT_PHNUM:
			p[1] = prog.elf.phnum;
			break;
		case AT_ENTRY:
			p[1] = prog.elf.entry + prog.bias;
			break;
		case AT_BASE:
			p[1] = prog.elf.has_interp ? interp.bias : 0;
			break;
		case AT_EXECFN:
			p[1] = execfn;
			break;
		default:
			continue;
		}
		seen++;
	}
	/* The kernel always emits all six; a stack without them was not built by an exec. */
	if (seen != 6)
		fatal("unexpected auxiliary vector");
}

/* The host kernel named the task after the loader's file ("cbox-loader"); name it after the
 * program, as an exec of the real path would have (kbasename of the filename, 15 bytes). Until
 * then the sentry's /proc shows that name already (fs_proc_pid.c, shown_comm). */
static void set_comm(void)
{
	const char *base = info.execfn;
	char name[16];
	size_t n = 0;

	for (const char *s = info.execfn; *s; s++)
		if (*s == '/')
			base = s + 1;
	while (n < sizeof(name) - 1 && base[n]) {
		name[n] = base[n];
		n++;
	}
	name[n] = '\0';
	sys3(__NR_prctl, PR_SET_NAME, (long)name, 0);
}

void loader_main(uintptr_t *sp)
{
	long rc = sys3(__NR_ioctl, CBOX_LOADER_IOCTL_FD, CBOX_LOADER_IOCTL, (long)&info);

	/* Without the sentry's answer there is no program to run; nothing has been replaced yet
	 * except the loader image itself, so a plain exit is the clearest outcome. */
	if (rc != 0 || info.version != CBOX_LOADER_ABI_VERSION || info.elf_fd < 0) {
		put("cbox-loader: must be started by the cbox sentry\n");
		for (;;)
			sys3(__NR_exit_group, CBOX_LOADER_EXIT_NOT_SENTRY, 0, 0);
	}
	info.execfn[sizeof(info.execfn) - 1] = '\0';

	parse_fd(info.elf_fd, &prog.elf);
	/* The sentry and the loader must agree on whether there is an interpreter, or the loader
	 * would jump into a program whose dynamic linker never ran (or the reverse). */
	if (prog.elf.has_interp != (info.interp_fd >= 0))
		fatal("interpreter does not match PT_INTERP");
	map_image(info.elf_fd, &prog, true);
	if (prog.elf.has_interp) {
		parse_fd(info.interp_fd, &interp.elf);
		map_image(info.interp_fd, &interp, false);
	}
	if (prog.elf.exec_stack && sys3(__NR_mprotect, (long)((uintptr_t)sp & ~(PAGE - 1)), PAGE,
	                                PROT_READ | PROT_WRITE | PROT_EXEC | PROT_GROWSDOWN) < 0)
		fatal("cannot make the stack executable");
	fix_auxv(sp);
	populate_stack(sp);
	set_comm();
	sys3(__NR_close, info.elf_fd, 0, 0);
	if (info.interp_fd >= 0)
		sys3(__NR_close, info.interp_fd, 0, 0);
	uintptr_t entry =
	    prog.elf.has_interp ? interp.elf.entry + interp.bias : prog.elf.entry + prog.bias;
	if (info.flags & CBOX_LOADER_REPORT_START)
		sys6(__NR_execve, 0, (long)entry, (long)sp, (long)CBOX_LOADER_START, 0, 0);
	loader_jump(entry, sp);
}
