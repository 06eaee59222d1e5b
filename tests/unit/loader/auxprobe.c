/*
 * Guest program for the loader tests: prints what it finds in its auxiliary vector, one
 * "key=value" per line, so the test can compare with what the loader was asked to do.
 */
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/prctl.h>

extern char _start[];
extern const ElfW(Ehdr) __ehdr_start;

int main(int argc, char **argv)
{
	unsigned long phdr = getauxval(AT_PHDR), phnum = getauxval(AT_PHNUM);
	const char *execfn = (const char *)getauxval(AT_EXECFN);
	const ElfW(Ehdr) *eh = &__ehdr_start;
	char comm[17] = {0};

	prctl(PR_GET_NAME, comm);
	printf("execfn=%s\n", execfn ? execfn : "(null)");
	printf("comm=%s\n", comm);
	printf("entry_ok=%d\n", getauxval(AT_ENTRY) == (unsigned long)_start);
	printf("phdr_ok=%d\n", phdr == (unsigned long)eh + eh->e_phoff && phnum == eh->e_phnum &&
	                           getauxval(AT_PHENT) == sizeof(ElfW(Phdr)));
	printf("entry_is_e_entry=%d\n", getauxval(AT_ENTRY) - (unsigned long)eh == eh->e_entry);
	printf("base=%s\n", getauxval(AT_BASE) ? "set" : "zero");
	printf("argc=%d\n", argc);
	for (int i = 0; i < argc; i++)
		printf("argv[%d]=%s\n", i, argv[i]);
	return 0;
}
