#pragma once
/* Lexical path helpers (no file system access). */

/*
 * path ("/a/./b/../c") as a plain absolute path ("/a/c"): empty and "." components dropped,
 * ".." taking the one before it off and staying at "/" at the top, as runc cleans a mount's
 * destination before it resolves it in the rootfs. A relative path comes out absolute ("a/b"
 * -> "/a/b"). Returns a malloc'ed string, or NULL on no memory.
 */
char *cbox_path_clean(const char *path);

/* Whether path is dir or lies below it, both clean absolute paths ("/dev/shm" is below "/dev",
 * "/devices" is not). */
_Bool cbox_path_under(const char *path, const char *dir);
