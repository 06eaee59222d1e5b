/* `cbox syscalls [--host-surface] [--json]`: the syscall table and the host attack surface. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

#include "cbox/gofer.h"
#include "cbox/platform.h"
#include "cbox/sentry.h"
#include "cbox/syscalls.h"
#include "verbs.h"

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void print_table(bool json)
{
	size_t n;
	const struct cbox_sys_entry *t = cbox_sys_table(&n);
	size_t full = 0, partial = 0, refused = 0;
	if (json)
		printf("[");
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		const struct cbox_sys_entry *e = &t[i];
		if (!e->name)
			continue;
		full += e->level == CBOX_SYS_FULL;
		partial += e->level == CBOX_SYS_PARTIAL;
		refused += e->level == CBOX_SYS_REFUSED;
		if (json) {
			printf("%s\n {\"nr\":%d,\"name\":", first ? "" : ",", e->nr);
			json_str(e->name);
			printf(",\"kind\":\"%s\",\"level\":\"%s\",\"errno\":\"%s\",\"note\":",
			       cbox_sys_kind_name(e->kind), cbox_sys_level_name(e->level),
			       e->err ? strerrorname_np(e->err) : "");
			json_str(e->note);
			printf("}");
		} else {
			printf("%3d %-24s %-8s %-8s %-10s %s\n", e->nr, e->name,
			       cbox_sys_level_name(e->level), cbox_sys_kind_name(e->kind),
			       e->err ? strerrorname_np(e->err) : "", e->note);
		}
		first = false;
	}
	if (json)
		printf("\n]\n");
	else
		printf("\n%zu syscalls: %zu full, %zu partial, %zu refused\n",
		       full + partial + refused, full, partial, refused);
}

static void print_list(const char *key, const int *nrs, size_t n, bool json, bool *first)
{
	if (json) {
		printf("%s\n \"%s\": [", *first ? "" : ",", key);
		for (size_t i = 0; i < n; i++) {
			printf("%s", i ? "," : "");
			json_str(cbox_sys_name(nrs[i]));
		}
		printf("]");
	} else {
		printf("%s (%zu):\n ", key, n);
		for (size_t i = 0; i < n; i++)
			printf(" %s", cbox_sys_name(nrs[i]));
		printf("\n\n");
	}
	*first = false;
}

/* The fast-path calls the filter still traps in some cases, and when (seccomp platform). */
static void print_conditions(const struct cbox_platform_ops *ops, bool strict, const int *fast,
                             size_t nf, bool json)
{
	bool any = false;
	for (size_t i = 0; i < nf; i++) {
		const char *when = cbox_platform_fastpath_condition(ops, strict, fast[i]);
		if (!when)
			continue;
		if (json) {
			printf("%s", any ? "," : ",\n \"guest_fastpath_conditions\": {");
			json_str(cbox_sys_name(fast[i]));
			printf(":");
			json_str(when);
		} else {
			printf("%s  %s: %s\n", any ? "" : "  of which conditional:\n",
			       cbox_sys_name(fast[i]), when);
		}
		any = true;
	}
	if (json && any)
		printf("}");
	else if (any)
		printf("\n");
}

/*
 * Every list printed here is computed from the same data the filters are built from: the
 * guest's from the syscall table (cbox_platform_fastpath), the sentry's and the gofer's from
 * their allowlist arrays.
 */
static void print_surface(bool json, bool strict)
{
	const struct cbox_platform_ops *ops = cbox_platform_find("seccomp");
	int fast[CBOX_SYS_MAX] = {0}, pass[CBOX_SYS_MAX] = {0}, refused[CBOX_SYS_MAX] = {0};
	size_t nf = 0, np = 0, nr = 0, n;
	const struct cbox_sys_entry *t = cbox_sys_table(&n);
	for (size_t i = 0; i < n; i++) {
		if (!t[i].name)
			continue;
		if (t[i].kind == CBOX_SYS_REFUSE)
			refused[nr++] = t[i].nr;
		if (cbox_platform_fastpath(ops, strict, t[i].nr))
			fast[nf++] = t[i].nr;
		else if (t[i].kind == CBOX_SYS_PASS || t[i].kind == CBOX_SYS_FAST)
			pass[np++] = t[i].nr;
	}
	size_t ns, ng, ni;
	const int *sentry = cbox_sentry_allowed_syscalls(&ns);
	const int *gofer = cbox_gofer_allowed_syscalls(&ng);
	const int *init = cbox_guest_init_allowed_syscalls(&ni);
	bool first = true;
	if (json)
		printf("{");
	print_list(json ? "guest_fastpath" : "guest fast path (allowed without the sentry)", fast,
	           nf, json, &first);
	print_conditions(ops, strict, fast, nf, json);
	print_list(json ? "guest_passthrough" : "guest checked pass-through (after the sentry)",
	           pass, np, json, &first);
	print_list(json ? "sentry" : "sentry allowlist", sentry, ns, json, &first);
	print_list(json ? "gofer" : "gofer allowlist", gofer, ng, json, &first);
	print_list(json ? "init" : "init allowlist (cbox-run --init)", init, ni, json, &first);
	/* (built by cbox_platform_build_refuse_filter from the same table) */
	print_list(
	    json ? "spawner_refused"
	         : "cbox exec spawner: any x86_64 call but these (and numbers past the table)",
	    refused, nr, json, &first);
	if (json)
		printf("\n}\n");
}

/*
 * `cbox syscalls --guest-filter-probe PLATFORM [--strict]`: start a process that installs the
 * guest filter exactly as the sentry builds it (cbox_platform_build_filter) and waits, and print
 * its pid. In a sandbox the guest's filter cannot be read back (the sentry is its tracer); this
 * lets tests compare the compiled filter with the published list. The caller kills the process.
 */
static int guest_filter_probe(const char *platform, bool strict)
{
	const struct cbox_platform_ops *ops = cbox_platform_find(platform);
	if (!ops) {
		fprintf(stderr, "cbox syscalls: unknown platform '%s'\n", platform);
		return 2;
	}
	struct sock_filter *prog;
	unsigned short len;
	if (cbox_platform_build_filter(ops, strict, &prog, &len) < 0)
		return 1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		/* Let go of the caller's output, or a $(...) around us would wait for the probe. */
		int null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		struct sock_fprog fp = {.len = len, .filter = prog};
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) < 0)
			_exit(1);
		for (;;)
			syscall(SYS_pause); /* trapped calls fail with ENOSYS here: no sentry */
	}
	free(prog);
	printf("%d\n", pid);
	return 0;
}

int cbox_verb_syscalls(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "--guest-filter-probe"))
		return guest_filter_probe(argv[2], argc >= 4 && !strcmp(argv[3], "--strict"));
	bool json = false, surface = false, strict = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "--host-surface"))
			surface = true;
		else if (!strcmp(argv[i], "--strict"))
			strict = true;
		else {
			fprintf(stderr,
			        "cbox syscalls: unknown option '%s'\n"
			        "usage: cbox syscalls [--host-surface [--strict]] [--json]\n",
			        argv[i]);
			return 2;
		}
	}
	if (surface)
		print_surface(json, strict);
	else
		print_table(json);
	return 0;
}
