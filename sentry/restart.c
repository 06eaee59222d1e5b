/*
 * What a signal's delivery stop does to the call the signal interrupted (the tracer loop,
 * tracer.c, calls cbox_signal_stop_regs at each one). The sentry traces every guest task, and
 * tracing changes how the kernel treats an interrupted call: a trapped call's seccomp wait can be
 * cut short where Linux would have run the handler first, and a signal the task ignores, which
 * Linux drops as it is sent, is queued for a traced task and wakes it. Each fix below puts the
 * call back where Linux would have left it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <unistd.h>
#include <linux/ptrace.h>
#include <linux/seccomp.h>

#include "cbox/log.h"
#include "cbox/syscalls.h"
#include "internal.h"

/*
 * On the seccomp platform the kernel waits interruptibly for the sentry to receive a
 * notification. A signal in that window aborts the call with -ERESTARTSYS, which a handler
 * without SA_RESTART turns into EINTR - even for calls that never fail so on Linux (pipe,
 * close, openat of a file). On Linux such a signal simply runs its handler before the call.
 * So at the signal's delivery stop, a trapped call the sentry never let run is restarted
 * unconditionally (-ERESTARTNOINTR); a call the sentry continued on the host, and the host
 * interrupted, keeps Linux's own answer.
 */
/*
 * Whether the host's own run of nr can end in -ERESTARTSYS (it sleeps interruptibly). The
 * continued marker below names the task's last continued call, and it goes stale: a task that
 * repeats a continued call at the same address (close in a loop) may be interrupted before the
 * sentry receives the repeat, and nothing in the registers tells the two apart. These calls
 * never sleep interruptibly on the host (close turns the code into EINTR itself; the memory
 * calls, pidfd_getfd and process_vm_* wait only killably; sending a signal, the scheduler's,
 * priority and limit calls, socket, bind, prctl, unshare, seccomp and fcntl's F_GETFL and
 * F_SETFL do not wait at all), so for them -ERESTARTSYS can only come from the seccomp wait.
 * fstat and getdents wait killably on local and NFS files; a FUSE server's may be interrupted,
 * and is then restarted here as under SA_RESTART. Any other call keeps the marker's verdict.
 * At worst a stale marker then gives a call that may fail with EINTR on Linux an EINTR. (kill
 * and getdents64 were not listed: under a handler without SA_RESTART, as Python installs its
 * handlers, a process stopping and continuing a child in a loop got EINTR from about one kill in
 * 40, and os.listdir under a 0.1 ms timer raised InterruptedError ~30 times a second.)
 */
static bool host_never_interrupts(long nr, const uint64_t args[6])
{
	switch (nr) {
	case SYS_fcntl:
		return (int)args[1] == F_GETFL || (int)args[1] == F_SETFL;
	case SYS_fstat:
	case SYS_getdents:
	case SYS_getdents64:
	case SYS_bind:
	case SYS_prctl:
	case SYS_close:
	case SYS_close_range:
	case SYS_dup:
	case SYS_dup2:
	case SYS_dup3:
	case SYS_pipe:
	case SYS_pipe2:
	case SYS_brk:
	case SYS_munmap:
	case SYS_mprotect:
	case SYS_kill:
	case SYS_tkill:
	case SYS_tgkill:
	case SYS_rt_sigqueueinfo:
	case SYS_rt_tgsigqueueinfo:
	case SYS_pidfd_send_signal:
	case SYS_getpriority:
	case SYS_setpriority:
	case SYS_ioprio_get:
	case SYS_ioprio_set:
	case SYS_sched_setparam:
	case SYS_sched_setscheduler:
	case SYS_sched_setattr:
	case SYS_sched_setaffinity:
	case SYS_sched_getaffinity:
	case SYS_prlimit64:
	case SYS_get_robust_list:
	case SYS_kcmp:
	case SYS_pidfd_getfd:
	case SYS_process_vm_readv:
	case SYS_process_vm_writev:
	case SYS_socket:
	case SYS_unshare:
	case SYS_seccomp:
		return true;
	default:
		return false;
	}
}

static bool restart_interrupted_trap(struct cbox_sentry *s, struct cbox_task *t,
                                     struct user_regs_struct *r)
{
	if (s->platform->ops->trap_action != SECCOMP_RET_USER_NOTIF)
		return false; /* ptrace platform: traps are ptrace stops, not interruptible waits */
	if ((int64_t)r->rax != -CBOX_ERESTARTSYS)
		return false;
	/* (the sentry's own answer to a wait it ended for this signal: defer.c) */
	bool answered = t->restart_answered && t->restart_ip == r->rip;
	t->restart_answered = false;
	if (answered)
		return false;
	long nr = (long)r->orig_rax;
	/* Whether the call waited in a notification is the filter's decision, which for some
	 * calls depends on their arguments (an fcntl F_SETLKW runs on the host, where an
	 * interruption is its own; an fcntl F_NOTIFY waits for the sentry). */
	uint64_t args[6] = {r->rdi, r->rsi, r->rdx, r->r10, r->r8, r->r9};
	if (nr < 0 || !cbox_platform_traps(s->platform->ops, s->cfg->strict, (int)nr, args))
		return false; /* the host's own call, or a ptrace stop */
	if (t->continued_nr1 == nr + 1 && t->continued_ip == r->rip &&
	    !host_never_interrupts(nr, args))
		return false; /* continued by the sentry: the host interrupted it */
	r->rax = (uint64_t)-CBOX_ERESTARTNOINTR;
	return true;
}

static bool is_restart_code(int64_t rv)
{
	return rv == -CBOX_ERESTARTSYS || rv == -CBOX_ERESTARTNOINTR ||
	       rv == -CBOX_ERESTARTNOHAND || rv == -CBOX_ERESTART_RESTARTBLOCK;
}

/*
 * Linux drops a signal its target ignores (SIGCONT or SIGCHLD left at their default, any
 * signal at SIG_IGN) as it is sent, but queues it for a traced task so that its tracer sees it:
 * under the sentry such a signal wakes the task, interrupts the call it sleeps in and, once the
 * sentry lets the signal go, the kernel restarts the call (it rewinds the instruction pointer
 * onto the syscall instruction and puts the call's number back). A second signal that comes
 * after that restart but before the task is back in user mode finds no interrupted call: its
 * handler runs, then the call starts again from the top, where on Linux (whose task was never
 * woken by the first) the call ends with EINTR. psutil's terminate sends SIGCONT then SIGTERM:
 * a python child ran its SIGTERM handler (its flags were set, read in its memory), then went
 * back to its time.sleep(60) instead of raising SystemExit (about one run in eight of psutil's
 * suite; the sentry's turn between the two kills puts the SIGTERM right in that window).
 *
 * So at each signal stop in an interrupted call the sentry notes where the call would go on
 * (note_restart), and a signal stop found exactly at the restart, the instruction pointer back
 * on that syscall instruction and the number put back, gets the interrupted call's state back
 * (restart_window): the kernel then treats the new signal as if both had come together (EINTR
 * for a handler without SA_RESTART; a restart for one with it, or an ignored one). A sigreturn
 * sets orig_rax to -1, so a task that merely returned there from a handler does not match.
 */
static bool restart_window(struct cbox_task *t, struct user_regs_struct *r)
{
	if (!t->rs_armed)
		return false;
	t->rs_armed = false;
	uint64_t back = t->rs_code == -CBOX_ERESTART_RESTARTBLOCK ? SYS_restart_syscall : t->rs_nr;
	if (r->rip + 2 != t->rs_ip || r->rax != back || r->orig_rax != t->rs_nr)
		return false;
	r->rax = (uint64_t)t->rs_code;
	r->rip = t->rs_ip;
	return true;
}

static void note_restart(struct cbox_task *t, const struct user_regs_struct *r)
{
	t->rs_armed = (int64_t)r->orig_rax >= 0 && is_restart_code((int64_t)r->rax);
	t->rs_ip = r->rip;
	t->rs_nr = r->orig_rax;
	t->rs_code = (int64_t)r->rax;
}

/*
 * The same queued ignored signal ends, with EINTR, the calls that fail so whenever a signal
 * wakes them rather than leave the choice to the kernel's restart rules: epoll_wait and its
 * kin, sigtimedwait, semop, io_getevents. On Linux a child's exit (SIGCHLD, ignored by default)
 * never touches its parent's epoll_wait; under the sentry it failed with EINTR, and a loop that
 * takes EINTR for an error stopped. Where the call waits without a time limit, a restart is
 * exactly what not being woken would have been, and the kernel makes one from
 * -ERESTARTNOHAND once it has ignored the signal. A call with a time limit keeps its EINTR:
 * restarted, it would wait its whole time again (an event loop's timer would fire late), and
 * a loop with a timeout recomputes it after an EINTR. Under a guest tracer (strace) Linux
 * queues the signal too, and so wakes the call as here: left as it is.
 */
static bool waits_without_limit(const struct user_regs_struct *r)
{
	switch ((long)r->orig_rax) {
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
		return (int)r->r10 < 0;
	case SYS_epoll_pwait2:
	case SYS_semtimedop:
		return r->r10 == 0;
	case SYS_rt_sigtimedwait:
		return r->rdx == 0;
	case SYS_semop:
		return true;
	case SYS_io_getevents:
	case SYS_io_pgetevents:
		return r->r8 == 0;
	default:
		return false;
	}
}

/* Whether task tid ignores sig (SIG_IGN, or a default of ignoring it), which Linux would have
 * dropped as it was sent. SIGCONT is left out: after a stop Linux wakes the task for it. */
static bool ignores(pid_t tid, int sig)
{
	if (sig < 1 || sig > 64 || sig == SIGCONT)
		return false;
	uint64_t caught = 0, ignored = 0;
	return cbox_signal_masks(tid, &caught, &ignored) == 0 &&
	       (cbox_signals_ignored(caught, ignored) & (1ULL << (sig - 1)));
}

static bool ignored_wakes(struct cbox_task *t, pid_t tid, int sig, struct user_regs_struct *r)
{
	if ((int64_t)r->rax != -EINTR || t->pt.tracer || !waits_without_limit(r) ||
	    !ignores(tid, sig))
		return false;
	r->rax = (uint64_t)-CBOX_ERESTARTNOHAND;
	return true;
}

/*
 * For partial_transfer, below: SIGPIPE and SIGXFSZ are also what a write sends itself as it ends
 * short (its pipe's last reader gone, the file size limit reached: send_sig, so SI_USER from the
 * writer's own process), and that short count is the write's final answer, here as on Linux,
 * which drops the signal when it is ignored. Written on as if an outside signal had cut it
 * short, the rest failed the same way, sent the signal again, and the task wrote on forever:
 * the sentry took a CPU and the writer never returned (CPython's test_broken_pipe_cleanup: 4 MiB
 * written to a child that exits without reading, whose exit woke the blocked write; a python
 * program ignores SIGPIPE and SIGXFSZ). Without the signal's details the write is left as it
 * ended.
 */
static bool raised_by_write(struct cbox_sentry *s, struct cbox_task *t, pid_t tid, int sig)
{
	if (sig != SIGPIPE && sig != SIGXFSZ)
		return false;
	siginfo_t si;
	if (ptrace(PTRACE_GETSIGINFO, tid, 0, &si) < 0)
		return true;
	return si.si_code == SI_USER && si.si_pid == cbox_task_vpid(s, t);
}

/*
 * And a blocking transfer that an ignored signal wakes after part of it went returns that part,
 * where Linux, never waking it, blocks until all is moved: a 1 MiB write, writev, send or
 * sendmsg to a pipe or stream socket read late returned 64 or 214 KiB under the sentry when a
 * child exited meanwhile, a recv or recvmsg with MSG_WAITALL returned what had come, and a
 * program that takes a blocking transfer as whole lost the rest. So the task itself moves the
 * rest, in pieces: the instruction pointer goes back on the syscall instruction and the
 * registers name the next piece, a write (for write and writev), a sendto with the call's flags
 * (for send, sendto and sendmsg: MSG_NOSIGNAL must hold for the rest too) or a recvfrom with
 * them (for recv and recvmsg); a vector's elements after the cut one follow one by one. At each
 * piece's exit stop (the task runs under PTRACE_SYSCALL until the end) the count is added up; at
 * the end the registers get the cut call's arguments back and its result is the sum, or the
 * part moved before a piece failed or met the end of the stream (Linux's answer then). The
 * pieces are the guest's own calls, through its filter, on its own fd and memory: nothing moves
 * that the task could not have moved itself. Linux never changes a caller's iovecs or msghdr,
 * and neither does this: they are only read (a thread that changes them meanwhile changes what
 * moves, as it may under Linux while the call runs). A piece cut short again ends the call with
 * what went. A notification reaches a piece's exit stop whether the sentry answers or continues
 * it; a ptrace platform's trap stop (write is trapped under --strict) is answered without it, and
 * is left as it was; so is a task under a guest tracer (Linux wakes a traced task so too). A
 * nonblocking write cut short by its pipe's room and then met by the signal is written on as
 * well: more of it may go, which a nonblocking write may always do.
 */
#define REST_IOV_MAX 1024        /* UIO_MAXIOV: a longer vector fails before moving a byte */
#define REST_RW_MAX  0x7ffff000u /* MAX_RW_COUNT: Linux moves at most this in one call */

/* The registers for the piece of w's vector from element w->idx on, at offset off into it (the
 * next non-empty element where that one is empty); false when none is left. */
static bool vector_piece(pid_t tid, struct cbox_rest *w, uint64_t off, struct user_regs_struct *r)
{
	for (; w->idx < w->iovcnt; w->idx++, off = 0) {
		struct iovec e;
		if (cbox_mem_read(tid, w->iov + (uint64_t)w->idx * sizeof(e), &e, sizeof(e)) < 0)
			return false;
		if (e.iov_len <= off)
			continue;
		uint64_t len = e.iov_len - off;
		if (len > w->total - w->done)
			len = w->total - w->done;
		r->rsi = (uint64_t)(uintptr_t)e.iov_base + off;
		r->rdx = len;
		return true;
	}
	return false;
}

/* The vector of a cut writev, sendmsg or recvmsg: w->iov, w->iovcnt, w->total, and the element
 * w->done ends in (w->idx, at *off into it). */
static bool read_vector(pid_t tid, struct cbox_rest *w, uint64_t *off)
{
	uint64_t iov = w->args[1], cnt = w->args[2];
	if (w->nr == SYS_sendmsg || w->nr == SYS_recvmsg) {
		struct msghdr m;
		if (cbox_mem_read(tid, w->args[1], &m, sizeof(m)) < 0)
			return false;
		/* (the rest's pieces cannot take control data: fds sent with it would be lost,
		 * where Linux's receive stops at them) */
		if (w->nr == SYS_recvmsg && m.msg_controllen)
			return false;
		iov = (uint64_t)(uintptr_t)m.msg_iov;
		cnt = m.msg_iovlen;
	}
	struct iovec v[REST_IOV_MAX];
	if (cnt > REST_IOV_MAX || cbox_mem_read(tid, iov, v, cnt * sizeof(v[0])) < 0)
		return false;
	w->iov = iov;
	w->iovcnt = (unsigned)cnt;
	w->total = 0;
	w->idx = w->iovcnt;
	for (unsigned i = 0; i < w->iovcnt; i++) {
		if (w->idx == w->iovcnt && w->total + v[i].iov_len > w->done) {
			w->idx = i;
			*off = w->done - w->total;
		}
		w->total += v[i].iov_len;
	}
	if (w->total > REST_RW_MAX)
		w->total = REST_RW_MAX;
	return true;
}

/* Point the registers at w's first piece, w->done bytes into the cut call; false when there
 * is none (all went, or the vector cannot be read). */
static bool first_piece(pid_t tid, struct cbox_rest *w, struct user_regs_struct *r)
{
	uint64_t off = 0;
	switch (w->nr) {
	case SYS_write:
	case SYS_sendto:
	case SYS_recvfrom:
		w->total = w->args[2];
		if (w->done >= w->total)
			return false;
		r->rsi += w->done;
		r->rdx -= w->done;
		w->piece_nr = w->nr;
		break;
	case SYS_writev:
		if (!read_vector(tid, w, &off) || w->done >= w->total ||
		    !vector_piece(tid, w, off, r))
			return false;
		w->piece_nr = SYS_write;
		break;
	case SYS_sendmsg:
	case SYS_recvmsg:
		if (!read_vector(tid, w, &off) || w->done >= w->total ||
		    !vector_piece(tid, w, off, r))
			return false;
		w->piece_nr = w->nr == SYS_sendmsg ? SYS_sendto : SYS_recvfrom;
		r->r10 = w->args[2]; /* the call's flags */
		r->r8 = 0;
		r->r9 = 0;
		break;
	default:
		return false;
	}
	/* (the pieces go on the connection the call made: they make none) */
	if (w->piece_nr == SYS_sendto)
		r->r10 &= ~(uint64_t)MSG_FASTOPEN;
	return true;
}

/* Whether the task's fd is a stream socket: MSG_WAITALL waits for all only there (a datagram
 * or a SOCK_SEQPACKET record that came short is the whole answer). */
static bool stream_socket(struct cbox_task *t, int fd)
{
	int h = cbox_task_getfd(t, fd), type = 0;
	if (h < 0)
		return false;
	socklen_t len = sizeof(type);
	bool stream = getsockopt(h, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_STREAM;
	close(h);
	return stream;
}

/* Whether call nr (registers r) would wait until all its bytes went or came, as far as its
 * registers tell: a MSG_WAITALL receive waits only on a stream (stream_socket). (Only a stream
 * writes part of a call: a datagram goes whole or not at all.) */
static bool waits_for_all(long nr, const struct user_regs_struct *r)
{
	switch (nr) {
	case SYS_write:
	case SYS_sendto:
	case SYS_writev:
	case SYS_sendmsg:
		return true;
	case SYS_recvfrom:
		return r->r10 & MSG_WAITALL;
	case SYS_recvmsg:
		return r->rdx & MSG_WAITALL;
	default:
		return false;
	}
}

static bool partial_transfer(struct cbox_sentry *s, struct cbox_task *t, pid_t tid, int sig,
                             struct user_regs_struct *r)
{
	int64_t done = (int64_t)r->rax;
	long nr = (long)r->orig_rax;
	if (done <= 0 || !waits_for_all(nr, r) || t->rest.done || t->pt.tracer ||
	    !ignores(tid, sig) || raised_by_write(s, t, tid, sig))
		return false;
	if ((nr == SYS_recvfrom || nr == SYS_recvmsg) && !stream_socket(t, (int)r->rdi))
		return false;
	struct cbox_rest w = {
	    .done = (uint64_t)done,
	    .ip = r->rip,
	    .sp = r->rsp,
	    .nr = nr,
	    .args = {r->rdi, r->rsi, r->rdx, r->r10, r->r8, r->r9},
	};
	struct user_regs_struct p = *r;
	if (!first_piece(tid, &w, &p))
		return false;
	uint64_t args[6] = {p.rdi, p.rsi, p.rdx, p.r10, p.r8, p.r9};
	if (s->platform->ops->trap_action != SECCOMP_RET_USER_NOTIF &&
	    cbox_platform_traps(s->platform->ops, s->cfg->strict, (int)w.piece_nr, args))
		return false;
	w.piece = p.rdx;
	p.rip -= 2;
	p.rax = (uint64_t)w.piece_nr;
	*r = p;
	t->rest = w;
	return true;
}

/*
 * A syscall stop of a task moving the rest of a transfer (partial_transfer): true when handled. A
 * piece is known by its return address and stack pointer, not by its number alone: a handler
 * of a signal that came before it ran may write through the same libc wrapper, on another stack.
 * A task that never gets back to it (a handler that jumps away) is let go after a while.
 */
bool cbox_rest_stop(struct cbox_task *t, pid_t tid)
{
	struct cbox_rest *w = &t->rest;
	struct user_regs_struct r;
	if (ptrace(PTRACE_GETREGS, tid, 0, &r) < 0)
		return false;
	bool ours = (long)r.orig_rax == w->piece_nr && r.rip == w->ip && r.rsp == w->sp &&
	            (int64_t)r.rax != -ENOSYS; /* (an entry stop's rax) */
	if (!ours && ++w->stops < 256) {
		ptrace(PTRACE_SYSCALL, tid, 0, 0);
		return true;
	}
	if (!ours) {
		w->done = 0;
		return false;
	}
	int64_t rv = (int64_t)r.rax;
	if (rv > 0)
		w->done += (uint64_t)rv;
	if (rv > 0 && (uint64_t)rv == w->piece && w->done < w->total && w->iovcnt) {
		/* that element is done: the next one */
		w->idx++;
		struct user_regs_struct p = r;
		if (vector_piece(tid, w, 0, &p)) {
			w->piece = p.rdx;
			w->stops = 0;
			p.rip -= 2;
			p.rax = (uint64_t)w->piece_nr;
			if (ptrace(PTRACE_SETREGS, tid, 0, &p) == 0) {
				ptrace(PTRACE_SYSCALL, tid, 0, 0);
				return true;
			}
		}
	}
	r.rax = w->done;
	r.rdi = w->args[0];
	r.rsi = w->args[1];
	r.rdx = w->args[2];
	r.r10 = w->args[3];
	r.r8 = w->args[4];
	r.r9 = w->args[5];
	r.orig_rax = (uint64_t)w->nr;
	*w = (struct cbox_rest){0};
	if (ptrace(PTRACE_SETREGS, tid, 0, &r) < 0 && errno != ESRCH)
		cbox_warn("completing the transfer of task %d: %s", tid, strerror(errno));
	return false; /* (resumed as any syscall stop) */
}

/* The registers at a signal's delivery stop: the fixes above, then the note for the next. */
void cbox_signal_stop_regs(struct cbox_sentry *s, struct cbox_task *t, pid_t tid, int sig)
{
	struct user_regs_struct r;
	if (ptrace(PTRACE_GETREGS, tid, 0, &r) < 0)
		return;
	bool changed = restart_window(t, &r);
	changed |= ignored_wakes(t, tid, sig, &r);
	changed |= partial_transfer(s, t, tid, sig, &r);
	changed |= restart_interrupted_trap(s, t, &r);
	if (changed && ptrace(PTRACE_SETREGS, tid, 0, &r) < 0)
		return;
	note_restart(t, &r);
}
