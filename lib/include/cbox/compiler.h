#pragma once
/* Attributes shared by every module. */

#define CBOX_API           __attribute__((visibility("default")))
#define CBOX_PRINTF(f, a)  __attribute__((format(printf, f, a)))
#define CBOX_NORETURN      __attribute__((noreturn))
#define CBOX_UNUSED        __attribute__((unused))
#define CBOX_WARN_UNUSED   __attribute__((warn_unused_result))
#define CBOX_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define CBOX_LIKELY(x)     __builtin_expect(!!(x), 1)
#define CBOX_UNLIKELY(x)   __builtin_expect(!!(x), 0)
