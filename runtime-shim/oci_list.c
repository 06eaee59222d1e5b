/* `cbox list [--format table|json] [--quiet]`: the containers under --root. */
#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cbox/log.h"
#include "oci_cli.h"

static json_object *entry(const char *root, const char *id)
{
	struct cbox_oci_state st;
	const struct cbox_tier_ops *tier;
	struct cbox_tier_container c;
	if (cbox_oci_state_load(root, id, &st, NULL) < 0)
		return NULL;
	enum cbox_tier_status s = CBOX_TIER_STOPPED;
	if (cbox_oci_state_tier(&st, &tier, &c, NULL) == 0)
		s = tier->status(&c);
	json_object *j = cbox_oci_state_json(&st, cbox_tier_status_name(s));
	json_object_object_add(j, "tier", json_object_new_string(st.tier));
	cbox_oci_state_release(&st);
	return j;
}

static const char *str(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

int cbox_oci_list(const struct cbox_oci_global *g, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"format", required_argument, NULL, 'f'}, {"quiet", no_argument, NULL, 'q'}, {0}};
	const char *format = "table";
	bool quiet = false;
	optind = 0;
	for (int o; (o = getopt_long_only(argc, argv, "+f:q", opts, NULL)) != -1;) {
		if (o == 'f')
			format = optarg;
		else if (o == 'q')
			quiet = true;
		else
			return 1;
	}
	if (strcmp(format, "table") && strcmp(format, "json")) {
		cbox_error("list: unknown format '%s' (use table or json)", format);
		return 1;
	}
	json_object *all = json_object_new_array();
	DIR *d = opendir(g->root);
	for (struct dirent *e; d && (e = readdir(d));) {
		json_object *j = e->d_name[0] == '.' ? NULL : entry(g->root, e->d_name);
		if (j)
			json_object_array_add(all, j);
	}
	if (d)
		closedir(d);
	if (!strcmp(format, "json")) {
		printf("%s\n", json_object_to_json_string_ext(
		                   all, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	} else {
		if (!quiet)
			printf("%-24s %-8s %-8s %-8s %-30s %s\n", "ID", "PID", "STATUS", "TIER",
			       "CREATED", "BUNDLE");
		for (size_t i = 0; i < json_object_array_length(all); i++) {
			json_object *j = json_object_array_get_idx(all, i);
			if (quiet)
				printf("%s\n", str(j, "id"));
			else
				printf("%-24s %-8s %-8s %-8s %-30s %s\n", str(j, "id"),
				       str(j, "pid"), str(j, "status"), str(j, "tier"),
				       str(j, "created"), str(j, "bundle"));
		}
	}
	json_object_put(all);
	return 0;
}
