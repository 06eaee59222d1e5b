/*
 * Guest program for the loader tests: prints what it finds in its auxiliary vector, one
 * "key=value" per line, so the test can compare with what the loader was asked to do.
 */
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

extern char _start[];
extern const ElfW(Ehdr) __ehdr_start;

/* 64 pages of .data (initialised, so file-backed) that nothing touches before the count below. */
#define PROBE_PAGES 64
static volatile char data_pages[PROBE_PAGES * 4096] = {1};

/* The page faults of the first write to each page of data_pages: 64 when they are faulted in
 * one by one, none when the loader populated the segment. */
static long data_faults(void)
{
	struct rusage before, after;
	getrusage(RUSAGE_SELF, &before);
	for (int i = 0; i < PROBE_PAGES; i++)
		data_pages[i * 4096 + 1] = 2;
	getrusage(RUSAGE_SELF, &after);
	return after.ru_minflt - before.ru_minflt;
}

int main(int argc, char **argv)
{
	unsigned long phdr = getauxval(AT_PHDR), phnum = getauxval(AT_PHNUM);
	const char *execfn = (const char *)getauxval(AT_EXECFN);
	const ElfW(Ehdr) *eh = &__ehdr_start;
	char comm[17] = {0};

	long faults = data_faults();
	prctl(PR_GET_NAME, comm);
	printf("execfn=%s\n", execfn ? execfn : "(null)");
	printf("comm=%s\n", comm);
	printf("entry_ok=%d\n", getauxval(AT_ENTRY) == (unsigned long)_start);
	printf("phdr_ok=%d\n", phdr == (unsigned long)eh + eh->e_phoff && phnum == eh->e_phnum &&
	                           getauxval(AT_PHENT) == sizeof(ElfW(Phdr)));
	printf("entry_is_e_entry=%d\n", getauxval(AT_ENTRY) - (unsigned long)eh == eh->e_entry);
	printf("base=%s\n", getauxval(AT_BASE) ? "set" : "zero");
	printf("data_populated=%d\n", faults < PROBE_PAGES / 4);
	printf("argc=%d\n", argc);
	for (int i = 0; i < argc; i++)
		printf("argv[%d]=%s\n", i, argv[i]);
	return 0;
}
