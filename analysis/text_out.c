/* SPDX-License-Identifier: BSD-2-Clause */
#include "text_out.h"

#include <stdint.h>
#include <string.h>

#include "../decoders/giop/giop.h"

int gs_text_width(const struct gs_text_col *col)
{
	int n = (int)strlen(col->name);
	return col->width > n ? col->width : n;
}

void gs_text_header(FILE *out, const struct gs_text_col *cols, size_t n)
{
	const char *vals[GS_TEXT_COLS_MAX];
	for (size_t i = 0; i < n && i < GS_TEXT_COLS_MAX; i++)
		vals[i] = cols[i].name;
	gs_text_row(out, cols, n < GS_TEXT_COLS_MAX ? n : GS_TEXT_COLS_MAX, vals);
}

void gs_text_row(FILE *out, const struct gs_text_col *cols, size_t n, const char *const *vals)
{
	for (size_t i = 0; i < n; i++) {
		int w = gs_text_width(&cols[i]);
		const char *sep = i ? " " : "";
		/* the last column left-aligned needs no padding after it */
		if (cols[i].left && i + 1 == n)
			fprintf(out, "%s%.*s", sep, cols[i].cut ? w : INT32_MAX, vals[i]);
		else if (cols[i].left)
			fprintf(out, "%s%-*.*s", sep, w, cols[i].cut ? w : INT32_MAX, vals[i]);
		else
			fprintf(out, "%s%*s", sep, w, vals[i]);
	}
	fputc('\n', out);
}

void gs_json_str(FILE *out, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\') {
			fputc('\\', out);
			fputc(ch, out);
		} else if (ch < 0x20) {
			fprintf(out, "\\u00%c%c", hex[ch >> 4], hex[ch & 15]);
		} else {
			fputc(ch, out);
		}
	}
	fputc('"', out);
}

const char *gs_call_status(const struct gs_call *c)
{
	const char *s;
	switch (c->outcome) {
	case GS_OUT_ONEWAY: return "ONEWAY";
	case GS_OUT_CANCELLED: return "CANCELLED";
	case GS_OUT_NO_REPLY: return "NO_REPLY";
	case GS_OUT_REPLY:
		if (!(c->flags & GS_CF_STATUS_KNOWN))
			return "";
		s = c->reply_type == GIOP_LOCATE_REPLY ? giop_locate_status_name(c->status)
						       : giop_reply_status_name(c->status);
		return s ? s : "";
	default:
		return "NO_REPLY";
	}
}

size_t gs_vappendf(char *buf, size_t len, size_t at, const char *fmt, va_list ap)
{
	int n;
	if (at >= len)
		return at;
	n = vsnprintf(buf + at, len - at, fmt, ap);
	return n < 0 ? at : at + (size_t)n;
}

size_t gs_appendf(char *buf, size_t len, size_t at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	at = gs_vappendf(buf, len, at, fmt, ap);
	va_end(ap);
	return at;
}
