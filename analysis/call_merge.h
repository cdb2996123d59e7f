/* SPDX-License-Identifier: BSD-2-Clause */
/* Merging the ordered call streams of several engines (read --threads) into
 * the order one engine writes them in: t_request_first, then the client as
 * text, then the request id (calls.c's output order; docs/output.md).
 */
#ifndef GS_CALL_MERGE_H
#define GS_CALL_MERGE_H

#include <stdint.h>
#include "call.h"

/* <0, 0, >0 as a is written before, with, after b. */
int gs_call_order_cmp(const struct gs_call *a, const struct gs_call *b);

/* Which stream's head comes next.  heads[i]: stream i's earliest call not
 * written yet, or NULL when none is waiting; floors[i]: no call stream i may
 * still bring starts before it (INT64_MAX: the stream has ended).  Returns
 * the stream whose head is first (ties: the lower stream), -1 when no head
 * waits.  *ready is set when it may be written now: every stream without a
 * head has a floor after its start, so no call can still come before it. */
int gs_call_merge_pick(const struct gs_call *const *heads, const int64_t *floors, unsigned n, bool *ready);

#endif
