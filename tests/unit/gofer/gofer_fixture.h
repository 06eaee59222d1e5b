#pragma once
/*
 * The fixture the gofer server tests share (gofer_fixture.c). root is a fresh temp tree
 * (file.txt "hello", dir/inner, link -> file.txt, fifo, sock); S runs the server on it in a
 * thread, read-only (setup_ro) or writable (setup_rw, or setup_rw_no_chown: a server thread
 * without CAP_CHOWN, whose chown to another id fails as an unprivileged gofer's does), with S.c
 * its client; teardown stops it, checks that no fd was left open and removes the tree.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "cbox/gofer.h"

struct session {
	int sv[2];
	int root_fd;
	bool readonly;
	bool no_chown; /* the server thread drops CAP_CHOWN from its effective set first */
	int rc;
	pthread_t th;
	struct cbox_gofer_client *c;
};

extern char root[64];
extern struct session S;

/* A file rel (under root) holding data; out = root/rel (256 bytes). */
void put(const char *rel, const char *data);
void at(char *out, const char *rel);
/* The tree alone (no server), and the number of fds this process has open. */
void make_tree(void);
void remove_tree(void);
int count_fds(void);
void setup_ro(void);
void setup_rw(void);
void setup_rw_no_chown(void);
/* setup_ro on a read-only bind mount of the tree (made in a mount namespace of the test's own:
 * the rootfs is served that way), and its teardown. Skips without the privilege to mount,
 * unless CBOX_TESTS_MUST_WORK=1. */
void setup_ro_mount(void);
void teardown_ro_mount(void);
void teardown(void);
/* A new fid for name in the root (asserted); *st its stat when not NULL. */
uint32_t walk(const char *name, struct cbox_gofer_stat *st);
/* lstat of root/rel (asserted). */
struct stat host_lstat(const char *rel);
