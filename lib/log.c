/*
 * The process-wide logger (see cbox/log.h). Every line is built in a stack buffer and written
 * with a single write(2): the sentry, the gofer and cbox-run share one log fd, and a line split
 * across several writes could interleave with another process's line.
 */
#include "cbox/log.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Longest message kept (after escaping); longer ones end in "...". */
#define LOG_MSG_MAX 8192
#define LOG_WHO_MAX 64
/* Room for the message plus the escaped who (<= 6 bytes per byte) and the fixed parts. */
#define LOG_LINE_MAX (LOG_MSG_MAX + 6 * LOG_WHO_MAX + 256)

static char who_buf[LOG_WHO_MAX] = "cbox";

static struct {
	int fd;
	enum cbox_log_format format;
	enum cbox_log_level level;
	const char *who;
} logger = {
    .fd = 2,
    .format = CBOX_LOG_TEXT,
    .level = CBOX_LOG_WARNING,
    .who = who_buf,
};

static const char *const level_names[] = {
    [CBOX_LOG_ERROR] = "error",
    [CBOX_LOG_WARNING] = "warning",
    [CBOX_LOG_INFO] = "info",
    [CBOX_LOG_DEBUG] = "debug",
};

static const char *const format_names[] = {
    [CBOX_LOG_TEXT] = "text",
    [CBOX_LOG_JSON] = "json",
};

/* A bounded output buffer. Appends are all-or-nothing so an escape sequence is never cut. */
struct out {
	char *p;
	size_t len;
	size_t cap;
	bool full;
};

static void put(struct out *o, const void *s, size_t n)
{
	if (o->full || n > o->cap - o->len) {
		o->full = true;
		return;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void put_hex_escape(struct out *o, const char *prefix, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";
	char e[8];
	size_t n = strlen(prefix);

	memcpy(e, prefix, n);
	e[n++] = hex[c >> 4];
	e[n++] = hex[c & 0xf];
	put(o, e, n);
}

/* Length of the valid UTF-8 sequence at s (shortest form, no surrogates, <= U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t cp, min;

	if (c >= 0xc2 && c <= 0xdf) {
		len = 2, cp = c & 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3, cp = c & 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4, cp = c & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/*
 * Append s as the inside of a JSON string. Messages carry guest-controlled bytes (paths, argv),
 * so every byte is either passed as valid UTF-8 or escaped: a reader of the log must never see
 * a broken or forged JSON line. Invalid bytes become U+FFFD.
 */
static void json_escape(struct out *o, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	while (i < n && !o->full) {
		unsigned char c = s[i];
		if (c == '"' || c == '\\') {
			char e[2] = {'\\', (char)c};
			put(o, e, 2);
			i++;
		} else if (c < 0x20) {
			put_hex_escape(o, "\\u00", c);
			i++;
		} else if (c < 0x80) {
			put(o, &s[i], 1);
			i++;
		} else {
			size_t l = utf8_len(s + i, n - i);
			if (l == 0) {
				put(o, "\xef\xbf\xbd", 3);
				i++;
			} else {
				put(o, s + i, l);
				i += l;
			}
		}
	}
}

/* Text lines: control bytes (a newline above all) are shown as \xNN so that a guest-controlled
 * message cannot start a forged line of its own. */
static void text_escape(struct out *o, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

	for (size_t i = 0; i < n && !o->full; i++) {
		if ((s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f)
			put_hex_escape(o, "\\x", s[i]);
		else
			put(o, &s[i], 1);
	}
}

static void write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* Nowhere left to report a logging failure. */
		buf += n;
		len -= (size_t)n;
	}
}

void cbox_log_init(int fd, enum cbox_log_format format, enum cbox_log_level level, const char *who)
{
	logger.fd = fd;
	logger.format = format == CBOX_LOG_JSON ? CBOX_LOG_JSON : CBOX_LOG_TEXT;
	logger.level = (unsigned)level <= CBOX_LOG_DEBUG ? level : CBOX_LOG_DEBUG;
	if (who != NULL) {
		snprintf(who_buf, sizeof(who_buf), "%s", who);
		logger.who = who_buf;
	}
}

void cbox_log_set_who(const char *who)
{
	if (who != NULL)
		logger.who = who;
}

const char *cbox_log_get_who(void)
{
	return logger.who;
}

enum cbox_log_level cbox_log_get_level(void)
{
	return logger.level;
}

int cbox_log_get_fd(void)
{
	return logger.fd;
}

static void format_time(char *buf, size_t size)
{
	struct timespec ts;
	struct tm tm;

	if (clock_gettime(CLOCK_REALTIME, &ts) < 0 || gmtime_r(&ts.tv_sec, &tm) == NULL ||
	    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, size, "1970-01-01T00:00:00Z");
}

static void emit(enum cbox_log_level level, const char *msg, size_t len, bool truncated)
{
	char line[LOG_LINE_MAX];
	struct out o = {.p = line, .cap = sizeof(line)};
	struct out m;
	const char *who = logger.who;

	if (logger.format == CBOX_LOG_JSON) {
		puts_(&o, "{\"level\":\"");
		puts_(&o, level_names[level]);
		puts_(&o, "\",\"msg\":\"");
		m = (struct out){.p = line + o.len, .cap = LOG_MSG_MAX};
		json_escape(&m, msg, len);
	} else {
		char head[LOG_WHO_MAX + 64];
		snprintf(head, sizeof(head), "cbox[%s %d]: %s: ", who, (int)getpid(),
		         level_names[level]);
		puts_(&o, head);
		m = (struct out){.p = line + o.len, .cap = LOG_MSG_MAX};
		text_escape(&m, msg, len);
	}
	o.len += m.len;
	if (m.full || truncated)
		puts_(&o, "...");

	if (logger.format == CBOX_LOG_JSON) {
		char now[64];
		format_time(now, sizeof(now));
		puts_(&o, "\",\"who\":\"");
		json_escape(&o, who, strnlen(who, LOG_WHO_MAX));
		puts_(&o, "\",\"time\":\"");
		puts_(&o, now);
		puts_(&o, "\"}");
	}
	puts_(&o, "\n");
	write_all(logger.fd, line, o.len);
}

void cbox_logv(enum cbox_log_level level, const char *fmt, va_list ap)
{
	char msg[LOG_MSG_MAX];
	int saved = errno;

	/* An out-of-range level is a caller bug; show it rather than lose it. */
	if ((unsigned)level > CBOX_LOG_DEBUG)
		level = CBOX_LOG_ERROR;
	if (level > logger.level)
		return;

	int n = -1;
	if (fmt != NULL)
		n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n < 0)
		n = snprintf(msg, sizeof(msg), "(unprintable log message)");
	bool truncated = (size_t)n >= sizeof(msg);
	size_t len = truncated ? sizeof(msg) - 1 : (size_t)n;
	if (!truncated && len > 0 && msg[len - 1] == '\n')
		len--;
	emit(level, msg, len, truncated);
	errno = saved;
}

void cbox_log(enum cbox_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cbox_logv(level, fmt, ap);
	va_end(ap);
}

void cbox_log_raw(const char *msg, unsigned long len)
{
	int saved = errno;

	if (msg != NULL)
		write_all(logger.fd, msg, len);
	errno = saved;
}

void cbox_die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cbox_logv(CBOX_LOG_ERROR, fmt, ap);
	va_end(ap);
	_exit(status);
}

int cbox_log_level_parse(const char *s)
{
	for (size_t i = 0; s != NULL && i < CBOX_ARRAY_SIZE(level_names); i++)
		if (strcmp(s, level_names[i]) == 0)
			return (int)i;
	return -1;
}

int cbox_log_format_parse(const char *s)
{
	for (size_t i = 0; s != NULL && i < CBOX_ARRAY_SIZE(format_names); i++)
		if (strcmp(s, format_names[i]) == 0)
			return (int)i;
	return -1;
}
