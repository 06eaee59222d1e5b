/* config.json: the top level, process, root, mounts, hooks, annotations (linux:
 * oci_config_linux.c). */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci_config.h"
#include "oci_config_internal.h"

/* Indexed by capability number; NULL-terminated for cbox_oci_cap_names. */
static const char *const cap_names[] = {
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_DAC_READ_SEARCH",
    "CAP_FOWNER",
    "CAP_FSETID",
    "CAP_KILL",
    "CAP_SETGID",
    "CAP_SETUID",
    "CAP_SETPCAP",
    "CAP_LINUX_IMMUTABLE",
    "CAP_NET_BIND_SERVICE",
    "CAP_NET_BROADCAST",
    "CAP_NET_ADMIN",
    "CAP_NET_RAW",
    "CAP_IPC_LOCK",
    "CAP_IPC_OWNER",
    "CAP_SYS_MODULE",
    "CAP_SYS_RAWIO",
    "CAP_SYS_CHROOT",
    "CAP_SYS_PTRACE",
    "CAP_SYS_PACCT",
    "CAP_SYS_ADMIN",
    "CAP_SYS_BOOT",
    "CAP_SYS_NICE",
    "CAP_SYS_RESOURCE",
    "CAP_SYS_TIME",
    "CAP_SYS_TTY_CONFIG",
    "CAP_MKNOD",
    "CAP_LEASE",
    "CAP_AUDIT_WRITE",
    "CAP_AUDIT_CONTROL",
    "CAP_SETFCAP",
    "CAP_MAC_OVERRIDE",
    "CAP_MAC_ADMIN",
    "CAP_SYSLOG",
    "CAP_WAKE_ALARM",
    "CAP_BLOCK_SUSPEND",
    "CAP_AUDIT_READ",
    "CAP_PERFMON",
    "CAP_BPF",
    "CAP_CHECKPOINT_RESTORE",
    NULL,
};

const char *const *cbox_oci_cap_names(void)
{
	return cap_names;
}

int cbox_oci_cap_from_name(const char *name)
{
	for (size_t i = 0; cap_names[i]; i++)
		if (!strcasecmp(name, cap_names[i]))
			return (int)i;
	return -1;
}

static const char *const hook_names[CBOX_OCI_HOOK_KINDS] = {
    "prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop",
};

const char *cbox_oci_hook_kind_name(enum cbox_oci_hook_kind kind)
{
	return (unsigned)kind < CBOX_OCI_HOOK_KINDS ? hook_names[kind] : "?";
}

const char *cbox_oci_config_annotation(const struct cbox_oci_config *c, const char *key)
{
	for (size_t i = 0; i < c->n_annotations; i++)
		if (!strcmp(c->annotations[i].key, key))
			return c->annotations[i].value;
	return NULL;
}

int oci_for_each(struct oci_path *p, json_object *obj, const char *key, void **arr, size_t *n,
                 size_t elem, int (*fn)(struct oci_path *, json_object *, void *))
{
	json_object *a;
	int r = oci_get_array(p, obj, key, &a);
	if (r <= 0)
		return r;
	size_t len = json_object_array_length(a);
	char *v = calloc(len ? len : 1, elem);
	if (!v)
		return cbox_err_set(p->err, ENOMEM, "%s", oci_path_file(p));
	*arr = v;
	size_t old = oci_path_key(p, key), base = p->len;
	for (size_t i = 0; i < len; i++) {
		json_object *e = json_object_array_get_idx(a, i);
		oci_path_index(p, i);
		*n = i + 1; /* so that the caller's free sees the partly filled element */
		if (!e || !json_object_is_type(e, json_type_object))
			r = oci_fail(p, "expected an object");
		else
			r = fn(p, e, v + i * elem);
		if (r < 0)
			return r;
		oci_path_pop(p, base);
	}
	oci_path_pop(p, old);
	*n = len;
	return 1;
}

/* An object of string values, in the order json-c keeps. */
int oci_get_kv(struct oci_path *p, json_object *obj, const char *key, struct cbox_oci_kv **out,
               size_t *n)
{
	json_object *o;
	int r = oci_get_object(p, obj, key, &o);
	if (r <= 0)
		return r;
	size_t len = (size_t)json_object_object_length(o);
	struct cbox_oci_kv *v = calloc(len ? len : 1, sizeof(*v));
	if (!v)
		return cbox_err_set(p->err, ENOMEM, "%s", oci_path_file(p));
	*out = v;
	size_t old = oci_path_key(p, key), i = 0;
	json_object_object_foreach(o, k, val)
	{
		if (!val || !json_object_is_type(val, json_type_string))
			return oci_fail_key(p, k, "expected a string");
		v[i].key = strdup(k);
		v[i].value = strdup(json_object_get_string(val));
		*n = ++i;
		if (!v[i - 1].key || !v[i - 1].value)
			return cbox_err_set(p->err, ENOMEM, "%s", oci_path_file(p));
	}
	oci_path_pop(p, old);
	return 1;
}

static int parse_user(struct oci_path *p, json_object *u, struct cbox_oci_user *o)
{
	int r;
	json_object *a;
	if ((r = oci_get_u32(p, u, "uid", &o->uid)) < 0 ||
	    (r = oci_get_u32(p, u, "gid", &o->gid)) < 0)
		return r;
	if ((r = oci_get_u32(p, u, "umask", &o->umask)) < 0)
		return r;
	o->has_umask = r > 0;
	if ((r = oci_get_array(p, u, "additionalGids", &a)) <= 0)
		return r;
	size_t len = json_object_array_length(a);
	o->additional_gids = calloc(len ? len : 1, sizeof(uint32_t));
	if (!o->additional_gids)
		return cbox_err_set(p->err, ENOMEM, "%s", oci_path_file(p));
	size_t old = oci_path_key(p, "additionalGids"), base = p->len;
	for (size_t i = 0; i < len; i++) {
		json_object *e = json_object_array_get_idx(a, i);
		oci_path_index(p, i);
		if (!e || !json_object_is_type(e, json_type_int) || json_object_get_int64(e) < 0 ||
		    json_object_get_int64(e) > UINT32_MAX)
			return oci_fail(p, "expected a group id (0..4294967295)");
		o->additional_gids[i] = (uint32_t)json_object_get_int64(e);
		o->n_additional_gids = i + 1;
		oci_path_pop(p, base);
	}
	oci_path_pop(p, old);
	return 1;
}

static int parse_caps(struct oci_path *p, json_object *c, struct cbox_oci_caps *o)
{
	static const char *const sets[] = {"bounding", "effective", "permitted", "inheritable",
	                                   "ambient"};
	uint64_t *masks[] = {&o->bounding, &o->effective, &o->permitted, &o->inheritable,
	                     &o->ambient};
	for (size_t s = 0; s < CBOX_ARRAY_SIZE(sets); s++) {
		char **v = NULL;
		size_t n = 0;
		int r = oci_get_strv(p, c, sets[s], &v, &n);
		if (r < 0)
			return r;
		/* An unknown name is skipped, as runc does: a newer engine may list capabilities
		 * this kernel or build does not know, and granting fewer is the safe side. */
		for (size_t i = 0; i < n; i++) {
			int cap = cbox_oci_cap_from_name(v[i]);
			if (cap >= 0)
				*masks[s] |= 1ULL << cap;
		}
		oci_strv_free(v);
	}
	return 1;
}

static const struct {
	const char *name;
	int resource;
} rlimit_names[] = {
    {"RLIMIT_AS", RLIMIT_AS},
    {"RLIMIT_CORE", RLIMIT_CORE},
    {"RLIMIT_CPU", RLIMIT_CPU},
    {"RLIMIT_DATA", RLIMIT_DATA},
    {"RLIMIT_FSIZE", RLIMIT_FSIZE},
    {"RLIMIT_LOCKS", RLIMIT_LOCKS},
    {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK},
    {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE},
    {"RLIMIT_NICE", RLIMIT_NICE},
    {"RLIMIT_NOFILE", RLIMIT_NOFILE},
    {"RLIMIT_NPROC", RLIMIT_NPROC},
    {"RLIMIT_RSS", RLIMIT_RSS},
    {"RLIMIT_RTPRIO", RLIMIT_RTPRIO},
    {"RLIMIT_RTTIME", RLIMIT_RTTIME},
    {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
    {"RLIMIT_STACK", RLIMIT_STACK},
};

static int parse_rlimit(struct oci_path *p, json_object *e, void *out)
{
	struct cbox_oci_rlimit *o = out;
	CBOX_AUTOFREE char *type = NULL;
	int r;
	if ((r = oci_require(p, oci_get_string(p, e, "type", &type), "type")) < 0 ||
	    (r = oci_require(p, oci_get_u64(p, e, "soft", &o->soft), "soft")) < 0 ||
	    (r = oci_require(p, oci_get_u64(p, e, "hard", &o->hard), "hard")) < 0)
		return r;
	for (size_t i = 0; i < CBOX_ARRAY_SIZE(rlimit_names); i++)
		if (!strcmp(type, rlimit_names[i].name)) {
			o->resource = rlimit_names[i].resource;
			return 1;
		}
	return oci_fail_key(p, "type", "unknown rlimit '%s'", type);
}

static int parse_process(struct oci_path *p, json_object *pr, struct cbox_oci_process *o)
{
	int r;
	json_object *x;
	if ((r = oci_get_bool(p, pr, "terminal", &o->terminal)) < 0 ||
	    (r = oci_require(p, oci_get_strv(p, pr, "args", &o->args, &o->n_args), "args")) < 0 ||
	    (r = oci_get_strv(p, pr, "env", &o->env, &o->n_env)) < 0 ||
	    (r = oci_get_string(p, pr, "cwd", &o->cwd)) < 0 ||
	    (r = oci_get_bool(p, pr, "noNewPrivileges", &o->no_new_privileges)) < 0)
		return r;
	if (o->n_args == 0)
		return oci_fail_key(p, "args", "must hold at least the program");
	if (!o->env && !(o->env = calloc(1, sizeof(char *))))
		return cbox_err_set(p->err, ENOMEM, "%s", oci_path_file(p));
	if (!o->cwd && !(o->cwd = strdup("/")))
		return cbox_err_set(p->err, ENOMEM, "%s", oci_path_file(p));
	if (o->cwd[0] != '/')
		return oci_fail_key(p, "cwd", "must be an absolute path");
	if ((r = oci_get_object(p, pr, "user", &x)) < 0)
		return r;
	if (r > 0) {
		size_t old = oci_path_key(p, "user");
		if ((r = parse_user(p, x, &o->user)) < 0)
			return r;
		oci_path_pop(p, old);
	}
	if ((r = oci_get_object(p, pr, "capabilities", &x)) < 0)
		return r;
	if (r > 0) {
		o->has_caps = true;
		size_t old = oci_path_key(p, "capabilities");
		if ((r = parse_caps(p, x, &o->caps)) < 0)
			return r;
		oci_path_pop(p, old);
	}
	return oci_for_each(p, pr, "rlimits", (void **)&o->rlimits, &o->n_rlimits,
	                    sizeof(*o->rlimits), parse_rlimit);
}

static int parse_mount(struct oci_path *p, json_object *e, void *out)
{
	struct cbox_oci_mount *o = out;
	int r;
	if ((r = oci_require(p, oci_get_string(p, e, "destination", &o->destination),
	                     "destination")) < 0 ||
	    (r = oci_get_string(p, e, "type", &o->type)) < 0 ||
	    (r = oci_get_string(p, e, "source", &o->source)) < 0 ||
	    (r = oci_get_strv(p, e, "options", &o->options, &o->n_options)) < 0)
		return r;
	return 1;
}

static int parse_hook(struct oci_path *p, json_object *e, void *out)
{
	struct cbox_oci_hook *o = out;
	int64_t timeout = 0;
	int r;
	if ((r = oci_require(p, oci_get_string(p, e, "path", &o->path), "path")) < 0 ||
	    (r = oci_get_strv(p, e, "args", &o->args, &o->n_args)) < 0 ||
	    (r = oci_get_strv(p, e, "env", &o->env, &o->n_env)) < 0 ||
	    (r = oci_get_i64(p, e, "timeout", &timeout)) < 0)
		return r;
	if (r > 0 && (timeout <= 0 || timeout > 86400))
		return oci_fail_key(p, "timeout", "must be between 1 and 86400 seconds");
	o->timeout = (int)timeout;
	if (o->path[0] != '/')
		return oci_fail_key(p, "path", "must be an absolute path");
	return 1;
}

static int parse_hooks(struct oci_path *p, json_object *h, struct cbox_oci_config *c)
{
	for (int k = 0; k < CBOX_OCI_HOOK_KINDS; k++) {
		int r = oci_for_each(p, h, hook_names[k], (void **)&c->hooks[k], &c->n_hooks[k],
		                     sizeof(struct cbox_oci_hook), parse_hook);
		if (r < 0)
			return r;
	}
	return 1;
}

/* Parse the member key of obj with fn when it is present (it must be an object). */
static int sub(struct oci_path *p, json_object *obj, const char *key, void *o,
               int (*fn)(struct oci_path *, json_object *, void *))
{
	json_object *x;
	int r = oci_get_object(p, obj, key, &x);
	if (r <= 0)
		return r;
	size_t old = oci_path_key(p, key);
	r = fn(p, x, o);
	oci_path_pop(p, old);
	return r < 0 ? r : 1;
}

static int sub_process(struct oci_path *p, json_object *x, void *c)
{
	return parse_process(p, x, &((struct cbox_oci_config *)c)->process);
}

static int sub_root(struct oci_path *p, json_object *x, void *v)
{
	struct cbox_oci_config *c = v;
	int r = oci_require(p, oci_get_string(p, x, "path", &c->root_path), "path");
	if (r < 0 || (r = oci_get_bool(p, x, "readonly", &c->root_readonly)) < 0)
		return r;
	if (!c->root_path[0])
		return oci_fail_key(p, "path", "must not be empty");
	return 1;
}

static int sub_hooks(struct oci_path *p, json_object *x, void *c)
{
	return parse_hooks(p, x, c);
}

static int sub_linux(struct oci_path *p, json_object *x, void *c)
{
	return oci_parse_linux(p, x, &((struct cbox_oci_config *)c)->linux_);
}

static int parse_top(struct oci_path *p, json_object *top, struct cbox_oci_config *c)
{
	int r;
	if (!json_object_is_type(top, json_type_object))
		return oci_fail(p, "expected an object");
	if ((r = oci_require(p, oci_get_string(p, top, "ociVersion", &c->oci_version),
	                     "ociVersion")) < 0)
		return r;
	if (strncmp(c->oci_version, "1.", 2) != 0)
		return oci_fail_key(p, "ociVersion", "version '%s' not supported (1.x is)",
		                    c->oci_version);
	if ((r = sub(p, top, "process", c, sub_process)) < 0)
		return r;
	c->has_process = r > 0;
	if ((r = oci_require(p, sub(p, top, "root", c, sub_root), "root")) < 0 ||
	    (r = oci_get_string(p, top, "hostname", &c->hostname)) < 0 ||
	    (r = oci_for_each(p, top, "mounts", (void **)&c->mounts, &c->n_mounts,
	                      sizeof(*c->mounts), parse_mount)) < 0 ||
	    (r = sub(p, top, "hooks", c, sub_hooks)) < 0 ||
	    (r = oci_get_kv(p, top, "annotations", &c->annotations, &c->n_annotations)) < 0 ||
	    (r = sub(p, top, "linux", c, sub_linux)) < 0)
		return r;
	c->has_linux = r > 0;
	return 0;
}

int oci_parse_document(const char *json, size_t len, const char *file, json_object **out,
                       struct cbox_err **err)
{
	if (len > INT32_MAX)
		return cbox_err_set(err, EFBIG, "%s: too large", file);
	json_tokener *tok = json_tokener_new_ex(64);
	if (!tok)
		return cbox_err_set(err, ENOMEM, "%s", file);
	json_object *top = json_tokener_parse_ex(tok, json, (int)len);
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	size_t off = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!top || jerr != json_tokener_success) {
		json_object_put(top);
		if (jerr == json_tokener_continue)
			return cbox_err_set(err, EINVAL, "%s: invalid JSON: truncated at byte %zu",
			                    file, len);
		return cbox_err_set(err, EINVAL, "%s: invalid JSON at byte %zu: %s", file, off,
		                    json_tokener_error_desc(jerr));
	}
	for (; off < len; off++)
		if (!strchr(" \t\r\n", json[off]) || !json[off]) {
			json_object_put(top);
			return cbox_err_set(err, EINVAL,
			                    "%s: invalid JSON at byte %zu: data after the end",
			                    file, off);
		}
	*out = top;
	return 0;
}

int cbox_oci_config_parse(const char *json, size_t len, struct cbox_oci_config **out,
                          struct cbox_err **err)
{
	json_object *top;
	if (oci_parse_document(json, len, "config.json", &top, err) < 0)
		return -1;
	struct cbox_oci_config *c = calloc(1, sizeof(*c));
	if (!c) {
		json_object_put(top);
		return cbox_err_set(err, ENOMEM, "config.json");
	}
	struct oci_path p = {.err = err};
	int r = parse_top(&p, top, c);
	json_object_put(top);
	if (r < 0) {
		cbox_oci_config_free(c);
		return r;
	}
	*out = c;
	return 0;
}

int cbox_oci_process_parse(const char *json, size_t len, const char *name,
                           struct cbox_oci_process *out, struct cbox_err **err)
{
	json_object *top;
	memset(out, 0, sizeof(*out));
	if (oci_parse_document(json, len, name, &top, err) < 0)
		return -1;
	struct oci_path p = {.err = err, .file = name};
	int r = json_object_is_type(top, json_type_object) ? parse_process(&p, top, out)
	                                                   : oci_fail(&p, "expected an object");
	json_object_put(top);
	if (r < 0) {
		cbox_oci_process_release(out);
		return r;
	}
	return 0;
}

void cbox_oci_process_release(struct cbox_oci_process *p)
{
	oci_strv_free(p->args);
	oci_strv_free(p->env);
	free(p->cwd);
	free(p->user.additional_gids);
	free(p->rlimits);
	memset(p, 0, sizeof(*p));
}

int cbox_oci_read_fd(int fd, size_t max, char **buf, size_t *len)
{
	size_t cap = 4096, got = 0;
	char *b = malloc(cap);
	if (!b)
		return -ENOMEM;
	for (;;) {
		if (got == cap) {
			size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			char *n = ncap > cap ? realloc(b, ncap) : NULL;
			if (!n) {
				free(b);
				return ncap > cap ? -ENOMEM : -EFBIG;
			}
			b = n;
			cap = ncap;
		}
		ssize_t n = read(fd, b + got, cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			free(b);
			return -e;
		}
		if (n == 0)
			break;
		got += (size_t)n;
		if (got > max) {
			free(b);
			return -EFBIG;
		}
	}
	if (got == cap) {
		char *n = realloc(b, cap + 1);
		if (!n) {
			free(b);
			return -ENOMEM;
		}
		b = n;
	}
	b[got] = '\0';
	*buf = b;
	*len = got;
	return 0;
}

int cbox_oci_config_load(const char *bundle, struct cbox_oci_config **out, struct cbox_err **err)
{
	char path[4096];
	if ((size_t)snprintf(path, sizeof(path), "%s/config.json", bundle) >= sizeof(path))
		return cbox_err_set(err, ENAMETOOLONG, "bundle path %s", bundle);
	CBOX_AUTOCLOSE int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cbox_err_set(err, errno, "open %s", path);
	CBOX_AUTOFREE char *buf = NULL;
	size_t got = 0;
	int r = cbox_oci_read_fd(fd, 16 << 20, &buf, &got);
	if (r == -EFBIG)
		return cbox_err_set(err, EFBIG, "%s: larger than 16 MiB", path);
	if (r < 0)
		return cbox_err_set(err, -r, "read %s", path);
	return cbox_oci_config_parse(buf, got, out, err);
}
