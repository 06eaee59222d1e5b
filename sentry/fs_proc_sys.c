/*
 * System-wide files of /proc: the machine's own where they describe the hardware and the kernel
 * the sandbox runs on (meminfo, cpuinfo, stat, loadavg, version), the sandbox's where the guest
 * has its own (hostname, boot_id, the mount table), and fixed values where the host's would leak
 * something the guest has no business knowing (the kernel command line).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>

#include "fs_proc_internal.h"

/* A random (version 4) UUID, as /proc/sys/kernel/random/uuid gives. */
static int make_uuid(char out[37])
{
	unsigned char r[16];
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -EIO;
	r[6] = (r[6] & 0x0f) | 0x40;
	r[8] = (r[8] & 0x3f) | 0x80;
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
	         r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12],
	         r[13], r[14], r[15]);
	return 0;
}

/* Fixed for the sandbox's life: the sentry is one process per sandbox. */
static int boot_id(char out[37])
{
	static char id[37];
	if (!id[0] && make_uuid(id) < 0)
		return -EIO;
	memcpy(out, id, sizeof(id));
	return 0;
}

static const char *fs_name(uint64_t magic)
{
	switch (magic) {
	case 0xEF53:
		return "ext4";
	case 0x01021994:
		return "tmpfs";
	case 0x794c7630:
		return "overlay";
	case 0x58465342:
		return "xfs";
	case 0x9123683E:
		return "btrfs";
	case 0x01021997:
		return "9p";
	case 0x65735546:
		return "fuse";
	default:
		return "none";
	}
}

struct mnt_line {
	const char *source, *target, *fstype, *opts;
	unsigned major, minor;
};

static void emit_mount(struct cbox_proc_buf *b, bool info, int id, int parent,
                       const struct mnt_line *m)
{
	if (info)
		cbox_proc_printf(b, "%d %d %u:%u / %s %s - %s %s %s\n", id, parent, m->major,
		                 m->minor, m->target, m->opts, m->fstype, m->source,
		                 strncmp(m->opts, "ro", 2) == 0 ? "ro" : "rw");
	else
		cbox_proc_printf(b, "%s %s %s %s 0 0\n", m->source, m->target, m->fstype, m->opts);
}

/*
 * A mount of the gofer's tree at path, seen from the sentry: a directory whose file system (its
 * device, or its read-only flag for a bind of the same file system) differs from the rootfs's.
 * The gofer's hide mounts (tmpfs over host secrets) are not probed: listing them would name
 * what they hide.
 */
static bool gofer_mount(struct cbox_sentry *s, struct cbox_task *t, const char *path,
                        uint64_t root_flags, struct mnt_line *m)
{
	struct cbox_dentry *d = NULL;
	if (!t || !t->fs || cbox_vfs_walk(s, t, AT_FDCWD, path, CBOX_WALK_FOLLOW, &d, NULL) < 0)
		return false;
	struct cbox_gofer_statfs sf;
	uint32_t fid;
	bool is = d->mnt == &s->root_mnt && d->fid != CBOX_GOFER_ROOT_FID &&
	          cbox_dentry_fid(s, d, &fid) == 0 && cbox_gofer_statfs(s->gofer, fid, &sf) == 0 &&
	          (d->host_dev != s->root->host_dev || (sf.flags & ST_RDONLY) != root_flags);
	if (is) {
		m->fstype = fs_name(sf.type);
		m->source = strcmp(m->fstype, "tmpfs") == 0 ? "tmpfs" : "cbox-bind";
		m->opts = (sf.flags & ST_RDONLY) ? "ro,nosuid,nodev,relatime"
		                                 : "rw,nosuid,nodev,relatime";
		m->major = major(d->host_dev);
		m->minor = minor(d->host_dev);
	}
	cbox_dentry_put(s, d);
	return is;
}

/*
 * The guest's mount table (/proc/<pid>/mounts, mountinfo): the rootfs, the gofer's /tmp and
 * working folder when they are mounts, and the sentry's /proc, /dev, /sys and /sys/fs/cgroup. The
 * mount ids are the sandbox's own; the rootfs's parent (outside the guest's view) is 1, as in a
 * container.
 */
static int gen_mounts(struct cbox_sentry *s, struct cbox_task *t, bool info,
                      struct cbox_proc_buf *b)
{
	struct cbox_gofer_statfs sf;
	int r = cbox_gofer_statfs(s->gofer, CBOX_GOFER_ROOT_FID, &sf);
	if (r < 0)
		return r;
	struct mnt_line m = {
	    .source = "cbox-rootfs",
	    .target = "/",
	    .fstype = fs_name(sf.type),
	    /* nosuid, nodev: how the gofer serves it, and what the guest finds there (a setuid
	     * program runs with its caller's ids, no device node opens). With the guest's own
	     * no_new_privs unset, this is what tells a program why sudo kept its ids. */
	    .opts = (sf.flags & ST_RDONLY) || s->root_mnt.readonly ? "ro,nosuid,nodev,relatime"
	                                                           : "rw,nosuid,nodev,relatime",
	    .major = major(s->root->host_dev),
	    .minor = minor(s->root->host_dev),
	};
	int id = 100;
	emit_mount(b, info, id++, 1, &m);
	const char *cwd = cbox_sentry_config(s)->cwd;
	const char *paths[] = {"/tmp", cwd && strcmp(cwd, "/") && strcmp(cwd, "/tmp") ? cwd : NULL};
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(paths); i++) {
		if (paths[i] && gofer_mount(s, t, paths[i], sf.flags & ST_RDONLY, &m)) {
			m.target = paths[i];
			emit_mount(b, info, id++, 100, &m);
		}
	}
	m = (struct mnt_line){"proc", "/proc",
	                      "proc", "rw,nosuid,nodev,noexec,relatime",
	                      0,      (unsigned)s->proc_mnt.dev};
	emit_mount(b, info, id++, 100, &m);
	m = (struct mnt_line){
	    "tmpfs", "/dev", "tmpfs", "rw,nosuid,relatime", 0, (unsigned)s->dev_mnt.dev};
	emit_mount(b, info, id++, 100, &m);
	/* /sys, and the sandbox's cgroup on /sys/fs/cgroup, as in a container with a cgroup
	 * namespace (fs_sys.c): the JVM, Go and Rust find the cgroup's files by this line. */
	m = (struct mnt_line){"sysfs", "/sys",      "sysfs", "ro,nosuid,nodev,noexec,relatime",
	                      0,       CBOX_SYS_DEV};
	int sys_id = id;
	emit_mount(b, info, id++, 100, &m);
	m = (struct mnt_line){"cgroup2", "/sys/fs/cgroup",
	                      "cgroup2", "ro,nosuid,nodev,noexec,relatime",
	                      0,         CBOX_SYS_CGROUP_DEV};
	emit_mount(b, info, id++, sys_id, &m);
	return 0;
}

/*
 * /proc/cgroups as cgroup v2 shows it: the host kernel's controllers, each on the unified
 * hierarchy (0), because the guest's cgroup is a v2 one (/sys/fs/cgroup, fs_sys.c) whatever the
 * host mounts. The JVM tells v2 from v1 here before it reads /sys/fs/cgroup, and turns its
 * container support off when a controller it needs is missing or disabled.
 */
static int gen_cgroups(struct cbox_proc_buf *b)
{
	struct cbox_proc_buf host = {0};
	int r = cbox_proc_append_host(&host, "cgroups");
	if (r == 0 && host.err)
		r = host.err;
	if (r == 0) {
		cbox_proc_append(&host, "", 1);
		r = host.err;
	}
	if (r < 0) {
		free(host.data);
		return r;
	}
	cbox_proc_printf(b, "#subsys_name\thierarchy\tnum_cgroups\tenabled\n");
	char *save = NULL;
	for (char *line = strtok_r(host.data, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[64];
		int hier, n, enabled;
		if (line[0] != '#' && sscanf(line, "%63s %d %d %d", name, &hier, &n, &enabled) == 4)
			cbox_proc_printf(b, "%s\t0\t1\t%d\n", name, enabled);
	}
	free(host.data);
	return 0;
}

static int gen_uts(struct cbox_sentry *s, enum cbox_proc_kind kind, struct cbox_proc_buf *b)
{
	struct utsname u;
	if (uname(&u) < 0)
		return -EIO;
	switch (kind) {
	case P_OSRELEASE:
		cbox_proc_printf(b, "%s\n", u.release);
		break;
	case P_OSTYPE:
		cbox_proc_printf(b, "%s\n", u.sysname);
		break;
	case P_HOSTNAME:
		cbox_proc_printf(b, "%s\n", cbox_sentry_hostname(s));
		break;
	default: /* the sentry's own uts namespace is the guest's: "(none)" unless set */
		cbox_proc_printf(b, "%s\n", u.domainname);
		break;
	}
	return 0;
}

int cbox_proc_gen_sys(struct cbox_sentry *s, struct cbox_task *t, enum cbox_proc_kind kind,
                      struct cbox_proc_buf *b)
{
	static const char *const host[] = {
	    [P_UPTIME] = "uptime",
	    [P_MEMINFO] = "meminfo",
	    [P_CPUINFO] = "cpuinfo",
	    [P_STATF] = "stat",
	    [P_LOADAVG] = "loadavg",
	    [P_VERSION] = "version",
	    /* The machine's memory counters, as meminfo and stat above are its memory and CPU
	     * times (Linux shows them to every process): vmstat(8) needs the file and said
	     * "Unable to create vmstat structure" without it. diskstats and partitions are the
	     * sandbox's (below): they would name the host's disks. */
	    [P_VMSTAT] = "vmstat",
	    [P_FILESYSTEMS] = "filesystems",
	    [P_PID_MAX] = "sys/kernel/pid_max",
	    [P_NGROUPS_MAX] = "sys/kernel/ngroups_max",
	    [P_CAP_LAST_CAP] = "sys/kernel/cap_last_cap",
	    [P_OVERFLOWUID] = "sys/kernel/overflowuid",
	    [P_OVERFLOWGID] = "sys/kernel/overflowgid",
	    [P_OVERCOMMIT] = "sys/vm/overcommit_memory",
	    [P_FILE_MAX] = "sys/fs/file-max",
	    [P_NR_OPEN] = "sys/fs/nr_open",
	};
	char uuid[37];
	switch (kind) {
	case P_MOUNTS:
	case P_MOUNTINFO:
		return gen_mounts(s, t, kind == P_MOUNTINFO, b);
	case P_CGROUPS:
		return gen_cgroups(b);
	case P_DMESG_RESTRICT:
		/* The kernel log is the host's: syslog(2) is refused to the guest, as Linux refuses
		 * a process without CAP_SYSLOG when dmesg_restrict is 1. */
		cbox_proc_printf(b, "1\n");
		return 0;
	case P_DISKSTATS:
	case P_PARTITIONS:
		/* The sandbox has no block device (its /dev has none, its files are the gofer's):
		 * Linux's files on a machine without disks, a header and no line for partitions
		 * and empty diskstats. iostat, vmstat -d and psutil's disk_io_counters then list
		 * no disk instead of failing on a missing file. */
		if (kind == P_PARTITIONS)
			cbox_proc_printf(b, "major minor  #blocks  name\n\n");
		return 0;
	case P_CMDLINE_SYS:
		/* The host's command line names its disks, its boot image and sometimes secrets. */
		cbox_proc_printf(b, "BOOT_IMAGE=cbox ro\n");
		return 0;
	case P_OSRELEASE:
	case P_OSTYPE:
	case P_HOSTNAME:
	case P_DOMAINNAME:
		return gen_uts(s, kind, b);
	case P_UUID:
	case P_BOOT_ID:
		if ((kind == P_UUID ? make_uuid(uuid) : boot_id(uuid)) < 0)
			return -EIO;
		cbox_proc_printf(b, "%s\n", uuid);
		return 0;
	default:
		if ((size_t)kind < CBOX_ARRAY_SIZE(host) && host[kind])
			return cbox_proc_append_host(b, host[kind]);
		return -EINVAL;
	}
}
