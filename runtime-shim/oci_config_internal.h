#pragma once
/* Shared between oci_config.c and oci_config_linux.c only. */
#include "oci_config.h"
#include "oci_json.h"

/*
 * Parse the array member key of obj: each element must be an object and goes through fn into
 * a new array of n elements of size elem (*arr, calloc'd). On failure *arr and *n describe what
 * was filled so far, so the config's free releases it. Returns 0 absent, 1 parsed, < 0 error.
 */
int oci_for_each(struct oci_path *p, json_object *obj, const char *key, void **arr, size_t *n,
                 size_t elem, int (*fn)(struct oci_path *, json_object *, void *));

/* An object whose values are strings (annotations, sysctl). Same returns. */
int oci_get_kv(struct oci_path *p, json_object *obj, const char *key, struct cbox_oci_kv **out,
               size_t *n);

/* The "linux" object. */
int oci_parse_linux(struct oci_path *p, json_object *l, struct cbox_oci_linux *o);

/* Parse len bytes of JSON into *out (the caller puts it); errors name file ("config.json: invalid
 * JSON at byte N: why"). */
int oci_parse_document(const char *json, size_t len, const char *file, json_object **out,
                       struct cbox_err **err);
