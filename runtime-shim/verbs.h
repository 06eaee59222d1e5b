#pragma once
/* The verbs of the `cbox` command, one file each. Each returns the process exit status. */
int cbox_verb_syscalls(int argc, char **argv);
