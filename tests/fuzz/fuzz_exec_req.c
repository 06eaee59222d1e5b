/*
 * Fuzz target for cbox_exec_req_decode, the sentry's parser of `cbox exec` requests: any bytes
 * as one message. A decoded request must be NULL-terminated with the counts it claims, have a
 * non-empty argv[0] and an absolute cwd, carry a user exactly when CBOX_EXEC_USER is in its flags
 * (no id of (uint32_t)-1, at most CBOX_EXEC_REQ_MAX_GROUPS groups), and encode back to exactly
 * the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cbox/exec_req.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_user(const struct cbox_exec_req *r)
{
	if (r->has_user != ((r->flags & CBOX_EXEC_USER) != 0) ||
	    r->ngroups > CBOX_EXEC_REQ_MAX_GROUPS || (r->ngroups != 0) != (r->groups != NULL))
		abort();
	if (!r->has_user) {
		if (r->uid || r->gid || r->ngroups)
			abort();
		return;
	}
	if (r->uid == UINT32_MAX || r->gid == UINT32_MAX)
		abort();
	for (size_t i = 0; i < r->ngroups; i++)
		if (r->groups[i] == UINT32_MAX)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cbox_exec_req r;
	if (cbox_exec_req_decode(data, size, &r) != 0)
		return 0;
	if (r.argc == 0 || r.argv[r.argc] != NULL || r.envp[r.envc] != NULL || !r.argv[0][0] ||
	    r.cwd[0] != '/')
		abort();
	check_user(&r);
	struct cbox_exec_user user = {r.uid, r.gid, r.ngroups, r.groups};
	char *out = NULL;
	size_t len = 0;
	if (cbox_exec_req_encode(r.argv, r.envp, r.cwd, r.flags, r.has_user ? &user : NULL, &out,
	                         &len) != 0 ||
	    len != size || memcmp(out, data, size) != 0)
		abort();
	free(out);
	cbox_exec_req_release(&r);
	(void)cbox_exec_reply_valid(data, size);
	return 0;
}
