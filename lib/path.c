/* Path helpers: see cbox/path.h. */
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cbox/path.h"

char *cbox_path_clean(const char *path)
{
	char *out = malloc(strlen(path) + 2);
	if (!out)
		return NULL;
	size_t len = 0;
	for (const char *s = path; *s;) {
		while (*s == '/')
			s++;
		const char *e = s;
		while (*e && *e != '/')
			e++;
		size_t l = (size_t)(e - s);
		if (l == 2 && s[0] == '.' && s[1] == '.') {
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--;
		} else if (l > 0 && !(l == 1 && s[0] == '.')) {
			out[len++] = '/';
			memcpy(out + len, s, l);
			len += l;
		}
		s = e;
	}
	if (len == 0)
		out[len++] = '/';
	out[len] = '\0';
	return out;
}

bool cbox_path_under(const char *path, const char *dir)
{
	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int cbox_open_in_root(int root, const char *path, int flags)
{
	struct open_how how = {.flags = (uint64_t)flags | O_CLOEXEC,
	                       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
	return (int)syscall(SYS_openat2, root, path, &how, sizeof(how));
}
