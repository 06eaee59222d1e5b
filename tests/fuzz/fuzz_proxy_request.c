/*
 * Fuzz target for cbox-run --allow-net's parser (runtime-shim/cbox_proxy_parse.c): any bytes as
 * the head of a request the guest sends the proxy, and the same bytes as an --allow-net entry.
 * A parsed head must lie within the bytes, name a host that is a NUL-terminated lower-case
 * string and a port from 1 to 65535, and give a head for the server that fits where it is
 * written; a parsed entry must match the host it names.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cbox_proxy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cbox_proxy_request req;
	int r = cbox_proxy_parse_request((const char *)data, size, &req);
	if (r < -1 || r > 1)
		abort();
	if (r == 1) {
		size_t hl = strnlen(req.host, sizeof(req.host));
		if (req.head_len > size || hl == 0 || hl == sizeof(req.host) || req.port < 1 ||
		    req.port > 65535)
			abort();
		for (size_t i = 0; i < hl; i++)
			if (req.host[i] >= 'A' && req.host[i] <= 'Z')
				abort();
		static char out[CBOX_PROXY_HEAD_MAX + 64];
		int n = cbox_proxy_origin_head(&req, out, sizeof(out));
		if (req.connect ? n != -1 : (n < 0 || (size_t)n >= sizeof(out) || out[n] != '\0'))
			abort();
	}
	char entry[512];
	size_t el = size < sizeof(entry) - 1 ? size : sizeof(entry) - 1;
	memcpy(entry, data, el);
	entry[el] = '\0';
	struct cbox_proxy_rule rule;
	char err[1024];
	if (cbox_proxy_rule_parse(entry, &rule, err, sizeof(err)) == 0 && !rule.subdomains &&
	    cbox_proxy_match(&rule, 1, rule.host, rule.port ? rule.port : 443) != &rule)
		abort();
	return 0;
}
