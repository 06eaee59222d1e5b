/* The "#!" line parser (see cbox/shebang.h). */
#include <errno.h>
#include <string.h>

#include "cbox/shebang.h"

static int blank(char c)
{
	return c == ' ' || c == '\t';
}

int cbox_shebang_parse(const char *buf, size_t len, struct cbox_shebang *out)
{
	if (len < 2 || buf[0] != '#' || buf[1] != '!')
		return 0;
	if (len > CBOX_SHEBANG_BUF)
		len = CBOX_SHEBANG_BUF;
	memset(out, 0, sizeof(*out));
	/* The line ends at the first newline, or at the end of what was read. */
	const char *nl = memchr(buf, '\n', len);
	size_t end = nl ? (size_t)(nl - buf) : len;
	/* A NUL ends the line too, as the kernel's string handling does. */
	const char *nul = memchr(buf, '\0', end);
	if (nul)
		end = (size_t)(nul - buf);
	size_t i = 2;
	while (i < end && blank(buf[i]))
		i++;
	size_t start = i;
	while (i < end && !blank(buf[i]))
		i++;
	if (i == start)
		return -ENOEXEC;
	/* No newline in the buffer and the name runs to its end: the name may be cut short. */
	if (!nl && i == len && len == CBOX_SHEBANG_BUF)
		return -ENOEXEC;
	memcpy(out->interp, buf + start, i - start);
	while (i < end && blank(buf[i]))
		i++;
	size_t a = i, b = end;
	while (b > a && (blank(buf[b - 1]) || buf[b - 1] == '\r'))
		b--;
	if (b > a) {
		memcpy(out->arg, buf + a, b - a);
		out->has_arg = 1;
	}
	return 1;
}
