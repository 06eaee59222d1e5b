/*
 * Pseudo-terminals the program makes itself (/dev/ptmx, /dev/pts): what script, expect, pexpect,
 * Python's pty module and ssh -t use. Each case makes its own and closes it.
 */
#include "compat_test.h"

#include <fcntl.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

/* A new pseudo-terminal's master, unlocked; its slave's name in name. */
static int new_master(char *name, size_t size)
{
	int m = CT_OK(posix_openpt(O_RDWR | O_NOCTTY));
	CT_OK(grantpt(m));
	CT_OK(unlockpt(m));
	CT_OK(ptsname_r(m, name, size));
	return m;
}

/* Read from fd into buf (size bytes) until want bytes came, or the end (EIO once the other side
 * is gone). Returns how many came. */
static size_t read_some(int fd, char *buf, size_t size, size_t want)
{
	size_t got = 0;
	while (got < want && got < size) {
		ssize_t k = read(fd, buf + got, size - got);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	return got;
}

CT_TEST(ioctl, pty_pair)
{
	char name[64];
	int m = new_master(name, sizeof(name));
	CT_TRUE(strncmp(name, "/dev/pts/", 9) == 0);
	unsigned n;
	CT_OK(ioctl(m, TIOCGPTN, &n));
	CT_EQ(n, strtoul(name + 9, NULL, 10));
	int s = CT_OK(open(name, O_RDWR | O_NOCTTY));
	CT_TRUE(isatty(s));
	char tn[64];
	CT_OK(ttyname_r(s, tn, sizeof(tn)));
	CT_TRUE(strcmp(tn, name) == 0);
	struct stat a, b;
	CT_OK(stat(name, &a));
	CT_OK(fstat(s, &b));
	CT_TRUE(S_ISCHR(a.st_mode) && a.st_rdev == b.st_rdev && a.st_ino == b.st_ino);
	CT_EQ(a.st_mode & 0606,
	      0600); /* its owner's, maybe the tty group's (mode=620), no one else's */
	/* A line typed on the master is read on the slave, and the slave's output on the master
	 * (echo off: only what the slave writes comes back). */
	struct termios tio;
	CT_OK(tcgetattr(s, &tio));
	tio.c_lflag &= ~(tcflag_t)ECHO;
	CT_OK(tcsetattr(s, TCSANOW, &tio));
	CT_EQ(write(m, "ping\n", 5), 5);
	char buf[64];
	CT_EQ(read(s, buf, sizeof(buf)), 5);
	CT_TRUE(memcmp(buf, "ping\n", 5) == 0);
	CT_EQ(write(s, "pong", 4), 4);
	CT_EQ(read_some(m, buf, sizeof(buf), 4), 4);
	CT_TRUE(memcmp(buf, "pong", 4) == 0);
	close(s);
	close(m);
}

CT_TEST(ioctl, pty_locked_until_unlockpt)
{
	int m = CT_OK(posix_openpt(O_RDWR | O_NOCTTY));
	char name[64];
	CT_OK(ptsname_r(m, name, sizeof(name)));
	CT_ERR(open(name, O_RDWR | O_NOCTTY), EIO);
	CT_OK(unlockpt(m));
	int s = CT_OK(open(name, O_RDWR | O_NOCTTY));
	close(s);
	close(m);
}

CT_TEST(ioctl, pty_peer)
{
	char name[64];
	int m = new_master(name, sizeof(name));
	int s = CT_OK(ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY));
	char tn[64];
	CT_OK(ttyname_r(s, tn, sizeof(tn)));
	CT_TRUE(strcmp(tn, name) == 0);
	close(s);
	close(m);
}

/* A new session has no terminal; the one it takes (TIOCSCTTY, as login_tty does) is /dev/tty. */
CT_TEST(open, dev_tty_of_new_session)
{
	char name[64];
	int m = new_master(name, sizeof(name));
	pid_t pid = fork();
	if (pid == 0) {
		if (setsid() < 0)
			_exit(10);
		if (open("/dev/tty", O_RDWR) >= 0 || errno != ENXIO)
			_exit(11);
		int s = open(name, O_RDWR);
		if (s < 0 || ioctl(s, TIOCSCTTY, 0) < 0)
			_exit(12);
		int t = open("/dev/tty", O_RDWR);
		if (t < 0 || write(t, "via tty", 7) != 7)
			_exit(13);
		_exit(0);
	}
	CT_TRUE(pid > 0);
	char buf[64];
	size_t got = read_some(m, buf, sizeof(buf), 7);
	int st = ct_wait(pid);
	CT_TRUE(WIFEXITED(st));
	CT_EQ(WEXITSTATUS(st), 0);
	CT_TRUE(got >= 7 && memmem(buf, got, "via tty", 7) != NULL);
	close(m);
}

/* forkpty: the child's stdio is the new terminal, its own controlling one. */
CT_TEST(ioctl, forkpty_child)
{
	int m;
	pid_t pid = forkpty(&m, NULL, NULL, NULL);
	CT_TRUE(pid >= 0);
	if (pid == 0) {
		char *n = ttyname(0);
		int t = open("/dev/tty", O_RDWR);
		printf("%s %d\n", n && !strncmp(n, "/dev/pts/", 9) ? "pts" : "none", t >= 0);
		fflush(stdout);
		_exit(0);
	}
	char buf[128];
	buf[read_some(m, buf, sizeof(buf) - 1, sizeof(buf) - 1)] = '\0';
	CT_EQ(WEXITSTATUS(ct_wait(pid)), 0);
	CT_TRUE(strstr(buf, "pts 1") != NULL);
	close(m);
}
