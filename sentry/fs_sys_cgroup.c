/*
 * /sys/fs/cgroup for the guest: the sandbox's own cgroup, as cgroup v2 shows a container's with a
 * cgroup namespace (fs_sys.c is the tree). The files are read from the host's cgroup of the
 * sandbox when the guest opens them (cbox_sentry_config.cgroup: directory fds the sentry holds),
 * in v2's names and formats whatever the host runs (this host mounts v1 controllers); without a
 * cgroup (no limit asked for) every limit reads "max" and the usage files are absent.
 *
 * Security: the guest learns its own limits, which it would meet anyway, and nothing of the
 * host's cgroup tree: /proc/self/cgroup says "0::/", the files name no path, and the directory
 * fds never leave the sentry (an open gives the guest a sealed memfd of the text).
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cbox/cgroup.h"
#include "fs_sys_internal.h"

/*
 * Reading the sandbox's cgroup. A v1 value is converted to what v2 shows for the same limit (the
 * kernel's own conversions: a huge number is v1's "no limit", v2's "max"). cg_number: a number
 * of the cgroup's file name ("9223372036854771712\n" for no limit); put_limit prints it as v2.
 */
static bool cg_number(int dir, const char *name, long long *v)
{
	char buf[64];
	if (cbox_sys_read_at(dir, name, buf, sizeof(buf)) < 0)
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
    [N_PIDS_CURRENT] = "pids.current", [N_CPU_STAT] = "cpu.stat",
    [N_MEM_STAT] = "memory.stat",      [N_MEM_EVENTS] = "memory.events",
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
		int r = cbox_sys_read_at(dir, v2_names[n], buf, sizeof(buf));
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
	if (cbox_sys_read_at(cg->unified, "cpu.stat", text, sizeof(text)) == 0 &&
	    stat_key(text, "usage_usec", &v)) {
		for (size_t i = 0; i < CBOX_ARRAY_SIZE(usage); i++)
			if (stat_key(text, usage[i], &v))
				fprintf(f, "%s %" PRIu64 "\n", usage[i], v);
	} else if (cbox_sys_read_at(cg->cpu, "cpuacct.usage", text, sizeof(text)) == 0) {
		fprintf(f, "usage_usec %llu\n", strtoull(text, NULL, 10) / 1000);
		long hz = sysconf(_SC_CLK_TCK);
		if (hz > 0 && cbox_sys_read_at(cg->cpu, "cpuacct.stat", text, sizeof(text)) == 0 &&
		    stat_key(text, "user", &user) && stat_key(text, "system", &sys))
			fprintf(f, "user_usec %" PRIu64 "\nsystem_usec %" PRIu64 "\n",
			        user * (1000000 / (uint64_t)hz), sys * (1000000 / (uint64_t)hz));
	}
	if (cbox_sys_read_at(cg->cpu, "cpu.stat", text, sizeof(text)) < 0)
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
	if (cbox_sys_read_at(cg->memory, "memory.stat", text, sizeof(text)) < 0)
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
	if (cbox_sys_read_at(cg->memory, "memory.oom_control", text, sizeof(text)) == 0)
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
		int r = cbox_sys_read_at(n == N_CPU_STAT ? cg->cpu : cg->memory, v2_names[n], buf,
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

/* The text of fs/cgroup's file n (N_CGROUP < n <= N_PIDS_MAX); -errno. */
int cbox_sys_cgroup_gen(struct cbox_sentry *s, enum node n, FILE *f)
{
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
