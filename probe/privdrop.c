/* SPDX-License-Identifier: BSD-2-Clause */
/* capget/capset and prctl directly: no libcap for emptying every set. */
#include "privdrop.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

static int reason(char *err, size_t errlen, int e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return e;
}

int gs_priv_lookup(struct gs_privdrop *p, const char *user, char *err, size_t errlen)
{
	struct passwd pw, *res = NULL;
	char buf[16384];
	int r;

	memset(p, 0, sizeof *p);
	if (!user || !*user)
		return reason(err, errlen, EINVAL, "-Z wants a user name (e.g. -Z nobody)");
	/* the name goes into a one-line message: no control characters in it
	 * (no user name has any) */
	for (const char *c = user; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return reason(err, errlen, ENOENT, "-Z: not a user name");
	r = getpwnam_r(user, &pw, buf, sizeof buf, &res);
	if (!res) {
		/* getpwnam_r(3): 0, ENOENT, ESRCH, EBADF or EPERM all mean "not found" */
		if (r == 0 || r == ENOENT || r == ESRCH || r == EBADF || r == EPERM)
			return reason(err, errlen, ENOENT, "-Z: no user '%.64s'", user);
		return reason(err, errlen, r, "-Z: cannot look up user '%.64s': %s", user, strerror(r));
	}
	if (pw.pw_uid == 0)
		return reason(err, errlen, EINVAL, "-Z %.64s: uid 0 keeps every privilege; name an unprivileged "
			    "user (e.g. nobody)", user);
	p->set = true;
	p->name = user;
	p->uid = pw.pw_uid;
	p->gid = pw.pw_gid;
	if (geteuid() == 0) {
		p->switch_ids = true;
	} else if (getuid() != p->uid || geteuid() != p->uid) {
		/* only root may become someone else; failing here, before the tap
		 * is opened, beats failing after it */
		return reason(err, errlen, EPERM, "-Z %.64s needs root (giopscope runs as uid %u)", user,
			    (unsigned)geteuid());
	}
	return 0;
}

/* The bounding set and the ambient set: emptying the bounding set needs
 * CAP_SETPCAP, so this comes before the uid changes. */
static int drop_bounding(void)
{
	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL && errno != EPERM)
			return errno;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	return 0;
}

/* Effective, permitted, inheritable: all empty; and nothing exec'd later
 * (there is no exec) could gain any back. */
static int clear_sets(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof d);
	if (syscall(SYS_capset, &h, d) != 0)
		return errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return errno;
	return 0;
}

int gs_priv_caps_clear(void)
{
	int r = drop_bounding();
	return r ? r : clear_sets();
}

int gs_priv_drop(const struct gs_privdrop *p, char *err, size_t errlen)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	int r;

	if (!p->set || !p->switch_ids) {
		if ((r = gs_priv_caps_clear()) != 0)
			return reason(err, errlen, r, "cannot drop capabilities: %s", strerror(r));
		return 0;
	}
	if ((r = drop_bounding()) != 0)
		return reason(err, errlen, r, "cannot drop capabilities: %s", strerror(r));
	/* groups, then gid, then uid: each step needs a privilege the next gives up */
	if (initgroups(p->name, p->gid) != 0)
		return reason(err, errlen, errno, "-Z %s: cannot set the supplementary groups: %s", p->name,
			    strerror(errno));
	if (setgid(p->gid) != 0)
		return reason(err, errlen, errno, "-Z %s: cannot set gid %u: %s", p->name, (unsigned)p->gid,
			    strerror(errno));
	if (setuid(p->uid) != 0)
		return reason(err, errlen, errno, "-Z %s: cannot set uid %u: %s", p->name, (unsigned)p->uid,
			    strerror(errno));
	/* root must be gone for good: a saved uid of 0 (or a kernel that kept
	 * it some other way) would let a compromised probe take it back */
	if (setuid(0) == 0)
		return reason(err, errlen, EPERM, "-Z %s: root could be regained after the switch", p->name);
	if (getresuid(&ru, &eu, &su) != 0 || getresgid(&rg, &eg, &sg) != 0 ||
	    ru != p->uid || eu != p->uid || su != p->uid || rg != p->gid || eg != p->gid || sg != p->gid)
		return reason(err, errlen, EPERM, "-Z %s: the user and group ids did not all change", p->name);
	/* setuid away from 0 empties the permitted and effective sets already
	 * (no SECBIT_KEEP_CAPS here); the inheritable one stays unless emptied */
	if ((r = clear_sets()) != 0)
		return reason(err, errlen, r, "-Z %s: cannot drop the remaining capabilities: %s", p->name,
			    strerror(r));
	return 0;
}
