/* Reading a task's small /proc files. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cbox/procfs.h"

ssize_t cbox_proc_read(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

char *cbox_task_stat_fields(pid_t tid, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	if (cbox_proc_read(path, buf, size) <= 0)
		return NULL;
	/* The name may hold anything, ')' included: the fields start after the last ')'. */
	char *rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' ? rp + 2 : NULL;
}

const char *cbox_task_stat_field(const char *fields, int n)
{
	const char *p = fields;
	for (int field = 3; p && field < n; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	return p;
}
