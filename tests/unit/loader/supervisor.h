#pragma once
/*
 * A minimal stand-in for the sentry's side of the loader protocol: runs one program through the
 * embedded loader with only ioctl trapped (seccomp user notification) and answers the loader's
 * CBOX_LOADER_IOCTL by installing the program and its interpreter.
 */
#include <stddef.h>

struct sup_result {
	int status;        /* waitpid status of the child */
	int loader_ioctls; /* how many CBOX_LOADER_IOCTL requests were answered */
	int parse_rc;      /* cbox_elf_parse of the program, as the supervisor saw it */
	char out[16384];   /* stdout and stderr of the child, NUL-terminated */
	size_t out_len;
};

/*
 * Run `prog` (a host path the supervisor opens) as if the guest had exec'd `execfn` with argv.
 * Fills *res. Returns 0, or -1 (with a message on stderr) if the supervisor itself failed.
 * The child is killed after 20 seconds.
 */
int sup_run(const char *prog, const char *execfn, char *const argv[], struct sup_result *res);

/* Exec the loader image directly (no supervisor, no trapped ioctl); same result contract. */
int sup_run_bare(char *const argv[], struct sup_result *res);
