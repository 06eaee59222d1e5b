#pragma once
/*
 * The syscall table (syscalls.def) as data: what the dispatcher, the guest filter builder,
 * `cbox syscalls` and the compat matrix read. One entry per x86_64 syscall number.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cbox/compiler.h"

enum cbox_sys_kind {
	CBOX_SYS_FAST,   /* host runs it without the sentry (unless strict) */
	CBOX_SYS_PASS,   /* the sentry checks it, then the host runs it */
	CBOX_SYS_EMU,    /* the sentry answers it */
	CBOX_SYS_REFUSE, /* answered with an errno */
};

enum cbox_sys_level {
	CBOX_SYS_FULL,
	CBOX_SYS_PARTIAL,
	CBOX_SYS_REFUSED,
};

struct cbox_sysctx;
/* A handler returns the guest's result (>= 0, or -errno), or one of the CBOX_SYSRET_* values. */
typedef int64_t (*cbox_sys_handler)(struct cbox_sysctx *c);

/* Let the host run the call as the guest made it (checked pass-through). */
#define CBOX_SYSRET_CONTINUE ((int64_t)INT64_MIN)
/* The handler already resumed the task in its own way (exec rewrite): reply nothing. */
#define CBOX_SYSRET_DONE ((int64_t)INT64_MIN + 1)
/* The answer comes later (cbox_sys_defer): the task stays blocked in the call. */
#define CBOX_SYSRET_DEFER ((int64_t)INT64_MIN + 2)

struct cbox_sys_entry {
	int nr;
	const char *name;
	enum cbox_sys_kind kind;
	cbox_sys_handler handler; /* NULL for FAST, REFUSE and unchecked PASS */
	enum cbox_sys_level level;
	int err; /* errno for REFUSE */
	const char *note;
};

#define CBOX_SYS_MAX 470 /* one past the highest x86_64 syscall number in the table */

/* The entry for nr, or NULL when nr is not an x86_64 syscall (the guest then gets ENOSYS). */
CBOX_API const struct cbox_sys_entry *cbox_sys_lookup(long nr);
/* Iterate the table in number order: entries [0, *n). */
CBOX_API const struct cbox_sys_entry *cbox_sys_table(size_t *n);
/* Name of a syscall number ("syscall_N" for unknown ones, in a static buffer). */
CBOX_API const char *cbox_sys_name(long nr);
/* Number of a syscall name, or -1. */
CBOX_API int cbox_sys_number(const char *name);
CBOX_API const char *cbox_sys_kind_name(enum cbox_sys_kind k);
CBOX_API const char *cbox_sys_level_name(enum cbox_sys_level l);
