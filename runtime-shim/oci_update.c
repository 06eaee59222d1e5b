/*
 * `cbox update [--resources FILE|-] [--memory N] [--memory-swap N] [--cpu-quota N]
 * [--cpu-period N] [--cpu-shares N] [--pids-limit N] ID`, as runc's: new limits for a running
 * container's cgroup. --resources reads an OCI LinuxResources object (`docker update` sends one
 * on stdin with "-"), parsed by config.json's parser; the options then override its members.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/cgroup.h"
#include "cbox/cleanup.h"
#include "cbox/log.h"
#include "oci_cli.h"

#define MAX_RESOURCES (1 << 20)

/* FILE or stdin ("-"), at most MAX_RESOURCES bytes, parsed into *r. */
static int read_resources(const char *file, struct cbox_oci_resources *r, struct cbox_err **err)
{
	bool in = !strcmp(file, "-");
	CBOX_AUTOCLOSE int fd = in ? dup(0) : open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cbox_err_set(err, errno, "--resources: open %s", file);
	CBOX_AUTOFREE char *buf = NULL;
	size_t len = 0;
	int e = cbox_oci_read_fd(fd, MAX_RESOURCES - 1, &buf, &len);
	if (e == -EFBIG)
		return cbox_err_set(err, EFBIG, "--resources: %s is larger than %d bytes",
		                    in ? "stdin" : file, MAX_RESOURCES);
	if (e < 0)
		return cbox_err_set(err, -e, "--resources: read %s", in ? "stdin" : file);
	return cbox_oci_resources_parse(buf, len, in ? "resources (stdin)" : file, r, err);
}

/* A number for option name: an integer, or with size (memory) "64m" as well; "-1": no limit. */
static int number(const char *name, const char *s, bool size, int64_t *out, struct cbox_err **err)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (*s && !*end && !errno && v >= -1) {
		*out = v;
		return 0;
	}
	if (size && cbox_cgroup_parse_size(s, out) == 0)
		return 0;
	return cbox_err_set(err, 0, "--%s: '%s' is not %s", name, s,
	                    size ? "a size (bytes, or 64m, 1g, ...), or -1" : "an integer >= -1");
}

/* One command-line option into r. */
static int option(int o, const char *v, struct cbox_oci_resources *r, struct cbox_err **err)
{
	int64_t n = 0; /* (set when number succeeds; -O3 cannot tell) */
	switch (o) {
	case 'm':
		r->has_memory_limit = true;
		return number("memory", v, true, &r->memory_limit, err);
	case 's':
		r->has_memory_swap = true;
		return number("memory-swap", v, true, &r->memory_swap, err);
	case 'q':
		r->has_cpu_quota = true;
		return number("cpu-quota", v, false, &r->cpu_quota, err);
	case 'p':
		if (number("cpu-period", v, false, &n, err) < 0 || n < 0)
			return cbox_err_set(err, EINVAL, "--cpu-period: '%s' must be >= 0", v);
		r->has_cpu_period = true;
		r->cpu_period = (uint64_t)n;
		return 0;
	case 'c':
		if (number("cpu-shares", v, false, &n, err) < 0 || n < 0)
			return cbox_err_set(err, EINVAL, "--cpu-shares: '%s' must be >= 0", v);
		r->has_cpu_shares = true;
		r->cpu_shares = (uint64_t)n;
		return 0;
	case 'P':
		r->has_pids_limit = true;
		return number("pids-limit", v, false, &r->pids_limit, err);
	}
	return cbox_err_set(err, EINVAL, "unknown option");
}

static int update(const struct cbox_oci_global *g, const char *id, struct cbox_oci_resources *r,
                  struct cbox_err **err)
{
	struct cbox_oci_state st;
	const struct cbox_tier_ops *tier;
	struct cbox_tier_container c;
	enum cbox_tier_status s;
	if (cbox_oci_container_open(g, id, &st, &tier, &c, &s, err) < 0)
		return -1;
	int ret;
	if (s == CBOX_TIER_STOPPED)
		ret = cbox_err_set(err, 0, "container %s is not running: cannot update it", id);
	else if (!tier->update)
		ret = cbox_err_set(err, ENOTSUP, "the %s tier cannot update limits", tier->name);
	else
		ret = tier->update(&c, r, err);
	cbox_oci_state_release(&st);
	return ret;
}

int cbox_oci_update(const struct cbox_oci_global *g, int argc, char **argv)
{
	static const struct option opts[] = {{"resources", required_argument, NULL, 'r'},
	                                     {"memory", required_argument, NULL, 'm'},
	                                     {"memory-swap", required_argument, NULL, 's'},
	                                     {"cpu-quota", required_argument, NULL, 'q'},
	                                     {"cpu-period", required_argument, NULL, 'p'},
	                                     {"cpu-shares", required_argument, NULL, 'c'},
	                                     {"cpu-share", required_argument, NULL, 'c'}, /* runc */
	                                     {"pids-limit", required_argument, NULL, 'P'},
	                                     {0}};
	struct {
		int o;
		const char *v;
	} given[16];
	size_t n_given = 0;
	const char *file = NULL;
	optind = 0;
	for (int o; (o = getopt_long_only(argc, argv, "+r:", opts, NULL)) != -1;) {
		if (o == '?')
			return 1;
		if (o == 'r')
			file = optarg;
		else if (n_given < CBOX_ARRAY_SIZE(given))
			given[n_given++] = (typeof(given[0])){o, optarg};
	}
	if (optind != argc - 1) {
		cbox_error("usage: cbox update [--resources FILE|-] [--memory N] [--memory-swap N] "
		           "[--cpu-quota N] [--cpu-period N] [--cpu-shares N] [--pids-limit N] ID");
		return 1;
	}
	struct cbox_err *err = NULL;
	struct cbox_oci_resources r = {0};
	int ret = file ? read_resources(file, &r, &err) : 0;
	for (size_t i = 0; ret == 0 && i < n_given; i++)
		ret = option(given[i].o, given[i].v, &r, &err);
	if (ret == 0)
		ret = update(g, argv[optind], &r, &err);
	cbox_oci_resources_release(&r);
	if (ret < 0) {
		cbox_err_report(&err, "update");
		return 1;
	}
	return 0;
}
