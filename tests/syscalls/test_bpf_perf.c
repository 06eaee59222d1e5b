/*
 * bpf and perf_event_open: only argument checks whose answer is the same with and without
 * privilege (the kernel validates these before any capability check).
 */
#include "compat_test.h"

#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

CT_TEST(bpf, bad_cmd_einval)
{
	union bpf_attr attr;
	memset(&attr, 0, sizeof(attr));
	CT_ERR(syscall(SYS_bpf, 9999, &attr, sizeof(attr)), EINVAL);
}

CT_TEST(bpf, null_attr_efault)
{
	CT_ERR(syscall(SYS_bpf, BPF_MAP_CREATE, NULL, sizeof(union bpf_attr)), EFAULT);
}

CT_TEST(bpf, nonzero_tail_e2big)
{
	/* Bytes past the attr size the kernel knows must be zero. */
	static char big[8192];
	memset(big, 0, sizeof(big));
	big[sizeof(big) - 1] = 1;
	CT_ERR(syscall(SYS_bpf, BPF_MAP_CREATE, big, sizeof(big)), E2BIG);
}

CT_TEST(perf_event_open, null_attr_efault)
{
	CT_ERR(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0), EFAULT);
}

CT_TEST(perf_event_open, bad_flags_einval)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	CT_ERR(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 1UL << 40), EINVAL);
}

CT_TEST(perf_event_open, unknown_pmu_type_enoent)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = 0x7ffffff0; /* no such PMU */
	/* User-space-only counting of oneself passes the paranoid checks unprivileged. */
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	CT_ERR(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0), ENOENT);
}

CT_TEST(perf_event_open, bad_size_e2big)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = 1; /* smaller than the first published struct */
	CT_ERR(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0), E2BIG);
}
