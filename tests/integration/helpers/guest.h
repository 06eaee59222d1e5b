#pragma once
#include <sys/types.h>

/* What the files of cbox-test-guest share (guest.c has the program and its conventions). */

/* The symbolic name of an errno value ("EPERM"), or "E?". */
const char *errname(int e);

/* The commands that reach into other processes (guest_procs.c). */
int cmd_ptrace_guard(void);
int cmd_cross_user(void);
int cmd_prio_user(void);
int cmd_signal_storm(int argc, char **argv);
int cmd_kill_eintr(int argc, char **argv);
int cmd_stop_hold(int argc, char **argv);
int cmd_open_loop(int argc, char **argv);
int cmd_exec_threads(int argc, char **argv);
/* The state letter of /proc/PID/stat, or '?'. */
char proc_state(pid_t pid);

/* What a signal does to the call it interrupts (guest_wake.c). */
int cmd_cont_term(int argc, char **argv);
int cmd_ignored_wake(void);
int cmd_short_write(void);
int cmd_short_write_end(void);

/* Attacks on the sentry's own ptrace-stop work (guest_escape.c). */
int cmd_inject_race(void);
int cmd_install_theft(int argc, char **argv);
int cmd_reserved_fd(void);
int cmd_exec_theft(int argc, char **argv, const char *self);
int cmd_exec_theft_victim(int argc, char **argv);
