/*
 * Compatibility cases: the set-user-ID and set-group-ID bits of a file's mode. chmod and a
 * creating open give them (and a directory set-user-ID), stat shows them on every name and fd of
 * the file; a chown of a non-directory drops set-user-ID, and set-group-ID when group execute is
 * on, whoever makes it and even with both ids -1; a truncation drops them unless the caller has
 * CAP_FSETID; a chmod by a caller neither in the file's group nor with CAP_FSETID gives no
 * set-group-ID. (Under the sentry the host file never has them: it keeps them itself.)
 */
#include "compat_test.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <grp.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int mode_of(const char *p)
{
	struct stat st;
	CT_OK(syscall(SYS_lstat, p, &st));
	return st.st_mode & 07777;
}

static int fd_mode(int fd)
{
	struct stat st;
	CT_OK(syscall(SYS_fstat, fd, &st));
	return st.st_mode & 07777;
}

/* In a child: CAP_FSETID out of the effective set (exit 91 when that fails). */
static void drop_fsetid(void)
{
	if (ct_drop_cap(CAP_FSETID) < 0)
		_exit(91);
}

CT_TEST(chmod, setid_bits_shown)
{
	ct_put_file("f", "x", 0755);
	CT_OK(chmod("f", 04755));
	CT_EQ(mode_of("f"), 04755);
	CT_OK(chmod("f", 06711));
	CT_EQ(mode_of("f"), 06711);
	int fd = CT_OK(open("f", O_RDONLY));
	CT_EQ(fd_mode(fd), 06711);
	/* Every name of the file, before and after a rename. */
	CT_OK(link("f", "g"));
	CT_EQ(mode_of("g"), 06711);
	CT_OK(rename("f", "h"));
	CT_EQ(mode_of("h"), 06711);
	CT_OK(syscall(SYS_fchmod, fd, 0755));
	CT_EQ(mode_of("g"), 0755);
	CT_EQ(fd_mode(fd), 0755);
	close(fd);
	/* A directory keeps set-user-ID too (it means nothing there). */
	CT_OK(mkdir("d", 0755));
	CT_OK(chmod("d", 04755));
	CT_EQ(mode_of("d"), 04755);
	CT_OK(chmod("d", 02755));
	CT_EQ(mode_of("d"), 02755);
}

CT_TEST(open, creat_setid_mode)
{
	mode_t old = umask(022);
	int fd = CT_OK(open("f", O_CREAT | O_EXCL | O_WRONLY, 06777));
	umask(old);
	CT_EQ(fd_mode(fd), 06755);
	CT_EQ(mode_of("f"), 06755);
	close(fd);
}

CT_TEST(chown, clears_setuid)
{
	ct_put_file("f", "", 0755);
	CT_OK(chmod("f", 04755));
	CT_EQ(mode_of("f"), 04755);
	CT_OK(syscall(SYS_chown, "f", geteuid(), -1));
	/* Changing the owner of a regular file drops set-user-ID, whoever does it. */
	CT_EQ(mode_of("f"), 0755);
}

CT_TEST(chown, minus_one_clears_setid)
{
	ct_put_file("f", "", 0755);
	CT_OK(chmod("f", 06755));
	CT_OK(syscall(SYS_chown, "f", -1, -1));
	CT_EQ(mode_of("f"), 0755);
	/* set-group-ID without group execute (a mandatory-locking mark) stays */
	CT_OK(chmod("f", 02745));
	int fd = CT_OK(open("f", O_RDONLY));
	CT_OK(syscall(SYS_fchown, fd, -1, -1));
	CT_EQ(mode_of("f"), 02745);
	close(fd);
	/* a directory's stay */
	CT_OK(mkdir("d", 0755));
	CT_OK(chmod("d", 06755));
	CT_OK(syscall(SYS_chown, "d", -1, -1));
	CT_EQ(mode_of("d"), 06755);
}

CT_TEST(truncate, clears_setid_without_fsetid)
{
	if (!ct_has_cap(CAP_FSETID))
		ct_skip("needs CAP_FSETID, to compare with and without it");
	ct_put_file("f", "data", 0755);
	CT_OK(chmod("f", 06755));
	CT_OK(syscall(SYS_truncate, "f", 1L));
	CT_EQ(mode_of("f"), 06755); /* kept with CAP_FSETID */
	pid_t pid = CT_OK(fork());
	if (pid == 0) {
		drop_fsetid();
		_exit(syscall(SYS_truncate, "f", 0L) == 0 ? 0 : 1);
	}
	CT_EQ(ct_exit_code(pid), 0);
	CT_EQ(mode_of("f"), 0755);
	/* An open with O_TRUNC truncates as well. */
	CT_OK(chmod("f", 04755));
	pid = CT_OK(fork());
	if (pid == 0) {
		drop_fsetid();
		int fd = open("f", O_WRONLY | O_TRUNC);
		_exit(fd >= 0 ? 0 : 1);
	}
	CT_EQ(ct_exit_code(pid), 0);
	CT_EQ(mode_of("f"), 0755);
}

CT_TEST(chmod, setgid_needs_group_or_fsetid)
{
	if (!ct_has_cap(CAP_FSETID) || !ct_has_cap(CAP_CHOWN) || getegid() == 65534)
		ct_skip("needs CAP_FSETID and CAP_CHOWN, and a group other than 65534");
	ct_put_file("f", "", 0755);
	CT_OK(syscall(SYS_chown, "f", geteuid(), 65534));
	pid_t pid = CT_OK(fork());
	if (pid == 0) {
		drop_fsetid();
		gid_t none[1];
		if (setgroups(0, none) < 0)
			_exit(92);
		_exit(chmod("f", 06755) == 0 ? 0 : 1);
	}
	CT_EQ(ct_exit_code(pid), 0);
	CT_EQ(mode_of("f"), 04755); /* not in group 65534: no set-group-ID */
	CT_OK(chmod("f", 06755));
	CT_EQ(mode_of("f"), 06755); /* with CAP_FSETID */
}
