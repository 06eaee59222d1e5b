/* `cbox spec [--bundle DIR] [--rootless]`: write a default config.json (runc's, for cbox). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cbox/log.h"
#include "oci_cli.h"

/* runc's default, except terminal (no console support yet) and the hostname. */
static const char default_spec[] =
    "{\"ociVersion\":\"" CBOX_OCI_VERSION "\","
    "\"process\":{\"terminal\":false,\"user\":{\"uid\":0,\"gid\":0},\"args\":[\"sh\"],"
    "\"env\":[\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\","
    "\"TERM=xterm\"],\"cwd\":\"/\","
    "\"capabilities\":{"
    "\"bounding\":[\"CAP_AUDIT_WRITE\",\"CAP_KILL\",\"CAP_NET_BIND_SERVICE\"],"
    "\"effective\":[\"CAP_AUDIT_WRITE\",\"CAP_KILL\",\"CAP_NET_BIND_SERVICE\"],"
    "\"permitted\":[\"CAP_AUDIT_WRITE\",\"CAP_KILL\",\"CAP_NET_BIND_SERVICE\"]},"
    "\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":1024,\"soft\":1024}],"
    "\"noNewPrivileges\":true},"
    "\"root\":{\"path\":\"rootfs\",\"readonly\":true},"
    "\"hostname\":\"cbox\","
    "\"mounts\":["
    "{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"},"
    "{\"destination\":\"/dev\",\"type\":\"tmpfs\",\"source\":\"tmpfs\","
    "\"options\":[\"nosuid\",\"strictatime\",\"mode=755\",\"size=65536k\"]},"
    "{\"destination\":\"/dev/pts\",\"type\":\"devpts\",\"source\":\"devpts\","
    "\"options\":[\"nosuid\",\"noexec\",\"newinstance\",\"ptmxmode=0666\",\"mode=0620\","
    "\"gid=5\"]},"
    "{\"destination\":\"/dev/shm\",\"type\":\"tmpfs\",\"source\":\"shm\","
    "\"options\":[\"nosuid\",\"noexec\",\"nodev\",\"mode=1777\",\"size=65536k\"]},"
    "{\"destination\":\"/dev/mqueue\",\"type\":\"mqueue\",\"source\":\"mqueue\","
    "\"options\":[\"nosuid\",\"noexec\",\"nodev\"]},"
    "{\"destination\":\"/sys\",\"type\":\"sysfs\",\"source\":\"sysfs\","
    "\"options\":[\"nosuid\",\"noexec\",\"nodev\",\"ro\"]},"
    "{\"destination\":\"/sys/fs/cgroup\",\"type\":\"cgroup\",\"source\":\"cgroup\","
    "\"options\":[\"nosuid\",\"noexec\",\"nodev\",\"relatime\",\"ro\"]}],"
    "\"linux\":{\"resources\":{\"devices\":[{\"allow\":false,\"access\":\"rwm\"}]},"
    "\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"network\"},{\"type\":\"ipc\"},"
    "{\"type\":\"uts\"},{\"type\":\"mount\"},{\"type\":\"cgroup\"}],"
    "\"maskedPaths\":[\"/proc/acpi\",\"/proc/asound\",\"/proc/kcore\",\"/proc/keys\","
    "\"/proc/latency_stats\",\"/proc/timer_list\",\"/proc/timer_stats\",\"/proc/sched_debug\","
    "\"/sys/firmware\",\"/proc/scsi\"],"
    "\"readonlyPaths\":[\"/proc/bus\",\"/proc/fs\",\"/proc/irq\",\"/proc/sys\","
    "\"/proc/sysrq-trigger\"]}}";

/* runc's --rootless edits: a user namespace mapping the caller, no devpts gid, /sys bound. */
static void make_rootless(json_object *spec)
{
	json_object *linux_ = json_object_object_get(spec, "linux");
	json_object *ns = json_object_object_get(linux_, "namespaces");
	json_object_array_add(ns, json_tokener_parse("{\"type\":\"user\"}"));
	char map[128];
	snprintf(map, sizeof(map), "[{\"containerID\":0,\"hostID\":%u,\"size\":1}]", getuid());
	json_object_object_add(linux_, "uidMappings", json_tokener_parse(map));
	snprintf(map, sizeof(map), "[{\"containerID\":0,\"hostID\":%u,\"size\":1}]", getgid());
	json_object_object_add(linux_, "gidMappings", json_tokener_parse(map));
	json_object_object_del(linux_, "resources");
	json_object *mounts = json_object_object_get(spec, "mounts");
	for (size_t i = 0; i < json_object_array_length(mounts); i++) {
		json_object *m = json_object_array_get_idx(mounts, i);
		const char *dst = json_object_get_string(json_object_object_get(m, "destination"));
		if (!strcmp(dst, "/dev/pts"))
			json_object_array_del_idx(json_object_object_get(m, "options"), 5, 1);
		if (!strcmp(dst, "/sys")) {
			json_object_object_add(m, "type", json_object_new_string("none"));
			json_object_object_add(m, "source", json_object_new_string("/sys"));
			json_object_object_add(
			    m, "options",
			    json_tokener_parse("[\"rbind\",\"nosuid\",\"noexec\","
			                       "\"nodev\",\"ro\"]"));
		}
	}
}

int cbox_oci_spec(const struct cbox_oci_global *g, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"bundle", required_argument, NULL, 'b'}, {"rootless", no_argument, NULL, 'r'}, {0}};
	const char *bundle = ".";
	bool rootless = false;
	(void)g;
	optind = 0;
	for (int o; (o = getopt_long_only(argc, argv, "+b:", opts, NULL)) != -1;) {
		if (o == 'b')
			bundle = optarg;
		else if (o == 'r')
			rootless = true;
		else
			return 1;
	}
	json_object *spec = json_tokener_parse(default_spec);
	if (rootless)
		make_rootless(spec);
	char path[4096];
	snprintf(path, sizeof(path), "%s/config.json", bundle);
	const char *s = json_object_to_json_string_ext(spec, JSON_C_TO_STRING_PRETTY |
	                                                         JSON_C_TO_STRING_NOSLASHESCAPE);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	int r = 0;
	if (fd < 0 && errno == EEXIST)
		r = -1, cbox_error("spec: %s exists: remove it first", path);
	else if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s) || write(fd, "\n", 1) != 1)
		r = -1, cbox_error("spec: write %s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	json_object_put(spec);
	return r < 0 ? 1 : 0;
}
