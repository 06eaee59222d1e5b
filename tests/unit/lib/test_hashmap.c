/* Unit tests for lib/hashmap.c: put/get/replace/take/iterate, a random workload checked against
 * a reference array, byte keys with embedded NULs, value_free accounting, misuse. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbox/hashmap.h"

static int freed;

static void count_free(void *p)
{
	(void)p;
	freed++;
}

/* A bijection on 64 bits (splitmix64's finaliser): distinct inputs give distinct keys. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

#define TAG(i) ((void *)(uintptr_t)((i) + 1))

Test(hashmap, u64_put_get_replace_take)
{
	CBOX_AUTO(cbox_hashmap) *map = cbox_hashmap_new(false, count_free);
	int a, b, c;

	cr_assert_not_null(map);
	cr_assert_null(cbox_hashmap_get_u64(map, 1));
	cr_assert_null(cbox_hashmap_take_u64(map, 1));
	cr_assert_eq(cbox_hashmap_put_u64(map, 1, &a), 0);
	cr_assert_eq(cbox_hashmap_put_u64(map, 0, &b), 0);
	cr_assert_eq(cbox_hashmap_put_u64(map, UINT64_MAX, &c), 0);
	cr_assert_eq(cbox_hashmap_size(map), 3);
	cr_assert_eq(cbox_hashmap_get_u64(map, 1), &a);
	cr_assert_eq(cbox_hashmap_get_u64(map, 0), &b);
	cr_assert_eq(cbox_hashmap_get_u64(map, UINT64_MAX), &c);

	cr_assert_eq(cbox_hashmap_put_u64(map, 1, &c), 0);
	cr_assert_eq(freed, 1, "replacing frees the old value");
	cr_assert_eq(cbox_hashmap_put_u64(map, 1, &c), 0);
	cr_assert_eq(freed, 1, "putting the same pointer again frees nothing");
	cr_assert_eq(cbox_hashmap_size(map), 3);
	cr_assert_eq(cbox_hashmap_get_u64(map, 1), &c);

	cr_assert_eq(cbox_hashmap_take_u64(map, 0), &b);
	cr_assert_eq(freed, 1, "take hands the value back without freeing it");
	cr_assert_null(cbox_hashmap_get_u64(map, 0));
	cr_assert_eq(cbox_hashmap_size(map), 2);
}

Test(hashmap, free_calls_value_free_for_each_remaining_value)
{
	struct cbox_hashmap *map = cbox_hashmap_new(false, count_free);

	for (uint64_t i = 0; i < 1000; i++)
		cr_assert_eq(cbox_hashmap_put_u64(map, i, TAG(i)), 0);
	cr_assert_eq(cbox_hashmap_put_u64(map, 2000, NULL), 0);
	for (uint64_t i = 0; i < 1000; i += 2)
		cr_assert_eq(cbox_hashmap_take_u64(map, i), TAG(i));
	cr_assert_eq(freed, 0);
	cbox_hashmap_free(map);
	cr_assert_eq(freed, 500, "NULL values are not passed to value_free");
	cbox_hashmap_free(NULL);
}

Test(hashmap, random_workload_matches_reference)
{
	enum { N = 100000, OPS = 400000 };
	static bool present[N];
	static void *ref[N];
	CBOX_AUTO(cbox_hashmap) *map = cbox_hashmap_new(false, NULL);
	size_t size = 0;

	srand(42);
	for (int op = 0; op < OPS; op++) {
		size_t i = (size_t)rand() % N;
		uint64_t key = mix(i);
		void *v = (void *)(uintptr_t)(((uint64_t)op << 20) | 1);
		switch (rand() % 4) {
		case 0:
		case 1:
			cr_assert_eq(cbox_hashmap_put_u64(map, key, v), 0);
			size += !present[i];
			present[i] = true;
			ref[i] = v;
			break;
		case 2:
			cr_assert_eq(cbox_hashmap_take_u64(map, key), present[i] ? ref[i] : NULL);
			size -= present[i];
			present[i] = false;
			break;
		default:
			cr_assert_eq(cbox_hashmap_get_u64(map, key), present[i] ? ref[i] : NULL);
		}
	}
	cr_assert_eq(cbox_hashmap_size(map), size);
	for (size_t i = 0; i < N; i++)
		cr_assert_eq(cbox_hashmap_get_u64(map, mix(i)), present[i] ? ref[i] : NULL);

	/* Iteration sees every live key exactly once. */
	CBOX_AUTO(cbox_hashmap) *seen = cbox_hashmap_new(false, NULL);
	size_t it = 0, count = 0;
	uint64_t key;
	void *value;
	while (cbox_hashmap_next(map, &it, &key, NULL, NULL, &value)) {
		cr_assert_null(cbox_hashmap_get_u64(seen, key), "key seen twice");
		cr_assert_eq(cbox_hashmap_put_u64(seen, key, value), 0);
		cr_assert_eq(cbox_hashmap_get_u64(map, key), value);
		count++;
	}
	cr_assert_eq(count, size);
	cr_assert_not(cbox_hashmap_next(map, &it, &key, NULL, NULL, &value));
}

Test(hashmap, take_current_key_while_iterating)
{
	enum { N = 5000 };
	static int seen[N];
	CBOX_AUTO(cbox_hashmap) *map = cbox_hashmap_new(false, NULL);

	/* Sequential and colliding-looking keys alike: several table sizes and long clusters. */
	for (uint64_t i = 0; i < N; i++)
		cr_assert_eq(cbox_hashmap_put_u64(map, i, TAG(i)), 0);
	size_t it = 0;
	uint64_t key;
	void *value;
	while (cbox_hashmap_next(map, &it, &key, NULL, NULL, &value)) {
		cr_assert_lt(key, N);
		cr_assert_eq(value, TAG(key));
		seen[key]++;
		if (key % 3 != 0)
			cr_assert_eq(cbox_hashmap_take_u64(map, key), TAG(key));
	}
	for (size_t i = 0; i < N; i++)
		cr_assert_eq(seen[i], 1, "key %zu seen %d times", i, seen[i]);
	cr_assert_eq(cbox_hashmap_size(map), (N + 2) / 3);
	for (uint64_t i = 0; i < N; i++)
		cr_assert_eq(cbox_hashmap_get_u64(map, i), i % 3 == 0 ? TAG(i) : NULL);
}

Test(hashmap, byte_keys_with_embedded_nuls)
{
	CBOX_AUTO(cbox_hashmap) *map = cbox_hashmap_new(true, free);
	char key[8] = "a\0b";

	cr_assert_eq(cbox_hashmap_put(map, "a\0b", 3, strdup("anb")), 0);
	cr_assert_eq(cbox_hashmap_put(map, "a\0c", 3, strdup("anc")), 0);
	cr_assert_eq(cbox_hashmap_put(map, "a", 1, strdup("a")), 0);
	cr_assert_eq(cbox_hashmap_put(map, "a\0", 2, strdup("an")), 0);
	cr_assert_eq(cbox_hashmap_put(map, NULL, 0, strdup("empty")), 0);
	cr_assert_eq(cbox_hashmap_size(map), 5);

	/* Keys are copied: changing the caller's buffer changes nothing in the map. */
	cr_assert_str_eq(cbox_hashmap_get(map, key, 3), "anb");
	key[2] = 'z';
	cr_assert_null(cbox_hashmap_get(map, key, 3));
	cr_assert_str_eq(cbox_hashmap_get(map, "a\0c", 3), "anc");
	cr_assert_str_eq(cbox_hashmap_get(map, "a", 1), "a");
	cr_assert_str_eq(cbox_hashmap_get(map, "a\0", 2), "an");
	cr_assert_str_eq(cbox_hashmap_get(map, "", 0), "empty");

	cr_assert_eq(cbox_hashmap_put(map, "a", 1, strdup("A")), 0);
	cr_assert_str_eq(cbox_hashmap_get(map, "a", 1), "A");
	char *v = cbox_hashmap_take(map, "a\0c", 3);
	cr_assert_str_eq(v, "anc");
	free(v);
	cr_assert_null(cbox_hashmap_take(map, "a\0c", 3));

	size_t it = 0, len, count = 0;
	const void *k;
	void *val;
	while (cbox_hashmap_next(map, &it, NULL, &k, &len, &val)) {
		cr_assert_eq(cbox_hashmap_get(map, k, len), val);
		count++;
	}
	cr_assert_eq(count, 4);
}

Test(hashmap, many_byte_keys)
{
	CBOX_AUTO(cbox_hashmap) *map = cbox_hashmap_new(true, NULL);
	char key[32];

	for (uintptr_t i = 0; i < 20000; i++) {
		int n = snprintf(key, sizeof(key), "/path/%zu", (size_t)i);
		cr_assert_eq(cbox_hashmap_put(map, key, (size_t)n, TAG(i)), 0);
	}
	for (uintptr_t i = 0; i < 20000; i++) {
		int n = snprintf(key, sizeof(key), "/path/%zu", (size_t)i);
		cr_assert_eq(cbox_hashmap_get(map, key, (size_t)n), TAG(i));
		if (i % 2)
			cr_assert_eq(cbox_hashmap_take(map, key, (size_t)n), TAG(i));
	}
	cr_assert_eq(cbox_hashmap_size(map), 10000);
}

Test(hashmap, misuse_is_refused)
{
	CBOX_AUTO(cbox_hashmap) *u = cbox_hashmap_new(false, NULL);
	CBOX_AUTO(cbox_hashmap) *b = cbox_hashmap_new(true, NULL);
	size_t it = 0;

	cr_assert_eq(cbox_hashmap_put(u, "k", 1, TAG(0)), -EINVAL);
	cr_assert_null(cbox_hashmap_get(u, "k", 1));
	cr_assert_null(cbox_hashmap_take(u, "k", 1));
	cr_assert_eq(cbox_hashmap_put_u64(b, 1, TAG(0)), -EINVAL);
	cr_assert_null(cbox_hashmap_get_u64(b, 1));
	cr_assert_null(cbox_hashmap_take_u64(b, 1));
	cr_assert_eq(cbox_hashmap_put(b, NULL, 3, TAG(0)), -EINVAL);
	cr_assert_null(cbox_hashmap_get(b, NULL, 3));
	cr_assert_eq(cbox_hashmap_put_u64(NULL, 1, TAG(0)), -EINVAL);
	cr_assert_eq(cbox_hashmap_put(NULL, "k", 1, TAG(0)), -EINVAL);
	cr_assert_null(cbox_hashmap_get_u64(NULL, 1));
	cr_assert_eq(cbox_hashmap_size(NULL), 0);
	cr_assert_not(cbox_hashmap_next(NULL, &it, NULL, NULL, NULL, NULL));
	cr_assert_not(cbox_hashmap_next(u, &it, NULL, NULL, NULL, NULL), "empty map");
	cr_assert_eq(cbox_hashmap_size(u), 0);
	cr_assert_eq(cbox_hashmap_size(b), 0);
}
