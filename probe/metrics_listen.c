// SPDX-License-Identifier: BSD-2-Clause
#include "metrics_listen.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* "A.B.C.D:PORT" or "[v6]:PORT" into host and port text. */
static bool split_spec(const char *spec, char *host, size_t hlen, char *port, size_t plen)
{
	const char *colon, *hs, *he;
	if (spec[0] == '[') {
		he = strchr(spec, ']');
		if (!he || he[1] != ':')
			return false;
		hs = spec + 1;
		colon = he + 1;
	} else {
		colon = strrchr(spec, ':');
		if (!colon || memchr(spec, ':', (size_t)(colon - spec)))
			return false; /* IPv6 needs brackets */
		hs = spec;
		he = colon;
	}
	if (he == hs || (size_t)(he - hs) >= hlen || !colon[1] || strlen(colon + 1) >= plen)
		return false;
	memcpy(host, hs, (size_t)(he - hs));
	host[he - hs] = '\0';
	strcpy(port, colon + 1);
	for (const char *p = port; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return atoi(port) <= 65535;
}

int gs_metrics_listen(const char *spec, uint16_t *port_out, char *err, size_t errlen)
{
	char host[128], port[8];
	struct addrinfo hints, *ai = NULL;
	int fd, one = 1, rc, e;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;

	if (!split_spec(spec, host, sizeof host, port, sizeof port)) {
		snprintf(err, errlen, "--metrics wants ADDR:PORT with a numeric address (e.g. 127.0.0.1:9464 "
			 "or [::1]:9464), not '%s'", spec);
		return -EINVAL;
	}
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	/* only what the user wrote: no name lookups, no default address */
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	if ((rc = getaddrinfo(host, port, &hints, &ai)) != 0 || !ai) {
		snprintf(err, errlen, "--metrics: '%s' is not a numeric address and port (%s)", spec,
			 gai_strerror(rc));
		if (ai)
			freeaddrinfo(ai);
		return -EINVAL;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "--metrics %s: socket: %s", spec, strerror(e));
		freeaddrinfo(ai);
		return -e;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (ai->ai_family == AF_INET6) /* [::] means IPv6 only: bind what was given */
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	/* a long backlog: between two ticks a flood of connections waits there
	 * rather than having Prometheus's SYN dropped and retried a second later */
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
		e = errno;
		snprintf(err, errlen, "--metrics %s: cannot listen: %s", spec, strerror(e));
		close(fd);
		freeaddrinfo(ai);
		return -e;
	}
	freeaddrinfo(ai);
	*port_out = 0;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		*port_out = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
							   : ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}
