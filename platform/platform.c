/* Platform lookup and lifetime. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

extern const struct cbox_platform_ops cbox_platform_seccomp;
extern const struct cbox_platform_ops cbox_platform_ptrace;

const struct cbox_platform_ops *cbox_platform_find(const char *name)
{
	if (strcmp(name, "seccomp") == 0)
		return &cbox_platform_seccomp;
	if (strcmp(name, "ptrace") == 0)
		return &cbox_platform_ptrace;
	return NULL;
}

struct cbox_platform *cbox_platform_new(const struct cbox_platform_ops *ops)
{
	struct cbox_platform *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->ops = ops;
	return p;
}

void cbox_platform_free(struct cbox_platform *p)
{
	if (!p)
		return;
	p->ops->free(p);
	free(p);
}
