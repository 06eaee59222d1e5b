/* The real gofer process for the spawn and tree tests: spawn it, wait for it, skip without
 * root (or fail when CBOX_TESTS_MUST_WORK=1). */
#ifndef CBOX_TEST_SPAWN_FIXTURE_H
#define CBOX_TEST_SPAWN_FIXTURE_H

#include <stdbool.h>
#include <sys/types.h>

#include "cbox/gofer.h"

void need_root(void);
/* Wait for the gofer to exit (at most ~5 s) and return its wait status. */
int wait_exit(pid_t pid);
/* A gofer serving rootfs (read-only when asked), as a client; *pid gets its pid. */
struct cbox_gofer_client *spawn(const char *rootfs, bool readonly, pid_t *pid);
/* The same for a whole configuration (the spawn must succeed). */
struct cbox_gofer_client *spawn_cfg(const struct cbox_gofer_config *cfg, pid_t *pid);
/* Close the client's connection: the gofer must then exit with status 0. */
void end_gofer(struct cbox_gofer_client *c, pid_t pid);

#endif
