/*
 * Fuzz target for the strict config.json parser: arbitrary bytes must either parse into a config
 * whose required fields are set, or fail with a message; never crash or leak. The same bytes also
 * go to the process.json (`cbox exec --process`) and resources (`cbox update`) entry points.
 */
#include <stdint.h>
#include <stdlib.h>

#include "oci_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cbox_oci_config *c = NULL;
	struct cbox_err *err = NULL;
	struct cbox_oci_process p;
	struct cbox_oci_resources r;
	if (cbox_oci_process_parse((const char *)data, size, "process.json", &p, &err) < 0) {
		if (!err || !err->msg || p.args)
			abort();
		cbox_err_free(&err);
	} else if (!p.args || !p.args[0] || !p.cwd || !p.env) {
		abort();
	}
	cbox_oci_process_release(&p);
	if (cbox_oci_resources_parse((const char *)data, size, "resources", &r, &err) < 0) {
		if (!err || !err->msg)
			abort();
		cbox_err_free(&err);
	}
	cbox_oci_resources_release(&r);
	if (cbox_oci_config_parse((const char *)data, size, &c, &err) < 0) {
		if (!err || !err->msg)
			abort();
		cbox_err_free(&err);
		return 0;
	}
	if (!c->oci_version || !c->root_path ||
	    (c->has_process && (!c->process.args || !c->process.args[0])))
		abort();
	cbox_oci_config_free(c);
	return 0;
}
