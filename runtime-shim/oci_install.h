#pragma once
/*
 * `cbox install`'s pure part: merge a runtime entry into Docker's daemon.json text and show the
 * change as a line diff. No file access here (the verb in oci_install.c does it), so the unit
 * tests and a fuzzer can drive it with plain strings.
 */
#include <stddef.h>
#include <stdio.h>

#include "cbox/err.h"

/* The runtime Docker gets: {"path": path} plus "runtimeArgs": ["--tier", tier] when tier is set
 * (Docker 20.10 has no --annotation, so a tier is chosen by a runtime of its own). */
struct cbox_oci_install_entry {
	const char *name; /* the key under "runtimes", e.g. "cbox" */
	const char *path; /* absolute path of the cbox binary */
	const char *tier; /* NULL: the runtime's default tier */
};

/*
 * Merge e into the daemon.json text old (len bytes, need not be NUL-terminated; an empty or
 * all-blank text counts as {}). Every other key of the file is kept, in its order; an existing
 * runtimes[e->name] is replaced. what names the file in messages.
 *
 * On success *out is the new text (pretty-printed JSON ending in a newline, caller frees) and the
 * return value is 1 when it differs from what old holds, 0 when e was already there as given.
 * Errors (nothing allocated), with errno 0: "WHAT: malformed JSON at line L, column C: WHY", the
 * top level or "runtimes" or runtimes[name] not an object, an empty name or a relative path;
 * ENOMEM.
 */
int cbox_oci_install_merge(const char *old, size_t len, const char *what,
                           const struct cbox_oci_install_entry *e, char **out,
                           struct cbox_err **err);

/*
 * Write the line diff of old_text -> new_text to f in unified style: "--- what", "+++ what", then
 * every line prefixed with ' ' (kept), '-' (removed) or '+' (added). Both texts are
 * NUL-terminated; old_text may be "" (a new file). Errors: ENOMEM, or either text above 10000
 * lines (EFBIG).
 */
int cbox_oci_install_diff(FILE *f, const char *what, const char *old_text, const char *new_text,
                          struct cbox_err **err);
