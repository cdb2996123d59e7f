/* SPDX-License-Identifier: BSD-2-Clause */
#include "attach_rxstamp.h"

#include <errno.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int gs_rxstamp_hold(void)
{
	/* UDP: any socket but AF_UNIX turns the host's stamping on; nothing is
	 * ever sent to it (unbound), it only has to exist */
	int one = 1, fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), e;
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) != 0) {
		e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

int64_t gs_rxstamp_tai_off(void)
{
	struct timespec t, r;
	int64_t d;
	clock_gettime(CLOCK_TAI, &t);
	clock_gettime(CLOCK_REALTIME, &r);
	d = ((int64_t)t.tv_sec - r.tv_sec) * 1000000000 + (t.tv_nsec - r.tv_nsec);
	/* the offset is whole seconds: the two reads' distance rounds away
	 * (a leap second between them: the next poll's read is right) */
	return (d + (d >= 0 ? 500000000 : -500000000)) / 1000000000 * 1000000000;
}
