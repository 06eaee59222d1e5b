/*
 * Open-addressing hash map (see cbox/hashmap.h): robin-hood linear probing over a power-of-two
 * table that grows at 75% load, with backward-shift deletion so no tombstones ever accumulate
 * and lookups stay short after many removals. Keys are hashed with XXH3; u64 keys hash their
 * 8 bytes.
 */
#include "cbox/hashmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define MIN_CAP 16
/* The iterator packs a slot index into 32 bits, and 2^31 slots is far beyond any real use. */
#define MAX_CAP ((size_t)1 << 31)

_Static_assert(sizeof(size_t) >= 8, "the iterator packs two 32-bit numbers into a size_t");

struct slot {
	uint64_t hash;
	uint64_t key;         /* u64 maps */
	unsigned char *bytes; /* byte-string maps: our own copy */
	size_t len;
	void *value;
	size_t dist; /* probe distance + 1; 0 marks an empty slot */
};

struct cbox_hashmap {
	struct slot *slots;
	size_t cap; /* 0 until the first put, then a power of two */
	size_t size;
	bool bytes_keys;
	void (*value_free)(void *);
};

struct cbox_hashmap *cbox_hashmap_new(bool bytes_keys, void (*value_free)(void *))
{
	struct cbox_hashmap *map = calloc(1, sizeof(*map));
	if (map == NULL)
		return NULL;
	map->bytes_keys = bytes_keys;
	map->value_free = value_free;
	return map;
}

void cbox_hashmap_free(struct cbox_hashmap *map)
{
	if (map == NULL)
		return;
	for (size_t i = 0; i < map->cap; i++) {
		struct slot *s = &map->slots[i];
		if (s->dist == 0)
			continue;
		free(s->bytes);
		if (map->value_free != NULL && s->value != NULL)
			map->value_free(s->value);
	}
	free(map->slots);
	free(map);
}

size_t cbox_hashmap_size(const struct cbox_hashmap *map)
{
	return map ? map->size : 0;
}

static uint64_t hash_u64(uint64_t key)
{
	return XXH3_64bits(&key, sizeof(key));
}

static uint64_t hash_bytes(const void *key, size_t len)
{
	return XXH3_64bits(len ? key : "", len);
}

/* Index of the slot holding the key, or -1. key is a uint64_t * for u64 maps. */
static ptrdiff_t find(const struct cbox_hashmap *map, uint64_t hash, const void *key, size_t len)
{
	if (map->cap == 0)
		return -1;
	size_t mask = map->cap - 1;
	size_t i = hash & mask;
	for (size_t dist = 1;; dist++, i = (i + 1) & mask) {
		const struct slot *s = &map->slots[i];
		/* Robin hood invariant: the key would have displaced a closer entry. */
		if (s->dist < dist)
			return -1;
		if (s->hash != hash)
			continue;
		if (map->bytes_keys ? s->len == len && memcmp(s->bytes, key, len) == 0
		                    : s->key == *(const uint64_t *)key)
			return (ptrdiff_t)i;
	}
}

/* Place an entry known to be absent; the table has room. */
static void insert(struct slot *slots, size_t cap, struct slot e)
{
	size_t mask = cap - 1;
	size_t i = e.hash & mask;

	e.dist = 1;
	for (;; i = (i + 1) & mask, e.dist++) {
		if (slots[i].dist == 0) {
			slots[i] = e;
			return;
		}
		if (slots[i].dist < e.dist) {
			struct slot tmp = slots[i];
			slots[i] = e;
			e = tmp;
		}
	}
}

static int grow(struct cbox_hashmap *map)
{
	size_t cap = map->cap ? map->cap * 2 : MIN_CAP;
	if (cap > MAX_CAP)
		return -ENOMEM;
	struct slot *slots = calloc(cap, sizeof(*slots));
	if (slots == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < map->cap; i++)
		if (map->slots[i].dist != 0)
			insert(slots, cap, map->slots[i]);
	free(map->slots);
	map->slots = slots;
	map->cap = cap;
	return 0;
}

static void replace_value(struct cbox_hashmap *map, struct slot *s, void *value)
{
	void *old = s->value;

	s->value = value;
	/* Putting the same pointer again must not free what the map now holds. */
	if (map->value_free != NULL && old != NULL && old != value)
		map->value_free(old);
}

/* Make room for one more entry: keep the load at or below 75%. */
static int reserve_one(struct cbox_hashmap *map)
{
	if ((map->size + 1) * 4 > map->cap * 3)
		return grow(map);
	return 0;
}

int cbox_hashmap_put_u64(struct cbox_hashmap *map, uint64_t key, void *value)
{
	if (map == NULL || map->bytes_keys)
		return -EINVAL;
	uint64_t hash = hash_u64(key);
	ptrdiff_t i = find(map, hash, &key, sizeof(key));
	if (i >= 0) {
		replace_value(map, &map->slots[i], value);
		return 0;
	}
	if (reserve_one(map) < 0)
		return -ENOMEM;
	insert(map->slots, map->cap, (struct slot){.hash = hash, .key = key, .value = value});
	map->size++;
	return 0;
}

int cbox_hashmap_put(struct cbox_hashmap *map, const void *key, size_t len, void *value)
{
	if (map == NULL || !map->bytes_keys || (key == NULL && len > 0))
		return -EINVAL;
	uint64_t hash = hash_bytes(key, len);
	ptrdiff_t i = find(map, hash, key, len);
	if (i >= 0) {
		replace_value(map, &map->slots[i], value);
		return 0;
	}
	unsigned char *copy = malloc(len ? len : 1);
	if (copy == NULL)
		return -ENOMEM;
	if (len > 0)
		memcpy(copy, key, len);
	if (reserve_one(map) < 0) {
		free(copy);
		return -ENOMEM;
	}
	insert(map->slots, map->cap,
	       (struct slot){.hash = hash, .bytes = copy, .len = len, .value = value});
	map->size++;
	return 0;
}

void *cbox_hashmap_get_u64(const struct cbox_hashmap *map, uint64_t key)
{
	if (map == NULL || map->bytes_keys)
		return NULL;
	ptrdiff_t i = find(map, hash_u64(key), &key, sizeof(key));
	return i >= 0 ? map->slots[i].value : NULL;
}

void *cbox_hashmap_get(const struct cbox_hashmap *map, const void *key, size_t len)
{
	if (map == NULL || !map->bytes_keys || (key == NULL && len > 0))
		return NULL;
	ptrdiff_t i = find(map, hash_bytes(key, len), key, len);
	return i >= 0 ? map->slots[i].value : NULL;
}

/* Remove slot i and shift the following displaced entries back by one (no tombstones). */
static void *remove_at(struct cbox_hashmap *map, size_t i)
{
	size_t mask = map->cap - 1;
	void *value = map->slots[i].value;

	free(map->slots[i].bytes);
	for (size_t j = (i + 1) & mask; map->slots[j].dist > 1; i = j, j = (j + 1) & mask) {
		map->slots[i] = map->slots[j];
		map->slots[i].dist--;
	}
	map->slots[i] = (struct slot){0};
	map->size--;
	return value;
}

void *cbox_hashmap_take_u64(struct cbox_hashmap *map, uint64_t key)
{
	if (map == NULL || map->bytes_keys)
		return NULL;
	ptrdiff_t i = find(map, hash_u64(key), &key, sizeof(key));
	return i >= 0 ? remove_at(map, (size_t)i) : NULL;
}

void *cbox_hashmap_take(struct cbox_hashmap *map, const void *key, size_t len)
{
	if (map == NULL || !map->bytes_keys || (key == NULL && len > 0))
		return NULL;
	ptrdiff_t i = find(map, hash_bytes(key, len), key, len);
	return i >= 0 ? remove_at(map, (size_t)i) : NULL;
}

/*
 * Iteration walks the slots downwards, starting just below an empty slot E found at the start.
 * Taking the current entry at slot i shifts back only entries above i, up to the next empty
 * slot, which is at the latest E: all of those were already visited, so nothing is skipped or
 * seen twice. The iterator packs E (upper 32 bits) and the number of slots visited + 1.
 */
bool cbox_hashmap_next(const struct cbox_hashmap *map, size_t *it, uint64_t *key_u64,
                       const void **key, size_t *len, void **value)
{
	size_t start, step;

	if (map == NULL || it == NULL || map->cap == 0)
		return false;
	if (*it == 0) {
		for (start = 0; start < map->cap && map->slots[start].dist != 0; start++)
			;
		step = 0;
	} else {
		start = *it >> 32;
		step = *it & 0xffffffffu;
	}
	if (start >= map->cap)
		return false;
	size_t mask = map->cap - 1;
	for (; step < map->cap - 1; step++) {
		const struct slot *s = &map->slots[(start - 1 - step) & mask];
		if (s->dist == 0)
			continue;
		*it = (start << 32) | (step + 1);
		if (key_u64 != NULL)
			*key_u64 = map->bytes_keys ? 0 : s->key;
		if (key != NULL)
			*key = map->bytes_keys ? s->bytes : NULL;
		if (len != NULL)
			*len = map->bytes_keys ? s->len : 0;
		if (value != NULL)
			*value = s->value;
		return true;
	}
	*it = (start << 32) | step;
	return false;
}
