/* Guest memory access: the same on every platform. */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "cbox/platform.h"

/*
 * process_vm_readv/writev copy between the sentry and the guest without mapping guest memory into
 * the sentry. A partial transfer means the range crosses into unmapped memory: the guest gets
 * EFAULT, as the kernel would give it.
 */
int cbox_mem_read(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	if (len == 0)
		return 0;
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	ssize_t n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	if (n < 0 && errno == ESRCH)
		return -ESRCH;
	return -EFAULT;
}

int cbox_mem_write(pid_t tid, uint64_t addr, const void *buf, size_t len)
{
	if (len == 0)
		return 0;
	struct iovec local = {.iov_base = (void *)buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	ssize_t n = process_vm_writev(tid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	if (n < 0 && errno == ESRCH)
		return -ESRCH;
	return -EFAULT;
}

/*
 * Strings are read in chunks that never cross a page boundary, so a string that ends just before
 * an unmapped page is read without a spurious EFAULT.
 */
int cbox_mem_read_str(pid_t tid, uint64_t addr, char *buf, size_t size)
{
	size_t done = 0;
	while (done < size) {
		uint64_t a = addr + done;
		size_t chunk = 4096 - (a & 4095);
		if (chunk > size - done)
			chunk = size - done;
		struct iovec local = {.iov_base = buf + done, .iov_len = chunk};
		struct iovec remote = {.iov_base = (void *)(uintptr_t)a, .iov_len = chunk};
		ssize_t n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
		if (n <= 0)
			return (n < 0 && errno == ESRCH) ? -ESRCH : -EFAULT;
		char *nul = memchr(buf + done, '\0', (size_t)n);
		if (nul)
			return (int)(nul - buf);
		done += (size_t)n;
	}
	return -ENAMETOOLONG;
}
