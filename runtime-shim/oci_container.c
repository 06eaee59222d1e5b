/* A container's state directory <root>/<id>: the id rule, state.json, removal, signals. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "oci_cli.h"

int cbox_oci_id_check(const char *id, struct cbox_err **err)
{
	size_t len = strlen(id);
	if (len == 0 || len > 1024)
		return cbox_err_set(err, EINVAL, "container id must be 1 to 1024 characters long");
	/* The id becomes a directory name under --root: no "/", no "." or "..", no oddities. */
	if (!strcmp(id, ".") || !strcmp(id, ".."))
		return cbox_err_set(err, EINVAL, "invalid container id '%s'", id);
	for (const char *s = id; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+.-",
		            *s))
			return cbox_err_set(
			    err, EINVAL, "invalid container id '%s': use letters, digits, _ + . -",
			    id);
	return 0;
}

int cbox_oci_state_save(const struct cbox_oci_state *st, struct cbox_err **err)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_string(st->id));
	json_object_object_add(o, "pid", json_object_new_int(st->pid));
	json_object_object_add(o, "startTime", json_object_new_uint64(st->start_time));
	json_object_object_add(o, "bundle", json_object_new_string(st->bundle));
	json_object_object_add(o, "rootfs", json_object_new_string(st->rootfs));
	json_object_object_add(o, "tier", json_object_new_string(st->tier));
	json_object_object_add(o, "created", json_object_new_string(st->created));
	json_object_object_add(o, "annotations", json_object_get(st->annotations));
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	char tmp[4200], path[4200];
	snprintf(tmp, sizeof(tmp), "%s/.state.json.tmp", st->dir);
	snprintf(path, sizeof(path), "%s/state.json", st->dir);
	int r = 0;
	/* Atomic (a reader sees the old state or the new, never half of one), not durable: no
	 * fsync, as runc and crun make none. A host crash ends every container a state describes,
	 * and the state directory normally lives on a tmpfs (/run); where it does not (cbox-run
	 * --tier=ns keeps it under /tmp), the fsync took 1.4-2.3 ms of every container's start on
	 * this VM's disk (strace -T), on the critical path (the container's init waits for the
	 * start). */
	CBOX_AUTOCLOSE int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s) || rename(tmp, path) < 0)
		r = cbox_err_set(err, errno, "write %s", path);
	json_object_put(o);
	return r;
}

static char *dup_member(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return strdup(json_object_get_string(v));
}

int cbox_oci_state_load(const char *root, const char *id, struct cbox_oci_state *st,
                        struct cbox_err **err)
{
	memset(st, 0, sizeof(*st));
	if (cbox_oci_id_check(id, err) < 0)
		return -1;
	char path[4200];
	snprintf(st->dir, sizeof(st->dir), "%s/%s", root, id);
	snprintf(path, sizeof(path), "%s/state.json", st->dir);
	if (access(st->dir, F_OK) < 0)
		return cbox_err_set(err, 0, "container %s does not exist", id);
	json_object *o = json_object_from_file(path);
	if (!o)
		return cbox_err_set(err, EIO, "container %s: cannot read %s (%s)", id, path,
		                    json_util_get_last_err());
	json_object *v;
	st->id = dup_member(o, "id");
	st->bundle = dup_member(o, "bundle");
	st->rootfs = dup_member(o, "rootfs");
	st->tier = dup_member(o, "tier");
	st->created = dup_member(o, "created");
	if (json_object_object_get_ex(o, "pid", &v))
		st->pid = json_object_get_int(v);
	if (json_object_object_get_ex(o, "startTime", &v))
		st->start_time = json_object_get_uint64(v);
	if (json_object_object_get_ex(o, "annotations", &v) &&
	    json_object_is_type(v, json_type_object))
		st->annotations = json_object_get(v);
	else
		st->annotations = json_object_new_object();
	json_object_put(o);
	if (!st->id || !st->bundle || !st->rootfs || !st->tier || !st->created) {
		cbox_oci_state_release(st);
		return cbox_err_set(err, EIO, "container %s: %s is incomplete", id, path);
	}
	return 0;
}

void cbox_oci_state_release(struct cbox_oci_state *st)
{
	free(st->id);
	free(st->bundle);
	free(st->rootfs);
	free(st->tier);
	free(st->created);
	json_object_put(st->annotations);
	st->id = st->bundle = st->rootfs = st->tier = st->created = NULL;
	st->annotations = NULL;
}

int cbox_oci_state_tier(const struct cbox_oci_state *st, const struct cbox_tier_ops **tier,
                        struct cbox_tier_container *c, struct cbox_err **err)
{
	if (cbox_tier_find(st->tier, tier, err) < 0)
		return -1;
	*c = (struct cbox_tier_container){.id = st->id,
	                                  .bundle = st->bundle,
	                                  .rootfs = st->rootfs,
	                                  .state_dir = st->dir,
	                                  .pid = st->pid,
	                                  .start_time = st->start_time};
	return 0;
}

int cbox_oci_write_pid_file(const char *path, pid_t pid, struct cbox_err **err)
{
	char tmp[PATH_MAX], buf[32];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	int len = snprintf(buf, sizeof(buf), "%d", (int)pid);
	CBOX_AUTOCLOSE int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, buf, (size_t)len) != len || rename(tmp, path) < 0)
		return cbox_err_set(err, errno, "write the pid file %s", path);
	return 0;
}

int cbox_oci_container_open(const struct cbox_oci_global *g, const char *id,
                            struct cbox_oci_state *st, const struct cbox_tier_ops **tier,
                            struct cbox_tier_container *c, enum cbox_tier_status *status,
                            struct cbox_err **err)
{
	if (cbox_oci_state_load(g->root, id, st, err) < 0)
		return -1;
	if (cbox_oci_state_tier(st, tier, c, err) < 0) {
		cbox_oci_state_release(st);
		return -1;
	}
	*status = (*tier)->status(c);
	return 0;
}

json_object *cbox_oci_state_json(const struct cbox_oci_state *st, const char *status)
{
	json_object *o = json_object_new_object();
	bool stopped = !strcmp(status, "stopped");
	json_object_object_add(o, "ociVersion", json_object_new_string(CBOX_OCI_VERSION));
	json_object_object_add(o, "id", json_object_new_string(st->id));
	json_object_object_add(o, "status", json_object_new_string(status));
	json_object_object_add(o, "pid", json_object_new_int(stopped ? 0 : st->pid));
	json_object_object_add(o, "bundle", json_object_new_string(st->bundle));
	json_object_object_add(o, "rootfs", json_object_new_string(st->rootfs));
	json_object_object_add(o, "created", json_object_new_string(st->created));
	json_object_object_add(o, "annotations", json_object_get(st->annotations));
	return o;
}

int cbox_oci_state_remove(const char *dir, struct cbox_err **err)
{
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : cbox_err_set(err, errno, "opendir %s", dir);
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	if (rmdir(dir) < 0 && errno != ENOENT)
		return cbox_err_set(err, errno, "remove %s", dir);
	return 0;
}

int cbox_oci_signal_parse(const char *s)
{
	char *end;
	long n = strtol(s, &end, 10);
	if (*s && !*end)
		return n > 0 && n < NSIG ? (int)n : -1;
	if (!strncasecmp(s, "SIG", 3))
		s += 3;
	for (int sig = 1; sig < NSIG; sig++) {
		const char *name = sigabbrev_np(sig);
		if (name && !strcasecmp(s, name))
			return sig;
	}
	return -1;
}
