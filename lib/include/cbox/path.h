#pragma once
/* Path helpers: lexical ones (no file system access), and an open beneath a root. */

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

/* openat2 of path (absolute or relative) beneath directory fd root as if root were "/": its
 * symlinks and ".." resolved inside it (RESOLVE_IN_ROOT), magic links (/proc/self/...) refused,
 * O_CLOEXEC added to flags. The fd, or -1 with errno set. How the runtimes resolve a rootfs's
 * paths, as runc's securejoin does. */
int cbox_open_in_root(int root, const char *path, int flags);
