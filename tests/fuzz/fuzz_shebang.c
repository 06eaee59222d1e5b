/*
 * Fuzz target for cbox_shebang_parse: any bytes as the start of a file. A parsed script must
 * give a non-empty interpreter without blanks, both strings NUL-terminated inside their
 * buffers, and an argument only when has_arg says so.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cbox/shebang.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cbox_shebang sb;
	int r = cbox_shebang_parse((const char *)data, size, &sb);
	if (r == 1) {
		size_t il = strnlen(sb.interp, sizeof(sb.interp));
		size_t al = strnlen(sb.arg, sizeof(sb.arg));
		if (il == 0 || il == sizeof(sb.interp) || al == sizeof(sb.arg))
			abort();
		if (strpbrk(sb.interp, " \t\n"))
			abort();
		if (!sb.has_arg && al != 0)
			abort();
	} else if (r != 0 && r != -8 /* ENOEXEC */) {
		abort();
	}
	return 0;
}
