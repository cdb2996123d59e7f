/* SPDX-License-Identifier: BSD-2-Clause */
/* What `giopscope attach` follows, found in /proc and the network stack:
 * processes by pid or by name, the ports they listen on, the network
 * namespace they live in, the interfaces to tap. */
#ifndef GS_ATTACH_TARGET_H
#define GS_ATTACH_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attach_bpf.h"

#define GS_TARGET_MAX_PIDS 4096
#define GS_TARGET_MAX_IFACES 256

/* Every process of our network namespace whose name (comm) is `comm`:
 * appended to pids[*n] (up to max). */
void gs_target_pids_by_comm(const char *comm, uint32_t *pids, uint32_t *n, uint32_t max);
/* True when process `pid` exists. */
bool gs_target_pid_exists(uint32_t pid);
/* Sets the bits of the TCP ports `pid` listens on (IPv4 and IPv6).  Returns how
 * many, or a negative errno value when its sockets cannot be read. */
int gs_target_listen_ports(uint32_t pid, uint8_t bitmap[8192]);

/* 1 when `pid` is a kernel thread (PF_KTHREAD in /proc/PID/stat), 2 when it
 * has no executable (/proc/PID/exe absent: a kernel thread, or a process that
 * exited and was not yet reaped), 0 otherwise, a negative errno value when /proc
 * cannot tell. */
int gs_target_kernel_thread(uint32_t pid);
/* How many TCP sockets (any state, IPv4 and IPv6) `pid` holds; a negative
 * errno value when its open files cannot be read. */
int gs_target_tcp_sockets(uint32_t pid);

/* Moves this process into the network namespace of the pids when they all
 * share one that is not ours (the interfaces to tap are theirs: tc resolves
 * an ifindex in the caller's namespace).  0: nothing to do (*home -1) or done
 * (*home: our own namespace, to go back to with gs_target_leave_netns once the
 * taps are attached); 2 with a reason in `err`. */
int gs_target_enter_netns(const uint32_t *pids, uint32_t n, int *home, char *err, size_t errlen);
/* Back to the namespace `*home` (if not -1), which it closes.  The TCX links
 * and the sockets made meanwhile stay in the namespace they were made in.
 * 0, or 2 with a reason in `err`. */
int gs_target_leave_netns(int *home, char *err, size_t errlen);

/* The interfaces `names` (NULL: every interface that is up), with their link
 * header lengths.  Returns how many, or a negative errno value with a reason in
 * `err`. */
int gs_target_ifaces(const char *const *names, uint32_t n_names, struct gs_attach_iface *out,
		     uint32_t max, char *err, size_t errlen);

/* What attach watches while it runs (attach_target.c): the processes given
 * with --pid, each through a pidfd (it refers to that process, never to a
 * later one that gets the same number), and the tapped interfaces, through
 * rtnetlink's link notifications in their namespace.  Opened after the
 * namespace is entered (its sockets are that namespace's, whichever attach
 * is in later) and before the capabilities are dropped; checking needs no
 * privilege. */
struct gs_target_watch;

enum gs_watch_state {
	GS_WATCH_RUNNING = 0,
	GS_WATCH_PIDS_GONE,      /* every --pid process has exited */
	GS_WATCH_IFACE_GONE,     /* an interface named with -i, or the last tapped one, went away */
};

/* pidfds for `pids` (with when each started: gs_target_watch_starts) and a
 * link-notification socket for `ifaces` (`named`: given with -i, each one
 * needed).  0, or 2 with a reason in `err` (a pid that is not a running
 * process: exited, a thread id). */
int gs_target_watch_open(struct gs_target_watch **out, const uint32_t *pids, uint32_t n_pids,
			 const struct gs_attach_iface *ifaces, uint32_t n_ifaces, bool named,
			 char *err, size_t errlen);
/* Per pid, the start of the clock tick in which it started (CLOCK_BOOTTIME
 * ns, /proc/PID/stat field 22), and the tick's length. */
const uint64_t *gs_target_watch_starts(const struct gs_target_watch *w, uint64_t *tick_ns);
/* Looks (without waiting) for processes that exited and interfaces that went
 * away; says so on stderr, one line per event, prefixed with `cmd`.  The
 * state stays once reached. */
enum gs_watch_state gs_target_watch_check(struct gs_target_watch *w, const char *cmd);
void gs_target_watch_close(struct gs_target_watch *w);

#endif
