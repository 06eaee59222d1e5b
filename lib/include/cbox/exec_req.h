#pragma once
/*
 * `cbox exec` into a sentry sandbox: the request the runtime sends over the sandbox's exec
 * socket (<state>/exec.sock; the monitor hands each connection to the sentry), and the
 * sentry's replies. One SOCK_SEQPACKET message each way per event:
 *
 *   runtime -> sentry  the request (below), with three fds (SCM_RIGHTS): the process's stdin,
 *                      stdout and stderr
 *   sentry -> runtime  STARTED (value: the process's pid as the sentry sees it, for logs;
 *                      a pidfd of it attached, the only way to signal it from the host) or
 *                      ERROR (value: an errno, msg: why), then EXITED (value: its wait
 *                      status) when the process is gone
 *
 * The same socket also takes a quiesce request (`cbox pause`): exactly the four bytes of
 * CBOX_QUIESCE_MAGIC, no fds. The sentry stops taking new trapped calls from its seccomp
 * listeners, so that none is half answered when the cgroup freezer stops the sentry (a guest
 * task waiting for such an answer cannot be frozen), and replies QUIET. It takes calls again
 * when the connection ends: the runtime closes it once the sandbox is frozen, and the sentry
 * sees that only after the thaw.
 *
 * Request: a header of four little-endian u32 (magic, flags, argc, envc); with CBOX_EXEC_USER
 * in flags, the user section: u32 uid, u32 gid, u32 ngroups, then ngroups u32 supplementary
 * group ids (OCI process.user.uid/gid/additionalGids; none of them (uint32_t)-1, which Linux's
 * set*id calls take as "no id"); then argc + envc + 1 NUL-terminated strings back to back
 * (argv, the environment, the working directory), filling the message exactly. The decoder is
 * the sentry's parser of these bytes (fuzzed: tests/fuzz/fuzz_exec_req.c).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CBOX_EXEC_REQ_MAGIC      0x65786263u /* "cbxe" */
#define CBOX_QUIESCE_MAGIC       0x71786263u /* "cbxq" */
#define CBOX_EXEC_REQ_MAX        (256 * 1024)
#define CBOX_EXEC_REQ_MAX_STRS   8192
#define CBOX_EXEC_REQ_MAX_GROUPS 65536 /* Linux's NGROUPS_MAX */
#define CBOX_EXEC_TTY            1u    /* the fds are a terminal: it becomes the process's */
#define CBOX_EXEC_USER           2u    /* the request carries a user section */
#define CBOX_EXEC_NO_NEW_PRIVS   4u    /* the process starts with no_new_privs set */

/* The user a process runs as. */
struct cbox_exec_user {
	uint32_t uid, gid;
	size_t ngroups;
	const uint32_t *groups; /* ngroups supplementary group ids; may be NULL if ngroups is 0 */
};

struct cbox_exec_req {
	char **argv; /* NULL-terminated; argv[0] is not empty */
	char **envp; /* NULL-terminated */
	char *cwd;   /* absolute */
	uint32_t flags;
	size_t argc, envc;
	char *buf;     /* owns the strings */
	bool has_user; /* CBOX_EXEC_USER is in flags; uid, gid and groups are 0 / NULL without it */
	uint32_t uid, gid;
	size_t ngroups;
	uint32_t *groups; /* malloc'd or NULL; freed by release */
};

/* Encode a request into *out (malloc'd, *len bytes). user: NULL for no user section; encode sets
 * or clears CBOX_EXEC_USER in flags itself from user != NULL (callers never pass it). Errors:
 * -E2BIG past CBOX_EXEC_REQ_MAX, CBOX_EXEC_REQ_MAX_STRS strings or CBOX_EXEC_REQ_MAX_GROUPS
 * groups; -EINVAL for an empty argv, a relative cwd, an unknown flag, a uid, gid or group of
 * (uint32_t)-1, or groups NULL with ngroups > 0; -ENOMEM. */
int cbox_exec_req_encode(char *const *argv, char *const *envp, const char *cwd, uint32_t flags,
                         const struct cbox_exec_user *user, char **out, size_t *len);

/* Decode len bytes. Errors: -EINVAL for anything malformed (bad magic, flags outside
 * CBOX_EXEC_TTY | CBOX_EXEC_USER | CBOX_EXEC_NO_NEW_PRIVS, a user section cut short or with an
 * id of (uint32_t)-1, counts that do not match the strings, an empty argv[0], a relative cwd),
 * -E2BIG past the limits (including ngroups > CBOX_EXEC_REQ_MAX_GROUPS), -ENOMEM. On success
 * (and only then) release *r with cbox_exec_req_release; on failure *r holds nothing. */
int cbox_exec_req_decode(const void *data, size_t len, struct cbox_exec_req *r);
void cbox_exec_req_release(struct cbox_exec_req *r);

enum cbox_exec_reply_type {
	CBOX_EXEC_STARTED = 1,
	CBOX_EXEC_ERROR = 2,
	CBOX_EXEC_EXITED = 3,
	CBOX_EXEC_QUIET = 4, /* the answer to a quiesce request */
};

/* A reply: fixed size, msg NUL-terminated (empty unless ERROR). */
struct cbox_exec_reply {
	uint32_t type;
	int32_t value;
	char msg[248];
};

/* Whether len bytes are a well-formed reply (size, type, NUL-terminated msg). */
bool cbox_exec_reply_valid(const void *data, size_t len);
