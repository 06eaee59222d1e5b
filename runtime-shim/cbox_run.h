#pragma once
/* cbox-run's options (cbox_run_opts.c) and the sandbox they describe (cbox_run_tree.c, and
 * cbox_run_net.c for --network). */
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>
#include "cbox/gofer.h"

/* The sandbox's host name (uname, /etc/hostname, and /etc/hosts resolves it: cbox_run_tree). */
#define CBOX_RUN_HOSTNAME "cbox"
/* The guest's HOME, made in its /tmp (cbox_run_env, cbox_run_tree). */
#define CBOX_RUN_GUEST_HOME "/tmp/home"

/* One forward of a -p [[HOSTIP:][HOSTPORT[-END]]:]PORT[-END][/tcp|/udp] (a range gives one per
 * port) */
struct cbox_run_publish {
	const char *arg;    /* the -p as given (for messages) */
	char host_addr[16]; /* an IPv4 address (slirp4netns forwards IPv4 only) */
	/* the host's port; a range: the first of it that is free; 0 and 0: a free one the
	 * kernel picks (cbox-run says which) */
	unsigned host_port, host_port_end;
	unsigned guest_port;
	bool udp;
};

/* -p's forwards in all: each is a listening socket of slirp4netns's, which has the fd limit
 * cbox-run had */
#define CBOX_RUN_MAX_FORWARDS 512
/* --allow-net's entries in all */
#define CBOX_RUN_MAX_ALLOW 256

/* --network and -p (cbox_run_net.c). */
struct cbox_run_net {
	bool slirp;               /* slirp4netns: a way out through user-mode networking */
	bool allow_host_loopback; /* :allow_host_loopback=true: 10.0.2.2 is the host's 127.0.0.1 */
	bool ipv6;                /* :enable_ipv6=true */
	unsigned mtu;             /* :mtu=N */
	struct cbox_run_publish *publish;
	size_t n_publish;
	char **allow; /* --allow-net's entries, each checked (cbox_proxy_rule_parse) */
	size_t n_allow;
};

struct cbox_run_opts {
	const char *platform;
	const char *tier; /* --tier: "sentry" (default) or "ns" */
	const char *rootfs;
	bool strict, strace;
	int level, format;
	const char *workdir; /* the guest's cwd and writable working folder; NULL: the caller's */
	bool workdir_ro;     /* --ro: the working folder is read-only too */
	bool overlay;        /* --overlay: a writable root over the rootfs, discarded at the end */
	bool tty;            /* -t: a pseudo-terminal of the sandbox's own */
	int init; /* a tiny init as pid 1, the program as pid 2: 1 (--init, and the sentry tier's
	           * default), 0 (--no-init, the ns tier's default), -1 until parsed */
	bool dev_shm; /* the rootfs has /dev: serve a tmpfs /dev/shm (set by cbox_run_tree) */
	unsigned timeout_ms; /* 0: none */
	struct cbox_run_net net;
	/* --user USER[:GROUP] as given, and the ids it names (0:0 without); --group-add GROUP as
	 * given; the supplementary groups both give (cbox_run_resolve_user) */
	const char *user;
	uint32_t uid, gid;
	char **group_add;
	size_t n_group_add;
	uint32_t *groups;
	size_t ngroups;
	/* Limits of the sandbox's cgroup (sentry, gofer and guest together); 0: not set. */
	int64_t memory;      /* --memory, bytes */
	int64_t memory_swap; /* --memory-swap: memory + swap, bytes; -1 unlimited */
	int64_t cpu_quota;   /* --cpus, as microseconds per 100 ms period */
	double cpus;         /* --cpus as given, for messages */
	int64_t pids;        /* --pids */
	/* -v HOST:GUEST[:ro] */
	struct cbox_gofer_mount *mounts;
	size_t n_mounts;
	/* --hide PATH, then the defaults */
	char **hide;
	size_t n_hide;
	/* --env NAME[=VALUE] */
	char **env;
	size_t n_env;
	/* the NAME[=VALUE] lines of the --env-file files, in order (before --env's, as docker) */
	char **env_file;
	size_t n_env_file;
	/* built by cbox_run_tree / cbox_run_env, freed by cbox_run_opts_free */
	struct cbox_gofer_mount *tree;
	char **envp;
	char *resolv_conf; /* the sandbox's /etc/resolv.conf with --network slirp4netns */
};

/*
 * Parse argv into o (defaults filled in first). Returns the index of the program in argv, or -1
 * after printing a message naming the bad option (the caller exits 125). Exits 0 for --help.
 */
int cbox_run_parse(int argc, char **argv, struct cbox_run_opts *o);

/* Whether --memory, --cpus or --pids was given: the sandbox then has a cgroup of its own. */
static inline bool cbox_run_has_limits(const struct cbox_run_opts *o)
{
	return o->memory || o->cpu_quota || o->pids;
}

/*
 * The ids --user names (o->uid, o->gid) and the supplementary groups (o->groups) it and
 * --group-add give, names looked up in the rootfs's /etc/passwd and /etc/group
 * (cbox_run_user.c). Returns 0, or -1 after printing why (the caller exits 125).
 */
int cbox_run_resolve_user(struct cbox_run_opts *o);

/* The home the rootfs's /etc/passwd gives the guest's uid (o->uid), as getpwuid(getuid()) finds
 * it in the guest (the first entry with that uid), in home (size bytes): 0, or -1 for none. */
int cbox_run_user_home(const struct cbox_run_opts *o, char *home, size_t size);

/* Append a copy of s to the array *v of *n strings: 0, or -1 out of memory. */
int cbox_run_push_str(char ***v, size_t *n, const char *s);

/*
 * The gofer's view of the guest's tree for o (cbox_run_tree.c): the rootfs read-only; the working
 * folder writable at its own path (unless it is "/" or --ro); a tmpfs at /tmp with /tmp/home; the
 * sandbox's own /etc/hostname and /etc/hosts (where the rootfs has them); the -v mounts; the hidden
 * paths (the defaults of a host root: secrets and host runtime state, then --hide). *cwd gets the
 * guest's working directory. Storage lives in o. Returns 0 or -1 (message printed).
 */
int cbox_run_tree(struct cbox_run_opts *o, struct cbox_gofer_config *gc, const char **cwd);
/* A regular file of the rootfs (rel: relative to it), symlinks resolved inside it, for reading;
 * NULL with errno otherwise (cbox_run_tree.c). */
FILE *cbox_run_rootfs_fopen(const char *rootfs, const char *rel);

/* The guest's environment: PATH, HOME=/tmp/home, TERM and LANG from the caller (LANG defaults
 * to C.UTF-8), then each --env. NULL-terminated, allocated. */
char **cbox_run_env(struct cbox_run_opts *o);

/* --tier=ns (cbox_run_ns.c): the same sandbox description run by cbox's ns tier (plain
 * namespaces) instead of the sentry. Returns cbox-run's exit status. */
int cbox_run_ns(struct cbox_run_opts *o, char **argv);
/* The seccomp profile (linux.seccomp) of those bundles (cbox_run_ns_seccomp.c says what it
 * refuses and why); a new json-c object. */
struct json_object *cbox_run_ns_seccomp(void);

/* --network's argument into n (defaults first): 0, or -1 after a message naming what is
 * wrong. */
int cbox_run_net_parse(struct cbox_run_net *n, const char *arg);
/* One -p into n->publish: 0, or -1 after a message. */
int cbox_run_net_publish(struct cbox_run_net *n, const char *arg);

/* The program name beside cbox-run (cbox for --tier=ns, cbox-proxy) in buf: 0 when it is there
 * and executable, else -1 (buf still says where it was looked for). */
int cbox_run_sibling(const char *name, char *buf, size_t n);

/* --allow-net LIST (cbox_run_proxy.c): its entries into n->allow: 0, or -1 after a message. */
int cbox_run_allow_net(struct cbox_run_net *n, const char *arg);
/* In the sandbox's network namespace: a socket listening on its 127.0.0.1:CBOX_PROXY_PORT, or
 * -errno. */
int cbox_run_proxy_listener(void);
/* Start cbox-proxy with n's rules (stopped by cbox_run_proxy_stop), early, so that its exec
 * overlaps the sandbox's set-up; log_allowed (--log-level info or debug): it says each connection
 * it lets through too, for a record of where the program went. The socket to send it the
 * listener through (one message, with the listener's fd: cbox_send_fds), or -1 after a
 * message. cg: the sandbox's cgroup, which the proxy joins before its exec (NULL: none). */
struct cbox_cgroup;
int cbox_run_proxy_start(const struct cbox_run_net *n, bool log_allowed, struct cbox_cgroup *cg);
pid_t cbox_run_proxy_pid(void); /* -1 when none runs */
void cbox_run_proxy_stop(void);

/* A running slirp4netns for the sandbox (cbox_run_net.c). */
struct cbox_run_slirp {
	pid_t pid;
	pid_t sandbox;    /* a process of the sandbox's network namespace */
	int exit_fd;      /* cbox-run's end: closing it makes slirp4netns leave */
	int ready_fd;     /* slirp4netns writes "1" there once the sandbox's tap0 is up */
	int log_fd;       /* what it printed (a memfd) */
	char api_dir[64]; /* with -p: the private directory of its API socket, or "" */
};
/* Start slirp4netns for the network namespace of the process sandbox (its user namespace's
 * ids already mapped). 0, or -1 after a message. */
int cbox_run_net_start(const struct cbox_run_net *n, pid_t sandbox, struct cbox_run_slirp *sl);
/* Wait until its interface is up, then publish n's ports: 0, or -1 after saying why (with what
 * slirp4netns said). */
int cbox_run_net_ready(const struct cbox_run_net *n, struct cbox_run_slirp *sl);
/* Make it leave, and reap it. */
void cbox_run_net_stop(struct cbox_run_slirp *sl);

/* Free everything o holds. */
void cbox_run_opts_free(struct cbox_run_opts *o);

/* -t (cbox_run_tty.c): a pseudo-terminal for the guest. */
struct cbox_run_tty {
	int master, slave;
};
/* Allocate it, with the caller's terminal modes and size, owned by uid (the sandbox's host
 * uid). 0, or -1 after a message. */
int cbox_run_tty_open(struct cbox_run_tty *t, uid_t uid);
/* Relay between the caller's terminal (raw meanwhile) and the master until the sentry exits;
 * *status gets its wait status. 0 or -1. */
int cbox_run_tty_relay(struct cbox_run_tty *t, pid_t sentry, int *status);
/* Give the caller's terminal its modes back (also from a signal handler's path). */
void cbox_run_tty_restore(void);
/* Stop cbox-run by SIGTSTP's default action (the shell's ^Z reached it), SIGTSTP unblocked even
 * when called from its handler; once continued, handler is SIGTSTP's handler again
 * (cbox_run_tty.c). */
void cbox_run_stop_self(void (*handler)(int));
