/*
 * The error contract (see cbox/err.h): heap messages, first failure wins, context prefixed on the
 * way up. Every function is NULL-safe so a caller that passes NULL simply drops the error.
 */
#include "cbox/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cbox/log.h"

/*
 * Returned when the error itself cannot be allocated: the caller still learns that something
 * failed (and that memory ran out) instead of finding *err NULL after a failing return.
 * Never freed; cbox_err_free recognises it.
 */
static struct cbox_err oom_err = {
    .errno_ = ENOMEM,
    .msg = (char *)"out of memory while recording an error",
};

static int code_for(int errno_)
{
	return errno_ > 0 ? -errno_ : -1;
}

int cbox_err_code(const struct cbox_err *err)
{
	if (err == NULL)
		return -1;
	return code_for(err->errno_);
}

int cbox_err_set(struct cbox_err **err, int errno_, const char *fmt, ...)
{
	int saved = errno;
	int code = code_for(errno_);
	char *msg = NULL;
	va_list ap;

	if (err == NULL || *err != NULL)
		return code;

	struct cbox_err *e = calloc(1, sizeof(*e));
	if (e == NULL) {
		*err = &oom_err;
		errno = saved;
		return code;
	}
	e->errno_ = errno_;

	if (fmt == NULL) {
		msg = strdup("(no message)");
	} else {
		va_start(ap, fmt);
		if (vasprintf(&msg, fmt, ap) < 0)
			msg = NULL;
		va_end(ap);
	}

	if (msg != NULL && errno_ != 0) {
		char buf[256];
		char *full = NULL;
		/* GNU strerror_r: thread-safe, returns a pointer to a static or to buf. */
		const char *why = strerror_r(errno_, buf, sizeof(buf));
		if (asprintf(&full, "%s: %s", msg, why) < 0)
			full = NULL;
		free(msg);
		msg = full;
	}
	if (msg == NULL) {
		free(e);
		*err = &oom_err;
	} else {
		e->msg = msg;
		*err = e;
	}
	errno = saved;
	return code;
}

int cbox_err_wrap(struct cbox_err **err, const char *fmt, ...)
{
	int saved = errno;
	char *ctx = NULL;
	char *full = NULL;
	va_list ap;

	if (err == NULL || *err == NULL)
		return -1;
	/* The shared OOM error cannot be rewritten; it already says what happened. */
	if (*err == &oom_err || fmt == NULL)
		return cbox_err_code(*err);

	va_start(ap, fmt);
	int n = vasprintf(&ctx, fmt, ap);
	va_end(ap);
	if (n >= 0 && asprintf(&full, "%s: %s", ctx, (*err)->msg) >= 0) {
		free((*err)->msg);
		(*err)->msg = full;
	}
	/* On allocation failure the original message is kept: less context, but still correct. */
	if (n >= 0)
		free(ctx);
	errno = saved;
	return cbox_err_code(*err);
}

void cbox_err_free(struct cbox_err **err)
{
	if (err == NULL || *err == NULL)
		return;
	if (*err != &oom_err) {
		free((*err)->msg);
		free(*err);
	}
	*err = NULL;
}

void cbox_err_report(struct cbox_err **err, const char *prefix)
{
	if (err == NULL || *err == NULL)
		return;
	const char *msg = (*err)->msg ? (*err)->msg : "unknown error";
	if (prefix != NULL && prefix[0] != '\0')
		cbox_error("%s: %s", prefix, msg);
	else
		cbox_error("%s", msg);
	cbox_err_free(err);
}
