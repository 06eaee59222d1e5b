#pragma once
/*
 * cbox-run --allow-net: the rules (which hosts the guest may reach) and the parser of what the
 * guest sends the proxy (cbox_proxy_parse.c), shared by cbox-run, which checks the rules on its
 * command line, and cbox-proxy (cbox_proxy.c), which applies them. Pure functions: the unit tests
 * and the fuzzer call them on any bytes.
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* The guest's side of the proxy, in the sandbox's network namespace. */
#define CBOX_PROXY_PORT 3128
/* The most a request's head (request line and header fields) may take. */
#define CBOX_PROXY_HEAD_MAX 16384
#define CBOX_PROXY_HOST_MAX 253

/* A port from 1 to 65535, in decimal, in s[0..len): true with *port set (also -p's ports,
 * cbox_run_net.c). */
bool cbox_proxy_port_parse(const char *s, size_t len, unsigned *port);

/* One --allow-net entry: HOST[:PORT], *.DOMAIN[:PORT], an IPv4 address or a [IPv6] one. */
struct cbox_proxy_rule {
	char host[CBOX_PROXY_HOST_MAX + 2]; /* lower case; for *.DOMAIN: ".DOMAIN" */
	unsigned port;                      /* 0: any */
	bool subdomains;                    /* *.DOMAIN: any name under DOMAIN, not DOMAIN itself */
	bool loopback;                      /* localhost or a loopback address, named as such */
};

/* Parse one entry into rule: 0, or -1 with why in err. */
int cbox_proxy_rule_parse(const char *entry, struct cbox_proxy_rule *rule, char *err,
                          size_t errlen);

/* The rule of rules[0..n) that lets the guest reach host (as the guest named it: a name or an
 * address, IPv6 without brackets) at port, or NULL. */
const struct cbox_proxy_rule *cbox_proxy_match(const struct cbox_proxy_rule *rules, size_t n,
                                               const char *host, unsigned port);

/* Whether an address the name resolved to may be connected to under rule: the host's loopback
 * (and unspecified addresses, which reach it) only when the rule names it as such. */
bool cbox_proxy_addr_allowed(const struct cbox_proxy_rule *rule, const struct sockaddr *sa);

/* A request's head, as the guest sent it. */
struct cbox_proxy_request {
	bool connect; /* CONNECT HOST:PORT (a tunnel), else absolute-form http:// */
	char host[CBOX_PROXY_HOST_MAX + 1]; /* lower case, an IPv6 address without brackets */
	unsigned port;
	size_t head_len; /* the head's bytes, up to and with the empty line */
	/* absolute-form only: the method, and the path (with the query) the server is sent */
	char method[32];
	const char *path;
	size_t path_len;
	const char *version; /* "HTTP/1.0" or "HTTP/1.1", 8 bytes, in the buffer */
	const char *fields;  /* the first header field's line, in the buffer */
	size_t fields_len;   /* every field line with its CRLF, not the empty line */
};

/* Parse the head at the start of buf[0..len): 1 when it is whole and well formed (req filled),
 * 0 when more bytes are needed, -1 when it is malformed or too long. */
int cbox_proxy_parse_request(const char *buf, size_t len, struct cbox_proxy_request *req);

/* The head to send the server for an absolute-form request: the request line in origin form,
 * the guest's fields without the hop-by-hop ones (Connection, Keep-Alive, Proxy-Connection,
 * Proxy-Authorization), and "Connection: close" (one request per connection, so that a kept-alive
 * connection cannot carry a second request to a host the rules would not allow). Its length, or
 * -1 when out[0..size) is too small. */
int cbox_proxy_origin_head(const struct cbox_proxy_request *req, char *out, size_t size);
