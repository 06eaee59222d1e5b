/*
 * cbox-run -t: the guest gets a pseudo-terminal of its own, never the caller's terminal. The
 * caller's terminal is put in raw mode and cbox-run copies bytes both ways between it and the
 * pty's master, and passes window-size changes on; whatever the guest does to its terminal
 * (modes, TIOCSTI, job control) stays inside the pty.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "cbox/log.h"
#include "cbox_run.h"

static struct termios saved;
static bool raw_set;
static volatile sig_atomic_t winch;

static void on_winch(int sig)
{
	(void)sig;
	winch = 1;
}

int cbox_run_tty_open(struct cbox_run_tty *t, uid_t uid)
{
	*t = (struct cbox_run_tty){.master = -1, .slave = -1};
	t->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (t->master < 0 || grantpt(t->master) < 0 || unlockpt(t->master) < 0) {
		cbox_error("-t: allocating a pseudo-terminal: %s", strerror(errno));
		return -1;
	}
	const char *name = ptsname(t->master);
	t->slave = name ? open(name, O_RDWR | O_NOCTTY | O_CLOEXEC) : -1;
	if (t->slave < 0) {
		cbox_error("-t: opening the pseudo-terminal: %s", strerror(errno));
		return -1;
	}
	/* The sentry reopens the terminal for /dev/tty as the sandbox's host uid: the pty is the
	 * sandbox's own, so it is given to that uid (it is no one else's business). */
	if (fchown(t->slave, uid, (gid_t)-1) < 0)
		cbox_warn("-t: giving the pseudo-terminal to uid %u: %s", (unsigned)uid,
		          strerror(errno));
	/* The guest's terminal starts as the caller's: same modes and size. */
	struct winsize ws;
	if (isatty(0)) {
		struct termios tio;
		if (tcgetattr(0, &tio) == 0)
			tcsetattr(t->slave, TCSANOW, &tio);
		if (ioctl(0, TIOCGWINSZ, &ws) == 0)
			ioctl(t->slave, TIOCSWINSZ, &ws);
	}
	return 0;
}

/* The caller's terminal in raw mode while the guest runs (restored by cbox_run_tty_restore). */
static void make_raw(void)
{
	if (!isatty(0) || tcgetattr(0, &saved) < 0)
		return;
	struct termios raw = saved;
	cfmakeraw(&raw);
	if (tcsetattr(0, TCSANOW, &raw) == 0)
		raw_set = true;
}

void cbox_run_tty_restore(void)
{
	if (raw_set)
		tcsetattr(0, TCSANOW, &saved);
	raw_set = false;
}

/* Copy what is readable from in to out; returns bytes copied, 0 at EOF, -1 on error. */
static ssize_t pump(int in, int out)
{
	char buf[4096];
	ssize_t n = read(in, buf, sizeof(buf));
	if (n <= 0)
		return n < 0 && (errno == EAGAIN || errno == EINTR) ? 1 : n;
	for (ssize_t off = 0; off < n;) {
		ssize_t w = write(out, buf + off, (size_t)(n - off));
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		off += w;
	}
	return n;
}

/* The end of the caller's input: ^D, which the guest's read sees as its end. */
static void send_eof(int master)
{
	char eof = 4;
	(void)!write(master, &eof, 1);
}

/*
 * What the caller's terminal already holds, taken in its own (canonical) mode before the switch
 * to raw: the lines typed ahead, and an end of input waiting there. A `script` whose own input
 * ended writes ^D into its terminal at once, which the line discipline keeps as a NUL marker;
 * the switch to raw mode turned that marker into a NUL byte, which the guest's terminal echoed
 * as a stray "^@" before the program's output. Returns false at the end of input. Only complete
 * lines (or the end) are readable in canonical mode, so the reads do not block; a line still
 * being typed stays for the raw relay.
 */
static bool take_typeahead(int master)
{
	struct termios tio;
	if (tcgetattr(0, &tio) < 0 || !(tio.c_lflag & ICANON))
		return true;
	for (;;) {
		struct pollfd pf = {.fd = 0, .events = POLLIN};
		if (poll(&pf, 1, 0) != 1 || !(pf.revents & POLLIN))
			return true;
		ssize_t n = pump(0, master);
		if (n == 0)
			return false;
		if (n < 0)
			return true; /* (the relay meets the error again) */
	}
}

int cbox_run_tty_relay(struct cbox_run_tty *t, pid_t sentry, int *status)
{
	/* The guest holds the slave through the sentry; cbox-run's copy would keep the master
	 * from seeing the end of the guest's output. */
	close(t->slave);
	t->slave = -1;
	bool in_open = take_typeahead(t->master);
	if (!in_open)
		send_eof(t->master);
	make_raw();
	signal(SIGWINCH, on_winch);
	/* The sentry's end wakes the loop through its pidfd (a look every 100 ms made a -t run end
	 * up to 100 ms after its program); without pidfd_open, that look again. */
	int pidfd = (int)syscall(SYS_pidfd_open, sentry, 0);
	bool failed = false;
	for (;;) {
		pid_t r = waitpid(sentry, status, WNOHANG);
		if (r == sentry)
			break;
		if (r < 0 && errno != EINTR) {
			failed = true;
			break;
		}
		if (winch) {
			winch = 0;
			struct winsize ws;
			if (ioctl(0, TIOCGWINSZ, &ws) == 0)
				ioctl(t->master, TIOCSWINSZ, &ws);
		}
		struct pollfd pf[3] = {{.fd = t->master, .events = POLLIN},
		                       {.fd = in_open ? 0 : -1, .events = POLLIN},
		                       {.fd = pidfd, .events = POLLIN}};
		if (poll(pf, 3, pidfd >= 0 ? -1 : 100) < 0 && errno != EINTR) {
			failed = true;
			break;
		}
		if (pf[0].revents & POLLIN)
			pump(t->master, 1);
		if (pf[1].revents & (POLLIN | POLLHUP)) {
			if (pump(0, t->master) <= 0) {
				in_open = false;
				send_eof(t->master);
			}
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	if (failed)
		return -1;
	/* What the guest wrote last. */
	int fl = fcntl(t->master, F_GETFL);
	fcntl(t->master, F_SETFL, fl | O_NONBLOCK);
	while (pump(t->master, 1) > 1)
		;
	cbox_run_tty_restore();
	close(t->master);
	t->master = -1;
	return 0;
}

void cbox_run_stop_self(void (*handler)(int))
{
	/* A handler runs with its own signal blocked: the default action needs it unblocked. */
	sigset_t tstp;
	sigemptyset(&tstp);
	sigaddset(&tstp, SIGTSTP);
	signal(SIGTSTP, SIG_DFL);
	sigprocmask(SIG_UNBLOCK, &tstp, NULL);
	raise(SIGTSTP); /* stops here until SIGCONT */
	signal(SIGTSTP, handler);
}
