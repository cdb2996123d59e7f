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
 * many, or -1 when its sockets cannot be read. */
int gs_target_listen_ports(uint32_t pid, uint8_t bitmap[8192]);

/* Moves this process into the network namespace of the pids when they all
 * share one that is not ours (the interfaces to tap are theirs).  0: nothing
 * to do or done (`moved` says which); 2 with a reason in `err`. */
int gs_target_enter_netns(const uint32_t *pids, uint32_t n, bool *moved, char *err, size_t errlen);

/* The interfaces `names` (NULL: every interface that is up), with their link
 * header lengths.  Returns how many, or -1 with a reason in `err`. */
int gs_target_ifaces(const char *const *names, uint32_t n_names, struct gs_attach_iface *out,
		     uint32_t max, char *err, size_t errlen);

#endif
