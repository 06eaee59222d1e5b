/* cbox_elf_parse: real binaries of the host, and one hand-made header broken per check. */
#include <criterion/criterion.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/elf.h"

#define BASE 0x400000ULL

struct img {
	_Alignas(8) unsigned char b[0x1100];
	size_t len;
};

static Elf64_Ehdr *eh(struct img *m)
{
	return (Elf64_Ehdr *)m->b;
}

static Elf64_Phdr *ph(struct img *m, int i)
{
	return (Elf64_Phdr *)(m->b + sizeof(Elf64_Ehdr) + (size_t)i * sizeof(Elf64_Phdr));
}

static void set_ph(struct img *m, int i, uint32_t type, uint32_t flags, uint64_t off,
                   uint64_t vaddr, uint64_t filesz, uint64_t memsz)
{
	*ph(m, i) = (Elf64_Phdr){.p_type = type,
	                         .p_flags = flags,
	                         .p_offset = off,
	                         .p_vaddr = vaddr,
	                         .p_paddr = vaddr,
	                         .p_filesz = filesz,
	                         .p_memsz = memsz,
	                         .p_align = 0x1000};
}

/* A valid static-looking ET_EXEC with an interpreter: 0x1010 bytes, 4 program headers. */
static void build(struct img *m)
{
	memset(m, 0, sizeof(*m));
	m->len = 0x1010;
	Elf64_Ehdr *e = eh(m);
	memcpy(e->e_ident, ELFMAG, SELFMAG);
	e->e_ident[EI_CLASS] = ELFCLASS64;
	e->e_ident[EI_DATA] = ELFDATA2LSB;
	e->e_ident[EI_VERSION] = EV_CURRENT;
	e->e_type = ET_EXEC;
	e->e_machine = EM_X86_64;
	e->e_version = EV_CURRENT;
	e->e_entry = BASE + 0x300;
	e->e_phoff = sizeof(Elf64_Ehdr);
	e->e_ehsize = sizeof(Elf64_Ehdr);
	e->e_phentsize = sizeof(Elf64_Phdr);
	e->e_phnum = 4;
	set_ph(m, 0, PT_INTERP, PF_R, 0x200, BASE + 0x200, 11, 11);
	memcpy(m->b + 0x200, "/lib/ld.so", 11);
	set_ph(m, 1, PT_LOAD, PF_R | PF_X, 0, BASE, 0x1000, 0x1000);
	set_ph(m, 2, PT_LOAD, PF_R | PF_W, 0x1000, BASE + 0x1000, 0x10, 0x2000);
	set_ph(m, 3, PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0);
}

static int parse(struct img *m, struct cbox_elf_info *out)
{
	return cbox_elf_parse(m->b, m->len, m->len, out);
}

static struct cbox_elf_info info;

Test(elf, handmade_valid)
{
	struct img m;
	build(&m);
	cr_assert_eq(parse(&m, &info), 0);
	cr_expect_eq(info.type, CBOX_ELF_EXEC);
	cr_expect_eq(info.entry, BASE + 0x300);
	cr_expect_eq(info.phnum, 4);
	cr_expect_eq(info.phentsize, 56);
	cr_expect_eq(info.nload, 2);
	cr_expect_eq(info.min_vaddr, BASE);
	cr_expect_eq(info.max_vaddr, BASE + 0x3000);
	cr_expect_eq(info.phdr_vaddr, BASE + 64, "phdrs found in the first PT_LOAD");
	cr_expect(info.has_phdr_vaddr);
	cr_expect(info.has_interp);
	cr_expect_eq(info.interp_offset, 0x200);
	cr_expect_eq(info.interp_len, 11);
	cr_expect_eq(info.exec_stack, 0);
	cr_expect_eq(info.align, 0x1000);
	cr_expect_eq(info.load[0].prot, CBOX_ELF_PROT_READ | CBOX_ELF_PROT_EXEC);
	cr_expect_eq(info.load[1].prot, CBOX_ELF_PROT_READ | CBOX_ELF_PROT_WRITE);
	cr_expect_eq(info.load[1].filesz, 0x10);
	cr_expect_eq(info.load[1].memsz, 0x2000);
	cr_expect_eq(info.load[1].offset, 0x1000);
}

Test(elf, pt_phdr_and_stack_flags)
{
	struct img m;
	build(&m);
	set_ph(&m, 0, PT_PHDR, PF_R, 64, BASE + 0x40, 4 * 56, 4 * 56);
	set_ph(&m, 3, PT_GNU_STACK, PF_R | PF_W | PF_X, 0, 0, 0, 0);
	cr_assert_eq(parse(&m, &info), 0);
	cr_expect_eq(info.phdr_vaddr, BASE + 0x40);
	cr_expect_eq(info.has_interp, 0);
	cr_expect_eq(info.exec_stack, 1);
	set_ph(&m, 3, PT_NOTE, PF_R, 0, 0, 0, 0);
	cr_assert_eq(parse(&m, &info), 0);
	cr_expect_eq(info.exec_stack, 1, "no PT_GNU_STACK means an executable stack on x86_64");
}

/* Each mutation of the valid image must give the documented error. */
#define EXPECT_ERR(err, mutation)                                                                  \
	do {                                                                                       \
		struct img m_;                                                                     \
		build(&m_);                                                                        \
		struct img *m = &m_;                                                               \
		mutation;                                                                          \
		cr_expect_eq(parse(m, &info), err, "%s", #mutation);                               \
	} while (0)

Test(elf, bad_ehdr)
{
	EXPECT_ERR(-ENOEXEC, m->b[1] = 'e');
	EXPECT_ERR(-ENOEXEC, m->b[EI_CLASS] = ELFCLASS32);
	EXPECT_ERR(-ENOEXEC, m->b[EI_DATA] = ELFDATA2MSB);
	EXPECT_ERR(-ENOEXEC, m->b[EI_VERSION] = 0);
	EXPECT_ERR(-ENOEXEC, eh(m)->e_version = 2);
	EXPECT_ERR(-ENOEXEC, eh(m)->e_machine = EM_AARCH64);
	EXPECT_ERR(-ENOEXEC, eh(m)->e_type = ET_REL);
	EXPECT_ERR(-ENOEXEC, eh(m)->e_type = ET_CORE);
	EXPECT_ERR(-ENOEXEC, eh(m)->e_phentsize = 32);
	EXPECT_ERR(-ENOEXEC, eh(m)->e_phnum = 0);
	EXPECT_ERR(-ENOEXEC, eh(m)->e_phnum = 1025);
	EXPECT_ERR(-ENOEXEC, m->len = 63);
	EXPECT_ERR(-ENOEXEC, m->len = 0);
}

Test(elf, phdrs_outside_file)
{
	EXPECT_ERR(-ENOEXEC, eh(m)->e_phoff = 0x1000);
	EXPECT_ERR(-ENOEXEC, eh(m)->e_phoff = UINT64_MAX - 8);
	EXPECT_ERR(-ENOEXEC, eh(m)->e_phnum = 1024);
}

Test(elf, phdrs_beyond_buffer_ask_for_more)
{
	struct img m;
	build(&m);
	cr_assert_eq(cbox_elf_parse(m.b, 100, m.len, &info), -ENOBUFS);
	cr_expect_eq(info.need, 64 + 4 * 56);
	cr_assert_eq(cbox_elf_parse(m.b, 40, m.len, &info), -ENOBUFS);
	cr_expect_eq(info.need, 64);
	cr_assert_eq(cbox_elf_parse(m.b, info.need + 4 * 56, m.len, &info), 0);
	cr_expect(info.has_interp, "interp outside the buffer is reported, not checked");
}

Test(elf, bad_loads)
{
	EXPECT_ERR(-ENOEXEC, ph(m, 2)->p_filesz = 0x3000);                 /* filesz > memsz */
	EXPECT_ERR(-ENOEXEC, ph(m, 2)->p_filesz = 0x20);                   /* past end of file */
	EXPECT_ERR(-ENOEXEC, ph(m, 2)->p_offset = UINT64_MAX - 4);         /* offset overflow */
	EXPECT_ERR(-ENOEXEC, ph(m, 2)->p_offset = 0x1008);                 /* not congruent */
	EXPECT_ERR(-ENOEXEC, ph(m, 2)->p_memsz = UINT64_MAX);              /* vaddr overflow */
	EXPECT_ERR(-ENOEXEC, ph(m, 2)->p_vaddr = 0x7ffffffff000 - 0x1000); /* past user top */
	EXPECT_ERR(-ENOEXEC, ph(m, 2)->p_vaddr = BASE + (1ULL << 40));     /* span >= 1 TiB */
	EXPECT_ERR(-ENOEXEC, ph(m, 1)->p_type = PT_NULL; ph(m, 2)->p_type = PT_NOTE);
	EXPECT_ERR(-EINVAL, ph(m, 2)->p_vaddr = BASE + 0x800; ph(m, 2)->p_offset = 0x800);
	EXPECT_ERR(-EINVAL, ph(m, 2)->p_vaddr = BASE - 0x3000);
	/* exactly at the top of the user address space is still fine */
	EXPECT_ERR(0, ph(m, 1)->p_vaddr = 0x7ffffffff000 - 0x10000;
	           ph(m, 2)->p_vaddr = 0x7ffffffff000 - 0x2000);
	EXPECT_ERR(0, ph(m, 2)->p_align = 0x200000);
}

Test(elf, too_many_loads)
{
	struct img m;
	build(&m);
	eh(&m)->e_phnum = 34;
	set_ph(&m, 0, PT_NOTE, PF_R, 0, 0, 0, 0); /* the table now covers the interp string */
	for (int i = 1; i < 34; i++)
		set_ph(&m, i, PT_LOAD, PF_R, 0, BASE + (uint64_t)i * 0x1000, 0x10, 0x10);
	cr_expect_eq(parse(&m, &info), -ENOEXEC);
	eh(&m)->e_phnum = 33; /* note + 32 loads */
	cr_expect_eq(parse(&m, &info), 0);
	cr_expect_eq(info.nload, CBOX_ELF_MAX_LOAD);
}

Test(elf, bad_interp)
{
	EXPECT_ERR(-ENOEXEC, ph(m, 0)->p_filesz = 1);
	EXPECT_ERR(-ENOEXEC, ph(m, 0)->p_filesz = 4097);
	EXPECT_ERR(-ENOEXEC, ph(m, 0)->p_filesz = 10);             /* not NUL-terminated */
	EXPECT_ERR(-ENOEXEC, m->b[0x204] = '\0');                  /* embedded NUL */
	EXPECT_ERR(-ENOEXEC, ph(m, 0)->p_offset = 0x100c);         /* beyond the file */
	EXPECT_ERR(-ENOEXEC, ph(m, 0)->p_offset = UINT64_MAX - 2); /* overflow */
	EXPECT_ERR(-ENOEXEC, set_ph(m, 3, PT_INTERP, PF_R, 0x200, 0, 11, 11)); /* two */
	cr_expect_eq(cbox_elf_check_interp("/a\0b", 5), -ENOEXEC);
	cr_expect_eq(cbox_elf_check_interp("/a", 3), 0);
}

static off_t read_head(const char *path, unsigned char *buf, size_t len, size_t *got)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		cr_skip_test("%s: %s", path, strerror(errno));
	ssize_t n = pread(fd, buf, len, 0);
	close(fd);
	cr_assert_gt(n, 0);
	*got = (size_t)n;
	return st.st_size;
}

/* Independent oracle from <elf.h>, to check the fields against. */
static void check_against_headers(const unsigned char *buf)
{
	const Elf64_Ehdr *e = (const Elf64_Ehdr *)buf;
	const Elf64_Phdr *p = (const Elf64_Phdr *)(buf + e->e_phoff);
	uint32_t nload = 0;
	cr_expect_eq(info.entry, e->e_entry);
	cr_expect_eq(info.phnum, e->e_phnum);
	cr_expect_eq(info.phoff, e->e_phoff);
	for (int i = 0; i < e->e_phnum; i++) {
		if (p[i].p_type != PT_LOAD)
			continue;
		cr_expect_eq(info.load[nload].vaddr, p[i].p_vaddr);
		cr_expect_eq(info.load[nload].filesz, p[i].p_filesz);
		cr_expect_eq(info.load[nload].memsz, p[i].p_memsz);
		nload++;
	}
	cr_expect_eq(info.nload, nload);
}

Test(elf, real_static_busybox)
{
	unsigned char buf[CBOX_ELF_HEADER_BYTES];
	size_t got;
	off_t size = read_head("/usr/bin/busybox", buf, sizeof(buf), &got);
	cr_assert_eq(cbox_elf_parse(buf, got, (uint64_t)size, &info), 0);
	cr_expect_eq(info.type, CBOX_ELF_EXEC);
	cr_expect_eq(info.has_interp, 0);
	cr_expect_eq(info.exec_stack, 0);
	cr_expect_eq(info.min_vaddr, 0x400000);
	cr_expect_eq(info.phdr_vaddr, 0x400000 + info.phoff);
	check_against_headers(buf);
}

Test(elf, real_dynamic_pie_ls)
{
	unsigned char buf[CBOX_ELF_HEADER_BYTES];
	size_t got;
	off_t size = read_head("/bin/ls", buf, sizeof(buf), &got);
	cr_assert_eq(cbox_elf_parse(buf, got, (uint64_t)size, &info), 0);
	cr_expect_eq(info.type, CBOX_ELF_DYN);
	cr_assert(info.has_interp);
	cr_expect_str_eq((const char *)buf + info.interp_offset, "/lib64/ld-linux-x86-64.so.2");
	cr_expect_eq(info.interp_len, sizeof("/lib64/ld-linux-x86-64.so.2"));
	cr_expect_eq(info.min_vaddr, 0);
	cr_expect_eq(info.phdr_vaddr, 0x40, "from PT_PHDR");
	cr_expect_eq(info.exec_stack, 0);
	check_against_headers(buf);
}

Test(elf, real_ld_so)
{
	unsigned char buf[CBOX_ELF_HEADER_BYTES];
	size_t got;
	off_t size = read_head("/lib64/ld-linux-x86-64.so.2", buf, sizeof(buf), &got);
	cr_assert_eq(cbox_elf_parse(buf, got, (uint64_t)size, &info), 0);
	cr_expect_eq(info.type, CBOX_ELF_DYN);
	cr_expect_eq(info.has_interp, 0);
	cr_expect_eq(info.min_vaddr, 0);
	check_against_headers(buf);
}
