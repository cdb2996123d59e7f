/* SPDX-License-Identifier: BSD-2-Clause */
/* Text and numbers as the HTML report writes them, shared by the document
 * (report_html.c) and its plots (report_plot.c). */
#include "report_impl.h"

void rp_html_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		switch (ch) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			/* names come from the wire: printable ASCII only */
			fputc(ch >= 0x20 && ch < 0x7f ? (int)ch : '?', f);
		}
	}
}

void rp_fmt_us(char *buf, size_t len, int64_t ns)
{
	snprintf(buf, len, "%.1f", (double)ns / 1000.0);
}

void rp_fmt_dur(char *buf, size_t len, double us)
{
	if (us < 1000)
		snprintf(buf, len, "%.3g &#181;s", us);
	else if (us < 1e6)
		snprintf(buf, len, "%.3g ms", us / 1e3);
	else
		snprintf(buf, len, "%.3g s", us / 1e6);
}
