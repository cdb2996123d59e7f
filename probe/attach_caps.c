/* SPDX-License-Identifier: BSD-2-Clause */
/* capget directly: no libcap for three bits. */
#include "attach_caps.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool effective(uint64_t *eff)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof d);
	if (syscall(SYS_capget, &h, d) != 0)
		return false;
	*eff = (uint64_t)d[0].effective | (uint64_t)d[1].effective << 32;
	return true;
}

static bool has(uint64_t eff, int cap)
{
	return (eff >> cap) & 1;
}

bool gs_caps_enough(char *why, size_t len)
{
	uint64_t eff = 0;
	bool admin;
	size_t n = 0;
	why[0] = '\0';
	if (!effective(&eff)) {
		snprintf(why, len, "cannot read the capabilities: %s", strerror(errno));
		return false;
	}
	admin = has(eff, CAP_SYS_ADMIN);
	if (!has(eff, CAP_BPF) && !admin)
		n += (size_t)snprintf(why + n, len - n, "%sCAP_BPF", n ? ", " : "");
	if (n < len && !has(eff, CAP_PERFMON) && !admin)
		n += (size_t)snprintf(why + n, len - n, "%sCAP_PERFMON", n ? ", " : "");
	if (n < len && !has(eff, CAP_NET_ADMIN))
		n += (size_t)snprintf(why + n, len - n, "%sCAP_NET_ADMIN", n ? ", " : "");
	return n == 0;
}
