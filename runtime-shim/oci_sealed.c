/*
 * cbox runs create, run and exec from a sealed in-memory copy of its own binary. Those verbs fork
 * processes that enter a container's namespaces and only then exec the container's program; until
 * that exec, their /proc/PID/exe is cbox's binary. If the program is a script "#!/proc/self/exe",
 * the kernel runs that binary inside the container, where a root process can open it through
 * /proc/PID/exe and, once no one executes it, write into the host's cbox (runc's
 * CVE-2019-5736). A sealed memfd cannot be written, and is nothing on the host's disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "oci_cli.h"

#define SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

extern char **environ;

int cbox_oci_reexec_sealed(char **argv, struct cbox_err **err)
{
	CBOX_AUTOCLOSE int self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return cbox_err_set(err, errno, "open /proc/self/exe");
	int seals = fcntl(self, F_GET_SEALS);
	if (seals >= 0 && (seals & SEALS) == SEALS)
		return 0; /* this is the copy */
	/* Sealing can fail with EBUSY while the kernel still holds a transient reference to a
	 * page of the new copy (seen once in 400 creates here): a fresh copy is tried then. */
	int copy = -1;
	for (int attempt = 0;; attempt++) {
		copy = memfd_create("cbox", MFD_CLOEXEC | MFD_ALLOW_SEALING);
		if (copy < 0)
			return cbox_err_set(err, errno, "memfd_create");
		if (lseek(self, 0, SEEK_SET) < 0) {
			close(copy);
			return cbox_err_set(err, errno, "rewind /proc/self/exe");
		}
		for (;;) {
			ssize_t n = sendfile(copy, self, NULL, 1 << 24);
			if (n == 0)
				break;
			if (n < 0 && errno != EINTR) {
				int e = errno;
				close(copy);
				return cbox_err_set(err, e, "copy /proc/self/exe to a memfd");
			}
		}
		if (fcntl(copy, F_ADD_SEALS, SEALS) == 0)
			break;
		int e = errno;
		close(copy);
		if (e != EBUSY || attempt == 4)
			return cbox_err_set(err, e, "seal the copy of cbox");
		usleep(20000);
	}
	fexecve(copy, argv, environ);
	int e = errno;
	close(copy);
	return cbox_err_set(err, e, "exec the sealed copy of cbox");
}
