/* SPDX-License-Identifier: BSD-2-Clause */
/* Percentiles per time window (--interval): where in the capture the tail was.
 * Calls are assigned by t_request_first; a window's figures are computed when
 * it closes and only the figures are kept (a bounded number of rows). */
#ifndef GS_INTERVAL_H
#define GS_INTERVAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "call.h"
#include "hist.h"

#define GS_INTERVAL_MAX_ROWS (1u << 20)

struct gs_interval_row {
	int64_t start;
	uint64_t calls, errors, answered;
	int64_t p50, p90, p99, max;
};

struct gs_interval {
	int64_t width;
	int64_t start;            /* of the open window; INT64_MIN before the first call */
	struct gs_interval_row cur;
	struct gs_hist total;
	struct gs_interval_row *rows;
	uint32_t n, cap;
	uint64_t dropped_rows;
};

int gs_interval_init(struct gs_interval *iv, int64_t width_ns);
void gs_interval_free(struct gs_interval *iv);
void gs_interval_add(struct gs_interval *iv, const struct gs_call *c);
/* Closes the open window and writes every row: text, csv or jsonl (0, 1, 2). */
void gs_interval_write(struct gs_interval *iv, FILE *out, int fmt);

#endif
