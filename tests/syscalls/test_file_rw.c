/*
 * Compatibility cases: reading, writing, seeking, sizing and copying file data (read, write,
 * pread64, pwrite64, readv, writev, preadv, pwritev, preadv2, pwritev2, lseek, truncate,
 * ftruncate, fallocate, copy_file_range, sendfile, splice, tee, vmsplice, fadvise64, readahead).
 */
#include "compat_test.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static int make_file(const char *path, const char *text)
{
	int fd = CT_OK(open(path, O_CREAT | O_RDWR | O_TRUNC, 0644));
	CT_EQ(write(fd, text, strlen(text)), strlen(text));
	CT_OK(lseek(fd, 0, SEEK_SET));
	return fd;
}

static off_t size_of(const char *path)
{
	struct stat st;
	CT_OK(stat(path, &st));
	return st.st_size;
}

CT_TEST(read, basic_and_eof)
{
	int fd = make_file("f", "hello");
	char buf[16] = {0};
	CT_EQ(read(fd, buf, 2), 2);
	CT_EQ(read(fd, buf + 2, sizeof(buf) - 2), 3);
	CT_STREQ(buf, "hello");
	CT_EQ(read(fd, buf, sizeof(buf)), 0);
	CT_EQ(read(fd, buf, 0), 0);
}

CT_TEST(read, errors)
{
	char buf[4];
	CT_ERR(read(-1, buf, 1), EBADF);
	int fd = CT_OK(open("f", O_CREAT | O_WRONLY, 0600));
	CT_ERR(read(fd, buf, 1), EBADF);
	close(fd);
	CT_OK(mkdir("d", 0700));
	fd = CT_OK(open("d", O_RDONLY));
	CT_ERR(read(fd, buf, 1), EISDIR);
	close(fd);
	fd = make_file("g", "abc");
	CT_ERR(syscall(SYS_read, fd, (void *)8, 1), EFAULT);
	close(fd);
}

CT_TEST(read, pipe_eagain_and_eof)
{
	int p[2];
	CT_OK(pipe2(p, O_NONBLOCK));
	char c;
	CT_ERR(read(p[0], &c, 1), EAGAIN);
	CT_EQ(write(p[1], "z", 1), 1);
	CT_EQ(read(p[0], &c, 1), 1);
	CT_EQ(c, 'z');
	close(p[1]);
	CT_EQ(read(p[0], &c, 1), 0);
}

CT_TEST(read, dev_zero_and_null)
{
	char buf[8];
	memset(buf, 'x', sizeof(buf));
	int fd = CT_OK(open("/dev/zero", O_RDONLY));
	CT_EQ(read(fd, buf, sizeof(buf)), sizeof(buf));
	for (size_t i = 0; i < sizeof(buf); i++)
		CT_EQ(buf[i], 0);
	close(fd);
	fd = CT_OK(open("/dev/null", O_RDONLY));
	CT_EQ(read(fd, buf, sizeof(buf)), 0);
	close(fd);
}

CT_TEST(write, basic_and_offset)
{
	int fd = make_file("f", "");
	CT_EQ(write(fd, "abc", 3), 3);
	CT_EQ(lseek(fd, 0, SEEK_CUR), 3);
	CT_EQ(write(fd, "", 0), 0);
	CT_EQ(size_of("f"), 3);
	close(fd);
}

CT_TEST(write, errors)
{
	CT_ERR(write(-1, "x", 1), EBADF);
	int fd = make_file("f", "x");
	close(fd);
	fd = CT_OK(open("f", O_RDONLY));
	CT_ERR(write(fd, "x", 1), EBADF);
	close(fd);
	fd = CT_OK(open("f", O_WRONLY));
	CT_ERR(syscall(SYS_write, fd, (void *)8, 1), EFAULT);
	close(fd);
}

CT_TEST(write, epipe_sigpipe)
{
	int p[2];
	CT_OK(pipe(p));
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	CT_ERR(write(p[1], "x", 1), EPIPE);
	signal(SIGPIPE, SIG_DFL);
	pid_t pid = CT_OK(fork());
	if (pid == 0) {
		(void)!write(p[1], "x", 1);
		_exit(0);
	}
	int st = ct_wait(pid);
	CT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE);
}

CT_TEST(write, hole_reads_zero)
{
	int fd = make_file("f", "");
	CT_OK(lseek(fd, 10000, SEEK_SET));
	CT_EQ(write(fd, "x", 1), 1);
	CT_EQ(size_of("f"), 10001);
	char buf[4] = {1, 1, 1, 1};
	CT_EQ(pread(fd, buf, 4, 5000), 4);
	CT_EQ(buf[0] | buf[1] | buf[2] | buf[3], 0);
}

CT_TEST(pread64, does_not_move_offset)
{
	int fd = make_file("f", "0123456789");
	char buf[4] = {0};
	CT_EQ(pread(fd, buf, 3, 5), 3);
	CT_STREQ(buf, "567");
	CT_EQ(lseek(fd, 0, SEEK_CUR), 0);
	CT_EQ(pread(fd, buf, 3, 100), 0);
}

CT_TEST(pread64, errors)
{
	int fd = make_file("f", "abc");
	char buf[4];
	CT_ERR(pread(fd, buf, 1, -1), EINVAL);
	int p[2];
	CT_OK(pipe(p));
	CT_ERR(pread(p[0], buf, 1, 0), ESPIPE);
	CT_ERR(pread(-1, buf, 1, 0), EBADF);
}

CT_TEST(pwrite64, positional)
{
	int fd = make_file("f", "aaaaaa");
	CT_EQ(pwrite(fd, "XY", 2, 2), 2);
	CT_EQ(lseek(fd, 0, SEEK_CUR), 0);
	char buf[8] = {0};
	CT_EQ(read(fd, buf, sizeof(buf)), 6);
	CT_STREQ(buf, "aaXYaa");
}

CT_TEST(pwrite64, errors)
{
	int fd = make_file("f", "");
	CT_ERR(pwrite(fd, "x", 1, -1), EINVAL);
	int p[2];
	CT_OK(pipe(p));
	CT_ERR(pwrite(p[1], "x", 1, 0), ESPIPE);
}

CT_TEST(readv, scatter)
{
	int fd = make_file("f", "abcdefg");
	char a[3] = {0}, b[5] = {0};
	struct iovec iov[2] = {{a, 2}, {b, 4}};
	CT_EQ(readv(fd, iov, 2), 6);
	CT_STREQ(a, "ab");
	CT_STREQ(b, "cdef");
}

CT_TEST(readv, einval)
{
	int fd = make_file("f", "abc");
	char a[4];
	struct iovec iov = {a, 1};
	CT_ERR(syscall(SYS_readv, fd, &iov, -1), EINVAL);
	CT_ERR(syscall(SYS_readv, fd, &iov, 1025), EINVAL);
	CT_ERR(syscall(SYS_readv, fd, (struct iovec *)8, 1), EFAULT);
	CT_EQ(readv(fd, &iov, 0), 0);
}

CT_TEST(writev, gather)
{
	int fd = make_file("f", "");
	struct iovec iov[3] = {{"ab", 2}, {"", 0}, {"cde", 3}};
	CT_EQ(writev(fd, iov, 3), 5);
	char buf[8] = {0};
	CT_EQ(pread(fd, buf, sizeof(buf), 0), 5);
	CT_STREQ(buf, "abcde");
}

CT_TEST(writev, errors)
{
	struct iovec iov = {"x", 1};
	CT_ERR(writev(-1, &iov, 1), EBADF);
	int fd = make_file("f", "");
	CT_ERR(syscall(SYS_writev, fd, &iov, -1), EINVAL);
}

CT_TEST(preadv, positional)
{
	int fd = make_file("f", "0123456789");
	char a[3] = {0}, b[3] = {0};
	struct iovec iov[2] = {{a, 2}, {b, 2}};
	CT_EQ(syscall(SYS_preadv, fd, iov, 2L, 4L, 0L), 4L);
	CT_STREQ(a, "45");
	CT_STREQ(b, "67");
	CT_EQ(lseek(fd, 0, SEEK_CUR), 0);
}

CT_TEST(preadv, errors)
{
	int fd = make_file("f", "x");
	char a[2];
	struct iovec iov = {a, 1};
	CT_ERR(syscall(SYS_preadv, fd, &iov, 1L, -1L, -1L), EINVAL);
	int p[2];
	CT_OK(pipe(p));
	CT_ERR(syscall(SYS_preadv, p[0], &iov, 1L, 0L, 0L), ESPIPE);
}

CT_TEST(pwritev, positional)
{
	int fd = make_file("f", "..........");
	struct iovec iov[2] = {{"ab", 2}, {"cd", 2}};
	CT_EQ(syscall(SYS_pwritev, fd, iov, 2L, 3L, 0L), 4L);
	char buf[12] = {0};
	CT_EQ(pread(fd, buf, sizeof(buf), 0), 10);
	CT_STREQ(buf, "...abcd...");
}

CT_TEST(pwritev, errors)
{
	struct iovec iov = {"x", 1};
	CT_ERR(syscall(SYS_pwritev, -1L, &iov, 1L, 0L, 0L), EBADF);
	int p[2];
	CT_OK(pipe(p));
	CT_ERR(syscall(SYS_pwritev, p[1], &iov, 1L, 0L, 0L), ESPIPE);
}

CT_TEST(preadv2, offset_minus_one_uses_file_offset)
{
	int fd = make_file("f", "abcdef");
	CT_OK(lseek(fd, 2, SEEK_SET));
	char a[3] = {0};
	struct iovec iov = {a, 2};
	CT_EQ(syscall(SYS_preadv2, fd, &iov, 1L, -1L, -1L, 0L), 2L);
	CT_STREQ(a, "cd");
	CT_EQ(lseek(fd, 0, SEEK_CUR), 4);
	CT_EQ(syscall(SYS_preadv2, fd, &iov, 1L, 0L, 0L, 0L), 2L);
	CT_STREQ(a, "ab");
	CT_EQ(lseek(fd, 0, SEEK_CUR), 4);
}

CT_TEST(preadv2, bad_flags)
{
	int fd = make_file("f", "abc");
	char a[2];
	struct iovec iov = {a, 1};
	CT_ERR(syscall(SYS_preadv2, fd, &iov, 1L, 0L, 0L, 0x100000L), EOPNOTSUPP);
}

CT_TEST(preadv2, nowait_pipe)
{
	int p[2];
	CT_OK(pipe(p));
	char a[2];
	struct iovec iov = {a, 1};
	CT_ERR(syscall(SYS_preadv2, p[0], &iov, 1L, -1L, -1L, RWF_NOWAIT), EAGAIN);
}

CT_TEST(pwritev2, append_flag)
{
	int fd = make_file("f", "abc");
	struct iovec iov = {"Z", 1};
	CT_EQ(syscall(SYS_pwritev2, fd, &iov, 1L, 0L, 0L, RWF_APPEND), 1L);
	char buf[8] = {0};
	CT_EQ(pread(fd, buf, sizeof(buf), 0), 4);
	CT_STREQ(buf, "abcZ");
}

CT_TEST(pwritev2, current_offset_and_bad_flags)
{
	int fd = make_file("f", "");
	struct iovec iov = {"xy", 2};
	CT_EQ(syscall(SYS_pwritev2, fd, &iov, 1L, -1L, -1L, 0L), 2L);
	CT_EQ(lseek(fd, 0, SEEK_CUR), 2);
	CT_ERR(syscall(SYS_pwritev2, fd, &iov, 1L, 0L, 0L, 0x100000L), EOPNOTSUPP);
}

CT_TEST(lseek, whence)
{
	int fd = make_file("f", "0123456789");
	CT_EQ(lseek(fd, 3, SEEK_SET), 3);
	CT_EQ(lseek(fd, 2, SEEK_CUR), 5);
	CT_EQ(lseek(fd, -1, SEEK_END), 9);
	CT_EQ(lseek(fd, 100, SEEK_SET), 100);
}

CT_TEST(lseek, errors)
{
	int fd = make_file("f", "abc");
	CT_ERR(lseek(fd, -1, SEEK_SET), EINVAL);
	CT_ERR(lseek(fd, 0, 42), EINVAL);
	CT_ERR(lseek(-1, 0, SEEK_SET), EBADF);
	int p[2];
	CT_OK(pipe(p));
	CT_ERR(lseek(p[0], 0, SEEK_CUR), ESPIPE);
}

CT_TEST(lseek, seek_data_hole)
{
	int fd = make_file("f", "abc");
	CT_EQ(lseek(fd, 0, SEEK_DATA), 0);
	CT_EQ(lseek(fd, 0, SEEK_HOLE), 3);
	CT_ERR(lseek(fd, 3, SEEK_DATA), ENXIO);
}

CT_TEST(lseek, shared_by_dup_and_fork)
{
	int fd = make_file("f", "0123456789");
	int d = CT_OK(dup(fd));
	CT_OK(lseek(fd, 4, SEEK_SET));
	CT_EQ(lseek(d, 0, SEEK_CUR), 4);
	pid_t pid = CT_OK(fork());
	if (pid == 0)
		_exit(lseek(fd, 7, SEEK_SET) == 7 ? 0 : 1);
	int st = ct_wait(pid);
	CT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CT_EQ(lseek(fd, 0, SEEK_CUR), 7);
}

CT_TEST(truncate, shrink_and_grow)
{
	close(make_file("f", "0123456789"));
	CT_OK(syscall(SYS_truncate, "f", 4L));
	CT_EQ(size_of("f"), 4);
	CT_OK(syscall(SYS_truncate, "f", 8192L));
	CT_EQ(size_of("f"), 8192);
}

CT_TEST(truncate, errors)
{
	CT_ERR(syscall(SYS_truncate, "missing", 0L), ENOENT);
	CT_OK(mkdir("d", 0700));
	CT_ERR(syscall(SYS_truncate, "d", 0L), EISDIR);
	close(make_file("f", ""));
	CT_ERR(syscall(SYS_truncate, "f", -1L), EINVAL);
	CT_ERR(syscall(SYS_truncate, "f/x", 0L), ENOTDIR);
}

CT_TEST(ftruncate, shrink_keeps_offset)
{
	int fd = make_file("f", "0123456789");
	CT_OK(lseek(fd, 8, SEEK_SET));
	CT_OK(ftruncate(fd, 2));
	CT_EQ(lseek(fd, 0, SEEK_CUR), 8);
	CT_EQ(size_of("f"), 2);
}

CT_TEST(ftruncate, errors)
{
	int fd = make_file("f", "");
	CT_ERR(ftruncate(fd, -1), EINVAL);
	close(fd);
	fd = CT_OK(open("f", O_RDONLY));
	CT_ERR(ftruncate(fd, 0), EINVAL);
	CT_ERR(ftruncate(-1, 0), EBADF);
	int p[2];
	CT_OK(pipe(p));
	CT_ERR(ftruncate(p[1], 0), EINVAL);
}

CT_TEST(fallocate, extends_size)
{
	int fd = make_file("f", "");
	int r = fallocate(fd, 0, 0, 65536);
	if (r < 0 && errno == EOPNOTSUPP)
		ct_skip("fallocate not supported by the scratch filesystem");
	CT_OK(r);
	CT_EQ(size_of("f"), 65536);
	CT_OK(fallocate(fd, FALLOC_FL_KEEP_SIZE, 65536, 65536));
	CT_EQ(size_of("f"), 65536);
}

CT_TEST(fallocate, punch_hole)
{
	int fd = make_file("f", "abcdefgh");
	int r = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 2, 3);
	if (r < 0 && errno == EOPNOTSUPP)
		ct_skip("hole punching not supported by the scratch filesystem");
	CT_OK(r);
	char buf[9] = {0};
	CT_EQ(pread(fd, buf, 8, 0), 8);
	CT_TRUE(memcmp(buf, "ab\0\0\0fgh", 8) == 0);
	/* PUNCH_HOLE without KEEP_SIZE is invalid. */
	CT_ERR(fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 1), EOPNOTSUPP);
}

CT_TEST(fallocate, errors)
{
	int fd = make_file("f", "");
	CT_ERR(fallocate(fd, 0, 0, 0), EINVAL);
	CT_ERR(fallocate(fd, 0, -1, 10), EINVAL);
	close(fd);
	fd = CT_OK(open("f", O_RDONLY));
	CT_ERR(fallocate(fd, 0, 0, 10), EBADF);
	int p[2];
	CT_OK(pipe(p));
	CT_ERR(fallocate(p[1], 0, 0, 10), ESPIPE);
}

CT_TEST(copy_file_range, copies_and_advances)
{
	int in = make_file("in", "hello world");
	int out = make_file("out", "");
	CT_EQ(syscall(SYS_copy_file_range, in, NULL, out, NULL, 5L, 0L), 5L);
	CT_EQ(lseek(in, 0, SEEK_CUR), 5);
	loff_t off_in = 6, off_out = 5;
	CT_EQ(syscall(SYS_copy_file_range, in, &off_in, out, &off_out, 100L, 0L), 5L);
	CT_EQ(off_in, 11);
	CT_EQ(off_out, 10);
	char buf[16] = {0};
	CT_EQ(pread(out, buf, sizeof(buf), 0), 10);
	CT_STREQ(buf, "helloworld");
}

CT_TEST(copy_file_range, errors)
{
	int in = make_file("in", "abc");
	int out = make_file("out", "");
	CT_ERR(syscall(SYS_copy_file_range, in, NULL, out, NULL, 1L, 1L), EINVAL);
	CT_ERR(syscall(SYS_copy_file_range, -1L, NULL, out, NULL, 1L, 0L), EBADF);
	int ro = CT_OK(open("out", O_RDONLY));
	CT_ERR(syscall(SYS_copy_file_range, in, NULL, ro, NULL, 1L, 0L), EBADF);
	CT_OK(mkdir("d", 0700));
	int d = CT_OK(open("d", O_RDONLY));
	CT_ERR(syscall(SYS_copy_file_range, d, NULL, out, NULL, 1L, 0L), EISDIR);
	CT_EQ(syscall(SYS_copy_file_range, in, NULL, out, NULL, 0L, 0L), 0L);
}

CT_TEST(sendfile, file_to_pipe)
{
	int in = make_file("in", "sendfile!");
	int p[2];
	CT_OK(pipe(p));
	off_t off = 4;
	CT_EQ(sendfile(p[1], in, &off, 100), 5);
	CT_EQ(off, 9);
	CT_EQ(lseek(in, 0, SEEK_CUR), 0);
	char buf[8] = {0};
	CT_EQ(read(p[0], buf, sizeof(buf)), 5);
	CT_STREQ(buf, "file!");
	CT_EQ(sendfile(p[1], in, NULL, 4), 4);
	CT_EQ(lseek(in, 0, SEEK_CUR), 4);
}

CT_TEST(sendfile, file_to_file_and_errors)
{
	int in = make_file("in", "abc");
	int out = make_file("out", "");
	CT_EQ(sendfile(out, in, NULL, 10), 3);
	CT_EQ(size_of("out"), 3);
	CT_ERR(sendfile(out, -1, NULL, 1), EBADF);
	int ro = CT_OK(open("out", O_RDONLY));
	CT_ERR(sendfile(ro, in, NULL, 1), EBADF);
	off_t bad = -1;
	CT_ERR(sendfile(out, in, &bad, 1), EINVAL);
}

CT_TEST(splice, file_to_pipe_to_file)
{
	int in = make_file("in", "spliced");
	int out = make_file("out", "");
	int p[2];
	CT_OK(pipe(p));
	loff_t off = 1;
	CT_EQ(splice(in, &off, p[1], NULL, 100, 0), 6);
	CT_EQ(off, 7);
	CT_EQ(splice(p[0], NULL, out, NULL, 100, 0), 6);
	char buf[8] = {0};
	CT_EQ(pread(out, buf, sizeof(buf), 0), 6);
	CT_STREQ(buf, "pliced");
}

CT_TEST(splice, errors)
{
	int a = make_file("a", "x");
	int b = make_file("b", "");
	CT_ERR(splice(a, NULL, b, NULL, 1, 0), EINVAL);
	int p[2];
	CT_OK(pipe(p));
	loff_t off = 0;
	CT_ERR(splice(p[0], &off, b, NULL, 1, 0), ESPIPE);
	CT_ERR(splice(-1, NULL, p[1], NULL, 1, 0), EBADF);
	CT_ERR(splice(p[0], NULL, b, NULL, 1, SPLICE_F_NONBLOCK), EAGAIN);
}

CT_TEST(tee, duplicates_pipe_data)
{
	int p[2], q[2];
	CT_OK(pipe(p));
	CT_OK(pipe(q));
	CT_EQ(write(p[1], "teedata", 7), 7);
	CT_EQ(tee(p[0], q[1], 100, 0), 7);
	char buf[8] = {0};
	CT_EQ(read(q[0], buf, sizeof(buf)), 7);
	CT_STREQ(buf, "teedata");
	memset(buf, 0, sizeof(buf));
	CT_EQ(read(p[0], buf, sizeof(buf)), 7);
	CT_STREQ(buf, "teedata");
}

CT_TEST(tee, errors)
{
	int p[2];
	CT_OK(pipe(p));
	int f = make_file("f", "");
	CT_ERR(tee(p[0], f, 1, 0), EINVAL);
	CT_ERR(tee(p[0], p[1], 1, 0), EINVAL);
	int q[2];
	CT_OK(pipe(q));
	CT_ERR(tee(p[0], q[1], 1, SPLICE_F_NONBLOCK), EAGAIN);
}

CT_TEST(vmsplice, user_pages_into_pipe)
{
	int p[2];
	CT_OK(pipe(p));
	char data[] = "vmspliced";
	struct iovec iov = {data, 9};
	CT_EQ(vmsplice(p[1], &iov, 1, 0), 9);
	char buf[10] = {0};
	CT_EQ(read(p[0], buf, sizeof(buf)), 9);
	CT_STREQ(buf, "vmspliced");
}

CT_TEST(vmsplice, errors)
{
	int f = make_file("f", "");
	struct iovec iov = {"x", 1};
	CT_ERR(vmsplice(f, &iov, 1, 0), EBADF);
	CT_ERR(vmsplice(-1, &iov, 1, 0), EBADF);
	int p[2];
	CT_OK(pipe(p));
	CT_ERR(vmsplice(p[1], &iov, 1, 0x100), EINVAL);
}

CT_TEST(fadvise64, advice)
{
	int fd = make_file("f", "abc");
	CT_OK(syscall(SYS_fadvise64, fd, 0L, 0L, POSIX_FADV_SEQUENTIAL));
	CT_OK(syscall(SYS_fadvise64, fd, 0L, 3L, POSIX_FADV_DONTNEED));
	CT_OK(syscall(SYS_fadvise64, fd, 0L, 3L, POSIX_FADV_WILLNEED));
}

CT_TEST(fadvise64, errors)
{
	int fd = make_file("f", "abc");
	CT_ERR(syscall(SYS_fadvise64, fd, 0L, 0L, 99L), EINVAL);
	CT_ERR(syscall(SYS_fadvise64, -1L, 0L, 0L, POSIX_FADV_NORMAL), EBADF);
	int p[2];
	CT_OK(pipe(p));
	CT_ERR(syscall(SYS_fadvise64, p[0], 0L, 0L, POSIX_FADV_NORMAL), ESPIPE);
}

CT_TEST(readahead, file_ok)
{
	int fd = make_file("f", "abc");
	CT_OK(readahead(fd, 0, 4096));
}

CT_TEST(readahead, errors)
{
	CT_ERR(readahead(-1, 0, 10), EBADF);
	int p[2];
	CT_OK(pipe(p));
	CT_ERR(readahead(p[0], 0, 10), EINVAL);
	int fd = make_file("f", "");
	close(fd);
	fd = CT_OK(open("f", O_WRONLY));
	CT_ERR(readahead(fd, 0, 10), EBADF);
}
