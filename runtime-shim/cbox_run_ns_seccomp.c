/*
 * The seccomp profile of cbox-run's ns-tier bundles (cbox_run_ns.c). runc applies only what a
 * bundle asks for, and Docker writes its default profile into every bundle it makes: cbox-run,
 * which makes these bundles, did not, and its ns sandbox ran with no filter at all (`Seccomp: 0`).
 *
 * A deny list on top of an allowing default, each denial EPERM unless said otherwise:
 * - what Docker's default profile refuses a container without extra capabilities: kernel
 *   modules and kexec, mounts and new mount API calls, pivot_root, namespaces (unshare, setns,
 *   a clone asking for one; clone3, whose flags a filter cannot read, is ENOSYS, so that glibc
 *   falls back to clone), the kernel keyring, bpf, perf_event_open, userfaultfd, io_uring,
 *   open_by_handle_at and name_to_handle_at, swap, accounting, reboot, the clock, quotactl and
 *   the obsolete calls (sysfs, ustat, uselib, vm86, iopl, ioperm...);
 * - set-user-ID and set-group-ID bits on any file (chmod, fchmod, fchmodat, fchmodat2, and an
 *   open with O_CREAT or O_TMPFILE, creat, mknod or mknodat asking for them; openat2, whose
 *   mode a filter cannot read, is ENOSYS): the program runs as the caller's uid (host root when
 *   root runs cbox-run) on a writable working folder, where such a program, or one given to a
 *   group like shadow, would be a privileged program for every local user once the sandbox is
 *   gone. The sentry tier keeps those bits to itself for the same reason (sentry/owners.c,
 *   gofer safe_mode).
 *   (CAP_SETFCAP, which would let it leave a file with capabilities, is not in the bundle's
 *   capability sets: cbox_run_ns.c.)
 * The architectures are x86_64's three ABIs, so that no call of the i386 or x32 numbering
 * passes by another number.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "cbox_run.h"

static const char *const refused[] = {"acct",
                                      "add_key",
                                      "bpf",
                                      "clock_adjtime",
                                      "clock_settime",
                                      "create_module",
                                      "delete_module",
                                      "finit_module",
                                      "fsconfig",
                                      "fsmount",
                                      "fsopen",
                                      "fspick",
                                      "get_kernel_syms",
                                      "init_module",
                                      "io_uring_enter",
                                      "io_uring_register",
                                      "io_uring_setup",
                                      "ioperm",
                                      "iopl",
                                      "kexec_file_load",
                                      "kexec_load",
                                      "keyctl",
                                      "lookup_dcookie",
                                      "mount",
                                      "mount_setattr",
                                      "move_mount",
                                      "name_to_handle_at",
                                      "nfsservctl",
                                      "open_by_handle_at",
                                      "open_tree",
                                      "perf_event_open",
                                      "pivot_root",
                                      "query_module",
                                      "quotactl",
                                      "quotactl_fd",
                                      "reboot",
                                      "request_key",
                                      "setns",
                                      "settimeofday",
                                      "stime",
                                      "swapoff",
                                      "swapon",
                                      "sysfs",
                                      "_sysctl",
                                      "umount",
                                      "umount2",
                                      "unshare",
                                      "uselib",
                                      "userfaultfd",
                                      "ustat",
                                      "vm86",
                                      "vm86old"};

/* An argument comparison: arg & mask == value. */
static json_object *masked(unsigned index, uint64_t mask, uint64_t value)
{
	json_object *a = json_object_new_object();
	json_object_object_add(a, "index", json_object_new_int64(index));
	json_object_object_add(a, "value", json_object_new_uint64(mask));
	json_object_object_add(a, "valueTwo", json_object_new_uint64(value));
	json_object_object_add(a, "op", json_object_new_string("SCMP_CMP_MASKED_EQ"));
	return a;
}

/* A rule refusing name with errno err when every comparison of args (may be NULL) holds. */
static void refuse(json_object *rules, const char *name, int err, json_object *args)
{
	json_object *r = json_object_new_object(), *names = json_object_new_array();
	json_object_array_add(names, json_object_new_string(name));
	json_object_object_add(r, "names", names);
	json_object_object_add(r, "action", json_object_new_string("SCMP_ACT_ERRNO"));
	json_object_object_add(r, "errnoRet", json_object_new_int(err));
	if (args)
		json_object_object_add(r, "args", args);
	json_object_array_add(rules, r);
}

/* Refuse name when argument mode_arg has bit and (for an open, flags_arg >= 0) the flags have
 * every bit of flag: an open gives a mode only with O_CREAT or O_TMPFILE. */
static void refuse_mode_bit(json_object *rules, const char *name, int flags_arg, uint64_t flag,
                            unsigned mode_arg, unsigned bit)
{
	json_object *args = json_object_new_array();
	if (flags_arg >= 0)
		json_object_array_add(args, masked((unsigned)flags_arg, flag, flag));
	json_object_array_add(args, masked(mode_arg, bit, bit));
	refuse(rules, name, EPERM, args);
}

json_object *cbox_run_ns_seccomp(void)
{
	json_object *p = json_object_new_object(), *arches = json_object_new_array();
	json_object *rules = json_object_new_array();
	json_object_object_add(p, "defaultAction", json_object_new_string("SCMP_ACT_ALLOW"));
	static const char *const abis[] = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"};
	for (size_t i = 0; i < sizeof(abis) / sizeof(abis[0]); i++)
		json_object_array_add(arches, json_object_new_string(abis[i]));
	json_object_object_add(p, "architectures", arches);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		refuse(rules, refused[i], EPERM, NULL);
	static const uint64_t ns_flags[] = {CLONE_NEWNS,    CLONE_NEWUTS, CLONE_NEWIPC,
	                                    CLONE_NEWUSER,  CLONE_NEWPID, CLONE_NEWNET,
	                                    CLONE_NEWCGROUP};
	for (size_t i = 0; i < sizeof(ns_flags) / sizeof(ns_flags[0]); i++) {
		json_object *args = json_object_new_array();
		json_object_array_add(args, masked(0, ns_flags[i], ns_flags[i]));
		refuse(rules, "clone", EPERM, args);
	}
	refuse(rules, "clone3", ENOSYS, NULL);
	refuse(rules, "openat2", ENOSYS, NULL);
	static const struct {
		const char *name;
		int flags_arg;
		unsigned mode_arg;
	} modes[] = {{"chmod", -1, 1},     {"fchmod", -1, 1}, {"fchmodat", -1, 2},
	             {"fchmodat2", -1, 2}, {"creat", -1, 1},  {"open", 1, 2},
	             {"openat", 2, 3},     {"mknod", -1, 1},  {"mknodat", -1, 2}};
	static const unsigned bits[] = {S_ISUID, S_ISGID};
	static const uint64_t opens[] = {O_CREAT, O_TMPFILE};
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		for (size_t b = 0; b < 2; b++)
			for (size_t o = 0; o < (modes[i].flags_arg >= 0 ? 2 : 1); o++)
				refuse_mode_bit(rules, modes[i].name, modes[i].flags_arg, opens[o],
				                modes[i].mode_arg, bits[b]);
	json_object_object_add(p, "syscalls", rules);
	return p;
}
