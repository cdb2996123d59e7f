/* SPDX-License-Identifier: BSD-2-Clause */
#include "attach_check.h"
#include "verifier_log.h"

#include "../analysis/sink_pairs.h"

void gs_check_row(void *arg, const struct gs_prog_verdict *v)
{
	struct gs_check_out *o = arg;
	char n1[32], n2[32];
	if (!v->used && !o->all)
		return;
	o->rows++;
	if (o->jsonl) {
		fputs("{\"program\":", o->f);
		gs_json_str(o->f, v->program);
		fputs(",\"hook\":", o->f);
		gs_json_str(o->f, v->hook);
		fprintf(o->f, ",\"loaded\":%s,\"verified_insns\":", v->loaded ? "true" : "false");
		if (v->insns >= 0)
			fprintf(o->f, "%lld", (long long)v->insns);
		else
			fputs("null", o->f);
		fprintf(o->f, ",\"limit\":%d,\"used\":%s", GS_VERIFIER_LIMIT, v->used ? "true" : "false");
		if (!v->loaded) {
			fputs(",\"reason\":", o->f);
			gs_json_str(o->f, v->reason);
		}
		fputs("}\n", o->f);
		return;
	}
	fprintf(o->f, "%-20s %-28s %-8s", v->program, v->hook, v->loaded ? "loaded" : "REFUSED");
	if (v->insns >= 0)
		fprintf(o->f, " %9s of %s insns", gs_vlog_count(v->insns, n1, sizeof n1),
			gs_vlog_count(GS_VERIFIER_LIMIT, n2, sizeof n2));
	fprintf(o->f, "%s", v->used ? "  (attach uses it)" : "");
	if (!v->loaded)
		fprintf(o->f, ": %s", v->reason);
	fputc('\n', o->f);
}
