/* `cbox`: the front door. Verbs: syscalls (the OCI verbs arrive with the runtime issue). */
#include <stdio.h>
#include <string.h>

#include "verbs.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: cbox VERB [OPTIONS]\n\n"
	    "  syscalls [--json]                  the syscall table: what the sentry does with "
	    "each\n"
	    "  syscalls --host-surface [--json]   the host syscalls the guest, the sentry and the\n"
	    "                                     gofer can reach\n"
	    "  --version\n\n"
	    "To run a program in a sandbox: cbox-run -- PROGRAM [ARGS...]\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("cbox version %s\n", CBOX_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "syscalls"))
		return cbox_verb_syscalls(argc - 1, argv + 1);
	fprintf(stderr, "cbox: unknown verb '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
