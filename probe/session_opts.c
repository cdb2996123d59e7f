// SPDX-License-Identifier: BSD-2-Clause
#include "session_opts.h"

bool gs_session_budget(const struct gs_session_opts *o, uint64_t mem, struct gs_config *cfg)
{
	struct gs_config m = o->cfg;
	*cfg = o->cfg;
	if (!mem)
		return true;
	/* every bound from the budget; one given on its own still wins */
	if (gs_config_for_memory(&m, mem) != 0)
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
