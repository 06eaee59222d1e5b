#pragma once
/* Private to gofer/: the server's state and single-step entry point (used by the fuzz target). */
#include <stdbool.h>
#include <stdint.h>

struct cbox_gofer_server;

/*
 * Create a server answering on sock (not owned: the caller closes it) for the tree at root_fd
 * (an O_PATH|O_DIRECTORY fd, consumed even on failure). Returns NULL on ENOMEM (errno set).
 */
struct cbox_gofer_server *cbox_gofer_server_new(int sock, int root_fd, bool readonly);

/* Close every fid's fd and free the server. NULL-safe. */
void cbox_gofer_server_free(struct cbox_gofer_server *s);

/*
 * Receive one request, act on it and send the reply. Returns 1 when a request was answered,
 * 0 when the peer closed the connection (or can no longer be written to), -1 after a malformed
 * request or a receive error (already logged with cbox_error: the session must end).
 * Blocks until a packet arrives.
 */
int cbox_gofer_serve_one(struct cbox_gofer_server *s);

/* The most fids a session can hold at once, the root included. */
#define CBOX_GOFER_FID_MAX 65536u

/*
 * Install the gofer's seccomp filter (cbox_gofer_allowed_syscalls, default kill-process) on the
 * calling thread. sendmsg/recvmsg are allowed only on sock, write only on log_fd.
 * Precondition: no_new_privs is set. Returns 0 or -errno (libseccomp's).
 */
int cbox_gofer_seccomp_install(int sock, int log_fd);

/*
 * In the gofer child, before the pivot: detach every host pseudo-filesystem mounted at or under
 * prefix (proc, sysfs, devtmpfs, devpts, cgroup*, debugfs, ..., and tmpfs at /run, /run/..., /dev,
 * /dev/shm relative to prefix), then remount every mount left under prefix nodev,nosuid (and
 * read-only when readonly). Reads /proc/self/mountinfo. Dies (cbox_die) on any failure.
 */
void cbox_gofer_mounts_restrict(const char *prefix, bool readonly);
