/*
 * Compatibility cases: descriptor operations (fcntl, dup, dup2, dup3, flock, ioctl) and
 * flushing (sync, fsync, fdatasync, syncfs, sync_file_range).
 */
#include "compat_test.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static int make_file(const char *path, const char *text)
{
	int fd = CT_OK(open(path, O_CREAT | O_RDWR | O_TRUNC, 0644));
	CT_EQ(write(fd, text, strlen(text)), strlen(text));
	CT_OK(lseek(fd, 0, SEEK_SET));
	return fd;
}

/* Fork a child that runs fn(arg) and return its exit code (or 100+signal). */
static int in_child(int (*fn)(int), int arg)
{
	pid_t pid = CT_OK(fork());
	if (pid == 0)
		_exit(fn(arg));
	int st = ct_wait(pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

CT_TEST(fcntl, getfd_setfd)
{
	int fd = make_file("f", "");
	CT_EQ(fcntl(fd, F_GETFD), 0);
	CT_OK(fcntl(fd, F_SETFD, FD_CLOEXEC));
	CT_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CT_OK(fcntl(fd, F_SETFD, 0));
	CT_EQ(fcntl(fd, F_GETFD), 0);
}

CT_TEST(fcntl, getfl_setfl)
{
	int fd = make_file("f", "");
	CT_EQ(fcntl(fd, F_GETFL) & (O_ACCMODE | O_APPEND | O_NONBLOCK), O_RDWR);
	CT_OK(fcntl(fd, F_SETFL, O_APPEND | O_NONBLOCK | O_RDONLY));
	/* The access mode cannot change; the status flags can. */
	CT_EQ(fcntl(fd, F_GETFL) & (O_ACCMODE | O_APPEND | O_NONBLOCK),
	      O_RDWR | O_APPEND | O_NONBLOCK);
	CT_OK(lseek(fd, 0, SEEK_SET));
	CT_EQ(write(fd, "ab", 2), 2);
	CT_EQ(write(fd, "cd", 2), 2);
	CT_OK(fcntl(fd, F_SETFL, 0));
	CT_EQ(fcntl(fd, F_GETFL) & (O_APPEND | O_NONBLOCK), 0);
}

CT_TEST(fcntl, setfl_nonblock_pipe)
{
	int p[2];
	CT_OK(pipe(p));
	CT_OK(fcntl(p[0], F_SETFL, O_NONBLOCK));
	char c;
	CT_ERR(read(p[0], &c, 1), EAGAIN);
}

CT_TEST(fcntl, dupfd_lowest_above)
{
	int fd = make_file("f", "");
	int d = CT_OK(fcntl(fd, F_DUPFD, 100));
	CT_TRUE(d >= 100);
	int e = CT_OK(fcntl(fd, F_DUPFD, 100));
	CT_TRUE(e > d);
	CT_EQ(fcntl(d, F_GETFD), 0);
	int c = CT_OK(fcntl(fd, F_DUPFD_CLOEXEC, 0));
	CT_EQ(fcntl(c, F_GETFD), FD_CLOEXEC);
	CT_EQ(fcntl(fd, F_GETFD), 0);
}

CT_TEST(fcntl, dupfd_errors)
{
	int fd = make_file("f", "");
	CT_ERR(fcntl(fd, F_DUPFD, -1), EINVAL);
	struct rlimit rl;
	CT_OK(getrlimit(RLIMIT_NOFILE, &rl));
	CT_ERR(fcntl(fd, F_DUPFD, (int)rl.rlim_cur), EINVAL);
	CT_ERR(fcntl(-1, F_DUPFD, 0), EBADF);
}

CT_TEST(fcntl, errors)
{
	CT_ERR(fcntl(-1, F_GETFD), EBADF);
	CT_ERR(fcntl(9999, F_GETFL), EBADF);
	int fd = make_file("f", "");
	CT_ERR(syscall(SYS_fcntl, fd, 99999, 0), EINVAL);
}

static int child_getlk_wrlck(int fd)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10};
	if (fcntl(fd, F_GETLK, &fl) < 0)
		return 10;
	if (fl.l_type != F_WRLCK || fl.l_pid != getppid())
		return 11;
	struct flock try = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 5, .l_len = 1};
	if (fcntl(fd, F_SETLK, &try) == 0 || (errno != EAGAIN && errno != EACCES))
		return 12;
	struct flock beyond = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 10, .l_len = 5};
	if (fcntl(fd, F_SETLK, &beyond) < 0)
		return 13;
	return 0;
}

CT_TEST(fcntl, setlk_getlk_across_fork)
{
	int fd = make_file("f", "0123456789");
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10};
	CT_OK(fcntl(fd, F_SETLK, &fl));
	/* A process never conflicts with its own POSIX locks. */
	struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10};
	CT_OK(fcntl(fd, F_GETLK, &q));
	CT_EQ(q.l_type, F_UNLCK);
	CT_EQ(in_child(child_getlk_wrlck, fd), 0);
}

static int child_setlk_ok(int fd)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
	return fcntl(fd, F_SETLK, &fl) == 0 ? 0 : 1;
}

CT_TEST(fcntl, posix_lock_dropped_on_any_close)
{
	int fd = make_file("f", "x");
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
	CT_OK(fcntl(fd, F_SETLK, &fl));
	CT_EQ(in_child(child_setlk_ok, fd), 1);
	int other = CT_OK(open("f", O_RDONLY));
	CT_OK(close(other));
	/* Closing any descriptor of the file releases the process's POSIX locks. */
	CT_EQ(in_child(child_setlk_ok, fd), 0);
}

CT_TEST(fcntl, setlk_errors)
{
	int fd = make_file("f", "x");
	close(fd);
	fd = CT_OK(open("f", O_RDONLY));
	struct flock wr = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	CT_ERR(fcntl(fd, F_SETLK, &wr), EBADF);
	struct flock bad = {.l_type = 42, .l_whence = SEEK_SET};
	CT_ERR(fcntl(fd, F_SETLK, &bad), EINVAL);
	struct flock neg = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = -5};
	CT_ERR(fcntl(fd, F_SETLK, &neg), EINVAL);
	CT_ERR(fcntl(fd, F_SETLK, (void *)8), EFAULT);
}

CT_TEST(fcntl, ofd_locks_conflict_in_process)
{
	int a = make_file("f", "0123456789");
	int b = CT_OK(open("f", O_RDWR));
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 5};
	CT_OK(fcntl(a, F_OFD_SETLK, &fl));
	struct flock try = fl;
	/* Unlike POSIX locks, OFD locks belong to the open file, so b conflicts with a. */
	CT_ERR(fcntl(b, F_OFD_SETLK, &try), EAGAIN);
	struct flock q = fl;
	CT_OK(fcntl(b, F_OFD_GETLK, &q));
	CT_EQ(q.l_type, F_WRLCK);
	CT_EQ(q.l_pid, -1);
	fl.l_type = F_UNLCK;
	CT_OK(fcntl(a, F_OFD_SETLK, &fl));
	try.l_type = F_WRLCK;
	CT_OK(fcntl(b, F_OFD_SETLK, &try));
}

CT_TEST(fcntl, ofd_lock_needs_zero_pid)
{
	int fd = make_file("f", "x");
	struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_pid = 1};
	CT_ERR(fcntl(fd, F_OFD_SETLK, &fl), EINVAL);
	CT_ERR(fcntl(fd, F_OFD_GETLK, &fl), EINVAL);
}

CT_TEST(dup, lowest_and_shared_offset)
{
	int fd = make_file("f", "abcdef");
	int d = CT_OK(syscall(SYS_dup, fd));
	CT_TRUE(d > fd);
	CT_OK(lseek(fd, 3, SEEK_SET));
	char c;
	CT_EQ(read(d, &c, 1), 1);
	CT_EQ(c, 'd');
	CT_OK(close(fd));
	CT_EQ(syscall(SYS_dup, d), fd);
}

CT_TEST(dup, clears_cloexec_and_errors)
{
	int fd = CT_OK(open("/dev/null", O_RDONLY | O_CLOEXEC));
	int d = CT_OK(syscall(SYS_dup, fd));
	CT_EQ(fcntl(d, F_GETFD), 0);
	CT_ERR(syscall(SYS_dup, -1), EBADF);
	CT_ERR(syscall(SYS_dup, 9999), EBADF);
}

CT_TEST(dup2, replaces_target)
{
	int a = make_file("a", "A");
	int b = make_file("b", "B");
	CT_EQ(syscall(SYS_dup2, a, b), b);
	char c;
	CT_EQ(read(b, &c, 1), 1);
	CT_EQ(c, 'A');
	CT_EQ(syscall(SYS_dup2, a, 200), 200);
	CT_OK(fcntl(200, F_GETFD));
}

CT_TEST(dup2, same_fd_and_errors)
{
	int fd = CT_OK(open("/dev/null", O_RDONLY | O_CLOEXEC));
	CT_EQ(syscall(SYS_dup2, fd, fd), fd);
	/* dup2 onto itself leaves FD_CLOEXEC alone. */
	CT_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CT_ERR(syscall(SYS_dup2, 9999, 9999), EBADF);
	CT_ERR(syscall(SYS_dup2, fd, -1), EBADF);
	struct rlimit rl;
	CT_OK(getrlimit(RLIMIT_NOFILE, &rl));
	CT_ERR(syscall(SYS_dup2, fd, (long)rl.rlim_cur), EBADF);
}

CT_TEST(dup3, cloexec)
{
	int fd = CT_OK(open("/dev/null", O_RDONLY));
	CT_EQ(dup3(fd, 50, O_CLOEXEC), 50);
	CT_EQ(fcntl(50, F_GETFD), FD_CLOEXEC);
	CT_EQ(dup3(fd, 51, 0), 51);
	CT_EQ(fcntl(51, F_GETFD), 0);
}

CT_TEST(dup3, errors)
{
	int fd = CT_OK(open("/dev/null", O_RDONLY));
	CT_ERR(dup3(fd, fd, 0), EINVAL);
	CT_ERR(dup3(fd, 60, O_NONBLOCK), EINVAL);
	CT_ERR(dup3(9999, 60, 0), EBADF);
}

static int child_flock_nb(int unused)
{
	(void)unused;
	int fd = open("f", O_RDONLY);
	if (fd < 0)
		return 20;
	if (flock(fd, LOCK_SH | LOCK_NB) == 0)
		return 0;
	return errno == EWOULDBLOCK ? 1 : 21;
}

CT_TEST(flock, exclusive_blocks_others)
{
	int fd = make_file("f", "");
	CT_OK(flock(fd, LOCK_EX));
	int other = CT_OK(open("f", O_RDONLY));
	CT_ERR(flock(other, LOCK_EX | LOCK_NB), EWOULDBLOCK);
	CT_EQ(in_child(child_flock_nb, 0), 1);
	CT_OK(flock(fd, LOCK_UN));
	CT_OK(flock(other, LOCK_EX | LOCK_NB));
}

CT_TEST(flock, shared_compatible)
{
	int a = make_file("f", "");
	int b = CT_OK(open("f", O_RDONLY));
	CT_OK(flock(a, LOCK_SH));
	CT_OK(flock(b, LOCK_SH | LOCK_NB));
	CT_EQ(in_child(child_flock_nb, 0), 0);
	CT_ERR(flock(b, LOCK_EX | LOCK_NB), EWOULDBLOCK);
}

CT_TEST(flock, inherited_by_dup_and_fork)
{
	int fd = make_file("f", "");
	CT_OK(flock(fd, LOCK_EX));
	int d = CT_OK(dup(fd));
	/* The lock belongs to the open file: a dup can convert it without conflict. */
	CT_OK(flock(d, LOCK_EX | LOCK_NB));
	CT_OK(close(fd));
	CT_EQ(in_child(child_flock_nb, 0), 1);
	CT_OK(close(d));
	CT_EQ(in_child(child_flock_nb, 0), 0);
}

CT_TEST(flock, errors)
{
	CT_ERR(flock(-1, LOCK_EX), EBADF);
	int fd = make_file("f", "");
	CT_ERR(flock(fd, 0), EINVAL);
	CT_ERR(flock(fd, LOCK_SH | LOCK_EX), EINVAL);
}

CT_TEST(ioctl, fionread_pipe_and_file)
{
	int p[2];
	CT_OK(pipe(p));
	CT_EQ(write(p[1], "hello", 5), 5);
	int n = -1;
	CT_OK(ioctl(p[0], FIONREAD, &n));
	CT_EQ(n, 5);
	int fd = make_file("f", "0123456789");
	CT_OK(lseek(fd, 4, SEEK_SET));
	CT_OK(ioctl(fd, FIONREAD, &n));
	CT_EQ(n, 6);
}

CT_TEST(ioctl, fioclex_fionclex)
{
	int fd = CT_OK(open("/dev/null", O_RDONLY));
	CT_OK(ioctl(fd, FIOCLEX));
	CT_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	CT_OK(ioctl(fd, FIONCLEX));
	CT_EQ(fcntl(fd, F_GETFD), 0);
}

CT_TEST(ioctl, fionbio)
{
	int p[2];
	CT_OK(pipe(p));
	int on = 1;
	CT_OK(ioctl(p[0], FIONBIO, &on));
	CT_TRUE(fcntl(p[0], F_GETFL) & O_NONBLOCK);
	char c;
	CT_ERR(read(p[0], &c, 1), EAGAIN);
	on = 0;
	CT_OK(ioctl(p[0], FIONBIO, &on));
	CT_EQ(fcntl(p[0], F_GETFL) & O_NONBLOCK, 0);
}

CT_TEST(ioctl, errors)
{
	int n;
	CT_ERR(ioctl(-1, FIONREAD, &n), EBADF);
	int fd = make_file("f", "");
	struct termios t;
	CT_ERR(ioctl(fd, TCGETS, &t), ENOTTY);
	struct winsize ws;
	CT_ERR(ioctl(fd, TIOCGWINSZ, &ws), ENOTTY);
	/* The request is an unsigned int: bits above it are ignored. */
	CT_ERR(syscall(SYS_ioctl, fd, (1UL << 32) | TCGETS, &t), ENOTTY);
	int p[2];
	CT_OK(pipe(p));
	CT_ERR(ioctl(p[0], TCGETS, &t), ENOTTY);
	CT_ERR(ioctl(-1, TCGETS, &t), EBADF);
	CT_ERR(ioctl(p[0], FIONREAD, (void *)8), EFAULT);
}

CT_TEST(sync, succeeds)
{
	CT_OK(syscall(SYS_sync));
}

CT_TEST(sync, data_visible_after)
{
	int fd = make_file("f", "synced");
	syscall(SYS_sync);
	char buf[8] = {0};
	CT_EQ(pread(fd, buf, sizeof(buf), 0), 6);
	CT_STREQ(buf, "synced");
}

CT_TEST(syncfs, file_and_errors)
{
	int fd = make_file("f", "x");
	CT_OK(syncfs(fd));
	CT_ERR(syncfs(-1), EBADF);
}

CT_TEST(syncfs, pipe_ok)
{
	int p[2];
	CT_OK(pipe(p));
	CT_OK(syncfs(p[0]));
}

CT_TEST(fsync, file_and_dir)
{
	int fd = make_file("f", "x");
	CT_OK(fsync(fd));
	int d = CT_OK(open(".", O_RDONLY | O_DIRECTORY));
	CT_OK(fsync(d));
}

CT_TEST(fsync, errors)
{
	CT_ERR(fsync(-1), EBADF);
	int p[2];
	CT_OK(pipe(p));
	CT_ERR(fsync(p[0]), EINVAL);
}

CT_TEST(fdatasync, file)
{
	int fd = make_file("f", "x");
	CT_OK(fdatasync(fd));
	close(fd);
	fd = CT_OK(open("f", O_RDONLY));
	CT_OK(fdatasync(fd));
}

CT_TEST(fdatasync, errors)
{
	CT_ERR(fdatasync(-1), EBADF);
	int p[2];
	CT_OK(pipe(p));
	CT_ERR(fdatasync(p[1]), EINVAL);
}

CT_TEST(sync_file_range, flags)
{
	int fd = make_file("f", "0123456789");
	CT_OK(sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE));
	CT_OK(sync_file_range(fd, 0, 10,
	                      SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
	                          SYNC_FILE_RANGE_WAIT_AFTER));
	CT_OK(sync_file_range(fd, 0, 0, 0));
}

CT_TEST(sync_file_range, errors)
{
	int fd = make_file("f", "x");
	CT_ERR(sync_file_range(fd, 0, 0, 0x100), EINVAL);
	CT_ERR(sync_file_range(fd, -1, 0, SYNC_FILE_RANGE_WRITE), EINVAL);
	CT_ERR(sync_file_range(-1, 0, 0, SYNC_FILE_RANGE_WRITE), EBADF);
	int p[2];
	CT_OK(pipe(p));
	CT_ERR(sync_file_range(p[0], 0, 0, SYNC_FILE_RANGE_WRITE), ESPIPE);
}
