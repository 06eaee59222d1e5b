/*
 * cbox-compat: runs the syscall compatibility suite natively and under every cbox target,
 * keeps the results, and turns them into the compatibility matrix (see `cbox-compat --help`).
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/log.h"
#include "report.h"
#include "run.h"

#ifndef CBOX_COMPAT_SOURCE_DIR
#error "CBOX_COMPAT_SOURCE_DIR (the source compat-matrix/ directory) must be defined"
#endif

static const char usage_text[] =
    "Usage: cbox-compat COMMAND [OPTIONS]\n"
    "Run the syscall compatibility suite (tests/syscalls) natively and in cbox, and report.\n"
    "\n"
    "cbox-compat run [--only GLOBS] [--target LIST] [--tests DIR] [--suite FILE]\n"
    "                [--exit-map MAP] [--jobs N] [--timeout SECS] [--results DIR]\n"
    "  Run every test program of --tests (default <dir of cbox-compat>/tests/syscalls/bin)\n"
    "  on each target; one job per (program, target), --jobs in parallel (default: online\n"
    "  CPUs), each killed after --timeout seconds (default 120) or 4 MiB of output. Results\n"
    "  are merged into <results>/<target>.tsv (default <dir of cbox-compat>/compat-results).\n"
    "  --only GLOBS   comma-separated fnmatch globs on the case name or its syscall prefix\n"
    "  --target LIST  comma-separated targets (default: every available one; see `targets`)\n"
    "  --suite FILE   run an external suite instead: one shell command per line, optionally\n"
    "                 'NAME<TAB>command'; results in <results>/suite-<target>.tsv\n"
    "  --exit-map MAP how a suite command's exit status maps to a result\n"
    "                 (default 0=pass,77=skip,*=fail; signals are crash, timeouts timeout)\n"
    "  e.g. cbox-compat run --only 'open*,stat*' --target native,sentry-seccomp --jobs 2\n"
    "       cbox-compat run --suite ltp.txt --exit-map '0=pass,32=skip,*=fail' --timeout 30\n"
    "\n"
    "cbox-compat report [--results DIR] [--out DIR] [--table FILE] [--check]\n"
    "  Write <out>/README.md and <out>/matrix.tsv (default out: " CBOX_COMPAT_SOURCE_DIR ")\n"
    "  from the results and the syscall table (`cbox syscalls --json`, or --table FILE).\n"
    "  --check        write nothing: exit 1 when <out>/matrix.tsv is not current, i.e. its\n"
    "                 table-derived columns (nr, name, level, cases, errno, note) differ\n"
    "                 from what the table and results give now (pass counts are not\n"
    "                 compared: they depend on the machine)\n"
    "  e.g. cbox-compat run && cbox-compat report\n"
    "\n"
    "cbox-compat check [--results DIR] [--table FILE]\n"
    "  Check the table against the results of each sentry-* target: a full syscall with a\n"
    "  natively passing case that fails, a refused one whose cases all pass, or a case naming\n"
    "  a syscall missing from the table is an error (exit 1); partial failures are warnings.\n"
    "  The ns target runs the host kernel: it is not judged (the report shows its failures).\n"
    "  e.g. cbox-compat check --results build/compat-results\n"
    "\n"
    "cbox-compat targets\n"
    "  List every target, available or not, and why. sentry-*: the suite under cbox-run;\n"
    "  ns: under `cbox --tier ns run` (root only), in a bundle of the host's root read-only\n"
    "  with the capabilities of `cbox spec`.\n"
    "  e.g. cbox-compat targets\n"
    "\n"
    "Environment: CBOX_RUN, CBOX override the cbox-run and cbox found beside cbox-compat.\n"
    "Exit status: 0; 1 when check finds an error; 2 on a usage or setup error.\n";

CBOX_PRINTF(1, 2) static int usage_error(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "cbox-compat: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'cbox-compat --help'.\n");
	return CBOX_COMPAT_EXIT_USAGE;
}

static int setup_error(struct cbox_err **err)
{
	fprintf(stderr, "cbox-compat: %s\n", *err ? (*err)->msg : "unknown error");
	cbox_err_free(err);
	return CBOX_COMPAT_EXIT_USAGE;
}

static int parse_uint(const char *s, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < min || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static char *default_dir(const struct cbox_compat_paths *p, const char *sub)
{
	char *s = NULL;
	return asprintf(&s, "%s/%s", p->self_dir, sub) < 0 ? NULL : s;
}

enum {
	OPT_ONLY = 256,
	OPT_TARGET,
	OPT_TESTS,
	OPT_SUITE,
	OPT_EXIT_MAP,
	OPT_JOBS,
	OPT_TIMEOUT,
	OPT_RESULTS,
	OPT_OUT,
	OPT_TABLE,
	OPT_CHECK
};

static const struct option long_opts[] = {
    {"only", required_argument, NULL, OPT_ONLY},
    {"target", required_argument, NULL, OPT_TARGET},
    {"tests", required_argument, NULL, OPT_TESTS},
    {"suite", required_argument, NULL, OPT_SUITE},
    {"exit-map", required_argument, NULL, OPT_EXIT_MAP},
    {"jobs", required_argument, NULL, OPT_JOBS},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"results", required_argument, NULL, OPT_RESULTS},
    {"out", required_argument, NULL, OPT_OUT},
    {"table", required_argument, NULL, OPT_TABLE},
    {"check", no_argument, NULL, OPT_CHECK},
    {NULL, 0, NULL, 0},
};

struct opts {
	const char *only, *target, *tests, *suite, *exit_map, *results, *out, *table;
	unsigned jobs, timeout;
	bool check;
};

/* Parse the options of a subcommand; allowed lists the ones it takes (OPT_* values). */
static int parse_opts(int argc, char **argv, const int *allowed, struct opts *o)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	*o = (struct opts){
	    .exit_map = "0=pass,77=skip,*=fail", .jobs = n > 0 ? (unsigned)n : 1, .timeout = 120};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+", long_opts, NULL)) != -1) {
		bool ok = false;
		for (const int *a = allowed; *a; a++)
			ok |= *a == c;
		if (c == '?' || !ok)
			return usage_error("%s: option not valid here", argv[optind - 1]);
		switch (c) {
		case OPT_ONLY:
			o->only = optarg;
			break;
		case OPT_TARGET:
			o->target = optarg;
			break;
		case OPT_TESTS:
			o->tests = optarg;
			break;
		case OPT_SUITE:
			o->suite = optarg;
			break;
		case OPT_EXIT_MAP:
			o->exit_map = optarg;
			break;
		case OPT_RESULTS:
			o->results = optarg;
			break;
		case OPT_OUT:
			o->out = optarg;
			break;
		case OPT_TABLE:
			o->table = optarg;
			break;
		case OPT_CHECK:
			o->check = true;
			break;
		case OPT_JOBS:
			if (parse_uint(optarg, 1, 1024, &o->jobs) < 0)
				return usage_error("--jobs %s: expected 1..1024", optarg);
			break;
		case OPT_TIMEOUT:
			if (parse_uint(optarg, 1, 86400, &o->timeout) < 0)
				return usage_error("--timeout %s: expected 1..86400 seconds",
				                   optarg);
			break;
		default:
			return usage_error("%s: unexpected option", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("%s: unexpected argument", argv[optind]);
	return 0;
}

int cbox_compat_cmd_run(int argc, char **argv)
{
	static const int allowed[] = {OPT_ONLY, OPT_TARGET,  OPT_TESTS,   OPT_SUITE, OPT_EXIT_MAP,
	                              OPT_JOBS, OPT_TIMEOUT, OPT_RESULTS, 0};
	struct opts o;
	int r = parse_opts(argc, argv, allowed, &o);
	if (r)
		return r;
	struct cbox_err *err = NULL;
	struct cbox_compat_paths p;
	if (cbox_compat_paths_init(&p, &err) < 0)
		return setup_error(&err);
	CBOX_AUTOFREE char *tests = o.tests ? NULL : default_dir(&p, "tests/syscalls/bin");
	CBOX_AUTOFREE char *results = o.results ? NULL : default_dir(&p, "compat-results");
	struct cbox_compat_run run = {.only = o.only,
	                              .tests_dir = o.tests ? o.tests : tests,
	                              .suite_file = o.suite,
	                              .results_dir = o.results ? o.results : results,
	                              .cbox_run = p.cbox_run,
	                              .cbox = p.cbox,
	                              .parallel = o.jobs,
	                              .timeout = o.timeout};
	if (run.tests_dir == NULL || run.results_dir == NULL)
		r = cbox_err_set(&err, ENOMEM, "paths");
	if (r == 0 && cbox_compat_exit_map_parse(o.exit_map, &run.exit_map, &err) < 0)
		r = cbox_err_wrap(&err, "--exit-map");
	if (r == 0 &&
	    (run.targets = cbox_compat_targets_select(o.target, &p, &run.ntargets, &err)) == NULL)
		r = -1;
	if (r == 0)
		r = cbox_compat_run_execute(&run, &err);
	cbox_compat_run_free(&run);
	cbox_compat_paths_free(&p);
	return r < 0 ? setup_error(&err) : 0;
}

/* Load the table and every target's results, and build the matrix. */
struct loaded {
	struct cbox_compat_paths paths;
	struct cbox_compat_table table;
	struct cbox_compat_results *results[CBOX_COMPAT_MAX_TARGETS];
	bool present[CBOX_COMPAT_MAX_TARGETS];
	char *results_dir;
};

static int load(struct loaded *l, const struct opts *o, struct cbox_err **err)
{
	*l = (struct loaded){0};
	if (cbox_compat_paths_init(&l->paths, err) < 0)
		return -1;
	l->results_dir = o->results ? strdup(o->results) : default_dir(&l->paths, "compat-results");
	if (l->results_dir == NULL)
		return cbox_err_set(err, ENOMEM, "paths");
	if (cbox_compat_table_load(o->table, &l->paths, &l->table, err) < 0)
		return -1;
	return cbox_compat_results_load_all(l->results_dir, l->results, l->present, err);
}

static void unload(struct loaded *l)
{
	for (size_t t = 0; t < cbox_compat_ntargets; t++)
		cbox_compat_results_free(l->results[t]);
	cbox_compat_table_free(&l->table);
	cbox_compat_paths_free(&l->paths);
	free(l->results_dir);
}

static int write_out(const char *dir, const char *name, const struct cbox_compat_matrix *m,
                     int (*fn)(FILE *, const struct cbox_compat_matrix *), struct cbox_err **err)
{
	CBOX_AUTOFREE char *path = NULL, *tmp = NULL;
	if (asprintf(&path, "%s/%s", dir, name) < 0 || asprintf(&tmp, "%s.tmp", path) < 0)
		return cbox_err_set(err, ENOMEM, "report");
	FILE *f = fopen(tmp, "we");
	if (f == NULL)
		return cbox_err_set(err, errno, "create %s", tmp);
	int r = fn(f, m);
	if (fclose(f) != 0 || r < 0) {
		unlink(tmp);
		return cbox_err_set(err, EIO, "write %s", tmp);
	}
	if (rename(tmp, path) < 0)
		return cbox_err_set(err, errno, "rename %s to %s", tmp, path);
	printf("wrote %s\n", path);
	return 0;
}

/* report --check: compare <out>/matrix.tsv with what m renders. Returns 0 (current), 1 (stale,
 * with the differences on stderr), < 0 with err. */
static int check_current(const char *out, const struct cbox_compat_matrix *m, struct cbox_err **err)
{
	CBOX_AUTOFREE char *path = NULL, *fresh = NULL, *committed = NULL;
	size_t len = 0;
	if (asprintf(&path, "%s/matrix.tsv", out) < 0)
		return cbox_err_set(err, ENOMEM, "report");
	FILE *f = open_memstream(&fresh, &len);
	if (f == NULL)
		return cbox_err_set(err, ENOMEM, "report");
	int r = cbox_compat_report_tsv(f, m);
	if (fclose(f) != 0 || r < 0)
		return cbox_err_set(err, EIO, "render matrix.tsv");
	size_t clen = 0;
	if (cbox_compat_read_file(path, 16u << 20, &committed, &clen, err) < 0)
		return -1;
	int n = cbox_compat_report_stale(committed, fresh, stderr);
	if (n < 0)
		return cbox_err_set(err, -n, "%s: not a matrix.tsv (a column is missing)", path);
	if (n > 0) {
		fprintf(stderr,
		        "%s is not current: %d row(s) differ; regenerate it with "
		        "`cbox-compat run && cbox-compat report`\n",
		        path, n);
		return 1;
	}
	printf("%s is current\n", path);
	return 0;
}

int cbox_compat_cmd_report(int argc, char **argv)
{
	static const int allowed[] = {OPT_RESULTS, OPT_OUT, OPT_TABLE, OPT_CHECK, 0};
	struct opts o;
	int r = parse_opts(argc, argv, allowed, &o);
	if (r)
		return r;
	struct cbox_err *err = NULL;
	struct loaded l;
	struct cbox_compat_matrix m = {0};
	const char *out = o.out ? o.out : CBOX_COMPAT_SOURCE_DIR;
	r = load(&l, &o, &err);
	if (o.check) {
		if (r == 0)
			r = cbox_compat_matrix_build(&l.table, l.results, l.present, &m, &err);
		if (r == 0)
			r = check_current(out, &m, &err);
		cbox_compat_matrix_free(&m);
		unload(&l);
		return r < 0 ? setup_error(&err) : r;
	}
	if (r == 0 && mkdir(out, 0755) < 0 && errno != EEXIST)
		r = cbox_err_set(&err, errno, "create %s", out);
	if (r == 0)
		r = cbox_compat_matrix_build(&l.table, l.results, l.present, &m, &err);
	if (r == 0)
		r = write_out(out, "README.md", &m, cbox_compat_report_readme, &err);
	if (r == 0)
		r = write_out(out, "matrix.tsv", &m, cbox_compat_report_tsv, &err);
	cbox_compat_matrix_free(&m);
	unload(&l);
	return r < 0 ? setup_error(&err) : 0;
}

int cbox_compat_cmd_check(int argc, char **argv)
{
	static const int allowed[] = {OPT_RESULTS, OPT_TABLE, 0};
	struct opts o;
	int r = parse_opts(argc, argv, allowed, &o);
	if (r)
		return r;
	struct cbox_err *err = NULL;
	struct loaded l;
	if (load(&l, &o, &err) < 0) {
		unload(&l);
		return setup_error(&err);
	}
	struct cbox_compat_check_stats st = {0};
	size_t judged = 0;
	if (!l.present[0]) {
		printf("error: no native results in %s: run `cbox-compat run --target native` "
		       "first\n",
		       l.results_dir);
		st.errors++;
	}
	for (size_t t = 0; t < cbox_compat_ntargets; t++) {
		if (!l.present[t])
			continue;
		/* Only the sentry answers from the table: the ns tier runs the host kernel, so
		 * what fails there (a capability it drops) says nothing about the table. Its
		 * cases are the native ones, whose names are checked with native's. */
		if (t != 0 && !cbox_compat_target_judged(&cbox_compat_targets[t])) {
			printf("%s: not judged (no sentry: its failures are in the report)\n",
			       cbox_compat_targets[t].name);
			continue;
		}
		cbox_compat_check_names(&l.table, cbox_compat_targets[t].name, l.results[t], stdout,
		                        &st);
		if (t == 0 || !l.present[0])
			continue;
		cbox_compat_check_target(&l.table, cbox_compat_targets[t].name, l.results[0],
		                         l.results[t], stdout, &st);
		judged++;
	}
	printf("check: %zu sandbox target(s) judged, %zu error(s), %zu warning(s)\n", judged,
	       st.errors, st.warnings);
	unload(&l);
	return st.errors ? 1 : 0;
}

int cbox_compat_cmd_targets(int argc, char **argv)
{
	static const int allowed[] = {0};
	struct opts o;
	int r = parse_opts(argc, argv, allowed, &o);
	if (r)
		return r;
	struct cbox_err *err = NULL;
	struct cbox_compat_paths p;
	if (cbox_compat_paths_init(&p, &err) < 0)
		return setup_error(&err);
	for (size_t i = 0; i < cbox_compat_ntargets; i++) {
		const char *why;
		bool ok = cbox_compat_target_available(&cbox_compat_targets[i], &p, &why);
		printf("%-22s %s%s%s\n", cbox_compat_targets[i].name,
		       ok ? "available" : "unavailable", ok ? "" : ": ", ok ? "" : why);
	}
	cbox_compat_paths_free(&p);
	return 0;
}

int main(int argc, char **argv)
{
	cbox_log_init(2, CBOX_LOG_TEXT, CBOX_LOG_WARNING, "cbox-compat");
	if (argc < 2)
		return usage_error("%s", "missing COMMAND");
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		fputs(usage_text, stdout);
		return 0;
	}
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {{"run", cbox_compat_cmd_run},
	            {"report", cbox_compat_cmd_report},
	            {"check", cbox_compat_cmd_check},
	            {"targets", cbox_compat_cmd_targets}};
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(cmds); i++)
		if (strcmp(argv[1], cmds[i].name) == 0)
			return cmds[i].fn(argc - 1, argv + 1);
	return usage_error("unknown command '%s'", argv[1]);
}
