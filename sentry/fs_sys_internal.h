#pragma once
/*
 * Private to sentry/fs_sys*.c: the nodes of the guest's /sys. fs_sys.c is the tree and the
 * machine's files, fs_sys_cgroup.c the texts of fs/cgroup's files (the sandbox's cgroup).
 */
#include <stdbool.h>
#include <stdio.h>

#include "internal.h"

enum node {
	N_ROOT = 0, /* mounts.c sets the root's priv to 0 */
	N_DEVICES,
	N_SYSTEM,
	N_CPU,
	N_CPU_ONLINE,
	N_CPU_POSSIBLE,
	N_CPU_PRESENT,
	N_CPU_N,       /* cpuN/, one per present CPU (priv's arg: N); listed by hand */
	N_CPU_TOPO,    /* cpuN/topology/ (arg: N) */
	N_TOPO_FILE,   /* cpuN/topology/<name> (arg: SUB_ARG(N, index in topo_names)) */
	N_CPU_CACHE,   /* cpuN/cache/ (arg: N) */
	N_CACHE_INDEX, /* cpuN/cache/indexI/ (arg: SUB_ARG(N, I)) */
	N_CACHE_FILE,  /* cpuN/cache/indexI/<name> (arg: CACHE_ARG(N, I, index in cache_names)) */
	N_NODE,
	N_NODE_HAS_CPU,
	N_NODE_HAS_MEMORY,
	N_NODE_HAS_NORMAL,
	N_NODE_ONLINE,
	N_NODE_POSSIBLE,
	N_NODE_N,    /* nodeN/, one per online NUMA node (arg: N); listed by hand */
	N_NODE_FILE, /* nodeN/<name> (arg: SUB_ARG(N, index in node_names)) */
	N_FS,
	N_CGROUP,
	N_CG_CONTROLLERS,
	N_CG_EVENTS,
	N_CG_PROCS,
	N_CG_SUBTREE,
	N_CG_THREADS,
	N_CG_TYPE,
	N_CPU_MAX,
	N_CPU_STAT,
	N_CPU_WEIGHT,
	N_CPUSET_CPUS,
	N_CPUSET_CPUS_EFF,
	N_MEM_CURRENT, /* the usage files: only with a cgroup (live) */
	N_MEM_EVENTS,
	N_MEM_HIGH,
	N_MEM_LOW,
	N_MEM_MAX,
	N_MEM_MIN,
	N_MEM_PEAK,
	N_MEM_STAT,
	N_MEM_SWAP_MAX,
	N_PIDS_CURRENT,
	N_PIDS_MAX,
	N_KERNEL,
	N_MM,
	N_THP,
	N_THP_DEFRAG,
	N_THP_ENABLED,
	N_THP_PMD,
	N_BLOCK, /* block/ and dev/{block,char}/: empty (the sandbox has no devices there) */
	N_DEV,
	N_DEV_BLOCK,
	N_DEV_CHAR,
	N_CLASS,
	N_CLASS_NET, /* class/net/ and devices/virtual/net/: the sandbox's network interfaces */
	N_NET_LINK,  /* class/net/<if>, a symlink to devices/virtual/net/<if> (arg: NET_ARG) */
	N_VIRTUAL,   /* devices/virtual/ */
	N_VIRT_NET,  /* devices/virtual/net/ */
	N_NET_IF,    /* devices/virtual/net/<if>/ (arg: NET_ARG) */
	N_NET_STATS, /* devices/virtual/net/<if>/statistics/ (arg: NET_ARG) */
	N_NET_FILE,  /* a file of either (arg: NET_ARG of the interface and the name) */
	N_COUNT,
};

/* A dentry's priv: its node, and an argument (a CPU's or a node's number, an interface's index). */
#define PRIV_OF(n, arg) ((uint64_t)(n) | ((uint64_t)(arg) << 16))
#define NODE(p)         ((enum node)((p)&0xffff))

/* A new dentry of node n (arg its argument) named name in dir, or NULL; the inode number of
 * (n, arg) (fs_sys.c). */
struct cbox_dentry *cbox_sys_mk(struct cbox_dentry *dir, const char *name, enum node n,
                                uint64_t arg);
uint64_t cbox_sys_ino(enum node n, uint64_t arg);

/* The usage files read live from the sandbox's cgroup, and so exist only with one. */
static inline bool live(enum node n)
{
	return n == N_MEM_CURRENT || n == N_MEM_PEAK || n == N_PIDS_CURRENT || n == N_CPU_STAT ||
	       n == N_MEM_STAT || n == N_MEM_EVENTS;
}

/* The file name under the directory fd dir, NUL-terminated, into buf; -errno (ENOENT: no such
 * file, or dir is -1). */
int cbox_sys_read_at(int dir, const char *name, char *buf, size_t size);

/*
 * The network interfaces of the sandbox's own network namespace (fs_sys_net.c), read from a sysfs
 * mounted in it for the sentry alone (cbox_sys_net_init); without one (a namespace the sandbox
 * joined and does not own), class/net/ and devices/virtual/ are absent.
 */
void cbox_sys_net_init(struct cbox_sentry *s);
void cbox_sys_net_free(struct cbox_sentry *s);
bool cbox_sys_net_has(const struct cbox_sentry *s);
/* dir's child name (dir one of N_CLASS_NET, N_VIRT_NET, N_NET_IF, N_NET_STATS): -ENOENT when
 * absent. */
int cbox_sys_net_lookup(struct cbox_sentry *s, struct cbox_dentry *dir, const char *name,
                        struct cbox_dentry **out);
/* dir's entries (as cbox_sys_net_lookup's), after "." and "..". */
int cbox_sys_net_readdir(struct cbox_sentry *s, struct cbox_dentry *dir,
                         int (*emit)(void *ctx, const char *name, uint64_t ino, unsigned char type),
                         void *ctx);
/* The text of file d (N_NET_FILE) into f; -errno as the kernel's read of it gives. */
int cbox_sys_net_gen(struct cbox_sentry *s, const struct cbox_dentry *d, FILE *f);
/* The target of link d (N_NET_LINK) into buf: its length, or -errno. */
int cbox_sys_net_readlink(const struct cbox_dentry *d, char *buf, size_t size);

/* The text of fs/cgroup's file n into f; -errno (-EISDIR for the directory itself). */
int cbox_sys_cgroup_gen(struct cbox_sentry *s, enum node n, FILE *f);
