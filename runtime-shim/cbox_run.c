/* cbox-run: run one program in a new sentry sandbox. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox/crash.h"
#include "cbox/gofer.h"
#include "cbox/log.h"
#include "cbox/sentry.h"

extern char **environ;

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: cbox-run [OPTIONS] -- PROGRAM [ARGS...]\n"
	    "Run PROGRAM in a new cbox sandbox: a user-space kernel (the sentry) answers its\n"
	    "system calls; it sees the root file system read-only and no network.\n\n"
	    "  --platform=seccomp|ptrace  how guest syscalls are trapped (default: seccomp)\n"
	    "                             e.g. cbox-run --platform=ptrace -- /bin/busybox true\n"
	    "  --strict                   no fast path: the sentry sees every syscall\n"
	    "                             e.g. cbox-run --strict -- /bin/busybox ls /\n"
	    "  --strace                   print each guest syscall and what the sentry did\n"
	    "                             e.g. cbox-run --strace -- /bin/busybox true\n"
	    "  --rootfs DIR               the guest's root file system, read-only (default: /)\n"
	    "                             e.g. cbox-run --rootfs /srv/rootfs -- /bin/sh\n"
	    "  --log-level=LEVEL          error, warning (default), info or debug\n"
	    "  --log-format=FORMAT        text (default) or json\n"
	    "  -h, --help                 this help\n\n"
	    "Exit status: the program's; 128+N when it was killed by signal N; 127 when it does\n"
	    "not exist; 126 when it cannot be executed; 125 when the sandbox could not be set "
	    "up.\n");
}

struct opts {
	const char *platform;
	const char *rootfs;
	bool strict, strace;
	int level, format;
};

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {{"platform", required_argument, NULL, 'p'},
	                                         {"strict", no_argument, NULL, 's'},
	                                         {"strace", no_argument, NULL, 't'},
	                                         {"rootfs", required_argument, NULL, 'r'},
	                                         {"log-level", required_argument, NULL, 'l'},
	                                         {"log-format", required_argument, NULL, 'f'},
	                                         {"help", no_argument, NULL, 'h'},
	                                         {NULL, 0, NULL, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->platform = optarg;
			break;
		case 's':
			o->strict = true;
			break;
		case 't':
			o->strace = true;
			break;
		case 'r':
			o->rootfs = optarg;
			break;
		case 'l':
			o->level = cbox_log_level_parse(optarg);
			if (o->level < 0) {
				fprintf(stderr, "cbox-run: unknown log level '%s'\n", optarg);
				return -1;
			}
			break;
		case 'f':
			o->format = cbox_log_format_parse(optarg);
			if (o->format < 0) {
				fprintf(stderr, "cbox-run: unknown log format '%s'\n", optarg);
				return -1;
			}
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "cbox-run: no program given\n");
		usage(stderr);
		return -1;
	}
	return optind;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, s, strlen(s));
	int e = errno;
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -e;
}

/*
 * The sandbox's user namespace maps its uid 0 to an unprivileged host uid: nobody (65534) when
 * cbox-run runs as root, else the caller's own uid. Whatever the sentry or a guest holds, the
 * host sees it as that uid.
 */
static int map_ids(pid_t pid)
{
	char path[64], map[64];
	uid_t uid = geteuid() == 0 ? 65534 : geteuid();
	gid_t gid = geteuid() == 0 ? 65534 : getegid();
	snprintf(path, sizeof(path), "/proc/%d/setgroups", pid);
	int r = write_str(path, "deny");
	if (r < 0 && r != -ENOENT)
		return r;
	snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
	snprintf(map, sizeof(map), "0 %u 1\n", gid);
	if ((r = write_str(path, map)) < 0)
		return r;
	snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
	snprintf(map, sizeof(map), "0 %u 1\n", uid);
	return write_str(path, map);
}

static pid_t sentry_pid;

static void on_signal(int sig)
{
	(void)sig;
	if (sentry_pid > 0)
		kill(sentry_pid, SIGKILL);
}

static int run(struct opts *o, char **argv)
{
	const struct cbox_platform_ops *platform = cbox_platform_find(o->platform);
	if (!platform) {
		fprintf(stderr, "cbox-run: unknown platform '%s' (use seccomp or ptrace)\n",
		        o->platform);
		return 125;
	}
	struct cbox_gofer_config gc = {.rootfs = o->rootfs, .readonly = true};
	struct cbox_err *err = NULL;
	int gsock;
	pid_t gpid;
	if (cbox_gofer_spawn(&gc, &gsock, &gpid, &err) < 0) {
		cbox_err_report(&err, "cbox-run: starting the gofer");
		return 125;
	}
	int sync[2];
	if (pipe2(sync, O_CLOEXEC) < 0)
		return 125;
	/* With the host root as the guest's root, the guest starts where the caller stands (as
	 * with bwrap --ro-bind / /); with another rootfs, at its root. */
	char cwd[4096] = "/";
	if (strcmp(o->rootfs, "/") == 0 && !getcwd(cwd, sizeof(cwd)))
		strcpy(cwd, "/");
	struct cbox_sentry_config cfg = {.platform = platform,
	                                 .strict = o->strict,
	                                 .strace = o->strace,
	                                 .gofer_sock = gsock,
	                                 .argv = argv,
	                                 .envp = environ,
	                                 .cwd = cwd,
	                                 .hostname = "cbox"};
	pid_t pid = (pid_t)syscall(SYS_clone,
	                           CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
	                               CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD,
	                           0, 0, 0, 0);
	if (pid < 0) {
		cbox_error("creating the sandbox's namespaces: %s", strerror(errno));
		return 125;
	}
	if (pid == 0) {
		close(sync[1]);
		cbox_log_set_who("sentry");
		char c;
		if (read(sync[0], &c, 1) != 1)
			_exit(125);
		close(sync[0]);
		if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
			cbox_die(125, "becoming root in the sandbox's user namespace: %s",
			         strerror(errno));
		_exit(cbox_sentry_main(&cfg));
	}
	close(sync[0]);
	close(gsock);
	sentry_pid = pid;
	int r = map_ids(pid);
	if (r < 0) {
		cbox_error("writing the sandbox's uid/gid maps: %s", strerror(-r));
		kill(pid, SIGKILL);
		return 125;
	}
	if (write(sync[1], "g", 1) != 1)
		return 125;
	close(sync[1]);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 125;
	kill(gpid, SIGKILL);
	waitpid(gpid, NULL, 0);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	cbox_error("the sentry died of signal %d", WTERMSIG(status));
	return 125;
}

int main(int argc, char **argv)
{
	struct opts o = {.platform = "seccomp", .rootfs = "/", .level = CBOX_LOG_WARNING};
	int first = parse(argc, argv, &o);
	if (first < 0)
		return 125;
	cbox_log_init(2, (enum cbox_log_format)o.format, (enum cbox_log_level)o.level, "cbox-run");
	cbox_crash_install();
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	return run(&o, argv + first);
}
