/*
 * The job runner of cbox-compat (see job.h). The programs run here are tests, some of them
 * broken on purpose or by accident: they may hang, crash, fork children that outlive them, or
 * print without end. So every job gets its own process group (killed as a whole), a pidfd
 * (its exit is seen without racing pid reuse), bounded buffers, and a deadline; the runner
 * itself never blocks on one job.
 */
#include "job.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cbox/rmtree.h"
#include "cbox/cleanup.h"

/* After the job's main process ended, how long its output pipes may stay open (held by a
 * process outside its group) before the runner stops reading them. */
#define DRAIN_GRACE_SECS 2.0

double cbox_compat_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cbox_compat_job_clear(struct cbox_compat_job *job)
{
	if (job == NULL)
		return;
	free(job->out);
	free(job->err);
	job->out = job->err = NULL;
	if (job->workdir) {
		/* FTW_PHYS: a test may leave symlinks to anywhere; never follow them. */
		cbox_rm_tree(job->workdir);
		free(job->workdir);
		job->workdir = NULL;
	}
	free(job->cwd);
	job->cwd = NULL;
}

static void spawn_fail(struct cbox_compat_job *job, const char *what, int e)
{
	job->spawn_failed = true;
	free(job->err);
	if (asprintf(&job->err, "cbox-compat: %s for %s: %s", what, job->argv[0], strerror(e)) < 0)
		job->err = NULL;
	job->err_len = job->err ? strlen(job->err) : 0;
}

static void child(struct cbox_compat_job *job, int out_w, int err_w)
{
	/* Its own process group, so that a timeout or a flood kills everything the test
	 * started, and nothing of the runner's. */
	setpgid(0, 0);
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0 ||
	    chdir(job->cwd) < 0 || setenv("TMPDIR", job->cwd, 1) < 0)
		_exit(127);
	execvp(job->argv[0], job->argv);
	dprintf(2, "cbox-compat: exec %s: %s\n", job->argv[0], strerror(errno));
	_exit(127);
}

/* The job's fresh work directory (and its cwd inside), then the caller's prepare step. */
static int make_dirs(struct cbox_compat_job *job)
{
	const char *tmp = getenv("TMPDIR");
	if (asprintf(&job->workdir, "%s/cbox-compat-job.XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0) {
		job->workdir = NULL;
		spawn_fail(job, "allocate", ENOMEM);
		return -1;
	}
	if (mkdtemp(job->workdir) == NULL) {
		spawn_fail(job, "create a work directory", errno);
		free(job->workdir);
		job->workdir = NULL;
		return -1;
	}
	int r = job->private_dir ? asprintf(&job->cwd, "%s/work", job->workdir)
	                         : ((job->cwd = strdup(job->workdir)) ? 0 : -1);
	if (r < 0) {
		job->cwd = NULL;
		spawn_fail(job, "allocate", ENOMEM);
		return -1;
	}
	if (job->private_dir && mkdir(job->cwd, 0755) < 0) {
		spawn_fail(job, "create a work directory", errno);
		return -1;
	}
	if (job->prepare && job->prepare(job) < 0) {
		job->spawn_failed = true;
		job->err_len = job->err ? strlen(job->err) : 0;
		return -1;
	}
	return 0;
}

static int spawn(struct cbox_compat_job *job)
{
	int po[2] = {-1, -1}, pe[2] = {-1, -1};
	if (make_dirs(job) < 0)
		return -1;
	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
		spawn_fail(job, "pipe", errno);
		goto fail;
	}
	job->start = cbox_compat_now();
	job->pid = fork();
	if (job->pid < 0) {
		spawn_fail(job, "fork", errno);
		goto fail;
	}
	if (job->pid == 0)
		child(job, po[1], pe[1]);
	setpgid(job->pid, job->pid); /* also here: no window where a kill misses the group */
	close(po[1]);
	close(pe[1]);
	job->fd[0] = po[0];
	job->fd[1] = pe[0];
	job->pidfd = (int)syscall(SYS_pidfd_open, job->pid, 0);
	if (job->pidfd < 0) {
		/* Cannot watch it without racing pid reuse: stop it now. */
		kill(-job->pid, SIGKILL);
		waitpid(job->pid, &job->wstatus, 0);
		close(po[0]);
		close(pe[0]);
		job->fd[0] = job->fd[1] = -1;
		spawn_fail(job, "pidfd_open", errno);
		return -1;
	}
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (po[i] >= 0)
			close(po[i]);
		if (pe[i] >= 0)
			close(pe[i]);
	}
	return -1;
}

static void read_fd(struct cbox_compat_job *job, int which)
{
	char buf[65536];
	ssize_t n = read(job->fd[which], buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close(job->fd[which]);
		job->fd[which] = -1;
		return;
	}
	if (job->out_len + job->err_len + (size_t)n > job->cap) {
		/* A flood: stop keeping output and kill the whole group, or the runner's memory
		 * and the results file would grow without bound. */
		if (!job->flooded && !job->reaped)
			kill(-job->pid, SIGKILL);
		job->flooded = true;
		return;
	}
	char **b = which == 0 ? &job->out : &job->err;
	size_t *len = which == 0 ? &job->out_len : &job->err_len;
	char *nb = realloc(*b, *len + (size_t)n + 1);
	if (nb == NULL)
		return;
	memcpy(nb + *len, buf, (size_t)n);
	*len += (size_t)n;
	nb[*len] = '\0';
	*b = nb;
}

static void reap(struct cbox_compat_job *job)
{
	/* The main process is a zombie now, which pins its pid as the group's id: kill the
	 * group (helpers the test forked) before reaping, so the kill cannot reach a process
	 * that reused the pid. */
	kill(-job->pid, SIGKILL);
	if (waitpid(job->pid, &job->wstatus, 0) < 0)
		job->wstatus = 0;
	close(job->pidfd);
	job->pidfd = -1;
	job->reaped = true;
	job->exited_at = cbox_compat_now();
	job->secs = job->exited_at - job->start;
}

static bool finished(struct cbox_compat_job *job, double now)
{
	if (!job->reaped)
		return false;
	if (job->fd[0] < 0 && job->fd[1] < 0)
		return true;
	if (now - job->exited_at < DRAIN_GRACE_SECS)
		return false;
	for (int i = 0; i < 2; i++)
		if (job->fd[i] >= 0) {
			close(job->fd[i]);
			job->fd[i] = -1;
		}
	return true;
}

static void ensure_bufs(struct cbox_compat_job *job)
{
	if (job->out == NULL)
		job->out = strdup("");
	if (job->err == NULL)
		job->err = strdup("");
}

struct pool {
	struct cbox_compat_job **run;
	size_t nrun;
};

/* Poll every running job once (up to the nearest deadline) and handle what happened. */
static int poll_once(struct pool *p, struct cbox_err **err)
{
	CBOX_AUTOFREE struct pollfd *pfd = calloc(p->nrun * 3, sizeof(*pfd));
	CBOX_AUTOFREE struct cbox_compat_job **owner = calloc(p->nrun * 3, sizeof(*owner));
	CBOX_AUTOFREE int *kind = calloc(p->nrun * 3, sizeof(*kind));
	size_t np = 0;
	if (pfd == NULL || owner == NULL || kind == NULL)
		return cbox_err_set(err, ENOMEM, "poll the running jobs");
	double now = cbox_compat_now(), wake = now + 1.0;
	for (size_t i = 0; i < p->nrun; i++) {
		struct cbox_compat_job *j = p->run[i];
		for (int k = 0; k < 2; k++)
			if (j->fd[k] >= 0) {
				pfd[np] = (struct pollfd){.fd = j->fd[k], .events = POLLIN};
				owner[np] = j;
				kind[np++] = k;
			}
		if (!j->reaped) {
			pfd[np] = (struct pollfd){.fd = j->pidfd, .events = POLLIN};
			owner[np] = j;
			kind[np++] = 2;
			double dl = j->start + j->timeout;
			wake = dl < wake ? dl : wake;
		} else {
			double dl = j->exited_at + DRAIN_GRACE_SECS;
			wake = dl < wake ? dl : wake;
		}
	}
	int ms = wake > now ? (int)((wake - now) * 1000) + 1 : 0;
	int r = poll(pfd, np, ms);
	if (r < 0 && errno != EINTR)
		return cbox_err_set(err, errno, "poll the running jobs");
	for (size_t i = 0; r > 0 && i < np; i++) {
		if (pfd[i].revents == 0)
			continue;
		if (kind[i] == 2)
			reap(owner[i]);
		else if (owner[i]->fd[kind[i]] >= 0)
			read_fd(owner[i], kind[i]);
	}
	now = cbox_compat_now();
	for (size_t i = 0; i < p->nrun; i++) {
		struct cbox_compat_job *j = p->run[i];
		if (!j->reaped && !j->timed_out && now >= j->start + j->timeout) {
			j->timed_out = true;
			kill(-j->pid, SIGKILL);
		}
	}
	return 0;
}

static void kill_all(struct pool *p)
{
	for (size_t i = 0; i < p->nrun; i++) {
		struct cbox_compat_job *j = p->run[i];
		if (!j->reaped)
			reap(j);
		for (int k = 0; k < 2; k++)
			if (j->fd[k] >= 0)
				close(j->fd[k]);
	}
}

int cbox_compat_jobs_run(struct cbox_compat_job **jobs, size_t n, unsigned parallel,
                         void (*done)(struct cbox_compat_job *job, void *ctx), void *ctx,
                         struct cbox_err **err)
{
	CBOX_AUTOFREE struct cbox_compat_job **run = calloc(parallel ? parallel : 1, sizeof(*run));
	if (run == NULL)
		return cbox_err_set(err, ENOMEM, "start jobs");
	struct pool p = {.run = run};
	size_t next = 0;
	while (next < n || p.nrun > 0) {
		while (next < n && p.nrun < (parallel ? parallel : 1)) {
			struct cbox_compat_job *j = jobs[next++];
			j->fd[0] = j->fd[1] = j->pidfd = -1;
			if (spawn(j) < 0) {
				ensure_bufs(j);
				done(j, ctx);
				continue;
			}
			p.run[p.nrun++] = j;
		}
		if (p.nrun == 0)
			continue;
		if (poll_once(&p, err) < 0) {
			kill_all(&p);
			return -1;
		}
		double now = cbox_compat_now();
		for (size_t i = 0; i < p.nrun;) {
			if (!finished(p.run[i], now)) {
				i++;
				continue;
			}
			struct cbox_compat_job *j = p.run[i];
			p.run[i] = p.run[--p.nrun];
			ensure_bufs(j);
			done(j, ctx);
		}
	}
	return 0;
}
