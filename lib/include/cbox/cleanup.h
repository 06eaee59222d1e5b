#pragma once
/*
 * Scope-bound cleanup (bubblewrap's steal_pointer, systemd's _cleanup_). Every variable declared
 * with one of these must be initialised (to NULL or -1). Ownership moves out with
 * cbox_steal_ptr()/cbox_steal_fd().
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

static inline void cbox_freep(void *p)
{
	free(*(void **)p);
}

static inline void cbox_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

#define CBOX_AUTOFREE  __attribute__((cleanup(cbox_freep)))
#define CBOX_AUTOCLOSE __attribute__((cleanup(cbox_closep)))

/* Declares the cleanup for `struct type` given its NULL-safe free function type##_free(p). */
#define CBOX_DEFINE_AUTO(type, freefn)                                                             \
	static inline void type##_autofree(struct type **p)                                        \
	{                                                                                          \
		freefn(*p);                                                                        \
	}
#define CBOX_AUTO(type) __attribute__((cleanup(type##_autofree))) struct type

/* Take ownership of *pp: return it and leave NULL behind. Type-checked. */
#define cbox_steal_ptr(pp)                                                                         \
	({                                                                                         \
		__typeof__(*(pp)) cbox_tmp_ = *(pp);                                               \
		*(pp) = NULL;                                                                      \
		cbox_tmp_;                                                                         \
	})

static inline int cbox_steal_fd(int *fd)
{
	int r = *fd;
	*fd = -1;
	return r;
}
