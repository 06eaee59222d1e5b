/*
 * What the AF_UNIX compat programs (test_socket_unix*.c) share: a pathname address, and a socket
 * bound to one (listening unless a datagram one).
 */
#pragma once
#include "compat_test.h"

#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

static inline socklen_t path_addr(struct sockaddr_un *a, const char *path)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	strcpy(a->sun_path, path);
	return offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1;
}

static inline int listener(int type, const char *path)
{
	struct sockaddr_un a;
	socklen_t len = path_addr(&a, path);
	int s = CT_OK(socket(AF_UNIX, type, 0));
	CT_OK(bind(s, (struct sockaddr *)&a, len));
	if (type != SOCK_DGRAM)
		CT_OK(listen(s, 4));
	return s;
}
