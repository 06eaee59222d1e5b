/*
 * Consoles of the OCI runtime (process.terminal), as runc handles them: the pty's master goes
 * over the caller's --console-socket (SCM_RIGHTS, with "/dev/ptmx" as the payload); without
 * one, cbox holds the master itself and relays the caller's terminal (cbox run, cbox exec -t).
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox/fdpass.h"
#include "cbox/log.h"
#include "cbox_run.h"
#include "oci_cli.h"

int cbox_oci_console_connect(const char *path, struct cbox_err **err)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(a.sun_path))
		return cbox_err_set(err, ENAMETOOLONG, "--console-socket %s", path);
	strcpy(a.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return cbox_err_set(err, e, "connect to --console-socket %s", path);
	}
	return fd;
}

/* The terminal's master, sent by the process over sock (SCM_RIGHTS), or -1. */
int cbox_oci_console_recv(int sock, struct cbox_err **err)
{
	char name[4096];
	int fd = -1, got = 0;
	ssize_t n = cbox_recv_fds(sock, name, sizeof(name), &fd, 1, &got, 0);
	if (n <= 0 || got != 1) {
		if (got == 1)
			close(fd);
		return cbox_err_set(err, n < 0 ? (int)-n : EPROTO, "receive the terminal");
	}
	return fd;
}

/* Copy between the caller's terminal and the process's until it exits (cbox_run_tty.c, as
 * cbox-run -t); its status as a shell's. */
int cbox_oci_console_relay(int master, pid_t pid)
{
	struct cbox_run_tty t = {.master = master, .slave = -1};
	struct winsize ws;
	if (isatty(0) && ioctl(0, TIOCGWINSZ, &ws) == 0)
		ioctl(master, TIOCSWINSZ, &ws);
	int status = 0;
	if (cbox_run_tty_relay(&t, pid, &status) < 0)
		return 1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}
