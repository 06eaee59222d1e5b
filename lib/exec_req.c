/* The `cbox exec` request of a sentry sandbox (see cbox/exec_req.h). */
#include "cbox/exec_req.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HDR_LEN     16
#define USER_LEN    12 /* uid, gid, ngroups */
#define KNOWN_FLAGS (CBOX_EXEC_TTY | CBOX_EXEC_USER | CBOX_EXEC_NO_NEW_PRIVS)

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

/*
 * (uint32_t)-1 is "no id" to Linux: setresuid(-1, ...) leaves the id as it is, so a uid or gid of
 * -1 would run the process as whoever the sentry is instead of failing; the kernel refuses it in
 * setgroups. Refused on both ends, so that the sentry never has to tell them apart.
 */
static int check_user(const struct cbox_exec_user *u)
{
	if (u->ngroups > CBOX_EXEC_REQ_MAX_GROUPS)
		return -E2BIG;
	if (u->uid == UINT32_MAX || u->gid == UINT32_MAX || (u->ngroups && !u->groups))
		return -EINVAL;
	for (size_t i = 0; i < u->ngroups; i++)
		if (u->groups[i] == UINT32_MAX)
			return -EINVAL;
	return 0;
}

static char *put_user(char *p, const struct cbox_exec_user *u)
{
	put_u32(p, u->uid);
	put_u32(p + 4, u->gid);
	put_u32(p + 8, (uint32_t)u->ngroups);
	p += USER_LEN;
	for (size_t i = 0; i < u->ngroups; i++, p += 4)
		put_u32(p, u->groups[i]);
	return p;
}

int cbox_exec_req_encode(char *const *argv, char *const *envp, const char *cwd, uint32_t flags,
                         const struct cbox_exec_user *user, char **out, size_t *len)
{
	size_t argc = count(argv), envc = count(envp);
	if (argc == 0 || argv[0][0] == '\0' || !cwd || cwd[0] != '/' || (flags & ~KNOWN_FLAGS))
		return -EINVAL;
	if (argc + envc + 1 > CBOX_EXEC_REQ_MAX_STRS)
		return -E2BIG;
	int r = user ? check_user(user) : 0;
	if (r < 0)
		return r;
	flags = user ? flags | CBOX_EXEC_USER : flags & ~CBOX_EXEC_USER;
	size_t total = HDR_LEN + (user ? USER_LEN + 4 * user->ngroups : 0) + strlen(cwd) + 1;
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
	char *p = user ? put_user(b + HDR_LEN, user) : b + HDR_LEN;
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
	free(r->groups);
	memset(r, 0, sizeof(*r));
}

/* The user section at d + *off (see check_user for why -1 is refused): fills r's user fields
 * (r->groups is released by the caller on failure) and moves *off past it. */
static int decode_user(const unsigned char *d, size_t len, size_t *off, struct cbox_exec_req *r)
{
	if (len - *off < USER_LEN)
		return -EINVAL;
	const unsigned char *u = d + *off;
	uint32_t uid = get_u32(u), gid = get_u32(u + 4), n = get_u32(u + 8);
	if (uid == UINT32_MAX || gid == UINT32_MAX)
		return -EINVAL;
	if (n > CBOX_EXEC_REQ_MAX_GROUPS)
		return -E2BIG;
	/* The ids must fit in what is left; the strings' own checks then catch a count that
	 * reaches into them. */
	if ((len - *off - USER_LEN) / 4 < n)
		return -EINVAL;
	if (n && !(r->groups = malloc((size_t)n * sizeof(uint32_t))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		/* Byte by byte: the ids are little-endian and unaligned in the message. */
		r->groups[i] = get_u32(u + USER_LEN + 4 * i);
		if (r->groups[i] == UINT32_MAX)
			return -EINVAL;
	}
	r->has_user = true;
	r->uid = uid;
	r->gid = gid;
	r->ngroups = n;
	*off += USER_LEN + 4 * (size_t)n;
	return 0;
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
	if ((flags & ~KNOWN_FLAGS) || argc == 0)
		return -EINVAL;
	if ((uint64_t)argc + envc + 1 > CBOX_EXEC_REQ_MAX_STRS)
		return -E2BIG;
	size_t start = HDR_LEN;
	if (flags & CBOX_EXEC_USER) {
		int e = decode_user(d, len, &start, r);
		if (e < 0) {
			cbox_exec_req_release(r);
			return e;
		}
	}
	size_t nstr = (size_t)argc + envc + 1, slen = len - start;
	r->buf = malloc(slen ? slen : 1);
	r->argv = calloc((size_t)argc + 1, sizeof(char *));
	r->envp = calloc((size_t)envc + 1, sizeof(char *));
	if (!r->buf || !r->argv || !r->envp) {
		cbox_exec_req_release(r);
		return -ENOMEM;
	}
	memcpy(r->buf, d + start, slen);
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
