/*
 * A blocking transfer (write, writev, send, sendmsg; a MSG_WAITALL recv or recvmsg) that a signal
 * the task ignores cut short, finished as Linux, which never wakes it for that signal, would
 * have: the sentry traces every guest task, so such a signal is queued and wakes it
 * (restart.c). Called at the signal's delivery stop (cbox_short_transfer) and at the syscall
 * stops of the pieces that move the rest (cbox_rest_stop, from tracer.c).
 */
#include <errno.h>
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
#include "internal.h"

/*
 * For cbox_short_transfer, below: SIGPIPE and SIGXFSZ are also what a write sends itself as it ends
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
 * moves, as it may under Linux while the call runs). A piece cut short ends the pieces: the call
 * gets back its registers and the sum so far, and if an ignored signal cut the piece, that
 * signal's stop then finds the call cut short once more and starts again on its rest (six
 * children exiting 25 ms apart during one 1 MiB transfer: all of it went). A notification reaches a
 * piece's exit stop whether the sentry answers or continues it; a ptrace platform's trap stop
 * (write is trapped under --strict) is answered without it, and is left as it was; so is a task
 * under a guest tracer (Linux wakes a traced task so too). A nonblocking write cut short by its
 * pipe's room and then met by the signal is written on as well: more of it may go, which a
 * nonblocking write may always do.
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
		/* (cut_short saw less than the count go) */
		w->total = w->args[2];
		r->rsi += w->done;
		r->rdx -= w->done;
		w->piece_nr = w->nr;
		break;
	case SYS_writev:
	case SYS_sendmsg:
	case SYS_recvmsg:
		if (!read_vector(tid, w, &off) || w->done >= w->total ||
		    !vector_piece(tid, w, off, r))
			return false;
		w->piece_nr = w->nr == SYS_writev    ? SYS_write
		              : w->nr == SYS_sendmsg ? SYS_sendto
		                                     : SYS_recvfrom;
		if (w->nr != SYS_writev) {
			r->r10 = w->args[2]; /* the call's flags */
			r->r8 = 0;
			r->r9 = 0;
		}
		break;
	default:
		return false;
	}
	/* (the pieces go on the connection the call made: they make none) */
	if (w->piece_nr == SYS_sendto)
		r->r10 &= ~(uint64_t)MSG_FASTOPEN;
	return true;
}

/* Registers r, which name w's next piece, made to run it: the instruction pointer back on the
 * syscall instruction, the piece's number in rax. */
static void aim(struct cbox_rest *w, struct user_regs_struct *r)
{
	w->piece = r->rdx;
	w->stops = 0;
	r->rip -= 2;
	r->rax = (uint64_t)w->piece_nr;
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

/* A receive's flags that wait for all it asks for from the stream. Not with MSG_PEEK: a piece
 * would peek at the same first bytes again, and copy them after the ones the cut call had
 * peeked; nor MSG_OOB or MSG_ERRQUEUE, which read one urgent byte or one error message, not the
 * stream. */
static bool waitall(int flags)
{
	return (flags & MSG_WAITALL) && !(flags & (MSG_PEEK | MSG_OOB | MSG_ERRQUEUE));
}

/* Whether call nr (registers r), which returned done > 0 bytes, may have been cut short of
 * what it would wait for, as far as its registers tell: a count it did not reach, or a vector
 * (read later); a MSG_WAITALL receive waits only on a stream (stream_socket). (Only a stream
 * moves part of a call: a datagram goes whole or not at all.) */
static bool cut_short(long nr, const struct user_regs_struct *r, uint64_t done)
{
	switch (nr) {
	case SYS_write:
	case SYS_sendto:
		return done < r->rdx;
	case SYS_recvfrom:
		return done < r->rdx && waitall((int)r->r10);
	case SYS_writev:
	case SYS_sendmsg:
		return true;
	case SYS_recvmsg:
		return waitall((int)r->rdx);
	default:
		return false;
	}
}

bool cbox_short_transfer(struct cbox_sentry *s, struct cbox_task *t, pid_t tid, int sig,
                         struct user_regs_struct *r)
{
	int64_t done = (int64_t)r->rax;
	long nr = (long)r->orig_rax;
	if (done <= 0 || !cut_short(nr, r, (uint64_t)done) || t->rest.done || t->pt.tracer ||
	    !cbox_signal_ignored_by(tid, sig) || raised_by_write(s, t, tid, sig))
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
	aim(&w, &p);
	*r = p;
	t->rest = w;
	return true;
}

/*
 * A syscall stop of a task moving the rest of a transfer (cbox_short_transfer): true when handled.
 * A piece is known by its return address and stack pointer, not by its number alone: a handler of a
 * signal that came before it ran may write through the same libc wrapper, on another stack. A task
 * that never gets back to it (a handler that jumps away) is let go after a while.
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
			aim(w, &p);
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
