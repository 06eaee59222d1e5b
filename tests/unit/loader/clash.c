/*
 * Guest program for the loader tests: a freestanding static ET_EXEC linked at the loader's own
 * address (CBOX_LOADER_BASE). The loader must refuse to map it; if it ever runs, it exits 42.
 */
void _start(void);

void _start(void)
{
	for (;;)
		__asm__ volatile("syscall" : : "a"(231 /* exit_group */), "D"(42) : "rcx", "r11");
}
