#pragma once
/*
 * The "#!" line of a script, parsed as Linux's binfmt_script does: the interpreter is the first
 * word after "#!" (spaces and tabs skipped), the optional argument is the rest of the line with
 * surrounding blanks removed (one argument, inner blanks kept). Only the first
 * CBOX_SHEBANG_BUF bytes of the file count.
 */
#include <stddef.h>

#include "cbox/compiler.h"

/* Linux's BINPRM_BUF_SIZE: how much of a file the kernel reads to recognise it. */
#define CBOX_SHEBANG_BUF 256
/* Linux's limit on nested interpreters (BINPRM_MAX_RECURSION). */
#define CBOX_SHEBANG_MAX_DEPTH 4

struct cbox_shebang {
	char interp[CBOX_SHEBANG_BUF]; /* NUL-terminated */
	char arg[CBOX_SHEBANG_BUF];    /* NUL-terminated; "" when none */
	int has_arg;
};

/*
 * Parse the first len bytes of a file (any bytes). Returns 1 and fills out for a "#!" script,
 * 0 when the bytes do not start with "#!" (not a script), -ENOEXEC for a "#!" line without an
 * interpreter, or whose interpreter does not fit in the buffer (Linux refuses a truncated
 * interpreter name; a truncated argument is kept truncated). Pure.
 */
CBOX_API int cbox_shebang_parse(const char *buf, size_t len, struct cbox_shebang *out);
