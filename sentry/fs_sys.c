/*
 * /sys for the guest: the few files of sysfs that programs read to size themselves, served by the
 * sentry on a read-only mount (a container's /sys is read-only too: a write is EROFS).
 *
 *   devices/system/cpu/{online,possible,present} and cpuN/: glibc's sysconf(_SC_NPROCESSORS_*)
 *     (os.cpu_count(), nproc's fallbacks), lscpu, thread pools (OpenMP, BLAS); cpuN/topology/
 *     and cpuN/cache/ (lscpu's cores and caches, hwloc);
 *   kernel/mm/transparent_hugepage/{enabled,defrag,hpage_pmd_size}: the JVM, Go's runtime;
 *   block/, dev/block/ and dev/char/, empty: the sandbox has no block device, and no device of
 *     the host's is the guest's to list (lsblk then lists none instead of failing on a missing
 *     /sys/dev/block, as gVisor's /sys has them);
 *   class/net/ and devices/virtual/net/: the sandbox's own network interfaces (fs_sys_net.c);
 *   fs/cgroup/: the sandbox's own cgroup, as cgroup v2 shows a container's with a cgroup
 *     namespace. The JVM sizes its heap and its thread pools from memory.max and cpu.max, and
 *     so do Go (GOMAXPROCS), libuv, Rust's available_parallelism and .NET: without these files
 *     `cbox-run --memory 256m -- java ...` sized its heap from the host's 24 GiB and was killed
 *     by the limit where a container's JVM collects its garbage.
 *
 * The machine's files are the host's (read through the host's /sys, which the sentry keeps from
 * before it leaves the host's mounts: cbox_fs_sys_init). This file is the tree (lookup, listing,
 * open); fs_sys_cgroup.c writes the texts of fs/cgroup's files.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/log.h"
#include "fs_sys_internal.h"

#define DIR_MODE (S_IFDIR | 0755)
#define RO_MODE  (S_IFREG | 0444)
#define RW_MODE  (S_IFREG | 0644)

static const struct node_def {
	const char *name;
	enum node parent;
	uint32_t mode;
} nodes[N_COUNT] = {
    [N_ROOT] = {"", N_ROOT, DIR_MODE},
    [N_DEVICES] = {"devices", N_ROOT, DIR_MODE},
    [N_SYSTEM] = {"system", N_DEVICES, DIR_MODE},
    [N_CPU] = {"cpu", N_SYSTEM, DIR_MODE},
    [N_CPU_ONLINE] = {"online", N_CPU, RO_MODE},
    [N_CPU_POSSIBLE] = {"possible", N_CPU, RO_MODE},
    [N_CPU_PRESENT] = {"present", N_CPU, RO_MODE},
    [N_CPU_N] = {NULL, N_CPU, DIR_MODE},
    [N_CPU_TOPO] = {NULL, N_CPU_N, DIR_MODE},
    [N_TOPO_FILE] = {NULL, N_CPU_TOPO, RO_MODE},
    [N_CPU_CACHE] = {NULL, N_CPU_N, DIR_MODE},
    [N_CACHE_INDEX] = {NULL, N_CPU_CACHE, DIR_MODE},
    [N_CACHE_FILE] = {NULL, N_CACHE_INDEX, RO_MODE},
    [N_NODE] = {"node", N_SYSTEM, DIR_MODE},
    [N_NODE_HAS_CPU] = {"has_cpu", N_NODE, RO_MODE},
    [N_NODE_HAS_MEMORY] = {"has_memory", N_NODE, RO_MODE},
    [N_NODE_HAS_NORMAL] = {"has_normal_memory", N_NODE, RO_MODE},
    [N_NODE_ONLINE] = {"online", N_NODE, RO_MODE},
    [N_NODE_POSSIBLE] = {"possible", N_NODE, RO_MODE},
    [N_NODE_N] = {NULL, N_NODE, DIR_MODE},
    [N_NODE_FILE] = {NULL, N_NODE_N, RO_MODE},
    [N_FS] = {"fs", N_ROOT, DIR_MODE},
    [N_CGROUP] = {"cgroup", N_FS, DIR_MODE},
    [N_CG_CONTROLLERS] = {"cgroup.controllers", N_CGROUP, RO_MODE},
    [N_CG_EVENTS] = {"cgroup.events", N_CGROUP, RO_MODE},
    [N_CG_PROCS] = {"cgroup.procs", N_CGROUP, RW_MODE},
    [N_CG_SUBTREE] = {"cgroup.subtree_control", N_CGROUP, RW_MODE},
    [N_CG_THREADS] = {"cgroup.threads", N_CGROUP, RW_MODE},
    [N_CG_TYPE] = {"cgroup.type", N_CGROUP, RW_MODE},
    [N_CPU_MAX] = {"cpu.max", N_CGROUP, RW_MODE},
    [N_CPU_STAT] = {"cpu.stat", N_CGROUP, RO_MODE},
    [N_CPU_WEIGHT] = {"cpu.weight", N_CGROUP, RW_MODE},
    [N_CPUSET_CPUS] = {"cpuset.cpus", N_CGROUP, RW_MODE},
    [N_CPUSET_CPUS_EFF] = {"cpuset.cpus.effective", N_CGROUP, RO_MODE},
    [N_MEM_CURRENT] = {"memory.current", N_CGROUP, RO_MODE},
    [N_MEM_EVENTS] = {"memory.events", N_CGROUP, RO_MODE},
    [N_MEM_HIGH] = {"memory.high", N_CGROUP, RW_MODE},
    [N_MEM_LOW] = {"memory.low", N_CGROUP, RW_MODE},
    [N_MEM_MAX] = {"memory.max", N_CGROUP, RW_MODE},
    [N_MEM_MIN] = {"memory.min", N_CGROUP, RW_MODE},
    [N_MEM_PEAK] = {"memory.peak", N_CGROUP, RO_MODE},
    [N_MEM_STAT] = {"memory.stat", N_CGROUP, RO_MODE},
    [N_MEM_SWAP_MAX] = {"memory.swap.max", N_CGROUP, RW_MODE},
    [N_PIDS_CURRENT] = {"pids.current", N_CGROUP, RO_MODE},
    [N_PIDS_MAX] = {"pids.max", N_CGROUP, RW_MODE},
    [N_KERNEL] = {"kernel", N_ROOT, DIR_MODE},
    [N_MM] = {"mm", N_KERNEL, DIR_MODE},
    [N_THP] = {"transparent_hugepage", N_MM, DIR_MODE},
    [N_THP_DEFRAG] = {"defrag", N_THP, RW_MODE},
    [N_THP_ENABLED] = {"enabled", N_THP, RW_MODE},
    [N_THP_PMD] = {"hpage_pmd_size", N_THP, RO_MODE},
    [N_BLOCK] = {"block", N_ROOT, DIR_MODE},
    [N_DEV] = {"dev", N_ROOT, DIR_MODE},
    [N_DEV_BLOCK] = {"block", N_DEV, DIR_MODE},
    [N_DEV_CHAR] = {"char", N_DEV, DIR_MODE},
    [N_CLASS] = {"class", N_ROOT, DIR_MODE},
    [N_CLASS_NET] = {"net", N_CLASS, DIR_MODE},
    [N_NET_LINK] = {NULL, N_CLASS_NET, S_IFLNK | 0777},
    [N_VIRTUAL] = {"virtual", N_DEVICES, DIR_MODE},
    [N_VIRT_NET] = {"net", N_VIRTUAL, DIR_MODE},
    [N_NET_IF] = {NULL, N_VIRT_NET, DIR_MODE},
    [N_NET_STATS] = {NULL, N_NET_IF, DIR_MODE},
    [N_NET_FILE] = {NULL, N_NET_IF, RO_MODE},
};

/* The host's files, by node, relative to its /sys (cbox_fs_sys_init). */
static const char *const host_paths[N_COUNT] = {
    [N_CPU_ONLINE] = "devices/system/cpu/online",
    [N_CPU_POSSIBLE] = "devices/system/cpu/possible",
    [N_CPU_PRESENT] = "devices/system/cpu/present",
    [N_NODE] = "devices/system/node",
    [N_NODE_HAS_CPU] = "devices/system/node/has_cpu",
    [N_NODE_HAS_MEMORY] = "devices/system/node/has_memory",
    [N_NODE_HAS_NORMAL] = "devices/system/node/has_normal_memory",
    [N_NODE_ONLINE] = "devices/system/node/online",
    [N_NODE_POSSIBLE] = "devices/system/node/possible",
    [N_THP_DEFRAG] = "kernel/mm/transparent_hugepage/defrag",
    [N_THP_ENABLED] = "kernel/mm/transparent_hugepage/enabled",
    [N_THP_PMD] = "kernel/mm/transparent_hugepage/hpage_pmd_size",
};

#define NARG(p) ((unsigned)((p) >> 16))

/* /sys/fs/cgroup is a mount of its own on Linux (cgroup2): its device differs from sysfs's, as
 * mountinfo says (fs_proc_sys.c), so that mountpoint(1) and find -xdev tell it apart. */
static bool in_cgroup(enum node n)
{
	return n >= N_CGROUP && n <= N_PIDS_MAX;
}

uint64_t cbox_fs_sys_dev(const struct cbox_dentry *d)
{
	return in_cgroup(NODE(d->priv)) ? CBOX_SYS_CGROUP_DEV : CBOX_SYS_DEV;
}

/*
 * The host's /sys, kept as an O_PATH fd from before the sentry leaves the host's mounts: its
 * files are read when the guest asks (reading the six of them at every start took 0.05-0.14 ms
 * on this VM, for a guest that rarely looks). The sentry never writes there; the guest gets only
 * the text of the files above.
 */
void cbox_fs_sys_init(struct cbox_sentry *s)
{
	s->sys_fd = open("/sys", O_PATH | O_DIRECTORY | O_CLOEXEC);
	cbox_sys_net_init(s);
}

void cbox_fs_sys_free(struct cbox_sentry *s)
{
	if (s->sys_fd >= 0)
		close(s->sys_fd);
	s->sys_fd = -1;
	cbox_sys_net_free(s);
}

int cbox_sys_read_at(int dir, const char *name, char *buf, size_t size)
{
	if (dir < 0)
		return -ENOENT;
	int fd = openat(dir, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t k = read(fd, buf, size - 1);
	int err = errno;
	close(fd);
	if (k < 0)
		return -err;
	buf[k] = '\0';
	return 0;
}

/* The host's file of node n (ENOENT: the host has none). */
static int read_host(const struct cbox_sentry *s, enum node n, char *buf, size_t size)
{
	return cbox_sys_read_at(s->sys_fd, host_paths[n], buf, size);
}

/* Whether the host's /sys has path (relative to it). */
static bool host_exists(const struct cbox_sentry *s, const char *path)
{
	struct stat st; /* (fstatat: the sentry's own filter has no faccessat) */
	return s->sys_fd >= 0 && fstatat(s->sys_fd, path, &st, 0) == 0;
}

static bool host_has(const struct cbox_sentry *s, enum node n)
{
	return host_exists(s, host_paths[n]);
}

/* Whether CPU n is in a CPU list ("0-3,8,10-11\n"), as the kernel prints them. */
static bool in_cpu_list(const char *list, unsigned n)
{
	const char *p = list;
	while (p && isdigit((unsigned char)*p)) {
		char *end;
		unsigned long a = strtoul(p, &end, 10), b = a;
		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		if (n >= a && n <= b)
			return true;
		p = *end == ',' ? end + 1 : NULL;
	}
	return false;
}

/* cpuN/ exists for each present CPU */
static bool cpu_present(const struct cbox_sentry *s, unsigned cpu)
{
	char list[512];
	return read_host(s, N_CPU_PRESENT, list, sizeof(list)) == 0 && in_cpu_list(list, cpu);
}

static bool node_online(const struct cbox_sentry *s, unsigned node);
static bool sub_has(const struct cbox_sentry *s, bool node, unsigned n, const char *name);

static bool node_exists(const struct cbox_sentry *s, enum node n, unsigned arg)
{
	if (host_paths[n])
		return host_has(s, n);
	if (n == N_CPU_N)
		return cpu_present(s, arg);
	if (n == N_NODE_N)
		return node_online(s, arg) && sub_has(s, true, arg, NULL);
	if (n == N_THP)
		return host_has(s, N_THP_ENABLED);
	if (live(n))
		return s->cfg->cgroup != NULL;
	if (n == N_CLASS_NET || n == N_VIRTUAL || n == N_VIRT_NET)
		return cbox_sys_net_has(s);
	return true;
}

static uint64_t ino_of(uint64_t priv)
{
	return (priv * 2654435761u) | 1;
}

uint64_t cbox_sys_ino(enum node n, uint64_t arg)
{
	return ino_of(PRIV_OF(n, arg));
}

struct cbox_dentry *cbox_sys_mk(struct cbox_dentry *dir, const char *name, enum node n,
                                uint64_t arg)
{
	struct cbox_dentry *d = cbox_dentry_new(dir->mnt, dir, name, nodes[n].mode);
	if (d) {
		d->priv = PRIV_OF(n, arg);
		d->ino = ino_of(d->priv);
	}
	return d;
}

/*
 * cpuN/topology/: which CPUs share a core, a die, a package (lscpu counts sockets and cores from
 * it, and said 0 of each without it; psutil's physical CPU count reads it too). The host's
 * files, read when opened: they describe the machine the sandbox runs on, as /proc/cpuinfo
 * does.
 */
static const char *const topo_names[] = {
    "cluster_cpus",
    "cluster_cpus_list",
    "cluster_id",
    "core_cpus",
    "core_cpus_list",
    "core_id",
    "core_siblings",
    "core_siblings_list",
    "die_cpus",
    "die_cpus_list",
    "die_id",
    "package_cpus",
    "package_cpus_list",
    "physical_package_id",
    "thread_siblings",
    "thread_siblings_list",
};
/* The arg of a file in a numbered directory (cpuN/topology/, nodeN/): N, and the file's index
 * in its table. */
#define SUB_ARG(n, i) (((n) << 5) | (unsigned)(i))
#define SUB_NUM(arg)  ((arg) >> 5)
#define SUB_IDX(arg)  ((arg)&31u)

/*
 * node/ and its nodeN/: the machine's NUMA nodes, their CPUs, distances and memory, as libnuma,
 * numactl and lscpu read them; the host's files, read when opened (nodeN/meminfo is per node
 * what /proc/meminfo is for the machine).
 */
static const char *const node_names[] = {"cpulist", "cpumap", "distance", "meminfo"};

/* The host's numbered directory, cpuN/topology or (node) nodeN, or the file name in it,
 * relative to its /sys. */
static void sub_path(char *buf, size_t size, bool node, unsigned n, const char *name)
{
	snprintf(buf, size,
	         node ? "devices/system/node/node%u%s%s" : "devices/system/cpu/cpu%u/topology%s%s",
	         n, name ? "/" : "", name ? name : "");
}

static bool sub_has(const struct cbox_sentry *s, bool node, unsigned n, const char *name)
{
	char path[128];
	sub_path(path, sizeof(path), node, n, name);
	return host_exists(s, path);
}

/* ("cpu17", "cpu") -> 17, or -1 for any other name (cpu, cpu017, cpufreq); "node1" the same. */
static long numbered(const char *name, const char *prefix)
{
	size_t k = strlen(prefix);
	if (strncmp(name, prefix, k) != 0 || !isdigit((unsigned char)name[k]) ||
	    (name[k] == '0' && name[k + 1]) || strlen(name) > k + 5)
		return -1;
	for (const char *p = name + k; *p; p++)
		if (!isdigit((unsigned char)*p))
			return -1;
	return strtol(name + k, NULL, 10);
}

/* nodeN/ exists for each online node */
static bool node_online(const struct cbox_sentry *s, unsigned node)
{
	char list[512];
	return read_host(s, N_NODE_ONLINE, list, sizeof(list)) == 0 && in_cpu_list(list, node);
}

/* The file names of nodeN/ (node) or cpuN/topology/, and their number. */
static const char *const *sub_names(bool node, size_t *count)
{
	*count = node ? CBOX_ARRAY_SIZE(node_names) : CBOX_ARRAY_SIZE(topo_names);
	return node ? node_names : topo_names;
}

/* A file of nodeN/ (node) or cpuN/topology/ by name: one of its table the host has. */
static int sub_lookup(const struct cbox_sentry *s, struct cbox_dentry *dir, const char *name,
                      bool node, struct cbox_dentry **out)
{
	size_t count;
	const char *const *names = sub_names(node, &count);
	unsigned num = NARG(dir->priv);
	for (size_t i = 0; i < count; i++)
		if (strcmp(name, names[i]) == 0 && sub_has(s, node, num, name)) {
			*out = cbox_sys_mk(dir, name, node ? N_NODE_FILE : N_TOPO_FILE,
			                   SUB_ARG(num, i));
			return *out ? 0 : -ENOMEM;
		}
	return -ENOENT;
}

/*
 * cpuN/cache/indexI/: the CPU's caches, their level, type, size and geometry and which CPUs
 * share each, as lscpu ("L1d: 64 KiB (2 instances)"), hwloc and cache-aware libraries read them;
 * the host's files, read when opened, like topology/. I below 32.
 */
static const char *const cache_names[] = {
    "coherency_line_size",
    "id",
    "level",
    "number_of_sets",
    "physical_line_partition",
    "shared_cpu_list",
    "shared_cpu_map",
    "size",
    "type",
    "ways_of_associativity",
};
#define CACHE_ARG(n, i, f) (((n) << 10) | ((unsigned)(i) << 5) | (unsigned)(f))
#define CACHE_CPU(arg)     ((arg) >> 10)
#define CACHE_IDX(arg)     (((arg) >> 5) & 31u)
#define CACHE_FILE(arg)    ((arg)&31u)

/* The host's cpuN/cache (index < 0), cpuN/cache/indexI, or a file name in it, relative to /sys. */
static void cache_path(char *buf, size_t size, unsigned cpu, int index, const char *name)
{
	if (index < 0)
		snprintf(buf, size, "devices/system/cpu/cpu%u/cache", cpu);
	else
		snprintf(buf, size, "devices/system/cpu/cpu%u/cache/index%d%s%s", cpu, index,
		         name ? "/" : "", name ? name : "");
}

static bool cache_has(const struct cbox_sentry *s, unsigned cpu, int index, const char *name)
{
	char path[160];
	cache_path(path, sizeof(path), cpu, index, name);
	return host_exists(s, path);
}

/* A name in cpuN/cache/ (indexI) or in cpuN/cache/indexI/ (a file of cache_names). */
static int cache_lookup(const struct cbox_sentry *s, struct cbox_dentry *dir, const char *name,
                        struct cbox_dentry **out)
{
	unsigned arg = NARG(dir->priv);
	if (NODE(dir->priv) == N_CPU_CACHE) {
		long i = numbered(name, "index");
		if (i < 0 || i > 31 || !cache_has(s, arg, (int)i, NULL))
			return -ENOENT;
		*out = cbox_sys_mk(dir, name, N_CACHE_INDEX, SUB_ARG(arg, i));
		return *out ? 0 : -ENOMEM;
	}
	for (size_t f = 0; f < CBOX_ARRAY_SIZE(cache_names); f++)
		if (strcmp(name, cache_names[f]) == 0 &&
		    cache_has(s, SUB_NUM(arg), (int)SUB_IDX(arg), name)) {
			*out = cbox_sys_mk(dir, name, N_CACHE_FILE,
			                   CACHE_ARG(SUB_NUM(arg), SUB_IDX(arg), f));
			return *out ? 0 : -ENOMEM;
		}
	return -ENOENT;
}

static int y_lookup(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *dir,
                    const char *name, struct cbox_dentry **out)
{
	(void)t;
	enum node dn = NODE(dir->priv);
	unsigned num = NARG(dir->priv);
	if (dn == N_CPU_N) {
		bool topo = strcmp(name, "topology") == 0 && sub_has(s, false, num, NULL);
		bool cache = strcmp(name, "cache") == 0 && cache_has(s, num, -1, NULL);
		if (!topo && !cache)
			return -ENOENT;
		*out = cbox_sys_mk(dir, name, topo ? N_CPU_TOPO : N_CPU_CACHE, num);
		return *out ? 0 : -ENOMEM;
	}
	if (dn == N_CPU_CACHE || dn == N_CACHE_INDEX)
		return cache_lookup(s, dir, name, out);
	if (dn == N_NODE_N || dn == N_CPU_TOPO)
		return sub_lookup(s, dir, name, dn == N_NODE_N, out);
	if (dn == N_CLASS_NET || dn == N_VIRT_NET || dn == N_NET_IF || dn == N_NET_STATS)
		return cbox_sys_net_lookup(s, dir, name, out);
	if (!S_ISDIR(nodes[dn].mode))
		return -ENOTDIR;
	for (int n = 0; n < N_COUNT; n++) {
		if (!nodes[n].name || nodes[n].parent != dn || n == N_ROOT ||
		    strcmp(nodes[n].name, name) != 0)
			continue;
		if (!node_exists(s, (enum node)n, 0))
			return -ENOENT;
		*out = cbox_sys_mk(dir, name, (enum node)n, 0);
		return *out ? 0 : -ENOMEM;
	}
	long sub = dn == N_CPU ? numbered(name, "cpu") : dn == N_NODE ? numbered(name, "node") : -1;
	enum node kind = dn == N_CPU ? N_CPU_N : N_NODE_N;
	if (sub < 0 || !node_exists(s, kind, (unsigned)sub))
		return -ENOENT;
	*out = cbox_sys_mk(dir, name, kind, (unsigned)sub);
	return *out ? 0 : -ENOMEM;
}

static int y_stat(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d,
                  struct stat *st)
{
	(void)t;
	memset(st, 0, sizeof(*st));
	st->st_mode = d->mode;
	st->st_nlink = S_ISDIR(d->mode) ? 2 : 1;
	st->st_dev = cbox_fs_sys_dev(d);
	st->st_ino = d->ino;
	st->st_blksize = 4096;
	/* sysfs shows a file's size as a page, whatever it holds; cgroupfs shows 0 */
	st->st_size = S_ISREG(d->mode) && !in_cgroup(NODE(d->priv)) ? 4096 : 0;
	st->st_atim = st->st_mtim = st->st_ctim = s->born;
	return 0;
}

static int gen(struct cbox_sentry *s, enum node n, FILE *f)
{
	if (host_paths[n]) {
		char buf[512];
		int r = read_host(s, n, buf, sizeof(buf));
		if (r == 0)
			fputs(buf, f);
		return r;
	}
	return in_cgroup(n) ? cbox_sys_cgroup_gen(s, n, f) : -EISDIR;
}

static int y_open(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d, int flags)
{
	(void)t;
	/* (the mount is read-only: a write was EROFS before this) */
	if ((flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	int r;
	enum node n = NODE(d->priv);
	if (n == N_NET_FILE) {
		r = cbox_sys_net_gen(s, d, f);
	} else if (n == N_TOPO_FILE || n == N_NODE_FILE || n == N_CACHE_FILE) {
		char path[160], buf[4096];
		unsigned arg = NARG(d->priv);
		if (n == N_TOPO_FILE)
			sub_path(path, sizeof(path), false, SUB_NUM(arg), topo_names[SUB_IDX(arg)]);
		else if (n == N_NODE_FILE)
			sub_path(path, sizeof(path), true, SUB_NUM(arg), node_names[SUB_IDX(arg)]);
		else
			cache_path(path, sizeof(path), CACHE_CPU(arg), (int)CACHE_IDX(arg),
			           cache_names[CACHE_FILE(arg)]);
		r = cbox_sys_read_at(s->sys_fd, path, buf, sizeof(buf));
		if (r == 0)
			fputs(buf, f);
	} else {
		r = gen(s, NODE(d->priv), f);
	}
	if (fclose(f) != 0 && r == 0)
		r = -ENOMEM;
	int fd = r < 0 ? r : cbox_memfd_with(d->name, text ? text : "", len);
	free(text);
	return fd;
}

static int y_readdir(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d,
                     int (*emit)(void *ctx, const char *name, uint64_t ino, unsigned char type),
                     void *ctx)
{
	(void)t;
	enum node dn = NODE(d->priv);
	if (!S_ISDIR(nodes[dn].mode))
		return -ENOTDIR;
	int r = emit(ctx, ".", d->ino, DT_DIR);
	if (r == 0)
		r = emit(ctx, "..", d->parent ? d->parent->ino : d->ino, DT_DIR);
	for (int n = 1; r == 0 && n < N_COUNT; n++)
		if (nodes[n].name && nodes[n].parent == dn && node_exists(s, (enum node)n, 0))
			r = emit(ctx, nodes[n].name, ino_of(PRIV_OF(n, 0)),
			         S_ISDIR(nodes[n].mode) ? DT_DIR : DT_REG);
	if (r == 0 &&
	    (dn == N_CLASS_NET || dn == N_VIRT_NET || dn == N_NET_IF || dn == N_NET_STATS))
		return cbox_sys_net_readdir(s, d, emit, ctx);
	unsigned num = NARG(d->priv);
	if (r == 0 && dn == N_CPU_N && sub_has(s, false, num, NULL))
		r = emit(ctx, "topology", ino_of(PRIV_OF(N_CPU_TOPO, num)), DT_DIR);
	if (r == 0 && dn == N_CPU_N && cache_has(s, num, -1, NULL))
		r = emit(ctx, "cache", ino_of(PRIV_OF(N_CPU_CACHE, num)), DT_DIR);
	for (int i = 0; r == 0 && dn == N_CPU_CACHE && i < 32; i++) {
		char name[16];
		snprintf(name, sizeof(name), "index%d", i);
		if (cache_has(s, num, i, NULL))
			r = emit(ctx, name, ino_of(PRIV_OF(N_CACHE_INDEX, SUB_ARG(num, i))),
			         DT_DIR);
	}
	for (size_t f = 0; r == 0 && dn == N_CACHE_INDEX && f < CBOX_ARRAY_SIZE(cache_names); f++)
		if (cache_has(s, SUB_NUM(num), (int)SUB_IDX(num), cache_names[f]))
			r = emit(
			    ctx, cache_names[f],
			    ino_of(PRIV_OF(N_CACHE_FILE, CACHE_ARG(SUB_NUM(num), SUB_IDX(num), f))),
			    DT_REG);
	if (dn == N_NODE_N || dn == N_CPU_TOPO) {
		bool node = dn == N_NODE_N;
		size_t count;
		const char *const *names = sub_names(node, &count);
		for (size_t i = 0; r == 0 && i < count; i++)
			if (sub_has(s, node, num, names[i]))
				r = emit(ctx, names[i],
				         ino_of(PRIV_OF(node ? N_NODE_FILE : N_TOPO_FILE,
				                        SUB_ARG(num, i))),
				         DT_REG);
	}
	char present[512];
	if (dn == N_CPU && read_host(s, N_CPU_PRESENT, present, sizeof(present)) == 0) {
		char name[16];
		for (unsigned c = 0; r == 0 && c < 4096; c++)
			if (in_cpu_list(present, c)) {
				snprintf(name, sizeof(name), "cpu%u", c);
				r = emit(ctx, name, ino_of(PRIV_OF(N_CPU_N, c)), DT_DIR);
			}
	}
	if (dn == N_NODE && read_host(s, N_NODE_ONLINE, present, sizeof(present)) == 0) {
		char name[16];
		for (unsigned n = 0; r == 0 && n < 1024; n++)
			if (in_cpu_list(present, n) && sub_has(s, true, n, NULL)) {
				snprintf(name, sizeof(name), "node%u", n);
				r = emit(ctx, name, ino_of(PRIV_OF(N_NODE_N, n)), DT_DIR);
			}
	}
	return r;
}

/* statfs: SYSFS_MAGIC, and CGROUP2_SUPER_MAGIC below fs/cgroup (systemd, .NET and containerd's
 * cgroups library tell v2 by it). */
uint64_t cbox_fs_sys_magic(const struct cbox_dentry *d)
{
	return in_cgroup(NODE(d->priv)) ? 0x63677270 : 0x62656572;
}

static int y_readlink(struct cbox_sentry *s, struct cbox_task *t, struct cbox_dentry *d, char *buf,
                      size_t size)
{
	(void)s, (void)t;
	return NODE(d->priv) == N_NET_LINK ? cbox_sys_net_readlink(d, buf, size) : -EINVAL;
}

const struct cbox_fs_ops cbox_fs_sys = {
    .name = "sysfs",
    .lookup = y_lookup,
    .stat = y_stat,
    .open = y_open,
    .readlink = y_readlink,
    .readdir = y_readdir,
    .magic = cbox_fs_sys_magic,
};
