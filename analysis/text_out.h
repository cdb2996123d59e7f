/* SPDX-License-Identifier: BSD-2-Clause */
/* The text forms the outputs share: aligned columns for people (--pairs --format text, the
 * merge's text), a JSON string, a call's status. */
#ifndef GS_TEXT_OUT_H
#define GS_TEXT_OUT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "call.h"

/* Aligned text columns, for people: the header line and the rows come from the
 * same table, so they line up (a column is as wide as its name at least; a
 * value wider than its column pushes the rest of its row right, unless `cut`). */
#define GS_TEXT_COLS_MAX 16
struct gs_text_col {
	const char *name;
	int width;
	bool left;                     /* left-aligned (names), else right (numbers) */
	bool cut;                      /* a longer value is cut to the width */
};
int gs_text_width(const struct gs_text_col *col);
void gs_text_header(FILE *out, const struct gs_text_col *cols, size_t n);
void gs_text_row(FILE *out, const struct gs_text_col *cols, size_t n, const char *const *vals);
/* A JSON string, escaped (for the summary's and the tail's JSON lines). */
void gs_json_str(FILE *out, const char *s);
/* printf at `at` into buf (len bytes in all), for text built in pieces (the tail's
 * reasons): returns the new end, which may pass len when the text was cut (then
 * further calls add nothing). */
size_t gs_appendf(char *buf, size_t len, size_t at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
size_t gs_vappendf(char *buf, size_t len, size_t at, const char *fmt, va_list ap);
/* The status column of a call ("" when a reply was seen but its status was not). */
const char *gs_call_status(const struct gs_call *c);

#endif
