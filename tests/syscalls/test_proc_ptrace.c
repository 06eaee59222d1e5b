/*
 * ptrace between a case and its own children: attach, seize, interrupt, peek and poke, registers,
 * signal-delivery, syscall, exec, fork and exit stops, single steps, a tracer's exit, and the
 * tracee's /proc/PID/mem. Split from test_proc_wait.c, whose children these cases reuse the
 * harness's helpers for (ct_spawn_idle, ct_exit_code). No privilege is needed.
 */
#include "compat_test.h"

#include <elf.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

/* Memory the cases peek, poke and read through /proc/PID/mem in their (forked) tracees. */
static char vm_buf[64] = "child memory";

CT_TEST(ptrace, traceme_then_stop)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(2);
		raise(SIGSTOP);
		_exit(0);
	}
	CT_TRUE(pid > 0);
	int st = ct_wait(pid);
	CT_TRUE(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
	/* Continue without delivering the SIGSTOP: the child runs on to _exit(0). */
	CT_OK(ptrace(PTRACE_CONT, pid, NULL, NULL));
	CT_EQ(ct_exit_code(pid), 0);
}

CT_TEST(ptrace, attach_peek_detach)
{
	pid_t pid = ct_spawn_idle();
	CT_OK(ptrace(PTRACE_ATTACH, pid, NULL, NULL));
	int st = ct_wait(pid);
	CT_TRUE(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
	errno = 0;
	long word = ptrace(PTRACE_PEEKDATA, pid, vm_buf, NULL);
	CT_EQ(errno, 0);
	CT_TRUE(memcmp(&word, vm_buf, sizeof(word)) == 0);
	CT_OK(ptrace(PTRACE_DETACH, pid, NULL, NULL));
	kill(pid, SIGKILL);
}

CT_TEST(ptrace, not_traced_esrch)
{
	pid_t pid = ct_spawn_idle();
	CT_ERR(ptrace(PTRACE_PEEKDATA, pid, vm_buf, NULL), ESRCH);
	CT_ERR(ptrace(PTRACE_CONT, pid, NULL, NULL), ESRCH);
	kill(pid, SIGKILL);
}

CT_TEST(ptrace, attach_refusals)
{
	CT_ERR(ptrace(PTRACE_ATTACH, getpid(), NULL, NULL), EPERM); /* its own process */
	pid_t pid = ct_spawn_idle();
	CT_OK(ptrace(PTRACE_ATTACH, pid, NULL, NULL));
	CT_ERR(ptrace(PTRACE_ATTACH, pid, NULL, NULL), EPERM); /* traced already */
	int st = ct_wait(pid);
	CT_TRUE(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
	CT_ERR(ptrace(PTRACE_CONT, pid, NULL, (void *)100L), EIO); /* no such signal */
	CT_ERR(ptrace(PTRACE_INTERRUPT, pid, NULL, NULL), EIO);    /* not seized */
	CT_OK(ptrace(PTRACE_DETACH, pid, NULL, NULL));
	CT_ERR(ptrace(PTRACE_DETACH, pid, NULL, NULL), ESRCH); /* not traced any more */
	/* Detached, it runs again: a SIGTERM ends it (a stopped tracee would wait for good). */
	CT_OK(kill(pid, SIGTERM));
	st = ct_wait(pid);
	CT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
}

CT_TEST(ptrace, seize_interrupt_regs)
{
	pid_t pid = ct_spawn_idle();
	CT_OK(ptrace(PTRACE_SEIZE, pid, NULL, NULL));
	int st;
	CT_EQ(waitpid(pid, &st, WNOHANG | __WALL), 0); /* seized: not stopped */
	CT_OK(ptrace(PTRACE_INTERRUPT, pid, NULL, NULL));
	st = ct_wait(pid);
	CT_TRUE(WIFSTOPPED(st) && (st >> 8) == (SIGTRAP | (PTRACE_EVENT_STOP << 8)));
	struct user_regs_struct regs;
	CT_OK(ptrace(PTRACE_GETREGS, pid, NULL, &regs));
	char big[sizeof(struct user_regs_struct) + 256];
	struct iovec iov = {big, sizeof(big)};
	CT_OK(ptrace(PTRACE_GETREGSET, pid, (void *)NT_PRSTATUS, &iov));
	CT_EQ(iov.iov_len, sizeof(struct user_regs_struct)); /* trimmed to the set's size */
	struct user_regs_struct *rs = (struct user_regs_struct *)big;
	CT_EQ(rs->rsp, regs.rsp);
	CT_EQ(rs->rip, regs.rip);
	siginfo_t si;
	CT_OK(ptrace(PTRACE_GETSIGINFO, pid, NULL, &si));
	CT_EQ(si.si_signo, SIGTRAP);
	CT_EQ(si.si_code, SIGTRAP | (PTRACE_EVENT_STOP << 8));
	CT_EQ(si.si_pid, pid);
	errno = 0;
	long word =
	    ptrace(PTRACE_PEEKUSER, pid, (void *)offsetof(struct user_regs_struct, rsp), NULL);
	CT_EQ(errno, 0);
	CT_EQ((unsigned long long)word, regs.rsp);
	CT_ERR(ptrace(PTRACE_PEEKUSER, pid, (void *)3L, NULL), EIO); /* not aligned */
	CT_OK(ptrace(PTRACE_DETACH, pid, NULL, NULL));
	kill(pid, SIGKILL);
	CT_TRUE(WIFSIGNALED(ct_wait(pid)));
}

static volatile sig_atomic_t got_usr1;

static void on_usr1(int sig)
{
	(void)sig;
	got_usr1 = 1;
}

/* A tracee's signal stops at its delivery; the tracer's CONT decides whether it is delivered. */
static pid_t traced_raiser(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGUSR1, on_usr1);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(2);
		raise(SIGUSR1);
		_exit(got_usr1 ? 10 : 11);
	}
	return pid;
}

CT_TEST(ptrace, signal_stop_cont)
{
	for (int deliver = 0; deliver < 2; deliver++) {
		pid_t pid = traced_raiser();
		CT_TRUE(pid > 0);
		int st = ct_wait(pid);
		CT_TRUE(WIFSTOPPED(st) && WSTOPSIG(st) == SIGUSR1);
		siginfo_t si;
		CT_OK(ptrace(PTRACE_GETSIGINFO, pid, NULL, &si));
		CT_EQ(si.si_signo, SIGUSR1);
		CT_EQ(si.si_pid, pid); /* raised by itself */
		CT_OK(ptrace(PTRACE_CONT, pid, NULL, (void *)(long)(deliver ? SIGUSR1 : 0)));
		CT_EQ(ct_exit_code(pid), deliver ? 10 : 11);
	}
}

CT_TEST(ptrace, attach_waitid)
{
	pid_t pid = ct_spawn_idle();
	CT_OK(ptrace(PTRACE_ATTACH, pid, NULL, NULL));
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	CT_OK(waitid(P_PID, pid, &si, WEXITED | WSTOPPED | __WALL));
	CT_EQ(si.si_signo, SIGCHLD);
	CT_EQ(si.si_pid, pid);
	CT_EQ(si.si_code, CLD_TRAPPED);
	CT_EQ(si.si_status, SIGSTOP);
	memset(&si, 0xff, sizeof(si));
	CT_OK(waitid(P_PID, pid, &si, WEXITED | WSTOPPED | WNOHANG | __WALL));
	CT_EQ(si.si_pid, 0); /* reported once */
	CT_OK(ptrace(PTRACE_DETACH, pid, NULL, NULL));
	kill(pid, SIGKILL);
	ct_wait(pid);
}

static int untraced_child(void *arg)
{
	(void)arg;
	return 7;
}

/* CLONE_UNTRACED (the sanitizers' leak check clones its tracer so) makes a child as any other. */
CT_TEST(ptrace, clone_untraced)
{
	static char stack[65536] __attribute__((aligned(16)));
	pid_t pid = clone(untraced_child, stack + sizeof(stack), CLONE_UNTRACED | SIGCHLD, NULL);
	CT_TRUE(pid > 0);
	CT_EQ(ct_exit_code(pid), 7);
}

CT_TEST(ptrace, bad_pointers)
{
	pid_t pid = ct_spawn_idle();
	CT_OK(ptrace(PTRACE_ATTACH, pid, NULL, NULL));
	int st = ct_wait(pid);
	CT_TRUE(WIFSTOPPED(st));
	CT_ERR(ptrace(PTRACE_GETREGS, pid, NULL, (void *)8), EFAULT);
	CT_ERR(ptrace(PTRACE_GETREGSET, pid, (void *)NT_PRSTATUS, (void *)8), EFAULT);
	struct iovec iov = {(void *)8, 4096};
	CT_ERR(ptrace(PTRACE_GETREGSET, pid, (void *)NT_PRSTATUS, &iov), EFAULT);
	char buf[64];
	struct iovec small = {buf, sizeof(buf)};
	CT_ERR(ptrace(PTRACE_GETREGSET, pid, (void *)0x7fffffffL, &small),
	       EINVAL);                                             /* no such set */
	CT_ERR(ptrace(PTRACE_PEEKDATA, pid, (void *)8, NULL), EIO); /* not mapped */
	CT_ERR(ptrace(PTRACE_GETSIGINFO, pid, NULL, (void *)8), EFAULT);
	CT_ERR(ptrace((enum __ptrace_request)0x7777, pid, NULL, NULL), EIO); /* no such request */
	CT_OK(ptrace(PTRACE_DETACH, pid, NULL, NULL));
	kill(pid, SIGKILL);
	ct_wait(pid);
}

CT_TEST(ptrace, tracee_killed_while_stopped)
{
	pid_t pid = ct_spawn_idle();
	CT_OK(ptrace(PTRACE_ATTACH, pid, NULL, NULL));
	CT_TRUE(WIFSTOPPED(ct_wait(pid)));
	CT_OK(kill(pid, SIGKILL)); /* SIGKILL ends a stopped tracee */
	int st = ct_wait(pid);
	CT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

/* A tracer that exits without detaching lets its stopped tracees run on. */
CT_TEST(ptrace, tracer_exit_releases)
{
	int in[2], out[2];
	CT_OK(pipe(in));
	CT_OK(pipe(out));
	pid_t echo = fork();
	if (echo == 0) {
		char c;
		close(in[1]);
		close(out[0]);
		while (read(in[0], &c, 1) == 1)
			if (write(out[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	CT_TRUE(echo > 0);
	pid_t tracer = fork();
	if (tracer == 0) {
		int st;
		if (ptrace(PTRACE_ATTACH, echo, NULL, NULL) < 0 ||
		    waitpid(echo, &st, __WALL) != echo || !WIFSTOPPED(st))
			_exit(1);
		_exit(0); /* still attached */
	}
	CT_EQ(ct_exit_code(tracer), 0);
	char c = 0;
	CT_EQ(write(in[1], "x", 1), 1);
	CT_EQ(read(out[0], &c, 1), 1); /* the echo answers: it runs again */
	CT_EQ(c, 'x');
	close(in[1]);
	CT_EQ(ct_exit_code(echo), 0);
}

/* A child that asks to be traced and stops, waited for at that stop. */
static pid_t traceme_child(void (*body)(void))
{
	pid_t pid = fork();
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(2);
		raise(SIGSTOP);
		body();
		_exit(0);
	}
	CT_TRUE(pid > 0);
	int st = ct_wait(pid);
	CT_TRUE(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
	return pid;
}

static void body_getppid(void)
{
	syscall(SYS_getppid);
	_exit(strcmp(vm_buf, "written by parent") == 0 ? 0 : 1);
}

/* A tracer writes its tracee's memory and registers (a debugger's breakpoints and jumps). */
CT_TEST(ptrace, poke_and_setregs)
{
	pid_t pid = traceme_child(body_getppid);
	static const char msg[] = "written by parent";
	for (size_t i = 0; i < sizeof(msg); i += sizeof(long)) {
		long w = 0;
		memcpy(&w, msg + i, sizeof(msg) - i < sizeof(w) ? sizeof(msg) - i : sizeof(w));
		CT_OK(ptrace(PTRACE_POKEDATA, pid, vm_buf + i, (void *)w));
	}
	CT_ERR(ptrace(PTRACE_POKEDATA, pid, (void *)8, (void *)1L), EIO); /* not mapped */
	struct user_regs_struct r, back;
	CT_OK(ptrace(PTRACE_GETREGS, pid, NULL, &r));
	r.r12 = 0x1234567;
	CT_OK(ptrace(PTRACE_SETREGS, pid, NULL, &r));
	CT_OK(ptrace(PTRACE_GETREGS, pid, NULL, &back));
	CT_EQ(back.r12, 0x1234567);
	errno = 0;
	long r12 =
	    ptrace(PTRACE_PEEKUSER, pid, (void *)offsetof(struct user_regs_struct, r12), NULL);
	CT_EQ(errno, 0);
	CT_EQ(r12, 0x1234567);
	CT_OK(ptrace(PTRACE_CONT, pid, NULL, NULL));
	CT_EQ(ct_exit_code(pid), 0);
}

/* PTRACE_SYSCALL: a stop at the call's entry (its number, -ENOSYS in rax) and at its exit (its
 * result), as strace sees them; PTRACE_GET_SYSCALL_INFO says which. */
CT_TEST(ptrace, syscall_stops)
{
	pid_t pid = traceme_child(body_getppid);
	CT_OK(ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)PTRACE_O_TRACESYSGOOD));
	bool entry = false, exit_seen = false;
	for (int i = 0; i < 50 && !exit_seen; i++) {
		CT_OK(ptrace(PTRACE_SYSCALL, pid, NULL, NULL));
		int st = ct_wait(pid);
		CT_TRUE(WIFSTOPPED(st) && WSTOPSIG(st) == (SIGTRAP | 0x80));
		struct user_regs_struct r;
		CT_OK(ptrace(PTRACE_GETREGS, pid, NULL, &r));
		struct __ptrace_syscall_info info;
		long n = ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(info), &info);
		CT_TRUE(n > 0);
		if (r.orig_rax != SYS_getppid)
			continue;
		if (!entry) {
			CT_EQ(info.op, PTRACE_SYSCALL_INFO_ENTRY);
			CT_EQ(info.entry.nr, SYS_getppid);
			CT_EQ((long)r.rax, -ENOSYS);
			entry = true;
		} else {
			CT_EQ(info.op, PTRACE_SYSCALL_INFO_EXIT);
			CT_EQ((long)r.rax, getpid());
			CT_EQ(info.exit.rval, getpid());
			exit_seen = true;
		}
	}
	CT_TRUE(entry && exit_seen);
	/* Its memory was not written: it exits 1. */
	CT_OK(ptrace(PTRACE_CONT, pid, NULL, NULL));
	CT_EQ(ct_exit_code(pid), 1);
}

static void body_exec_true(void)
{
	execl("/bin/true", "true", (char *)NULL);
	_exit(3);
}

/* An exec by a tracee that asked for no event: a SIGTRAP after it, the new program not yet
 * started (its auxv's entry point is where it stands or, with an interpreter, yet to come). */
CT_TEST(ptrace, exec_sigtrap)
{
	pid_t pid = traceme_child(body_exec_true);
	CT_OK(ptrace(PTRACE_CONT, pid, NULL, NULL));
	int st = ct_wait(pid);
	CT_TRUE(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP);
	struct user_regs_struct r;
	CT_OK(ptrace(PTRACE_GETREGS, pid, NULL, &r));
	CT_EQ(r.rax, 0);
	/* The entry of the new image: the interpreter's (AT_BASE's) or the program's. */
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	int fd = CT_OK(open(path, O_RDONLY));
	unsigned long aux[128] = {0}, base = 0, entry = 0;
	long n = CT_OK(read(fd, aux, sizeof(aux)));
	close(fd);
	for (long i = 0; i + 1 < n / (long)sizeof(long); i += 2) {
		if (aux[i] == AT_BASE)
			base = aux[i + 1];
		if (aux[i] == AT_ENTRY)
			entry = aux[i + 1];
	}
	CT_TRUE(entry != 0);
	CT_TRUE(base ? r.rip >= base && r.rip < base + (1UL << 24) : r.rip == entry);
	/* Passing the SIGTRAP on would kill it: suppressed, it runs /bin/true. */
	CT_OK(ptrace(PTRACE_CONT, pid, NULL, NULL));
	CT_EQ(ct_exit_code(pid), 0);
}

static void body_fork(void)
{
	pid_t c = fork();
	if (c == 0)
		_exit(7);
	int st;
	waitpid(c, &st, 0);
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 99);
}

/* Event options: a fork's event stop names the child, which is traced from its first stop; the
 * child's exit is reported to the tracer; PTRACE_O_TRACEEXIT stops the parent before its exit
 * with its status. */
CT_TEST(ptrace, fork_and_exit_events)
{
	pid_t pid = traceme_child(body_fork);
	CT_OK(ptrace(PTRACE_SETOPTIONS, pid, NULL,
	             (void *)(PTRACE_O_TRACEFORK | PTRACE_O_TRACEEXIT)));
	CT_OK(ptrace(PTRACE_CONT, pid, NULL, NULL));
	int st = ct_wait(pid);
	CT_TRUE(WIFSTOPPED(st) && st >> 8 == (SIGTRAP | (PTRACE_EVENT_FORK << 8)));
	unsigned long child = 0;
	CT_OK(ptrace(PTRACE_GETEVENTMSG, pid, NULL, &child));
	CT_TRUE(child > 0);
	/* The child's first stop: a SIGSTOP (the parent was not seized). */
	CT_EQ(waitpid((pid_t)child, &st, __WALL), (pid_t)child);
	CT_TRUE(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
	CT_OK(ptrace(PTRACE_CONT, (pid_t)child, NULL, NULL));
	/* It inherited the options: its exit event, then its exit, though it is not the tracer's
	 * child. */
	CT_EQ(waitpid((pid_t)child, &st, __WALL), (pid_t)child);
	CT_TRUE(WIFSTOPPED(st) && st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8)));
	CT_OK(ptrace(PTRACE_CONT, (pid_t)child, NULL, NULL));
	CT_EQ(waitpid((pid_t)child, &st, __WALL), (pid_t)child);
	CT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 7);
	/* The parent's SIGCHLD for it (a signal stop, passed on), then its own exit event. */
	int sig = 0;
	for (int i = 0; i < 3; i++) {
		CT_OK(ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig));
		st = ct_wait(pid);
		CT_TRUE(WIFSTOPPED(st));
		if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8)))
			break;
		CT_EQ(WSTOPSIG(st), SIGCHLD);
		sig = SIGCHLD;
	}
	CT_TRUE(st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8)));
	unsigned long status = 0;
	CT_OK(ptrace(PTRACE_GETEVENTMSG, pid, NULL, &status));
	CT_TRUE(WIFEXITED((int)status) && WEXITSTATUS((int)status) == 7);
	CT_OK(ptrace(PTRACE_CONT, pid, NULL, NULL));
	CT_EQ(ct_exit_code(pid), 7);
}

static void body_spin(void)
{
	for (volatile int i = 0; i < 1000000; i++)
		;
	_exit(0);
}

/* PTRACE_SINGLESTEP: one instruction, then a SIGTRAP stop further on. */
CT_TEST(ptrace, singlestep)
{
	pid_t pid = traceme_child(body_spin);
	struct user_regs_struct before, after;
	CT_OK(ptrace(PTRACE_GETREGS, pid, NULL, &before));
	for (int i = 0; i < 3; i++) {
		CT_OK(ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL));
		int st = ct_wait(pid);
		CT_TRUE(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP);
	}
	CT_OK(ptrace(PTRACE_GETREGS, pid, NULL, &after));
	CT_TRUE(after.rip != before.rip);
	CT_OK(ptrace(PTRACE_CONT, pid, NULL, NULL));
	CT_EQ(ct_exit_code(pid), 0);
}

/* /proc/PID/mem: a tracer reads and writes its tracee's memory there, read-only text too (a
 * breakpoint), as gdb does. */
CT_TEST(ptrace, proc_pid_mem)
{
	pid_t pid = traceme_child(body_getppid);
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	int fd = CT_OK(open(path, O_RDWR));
	char got[16] = {0};
	CT_EQ(pread(fd, got, 12, (off_t)(uintptr_t)vm_buf), 12);
	CT_TRUE(memcmp(got, "child memory", 12) == 0);
	static const char msg[] = "written by parent";
	CT_EQ(pwrite(fd, msg, sizeof(msg), (off_t)(uintptr_t)vm_buf), (long)sizeof(msg));
	/* Text is read-only to the program, not to its tracer. */
	unsigned char code, back;
	off_t text = (off_t)(uintptr_t)&body_spin;
	CT_EQ(pread(fd, &code, 1, text), 1);
	CT_EQ(pwrite(fd, &code, 1, text), 1);
	CT_EQ(pread(fd, &back, 1, text), 1);
	CT_EQ(back, code);
	close(fd);
	CT_OK(ptrace(PTRACE_CONT, pid, NULL, NULL));
	CT_EQ(ct_exit_code(pid), 0);
}
