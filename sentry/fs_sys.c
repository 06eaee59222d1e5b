/*
 * /sys for the guest: the few files of sysfs that programs read to size themselves, served by the
 * sentry on a read-only mount (a container's /sys is read-only too: a write is EROFS).
 *
 *   devices/system/cpu/{online,possible,present} and cpuN/: glibc's sysconf(_SC_NPROCESSORS_*)
 *     (os.cpu_count(), nproc's fallbacks), lscpu, thread pools (OpenMP, BLAS);
 *   kernel/mm/transparent_hugepage/{enabled,defrag,hpage_pmd_size}: the JVM, Go's runtime;
 *   fs/cgroup/: the sandbox's own cgroup, as cgroup v2 shows a container's with a cgroup
 *     namespace. The JVM sizes its heap and its thread pools from memory.max and cpu.max, and
 *     so do Go (GOMAXPROCS), libuv, Rust's available_parallelism and .NET: without these files
 *     `cbox-run --memory 256m -- java ...` sized its heap from the host's 24 GiB and was killed
 *     by the limit where a container's JVM collects its garbage.
 *
 * The machine's files are the host's (read through the host's /sys, which the sentry keeps from
 * before it leaves the host's mounts: cbox_fs_sys_init). The cgroup's are read from the host's
 * cgroup of the sandbox when the guest opens them (cbox_sentry_config.cgroup: directory fds the
 * sentry holds), in v2's names and formats whatever the host runs (this host mounts v1
 * controllers); without a cgroup (no limit asked for) every limit reads "max" and the usage files
 * are absent.
 *
 * Security: the guest learns its own limits, which it would meet anyway, and nothing of the
 * host's cgroup tree: /proc/self/cgroup says "0::/", the files name no path, and the directory
 * fds never leave the sentry (an open gives the guest a sealed memfd of the text).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/cgroup.h"
#include "cbox/log.h"
#include "internal.h"

#define DIR_MODE (S_IFDIR | 0755)
#define RO_MODE  (S_IFREG | 0444)
#define RW_MODE  (S_IFREG | 0644)

enum node {
	N_ROOT = 0, /* mounts.c sets the root's priv to 0 */
	N_DEVICES,
	N_SYSTEM,
	N_CPU,
	N_CPU_ONLINE,
	N_CPU_POSSIBLE,
	N_CPU_PRESENT,
	N_CPU_N,     /* cpuN/, one per present CPU (priv's arg: N); listed by hand */
	N_CPU_TOPO,  /* cpuN/topology/ (arg: N) */
	N_TOPO_FILE, /* cpuN/topology/<name> (arg: SUB_ARG(N, index in topo_names)) */
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
	N_COUNT,
};

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

#define PRIV_OF(n, arg) ((uint64_t)(n) | ((uint64_t)(arg) << 16))
#define NODE(p)         ((enum node)((p)&0xffff))
#define NARG(p)         ((unsigned)((p) >> 16))

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

/* The usage files read live from the sandbox's cgroup, and so exist only with one. */
static bool live(enum node n)
{
	return n == N_MEM_CURRENT || n == N_MEM_PEAK || n == N_PIDS_CURRENT || n == N_CPU_STAT ||
	       n == N_MEM_STAT || n == N_MEM_EVENTS;
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
}

void cbox_fs_sys_free(struct cbox_sentry *s)
{
	if (s->sys_fd >= 0)
		close(s->sys_fd);
	s->sys_fd = -1;
}

/* The file name under the directory fd dir, NUL-terminated, into buf; -errno (ENOENT: no such
 * file, or dir is -1). */
static int read_at(int dir, const char *name, char *buf, size_t size)
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
	return read_at(s->sys_fd, host_paths[n], buf, size);
}

static bool host_has(const struct cbox_sentry *s, enum node n)
{
	struct stat st; /* (fstatat: the sentry's own filter has no faccessat) */
	return s->sys_fd >= 0 && fstatat(s->sys_fd, host_paths[n], &st, 0) == 0;
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
	return true;
}

static uint64_t ino_of(uint64_t priv)
{
	return (priv * 2654435761u) | 1;
}

static struct cbox_dentry *mk(struct cbox_dentry *dir, const char *name, enum node n, unsigned arg)
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
	struct stat st;
	sub_path(path, sizeof(path), node, n, name);
	return s->sys_fd >= 0 && fstatat(s->sys_fd, path, &st, 0) == 0;
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
			*out = mk(dir, name, node ? N_NODE_FILE : N_TOPO_FILE, SUB_ARG(num, i));
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
		if (strcmp(name, "topology") != 0 || !sub_has(s, false, num, NULL))
			return -ENOENT;
		*out = mk(dir, name, N_CPU_TOPO, num);
		return *out ? 0 : -ENOMEM;
	}
	if (dn == N_NODE_N || dn == N_CPU_TOPO)
		return sub_lookup(s, dir, name, dn == N_NODE_N, out);
	if (!S_ISDIR(nodes[dn].mode))
		return -ENOTDIR;
	for (int n = 0; n < N_COUNT; n++) {
		if (!nodes[n].name || nodes[n].parent != dn || n == N_ROOT ||
		    strcmp(nodes[n].name, name) != 0)
			continue;
		if (!node_exists(s, (enum node)n, 0))
			return -ENOENT;
		*out = mk(dir, name, (enum node)n, 0);
		return *out ? 0 : -ENOMEM;
	}
	long sub = dn == N_CPU ? numbered(name, "cpu") : dn == N_NODE ? numbered(name, "node") : -1;
	enum node kind = dn == N_CPU ? N_CPU_N : N_NODE_N;
	if (sub < 0 || !node_exists(s, kind, (unsigned)sub))
		return -ENOENT;
	*out = mk(dir, name, kind, (unsigned)sub);
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

/*
 * Reading the sandbox's cgroup. A v1 value is converted to what v2 shows for the same limit (the
 * kernel's own conversions: a huge number is v1's "no limit", v2's "max"). cg_number: a number
 * of the cgroup's file name ("9223372036854771712\n" for no limit); put_limit prints it as v2.
 */
static bool cg_number(int dir, const char *name, long long *v)
{
	char buf[64];
	if (read_at(dir, name, buf, sizeof(buf)) < 0)
		return false;
	char *end;
	errno = 0;
	*v = strtoll(buf, &end, 10);
	return errno == 0 && end != buf;
}

static void put_limit(FILE *f, long long v)
{
	if (v < 0 || v >= (1LL << 62))
		fputs("max\n", f);
	else
		fprintf(f, "%lld\n", v);
}

/* memory.max, memory.swap.max, cpu.max, cpu.weight in v2's form from v1's files. */
static void gen_v1(const struct cbox_sentry_cgroup *cg, enum node n, FILE *f)
{
	long long a, b;
	switch (n) {
	case N_MEM_MAX:
		put_limit(f, cg_number(cg->memory, "memory.limit_in_bytes", &a) ? a : -1);
		return;
	case N_MEM_SWAP_MAX:
		/* v1 limits memory plus swap; without swap accounting (no memsw file) swap is
		 * not limited at all */
		if (cg_number(cg->memory, "memory.limit_in_bytes", &a) && a < (1LL << 62) &&
		    cg_number(cg->memory, "memory.memsw.limit_in_bytes", &b) && b < (1LL << 62))
			put_limit(f, b > a ? b - a : 0);
		else
			put_limit(f, -1);
		return;
	case N_CPU_MAX:
		if (!cg_number(cg->cpu, "cpu.cfs_period_us", &b))
			b = 100000;
		if (cg_number(cg->cpu, "cpu.cfs_quota_us", &a) && a > 0)
			fprintf(f, "%lld %lld\n", a, b);
		else
			fprintf(f, "max %lld\n", b);
		return;
	case N_CPU_WEIGHT:
		/* runc's conversion of shares to a weight, as cbox writes them on v2: the default
		 * 1024 gives 39 there, but v2's default weight is 100, which is what a container
		 * without --cpu-shares shows */
		if (cg_number(cg->cpu, "cpu.shares", &a) && a > 0 && a != 1024) {
			fprintf(f, "%llu\n",
			        (unsigned long long)cbox_cgroup_shares_to_weight((uint64_t)a));
		} else {
			fputs("100\n", f);
		}
		return;
	case N_MEM_CURRENT:
		put_limit(f, cg_number(cg->memory, "memory.usage_in_bytes", &a) ? a : 0);
		return;
	case N_MEM_PEAK:
		put_limit(f, cg_number(cg->memory, "memory.max_usage_in_bytes", &a) ? a : 0);
		return;
	default: /* memory.high, memory.low, memory.min: v2's only */
		fputs(n == N_MEM_HIGH ? "max\n" : "0\n", f);
		return;
	}
}

static const char *const v2_names[N_COUNT] = {
    [N_MEM_MAX] = "memory.max",        [N_MEM_SWAP_MAX] = "memory.swap.max",
    [N_MEM_HIGH] = "memory.high",      [N_MEM_LOW] = "memory.low",
    [N_MEM_MIN] = "memory.min",        [N_MEM_CURRENT] = "memory.current",
    [N_MEM_PEAK] = "memory.peak",      [N_CPU_MAX] = "cpu.max",
    [N_CPU_WEIGHT] = "cpu.weight",     [N_PIDS_MAX] = "pids.max",
    [N_PIDS_CURRENT] = "pids.current",
};

/* With no cgroup (no limit asked for): nothing is limited. */
static const char *const unlimited[N_COUNT] = {
    [N_MEM_MAX] = "max\n",    [N_MEM_SWAP_MAX] = "max\n", [N_MEM_HIGH] = "max\n",
    [N_MEM_LOW] = "0\n",      [N_MEM_MIN] = "0\n",        [N_CPU_MAX] = "max 100000\n",
    [N_CPU_WEIGHT] = "100\n", [N_PIDS_MAX] = "max\n",
};

static int gen_limit(struct cbox_sentry *s, enum node n, FILE *f)
{
	const struct cbox_sentry_cgroup *cg = s->cfg->cgroup;
	if (!cg) {
		fputs(unlimited[n], f);
		return 0;
	}
	char buf[256];
	if (n == N_PIDS_MAX || n == N_PIDS_CURRENT || cg->v2) {
		int dir = n == N_PIDS_MAX || n == N_PIDS_CURRENT ? cg->pids
		          : n == N_CPU_MAX || n == N_CPU_WEIGHT  ? cg->cpu
		                                                 : cg->memory;
		int r = read_at(dir, v2_names[n], buf, sizeof(buf));
		if (r == -ENOENT && !live(n)) /* (a controller the host lacks, or an older file) */
			fputs(unlimited[n], f);
		else if (r < 0)
			return r;
		else
			fputs(buf, f);
		return 0;
	}
	gen_v1(cg, n, f);
	return 0;
}

/*
 * The statistics files, read live as the limits are. On v2 the cgroup's own files. On v1 each
 * in v2's form from what v1 keeps (the kernel counts the same things under other names):
 * - cpu.stat: usage_usec, user_usec and system_usec are the CPU time of the sandbox's tasks,
 *   from the sandbox's cgroup in the v2 hierarchy of a hybrid host (every v2 cgroup counts it,
 *   controller or not), else from cpuacct when it shares the cpu hierarchy; without either
 *   they are left out, not shown as 0 (the JVM then says it cannot tell, as it should). The
 *   throttling counts come from the cpu controller's own cpu.stat (times in ns there).
 * - memory.stat: the v2 keys v1 has, from its hierarchical totals (anon is v1's rss, file its
 *   cache, file_mapped its mapped_file...).
 * - memory.events: max is how often the limit was hit (memory.failcnt), oom and oom_kill the
 *   processes the limit's OOM killer killed (memory.oom_control); low and high are v2's only.
 */
/* The number after key in a cgroup's "key value" text (cbox_cgroup_read_key), into *v. */
static bool stat_key(const char *text, const char *key, uint64_t *v)
{
	return cbox_cgroup_read_key(text, key, v) == 0;
}

static void gen_cpu_stat_v1(const struct cbox_sentry_cgroup *cg, FILE *f)
{
	char text[4096];
	uint64_t v, user, sys;
	static const char *const usage[] = {"usage_usec", "user_usec", "system_usec"};
	if (read_at(cg->unified, "cpu.stat", text, sizeof(text)) == 0 &&
	    stat_key(text, "usage_usec", &v)) {
		for (size_t i = 0; i < CBOX_ARRAY_SIZE(usage); i++)
			if (stat_key(text, usage[i], &v))
				fprintf(f, "%s %" PRIu64 "\n", usage[i], v);
	} else if (read_at(cg->cpu, "cpuacct.usage", text, sizeof(text)) == 0) {
		fprintf(f, "usage_usec %llu\n", strtoull(text, NULL, 10) / 1000);
		long hz = sysconf(_SC_CLK_TCK);
		if (hz > 0 && read_at(cg->cpu, "cpuacct.stat", text, sizeof(text)) == 0 &&
		    stat_key(text, "user", &user) && stat_key(text, "system", &sys))
			fprintf(f, "user_usec %" PRIu64 "\nsystem_usec %" PRIu64 "\n",
			        user * (1000000 / (uint64_t)hz), sys * (1000000 / (uint64_t)hz));
	}
	if (read_at(cg->cpu, "cpu.stat", text, sizeof(text)) < 0)
		return;
	/* v1's name, v2's, and the divisor from v1's unit (ns for the times) to v2's (us) */
	static const struct {
		const char *v1, *v2;
		uint64_t div;
	} counts[] = {{"nr_periods", "nr_periods", 1},
	              {"nr_throttled", "nr_throttled", 1},
	              {"throttled_time", "throttled_usec", 1000},
	              {"nr_bursts", "nr_bursts", 1},
	              {"burst_time", "burst_usec", 1000}};
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(counts); i++)
		if (stat_key(text, counts[i].v1, &v))
			fprintf(f, "%s %" PRIu64 "\n", counts[i].v2, v / counts[i].div);
}

static void gen_memory_stat_v1(const struct cbox_sentry_cgroup *cg, FILE *f)
{
	char text[8192];
	if (read_at(cg->memory, "memory.stat", text, sizeof(text)) < 0)
		return;
	/* v2's key, v1's (with "total_", the cgroup and its descendants, as v2 counts) */
	static const char *const keys[][2] = {
	    {"anon", "rss"},
	    {"file", "cache"},
	    {"shmem", "shmem"},
	    {"file_mapped", "mapped_file"},
	    {"file_dirty", "dirty"},
	    {"file_writeback", "writeback"},
	    {"anon_thp", "rss_huge"},
	    {"inactive_anon", "inactive_anon"},
	    {"active_anon", "active_anon"},
	    {"inactive_file", "inactive_file"},
	    {"active_file", "active_file"},
	    {"unevictable", "unevictable"},
	    {"pgfault", "pgfault"},
	    {"pgmajfault", "pgmajfault"},
	};
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(keys); i++) {
		char total[64];
		uint64_t v;
		snprintf(total, sizeof(total), "total_%s", keys[i][1]);
		if (stat_key(text, total, &v) || stat_key(text, keys[i][1], &v))
			fprintf(f, "%s %" PRIu64 "\n", keys[i][0], v);
	}
}

static void gen_memory_events_v1(const struct cbox_sentry_cgroup *cg, FILE *f)
{
	char text[512];
	long long fail = 0;
	uint64_t kills = 0;
	cg_number(cg->memory, "memory.failcnt", &fail);
	if (read_at(cg->memory, "memory.oom_control", text, sizeof(text)) == 0)
		stat_key(text, "oom_kill", &kills);
	fprintf(f, "low 0\nhigh 0\nmax %lld\noom %" PRIu64 "\noom_kill %" PRIu64 "\n", fail, kills,
	        kills);
}

static int gen_stats(struct cbox_sentry *s, enum node n, FILE *f)
{
	const struct cbox_sentry_cgroup *cg = s->cfg->cgroup;
	if (!cg)
		return -ENOENT; /* (the node does not exist without one) */
	if (cg->v2) {
		char buf[8192];
		int r = read_at(n == N_CPU_STAT ? cg->cpu : cg->memory, nodes[n].name, buf,
		                sizeof(buf));
		if (r == 0)
			fputs(buf, f);
		return r;
	}
	if (n == N_CPU_STAT)
		gen_cpu_stat_v1(cg, f);
	else if (n == N_MEM_STAT)
		gen_memory_stat_v1(cg, f);
	else
		gen_memory_events_v1(cg, f);
	return 0;
}

/* The CPUs the sandbox's tasks may run on, as a list ("0-1"). */
static void gen_affinity(FILE *f)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) < 0) {
		fputc('\n', f);
		return;
	}
	const char *sep = "";
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &set))
			continue;
		int e = c;
		while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &set))
			e++;
		fprintf(f, e > c ? "%s%d-%d" : "%s%d", sep, c, e);
		sep = ",";
		c = e;
	}
	fputc('\n', f);
}

/* cgroup.procs (thread groups) or cgroup.threads: the guest's tasks, as its pid namespace names
 * them (the sentry and the gofer are in the host's cgroup too, but outside that namespace: Linux
 * leaves out what a reader's namespace cannot name). */
static void gen_members(struct cbox_sentry *s, bool threads, FILE *f)
{
	if (s->tiny_init.tid > 0 && !s->tiny_init_exited)
		fputs("1\n", f); /* (--init's, in no task table: fs_proc.c shows it too) */
	for (size_t h = 0; h < CBOX_TASK_HASH; h++)
		for (struct cbox_task *x = s->tasks[h]; x; x = x->next_in_hash) {
			if (!x->tg || (!threads && x->tg->host_tgid != x->tid))
				continue;
			pid_t id = threads ? x->vtid : cbox_task_vpid(s, x);
			if (id > 0)
				fprintf(f, "%d\n", (int)id);
		}
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
	/* (cpuset.cpus empty: not restricted by the cgroup itself) */
	static const char *const fixed[N_COUNT] = {
	    [N_CG_CONTROLLERS] = "cpuset cpu memory pids\n",
	    [N_CG_EVENTS] = "populated 1\nfrozen 0\n",
	    [N_CG_SUBTREE] = "\n",
	    [N_CPUSET_CPUS] = "\n",
	    [N_CG_TYPE] = "domain\n",
	};
	if (fixed[n])
		fputs(fixed[n], f);
	else if (n == N_CG_PROCS || n == N_CG_THREADS)
		gen_members(s, n == N_CG_THREADS, f);
	else if (n == N_CPUSET_CPUS_EFF)
		gen_affinity(f);
	else if (n == N_CPU_STAT || n == N_MEM_STAT || n == N_MEM_EVENTS)
		return gen_stats(s, n, f);
	else
		return v2_names[n] ? gen_limit(s, n, f) : -EISDIR;
	return 0;
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
	if (NODE(d->priv) == N_TOPO_FILE || NODE(d->priv) == N_NODE_FILE) {
		char path[128], buf[4096];
		unsigned arg = NARG(d->priv);
		if (NODE(d->priv) == N_TOPO_FILE)
			sub_path(path, sizeof(path), false, SUB_NUM(arg), topo_names[SUB_IDX(arg)]);
		else
			sub_path(path, sizeof(path), true, SUB_NUM(arg), node_names[SUB_IDX(arg)]);
		r = read_at(s->sys_fd, path, buf, sizeof(buf));
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
	unsigned num = NARG(d->priv);
	if (r == 0 && dn == N_CPU_N && sub_has(s, false, num, NULL))
		r = emit(ctx, "topology", ino_of(PRIV_OF(N_CPU_TOPO, num)), DT_DIR);
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

const struct cbox_fs_ops cbox_fs_sys = {
    .name = "sysfs",
    .lookup = y_lookup,
    .stat = y_stat,
    .open = y_open,
    .readdir = y_readdir,
    .magic = cbox_fs_sys_magic,
};
