/*
 * `cbox install [--dry-run] [--daemon-json PATH] [--runtime-path PATH] [--runtime-name NAME]
 * [--tier TIER]`: register cbox as a Docker runtime in daemon.json, keeping the rest of the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/log.h"
#include "oci_cli.h"
#include "oci_install.h"

/* A daemon.json beyond this is not one Docker wrote or a person edits. */
#define MAX_DAEMON_JSON (1 << 20)

/* The file's text (NUL-terminated) and its mode; a missing file reads as "" with mode 0644. */
static int read_text(const char *path, char **out, mode_t *mode, struct cbox_err **err)
{
	*mode = 0644;
	CBOX_AUTOCLOSE int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return (*out = strdup("")) ? 0 : cbox_err_set(err, ENOMEM, "%s", path);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return cbox_err_set(err, errno, "read %s", path);
	if (!S_ISREG(st.st_mode))
		return cbox_err_set(err, EINVAL, "%s is not a regular file", path);
	*mode = st.st_mode & 07777;
	CBOX_AUTOFREE char *buf = NULL;
	size_t got = 0;
	int r = cbox_oci_read_fd(fd, MAX_DAEMON_JSON, &buf, &got);
	if (r == -EFBIG)
		return cbox_err_set(err, EFBIG, "%s is larger than %d bytes", path,
		                    MAX_DAEMON_JSON);
	if (r < 0)
		return cbox_err_set(err, -r, "read %s", path);
	if (strlen(buf) != got)
		return cbox_err_set(err, EINVAL, "%s: malformed JSON: it holds a NUL byte", path);
	*out = cbox_steal_ptr(&buf);
	return 0;
}

/*
 * Replace path with text atomically: a temporary file in the same directory, fsynced, then
 * renamed over it, so dockerd (or a crash) never sees a half-written daemon.json.
 */
static int write_atomic(const char *path, const char *text, mode_t mode, struct cbox_err **err)
{
	char dir[PATH_MAX], tmp[PATH_MAX];
	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir) ||
	    snprintf(tmp, sizeof(tmp), "%s.cbox-XXXXXX", path) >= (int)sizeof(tmp))
		return cbox_err_set(err, ENAMETOOLONG, "%s", path);
	/* /etc/docker does not exist until docker.io is installed; make that one level only. */
	if (mkdir(dirname(dir), 0755) < 0 && errno != EEXIST)
		return cbox_err_set(err, errno, "create the directory of %s", path);
	CBOX_AUTOCLOSE int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return cbox_err_set(err, errno, "create a temporary file beside %s", path);
	size_t len = strlen(text);
	if (fchmod(fd, mode) < 0 || write(fd, text, len) != (ssize_t)len || fsync(fd) < 0 ||
	    rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		return cbox_err_set(err, e ? e : EIO, "write %s", path);
	}
	return 0;
}

static int install(const char *path, const struct cbox_oci_install_entry *e, bool dry_run,
                   struct cbox_err **err)
{
	CBOX_AUTOFREE char *old = NULL;
	CBOX_AUTOFREE char *new_text = NULL;
	mode_t mode;
	if (read_text(path, &old, &mode, err) < 0)
		return -1;
	int r = cbox_oci_install_merge(old, strlen(old), path, e, &new_text, err);
	if (r < 0)
		return -1;
	if (r == 0) {
		printf("%s: runtime \"%s\" is already %s; nothing to do\n", path, e->name, e->path);
		return 0;
	}
	if (cbox_oci_install_diff(stdout, path, old, new_text, err) < 0)
		return -1;
	if (dry_run) {
		printf("(dry run: %s not written)\n", path);
		return 0;
	}
	if (write_atomic(path, new_text, mode, err) < 0)
		return -1;
	printf("wrote %s; reload dockerd (kill -HUP its pid, or systemctl reload docker), then: "
	       "docker run --runtime=%s ...\n",
	       path, e->name);
	return 0;
}

int cbox_oci_install(const struct cbox_oci_global *g, int argc, char **argv)
{
	static const struct option opts[] = {{"dry-run", no_argument, NULL, 'n'},
	                                     {"daemon-json", required_argument, NULL, 'j'},
	                                     {"runtime-path", required_argument, NULL, 'p'},
	                                     {"runtime-name", required_argument, NULL, 'N'},
	                                     {"tier", required_argument, NULL, 't'},
	                                     {0}};
	const char *path = "/etc/docker/daemon.json", *exe = NULL;
	struct cbox_oci_install_entry e = {.name = "cbox", .tier = g->tier};
	bool dry_run = false;
	optind = 0;
	for (int o; (o = getopt_long_only(argc, argv, "+", opts, NULL)) != -1;) {
		if (o == 'n')
			dry_run = true;
		else if (o == 'j')
			path = optarg;
		else if (o == 'p')
			exe = optarg;
		else if (o == 'N')
			e.name = optarg;
		else if (o == 't')
			e.tier = optarg;
		else
			return 1;
	}
	if (optind != argc) {
		cbox_error("usage: cbox install [--dry-run] [--daemon-json PATH] [--runtime-path "
		           "PATH] [--runtime-name NAME] [--tier TIER]");
		return 1;
	}
	/* Docker runs whatever binary the path names, as root: resolve it now, so the entry names
	 * the real file rather than a symlink or a relative path someone can swap later. */
	CBOX_AUTOFREE char *abs = realpath(exe ? exe : "/proc/self/exe", NULL);
	struct cbox_err *err = NULL;
	if (!abs) {
		cbox_err_set(&err, errno, "the runtime path %s", exe ? exe : "(self)");
	} else {
		e.path = abs;
		if (access(abs, X_OK) < 0)
			cbox_err_set(&err, errno, "the runtime path %s", abs);
		else
			install(path, &e, dry_run, &err);
	}
	if (err) {
		cbox_err_report(&err, "install");
		return 1;
	}
	return 0;
}
