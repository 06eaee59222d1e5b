/* Unit tests for runtime-shim/cbox_proxy_parse.c: --allow-net's entries, which host and port a
 * rule lets through, the loopback rule on resolved addresses, the request heads the guest may
 * send (whole, partial, malformed, too long), and the head passed on to a plain-http server. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <string.h>

#include "cbox_proxy.h"

static struct cbox_proxy_rule rule(const char *entry)
{
	struct cbox_proxy_rule r;
	char err[256];
	cr_assert_eq(cbox_proxy_rule_parse(entry, &r, err, sizeof(err)), 0, "%s: %s", entry, err);
	return r;
}

static void bad_rule(const char *entry)
{
	struct cbox_proxy_rule r;
	char err[1024] = "";
	cr_assert_eq(cbox_proxy_rule_parse(entry, &r, err, sizeof(err)), -1, "%s parsed", entry);
	cr_assert(strstr(err, entry) != NULL, "the message names the entry: %s", err);
}

Test(proxy_rules, forms)
{
	struct cbox_proxy_rule r = rule("Registry.NPMjs.org");
	cr_assert_str_eq(r.host, "registry.npmjs.org");
	cr_assert_eq(r.port, 0);
	cr_assert(!r.subdomains && !r.loopback);
	r = rule("example.com:8443");
	cr_assert_str_eq(r.host, "example.com");
	cr_assert_eq(r.port, 8443);
	r = rule("*.debian.org:443");
	cr_assert_str_eq(r.host, ".debian.org");
	cr_assert(r.subdomains);
	cr_assert_eq(r.port, 443);
	r = rule("192.0.2.7");
	cr_assert_str_eq(r.host, "192.0.2.7");
	r = rule("[2001:DB8:0::1]:80");
	cr_assert_str_eq(r.host, "2001:db8::1");
	cr_assert_eq(r.port, 80);
	cr_assert(rule("localhost").loopback);
	cr_assert(rule("127.0.0.1:8080").loopback);
	cr_assert(rule("127.1.2.3").loopback);
	cr_assert(rule("[::1]").loopback);
	cr_assert(!rule("localhost.example.com").loopback);
}

Test(proxy_rules, malformed)
{
	bad_rule("");
	bad_rule(":80");
	bad_rule("example.com:");
	bad_rule("example.com:0");
	bad_rule("example.com:65536");
	bad_rule("example.com:http");
	bad_rule("exa mple.com");
	bad_rule("example..com");
	bad_rule(".example.com");
	bad_rule("example.com.");
	bad_rule("*.com");       /* (a whole top-level domain is not a domain) */
	bad_rule("*.192.0.2.1"); /* (an address has no subdomains) */
	bad_rule("*.[::1]");
	bad_rule("**.example.com");
	bad_rule("::1"); /* (IPv6 goes in brackets) */
	bad_rule("[::1");
	bad_rule("[::1]x");
	bad_rule("[not-v6]:80");
	bad_rule("user@example.com");
	char longname[300];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	bad_rule(longname);
}

Test(proxy_rules, matching)
{
	struct cbox_proxy_rule rules[] = {rule("example.com:443"), rule("*.debian.org"),
	                                  rule("192.0.2.7:8080"), rule("[2001:db8::1]")};
	size_t n = sizeof(rules) / sizeof(rules[0]);
	cr_assert_eq(cbox_proxy_match(rules, n, "example.com", 443), &rules[0]);
	cr_assert_null(cbox_proxy_match(rules, n, "example.com", 80));
	cr_assert_null(cbox_proxy_match(rules, n, "www.example.com", 443));
	cr_assert_eq(cbox_proxy_match(rules, n, "deb.debian.org", 80), &rules[1]);
	cr_assert_eq(cbox_proxy_match(rules, n, "a.b.debian.org", 443), &rules[1]);
	cr_assert_null(cbox_proxy_match(rules, n, "debian.org", 443));
	cr_assert_null(cbox_proxy_match(rules, n, "evildebian.org", 443));
	cr_assert_null(cbox_proxy_match(rules, n, "debian.org.evil.com", 443));
	cr_assert_eq(cbox_proxy_match(rules, n, "192.0.2.7", 8080), &rules[2]);
	cr_assert_null(cbox_proxy_match(rules, n, "192.0.2.7", 8081));
	cr_assert_eq(cbox_proxy_match(rules, n, "2001:db8::1", 22), &rules[3]);
	cr_assert_null(cbox_proxy_match(rules, 0, "example.com", 443));
}

static struct sockaddr_in v4(const char *a)
{
	struct sockaddr_in s = {.sin_family = AF_INET};
	cr_assert_eq(inet_pton(AF_INET, a, &s.sin_addr), 1);
	return s;
}

static struct sockaddr_in6 v6(const char *a)
{
	struct sockaddr_in6 s = {.sin6_family = AF_INET6};
	cr_assert_eq(inet_pton(AF_INET6, a, &s.sin6_addr), 1);
	return s;
}

/* The security decision: a name the rules allow opens no way to the host's loopback. */
Test(proxy_rules, loopback_needs_a_loopback_rule)
{
	struct cbox_proxy_rule name = rule("example.com"), local = rule("localhost"),
	                       lit = rule("127.0.0.1");
	struct sockaddr_in a;
	struct sockaddr_in6 b;
	a = v4("127.0.0.1");
	cr_assert(!cbox_proxy_addr_allowed(&name, (struct sockaddr *)&a));
	cr_assert(cbox_proxy_addr_allowed(&local, (struct sockaddr *)&a));
	cr_assert(cbox_proxy_addr_allowed(&lit, (struct sockaddr *)&a));
	a = v4("127.0.1.1");
	cr_assert(!cbox_proxy_addr_allowed(&name, (struct sockaddr *)&a));
	a = v4("0.0.0.0");
	cr_assert(!cbox_proxy_addr_allowed(&name, (struct sockaddr *)&a));
	a = v4("192.0.2.1");
	cr_assert(cbox_proxy_addr_allowed(&name, (struct sockaddr *)&a));
	b = v6("::1");
	cr_assert(!cbox_proxy_addr_allowed(&name, (struct sockaddr *)&b));
	cr_assert(cbox_proxy_addr_allowed(&local, (struct sockaddr *)&b));
	b = v6("::");
	cr_assert(!cbox_proxy_addr_allowed(&name, (struct sockaddr *)&b));
	b = v6("::ffff:127.0.0.1");
	cr_assert(!cbox_proxy_addr_allowed(&name, (struct sockaddr *)&b));
	b = v6("2001:db8::2");
	cr_assert(cbox_proxy_addr_allowed(&name, (struct sockaddr *)&b));
	struct sockaddr other = {.sa_family = AF_UNIX};
	cr_assert(!cbox_proxy_addr_allowed(&local, &other));
}

static int parse(const char *head, struct cbox_proxy_request *req)
{
	return cbox_proxy_parse_request(head, strlen(head), req);
}

Test(proxy_request, connect)
{
	struct cbox_proxy_request req;
	const char *h = "CONNECT Example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n\x16\x03";
	cr_assert_eq(parse(h, &req), 1);
	cr_assert(req.connect);
	cr_assert_str_eq(req.host, "example.com");
	cr_assert_eq(req.port, 443);
	cr_assert_eq(req.head_len, strlen(h) - 2);
	cr_assert_eq(parse("CONNECT [2001:db8::1]:22 HTTP/1.0\r\n\r\n", &req), 1);
	cr_assert_str_eq(req.host, "2001:db8::1");
	cr_assert_eq(req.port, 22);
	/* a CONNECT needs a port */
	cr_assert_eq(parse("CONNECT example.com HTTP/1.1\r\n\r\n", &req), -1);
}

Test(proxy_request, absolute_form)
{
	struct cbox_proxy_request req;
	const char *h = "GET http://deb.debian.org/debian/dists?x=1 HTTP/1.1\r\n"
	                "Host: deb.debian.org\r\nProxy-Connection: keep-alive\r\n"
	                "User-Agent: t\r\nconnection: keep-alive\r\n\r\nBODY";
	cr_assert_eq(parse(h, &req), 1);
	cr_assert(!req.connect);
	cr_assert_str_eq(req.method, "GET");
	cr_assert_str_eq(req.host, "deb.debian.org");
	cr_assert_eq(req.port, 80);
	char out[512];
	int n = cbox_proxy_origin_head(&req, out, sizeof(out));
	cr_assert_gt(n, 0);
	cr_assert_str_eq(out, "GET /debian/dists?x=1 HTTP/1.1\r\nHost: deb.debian.org\r\n"
	                      "User-Agent: t\r\nConnection: close\r\n\r\n");
	cr_assert_eq((size_t)n, strlen(out));
	/* no path; a query only; a port */
	cr_assert_eq(parse("HEAD http://a.example:8080 HTTP/1.0\r\n\r\n", &req), 1);
	cr_assert_eq(req.port, 8080);
	cbox_proxy_origin_head(&req, out, sizeof(out));
	cr_assert_str_eq(out, "HEAD / HTTP/1.0\r\nConnection: close\r\n\r\n");
	cr_assert_eq(parse("GET http://a.example?q HTTP/1.1\r\n\r\n", &req), 1);
	cbox_proxy_origin_head(&req, out, sizeof(out));
	cr_assert_str_eq(out, "GET /?q HTTP/1.1\r\nConnection: close\r\n\r\n");
	/* too small a buffer */
	cr_assert_eq(cbox_proxy_origin_head(&req, out, 10), -1);
	/* CONNECT has no origin form */
	cr_assert_eq(parse("CONNECT a.example:1 HTTP/1.1\r\n\r\n", &req), 1);
	cr_assert_eq(cbox_proxy_origin_head(&req, out, sizeof(out)), -1);
}

Test(proxy_request, partial)
{
	struct cbox_proxy_request req;
	const char *h = "CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n";
	for (size_t i = 0; i < strlen(h); i++)
		cr_assert_eq(cbox_proxy_parse_request(h, i, &req), 0, "at %zu", i);
	cr_assert_eq(cbox_proxy_parse_request(h, strlen(h), &req), 1);
}

Test(proxy_request, malformed)
{
	struct cbox_proxy_request req;
	static const char *const bad[] = {
	    "GET https://example.com/ HTTP/1.1\r\n\r\n",     /* (https goes through CONNECT) */
	    "GET /relative HTTP/1.1\r\n\r\n",                /* (not a proxy request) */
	    "GET http://user@example.com/ HTTP/1.1\r\n\r\n", /* (userinfo) */
	    "GET http://example.com/ HTTP/2\r\n\r\n",
	    "get http://example.com/ HTTP/1.1\r\n\r\n",
	    "GET  http://example.com/ HTTP/1.1\r\n\r\n",
	    "GET http://example.com/\r\n\r\n",
	    "CONNECT example.com:443 HTTP/1.1\n\n",                /* (bare LF) */
	    "CONNECT example.com:443 HTTP/1.1\r\nA: b\rc\r\n\r\n", /* (bare CR) */
	    "CONNECT example.com:443 HTTP/1.1\r\n folded\r\n\r\n",
	    "CONNECT example.com:443 HTTP/1.1\r\nNo colon\r\n\r\n",
	    "CONNECT example.com:443 HTTP/1.1\r\nBad name: x\r\n\r\n",
	    "CONNECT example.com:99999 HTTP/1.1\r\n\r\n",
	    "CONNECT exa\x01mple.com:443 HTTP/1.1\r\n\r\n",
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGH http://a.example/ HTTP/1.1\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(parse(bad[i], &req), -1, "parsed: %s", bad[i]);
	/* a NUL */
	const char nul[] = "CONNECT a.example:1 HTTP/1.1\r\nA: \0\r\n\r\n";
	cr_assert_eq(cbox_proxy_parse_request(nul, sizeof(nul) - 1, &req), -1);
}

Test(proxy_request, too_long)
{
	struct cbox_proxy_request req;
	static char buf[CBOX_PROXY_HEAD_MAX + 100];
	const char *start = "CONNECT example.com:443 HTTP/1.1\r\nX: ";
	memset(buf, 'a', sizeof(buf));
	memcpy(buf, start, strlen(start));
	cr_assert_eq(cbox_proxy_parse_request(buf, CBOX_PROXY_HEAD_MAX - 1, &req), 0);
	cr_assert_eq(cbox_proxy_parse_request(buf, CBOX_PROXY_HEAD_MAX, &req), -1);
	cr_assert_eq(cbox_proxy_parse_request(buf, sizeof(buf), &req), -1);
}
