/* Unit tests of the ns tier's reading of the host's cgroup hierarchies (ns_cgroup_parse,
 * tiers/ns/ns_cgroupfs.c): hosts of every kind, with and without a cgroup namespace of the
 * container's own, and lines that are not what they should be. */
#include <criterion/criterion.h>
#include <string.h>

#include "internal.h"

/* ns_cgroupfs.c mounts through this (ns_mount.c); the parser under test does not call it. */
int ns_do_mount(const char *src, int target, const char *type, unsigned long flags,
                const char *data)
{
	(void)src, (void)target, (void)type, (void)flags, (void)data;
	return -1;
}

static struct ns_cg_hier h[16];

static const struct ns_cg_hier *find(size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(h[i].name, name))
			return &h[i];
	return NULL;
}

/* A CentOS 7 style v1 host, the runtime in the user's session cgroups: no cgroup namespace. */
static const char v1_mountinfo[] =
    "18 62 0:17 / /sys rw,nosuid shared:6 - sysfs sysfs rw\n"
    "24 18 0:21 / /sys/fs/cgroup ro,nosuid shared:7 - tmpfs tmpfs ro,mode=755\n"
    "25 24 0:22 / /sys/fs/cgroup/systemd rw shared:8 - cgroup cgroup "
    "rw,xattr,release_agent=/usr/lib/systemd/systemd-cgroups-agent,name=systemd\n"
    "28 24 0:25 / /sys/fs/cgroup/cpu,cpuacct rw shared:10 - cgroup cgroup rw,cpu,cpuacct\n"
    "29 24 0:26 / /sys/fs/cgroup/memory rw shared:11 - cgroup cgroup rw,memory\n"
    "31 24 0:28 / /sys/fs/cgroup/cpuset rw shared:13 - cgroup cgroup rw,cpuset,clone_children\n";
static const char v1_self[] = "10:cpuset:/\n"
                              "8:memory:/cbox/box1\n"
                              "4:cpu,cpuacct:/cbox/box1\n"
                              "1:name=systemd:/user.slice/user-1000.slice/session-1.scope\n";

Test(ns_cgroupfs, v1_without_a_cgroup_namespace_binds_the_own_cgroups)
{
	size_t n = ns_cgroup_parse(v1_mountinfo, v1_self, h, 16);
	cr_assert_eq(n, 4);
	const struct ns_cg_hier *m = find(n, "memory"), *c = find(n, "cpu,cpuacct");
	const struct ns_cg_hier *s = find(n, "systemd"), *cs = find(n, "cpuset");
	cr_assert(m && c && s && cs);
	cr_assert(!m->fresh && !m->v2);
	cr_assert_str_eq(m->data, "memory");
	cr_assert_str_eq(m->src, "/sys/fs/cgroup/memory/cbox/box1");
	cr_assert_str_eq(c->data, "cpu,cpuacct");
	cr_assert_str_eq(c->src, "/sys/fs/cgroup/cpu,cpuacct/cbox/box1");
	/* the named hierarchy's data is its name: not xattr, not the release agent */
	cr_assert_str_eq(s->data, "name=systemd");
	cr_assert_str_eq(s->src,
	                 "/sys/fs/cgroup/systemd/user.slice/user-1000.slice/session-1.scope");
	/* at the root of a hierarchy: a fresh mount shows the same */
	cr_assert(cs->fresh);
	cr_assert_str_eq(cs->data, "cpuset");
}

/* This development machine, in the container's own cgroup namespace: every cgroup is "/". */
static const char hybrid_mountinfo[] =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n";
static const char hybrid_self[] = "9:name=systemd:/\n"
                                  "8:pids:/\n"
                                  "4:memory:/\n"
                                  "1:cpu:/\n"
                                  "0::/\n";

Test(ns_cgroupfs, hybrid_in_a_cgroup_namespace_mounts_each_afresh)
{
	size_t n = ns_cgroup_parse(hybrid_mountinfo, hybrid_self, h, 16);
	cr_assert_eq(n, 5);
	for (size_t i = 0; i < n; i++) {
		cr_assert(h[i].fresh, "%s", h[i].name);
		cr_assert(!h[i].at_top, "%s", h[i].name);
	}
	const struct ns_cg_hier *u = find(n, "unified");
	cr_assert(u && u->v2);
	cr_assert_str_eq(u->data, "");
	cr_assert_str_eq(find(n, "pids")->data, "pids");
}

Test(ns_cgroupfs, v2_only_host_is_one_hierarchy_at_the_top)
{
	static const char mi[] = "25 19 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime "
	                         "shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n";
	size_t n = ns_cgroup_parse(mi, "0::/system.slice/docker-abc.scope\n", h, 16);
	cr_assert_eq(n, 1);
	cr_assert(h[0].v2 && h[0].at_top && !h[0].fresh);
	cr_assert_str_eq(h[0].src, "/sys/fs/cgroup/system.slice/docker-abc.scope");
	n = ns_cgroup_parse(mi, "0::/\n", h, 16);
	cr_assert(n == 1 && h[0].fresh);
}

Test(ns_cgroupfs, a_second_mount_of_a_hierarchy_and_other_lines_are_left_out)
{
	static const char mi[] =
	    "29 24 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
	    "90 60 0:26 /x /srv/memory rw - cgroup cgroup rw,memory\n" /* the same name */
	    "91 60 0:40 / /srv/empty rw - cgroup cgroup rw,xattr\n"    /* no controller */
	    "92 60 0:41 / /proc rw - proc proc rw\n"
	    "not a mountinfo line\n"
	    "93 60 0:42 / /sys/fs/cgroup/pids rw no-dash cgroup rw,pids\n"
	    "\n"
	    "94 60 0:43 /\n";
	size_t n = ns_cgroup_parse(mi, "", h, 16);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(h[0].name, "memory");
	/* no /proc/self/cgroup line for it: taken as its root */
	cr_assert(h[0].fresh);
}

/* Docker's v1 container without a cgroup namespace (a runtime run inside it): each hierarchy is
 * mounted showing the container's own cgroup, /docker/ID, which /proc/self/cgroup still names
 * in full. The bind is of the directory below the mount, not of mount + full path (which does not
 * exist). */
Test(ns_cgroupfs, a_mount_of_a_subtree_has_its_root_taken_off)
{
	static const char mi[] =
	    "700 690 0:29 /docker/abc /sys/fs/cgroup/memory ro,nosuid master:11 - cgroup cgroup "
	    "rw,memory\n"
	    "701 690 0:30 /docker/abc /sys/fs/cgroup/pids ro,nosuid master:12 - cgroup cgroup "
	    "rw,pids\n";
	static const char self[] = "8:memory:/docker/abc/cbox/box1\n"
	                           "5:pids:/docker/abc\n";
	size_t n = ns_cgroup_parse(mi, self, h, 16);
	cr_assert_eq(n, 2);
	const struct ns_cg_hier *m = find(n, "memory"), *p = find(n, "pids");
	cr_assert(m && p && !m->fresh && !p->fresh);
	cr_assert_str_eq(m->src, "/sys/fs/cgroup/memory/cbox/box1");
	cr_assert_str_eq(p->src, "/sys/fs/cgroup/pids");
}

/* mountinfo writes a space, a tab, a newline and a backslash of a path as \ooo. */
Test(ns_cgroupfs, escaped_mount_points_are_read_back)
{
	static const char mi[] = "29 24 0:26 / /srv/my\\040cg/memory rw - cgroup cgroup rw,memory\n"
	                         "30 24 0:27 /a\\134b /srv/pids rw - cgroup cgroup rw,pids\n";
	size_t n = ns_cgroup_parse(mi, "8:memory:/box\n5:pids:/a\\b/c\n", h, 16);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(h[0].src, "/srv/my cg/memory/box");
	cr_assert_str_eq(h[1].src, "/srv/pids/c");
}

Test(ns_cgroupfs, at_most_max_hierarchies)
{
	size_t n = ns_cgroup_parse(hybrid_mountinfo, hybrid_self, h, 2);
	cr_assert_eq(n, 2);
	cr_assert_eq(ns_cgroup_parse("", "", h, 16), 0);
}
