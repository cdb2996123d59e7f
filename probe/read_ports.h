/* SPDX-License-Identifier: BSD-2-Clause */
/* read --ports that left out every call: which ports the captures' GIOP
 * requests went to, found by a second reading of them (only then: a run with
 * calls never pays it), for a message that gives the option's right value. */
#ifndef GS_READ_PORTS_H
#define GS_READ_PORTS_H

#include <stddef.h>
#include <stdint.h>

#include "read_inputs.h"

/* Reads the `n` inputs (repeats skipped) and writes into `msg` the ports that
 * received GIOP Requests and LocateRequests, most first ("2809 (203
 * requests), 683 (4)") and a --ports value of them ("--ports 2809,683"):
 * 0, ENOENT when no GIOP request was seen on any port, or an errno value. */
int gs_read_giop_ports(const struct gs_input *in, int n, char *msg, size_t msglen, char *list, size_t listlen);

#endif
