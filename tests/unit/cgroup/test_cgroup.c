/* Unit tests of tiers/cgroup/: layouts of v1, hybrid and v2 hosts from fixture strings, the
 * conversions and formats, and the limit files written into a fake v2 tree. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/cgroup.h"

/* A CentOS 7 style v1 host: cpu and cpuacct mounted together, systemd's named hierarchy. */
static const char v1_mountinfo[] =
    "18 62 0:17 / /sys rw,nosuid shared:6 - sysfs sysfs rw\n"
    "24 18 0:21 / /sys/fs/cgroup ro,nosuid shared:7 - tmpfs tmpfs ro,mode=755\n"
    "25 24 0:22 / /sys/fs/cgroup/systemd rw shared:8 - cgroup cgroup rw,xattr,name=systemd\n"
    "28 24 0:25 / /sys/fs/cgroup/cpu,cpuacct rw shared:10 - cgroup cgroup rw,cpu,cpuacct\n"
    "29 24 0:26 / /sys/fs/cgroup/memory rw shared:11 - cgroup cgroup rw,memory\n"
    "30 24 0:27 / /sys/fs/cgroup/pids rw shared:12 - cgroup cgroup rw,pids\n"
    "31 24 0:28 / /sys/fs/cgroup/cpuset rw shared:13 - cgroup cgroup rw,cpuset\n"
    "32 24 0:29 / /sys/fs/cgroup/freezer rw shared:14 - cgroup cgroup rw,freezer\n";
static const char v1_self[] = "11:freezer:/\n"
                              "10:cpuset:/\n"
                              "9:pids:/user.slice/user-1000.slice\n"
                              "8:memory:/user.slice\n"
                              "4:cpu,cpuacct:/user.slice\n"
                              "1:name=systemd:/user.slice/user-1000.slice/session-1.scope\n";

/* This development machine: v1 controllers, cgroup2 at /sys/fs/cgroup/unified. */
static const char hybrid_mountinfo[] =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
static const char hybrid_self[] = "9:name=systemd:/\n"
                                  "8:pids:/\n"
                                  "6:freezer:/\n"
                                  "4:memory:/process_api/a76013a027c3\n"
                                  "3:cpuset:/\n"
                                  "2:cpuacct:/\n"
                                  "1:cpu:/\n"
                                  "0::/\n";

/* A v2 host (Debian 12, Fedora): one cgroup2 mount. */
static const char v2_mountinfo[] =
    "22 28 0:21 / /proc rw,nosuid - proc proc rw\n"
    "26 23 0:24 / /sys/fs/cgroup rw,nosuid,nodev shared:4 - cgroup2 cgroup2 "
    "rw,nsdelegate,memory_recursiveprot\n";
static const char v2_self[] = "0::/user.slice/user-1000.slice/session-2.scope\n";

static struct cbox_cgroup_layout *parse_ok(const char *mi, const char *self)
{
	struct cbox_cgroup_layout *l = NULL;
	struct cbox_err *err = NULL;
	int r = cbox_cgroup_layout_parse(mi, self, &l, &err);
	cr_assert_eq(r, 0, "parse: %s", err ? err->msg : "?");
	return l;
}

Test(cgroup_layout, v1)
{
	struct cbox_cgroup_layout *l = parse_ok(v1_mountinfo, v1_self);
	cr_expect_eq(l->mode, CBOX_CGROUP_V1);
	cr_expect_str_eq(cbox_cgroup_mode_name(l->mode), "v1");
	cr_expect_str_eq(l->mount[CBOX_CGROUP_CPU], "/sys/fs/cgroup/cpu,cpuacct");
	cr_expect_str_eq(l->own[CBOX_CGROUP_CPU], "/user.slice");
	cr_expect_str_eq(l->mount[CBOX_CGROUP_MEMORY], "/sys/fs/cgroup/memory");
	cr_expect_str_eq(l->own[CBOX_CGROUP_PIDS], "/user.slice/user-1000.slice");
	cr_expect_str_eq(l->own[CBOX_CGROUP_FREEZER], "/");
	cr_expect_null(l->mount[CBOX_CGROUP_UNIFIED]);
	cbox_cgroup_layout_free(l);
}

Test(cgroup_layout, hybrid)
{
	struct cbox_cgroup_layout *l = parse_ok(hybrid_mountinfo, hybrid_self);
	cr_expect_eq(l->mode, CBOX_CGROUP_HYBRID);
	/* "cpu" is not "cpuacct" nor "cpuset". */
	cr_expect_str_eq(l->mount[CBOX_CGROUP_CPU], "/sys/fs/cgroup/cpu");
	cr_expect_str_eq(l->own[CBOX_CGROUP_MEMORY], "/process_api/a76013a027c3");
	cr_expect_str_eq(l->mount[CBOX_CGROUP_UNIFIED], "/sys/fs/cgroup/unified");
	cr_expect_str_eq(l->own[CBOX_CGROUP_UNIFIED], "/");
	cbox_cgroup_layout_free(l);
}

Test(cgroup_layout, v2)
{
	struct cbox_cgroup_layout *l = parse_ok(v2_mountinfo, v2_self);
	cr_expect_eq(l->mode, CBOX_CGROUP_V2);
	cr_expect_str_eq(l->mount[CBOX_CGROUP_UNIFIED], "/sys/fs/cgroup");
	cr_expect_str_eq(l->own[CBOX_CGROUP_UNIFIED],
	                 "/user.slice/user-1000.slice/session-2.scope");
	for (int c = 0; c < CBOX_CGROUP_UNIFIED; c++)
		cr_expect_null(l->mount[c]);
	cbox_cgroup_layout_free(l);
}

/* Inside a container: the hierarchy is bound from a sub-cgroup, and its path has spaces. */
Test(cgroup_layout, v2_bound_root_and_escapes)
{
	const char *mi = "30 25 0:26 /docker/abc /sys/fs/my\\040cgroup ro - cgroup2 cgroup rw\n";
	struct cbox_cgroup_layout *l = parse_ok(mi, "0::/docker/abc/sub\n");
	cr_expect_str_eq(l->mount[CBOX_CGROUP_UNIFIED], "/sys/fs/my cgroup");
	cr_expect_str_eq(l->own[CBOX_CGROUP_UNIFIED], "/sub");
	cbox_cgroup_layout_free(l);
	l = parse_ok(mi, "0::/docker/abc\n");
	cr_expect_str_eq(l->own[CBOX_CGROUP_UNIFIED], "/");
	cbox_cgroup_layout_free(l);
}

Test(cgroup_layout, none_and_malformed)
{
	struct cbox_cgroup_layout *l = parse_ok("22 28 0:21 / /proc rw - proc proc rw\n", "");
	cr_expect_eq(l->mode, CBOX_CGROUP_NONE);
	cbox_cgroup_layout_free(l);
	struct cbox_err *err = NULL;
	cr_expect_lt(cbox_cgroup_layout_parse("1 2 3\n", "", &l, &err), 0);
	cr_expect(strstr(err->msg, "mountinfo line 1") != NULL, "%s", err->msg);
	cbox_err_free(&err);
	cr_expect_lt(cbox_cgroup_layout_parse(v2_mountinfo, "0:/x\n", &l, &err), 0);
	cr_expect(strstr(err->msg, "/proc/self/cgroup line 1") != NULL, "%s", err->msg);
	cbox_err_free(&err);
}

Test(cgroup_convert, shares_to_weight)
{
	cr_expect_eq(cbox_cgroup_shares_to_weight(0), 0);
	cr_expect_eq(cbox_cgroup_shares_to_weight(2), 1);
	cr_expect_eq(cbox_cgroup_shares_to_weight(1024), 39); /* runc's value for the default */
	cr_expect_eq(cbox_cgroup_shares_to_weight(262144), 10000);
	cr_expect_eq(cbox_cgroup_shares_to_weight(1), 1);
	cr_expect_eq(cbox_cgroup_shares_to_weight(1000000), 10000);
}

Test(cgroup_convert, cpus_to_quota)
{
	int64_t q = 0;
	cr_expect_eq(cbox_cgroup_cpus_to_quota(0.5, 100000, &q), 0);
	cr_expect_eq(q, 50000);
	cr_expect_eq(cbox_cgroup_cpus_to_quota(1.5, 0, &q), 0);
	cr_expect_eq(q, 150000);
	cr_expect_lt(cbox_cgroup_cpus_to_quota(0, 100000, &q), 0);
	cr_expect_lt(cbox_cgroup_cpus_to_quota(-1, 100000, &q), 0);
	cr_expect_lt(cbox_cgroup_cpus_to_quota(0.001, 100000, &q), 0);
	cr_expect_lt(cbox_cgroup_cpus_to_quota(1.0 / 0.0, 100000, &q), 0);
}

Test(cgroup_convert, parse_size)
{
	int64_t b = 0;
	cr_expect_eq(cbox_cgroup_parse_size("64m", &b), 0);
	cr_expect_eq(b, 64 << 20);
	cr_expect_eq(cbox_cgroup_parse_size("64MiB", &b), 0);
	cr_expect_eq(b, 64 << 20);
	cr_expect_eq(cbox_cgroup_parse_size("64mb", &b), 0);
	cr_expect_eq(b, 64 << 20);
	cr_expect_eq(cbox_cgroup_parse_size("1.5G", &b), 0);
	cr_expect_eq(b, 3LL << 29);
	cr_expect_eq(cbox_cgroup_parse_size("512k", &b), 0);
	cr_expect_eq(b, 512 << 10);
	cr_expect_eq(cbox_cgroup_parse_size("4096", &b), 0);
	cr_expect_eq(b, 4096);
	cr_expect_eq(cbox_cgroup_parse_size("100b", &b), 0);
	cr_expect_eq(b, 100);
	const char *bad[] = {"",    "m",    "-1m",  "0",    "1.m",
	                     "64x", "64mm", " 64m", "0x10", "99999999p"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_lt(cbox_cgroup_parse_size(bad[i], &b), 0, "'%s' accepted", bad[i]);
}

Test(cgroup_convert, format_size)
{
	char buf[64];
	cbox_cgroup_format_size(256LL << 20, buf, sizeof(buf));
	cr_expect_str_eq(buf, "256 MiB");
	cbox_cgroup_format_size(3LL << 29, buf, sizeof(buf));
	cr_expect_str_eq(buf, "1.5 GiB");
	cbox_cgroup_format_size(100, buf, sizeof(buf));
	cr_expect_str_eq(buf, "100 bytes");
	cbox_cgroup_format_size(1536, buf, sizeof(buf));
	cr_expect_str_eq(buf, "1.5 KiB");
	cbox_cgroup_format_size(-1, buf, sizeof(buf));
	cr_expect_str_eq(buf, "unlimited");
}

Test(cgroup_convert, read_key)
{
	uint64_t v = 0;
	const char *v1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n";
	cr_expect_eq(cbox_cgroup_read_key(v1, "oom_kill", &v), 0);
	cr_expect_eq(v, 3);
	cr_expect_eq(cbox_cgroup_read_key(v1, "under_oom", &v), 0);
	cr_expect_eq(v, 0);
	const char *v2 = "low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 0";
	cr_expect_eq(cbox_cgroup_read_key(v2, "oom_kill", &v), 0);
	cr_expect_eq(v, 1);
	cr_expect_lt(cbox_cgroup_read_key(v2, "oom_kil", &v), 0);
	cr_expect_lt(cbox_cgroup_read_key("oom_kill x\n", "oom_kill", &v), 0);
}

static void resolve_expect(const char *in, const char *id, const char *want)
{
	char out[256];
	struct cbox_err *err = NULL;
	int r = cbox_cgroup_resolve_path(in, id, out, sizeof(out), &err);
	cr_assert_eq(r, 0, "%s: %s", in ? in : "(null)", err ? err->msg : "?");
	cr_expect_str_eq(out, want);
}

Test(cgroup_convert, resolve_path)
{
	resolve_expect(NULL, "c1", "cbox/c1");
	resolve_expect("", "c1", "cbox/c1");
	resolve_expect("/docker/abc", "c1", "/docker/abc");
	resolve_expect("//docker//abc/", "c1", "/docker/abc");
	resolve_expect("k8s/pod1/c", "c1", "k8s/pod1/c");
	resolve_expect("system.slice:docker:abc", "c1", "/system.slice/docker-abc.scope");
	resolve_expect(":cri:abc", "c1", "/system.slice/cri-abc.scope");
	const char *bad[] = {"/a/../../etc", "..", "a/./b", "/", "a:b", "a:b:"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char out[256];
		struct cbox_err *err = NULL;
		cr_expect_lt(cbox_cgroup_resolve_path(bad[i], "c1", out, sizeof(out), &err), 0,
		             "'%s' accepted as %s", bad[i], out);
		cbox_err_free(&err);
	}
}

static void touch(const char *dir, const char *name, const char *text)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	cr_assert_not_null(f, "%s", p);
	fputs(text, f);
	fclose(f);
}

static void expect_file_n(const char *dir, const char *name, const char *want, size_t len)
{
	char p[512], buf[256] = "";
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "r");
	cr_assert_not_null(f, "%s", p);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	if (len)
		buf[len] = '\0';
	cr_expect_str_eq(buf, want, "%s", name);
}

static void expect_file(const char *dir, const char *name, const char *want)
{
	expect_file_n(dir, name, want, 0);
}

/* The v2 files, in a fake tree (a tmpdir standing for the cgroup2 mount). */
Test(cgroup_files, v2_limits_in_a_fake_tree)
{
	char root[] = "/tmp/cbox-cgtest.XXXXXX", leaf[600], mid[600];
	cr_assert_not_null(mkdtemp(root));
	snprintf(mid, sizeof(mid), "%s/cbox", root);
	snprintf(leaf, sizeof(leaf), "%s/cbox/t1", root);
	cr_assert_eq(mkdir(mid, 0755), 0);
	cr_assert_eq(mkdir(leaf, 0755), 0);
	const char *dirs[] = {root, mid};
	for (int i = 0; i < 2; i++) {
		touch(dirs[i], "cgroup.controllers", "cpuset cpu io memory pids");
		touch(dirs[i], "cgroup.subtree_control", "");
	}
	const char *files[] = {"memory.max", "memory.swap.max", "pids.max",    "cpu.max",
	                       "cpu.weight", "memory.events",   "cgroup.procs"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		touch(leaf, files[i], "");
	touch(leaf, "memory.events", "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n");
	struct cbox_cgroup_layout l = {.mode = CBOX_CGROUP_V2};
	l.mount[CBOX_CGROUP_UNIFIED] = root;
	l.own[CBOX_CGROUP_UNIFIED] = "/";
	struct cbox_cgroup *cg = NULL;
	struct cbox_err *err = NULL;
	cr_assert_eq(cbox_cgroup_create(&l, NULL, "t1", &cg, &err), 0, "%s", err ? err->msg : "");
	cr_expect_str_eq(cbox_cgroup_dir(cg, CBOX_CGROUP_UNIFIED), leaf);
	cr_expect_null(cbox_cgroup_dir(cg, CBOX_CGROUP_MEMORY));
	/* The controllers were enabled in the ancestors: +memory, +pids, +cpu written in turn
	 * (a plain file keeps the bytes of the last write over the earlier ones). */
	expect_file_n(root, "cgroup.subtree_control", "+cpu", 4);
	expect_file_n(mid, "cgroup.subtree_control", "+cpusry", 0);
	struct cbox_cgroup_limits lim = {.memory = 64 << 20,
	                                 .memory_swap = 96 << 20,
	                                 .cpu_quota = 50000,
	                                 .cpu_shares = 1024,
	                                 .pids = 16};
	cr_assert_eq(cbox_cgroup_apply(cg, &lim, &err), 0, "%s", err ? err->msg : "");
	expect_file(leaf, "memory.max", "67108864");
	expect_file(leaf, "memory.swap.max", "33554432");
	expect_file(leaf, "pids.max", "16");
	expect_file(leaf, "cpu.max", "50000 100000");
	expect_file(leaf, "cpu.weight", "39");
	uint64_t kills = 0;
	cr_expect_eq(cbox_cgroup_oom_kills(cg, &kills, &err), 0);
	cr_expect_eq(kills, 1);
	/* Bad limits are refused before any file is written. */
	struct cbox_cgroup_limits bad = {.memory_swap = 1 << 20};
	cr_expect_lt(cbox_cgroup_apply(cg, &bad, &err), 0);
	cr_expect(strstr(err->msg, "needs a memory limit") != NULL, "%s", err->msg);
	cbox_err_free(&err);
	/* A record naming a directory off cgroupfs is refused: delete must not rmdir it. */
	char rec[700];
	snprintf(rec, sizeof(rec), "%s/cgroup.rec", root);
	cr_expect_eq(cbox_cgroup_save(cg, rec, &err), 0);
	struct cbox_cgroup *loaded = NULL;
	cr_expect_lt(cbox_cgroup_load(rec, &loaded, &err), 0);
	cr_expect(strstr(err->msg, "is not a cgroup directory") != NULL, "%s", err->msg);
	cbox_err_free(&err);
	cbox_cgroup_free(cg);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	cr_expect_eq(system(cmd), 0);
}

/* A v1 cgroup refuses a memory+swap limit below the memory limit: caught before writing. */
Test(cgroup_files, swap_below_memory)
{
	struct cbox_cgroup_layout l = {.mode = CBOX_CGROUP_NONE};
	struct cbox_cgroup *cg = NULL;
	struct cbox_err *err = NULL;
	cr_expect_lt(cbox_cgroup_create(&l, NULL, "x", &cg, &err), 0);
	cr_expect(strstr(err->msg, "no cgroup file system") != NULL, "%s", err->msg);
	cbox_err_free(&err);
}
