/*
 * Compatibility cases: extended attributes in the user.* namespace (setxattr, lsetxattr,
 * fsetxattr, getxattr, lgetxattr, fgetxattr, listxattr, llistxattr, flistxattr, removexattr,
 * lremovexattr, fremovexattr) on the scratch directory's filesystem, and file notification
 * (inotify_init, inotify_init1, inotify_add_watch, inotify_rm_watch, fanotify_init).
 */
#include "compat_test.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

/* Whether the calling process has capability cap in its effective set. */

/* Create file f and give it user.a = "1"; skip when the filesystem has no user xattrs. */
static void file_with_xattr(const char *path)
{
	int fd = CT_OK(open(path, O_CREAT | O_WRONLY, 0644));
	close(fd);
	if (setxattr(path, "user.a", "1", 1, 0) < 0) {
		if (errno == EOPNOTSUPP || errno == ENOTSUP)
			ct_skip("the scratch filesystem does not support user.* xattrs");
		CT_FAIL("setxattr user.a: %s", ct_errname(errno));
	}
}

/* Whether the NUL-separated list of n bytes contains name. */
static int list_has(const char *list, long n, const char *name)
{
	for (long off = 0; off < n; off += strlen(list + off) + 1)
		if (strcmp(list + off, name) == 0)
			return 1;
	return 0;
}

CT_TEST(setxattr, roundtrip_and_size_query)
{
	file_with_xattr("f");
	CT_OK(setxattr("f", "user.b", "hello", 5, 0));
	CT_EQ(getxattr("f", "user.b", NULL, 0), 5);
	char buf[8] = {0};
	CT_EQ(getxattr("f", "user.b", buf, sizeof(buf)), 5);
	CT_STREQ(buf, "hello");
	CT_OK(setxattr("f", "user.b", "", 0, 0));
	CT_EQ(getxattr("f", "user.b", buf, sizeof(buf)), 0);
}

CT_TEST(setxattr, create_replace_flags)
{
	file_with_xattr("f");
	CT_ERR(setxattr("f", "user.a", "2", 1, XATTR_CREATE), EEXIST);
	CT_ERR(setxattr("f", "user.new", "2", 1, XATTR_REPLACE), ENODATA);
	CT_OK(setxattr("f", "user.a", "2", 1, XATTR_REPLACE));
	CT_OK(setxattr("f", "user.new", "3", 1, XATTR_CREATE));
	CT_ERR(setxattr("f", "user.a", "2", 1, 0x10), EINVAL);
}

CT_TEST(setxattr, name_and_value_errors)
{
	file_with_xattr("f");
	CT_ERR(setxattr("f", "nonamespace", "1", 1, 0), EOPNOTSUPP);
	CT_ERR(setxattr("f", "", "1", 1, 0), ERANGE);
	char name[300] = "user.";
	memset(name + 5, 'n', 260);
	name[265] = 0;
	CT_ERR(setxattr("f", name, "1", 1, 0), ERANGE);
	static char big[65537];
	CT_ERR(setxattr("f", "user.big", big, sizeof(big), 0), E2BIG);
	CT_ERR(setxattr("missing", "user.a", "1", 1, 0), ENOENT);
}

CT_TEST(setxattr, eacces_readonly_file)
{
	file_with_xattr("f");
	CT_OK(chmod("f", 0444));
	if (ct_has_cap(CAP_DAC_OVERRIDE) || ct_has_cap(CAP_FOWNER)) {
		CT_OK(setxattr("f", "user.a", "2", 1, 0));
		return;
	}
	/* user.* attributes follow the file's write permission. */
	CT_ERR(setxattr("f", "user.a", "2", 1, 0), EACCES);
}

CT_TEST(lsetxattr, symlink_user_eperm)
{
	file_with_xattr("f");
	CT_OK(symlink("f", "l"));
	/* Linux allows user.* attributes only on regular files and directories. */
	CT_ERR(lsetxattr("l", "user.x", "1", 1, 0), EPERM);
	CT_OK(lsetxattr("f", "user.x", "1", 1, 0));
	CT_EQ(getxattr("l", "user.x", NULL, 0), 1);
}

CT_TEST(lsetxattr, errors)
{
	file_with_xattr("f");
	CT_ERR(lsetxattr("missing", "user.a", "1", 1, 0), ENOENT);
	CT_ERR(lsetxattr("f/x", "user.a", "1", 1, 0), ENOTDIR);
}

CT_TEST(fsetxattr, on_fd)
{
	file_with_xattr("f");
	int fd = CT_OK(open("f", O_RDONLY));
	CT_OK(fsetxattr(fd, "user.fd", "xyz", 3, 0));
	char buf[4] = {0};
	CT_EQ(getxattr("f", "user.fd", buf, sizeof(buf)), 3);
	CT_STREQ(buf, "xyz");
}

CT_TEST(fsetxattr, errors)
{
	file_with_xattr("f");
	CT_ERR(fsetxattr(-1, "user.a", "1", 1, 0), EBADF);
	int pfd = CT_OK(open("f", O_PATH));
	CT_ERR(fsetxattr(pfd, "user.a", "1", 1, 0), EBADF);
}

CT_TEST(getxattr, errors)
{
	file_with_xattr("f");
	char buf[1];
	CT_ERR(getxattr("f", "user.none", buf, sizeof(buf)), ENODATA);
	CT_OK(setxattr("f", "user.long", "abcdef", 6, 0));
	CT_ERR(getxattr("f", "user.long", buf, sizeof(buf)), ERANGE);
	CT_ERR(getxattr("missing", "user.a", buf, sizeof(buf)), ENOENT);
}

CT_TEST(getxattr, follows_symlink_and_dirs)
{
	file_with_xattr("f");
	CT_OK(symlink("f", "l"));
	char buf[4] = {0};
	CT_EQ(getxattr("l", "user.a", buf, sizeof(buf)), 1);
	CT_STREQ(buf, "1");
	CT_OK(mkdir("d", 0700));
	CT_OK(setxattr("d", "user.dir", "D", 1, 0));
	CT_EQ(getxattr("d", "user.dir", buf, sizeof(buf)), 1);
}

CT_TEST(lgetxattr, symlink_not_target)
{
	file_with_xattr("f");
	CT_OK(symlink("f", "l"));
	char buf[4];
	CT_ERR(lgetxattr("l", "user.a", buf, sizeof(buf)), ENODATA);
	CT_EQ(lgetxattr("f", "user.a", buf, sizeof(buf)), 1);
}

CT_TEST(lgetxattr, errors)
{
	file_with_xattr("f");
	char buf[4];
	CT_ERR(lgetxattr("missing", "user.a", buf, sizeof(buf)), ENOENT);
	CT_ERR(lgetxattr("f", "user.none", buf, sizeof(buf)), ENODATA);
}

CT_TEST(fgetxattr, on_fd)
{
	file_with_xattr("f");
	int fd = CT_OK(open("f", O_RDONLY));
	char buf[4] = {0};
	CT_EQ(fgetxattr(fd, "user.a", buf, sizeof(buf)), 1);
	CT_STREQ(buf, "1");
	CT_EQ(fgetxattr(fd, "user.a", NULL, 0), 1);
}

CT_TEST(fgetxattr, errors)
{
	file_with_xattr("f");
	char buf[4];
	CT_ERR(fgetxattr(-1, "user.a", buf, sizeof(buf)), EBADF);
	int fd = CT_OK(open("f", O_RDONLY));
	CT_ERR(fgetxattr(fd, "user.none", buf, sizeof(buf)), ENODATA);
}

CT_TEST(listxattr, names)
{
	file_with_xattr("f");
	CT_OK(setxattr("f", "user.second", "2", 1, 0));
	char buf[256];
	long size = CT_OK(listxattr("f", NULL, 0));
	long n = CT_OK(listxattr("f", buf, sizeof(buf)));
	CT_EQ(n, size);
	CT_TRUE(list_has(buf, n, "user.a"));
	CT_TRUE(list_has(buf, n, "user.second"));
	CT_EQ(buf[n - 1], 0);
}

CT_TEST(listxattr, errors)
{
	file_with_xattr("f");
	char buf[2];
	CT_ERR(listxattr("f", buf, sizeof(buf)), ERANGE);
	CT_ERR(listxattr("missing", buf, sizeof(buf)), ENOENT);
}

CT_TEST(llistxattr, symlink_and_file)
{
	file_with_xattr("f");
	CT_OK(symlink("f", "l"));
	char buf[256];
	long n = CT_OK(llistxattr("l", buf, sizeof(buf)));
	CT_TRUE(!list_has(buf, n, "user.a"));
	n = CT_OK(llistxattr("f", buf, sizeof(buf)));
	CT_TRUE(list_has(buf, n, "user.a"));
	CT_ERR(llistxattr("missing", buf, sizeof(buf)), ENOENT);
}

CT_TEST(flistxattr, on_fd)
{
	file_with_xattr("f");
	int fd = CT_OK(open("f", O_RDONLY));
	char buf[256];
	long n = CT_OK(flistxattr(fd, buf, sizeof(buf)));
	CT_TRUE(list_has(buf, n, "user.a"));
	CT_ERR(flistxattr(-1, buf, sizeof(buf)), EBADF);
	CT_ERR(flistxattr(fd, buf, 1), ERANGE);
}

CT_TEST(removexattr, removes)
{
	file_with_xattr("f");
	CT_OK(removexattr("f", "user.a"));
	char buf[4];
	CT_ERR(getxattr("f", "user.a", buf, sizeof(buf)), ENODATA);
	CT_ERR(removexattr("f", "user.a"), ENODATA);
	CT_ERR(removexattr("missing", "user.a"), ENOENT);
}

CT_TEST(removexattr, via_symlink)
{
	file_with_xattr("f");
	CT_OK(symlink("f", "l"));
	CT_OK(removexattr("l", "user.a"));
	CT_ERR(getxattr("f", "user.a", NULL, 0), ENODATA);
}

CT_TEST(lremovexattr, symlink_and_file)
{
	file_with_xattr("f");
	CT_OK(symlink("f", "l"));
	CT_ERR(lremovexattr("l", "user.a"), EPERM);
	CT_OK(lremovexattr("f", "user.a"));
	CT_ERR(lremovexattr("f", "user.a"), ENODATA);
}

CT_TEST(fremovexattr, on_fd)
{
	file_with_xattr("f");
	int fd = CT_OK(open("f", O_RDONLY));
	CT_OK(fremovexattr(fd, "user.a"));
	CT_ERR(fremovexattr(fd, "user.a"), ENODATA);
	CT_ERR(fremovexattr(-1, "user.a"), EBADF);
}

/* Read one inotify event into ev (with room for a name); fails the case on a short read. */
static void read_event(int fd, struct inotify_event *ev, size_t room)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	CT_EQ(poll(&p, 1, 1000), 1);
	long n = CT_OK(read(fd, ev, room));
	CT_TRUE(n >= (long)sizeof(*ev));
}

CT_TEST(inotify_init, create_event)
{
	int fd = CT_OK(syscall(SYS_inotify_init));
	CT_EQ(fcntl(fd, F_GETFD), 0);
	int wd = CT_OK(inotify_add_watch(fd, ".", IN_CREATE));
	int f = CT_OK(open("newfile", O_CREAT | O_WRONLY, 0600));
	close(f);
	char buf[sizeof(struct inotify_event) + 256] __attribute__((aligned(8)));
	struct inotify_event *ev = (void *)buf;
	read_event(fd, ev, sizeof(buf));
	CT_EQ(ev->wd, wd);
	CT_TRUE(ev->mask & IN_CREATE);
	CT_STREQ(ev->name, "newfile");
}

CT_TEST(inotify_init, fionread)
{
	int fd = CT_OK(syscall(SYS_inotify_init));
	CT_OK(inotify_add_watch(fd, ".", IN_CREATE));
	int n = -1;
	CT_OK(ioctl(fd, FIONREAD, &n));
	CT_EQ(n, 0);
	CT_OK(mkdir("sub", 0700));
	CT_OK(ioctl(fd, FIONREAD, &n));
	CT_TRUE(n >= (int)sizeof(struct inotify_event) + 4);
}

CT_TEST(inotify_init1, flags)
{
	int fd = CT_OK(inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
	CT_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CT_TRUE(fcntl(fd, F_GETFL) & O_NONBLOCK);
	char buf[256];
	CT_ERR(read(fd, buf, sizeof(buf)), EAGAIN);
	CT_ERR(inotify_init1(0x1), EINVAL);
}

CT_TEST(inotify_init1, small_buffer_einval)
{
	int fd = CT_OK(inotify_init1(IN_NONBLOCK));
	CT_OK(inotify_add_watch(fd, ".", IN_CREATE));
	CT_OK(mkdir("a_rather_long_directory_name", 0700));
	char buf[sizeof(struct inotify_event)];
	CT_ERR(read(fd, buf, sizeof(buf)), EINVAL);
}

CT_TEST(inotify_add_watch, modify_and_same_wd)
{
	int f = CT_OK(open("f", O_CREAT | O_WRONLY, 0600));
	int fd = CT_OK(inotify_init1(IN_NONBLOCK));
	int wd = CT_OK(inotify_add_watch(fd, "f", IN_MODIFY));
	CT_EQ(inotify_add_watch(fd, "f", IN_MODIFY | IN_CLOSE_WRITE), wd);
	CT_EQ(write(f, "x", 1), 1);
	char buf[sizeof(struct inotify_event) + 256] __attribute__((aligned(8)));
	struct inotify_event *ev = (void *)buf;
	read_event(fd, ev, sizeof(buf));
	CT_EQ(ev->wd, wd);
	CT_TRUE(ev->mask & IN_MODIFY);
	CT_EQ(ev->len, 0);
}

CT_TEST(inotify_add_watch, errors)
{
	int fd = CT_OK(inotify_init1(0));
	CT_ERR(inotify_add_watch(fd, "missing", IN_CREATE), ENOENT);
	CT_ERR(inotify_add_watch(fd, ".", 0), EINVAL);
	int f = CT_OK(open("f", O_CREAT | O_WRONLY, 0600));
	CT_ERR(inotify_add_watch(f, ".", IN_CREATE), EINVAL);
	CT_ERR(inotify_add_watch(-1, ".", IN_CREATE), EBADF);
	CT_ERR(inotify_add_watch(fd, "f", IN_CREATE | IN_ONLYDIR), ENOTDIR);
}

CT_TEST(inotify_rm_watch, ignored_event)
{
	int fd = CT_OK(inotify_init1(IN_NONBLOCK));
	int wd = CT_OK(inotify_add_watch(fd, ".", IN_CREATE));
	CT_OK(inotify_rm_watch(fd, wd));
	char buf[sizeof(struct inotify_event) + 256] __attribute__((aligned(8)));
	struct inotify_event *ev = (void *)buf;
	read_event(fd, ev, sizeof(buf));
	CT_EQ(ev->wd, wd);
	CT_TRUE(ev->mask & IN_IGNORED);
	CT_ERR(inotify_rm_watch(fd, wd), EINVAL);
}

CT_TEST(inotify_rm_watch, errors)
{
	int fd = CT_OK(inotify_init1(0));
	CT_ERR(inotify_rm_watch(fd, 12345), EINVAL);
	CT_ERR(inotify_rm_watch(-1, 1), EBADF);
	int f = CT_OK(open("/dev/null", O_RDONLY));
	CT_ERR(inotify_rm_watch(f, 1), EINVAL);
}

CT_TEST(fanotify_init, content_class_needs_cap)
{
	long r = syscall(SYS_fanotify_init, FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY);
	if (ct_has_cap(CAP_SYS_ADMIN)) {
		CT_OK(r);
		close((int)r);
	} else {
		/* Permission events could block other processes: Linux keeps them privileged. */
		CT_EQ(r, -1);
		CT_EQ(errno, EPERM);
	}
}

CT_TEST(fanotify_init, fid_notif_unprivileged)
{
	/* Since Linux 5.13 a notification-only group reporting file ids needs no capability. */
	int fd = CT_OK(
	    syscall(SYS_fanotify_init, FAN_CLASS_NOTIF | FAN_REPORT_FID | FAN_CLOEXEC, O_RDONLY));
	CT_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	close(fd);
}

CT_TEST(fanotify_init, einval)
{
	/* With FAN_REPORT_FID the flag checks run before the capability check. */
	CT_ERR(syscall(SYS_fanotify_init, FAN_CLASS_NOTIF | FAN_REPORT_FID | 0x80000000u, O_RDONLY),
	       EINVAL);
	CT_ERR(syscall(SYS_fanotify_init, FAN_CLASS_NOTIF | FAN_REPORT_FID, O_RDONLY | O_CREAT),
	       EINVAL);
	CT_ERR(syscall(SYS_fanotify_init, FAN_CLASS_NOTIF | FAN_REPORT_NAME, O_RDONLY), EINVAL);
}

CT_TEST(llistxattr, size_query_and_erange)
{
	file_with_xattr("f");
	long size = CT_OK(llistxattr("f", NULL, 0));
	CT_TRUE(size >= (long)sizeof("user.a"));
	char buf[2];
	CT_ERR(llistxattr("f", buf, sizeof(buf)), ERANGE);
}

CT_TEST(flistxattr, size_query_and_o_path)
{
	file_with_xattr("f");
	int fd = CT_OK(open("f", O_RDONLY));
	CT_EQ(flistxattr(fd, NULL, 0), listxattr("f", NULL, 0));
	int pfd = CT_OK(open("f", O_PATH));
	char buf[64];
	CT_ERR(flistxattr(pfd, buf, sizeof(buf)), EBADF);
}

CT_TEST(lremovexattr, errors)
{
	file_with_xattr("f");
	CT_ERR(lremovexattr("missing", "user.a"), ENOENT);
	CT_ERR(lremovexattr("f", "nonamespace"), EOPNOTSUPP);
}

CT_TEST(fremovexattr, directory_and_o_path)
{
	file_with_xattr("f");
	CT_OK(mkdir("d", 0700));
	CT_OK(setxattr("d", "user.d", "1", 1, 0));
	int dfd = CT_OK(open("d", O_RDONLY | O_DIRECTORY));
	CT_OK(fremovexattr(dfd, "user.d"));
	int pfd = CT_OK(open("f", O_PATH));
	CT_ERR(fremovexattr(pfd, "user.a"), EBADF);
}
