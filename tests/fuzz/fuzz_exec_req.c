/*
 * Fuzz target for cbox_exec_req_decode, the sentry's parser of `cbox exec` requests: any bytes
 * as one message. A decoded request must be NULL-terminated with the counts it claims, have a
 * non-empty argv[0] and an absolute cwd, and encode back to exactly the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cbox/exec_req.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cbox_exec_req r;
	if (cbox_exec_req_decode(data, size, &r) != 0)
		return 0;
	if (r.argc == 0 || r.argv[r.argc] != NULL || r.envp[r.envc] != NULL || !r.argv[0][0] ||
	    r.cwd[0] != '/')
		abort();
	char *out = NULL;
	size_t len = 0;
	if (cbox_exec_req_encode(r.argv, r.envp, r.cwd, r.flags, &out, &len) != 0 || len != size ||
	    memcmp(out, data, size) != 0)
		abort();
	free(out);
	cbox_exec_req_release(&r);
	(void)cbox_exec_reply_valid(data, size);
	return 0;
}
