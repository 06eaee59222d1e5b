#pragma once
/*
 * An open-addressing hash map from fixed 64-bit keys or byte-string keys to void * values,
 * hashed with xxhash (XXH3). Keys of string maps are copied; values are owned by the caller
 * unless a value destructor is given.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cbox/compiler.h"

struct cbox_hashmap;

/* Create a map. bytes_keys: keys are byte strings (copied), else uint64_t keys.
 * value_free (may be NULL) is called on values replaced, removed or left at cbox_hashmap_free.
 * Returns NULL on ENOMEM. */
CBOX_API struct cbox_hashmap *cbox_hashmap_new(bool bytes_keys, void (*value_free)(void *));
/* NULL-safe. */
CBOX_API void cbox_hashmap_free(struct cbox_hashmap *map);
CBOX_API size_t cbox_hashmap_size(const struct cbox_hashmap *map);

/* u64-keyed maps. put replaces (freeing the old value with value_free). -ENOMEM on failure. */
CBOX_API int cbox_hashmap_put_u64(struct cbox_hashmap *map, uint64_t key, void *value);
CBOX_API void *cbox_hashmap_get_u64(const struct cbox_hashmap *map, uint64_t key);
/* Remove the key; returns the value without freeing it (NULL when absent). */
CBOX_API void *cbox_hashmap_take_u64(struct cbox_hashmap *map, uint64_t key);

/* Byte-string keyed maps. */
CBOX_API int cbox_hashmap_put(struct cbox_hashmap *map, const void *key, size_t len, void *value);
CBOX_API void *cbox_hashmap_get(const struct cbox_hashmap *map, const void *key, size_t len);
CBOX_API void *cbox_hashmap_take(struct cbox_hashmap *map, const void *key, size_t len);

/* Iterate: *it starts at 0; returns false at the end. key_u64 or key/len filled per map kind
 * (either pointer may be NULL). The map must not be changed during iteration except through
 * cbox_hashmap_take* of the current key. */
CBOX_API bool cbox_hashmap_next(const struct cbox_hashmap *map, size_t *it, uint64_t *key_u64,
                                const void **key, size_t *len, void **value);

#include "cbox/cleanup.h"
CBOX_DEFINE_AUTO(cbox_hashmap, cbox_hashmap_free)
