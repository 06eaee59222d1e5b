/*
 * Identity and system identity: get/set uid/gid families, getgroups/setgroups, process groups
 * and sessions, capget/capset, personality, uname, sethostname, setdomainname, sysinfo,
 * getrandom. The suite may run as root with capabilities or as an unprivileged user, so the
 * set* cases only make changes that are allowed to anyone (to the current ids), or expect the
 * answer that matches the capabilities this process has. They never change the host name.
 */
#include "compat_test.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/personality.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

static int have_cap(int cap)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		CT_FAIL("capget: %s", ct_errname(errno));
	return (d[cap / 32].effective >> (cap % 32)) & 1;
}

/* The four ids of a "Uid:" or "Gid:" line of /proc/self/status. */
static void status_ids(const char *key, long ids[4])
{
	char buf[4096];
	int fd = CT_OK(open("/proc/self/status", O_RDONLY));
	ssize_t n = CT_OK(read(fd, buf, sizeof(buf) - 1));
	buf[n] = 0;
	close(fd);
	const char *p = strstr(buf, key);
	CT_TRUE(p != NULL);
	CT_EQ(sscanf(p + strlen(key), "%ld %ld %ld %ld", &ids[0], &ids[1], &ids[2], &ids[3]), 4);
}

CT_TEST(getuid, matches_proc_status)
{
	long ids[4];
	status_ids("\nUid:", ids);
	CT_EQ(syscall(SYS_getuid), ids[0]);
	CT_EQ(syscall(SYS_geteuid), ids[1]);
}

CT_TEST(geteuid, matches_getresuid)
{
	uid_t r, e, s;
	CT_OK(syscall(SYS_getresuid, &r, &e, &s));
	CT_EQ(syscall(SYS_geteuid), e);
	CT_EQ(syscall(SYS_getuid), r);
}

CT_TEST(getgid, matches_proc_status)
{
	long ids[4];
	status_ids("\nGid:", ids);
	CT_EQ(syscall(SYS_getgid), ids[0]);
	CT_EQ(syscall(SYS_getegid), ids[1]);
}

CT_TEST(getegid, matches_getresgid)
{
	gid_t r, e, s;
	CT_OK(syscall(SYS_getresgid, &r, &e, &s));
	CT_EQ(syscall(SYS_getegid), e);
	CT_EQ(syscall(SYS_getgid), r);
}

CT_TEST(getresuid, saved_and_efault)
{
	long ids[4];
	status_ids("\nUid:", ids);
	uid_t r, e, s;
	CT_OK(syscall(SYS_getresuid, &r, &e, &s));
	CT_EQ(s, ids[2]);
	CT_ERR(syscall(SYS_getresuid, (void *)8, &e, &s), EFAULT);
}

CT_TEST(getresgid, saved_and_efault)
{
	long ids[4];
	status_ids("\nGid:", ids);
	gid_t r, e, s;
	CT_OK(syscall(SYS_getresgid, &r, &e, &s));
	CT_EQ(s, ids[2]);
	CT_ERR(syscall(SYS_getresgid, &r, &e, (void *)8), EFAULT);
}

CT_TEST(getgroups, count_and_errors)
{
	long n = CT_OK(syscall(SYS_getgroups, 0, NULL));
	gid_t g[65536];
	CT_EQ(syscall(SYS_getgroups, 65536, g), n);
	if (n > 0)
		CT_ERR(syscall(SYS_getgroups, n - 1, g), EINVAL);
	CT_ERR(syscall(SYS_getgroups, -1, g), EINVAL);
}

CT_TEST(setgroups, too_many_or_needs_cap)
{
	gid_t g[1] = {(gid_t)syscall(SYS_getgid)};
	if (have_cap(CAP_SETGID)) {
		CT_ERR(syscall(SYS_setgroups, 65537, g), EINVAL);
		CT_OK(syscall(SYS_setgroups, 1, g));
		CT_EQ(syscall(SYS_getgroups, 0, NULL), 1);
	} else {
		/* Linux checks the privilege before the size. */
		CT_ERR(syscall(SYS_setgroups, 65537, g), EPERM);
		CT_ERR(syscall(SYS_setgroups, 1, g), EPERM);
	}
}

CT_TEST(setuid, to_own_uid)
{
	long uid = syscall(SYS_getuid);
	CT_OK(syscall(SYS_setuid, uid));
	CT_EQ(syscall(SYS_getuid), uid);
	/* (uid_t)-1 is no valid uid. */
	CT_ERR(syscall(SYS_setuid, -1), EINVAL);
}

CT_TEST(setgid, to_own_gid)
{
	long gid = syscall(SYS_getgid);
	CT_OK(syscall(SYS_setgid, gid));
	CT_EQ(syscall(SYS_getgid), gid);
	CT_ERR(syscall(SYS_setgid, -1), EINVAL);
}

CT_TEST(setreuid, unchanged)
{
	long r = syscall(SYS_getuid), e = syscall(SYS_geteuid);
	CT_OK(syscall(SYS_setreuid, -1, -1));
	CT_OK(syscall(SYS_setreuid, r, e));
	CT_EQ(syscall(SYS_getuid), r);
	CT_EQ(syscall(SYS_geteuid), e);
}

CT_TEST(setregid, unchanged)
{
	long r = syscall(SYS_getgid), e = syscall(SYS_getegid);
	CT_OK(syscall(SYS_setregid, -1, -1));
	CT_OK(syscall(SYS_setregid, r, e));
	CT_EQ(syscall(SYS_getgid), r);
}

CT_TEST(setresuid, unchanged)
{
	uid_t r, e, s;
	CT_OK(syscall(SYS_getresuid, &r, &e, &s));
	CT_OK(syscall(SYS_setresuid, -1, -1, -1));
	CT_OK(syscall(SYS_setresuid, r, e, s));
	uid_t r2, e2, s2;
	CT_OK(syscall(SYS_getresuid, &r2, &e2, &s2));
	CT_TRUE(r == r2 && e == e2 && s == s2);
}

CT_TEST(setresgid, unchanged)
{
	gid_t r, e, s;
	CT_OK(syscall(SYS_getresgid, &r, &e, &s));
	CT_OK(syscall(SYS_setresgid, -1, -1, -1));
	CT_OK(syscall(SYS_setresgid, r, e, s));
	gid_t r2, e2, s2;
	CT_OK(syscall(SYS_getresgid, &r2, &e2, &s2));
	CT_TRUE(r == r2 && e == e2 && s == s2);
}

CT_TEST(setfsuid, returns_previous)
{
	long e = syscall(SYS_geteuid);
	/* An invalid id changes nothing and returns the current fsuid. */
	CT_EQ(syscall(SYS_setfsuid, -1), e);
	CT_EQ(syscall(SYS_setfsuid, e), e);
}

CT_TEST(setfsgid, returns_previous)
{
	long e = syscall(SYS_getegid);
	CT_EQ(syscall(SYS_setfsgid, -1), e);
	CT_EQ(syscall(SYS_setfsgid, e), e);
}

CT_TEST(getpgrp, case_is_group_leader)
{
	/* The harness put each case in a process group of its own. */
	CT_EQ(syscall(SYS_getpgrp), getpid());
	CT_EQ(syscall(SYS_getpgid, 0), getpid());
}

CT_TEST(getpgid, of_child_and_errors)
{
	pid_t pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	CT_EQ(syscall(SYS_getpgid, pid), getpid());
	CT_ERR(syscall(SYS_getpgid, -1), ESRCH);
	kill(pid, SIGKILL);
	ct_wait(pid);
	CT_ERR(syscall(SYS_getpgid, pid), ESRCH);
}

CT_TEST(setpgid, child_own_group)
{
	pid_t pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	CT_OK(syscall(SYS_setpgid, pid, pid));
	CT_EQ(getpgid(pid), pid);
	/* Back into our group, which is in the same session. */
	CT_OK(syscall(SYS_setpgid, pid, getpid()));
	CT_EQ(getpgid(pid), getpid());
	CT_ERR(syscall(SYS_setpgid, pid, -1), EINVAL);
	kill(pid, SIGKILL);
}

CT_TEST(setpgid, errors)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	ct_wait(pid);
	CT_ERR(syscall(SYS_setpgid, pid, 0), ESRCH);
	/* Our parent (the harness) is not our child. */
	CT_ERR(syscall(SYS_setpgid, getppid(), 0), ESRCH);
}

CT_TEST(setpgid, after_exec_eacces)
{
	int fds[2];
	CT_OK(pipe(fds));
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[0], 0);
		close(fds[1]);
		execl("/bin/cat", "cat", (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	/* Wait for the exec: /proc/<pid>/comm becomes "cat". */
	char path[64], comm[32] = "";
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	for (int i = 0; i < 2000 && strcmp(comm, "cat\n") != 0; i++) {
		int fd = CT_OK(open(path, O_RDONLY));
		ssize_t n = read(fd, comm, sizeof(comm) - 1);
		comm[n > 0 ? n : 0] = 0;
		close(fd);
		if (strcmp(comm, "cat\n") != 0)
			usleep(500);
	}
	CT_STREQ(comm, "cat\n");
	CT_ERR(syscall(SYS_setpgid, pid, pid), EACCES);
	close(fds[1]);
	CT_EQ(ct_exit_code(pid), 0);
}

CT_TEST(setsid, group_leader_eperm)
{
	CT_ERR(syscall(SYS_setsid), EPERM);
}

CT_TEST(setsid, child_new_session)
{
	pid_t pid = fork();
	if (pid == 0) {
		long sid = syscall(SYS_setsid);
		long me = syscall(SYS_getpid);
		if (sid != me || syscall(SYS_getsid, 0) != me || syscall(SYS_getpgrp) != me)
			_exit(1);
		/* A session leader cannot move to another group. */
		if (syscall(SYS_setpgid, 0, getppid()) != -1 || errno != EPERM)
			_exit(2);
		_exit(0);
	}
	CT_EQ(ct_exit_code(pid), 0);
}

CT_TEST(getsid, self_and_child)
{
	long sid = CT_OK(syscall(SYS_getsid, 0));
	CT_EQ(syscall(SYS_getsid, getpid()), sid);
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	CT_EQ(syscall(SYS_getsid, pid), sid);
	ct_wait(pid);
	CT_ERR(syscall(SYS_getsid, pid), ESRCH);
}

CT_TEST(capget, version_query)
{
	struct __user_cap_header_struct h = {0, 0};
	CT_OK(syscall(SYS_capget, &h, NULL));
	CT_EQ(h.version, _LINUX_CAPABILITY_VERSION_3);
	struct __user_cap_data_struct d[2];
	h.version = 0x12345678;
	CT_ERR(syscall(SYS_capget, &h, d), EINVAL);
	CT_EQ(h.version, _LINUX_CAPABILITY_VERSION_3);
}

CT_TEST(capget, matches_proc_status)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	CT_OK(syscall(SYS_capget, &h, d));
	char buf[4096];
	int fd = CT_OK(open("/proc/self/status", O_RDONLY));
	ssize_t n = CT_OK(read(fd, buf, sizeof(buf) - 1));
	buf[n] = 0;
	const char *p = strstr(buf, "\nCapEff:");
	CT_TRUE(p != NULL);
	unsigned long long eff = strtoull(p + 8, NULL, 16);
	CT_EQ(eff, ((unsigned long long)d[1].effective << 32) | d[0].effective);
	CT_TRUE((d[0].effective & ~d[0].permitted) == 0);
}

CT_TEST(capset, same_sets)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	CT_OK(syscall(SYS_capget, &h, d));
	/* Setting what we already have never needs a privilege. */
	CT_OK(syscall(SYS_capset, &h, d));
	h.version = 0x12345678;
	CT_ERR(syscall(SYS_capset, &h, d), EINVAL);
}

CT_TEST(capset, other_process_eperm)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	CT_OK(syscall(SYS_capget, &h, d));
	h.pid = getppid();
	CT_ERR(syscall(SYS_capset, &h, d), EPERM);
}

/* Linux takes only 0 or the caller's own tid: a thread naming its process's pid is refused. */
static void *capset_from_thread(void *arg)
{
	long *r = arg;
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		return NULL;
	h.pid = getpid();
	r[0] = syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
	h.pid = (int)syscall(SYS_gettid);
	r[1] = syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
	return NULL;
}

CT_TEST(capset, thread_pid_eperm_own_tid_ok)
{
	long r[2] = {1, 1};
	pthread_t t;
	CT_EQ(pthread_create(&t, NULL, capset_from_thread, r), 0);
	CT_EQ(pthread_join(t, NULL), 0);
	CT_EQ(r[0], -EPERM);
	CT_EQ(r[1], 0);
}

CT_TEST(personality, query_and_set)
{
	long cur = CT_OK(syscall(SYS_personality, 0xffffffff));
	CT_EQ(cur & PER_MASK, PER_LINUX);
	CT_EQ(syscall(SYS_personality, cur | ADDR_NO_RANDOMIZE), cur);
	CT_EQ(syscall(SYS_personality, 0xffffffff), cur | ADDR_NO_RANDOMIZE);
}

CT_TEST(uname, fields)
{
	struct utsname u;
	CT_OK(syscall(SYS_uname, &u));
	CT_STREQ(u.sysname, "Linux");
	CT_STREQ(u.machine, "x86_64");
	char rel[128] = {0};
	int fd = CT_OK(open("/proc/sys/kernel/osrelease", O_RDONLY));
	ssize_t n = CT_OK(read(fd, rel, sizeof(rel) - 1));
	if (n > 0 && rel[n - 1] == '\n')
		rel[n - 1] = 0;
	CT_STREQ(u.release, rel);
	CT_ERR(syscall(SYS_uname, (void *)8), EFAULT);
}

CT_TEST(uname, nodename_matches_gethostname_file)
{
	struct utsname u;
	CT_OK(syscall(SYS_uname, &u));
	char host[128] = {0};
	int fd = CT_OK(open("/proc/sys/kernel/hostname", O_RDONLY));
	ssize_t n = CT_OK(read(fd, host, sizeof(host) - 1));
	if (n > 0 && host[n - 1] == '\n')
		host[n - 1] = 0;
	CT_STREQ(u.nodename, host);
}

CT_TEST(sethostname, bad_length)
{
	char name[100];
	memset(name, 'a', sizeof(name));
	/* The privilege is checked first; a privileged caller then gets EINVAL. */
	int e = have_cap(CAP_SYS_ADMIN) ? EINVAL : EPERM;
	CT_ERR(syscall(SYS_sethostname, name, 65), e);
	CT_ERR(syscall(SYS_sethostname, name, -1), e);
}

CT_TEST(setdomainname, bad_length)
{
	char name[100];
	memset(name, 'a', sizeof(name));
	int e = have_cap(CAP_SYS_ADMIN) ? EINVAL : EPERM;
	CT_ERR(syscall(SYS_setdomainname, name, 65), e);
	CT_ERR(syscall(SYS_setdomainname, name, -1), e);
}

CT_TEST(sysinfo, plausible)
{
	struct sysinfo si;
	CT_OK(syscall(SYS_sysinfo, &si));
	CT_TRUE(si.uptime > 0);
	CT_TRUE(si.mem_unit >= 1);
	CT_TRUE(si.totalram > 0 && si.freeram <= si.totalram);
	CT_TRUE(si.procs > 0);
	CT_ERR(syscall(SYS_sysinfo, (void *)8), EFAULT);
}

CT_TEST(getrandom, fills_buffer)
{
	unsigned char a[64], b[64];
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	CT_EQ(syscall(SYS_getrandom, a, sizeof(a), 0), sizeof(a));
	CT_EQ(syscall(SYS_getrandom, b, sizeof(b), GRND_NONBLOCK), sizeof(b));
	CT_TRUE(memcmp(a, b, sizeof(a)) != 0);
	CT_EQ(syscall(SYS_getrandom, a, 0, 0), 0);
}

CT_TEST(getrandom, flags)
{
	unsigned char a[16];
	long r = syscall(SYS_getrandom, a, sizeof(a), GRND_RANDOM | GRND_NONBLOCK);
	CT_TRUE(r > 0 || (r == -1 && errno == EAGAIN));
	CT_EQ(syscall(SYS_getrandom, a, sizeof(a), 0x4 /* GRND_INSECURE */), sizeof(a));
	CT_ERR(syscall(SYS_getrandom, a, sizeof(a), 0x4 | GRND_RANDOM), EINVAL);
	CT_ERR(syscall(SYS_getrandom, a, sizeof(a), 0x80), EINVAL);
	CT_ERR(syscall(SYS_getrandom, (void *)8, sizeof(a), 0), EFAULT);
}
