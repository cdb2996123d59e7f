/* SPDX-License-Identifier: BSD-2-Clause */
/* The tables a command's options ask for could not be allocated (ENOMEM on a
 * host with less memory than the limits given, all inside their ranges):
 * which option to lower and to what.  The limit given is tried halved until
 * the tables are allocated, once each (and given back): the value that did is
 * the one the message offers. */
#ifndef GS_SESSION_FIT_H
#define GS_SESSION_FIT_H

#include <stddef.h>

#include "session_opts.h"

/* Writes into `why` "--OPTION VALUE asks for more memory than this host
 * gives; --OPTION SMALLER fits": 0, or ENOENT when no lower value of any
 * limit given (or --max-memory, when none was) was allocated either. */
int gs_session_fit(const struct gs_session_opts *o, char *why, size_t whylen);

#endif
