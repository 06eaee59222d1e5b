#pragma once
/*
 * cbox-compat: the pure part (no processes). Parsers of the test programs' output lines, of
 * suite files and exit maps, case selection by glob, the per-target results (TSV, merged on
 * write), the sentry's syscall table (`cbox syscalls --json`), and the consistency check between
 * the two. The process-running part (run.c, job.c) and the CLI (main.c) build on this; the unit
 * tests link only this part (library cbox_compat_core).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cbox/cleanup.h"
#include "cbox/err.h"
#include "cbox/hashmap.h"

enum cbox_compat_status {
	CBOX_COMPAT_PASS = 0,
	CBOX_COMPAT_FAIL,
	CBOX_COMPAT_SKIP,
	CBOX_COMPAT_CRASH,
	CBOX_COMPAT_TIMEOUT,
	CBOX_COMPAT_NSTATUS,
};

/* "pass", "fail", ... (the TSV spelling). status must be < CBOX_COMPAT_NSTATUS. */
const char *cbox_compat_status_name(enum cbox_compat_status status);

/* Parse a TSV status word ("pass".."timeout", also the upper-case spelling of the test
 * programs' lines: "PASS".."TIMEOUT"). Returns the status, or -1 when unknown. */
int cbox_compat_status_parse(const char *s, size_t len);

/* One case's outcome on one target. Every string is owned by the struct. */
struct cbox_compat_result {
	char *name;    /* "<syscall>.<what>" or a suite case name */
	char *syscall; /* the prefix before the first '.', or "-" for suite cases */
	enum cbox_compat_status status;
	char *msg; /* may be "" but never NULL */
};

/* Allocate a result; syscall NULL means "derive it from name". NULL on ENOMEM. */
struct cbox_compat_result *cbox_compat_result_new(const char *name, const char *syscall,
                                                  enum cbox_compat_status status, const char *msg);
/* NULL-safe. */
void cbox_compat_result_free(struct cbox_compat_result *r);
CBOX_DEFINE_AUTO(cbox_compat_result, cbox_compat_result_free)

/*
 * Parse one line a test program printed on stdout ("PASS name", "FAIL name: msg", ...; no
 * trailing newline in line/len). Returns 1 and a new result in *out when it is a case line, 0
 * when it is something else (the summary, a stray print), and < 0 with err on ENOMEM only.
 * A case line's name is one word of [A-Za-z0-9_.:-] characters.
 */
int cbox_compat_parse_case_line(const char *line, size_t len, struct cbox_compat_result **out,
                                struct cbox_err **err);

/* The syscall prefix of a case name (up to the first '.'; the whole name when it has none) as
 * a new string; NULL on ENOMEM. */
char *cbox_compat_syscall_of(const char *name);

/*
 * Whether a case is selected by --only: globs is a comma-separated list of fnmatch(3) patterns,
 * matched against the whole case name and against its syscall prefix. NULL or "" selects every
 * case. An empty element (",," or a trailing ',') matches nothing.
 */
bool cbox_compat_selected(const char *globs, const char *name);

/* One command of an external suite. */
struct cbox_compat_suite_case {
	char *name; /* from "NAME<TAB>", else "line<N>" */
	char *cmd;  /* run with /bin/sh -c */
};

struct cbox_compat_suite {
	struct cbox_compat_suite_case *cases;
	size_t n;
};

/*
 * Parse a suite file's contents (buf, len: may hold NULs). '#' comments and blank lines are
 * ignored; a line may start with "NAME<TAB>". A malformed line (empty name or command after the
 * tab, a NUL byte, a line over 4096 bytes, a name already used) is reported on warn (when not
 * NULL) as "suite FILE:N: why" and skipped. Returns the number of cases (>= 0) and fills *out
 * (free with cbox_compat_suite_free); < 0 with err on ENOMEM.
 */
int cbox_compat_suite_parse(const char *file, const char *buf, size_t len, FILE *warn,
                            struct cbox_compat_suite *out, struct cbox_err **err);
/* Frees the cases of s and zeroes it; NULL-safe. */
void cbox_compat_suite_free(struct cbox_compat_suite *s);

/* An exit-status map: "0=pass,77=skip,*=fail". */
struct cbox_compat_exit_map {
	int codes[256]; /* status per exit code, or -1 when the code has no own entry */
	int fallback;   /* the '*' entry; CBOX_COMPAT_FAIL when the map has none */
};

/* Parse an exit map: comma-separated CODE=STATUS entries, CODE 0..255 or '*', STATUS one of
 * pass|fail|skip|crash|timeout. Returns 0, or < 0 with an err naming the bad entry. */
int cbox_compat_exit_map_parse(const char *s, struct cbox_compat_exit_map *map,
                               struct cbox_err **err);
/* The status of an exit code (0..255) under map. */
enum cbox_compat_status cbox_compat_exit_map_get(const struct cbox_compat_exit_map *map, int code);

/*
 * Escape a message for a TSV field: '\\' -> "\\\\", tab -> "\\t", newline -> "\\n", CR -> "\\r",
 * other control bytes -> "\\xHH". Returns a new string; NULL on ENOMEM.
 */
char *cbox_compat_tsv_escape(const char *s);
/* The inverse of cbox_compat_tsv_escape over s[0..len); unknown escapes are kept as written.
 * NULL on ENOMEM. */
char *cbox_compat_tsv_unescape(const char *s, size_t len);

/* The results of one target: case name -> struct cbox_compat_result. */
struct cbox_compat_results {
	struct cbox_hashmap *map;
};

/* Create an empty set. NULL on ENOMEM. */
struct cbox_compat_results *cbox_compat_results_new(void);
/* NULL-safe. */
void cbox_compat_results_free(struct cbox_compat_results *rs);
CBOX_DEFINE_AUTO(cbox_compat_results, cbox_compat_results_free)

/* Put r (ownership moves in, also on failure), replacing a result of the same name. -ENOMEM. */
int cbox_compat_results_put(struct cbox_compat_results *rs, struct cbox_compat_result *r);
/* The result named name, or NULL. Owned by the set. */
struct cbox_compat_result *cbox_compat_results_get(const struct cbox_compat_results *rs,
                                                   const char *name);
/* The results sorted by name, as a new array of borrowed pointers (free() it); *n its size.
 * NULL with *n == 0 when the set is empty or on ENOMEM (then *n is (size_t)-1). */
struct cbox_compat_result **cbox_compat_results_sorted(const struct cbox_compat_results *rs,
                                                       size_t *n);

/*
 * Load a results TSV into rs (added to / replacing what it holds). A missing file is not an
 * error (returns 0). Lines that do not parse are reported on warn (when not NULL) and skipped.
 * Returns the number of results read, < 0 with err on a read error or ENOMEM.
 */
int cbox_compat_results_load(struct cbox_compat_results *rs, const char *path, FILE *warn,
                             struct cbox_err **err);
/* Write rs to path as a TSV sorted by case name, through a temporary file renamed over path
 * (so a reader never sees half a file). Returns 0, < 0 with err. */
int cbox_compat_results_save(const struct cbox_compat_results *rs, const char *path,
                             struct cbox_err **err);
/* Merge: load path, replace the results named in fresh, and save. Returns 0, < 0 with err. */
int cbox_compat_results_merge(const char *path, const struct cbox_compat_results *fresh,
                              struct cbox_err **err);

/* One row of the sentry's syscall table. */
enum cbox_compat_level {
	CBOX_COMPAT_FULL = 0,
	CBOX_COMPAT_PARTIAL,
	CBOX_COMPAT_REFUSED,
};

struct cbox_compat_syscall {
	long nr;
	char *name;
	enum cbox_compat_level level;
	char *err_name; /* "ENOSYS" for refused ones, else "" */
	char *note;     /* may be "" */
};

struct cbox_compat_table {
	struct cbox_compat_syscall *rows; /* sorted by nr */
	size_t n;
	struct cbox_hashmap *by_name; /* name -> borrowed struct cbox_compat_syscall * */
};

/* "full", "partial", "refused". */
const char *cbox_compat_level_name(enum cbox_compat_level level);

/*
 * Parse the JSON printed by `cbox syscalls --json`: an array of flat objects with the keys nr,
 * name, level and optional errno, note (other keys are ignored). Returns 0 and fills *out (free
 * with cbox_compat_table_free); < 0 with err naming the offset of a syntax error, a missing key,
 * an unknown level, or a duplicate name.
 */
int cbox_compat_table_parse(const char *json, size_t len, struct cbox_compat_table *out,
                            struct cbox_err **err);
/* Frees the rows of t and zeroes it; NULL-safe. */
void cbox_compat_table_free(struct cbox_compat_table *t);
/* The row named name, or NULL. */
const struct cbox_compat_syscall *cbox_compat_table_get(const struct cbox_compat_table *t,
                                                        const char *name);

/* Findings of the consistency check. */
struct cbox_compat_check_stats {
	size_t errors;
	size_t warnings;
};

/*
 * The consistency rule between the table and one sandbox target's results, given the native
 * results. Every finding is printed on out as "error: ..." or "warning: ..." and counted in
 * stats (added to what it holds):
 *  (a) a syscall declared full with a natively passing case that does not pass on target ->
 *      error;
 *  (b) a syscall declared refused whose natively passing cases that target ran ALL pass there
 *      (at least one) -> error "declared refused but answered";
 *  (c) a syscall declared partial with such failures -> warning.
 * Cases the target did not run are not judged. Suite cases (syscall "-") are ignored.
 */
void cbox_compat_check_target(const struct cbox_compat_table *table, const char *target,
                              const struct cbox_compat_results *native,
                              const struct cbox_compat_results *results, FILE *out,
                              struct cbox_compat_check_stats *stats);

/* The typo guard: every case of results (of target) whose syscall prefix is not in the table is
 * an error, printed on out and counted. Suite cases are ignored. */
void cbox_compat_check_names(const struct cbox_compat_table *table, const char *target,
                             const struct cbox_compat_results *results, FILE *out,
                             struct cbox_compat_check_stats *stats);

/*
 * Whether a committed matrix.tsv is current (stale.c): compares the columns that depend only
 * on the syscall table and the test programs (nr, name, level, cases, errno, note), not the
 * pass counts, which depend on the machine that ran the suite. Prints one line per differing
 * or missing row to diag. Returns the number of differences (0: current), -EINVAL when either
 * text lacks one of those columns in its header line, -ENOMEM.
 */
int cbox_compat_report_stale(const char *committed, const char *fresh, FILE *diag);
