/* The loader, end to end: real programs run through the embedded loader image. */
#include <criterion/criterion.h>
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox/loader_abi.h"
#include "supervisor.h"

static struct sup_result res;

static void need(const char *path)
{
	if (access(path, X_OK) < 0)
		cr_skip_test("%s is not installed", path);
}

static void expect_exit0(void)
{
	cr_expect(WIFEXITED(res.status) && WEXITSTATUS(res.status) == 0, "status %#x, output:\n%s",
	          res.status, res.out);
	cr_expect_eq(res.loader_ioctls, 1, "the loader asks exactly once");
}

Test(loader, static_busybox_echo)
{
	need("/usr/bin/busybox");
	char *argv[] = {"echo", "hi", NULL};
	cr_assert_eq(sup_run("/usr/bin/busybox", "/usr/bin/busybox", argv, &res), 0);
	expect_exit0();
	cr_expect_str_eq(res.out, "hi\n");
}

Test(loader, dynamic_pie_echo)
{
	need("/bin/echo");
	char *argv[] = {"/bin/echo", "one", "two words", NULL};
	cr_assert_eq(sup_run("/bin/echo", "/bin/echo", argv, &res), 0);
	expect_exit0();
	cr_expect_str_eq(res.out, "one two words\n");
}

Test(loader, shell_dash_c)
{
	need("/bin/sh");
	char *argv[] = {"sh", "-c", "echo $0 $1", "zero", "first", NULL};
	cr_assert_eq(sup_run("/bin/sh", "/bin/sh", argv, &res), 0);
	expect_exit0();
	cr_expect_str_eq(res.out, "zero first\n");
}

static void check_probe(const char *probe, const char *base)
{
	char *argv[] = {"probe", "alpha", "beta gamma", NULL};
	cr_assert_eq(sup_run(probe, "/guest/bin/a-long-program-name", argv, &res), 0);
	expect_exit0();
	/* (data_populated: the loader populated the data segment before the program ran) */
	const char *want[] = {"execfn=/guest/bin/a-long-program-name\n",
	                      "comm=a-long-program-\n", /* basename, 15 bytes */
	                      "entry_ok=1\n",
	                      "phdr_ok=1\n",
	                      "entry_is_e_entry=1\n",
	                      base,
	                      "data_populated=1\n",
	                      "argc=3\n",
	                      "argv[0]=probe\nargv[1]=alpha\nargv[2]=beta gamma\n"};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_expect(strstr(res.out, want[i]), "missing \"%s\" in:\n%s", want[i], res.out);
}

Test(loader, auxv_of_dynamic_program)
{
	check_probe(AUXPROBE_DYN, "base=set\n");
}

Test(loader, auxv_of_static_pie)
{
	check_probe(AUXPROBE_STATIC, "base=zero\n");
}

Test(loader, truncated_elf_is_killed)
{
	need("/usr/bin/busybox");
	char path[] = "/tmp/cbox-trunc-XXXXXX";
	unsigned char head[100];
	int src = open("/usr/bin/busybox", O_RDONLY | O_CLOEXEC);
	int dst = mkstemp(path);
	cr_assert(src >= 0 && dst >= 0);
	cr_assert_eq(read(src, head, sizeof(head)), (ssize_t)sizeof(head));
	cr_assert_eq(write(dst, head, sizeof(head)), (ssize_t)sizeof(head));
	close(src);
	close(dst);

	char *argv[] = {"trunc", NULL};
	int rc = sup_run(path, "/bin/trunc", argv, &res);
	unlink(path);
	cr_assert_eq(rc, 0);
	cr_expect(WIFSIGNALED(res.status) && WTERMSIG(res.status) == SIGKILL,
	          "status %#x, output:\n%s", res.status, res.out);
	cr_expect(strstr(res.out, "cbox-loader: /bin/trunc: exec format error after the point of "
	                          "no return"),
	          "output:\n%s", res.out);
}

Test(loader, program_over_the_loader_is_refused)
{
	char *argv[] = {"clash", NULL};
	cr_assert_eq(sup_run(AUXPROBE_CLASH, "/bin/clash", argv, &res), 0);
	cr_expect(WIFSIGNALED(res.status) && WTERMSIG(res.status) == SIGKILL,
	          "status %#x, output:\n%s", res.status, res.out);
	cr_expect(strstr(res.out, "/bin/clash: exec format error after the point of no return "
	                          "(the program's addresses are not free)"),
	          "output:\n%s", res.out);
}

/*
 * A read-only segment of two file pages and a bss tail; the last file page holds junk after
 * p_filesz. The code
 * checks that the tail reads as zero (else exits 1), then writes into the segment, which must
 * fault: the write access used for zeroing must be gone again (else exits 3).
 */
static const unsigned char ro_code[] = {
    0xbe, 0x00, 0x12, 0x40, 0x00, /* check 0x401200..0x402000 */
    0xb9, 0x00, 0x0e, 0x00, 0x00, 0x80, 0x3e, 0x00, 0x75, 0x19, 0x48, 0xff, 0xc6, 0xe2, 0xf6, 0xc6,
    0x04, 0x25, 0x00, 0x03, 0x40, 0x00, 0x01, 0xb8, 0xe7, 0x00, 0x00, 0x00, 0xbf, 0x03, 0x00, 0x00,
    0x00, 0x0f, 0x05, 0xb8, 0xe7, 0x00, 0x00, 0x00, 0xbf, 0x01, 0x00, 0x00, 0x00, 0x0f, 0x05};

Test(loader, readonly_bss_tail_is_zero_and_readonly)
{
	static unsigned char file[0x2000];
	Elf64_Ehdr *eh = (Elf64_Ehdr *)file;
	Elf64_Phdr *ph = (Elf64_Phdr *)(file + sizeof(*eh));
	memset(file, 0xaa, sizeof(file));
	memset(file, 0, 0x80);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_entry = 0x400080;
	eh->e_phoff = sizeof(*eh);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	*ph = (Elf64_Phdr){.p_type = PT_LOAD,
	                   .p_flags = PF_R | PF_X,
	                   .p_vaddr = 0x400000,
	                   .p_filesz = 0x1200,
	                   .p_memsz = 0x3000,
	                   .p_align = 0x1000};
	memcpy(file + 0x80, ro_code, sizeof(ro_code));

	char path[] = "/tmp/cbox-ro-XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, file, sizeof(file)), (ssize_t)sizeof(file));
	close(fd);
	char *argv[] = {"ro", NULL};
	int rc = sup_run(path, "/bin/ro", argv, &res);
	unlink(path);
	cr_assert_eq(rc, 0);
	cr_expect(WIFSIGNALED(res.status) && WTERMSIG(res.status) == SIGSEGV,
	          "status %#x (exit 1: tail not zeroed, exit 3: segment writable), output:\n%s",
	          res.status, res.out);
}

Test(loader, bare_loader_exits_127)
{
	char *argv[] = {"cbox-loader", NULL};
	cr_assert_eq(sup_run_bare(argv, &res), 0);
	cr_expect(WIFEXITED(res.status) && WEXITSTATUS(res.status) == CBOX_LOADER_EXIT_NOT_SENTRY,
	          "status %#x", res.status);
	cr_expect_str_eq(res.out, "cbox-loader: must be started by the cbox sentry\n");
}
