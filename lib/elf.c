/*
 * ELF64 validator. Runs on bytes the guest controls (its own binaries), in the sentry and again
 * in the freestanding loader, so it is written without libc, without allocation, and with every
 * sum checked for overflow before it is compared.
 */
#include <elf.h>
#include <linux/errno.h>

#include "cbox/elf.h"

#define PAGE_MASK (CBOX_ELF_PAGE_SIZE - 1)
/* Larger p_align values are legal but pointless; capping bounds the loader's reservation. */
#define MAX_ALIGN (1ULL << 30)

static uint64_t page_down(uint64_t v)
{
	return v & ~PAGE_MASK;
}

/* Caller guarantees v < CBOX_ELF_USER_TOP, so this cannot wrap. */
static uint64_t page_up(uint64_t v)
{
	return (v + PAGE_MASK) & ~PAGE_MASK;
}

static int prot_of(uint32_t p_flags)
{
	return ((p_flags & PF_R) ? CBOX_ELF_PROT_READ : 0) |
	       ((p_flags & PF_W) ? CBOX_ELF_PROT_WRITE : 0) |
	       ((p_flags & PF_X) ? CBOX_ELF_PROT_EXEC : 0);
}

int cbox_elf_check_interp(const char *path, size_t len)
{
	if (len < 2 || len > CBOX_ELF_INTERP_MAX || path[len - 1] != '\0')
		return -ENOEXEC;
	/* An embedded NUL would make the sentry and the loader disagree on the path. */
	for (size_t i = 0; i + 1 < len; i++)
		if (path[i] == '\0')
			return -ENOEXEC;
	return 0;
}

static int check_ehdr(const Elf64_Ehdr *eh)
{
	const unsigned char *id = eh->e_ident;

	if (id[EI_MAG0] != ELFMAG0 || id[EI_MAG1] != ELFMAG1 || id[EI_MAG2] != ELFMAG2 ||
	    id[EI_MAG3] != ELFMAG3)
		return -ENOEXEC;
	if (id[EI_CLASS] != ELFCLASS64 || id[EI_DATA] != ELFDATA2LSB ||
	    id[EI_VERSION] != EV_CURRENT || eh->e_version != EV_CURRENT)
		return -ENOEXEC;
	if (eh->e_machine != EM_X86_64 || (eh->e_type != ET_EXEC && eh->e_type != ET_DYN))
		return -ENOEXEC;
	if (eh->e_phentsize != sizeof(Elf64_Phdr))
		return -ENOEXEC;
	/* Linux caps the program header table at 64 KiB; that also bounds our loop. */
	if (eh->e_phnum < 1 || eh->e_phnum > CBOX_ELF_MAX_PHNUM)
		return -ENOEXEC;
	return 0;
}

/* Validate one PT_LOAD against the file and the previous segment, and record it. */
static int add_load(const Elf64_Phdr *ph, uint64_t file_size, struct cbox_elf_info *out)
{
	uint64_t file_end, mem_end;

	if (ph->p_filesz > ph->p_memsz)
		return -ENOEXEC;
	if (__builtin_add_overflow(ph->p_offset, ph->p_filesz, &file_end) || file_end > file_size)
		return -ENOEXEC;
	/* mmap maps whole pages: file offset and address must share their offset in the page. */
	if ((ph->p_offset & PAGE_MASK) != (ph->p_vaddr & PAGE_MASK))
		return -ENOEXEC;
	if (__builtin_add_overflow(ph->p_vaddr, ph->p_memsz, &mem_end) ||
	    mem_end > CBOX_ELF_USER_TOP)
		return -ENOEXEC;
	if (ph->p_align > 1 && (ph->p_align & (ph->p_align - 1)) == 0) {
		uint64_t a = ph->p_align < MAX_ALIGN ? ph->p_align : MAX_ALIGN;
		if (a > out->align)
			out->align = a;
	}
	if (ph->p_memsz == 0)
		return 0; /* maps nothing; Linux skips it too */
	if (out->nload == CBOX_ELF_MAX_LOAD)
		return -ENOEXEC;
	/* The loader maps in table order with MAP_FIXED, so a later segment would silently replace
	 * an earlier one: require the order and disjointness the ELF spec demands. */
	if (out->nload > 0) {
		const struct cbox_elf_load *prev = &out->load[out->nload - 1];
		if (ph->p_vaddr < prev->vaddr + prev->memsz)
			return -EINVAL;
	}
	struct cbox_elf_load *l = &out->load[out->nload++];
	l->vaddr = ph->p_vaddr;
	l->memsz = ph->p_memsz;
	l->offset = ph->p_offset;
	l->filesz = ph->p_filesz;
	l->prot = prot_of(ph->p_flags);
	return 0;
}

static int add_interp(const Elf64_Phdr *ph, const unsigned char *buf, size_t len,
                      uint64_t file_size, struct cbox_elf_info *out)
{
	uint64_t end;

	/* Two interpreters would let the sentry and the loader pick different ones. */
	if (out->has_interp)
		return -ENOEXEC;
	if (ph->p_filesz < 2 || ph->p_filesz > CBOX_ELF_INTERP_MAX)
		return -ENOEXEC;
	if (__builtin_add_overflow(ph->p_offset, ph->p_filesz, &end) || end > file_size)
		return -ENOEXEC;
	if (end <= len) {
		int rc = cbox_elf_check_interp((const char *)buf + ph->p_offset, ph->p_filesz);
		if (rc < 0)
			return rc;
	}
	out->has_interp = 1;
	out->interp_offset = ph->p_offset;
	out->interp_len = (uint32_t)ph->p_filesz;
	return 0;
}

static int scan_phdrs(const unsigned char *buf, size_t len, uint64_t file_size,
                      struct cbox_elf_info *out)
{
	for (uint32_t i = 0; i < out->phnum; i++) {
		Elf64_Phdr ph;
		int rc = 0;

		/* buf may be unaligned: copy rather than cast. */
		__builtin_memcpy(&ph, buf + out->phoff + (uint64_t)i * sizeof(ph), sizeof(ph));
		switch (ph.p_type) {
		case PT_LOAD:
			rc = add_load(&ph, file_size, out);
			break;
		case PT_INTERP:
			rc = add_interp(&ph, buf, len, file_size, out);
			break;
		case PT_PHDR:
			out->phdr_vaddr = ph.p_vaddr;
			out->has_phdr_vaddr = 1;
			break;
		case PT_GNU_STACK:
			out->exec_stack = (ph.p_flags & PF_X) != 0;
			break;
		default:
			break;
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Without PT_PHDR, find the headers in the PT_LOAD whose file bytes contain them (as Linux). */
static void find_phdr_vaddr(struct cbox_elf_info *out)
{
	uint64_t size = (uint64_t)out->phnum * sizeof(Elf64_Phdr);

	if (out->has_phdr_vaddr)
		return;
	for (uint32_t i = 0; i < out->nload; i++) {
		const struct cbox_elf_load *l = &out->load[i];
		if (l->offset <= out->phoff && out->phoff + size <= l->offset + l->filesz) {
			out->phdr_vaddr = l->vaddr + (out->phoff - l->offset);
			out->has_phdr_vaddr = 1;
			return;
		}
	}
}

int cbox_elf_parse(const void *buf, size_t len, uint64_t file_size, struct cbox_elf_info *out)
{
	const unsigned char *p = buf;
	Elf64_Ehdr eh;
	uint64_t ph_end;
	int rc;

	__builtin_memset(out, 0, sizeof(*out));
	out->align = CBOX_ELF_PAGE_SIZE;
	out->exec_stack = 1; /* x86_64 Linux default when PT_GNU_STACK is missing */
	if (len > file_size)
		len = file_size;
	if (file_size < sizeof(eh))
		return -ENOEXEC;
	if (len < sizeof(eh)) {
		out->need = sizeof(eh);
		return -ENOBUFS;
	}
	__builtin_memcpy(&eh, p, sizeof(eh));
	rc = check_ehdr(&eh);
	if (rc < 0)
		return rc;
	out->type = eh.e_type;
	out->entry = eh.e_entry;
	out->phoff = eh.e_phoff;
	out->phnum = eh.e_phnum;
	out->phentsize = eh.e_phentsize;

	/* phnum <= 1024, so the product cannot overflow; the sum can. */
	if (__builtin_add_overflow(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr),
	                           &ph_end) ||
	    ph_end > file_size)
		return -ENOEXEC;
	if (ph_end > len) {
		out->need = ph_end;
		return -ENOBUFS;
	}
	rc = scan_phdrs(p, len, file_size, out);
	if (rc < 0)
		return rc;
	if (out->nload == 0)
		return -ENOEXEC;

	out->min_vaddr = page_down(out->load[0].vaddr);
	const struct cbox_elf_load *last = &out->load[out->nload - 1];
	out->max_vaddr = page_up(last->vaddr + last->memsz);
	/* Bounds the loader's PROT_NONE reservation (and the sentry's accounting). */
	if (out->max_vaddr - out->min_vaddr >= CBOX_ELF_MAX_SPAN)
		return -ENOEXEC;
	find_phdr_vaddr(out);
	return 0;
}
