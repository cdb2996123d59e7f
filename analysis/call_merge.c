/* SPDX-License-Identifier: BSD-2-Clause */
/* Merging ordered call streams (call_merge.h). */
#include <stdbool.h>
#include <string.h>

#include "call_merge.h"
#include "endpoint.h"

int gs_call_order_cmp(const struct gs_call *a, const struct gs_call *b)
{
	int c;
	if (a->t_request_first != b->t_request_first)
		return a->t_request_first < b->t_request_first ? -1 : 1;
	if ((c = gs_endpoint_text_cmp(&a->client, &b->client)) != 0)
		return c;
	if (a->request_id != b->request_id)
		return a->request_id < b->request_id ? -1 : 1;
	return 0;
}

int gs_call_merge_pick(const struct gs_call *const *heads, const int64_t *floors, unsigned n, bool *ready)
{
	int best = -1;
	*ready = false;
	for (unsigned i = 0; i < n; i++)
		if (heads[i] && (best < 0 || gs_call_order_cmp(heads[i], heads[best]) < 0))
			best = (int)i;
	if (best < 0)
		return -1;
	/* a stream with a head brings nothing before it (each stream is in
	 * order); one without may still bring a call starting at its floor */
	*ready = true;
	for (unsigned i = 0; i < n; i++)
		if (!heads[i] && floors[i] <= heads[best]->t_request_first)
			*ready = false;
	return best;
}
