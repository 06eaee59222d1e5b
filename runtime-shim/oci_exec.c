/* `cbox exec`: not written yet. */
#include "cbox/log.h"
#include "oci_cli.h"

int cbox_oci_exec(const struct cbox_oci_global *g, int argc, char **argv)
{
	(void)g;
	(void)argc;
	(void)argv;
	cbox_error("exec: not supported yet");
	return 1;
}
