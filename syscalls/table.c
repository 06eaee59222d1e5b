/* The syscall table built from syscalls.def. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cbox/syscalls.h"
#include "internal.h"

#define CBOX_SYS(nr_, name_, kind_, handler_, level_, err_, note_)                                 \
	[nr_] = {.nr = nr_,                                                                        \
	         .name = #name_,                                                                   \
	         .kind = CBOX_SYS_##kind_,                                                         \
	         .handler = handler_,                                                              \
	         .level = CBOX_SYS_##level_,                                                       \
	         .err = err_,                                                                      \
	         .note = note_},
static const struct cbox_sys_entry table[CBOX_SYS_MAX] = {
#include "syscalls.def"
};
#undef CBOX_SYS

const struct cbox_sys_entry *cbox_sys_lookup(long nr)
{
	if (nr < 0 || nr >= CBOX_SYS_MAX || !table[nr].name)
		return NULL;
	return &table[nr];
}

const struct cbox_sys_entry *cbox_sys_table(size_t *n)
{
	*n = CBOX_SYS_MAX;
	return table;
}

const char *cbox_sys_name(long nr)
{
	static __thread char buf[32];
	const struct cbox_sys_entry *e = cbox_sys_lookup(nr);
	if (e)
		return e->name;
	snprintf(buf, sizeof(buf), "syscall_%ld", nr);
	return buf;
}

int cbox_sys_number(const char *name)
{
	for (int i = 0; i < CBOX_SYS_MAX; i++)
		if (table[i].name && strcmp(table[i].name, name) == 0)
			return i;
	return -1;
}

const char *cbox_sys_kind_name(enum cbox_sys_kind k)
{
	static const char *const names[] = {"fast", "pass", "emulated", "refused"};
	return k <= CBOX_SYS_REFUSE ? names[k] : "?";
}

const char *cbox_sys_level_name(enum cbox_sys_level l)
{
	static const char *const names[] = {"full", "partial", "refused"};
	return l <= CBOX_SYS_REFUSED ? names[l] : "?";
}
