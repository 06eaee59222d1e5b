#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/audit.h>

#include "cbox/cleanup.h"
#include "cbox/elf.h"
#include "cbox/loader_abi.h"

/* Where this test supervisor puts the loader before execveat (any free fd would do). */
#define SUPERVISOR_LOADER_FD 1023
#include "supervisor.h"

static char *const test_envp[] = {"PATH=/usr/bin:/bin", "CBOX_LOADER_TEST=1", NULL};

/* Child side: trap only ioctl, hand the listener to the parent, exec the loader. */
static int install_filter(void)
{
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
	                    &prog);
}

static int send_fd(int sock, int fd)
{
	char data = 'L';
	struct iovec iov = {.iov_base = &data, .iov_len = 1};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} c;
	struct msghdr msg = {.msg_iov = &iov,
	                     .msg_iovlen = 1,
	                     .msg_control = c.buf,
	                     .msg_controllen = sizeof(c.buf)};
	memset(&c, 0, sizeof(c));
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char data;
	struct iovec iov = {.iov_base = &data, .iov_len = 1};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} c;
	struct msghdr msg = {.msg_iov = &iov,
	                     .msg_iovlen = 1,
	                     .msg_control = c.buf,
	                     .msg_controllen = sizeof(c.buf)};
	int fd;
	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* Put the loader image at SUPERVISOR_LOADER_FD, without O_CLOEXEC as the ABI requires. */
static int place_loader(void)
{
	int fd = memfd_create("cbox-loader", MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	if (write(fd, cbox_loader_image, cbox_loader_image_size) != (ssize_t)cbox_loader_image_size)
		return -1;
	if (dup2(fd, SUPERVISOR_LOADER_FD) < 0)
		return -1;
	close(fd);
	return 0;
}

__attribute__((noreturn)) static void child(int sock, int out, char *const argv[], int trap)
{
	dup2(out, 1);
	dup2(out, 2);
	if (place_loader() < 0) {
		perror("place loader");
		_exit(126);
	}
	if (trap) {
		int listener = install_filter();
		if (listener < 0 || send_fd(sock, listener) < 0) {
			perror("seccomp listener");
			_exit(126);
		}
		close(listener);
	}
	syscall(SYS_execveat, SUPERVISOR_LOADER_FD, "", argv, test_envp, AT_EMPTY_PATH);
	perror("execveat loader");
	_exit(126);
}

/* Install fd in the trapped task; returns the task's fd number or -1. */
static int addfd(int listener, __u64 id, int fd)
{
	struct seccomp_notif_addfd a = {.id = id, .srcfd = (__u32)fd, .newfd_flags = O_CLOEXEC};
	return ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
}

/* Open the interpreter named in prog's PT_INTERP, or return -1 when it has none. */
static int open_interp(int fd, struct sup_result *res)
{
	unsigned char buf[CBOX_ELF_HEADER_BYTES];
	char path[CBOX_ELF_INTERP_MAX];
	struct cbox_elf_info info;
	struct stat st;
	ssize_t n = pread(fd, buf, sizeof(buf), 0);

	if (n < 0 || fstat(fd, &st) < 0)
		return -1;
	res->parse_rc = cbox_elf_parse(buf, (size_t)n, (uint64_t)st.st_size, &info);
	if (res->parse_rc < 0 || !info.has_interp)
		return -1;
	if (pread(fd, path, info.interp_len, (off_t)info.interp_offset) != info.interp_len ||
	    cbox_elf_check_interp(path, info.interp_len) < 0)
		return -1;
	return open(path, O_RDONLY | O_CLOEXEC);
}

static int answer_loader(int listener, const struct seccomp_notif *req, const char *prog,
                         const char *execfn, struct sup_result *res)
{
	CBOX_AUTOCLOSE int fd = open(prog, O_RDONLY | O_CLOEXEC);
	CBOX_AUTOCLOSE int ifd = -1;
	struct cbox_loader_info info = {.version = CBOX_LOADER_ABI_VERSION, .interp_fd = -1};

	if (fd < 0)
		return -errno;
	ifd = open_interp(fd, res);
	info.elf_fd = addfd(listener, req->id, fd);
	if (info.elf_fd < 0)
		return -errno;
	if (ifd >= 0 && (info.interp_fd = addfd(listener, req->id, ifd)) < 0)
		return -errno;
	snprintf(info.execfn, sizeof(info.execfn), "%s", execfn);
	struct iovec local = {.iov_base = &info, .iov_len = sizeof(info)};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)req->data.args[2],
	                       .iov_len = sizeof(info)};
	if (process_vm_writev(req->pid, &local, 1, &remote, 1, 0) != sizeof(info))
		return -EFAULT;
	/* The pid could have been reused between RECV and the write: only trust the write if the
	 * notification is still pending. */
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0)
		return -ESRCH;
	res->loader_ioctls++;
	return 0;
}

static void handle_notif(int listener, const char *prog, const char *execfn, struct sup_result *res)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;

	memset(&req, 0, sizeof(req));
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
		return;
	memset(&resp, 0, sizeof(resp));
	resp.id = req.id;
	if (req.data.nr == __NR_ioctl && (int)req.data.args[0] == CBOX_LOADER_IOCTL_FD &&
	    (uint32_t)req.data.args[1] == CBOX_LOADER_IOCTL) {
		int rc = answer_loader(listener, &req, prog, execfn, res);
		resp.error = rc < 0 ? rc : 0;
	} else {
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	}
	ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

static void drain(int out, struct sup_result *res, int *open_)
{
	size_t room = sizeof(res->out) - 1 - res->out_len;
	char sink[4096];
	ssize_t n = room ? read(out, res->out + res->out_len, room) : read(out, sink, sizeof(sink));
	if (n <= 0) {
		*open_ = 0;
		return;
	}
	if (room)
		res->out_len += (size_t)n;
	res->out[res->out_len] = '\0';
}

/* Serve notifications and collect output until the child is gone or the deadline passes. */
static void serve(pid_t pid, int listener, int out, const char *prog, const char *execfn,
                  struct sup_result *res)
{
	time_t deadline = time(NULL) + 20;
	int out_open = 1;

	while (out_open || listener >= 0) {
		struct pollfd p[2] = {{.fd = out, .events = POLLIN},
		                      {.fd = listener, .events = POLLIN}};
		if (!out_open)
			p[0].fd = -1;
		if (time(NULL) > deadline) {
			kill(pid, SIGKILL);
			break;
		}
		if (poll(p, 2, 200) <= 0)
			continue;
		if (p[0].revents)
			drain(out, res, &out_open);
		if (p[1].revents & POLLIN)
			handle_notif(listener, prog, execfn, res);
		else if (p[1].revents & (POLLHUP | POLLERR | POLLNVAL)) {
			close(listener);
			listener = -1;
		}
	}
	if (listener >= 0)
		close(listener);
	waitpid(pid, &res->status, 0);
}

static int run(const char *prog, const char *execfn, char *const argv[], int trap,
               struct sup_result *res)
{
	int sv[2], pipefd[2];
	int listener = -1;

	memset(res, 0, sizeof(*res));
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
	    pipe2(pipefd, O_CLOEXEC) < 0) {
		perror("socketpair/pipe");
		return -1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return -1;
	}
	if (pid == 0)
		child(sv[1], pipefd[1], argv, trap);
	close(sv[1]);
	close(pipefd[1]);
	if (trap)
		listener = recv_fd(sv[0]);
	close(sv[0]);
	serve(pid, listener, pipefd[0], prog, execfn, res);
	close(pipefd[0]);
	return 0;
}

int sup_run(const char *prog, const char *execfn, char *const argv[], struct sup_result *res)
{
	return run(prog, execfn, argv, 1, res);
}

int sup_run_bare(char *const argv[], struct sup_result *res)
{
	return run(NULL, NULL, argv, 0, res);
}
