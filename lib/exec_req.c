/* The `cbox exec` request of a sentry sandbox (see cbox/exec_req.h). */
#include "cbox/exec_req.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HDR_LEN 16

static void put_u32(char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static size_t count(char *const *v)
{
	size_t n = 0;
	while (v && v[n])
		n++;
	return n;
}

int cbox_exec_req_encode(char *const *argv, char *const *envp, const char *cwd, uint32_t flags,
                         char **out, size_t *len)
{
	size_t argc = count(argv), envc = count(envp);
	if (argc == 0 || argv[0][0] == '\0' || !cwd || cwd[0] != '/')
		return -EINVAL;
	if (argc + envc + 1 > CBOX_EXEC_REQ_MAX_STRS)
		return -E2BIG;
	size_t total = HDR_LEN + strlen(cwd) + 1;
	for (size_t i = 0; i < argc; i++)
		total += strlen(argv[i]) + 1;
	for (size_t i = 0; i < envc; i++)
		total += strlen(envp[i]) + 1;
	if (total > CBOX_EXEC_REQ_MAX)
		return -E2BIG;
	char *b = malloc(total);
	if (!b)
		return -ENOMEM;
	put_u32(b, CBOX_EXEC_REQ_MAGIC);
	put_u32(b + 4, flags);
	put_u32(b + 8, (uint32_t)argc);
	put_u32(b + 12, (uint32_t)envc);
	char *p = b + HDR_LEN;
	for (size_t i = 0; i < argc + envc + 1; i++) {
		const char *s = i < argc ? argv[i] : i < argc + envc ? envp[i - argc] : cwd;
		size_t n = strlen(s) + 1;
		memcpy(p, s, n);
		p += n;
	}
	*out = b;
	*len = total;
	return 0;
}

void cbox_exec_req_release(struct cbox_exec_req *r)
{
	free(r->argv);
	free(r->envp);
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

int cbox_exec_req_decode(const void *data, size_t len, struct cbox_exec_req *r)
{
	memset(r, 0, sizeof(*r));
	const unsigned char *d = data;
	if (len > CBOX_EXEC_REQ_MAX)
		return -E2BIG;
	if (len < HDR_LEN || get_u32(d) != CBOX_EXEC_REQ_MAGIC)
		return -EINVAL;
	uint32_t flags = get_u32(d + 4), argc = get_u32(d + 8), envc = get_u32(d + 12);
	if ((flags & ~CBOX_EXEC_TTY) || argc == 0)
		return -EINVAL;
	if ((uint64_t)argc + envc + 1 > CBOX_EXEC_REQ_MAX_STRS)
		return -E2BIG;
	size_t nstr = (size_t)argc + envc + 1, slen = len - HDR_LEN;
	r->buf = malloc(slen ? slen : 1);
	r->argv = calloc((size_t)argc + 1, sizeof(char *));
	r->envp = calloc((size_t)envc + 1, sizeof(char *));
	if (!r->buf || !r->argv || !r->envp) {
		cbox_exec_req_release(r);
		return -ENOMEM;
	}
	memcpy(r->buf, d + HDR_LEN, slen);
	size_t off = 0;
	for (size_t i = 0; i < nstr; i++) {
		char *end = off < slen ? memchr(r->buf + off, '\0', slen - off) : NULL;
		if (!end) {
			cbox_exec_req_release(r);
			return -EINVAL;
		}
		char *s = r->buf + off;
		if (i < argc)
			r->argv[i] = s;
		else if (i < (size_t)argc + envc)
			r->envp[i - argc] = s;
		else
			r->cwd = s;
		off = (size_t)(end - r->buf) + 1;
	}
	if (off != slen || r->argv[0][0] == '\0' || r->cwd[0] != '/') {
		cbox_exec_req_release(r);
		return -EINVAL;
	}
	r->flags = flags;
	r->argc = argc;
	r->envc = envc;
	return 0;
}

bool cbox_exec_reply_valid(const void *data, size_t len)
{
	struct cbox_exec_reply r;
	if (len != sizeof(r))
		return false;
	memcpy(&r, data, sizeof(r));
	return r.type >= CBOX_EXEC_STARTED && r.type <= CBOX_EXEC_QUIET &&
	       memchr(r.msg, '\0', sizeof(r.msg)) != NULL;
}
