#pragma once
/* Removing a scratch directory tree. */

/* Remove dir and everything under it, best effort: symlinks are removed, never followed, and
 * the walk never crosses into another mount (a bind left mounted stays, with its parent). */
void cbox_rm_tree(const char *dir);
