#pragma once
/*
 * Logging for every process of a sandbox. Text ("cbox[sentry 12]: warning: msg") or JSON lines
 * ({"level":"warning","msg":"...","who":"sentry","time":"RFC3339"}), to one fd (stderr by default).
 * The JSON form is what OCI callers read: the last {"level":"error"} line is shown to the user.
 * Async-signal-safe for cbox_log_raw() only.
 */
#include <stdarg.h>
#include "cbox/compiler.h"

enum cbox_log_level {
	CBOX_LOG_ERROR = 0,
	CBOX_LOG_WARNING = 1,
	CBOX_LOG_INFO = 2,
	CBOX_LOG_DEBUG = 3,
};

enum cbox_log_format {
	CBOX_LOG_TEXT = 0,
	CBOX_LOG_JSON = 1,
};

/* Configure the process-wide logger. fd is not closed by the logger; who names the process in
 * every line ("cbox-run", "sentry", "gofer"). Messages above level are dropped. */
CBOX_API void cbox_log_init(int fd, enum cbox_log_format format, enum cbox_log_level level,
                            const char *who);
/* Change only the name shown in each line (after a fork). who must outlive the logger. */
CBOX_API void cbox_log_set_who(const char *who);
/* The name shown in each line; never NULL. Async-signal-safe (used by the crash handler). */
CBOX_API const char *cbox_log_get_who(void);
CBOX_API enum cbox_log_level cbox_log_get_level(void);
CBOX_API int cbox_log_get_fd(void);

CBOX_API void cbox_log(enum cbox_log_level level, const char *fmt, ...) CBOX_PRINTF(2, 3);
CBOX_API void cbox_logv(enum cbox_log_level level, const char *fmt, va_list ap) CBOX_PRINTF(2, 0);

/* Write a preformatted message without allocating (for signal handlers). */
CBOX_API void cbox_log_raw(const char *msg, unsigned long len);

/* Parse "error|warning|info|debug" and "text|json"; return -1 when unknown. */
CBOX_API int cbox_log_level_parse(const char *s);
CBOX_API int cbox_log_format_parse(const char *s);

#define cbox_error(...) cbox_log(CBOX_LOG_ERROR, __VA_ARGS__)
#define cbox_warn(...)  cbox_log(CBOX_LOG_WARNING, __VA_ARGS__)
#define cbox_info(...)  cbox_log(CBOX_LOG_INFO, __VA_ARGS__)
#define cbox_debug(...)                                                                            \
	do {                                                                                       \
		if (CBOX_UNLIKELY(cbox_log_get_level() >= CBOX_LOG_DEBUG))                         \
			cbox_log(CBOX_LOG_DEBUG, __VA_ARGS__);                                     \
	} while (0)

/* Print "who: msg" to the log and _exit(status). Only for a child after an irreversible
 * privilege step (minijail_enter's rule); library code never calls it. */
CBOX_API CBOX_NORETURN void cbox_die(int status, const char *fmt, ...) CBOX_PRINTF(2, 3);
