/* capget/capset directly: no libcap for three bits and a drop. */
#include "attach_caps.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
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

bool gs_caps_sys_admin(void)
{
	uint64_t eff = 0;
	return effective(&eff) && has(eff, CAP_SYS_ADMIN);
}

int gs_caps_drop_all(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	/* the bounding set first: dropping from it needs CAP_SETPCAP, still held */
	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL && errno != EPERM)
			return errno;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	memset(d, 0, sizeof d);
	if (syscall(SYS_capset, &h, d) != 0)
		return errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return errno;
	return 0;
}
