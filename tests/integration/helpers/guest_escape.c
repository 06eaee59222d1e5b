/*
 * Attacks on the ptrace-stop machinery of the sentry itself (cbox-test-guest inject-race,
 * install-theft): each prints what the attacker got, which must be nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"

#ifndef CLONE_CLEAR_SIGHAND
#define CLONE_CLEAR_SIGHAND 0x100000000ULL
#endif

/*
 * inject-race. For clone3's CLONE_CLEAR_SIGHAND the sentry runs rt_sigaction inside the new
 * child before it first runs, by rewinding it onto the clone3's own syscall instruction. That
 * instruction is in the guest's memory: here a thread sharing it turns it into a jump to
 * race_payload, which makes clone(CLONE_NEWUSER | CLONE_UNTRACED) instead (a call the filter
 * sends to the sentry, which would take CLONE_UNTRACED out and refuse the namespace). The
 * sentry must not let that call run: a grandchild made by it, untraced in a user namespace of
 * its own, writes a byte to a pipe. Prints "inject-race escaped N" (N such grandchildren).
 */
static volatile int race_ptid, race_go;
int race_pipe_w = -1;

extern char race_syscall[], race_payload[];
long race_clone3(void *args, size_t size);

asm(".pushsection .text.cbox_race, \"awx\"\n"
    ".balign 4096\n"
    ".globl race_clone3\n"
    "race_clone3:\n"
    "  mov $435, %eax\n"
    ".globl race_syscall\n"
    "race_syscall:\n"
    "  syscall\n"
    "  test %rax, %rax\n"
    "  jz 1f\n"
    "  ret\n"
    "1:\n" /* the child, on its own stack: exit(0) */
    "  mov $60, %eax\n"
    "  xor %edi, %edi\n"
    "  syscall\n"
    "  ud2\n"
    ".globl race_payload\n"
    "race_payload:\n" /* clone(CLONE_NEWUSER | CLONE_UNTRACED | SIGCHLD, 0, 0, 0, 0) */
    "  mov $56, %eax\n"
    "  mov $0x10800011, %edi\n"
    "  xor %esi, %esi\n"
    "  xor %edx, %edx\n"
    "  xor %r10d, %r10d\n"
    "  xor %r8d, %r8d\n"
    "  syscall\n"
    "  test %rax, %rax\n"
    "  jnz 2f\n"
    "  mov $1, %eax\n" /* the grandchild: write(race_pipe_w, "!", 1), exit_group(0) */
    "  mov race_pipe_w(%rip), %edi\n"
    "  lea race_mark(%rip), %rsi\n"
    "  mov $1, %edx\n"
    "  syscall\n"
    "  mov $231, %eax\n"
    "  xor %edi, %edi\n"
    "  syscall\n"
    "2:\n"
    "  mov $60, %eax\n"
    "  xor %edi, %edi\n"
    "  syscall\n"
    "  ud2\n"
    "race_mark: .ascii \"!\"\n"
    ".balign 4096\n"
    ".popsection\n");

static void *race_patcher(void *arg)
{
	(void)arg;
	while (!race_go || !race_ptid)
		;
	int8_t rel = (int8_t)(race_payload - (race_syscall + 2));
	uint16_t jmp = (uint16_t)(0xeb | ((uint16_t)(uint8_t)rel << 8)); /* jmp rel8 */
	__atomic_store_n((uint16_t *)(void *)race_syscall, jmp, __ATOMIC_SEQ_CST);
	return NULL;
}

static void race_handler(int sig)
{
	(void)sig;
}

int cmd_inject_race(void)
{
	uintptr_t page = (uintptr_t)race_syscall & ~4095UL;
	int p[2];
	if (race_payload - (race_syscall + 2) > 127 || pipe2(p, O_CLOEXEC) < 0 ||
	    mprotect((void *)page, 4096, PROT_READ | PROT_WRITE | PROT_EXEC) < 0) {
		perror("inject-race: setting up");
		return 2;
	}
	race_pipe_w = p[1];
	signal(SIGUSR1, race_handler); /* a caught signal: CLONE_CLEAR_SIGHAND has work to do */
	static char stack[1 << 16] __attribute__((aligned(16)));
	int attempts = 0;
	for (; attempts < 10; attempts++) {
		race_ptid = 0;
		race_go = 0;
		memcpy(race_syscall, "\x0f\x05", 2);
		pthread_t th;
		if (pthread_create(&th, NULL, race_patcher, NULL) != 0)
			return 2;
		struct clone_args a;
		memset(&a, 0, sizeof(a));
		a.flags = CLONE_VM | CLONE_PARENT_SETTID | CLONE_CLEAR_SIGHAND;
		a.exit_signal = SIGCHLD;
		a.stack = (uint64_t)(uintptr_t)stack;
		a.stack_size = sizeof(stack);
		a.parent_tid = (uint64_t)(uintptr_t)&race_ptid;
		race_go = 1;
		long pid = race_clone3(&a, sizeof(a));
		if (pid < 0) {
			race_ptid = -1; /* (lets the patcher end) */
			pthread_join(th, NULL);
			printf("inject-race clone3 %s\n", errname((int)-pid));
			return 1;
		}
		pthread_join(th, NULL);
		waitpid((pid_t)pid, NULL, __WALL);
	}
	memcpy(race_syscall, "\x0f\x05", 2);
	/* (a grandchild, if any, is no child of ours: give it time to write) */
	close(p[1]);
	struct timespec pause = {0, 300 * 1000 * 1000};
	nanosleep(&pause, NULL);
	char marks[16];
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	ssize_t escaped = read(p[0], marks, sizeof(marks));
	printf("inject-race escaped %d\n", escaped > 0 ? (int)escaped : 0);
	return escaped > 0 ? 1 : 0;
}

/*
 * reserved-fd: fd 1022, where the ptrace platform keeps each task's install socket, named in the
 * calls the sentry answers on an fd (fstat, getdents64, bind, openat from it) and in those that
 * would copy it (dup, fcntl F_DUPFD). Each must find it closed, as on the seccomp platform and
 * natively, where no fd sits there. Prints "reserved-fd" and the six errors.
 */
int cmd_reserved_fd(void)
{
	struct stat st;
	char buf[256];
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/reserved-fd.sock");
	const char *e[6];
	e[0] = fstat(1022, &st) < 0 ? errname(errno) : "OK";
	e[1] = syscall(SYS_getdents64, 1022, buf, sizeof(buf)) < 0 ? errname(errno) : "OK";
	e[2] = bind(1022, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? errname(errno) : "OK";
	e[3] = openat(1022, "x", O_RDONLY) < 0 ? errname(errno) : "OK";
	e[4] = dup(1022) < 0 ? errname(errno) : "OK";
	e[5] = fcntl(1022, F_DUPFD_CLOEXEC, 0) < 0 ? errname(errno) : "OK";
	printf("reserved-fd %s %s %s %s %s %s\n", e[0], e[1], e[2], e[3], e[4], e[5]);
	return 0;
}

/* The thieves' loop: recvmsg on fd 1022 without pause for two seconds; how many fds it got. */
static int read_install_fd(void)
{
	int stolen = 0;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		char b[8];
		struct iovec iov = {b, sizeof(b)};
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(int))];
		} c;
		struct msghdr m = {.msg_iov = &iov,
		                   .msg_iovlen = 1,
		                   .msg_control = c.buf,
		                   .msg_controllen = sizeof(c.buf)};
		if (syscall(SYS_recvmsg, 1022, &m, MSG_DONTWAIT) >= 0 &&
		    m.msg_controllen >= CMSG_LEN(sizeof(int)))
			stolen++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 2);
	return stolen;
}

/*
 * install-theft FILE (run as root). On the ptrace platform the sentry passes each fd it opens
 * for a task through that task's install socket, at fd 1022. A child that dropped to nobody
 * reads its own fd 1022 without pause while its root parent opens FILE (mode 0600) over and
 * over: it must get none of the parent's fds. Before it drops, still root, it asks for the
 * parent's fd 1022 with pidfd_getfd, which must look closed (EBADF), as fd 1022 does in the
 * guest. Prints "install-theft getfd ERR stolen N" (N fds taken). With LIMIT, the fd limit
 * (soft and hard, as `ulimit -n LIMIT`) is set first: below 1023 no fd can sit at 1022, and
 * the sentry then gives each install a socket of its own.
 */
int cmd_install_theft(int argc, char **argv)
{
	if (argc < 1)
		return 2;
	if (argc > 1) {
		struct rlimit lim = {.rlim_cur = strtoul(argv[1], NULL, 10),
		                     .rlim_max = strtoul(argv[1], NULL, 10)};
		if (setrlimit(RLIMIT_NOFILE, &lim) < 0)
			return 2;
	}
	int pipefd[2];
	if (pipe(pipefd) < 0)
		return 2;
	pid_t thief = fork();
	if (thief == 0) {
		close(pipefd[0]);
		int pidfd = (int)syscall(SYS_pidfd_open, getppid(), 0);
		int got = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, 1022, 0);
		int getfd_err = got < 0 ? errno : 0;
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(2);
		int stolen = read_install_fd();
		int answer[2] = {getfd_err, stolen};
		_exit(write(pipefd[1], answer, sizeof(answer)) == sizeof(answer) ? 0 : 2);
	}
	close(pipefd[1]);
	int opens = 0;
	while (waitpid(thief, NULL, WNOHANG) == 0) {
		int fd = open(argv[0], O_RDONLY);
		if (fd < 0) {
			printf("install-theft open %s\n", errname(errno));
			kill(thief, SIGKILL);
			break;
		}
		close(fd);
		opens++;
	}
	int answer[2] = {0, -1};
	if (read(pipefd[0], answer, sizeof(answer)) != sizeof(answer))
		answer[1] = -1;
	waitpid(thief, NULL, 0);
	printf("install-theft getfd %s stolen %d%s\n", answer[0] ? errname(answer[0]) : "OK",
	       answer[1], opens > 0 ? "" : " (no open made)");
	return answer[0] == EBADF && answer[1] == 0 && opens > 0 ? 0 : 1;
}

/* exec-theft's thief: reads fd 1022 for two seconds as nobody; the count goes to fd out. */
static int exec_thief(void *arg)
{
	int out = *(int *)arg;
	if (setgid(65534) < 0 || setuid(65534) < 0)
		_exit(2);
	int stolen = read_install_fd();
	_exit(write(out, &stolen, sizeof(stolen)) == sizeof(stolen) ? 0 : 2);
}

/*
 * exec-theft FILE (run as root). A process made with CLONE_FILES shares its parent's fd
 * table, and so the parent's install socket, until the parent execs (which unshares the
 * table). Here that process drops to nobody and reads fd 1022, while the parent execs and its
 * new image (exec-theft-victim) opens FILE (mode 0600) over and over: the new image must have
 * a socket the other process does not hold. With "unshare", the parent unshares its table
 * (unshare(CLONE_FILES)) before the exec; with "unshare-only", it unshares and opens FILE in
 * the same image, with no exec. Prints "exec-theft stolen N".
 */
int cmd_exec_theft(int argc, char **argv, const char *self)
{
	if (argc < 1)
		return 2;
	int p[2];
	if (pipe(p) < 0)
		return 2;
	static char stack[1 << 16] __attribute__((aligned(16)));
	int out = p[1];
	pid_t thief = clone(exec_thief, stack + sizeof(stack), CLONE_FILES | SIGCHLD, &out);
	if (thief < 0)
		return 2;
	bool no_exec = argc > 1 && !strcmp(argv[1], "unshare-only");
	if (argc > 1 && (no_exec || !strcmp(argv[1], "unshare")) &&
	    syscall(SYS_unshare, CLONE_FILES) < 0)
		return 2;
	char rd[16];
	snprintf(rd, sizeof(rd), "%d", p[0]);
	if (no_exec) {
		char *victim[] = {argv[0], rd, NULL};
		return cmd_exec_theft_victim(2, victim);
	}
	execl(self, self, "exec-theft-victim", argv[0], rd, (char *)NULL);
	return 2;
}

/* exec-theft's new image: opens FILE until the thief's count comes on fd RD. */
int cmd_exec_theft_victim(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	int rd = atoi(argv[1]), stolen = -1, opens = 0;
	fcntl(rd, F_SETFL, O_NONBLOCK);
	for (;;) {
		ssize_t n = read(rd, &stolen, sizeof(stolen));
		if (n == sizeof(stolen))
			break;
		if (n == 0) { /* (the thief died without a count) */
			stolen = -1;
			break;
		}
		int fd = open(argv[0], O_RDONLY);
		if (fd >= 0) {
			close(fd);
			opens++;
		}
	}
	wait(NULL);
	printf("exec-theft stolen %d%s\n", stolen, opens > 0 ? "" : " (no open made)");
	return stolen == 0 && opens > 0 ? 0 : 1;
}
