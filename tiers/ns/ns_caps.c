/* The process's identity and limits: rlimits, user and groups, capabilities, the exec lookup. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "internal.h"

int ns_apply_rlimits(const struct cbox_oci_process *p, struct cbox_err **err)
{
	for (size_t i = 0; i < p->n_rlimits; i++) {
		struct rlimit rl = {.rlim_cur = p->rlimits[i].soft, .rlim_max = p->rlimits[i].hard};
		if (setrlimit(p->rlimits[i].resource, &rl) < 0)
			return cbox_err_set(err, errno, "process.rlimits[%zu]: setrlimit", i);
	}
	return 0;
}

static int last_cap(void)
{
	char buf[16] = "";
	CBOX_AUTOCLOSE int fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && read(fd, buf, sizeof(buf) - 1) > 0)
		return atoi(buf);
	return CAP_LAST_CAP;
}

static int set_ids(const struct cbox_oci_user *u, struct cbox_err **err)
{
	gid_t groups[256];
	size_t n = u->n_additional_gids;
	if (n > CBOX_ARRAY_SIZE(groups))
		return cbox_err_set(err, E2BIG, "process.user.additionalGids: more than %zu",
		                    CBOX_ARRAY_SIZE(groups));
	for (size_t i = 0; i < n; i++)
		groups[i] = u->additional_gids[i];
	/* Always set the supplementary groups: the runtime's own (root's) must not leak in. */
	if (setgroups(n, groups) < 0 && errno != EPERM)
		return cbox_err_set(err, errno, "setgroups");
	if (setresgid(u->gid, u->gid, u->gid) < 0)
		return cbox_err_set(err, errno, "setgid %u", u->gid);
	/* Keep the permitted set across the uid change; capset below decides what remains. */
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 || setresuid(u->uid, u->uid, u->uid) < 0)
		return cbox_err_set(err, errno, "setuid %u", u->uid);
	prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
	return 0;
}

int ns_apply_user_caps(const struct cbox_oci_process *p, struct cbox_err **err)
{
	const struct cbox_oci_caps *c = &p->caps; /* all empty without process.capabilities */
	int last = last_cap();
	/* The bounding set first, while we still hold CAP_SETPCAP: it caps what an exec of a
	 * setuid or file-capability binary could ever regain. */
	for (int cap = 0; cap <= last && cap < 64; cap++)
		if (!(c->bounding & (1ULL << cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 &&
		    errno != EINVAL)
			return cbox_err_set(err, errno, "drop capability %d from the bounding set",
			                    cap);
	if (set_ids(&p->user, err) < 0)
		return -1;
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2] = {{.effective = (uint32_t)c->effective,
	                                       .permitted = (uint32_t)c->permitted,
	                                       .inheritable = (uint32_t)c->inheritable},
	                                      {.effective = (uint32_t)(c->effective >> 32),
	                                       .permitted = (uint32_t)(c->permitted >> 32),
	                                       .inheritable = (uint32_t)(c->inheritable >> 32)}};
	if (syscall(SYS_capset, &h, d) < 0)
		return cbox_err_set(err, errno, "capset (process.capabilities)");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return cbox_err_set(err, errno, "clear the ambient capabilities");
	for (int cap = 0; cap <= last && cap < 64; cap++)
		if ((c->ambient & (1ULL << cap)) &&
		    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0)
			return cbox_err_set(err, errno,
			                    "raise ambient capability %d (it must be "
			                    "permitted and inheritable)",
			                    cap);
	return 0;
}

static bool is_exec(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
}

int ns_find_exec(const struct cbox_oci_process *p, char *out, size_t n, struct cbox_err **err)
{
	const char *prog = p->args[0];
	if (strchr(prog, '/')) {
		snprintf(out, n, "%s", prog);
		if (prog[0] != '/' || is_exec(out))
			return 0; /* relative to cwd: execve decides */
		return cbox_err_set(err, errno ? errno : EACCES, "exec: %s", prog);
	}
	const char *path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	for (size_t i = 0; i < p->n_env; i++)
		if (!strncmp(p->env[i], "PATH=", 5))
			path = p->env[i] + 5;
	for (const char *s = path; *s;) {
		size_t len = strcspn(s, ":");
		if ((size_t)snprintf(out, n, "%.*s/%s", (int)len, len ? s : ".", prog) < n &&
		    is_exec(out))
			return 0;
		s += len + (s[len] == ':');
	}
	return cbox_err_set(err, 0, "exec: \"%s\": executable file not found in $PATH", prog);
}
