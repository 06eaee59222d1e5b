#pragma once
/* Reading a task's small /proc files (the sentry's view of its guest tasks, the platform's of
 * its tracees). */
#include <sys/types.h>

#include "cbox/compiler.h"

/* A small file (of /proc) read whole into buf (size bytes, NUL-terminated): read's result, or -1
 * when it cannot be opened. */
CBOX_API ssize_t cbox_proc_read(const char *path, char *buf, size_t size);
/* The fields of host task tid's /proc/TID/stat from the third (its state) on, read into buf
 * (size bytes), or NULL when it is gone; cbox_task_stat_field: field n of them (n >= 3, numbered
 * as proc(5) numbers them), or NULL. */
CBOX_API char *cbox_task_stat_fields(pid_t tid, char *buf, size_t size);
CBOX_API const char *cbox_task_stat_field(const char *fields, int n);
