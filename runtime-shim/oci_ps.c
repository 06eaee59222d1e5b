/*
 * `cbox ps [--format table|json] ID [PS-OPTIONS...]`, as runc's: json prints the host pids of the
 * container's processes (what `docker top` asks for, before it runs ps itself); table runs the
 * host's `ps` with PS-OPTIONS (default -ef) and keeps its header and the lines of those pids.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/log.h"
#include "oci_cli.h"

/* Run ps with args (NULL-terminated, args[0] = "ps"); its stdout and stderr together, malloc'd. */
static char *run_ps(char **args, struct cbox_err **err)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		cbox_err_set(err, errno, "pipe");
		return NULL;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		cbox_err_set(err, errno, "fork");
		return NULL;
	}
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		execvp("ps", args);
		fprintf(stderr, "exec ps: %s\n", strerror(errno));
		_exit(127);
	}
	close(p[1]);
	size_t len = 0, cap = 65536;
	char *out = malloc(cap + 1);
	for (ssize_t n = 1; out && n > 0;) {
		if (len == cap) {
			char *bigger = realloc(out, 2 * cap + 1);
			if (!bigger) {
				free(out);
				out = NULL;
				break;
			}
			out = bigger;
			cap *= 2;
		}
		do
			n = read(p[0], out + len, cap - len);
		while (n < 0 && errno == EINTR);
		len += n > 0 ? (size_t)n : 0;
	}
	close(p[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!out) {
		cbox_err_set(err, ENOMEM, "reading the output of ps");
		return NULL;
	}
	out[len] = '\0';
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		out[strcspn(out, "\n")] = '\0';
		cbox_err_set(err, 0, "ps failed: %s", out);
		free(out);
		return NULL;
	}
	return out;
}

/* The index of the PID column in ps's header line, or -1. */
static int pid_column(const char *header)
{
	int i = 0;
	for (const char *s = header; *s; i++) {
		s += strspn(s, " \t");
		size_t len = strcspn(s, " \t");
		if (len == 3 && !strncmp(s, "PID", 3))
			return i;
		if (!len)
			break;
		s += len;
	}
	return -1;
}

static bool line_has_pid(const char *line, int col, const pid_t *pids, size_t n)
{
	const char *s = line;
	for (int i = 0; i < col && *s; i++) {
		s += strspn(s, " \t");
		s += strcspn(s, " \t");
	}
	char *end;
	long pid = strtol(s, &end, 10);
	if (end == s)
		return false;
	for (size_t k = 0; k < n; k++)
		if (pids[k] == pid)
			return true;
	return false;
}

static int table(char **ps_args, int n_args, const pid_t *pids, size_t n, struct cbox_err **err)
{
	char *def[] = {"ps", "-ef", NULL};
	CBOX_AUTOFREE char **args = calloc((size_t)n_args + 2, sizeof(char *));
	if (!args)
		return cbox_err_set(err, ENOMEM, "ps");
	args[0] = "ps";
	for (int i = 0; i < n_args; i++)
		args[i + 1] = ps_args[i];
	CBOX_AUTOFREE char *out = run_ps(n_args ? args : def, err);
	if (!out)
		return -1;
	char *save = NULL, *line = strtok_r(out, "\n", &save);
	int col = line ? pid_column(line) : -1;
	if (col < 0)
		return cbox_err_set(err, 0, "ps: no PID column in its header (add -o pid,...)");
	printf("%s\n", line);
	while ((line = strtok_r(NULL, "\n", &save)))
		if (line_has_pid(line, col, pids, n))
			printf("%s\n", line);
	return 0;
}

int cbox_oci_ps(const struct cbox_oci_global *g, int argc, char **argv)
{
	static const struct option opts[] = {{"format", required_argument, NULL, 'f'}, {0}};
	const char *format = "table";
	optind = 0;
	for (int o; (o = getopt_long_only(argc, argv, "+f:", opts, NULL)) != -1;) {
		if (o == 'f')
			format = optarg;
		else
			return 1;
	}
	if (optind >= argc) {
		cbox_error("usage: cbox ps [--format table|json] ID [PS-OPTIONS...]");
		return 1;
	}
	if (strcmp(format, "table") && strcmp(format, "json")) {
		cbox_error("ps: unknown format '%s' (use table or json)", format);
		return 1;
	}
	const char *id = argv[optind++];
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	struct cbox_err *err = NULL;
	struct cbox_oci_state st;
	const struct cbox_tier_ops *tier;
	struct cbox_tier_container c;
	enum cbox_tier_status s;
	CBOX_AUTOFREE pid_t *pids = NULL;
	size_t n = 0;
	if (cbox_oci_container_open(g, id, &st, &tier, &c, &s, &err) < 0) {
		cbox_err_report(&err, "ps");
		return 1;
	}
	int r = tier->pids
	            ? tier->pids(&c, &pids, &n, &err)
	            : cbox_err_set(&err, ENOTSUP, "the %s tier cannot list processes", tier->name);
	cbox_oci_state_release(&st);
	if (r == 0 && !strcmp(format, "json")) {
		printf("[");
		for (size_t i = 0; i < n; i++)
			printf("%s%d", i ? "," : "", (int)pids[i]);
		printf("]\n");
	} else if (r == 0) {
		r = table(argv + optind, argc - optind, pids, n, &err);
	}
	if (r < 0) {
		cbox_err_report(&err, "ps");
		return 1;
	}
	return 0;
}
