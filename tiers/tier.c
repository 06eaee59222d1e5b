/* The tier registry, and the host checks of the tiers that are not built yet. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/fdpass.h"
#include "cbox/log.h"
#include "cbox/tier.h"
#include "sentry/sentry_tier.h"

/* The first line of a /proc file, or "" when it cannot be read. */
static void read_line(const char *path, char *buf, size_t n)
{
	buf[0] = '\0';
	CBOX_AUTOCLOSE int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t r = read(fd, buf, n - 1);
	buf[r > 0 ? r : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

static int os_available(char *why, size_t n)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0)
		snprintf(why, n, "not built yet; host: no Landlock (%s)", strerror(errno));
	else
		snprintf(why, n, "not built yet; host: Landlock ABI %ld", abi);
	return -1;
}

static int wasm_available(char *why, size_t n)
{
	const char *path = getenv("PATH");
	char buf[4096];
	bool node = false;
	for (const char *s = path ? path : "/usr/bin:/bin"; *s && !node;) {
		size_t len = strcspn(s, ":");
		snprintf(buf, sizeof(buf), "%.*s/node", (int)len, s);
		node = access(buf, X_OK) == 0;
		s += len + (s[len] == ':');
	}
	snprintf(why, n, "not built yet; host: %s", node ? "node found" : "no node in PATH");
	return -1;
}

static int microvm_available(char *why, size_t n)
{
	CBOX_AUTOCLOSE int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		snprintf(why, n, "not built yet; host: no /dev/kvm (%s)", strerror(errno));
	else
		snprintf(why, n, "not built yet; host: /dev/kvm usable");
	return -1;
}

static const struct cbox_tier_ops tier_os = {
    .name = "os",
    .summary = "the host kernel with Landlock, seccomp and namespaces on one process tree",
    .available = os_available,
};
static const struct cbox_tier_ops tier_wasm = {
    .name = "wasm",
    .summary = "WebAssembly capsule (Pyodide, WASI) in Node.js inside the os tier",
    .available = wasm_available,
};
static const struct cbox_tier_ops tier_microvm = {
    .name = "microvm",
    .summary = "own guest kernel under KVM",
    .available = microvm_available,
};

static const struct cbox_tier_ops *const tiers[] = {&cbox_tier_sentry, &cbox_tier_ns, &tier_os,
                                                    &tier_wasm, &tier_microvm};

const struct cbox_tier_ops *const *cbox_tier_list(size_t *n)
{
	*n = CBOX_ARRAY_SIZE(tiers);
	return tiers;
}

/* "ns, ..." : the tiers this host can start through the OCI runtime. */
static void supported(char *buf, size_t n)
{
	char why[256];
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(tiers); i++) {
		if (!tiers[i]->create || tiers[i]->available(why, sizeof(why)) < 0)
			continue;
		int w = snprintf(buf + used, n - used, "%s%s", used ? ", " : "", tiers[i]->name);
		if (w < 0 || (size_t)w >= n - used)
			break;
		used += (size_t)w;
	}
	if (!used)
		snprintf(buf, n, "none");
}

int cbox_tier_find(const char *name, const struct cbox_tier_ops **out, struct cbox_err **err)
{
	char list[256], why[256];
	supported(list, sizeof(list));
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(tiers); i++) {
		if (strcmp(tiers[i]->name, name) != 0)
			continue;
		if (tiers[i]->available(why, sizeof(why)) < 0)
			return cbox_err_set(
			    err, ENOTSUP,
			    "tier '%s' is not available on this host (%s); this host "
			    "supports: %s (see `cbox tiers`)",
			    name, why, list);
		if (!tiers[i]->create)
			return cbox_err_set(
			    err, ENOTSUP,
			    "tier '%s': %s; the OCI runtime supports here: %s (choose "
			    "with --tier or the annotation " CBOX_TIER_ANNOTATION ")",
			    name, why, list);
		*out = tiers[i];
		return 0;
	}
	return cbox_err_set(err, 0, "unknown tier '%s': this host supports: %s (see `cbox tiers`)",
	                    name, list);
}

const char *cbox_tier_status_name(enum cbox_tier_status s)
{
	static const char *const names[] = {"creating", "created", "running", "stopped", "paused"};
	return (unsigned)s < CBOX_ARRAY_SIZE(names) ? names[s] : "unknown";
}

/* Fields of /proc/PID/stat after the comm: state is field 3, starttime field 22. */
static bool proc_stat(pid_t pid, char *state, unsigned long long *start)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	read_line(path, buf, sizeof(buf));
	char *s = strrchr(buf, ')');
	if (!s || pid <= 0)
		return false;
	s += 2;
	*state = *s;
	for (int field = 3; field < 22; field++) {
		s = strchr(s, ' ');
		if (!s)
			return false;
		s++;
	}
	*start = strtoull(s, NULL, 10);
	return true;
}

unsigned long long cbox_tier_proc_start_time(pid_t pid)
{
	char state;
	unsigned long long start;
	return proc_stat(pid, &state, &start) ? start : 0;
}

bool cbox_tier_proc_alive(pid_t pid, unsigned long long start_time)
{
	char state;
	unsigned long long start;
	if (!proc_stat(pid, &state, &start))
		return false;
	return state != 'Z' && state != 'X' && start == start_time;
}

int cbox_tier_pidns_pids(pid_t member, pid_t **pids, size_t *n, struct cbox_err **err)
{
	char path[64];
	struct stat mine, theirs, st;
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)member);
	if (stat("/proc/self/ns/pid", &mine) < 0 || stat(path, &theirs) < 0)
		return cbox_err_set(err, errno == ENOENT ? ESRCH : errno, "stat %s", path);
	size_t cap = 16;
	CBOX_AUTOFREE pid_t *v = malloc(cap * sizeof(*v));
	*n = 0;
	if (!v)
		return cbox_err_set(err, ENOMEM, "listing a pid namespace");
	if (mine.st_ino == theirs.st_ino && mine.st_dev == theirs.st_dev) {
		v[(*n)++] = member;
		*pids = cbox_steal_ptr(&v);
		return 0;
	}
	DIR *d = opendir("/proc");
	if (!d)
		return cbox_err_set(err, errno, "opendir /proc");
	for (struct dirent *e; (e = readdir(d));) {
		pid_t pid = atoi(e->d_name);
		snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
		if (pid <= 0 || stat(path, &st) < 0 || st.st_ino != theirs.st_ino ||
		    st.st_dev != theirs.st_dev)
			continue;
		if (*n == cap) {
			pid_t *bigger = realloc(v, 2 * cap * sizeof(*v));
			if (!bigger) {
				closedir(d);
				return cbox_err_set(err, ENOMEM, "listing a pid namespace");
			}
			v = bigger;
			cap *= 2;
		}
		v[(*n)++] = pid;
	}
	closedir(d);
	*pids = cbox_steal_ptr(&v);
	return 0;
}

int cbox_tier_release_fifo(struct cbox_tier_container *c, const char *who, struct cbox_err **err)
{
	char fifo[4096];
	snprintf(fifo, sizeof(fifo), "%s/exec.fifo", c->state_dir);
	/* Non-blocking: a process that died must not hang start; its open completes on ours. */
	CBOX_AUTOCLOSE int fd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return cbox_err_set(err, errno, "open %s", fifo);
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char b;
	for (int waited = 0; waited < 10000; waited += 100) {
		if (poll(&p, 1, 100) > 0 && read(fd, &b, 1) == 1) {
			unlink(fifo);
			return 0;
		}
		if (!cbox_tier_proc_alive(c->pid, c->start_time))
			return cbox_err_set(err, 0, "%s (pid %d) is gone", who, c->pid);
	}
	return cbox_err_set(err, ETIMEDOUT, "%s did not start", who);
}

int cbox_tier_msg_send(int sock, int type, int value, const char *text)
{
	struct cbox_tier_msg m = {.type = type, .value = value};
	if (text)
		snprintf(m.text, sizeof(m.text), "%s", text);
	return send(sock, &m, sizeof(m), MSG_NOSIGNAL) == (ssize_t)sizeof(m) ? 0 : -errno;
}

int cbox_tier_msg_recv(int sock, struct cbox_tier_msg *m)
{
	ssize_t n;
	do
		n = recv(sock, m, sizeof(*m), 0);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n == 0 ? 0 : -errno;
	if (n != (ssize_t)sizeof(*m))
		return -EPROTO;
	m->text[sizeof(m->text) - 1] = '\0';
	return 1;
}

int cbox_tier_console_open(int console_sock, uid_t uid, gid_t gid, struct cbox_err **err)
{
	CBOX_AUTOCLOSE int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0)
		return cbox_err_set(err, errno, "open /dev/ptmx");
	char name[64];
	if (ptsname_r(master, name, sizeof(name)) != 0)
		return cbox_err_set(err, errno, "ptsname");
	int slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0)
		return cbox_err_set(err, errno, "open %s", name);
	if ((uid != (uid_t)-1 || gid != (gid_t)-1) && fchown(slave, uid, gid) < 0)
		cbox_debug("console: chown %s to %d:%d: %s", name, (int)uid, (int)gid,
		           strerror(errno));
	static const char payload[] = "/dev/ptmx";
	int r = cbox_send_fds(console_sock, payload, sizeof(payload) - 1, &master, 1);
	if (r < 0) {
		close(slave);
		return cbox_err_set(err, -r, "send the terminal to the console socket");
	}
	return slave;
}
