#pragma once
/*
 * The error contract of host-side code (crun's libcrun_error_t): a function that can fail returns
 * an int, >= 0 on success and < 0 on failure, and on failure fills *err with the errno and a
 * message that names the object. Callers add context on the way up with cbox_err_wrap().
 */
#include <stdio.h>
#include "cbox/compiler.h"

struct cbox_err {
	int errno_; /* the errno of the first failure, 0 when none applies */
	char *msg;  /* heap string: "what failed: why" */
};

/*
 * Record a failure. If *err is NULL a new error is allocated; if one is already set it is kept
 * (the first failure wins) and the new message is ignored. errno_ may be 0. When errno_ is not
 * 0, ": strerror(errno_)" is appended to the message.
 * Returns -errno_ when errno_ > 0, else -1, so it can end a function: return cbox_err_set(...).
 * err may be NULL: the error is then dropped.
 */
CBOX_API int cbox_err_set(struct cbox_err **err, int errno_, const char *fmt, ...)
    CBOX_PRINTF(3, 4);

/* Prefix the message of *err with "fmt: ". No-op when err or *err is NULL. Returns the same
 * negative value cbox_err_set returned for it, or -1. */
CBOX_API int cbox_err_wrap(struct cbox_err **err, const char *fmt, ...) CBOX_PRINTF(2, 3);

/* The negative return value for err: -errno_ or -1. */
CBOX_API int cbox_err_code(const struct cbox_err *err);

/* Free an error; NULL-safe. Sets *err to NULL. */
CBOX_API void cbox_err_free(struct cbox_err **err);

/* Log the error at error level (see log.h) with an optional prefix, then free it. NULL-safe. */
CBOX_API void cbox_err_report(struct cbox_err **err, const char *prefix);
