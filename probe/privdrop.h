/* SPDX-License-Identifier: BSD-2-Clause */
/* Giving up privileges once a tap is open: -Z USER (tcpdump's
 * --relinquish-privileges) for `live` and `attach`, and the capability drop
 * `attach` does after loading its eBPF programs even without -Z.
 *
 * The user is looked up while the command line is read, so that an unknown
 * one is a usage error before anything is opened; the switch itself comes
 * once the tap holds what needed root (a packet socket, BPF links, a ring
 * buffer: file descriptors, which stay usable after it). */
#ifndef GS_PRIVDROP_H
#define GS_PRIVDROP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct gs_privdrop {
	bool set;                 /* -Z given */
	bool switch_ids;          /* false: already running as that user, only capabilities go */
	const char *name;         /* as given (initgroups reads the groups by name) */
	uid_t uid;
	gid_t gid;
};

/* -Z USER: looks the user up.  0 with `p` filled in; otherwise an errno
 * value with a one-line reason in `err`: EINVAL (empty name, or a user with
 * uid 0, which would keep every privilege), ENOENT (no such user), EPERM
 * (not running as root, and not as USER already), or what the lookup said. */
int gs_priv_lookup(struct gs_privdrop *p, const char *user, char *err, size_t errlen);

/* Becomes p's user: the bounding and ambient capability sets emptied (while
 * CAP_SETPCAP is still held), supplementary groups (initgroups), gid, uid,
 * each checked; then checks that root cannot be regained (setuid(0) must
 * fail), empties the remaining capability sets and sets no_new_privs.
 * With `p` unset (no -Z) only the capabilities go, as gs_priv_caps_clear.
 * 0, or an errno value with a one-line reason in `err`. */
int gs_priv_drop(const struct gs_privdrop *p, char *err, size_t errlen);

/* Drops every capability (effective, permitted, inheritable, ambient, the
 * bounding set) and sets no_new_privs, keeping the user.  0, or an errno value. */
int gs_priv_caps_clear(void);

#endif
