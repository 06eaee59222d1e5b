/*
 * cbox-run --allow-net: its rules, and the parser of the request heads the guest sends the proxy
 * (see cbox_proxy.h). Every byte here comes from the command line or from the guest: nothing is
 * trusted, every length is checked (tests/unit/runtime, tests/fuzz/fuzz_proxy_request.c).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cbox_proxy.h"

/* A host name's characters (letters, digits, '-', '.', '_', as resolvers take them). */
static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '.' || c == '_';
}

/* Copy host[0..len) to out in lower case: a name (no empty label), an IPv4 address, or an IPv6
 * address (given without brackets). false when it is none of them. */
static bool take_host(const char *host, size_t len, char out[CBOX_PROXY_HOST_MAX + 1], bool v6)
{
	if (len == 0 || len > CBOX_PROXY_HOST_MAX)
		return false;
	char tmp[CBOX_PROXY_HOST_MAX + 1];
	for (size_t i = 0; i < len; i++)
		tmp[i] = (char)tolower((unsigned char)host[i]);
	tmp[len] = '\0';
	if (v6) {
		struct in6_addr a;
		if (inet_pton(AF_INET6, tmp, &a) != 1)
			return false;
		/* (one spelling per address, for the rules' comparison) */
		return inet_ntop(AF_INET6, &a, out, CBOX_PROXY_HOST_MAX + 1) != NULL;
	}
	if (tmp[0] == '.' || tmp[len - 1] == '.' || strstr(tmp, ".."))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!name_char(tmp[i]))
			return false;
	memcpy(out, tmp, len + 1);
	return true;
}

bool cbox_proxy_port_parse(const char *s, size_t len, unsigned *port)
{
	if (len == 0 || len > 5)
		return false;
	unsigned v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	*port = v;
	return v >= 1 && v <= 65535;
}

/* HOST, HOST:PORT, [V6] or [V6]:PORT in s[0..len) (port_needed: the port must be there). */
static bool take_authority(const char *s, size_t len, char host[CBOX_PROXY_HOST_MAX + 1],
                           unsigned *port, bool port_needed, bool *v6)
{
	const char *end = s + len, *colon;
	*v6 = len > 0 && s[0] == '[';
	if (*v6) {
		const char *close = memchr(s, ']', len);
		if (!close || !take_host(s + 1, (size_t)(close - s - 1), host, true))
			return false;
		colon = close + 1 < end ? close + 1 : NULL;
		if (colon && *colon != ':')
			return false;
	} else {
		colon = memchr(s, ':', len);
		if (!take_host(s, colon ? (size_t)(colon - s) : len, host, false))
			return false;
	}
	if (!colon)
		return !port_needed;
	return cbox_proxy_port_parse(colon + 1, (size_t)(end - colon - 1), port);
}

static bool is_ipv4(const char *host)
{
	struct in_addr a;
	return inet_pton(AF_INET, host, &a) == 1;
}

int cbox_proxy_rule_parse(const char *entry, struct cbox_proxy_rule *rule, char *err, size_t errlen)
{
	memset(rule, 0, sizeof(*rule));
	const char *s = entry;
	if (strncmp(s, "*.", 2) == 0) {
		rule->subdomains = true;
		s += 2;
	}
	bool v6 = false;
	char host[CBOX_PROXY_HOST_MAX + 1];
	if (!take_authority(s, strlen(s), host, &rule->port, false, &v6)) {
		snprintf(err, errlen,
		         "'%s': expected HOST[:PORT], *.DOMAIN[:PORT], an IPv4 address or "
		         "[an IPv6 address], and a port from 1 to 65535",
		         entry);
		return -1;
	}
	if (rule->subdomains && (v6 || is_ipv4(host) || !strchr(host, '.'))) {
		snprintf(err, errlen, "'%s': *. goes before a domain with a dot in it", entry);
		return -1;
	}
	if (rule->subdomains)
		snprintf(rule->host, sizeof(rule->host), ".%s", host);
	else
		memcpy(rule->host, host, sizeof(host));
	if (!rule->subdomains) {
		struct in_addr a4;
		struct in6_addr a6;
		rule->loopback =
		    strcmp(host, "localhost") == 0 ||
		    (inet_pton(AF_INET, host, &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127) ||
		    (inet_pton(AF_INET6, host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6));
	}
	return 0;
}

const struct cbox_proxy_rule *cbox_proxy_match(const struct cbox_proxy_rule *rules, size_t n,
                                               const char *host, unsigned port)
{
	size_t hl = strlen(host);
	for (size_t i = 0; i < n; i++) {
		const struct cbox_proxy_rule *r = &rules[i];
		if (r->port && r->port != port)
			continue;
		if (!r->subdomains) {
			if (strcmp(r->host, host) == 0)
				return r;
			continue;
		}
		/* ".example.com" matches "a.example.com" and "a.b.example.com", not "example.com"
		 * nor "badexample.com" (the dot is part of the suffix) */
		size_t sl = strlen(r->host);
		if (hl > sl && strcmp(host + hl - sl, r->host) == 0 && !is_ipv4(host))
			return r;
	}
	return NULL;
}

bool cbox_proxy_addr_allowed(const struct cbox_proxy_rule *rule, const struct sockaddr *sa)
{
	bool local;
	if (sa->sa_family == AF_INET) {
		uint32_t a = ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);
		local = (a >> 24) == 127 || a == 0;
	} else if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		local = IN6_IS_ADDR_LOOPBACK(a) || IN6_IS_ADDR_UNSPECIFIED(a);
		if (IN6_IS_ADDR_V4MAPPED(a)) {
			uint32_t v4;
			memcpy(&v4, &a->s6_addr[12], 4);
			v4 = ntohl(v4);
			local = (v4 >> 24) == 127 || v4 == 0;
		}
	} else {
		return false;
	}
	/* The host's loopback: services there trust whoever connects (the threat model's drop
	 * box). A name the rules allow may resolve there (an entry of /etc/hosts, a DNS answer of
	 * 127.0.0.1), which must not open the way; only a rule that says localhost or a loopback
	 * address does. */
	return !local || rule->loopback;
}

/* Where the line at p ends: 1 with *eol at its CRLF's CR, 0 when its end is not in [p, end) yet,
 * -1 at a bare CR or LF, or a NUL (none of them is HTTP, and a server might read them otherwise
 * than the rules did). */
static int line_end(const char *p, const char *end, const char **eol)
{
	for (const char *c = p; c < end; c++) {
		if (*c == '\r') {
			if (c + 1 == end)
				return 0;
			if (c[1] != '\n')
				return -1;
			*eol = c;
			return 1;
		}
		if (*c == '\n' || *c == '\0')
			return -1;
	}
	return 0;
}

static int parse_target(const char *t, size_t tl, struct cbox_proxy_request *req)
{
	bool v6;
	if (req->connect)
		return take_authority(t, tl, req->host, &req->port, true, &v6) ? 1 : -1;
	static const char scheme[] = "http://";
	if (tl < sizeof(scheme) - 1 || strncasecmp(t, scheme, sizeof(scheme) - 1) != 0)
		return -1;
	const char *auth = t + sizeof(scheme) - 1, *end = t + tl;
	const char *slash = memchr(auth, '/', (size_t)(end - auth));
	const char *q = memchr(auth, '?', (size_t)(end - auth));
	const char *auth_end = slash ? slash : end;
	if (q && q < auth_end)
		auth_end = q;
	/* (no user:password@: what it would name is not what the rules saw) */
	if (memchr(auth, '@', (size_t)(auth_end - auth)))
		return -1;
	req->port = 80;
	if (!take_authority(auth, (size_t)(auth_end - auth), req->host, &req->port, false, &v6))
		return -1;
	req->path = auth_end;
	req->path_len = (size_t)(end - auth_end);
	return 1;
}

int cbox_proxy_parse_request(const char *buf, size_t len, struct cbox_proxy_request *req)
{
	memset(req, 0, sizeof(*req));
	const char *end = buf + (len < CBOX_PROXY_HEAD_MAX ? len : CBOX_PROXY_HEAD_MAX), *eol;
	int r = line_end(buf, end, &eol);
	if (r <= 0)
		return r < 0 || len >= CBOX_PROXY_HEAD_MAX ? -1 : 0;
	/* METHOD SP TARGET SP HTTP/1.x */
	const char *sp1 = memchr(buf, ' ', (size_t)(eol - buf));
	const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
	if (!sp1 || !sp2 || sp1 == buf || (size_t)(sp1 - buf) >= sizeof(req->method) ||
	    eol - sp2 - 1 != 8 ||
	    (strncmp(sp2 + 1, "HTTP/1.1", 8) != 0 && strncmp(sp2 + 1, "HTTP/1.0", 8) != 0))
		return -1;
	for (const char *c = buf; c < sp1; c++)
		if (!isupper((unsigned char)*c))
			return -1;
	memcpy(req->method, buf, (size_t)(sp1 - buf));
	req->version = sp2 + 1;
	req->connect = strcmp(req->method, "CONNECT") == 0;
	if (parse_target(sp1 + 1, (size_t)(sp2 - sp1 - 1), req) < 0)
		return -1;
	/* the fields, up to the empty line */
	req->fields = eol + 2;
	for (const char *p = eol + 2;;) {
		const char *e;
		r = line_end(p, end, &e);
		if (r <= 0)
			return r < 0 || len >= CBOX_PROXY_HEAD_MAX ? -1 : 0;
		if (e == p) {
			req->fields_len = (size_t)(p - req->fields);
			req->head_len = (size_t)(e + 2 - buf);
			return 1;
		}
		/* NAME: VALUE, the name without blanks (no obsolete line folding) */
		const char *colon = memchr(p, ':', (size_t)(e - p));
		if (!colon || colon == p || *p == ' ' || *p == '\t')
			return -1;
		for (const char *c = p; c < colon; c++)
			if (*c == ' ' || *c == '\t')
				return -1;
		p = e + 2;
	}
}

/* Whether the field line at p, of len bytes, is a hop-by-hop one the proxy does not pass on. */
static bool hop_by_hop(const char *p, size_t len)
{
	static const char *const names[] = {"connection", "keep-alive", "proxy-connection",
	                                    "proxy-authorization"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t nl = strlen(names[i]);
		if (len > nl && p[nl] == ':' && strncasecmp(p, names[i], nl) == 0)
			return true;
	}
	return false;
}

int cbox_proxy_origin_head(const struct cbox_proxy_request *req, char *out, size_t size)
{
	if (req->connect)
		return -1;
	const char *path = req->path_len ? req->path : "/";
	size_t path_len = req->path_len ? req->path_len : 1;
	int n = snprintf(out, size, "%s %s%.*s %.8s\r\n", req->method, path[0] == '?' ? "/" : "",
	                 (int)path_len, path, req->version);
	if (n < 0 || (size_t)n >= size)
		return -1;
	size_t used = (size_t)n;
	const char *end = req->fields + req->fields_len;
	for (const char *p = req->fields; p < end;) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		size_t ll = (size_t)(e - p + 1); /* (each line ends in CRLF: parsed so) */
		if (!hop_by_hop(p, ll)) {
			if (used + ll >= size)
				return -1;
			memcpy(out + used, p, ll);
			used += ll;
		}
		p = e + 1;
	}
	static const char tail[] = "Connection: close\r\n\r\n";
	if (used + sizeof(tail) > size)
		return -1;
	memcpy(out + used, tail, sizeof(tail));
	return (int)(used + sizeof(tail) - 1);
}
