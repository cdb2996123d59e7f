/* SPDX-License-Identifier: BSD-2-Clause */
#include "interval.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fmt_num.h"
#include "stats.h"

int gs_interval_init(struct gs_interval *iv, int64_t width)
{
	memset(iv, 0, sizeof *iv);
	if (width <= 0)
		return EINVAL;
	iv->width = width;
	iv->start = INT64_MIN;
	return gs_hist_init(&iv->total, GS_STATS_TOP_BITS);
}

void gs_interval_free(struct gs_interval *iv)
{
	gs_hist_free(&iv->total);
	free(iv->rows);
	memset(iv, 0, sizeof *iv);
}

static void close_window(struct gs_interval *iv)
{
	struct gs_interval_row *r = &iv->cur;
	if (iv->start == INT64_MIN)
		return;
	r->start = iv->start;
	r->p50 = gs_hist_quantile(&iv->total, 0.50);
	r->p90 = gs_hist_quantile(&iv->total, 0.90);
	r->p99 = gs_hist_quantile(&iv->total, 0.99);
	r->max = iv->total.total ? iv->total.max : 0;
	if (iv->n == iv->cap && iv->cap < GS_INTERVAL_MAX_ROWS) {
		uint32_t cap = iv->cap ? iv->cap * 2 : 64;
		struct gs_interval_row *v = realloc(iv->rows, cap * sizeof *v);
		if (v) {
			iv->rows = v;
			iv->cap = cap;
		}
	}
	if (iv->n < iv->cap)
		iv->rows[iv->n++] = *r;
	else
		iv->dropped_rows++;
	memset(r, 0, sizeof *r);
	memset(iv->total.counts, 0, iv->total.n_buckets * sizeof *iv->total.counts);
	iv->total.total = iv->total.saturated = 0;
	iv->total.min = INT64_MAX;
	iv->total.max = 0;
	iv->total.sum = 0;
}

void gs_interval_add(struct gs_interval *iv, const struct gs_call *c)
{
	int64_t t = c->t_request_first;
	if (iv->start == INT64_MIN) {
		iv->start = t - (t % iv->width);
	} else if (t >= iv->start + iv->width) {
		close_window(iv);
		iv->start = t - (t % iv->width);
	}
	/* a call older than the open window (unordered live output) counts in it */
	iv->cur.calls++;
	if (gs_call_is_error(c))
		iv->cur.errors++;
	if (c->outcome == GS_OUT_REPLY && (c->flags & GS_CF_REP_SEEN)) {
		iv->cur.answered++;
		gs_hist_record(&iv->total, c->t_reply_last - c->t_request_first);
	}
}

void gs_interval_write(struct gs_interval *iv, FILE *out, int fmt)
{
	close_window(iv);
	iv->start = INT64_MIN;
	if (fmt == 0)
		fprintf(out, "\nper %.3f s window (total_us)\n%-21s %8s %6s %10s %10s %10s %10s\n",
			(double)iv->width / 1e9, "window start", "calls", "errors", "p50", "p90", "p99", "max");
	else if (fmt == 1)
		fputs("\nwindow_start,calls,errors,answered,total_p50_us,total_p90_us,total_p99_us,total_max_us\n", out);
	for (uint32_t i = 0; i < iv->n; i++) {
		const struct gs_interval_row *r = &iv->rows[i];
		long long s = (long long)(r->start / 1000000000), ns = (long long)(r->start % 1000000000);
		if (!r->answered) {
			/* no reply in the window: no latency, as a summary group without one
			 * prints it (-, empty fields, null), never a latency of 0 */
			if (fmt == 0)
				fprintf(out, "%11lld.%09lld %8llu %6llu %10s %10s %10s %10s\n", s, ns,
					(unsigned long long)r->calls, (unsigned long long)r->errors, "-", "-", "-", "-");
			else if (fmt == 1)
				fprintf(out, "%lld.%09lld,%llu,%llu,0,,,,\n", s, ns, (unsigned long long)r->calls,
					(unsigned long long)r->errors);
			else
				fprintf(out, "{\"type\":\"interval\",\"start\":\"%lld.%09lld\",\"calls\":%llu,"
					"\"errors\":%llu,\"answered\":0,\"total_us\":null}\n", s, ns,
					(unsigned long long)r->calls, (unsigned long long)r->errors);
			continue;
		}
		if (fmt == 0)
			fprintf(out, "%11lld.%09lld %8llu %6llu %10.1f %10.1f %10.1f %10.1f\n", s, ns,
				(unsigned long long)r->calls, (unsigned long long)r->errors, (double)r->p50 / 1e3,
				(double)r->p90 / 1e3, (double)r->p99 / 1e3, (double)r->max / 1e3);
		else if (fmt == 1)
			fprintf(out, "%lld.%09lld,%llu,%llu,%llu,%.3f,%.3f,%.3f,%.3f\n", s, ns,
				(unsigned long long)r->calls, (unsigned long long)r->errors,
				(unsigned long long)r->answered, (double)r->p50 / 1e3, (double)r->p90 / 1e3,
				(double)r->p99 / 1e3, (double)r->max / 1e3);
		else
			fprintf(out, "{\"type\":\"interval\",\"start\":\"%lld.%09lld\",\"calls\":%llu,\"errors\":%llu,"
				"\"answered\":%llu,\"total_us\":{\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f,\"max\":%.3f}}\n",
				s, ns, (unsigned long long)r->calls, (unsigned long long)r->errors,
				(unsigned long long)r->answered, (double)r->p50 / 1e3, (double)r->p90 / 1e3,
				(double)r->p99 / 1e3, (double)r->max / 1e3);
	}
	if (iv->dropped_rows)
		fprintf(out, "%s%llu %s not kept (more than %u)\n", fmt == 2 ? "# " : "",
			(unsigned long long)iv->dropped_rows, gs_plural(iv->dropped_rows, "window", "windows"),
			GS_INTERVAL_MAX_ROWS);
}
