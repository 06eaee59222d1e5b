/* linux.seccomp through libseccomp. */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>

#include "cbox/log.h"
#include "internal.h"

static int action(enum cbox_oci_seccomp_action a, bool has_errno, uint32_t errno_ret, uint32_t *out,
                  struct cbox_err **err)
{
	switch (a) {
	case CBOX_OCI_SCMP_KILL:
		*out = SCMP_ACT_KILL;
		return 0;
	case CBOX_OCI_SCMP_KILL_PROCESS:
		*out = SCMP_ACT_KILL_PROCESS;
		return 0;
	case CBOX_OCI_SCMP_TRAP:
		*out = SCMP_ACT_TRAP;
		return 0;
	case CBOX_OCI_SCMP_ERRNO:
		*out = SCMP_ACT_ERRNO(has_errno ? errno_ret : EPERM);
		return 0;
	case CBOX_OCI_SCMP_TRACE:
		*out = SCMP_ACT_TRACE(has_errno ? errno_ret : EPERM);
		return 0;
	case CBOX_OCI_SCMP_ALLOW:
		*out = SCMP_ACT_ALLOW;
		return 0;
	case CBOX_OCI_SCMP_LOG:
		*out = SCMP_ACT_LOG;
		return 0;
	case CBOX_OCI_SCMP_NOTIFY:
		break;
	}
	return cbox_err_set(err, ENOTSUP, "linux.seccomp: SCMP_ACT_NOTIFY is not supported");
}

static int add_rule(scmp_filter_ctx ctx, uint32_t def, const struct cbox_oci_seccomp_rule *r,
                    size_t ri, struct cbox_err **err)
{
	static const enum scmp_compare ops[] = {SCMP_CMP_NE,       SCMP_CMP_LT, SCMP_CMP_LE,
	                                        SCMP_CMP_EQ,       SCMP_CMP_GE, SCMP_CMP_GT,
	                                        SCMP_CMP_MASKED_EQ};
	uint32_t act = 0; /* (set unless action fails; -O3 cannot tell) */
	if (action(r->action, r->has_errno_ret, r->errno_ret, &act, err) < 0)
		return -1;
	if (act == def)
		return 0; /* libseccomp refuses a rule that repeats the default; it changes nothing
		           */
	struct scmp_arg_cmp cmp[6];
	size_t n = r->n_args < 6 ? r->n_args : 6;
	bool repeated = false;
	for (size_t i = 0; i < n; i++) {
		cmp[i] = (struct scmp_arg_cmp){.arg = r->args[i].index,
		                               .op = ops[r->args[i].op],
		                               .datum_a = r->args[i].value,
		                               .datum_b = r->args[i].value_two};
		for (size_t j = 0; j < i; j++)
			repeated |= cmp[j].arg == cmp[i].arg;
	}
	for (size_t i = 0; i < r->n_names; i++) {
		int nr = seccomp_syscall_resolve_name(r->names[i]);
		if (nr == __NR_SCMP_ERROR) {
			cbox_debug("seccomp: syscall %s unknown on this architecture, skipped",
			           r->names[i]);
			continue;
		}
		/* Comparisons on the same argument are alternatives (runc): one rule each. */
		int rc = 0;
		if (repeated)
			for (size_t k = 0; k < n && rc == 0; k++)
				rc = seccomp_rule_add_array(ctx, act, nr, 1, &cmp[k]);
		else
			rc = seccomp_rule_add_array(ctx, act, nr, (unsigned)n, cmp);
		if (rc < 0)
			return cbox_err_set(err, -rc, "linux.seccomp.syscalls[%zu]: add %s", ri,
			                    r->names[i]);
	}
	return 0;
}

int ns_apply_seccomp(const struct cbox_oci_seccomp *s, struct cbox_err **err)
{
	uint32_t def = 0; /* (as act in add_rule) */
	if (action(s->default_action, s->has_default_errno_ret, s->default_errno_ret, &def, err) <
	    0)
		return -1;
	scmp_filter_ctx ctx = seccomp_init(def);
	if (!ctx)
		return cbox_err_set(err, ENOMEM, "seccomp_init");
	int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	for (size_t i = 0; rc == 0 && i < s->n_architectures; i++) {
		char name[64];
		const char *a = s->architectures[i];
		snprintf(name, sizeof(name), "%s", strncmp(a, "SCMP_ARCH_", 10) ? a : a + 10);
		for (char *c = name; *c; c++)
			*c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
		uint32_t arch = seccomp_arch_resolve_name(name);
		if (!arch) {
			cbox_debug("seccomp: architecture %s unknown, skipped", a);
			continue;
		}
		rc = seccomp_arch_add(ctx, arch);
		if (rc == -EEXIST)
			rc = 0;
	}
	for (size_t i = 0; rc == 0 && i < s->n_rules; i++)
		if (add_rule(ctx, def, &s->rules[i], i, err) < 0) {
			seccomp_release(ctx);
			return -1;
		}
	if (rc == 0)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	return rc < 0 ? cbox_err_set(err, -rc, "load the seccomp filter (linux.seccomp)") : 0;
}
