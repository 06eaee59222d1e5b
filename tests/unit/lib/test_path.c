/* Unit tests for lib/path.c: lexical cleaning and "at or below". */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "cbox/path.h"

static void clean_is(const char *in, const char *want)
{
	char *got = cbox_path_clean(in);
	cr_assert_not_null(got);
	cr_expect_str_eq(got, want, "clean(\"%s\")", in);
	free(got);
}

Test(path, clean_drops_dots_and_slashes)
{
	clean_is("/a/./b//c/", "/a/b/c");
	clean_is("/a/b/../c", "/a/c");
	clean_is("", "/");
	clean_is("/", "/");
	clean_is("//", "/");
	clean_is("a/b", "/a/b");
	clean_is("/..a/b..", "/..a/b..");
}

Test(path, clean_stays_at_the_top)
{
	clean_is("/..", "/");
	clean_is("/../../../etc", "/etc");
	clean_is("/tmp/../../proc/x", "/proc/x");
	clean_is("/a/b/../../..", "/");
}

Test(path, under_is_by_component)
{
	cr_expect(cbox_path_under("/dev", "/dev"));
	cr_expect(cbox_path_under("/dev/shm/x", "/dev"));
	cr_expect(cbox_path_under("/dev/shm", "/dev/shm"));
	cr_expect_not(cbox_path_under("/devices", "/dev"));
	cr_expect_not(cbox_path_under("/de", "/dev"));
	cr_expect(cbox_path_under("/anything", "/"));
	cr_expect(cbox_path_under("/", "/"));
}
