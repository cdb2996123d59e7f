// SPDX-License-Identifier: BSD-2-Clause
#include "session_opts.h"

#include "../analysis/nest.h"

bool gs_session_wants_nesting(const struct gs_session_opts *o)
{
	return o->pairs || o->tail || o->report || o->trace;
}

bool gs_session_budget(const struct gs_session_opts *o, uint64_t mem, struct gs_config *cfg)
{
	struct gs_config m = o->cfg;
	uint64_t per = 0, fixed = 0;
	*cfg = o->cfg;
	if (!mem)
		return true;
	if (gs_session_wants_nesting(o)) {
		/* the nesting stage holds up to the order window's calls beside the engine */
		per = gs_nest_memory_per_held(o->syscall_times);
		fixed = gs_nest_memory_bound(0, o->syscall_times, o->cfg.ordered);
	}
	/* every bound from the budget; one given on its own still wins */
	if (gs_config_for_memory_beside(&m, mem, per, fixed) != 0)
		return false;
	if (!o->set_flows)
		cfg->max_flows = m.max_flows;
	if (!o->set_calls)
		cfg->max_open_calls = m.max_open_calls;
	if (!o->set_window)
		cfg->order_window = m.order_window < cfg->max_open_calls ? m.order_window : cfg->max_open_calls;
	if (!o->set_ooo)
		cfg->max_ooo_bytes = m.max_ooo_bytes;
	cfg->max_ooo_total = m.max_ooo_total;
	cfg->max_strings = m.max_strings;
	return true;
}
