/* SPDX-License-Identifier: BSD-2-Clause */
/* The report's plots, as inline SVG written straight to the file: static
 * markup, no script, so that any browser (or a DOM dump) shows them.
 *
 * No libm: the program does not link it, and a plot needs only a log10 good
 * to a few digits. */
#include "report_impl.h"

#include <string.h>

/* ---- numbers ------------------------------------------------------------- */

/* log10 of x > 0: exponent from the bits, mantissa by the atanh series */
static double lg(double x)
{
	uint64_t bits;
	int e;
	double m, z, z2, t, s = 0;
	if (!(x > 0))
		return -300;
	memcpy(&bits, &x, sizeof bits);
	e = (int)((bits >> 52) & 0x7ff);
	if (e == 0) /* subnormal: not a latency */
		return -300;
	e -= 1023;
	bits = (bits & ~(0x7ffull << 52)) | (1023ull << 52);
	memcpy(&m, &bits, sizeof m); /* 1 <= m < 2 */
	z = (m - 1) / (m + 1);       /* 0 <= z < 1/3 */
	z2 = z * z;
	t = z;
	for (int k = 1; k < 40; k += 2) {
		s += t / k;
		t *= z2;
	}
	/* ln(m) = 2 s; log10(x) = (e ln 2 + ln m) / ln 10 */
	return ((double)e * 0.69314718055994530942 + 2 * s) * 0.43429448190325182765;
}

static double pow10i(int k)
{
	double v = 1;
	for (; k > 0; k--)
		v *= 10;
	for (; k < 0; k++)
		v /= 10;
	return v;
}

static int floor_int(double v)
{
	int i = (int)v;
	return (double)i > v ? i - 1 : i;
}

static int ceil_int(double v)
{
	int i = (int)v;
	return (double)i < v ? i + 1 : i;
}

static const char *rp_color(uint32_t op)
{
	static const char *const pal[] = { "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
					   "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f" };
	return pal[op % (sizeof pal / sizeof *pal)];
}

static void widen(double *lo, double *hi, const struct gs_hist *h)
{
	double a, b;
	if (!h->total)
		return;
	a = (double)h->min / 1000.0;
	b = (double)h->max / 1000.0;
	if (a < *lo)
		*lo = a;
	if (b > *hi)
		*hi = b;
}

void rp_latency_range(const struct gs_report *r, struct rp_range *rg)
{
	double lo = 1e300, hi = 0;
	widen(&lo, &hi, &r->all.total);
	widen(&lo, &hi, &r->all.server);
	/* network times of 0 (or below, counted as 0) would stretch the axis to
	 * nothing: only their top end counts; small ones sit on the left edge */
	if (r->all.network.total && (double)r->all.network.max / 1000.0 > hi)
		hi = (double)r->all.network.max / 1000.0;
	if (hi <= 0) {
		lo = 1;
		hi = 1000;
	}
	if (lo < 0.1) /* zeros and sub-100 ns values sit on the left edge */
		lo = 0.1;
	if (hi < lo)
		hi = lo;
	rg->lo_us = pow10i(floor_int(lg(lo) + 1e-9));
	rg->hi_us = pow10i(ceil_int(lg(hi) - 1e-9));
	if (rg->hi_us <= rg->lo_us)
		rg->hi_us = rg->lo_us * 10;
}

/* pixel of a latency (us) on a log axis from x0 to x0 + w */
static double lx(const struct rp_range *rg, double us, double x0, double w)
{
	double a = lg(rg->lo_us), b = lg(rg->hi_us);
	double v = us < rg->lo_us ? a : us > rg->hi_us ? b : lg(us);
	return x0 + (v - a) / (b - a) * w;
}

/* ---- SVG pieces ------------------------------------------------------------ */

struct box {
	double x0, y0, w, h; /* the plot area */
};

static void svg_open_attrs(FILE *f, const char *cls, int w, int h, const char *label, const char *attrs)
{
	fprintf(f, "<svg class=\"plot %s\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\"%s role=\"img\" aria-label=\"",
		cls, w, h, w, h, attrs);
	rp_html_text(f, label);
	fputs("\">\n", f);
}

static void svg_open(FILE *f, const char *cls, int w, int h, const char *label)
{
	svg_open_attrs(f, cls, w, h, label, "");
}

/* The time plots' axis in numbers, for programs and tests: where the first bin
 * starts (ns since the epoch), the bins' width, how many are used, and the span
 * the x axis covers (every call's request first byte is within
 * [origin, origin + span]). */
static void time_attrs(const struct gs_report *r, double span, char *buf, size_t len)
{
	snprintf(buf, len, " data-origin-ns=\"%lld\" data-bin-ns=\"%lld\" data-bins=\"%u\" data-span-ns=\"%.0f\"",
		 (long long)r->origin, (long long)r->width, r->bins_used, span);
}

static void svg_title(FILE *f, double x, double y, const char *text)
{
	fprintf(f, "<text class=\"ptitle\" x=\"%.1f\" y=\"%.1f\">", x, y);
	rp_html_text(f, text);
	fputs("</text>\n", f);
}

static void frame(FILE *f, const struct box *b)
{
	fprintf(f, "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n",
		b->x0, b->y0, b->w, b->h);
}

/* decades along x (log latency) with grid lines and labels */
static void log_x_axis(FILE *f, const struct box *b, const struct rp_range *rg)
{
	int d0 = floor_int(lg(rg->lo_us) + 1e-9), d1 = ceil_int(lg(rg->hi_us) - 1e-9);
	for (int d = d0; d <= d1; d++) {
		double us = pow10i(d), x = lx(rg, us, b->x0, b->w);
		char lab[32];
		rp_fmt_dur(lab, sizeof lab, us);
		fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x, b->y0, x,
			b->y0 + b->h);
		fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x,
			b->y0 + b->h + 14, lab);
	}
}

/* decades along y (log latency), bottom = lo */
static double ly(const struct rp_range *rg, double us, const struct box *b)
{
	return b->y0 + b->h - (lx(rg, us, 0, b->h));
}

static void log_y_axis(FILE *f, const struct box *b, const struct rp_range *rg)
{
	int d0 = floor_int(lg(rg->lo_us) + 1e-9), d1 = ceil_int(lg(rg->hi_us) - 1e-9);
	for (int d = d0; d <= d1; d++) {
		double us = pow10i(d), y = ly(rg, us, b);
		char lab[32];
		rp_fmt_dur(lab, sizeof lab, us);
		fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", b->x0, y,
			b->x0 + b->w, y);
		fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", b->x0 - 4,
			y + 4, lab);
	}
}

static void legend(FILE *f, double x, double y, const char *color, const char *cls, const char *text)
{
	fprintf(f, "<rect class=\"key %s\" x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>", cls, x,
		y - 9, color);
	fprintf(f, "<text class=\"key\" x=\"%.1f\" y=\"%.1f\">", x + 14, y);
	rp_html_text(f, text);
	fputs("</text>\n", f);
}

static void no_data(FILE *f, const struct box *b, const char *what)
{
	fprintf(f, "<text class=\"nodata\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", b->x0 + b->w / 2,
		b->y0 + b->h / 2);
	rp_html_text(f, what);
	fputs("</text>\n", f);
}

/* ---- histogram and CDF per operation ------------------------------------------- */

#define HIST_PER_DECADE 10
#define HIST_MAX_BINS 240

static const char *const series_cls[3] = { "total", "server", "network" };
static const char *const series_color[3] = { "#1f77b4", "#ff7f0e", "#9467bd" };
static const char *const series_name[3] = { "total_us", "server_us", "network_us" };

static const struct gs_hist *series(const struct rp_op *op, int s)
{
	return s == 0 ? &op->total : s == 1 ? &op->server : &op->network;
}

static double bucket_us(const struct gs_hist *h, uint32_t i)
{
	uint64_t v = gs_hist_bucket_high(h, i);
	if ((int64_t)v > h->max)
		v = (uint64_t)h->max;
	return (double)v / 1000.0;
}

void rp_plot_hist(FILE *f, const struct rp_op *op, const struct rp_range *rg)
{
	uint64_t cnt[3][HIST_MAX_BINS]; /* 5.6 KiB on the stack */
	const int W = 540, H = 240;
	struct box b = { 56, 26, W - 70, H - 26 - 40 };
	int nb = (int)(lg(rg->hi_us / rg->lo_us) * HIST_PER_DECADE + 0.5);
	uint64_t ymax = 0;
	char title[RP_NAME_MAX + 64];

	if (nb < 1)
		nb = 1;
	if (nb > HIST_MAX_BINS)
		nb = HIST_MAX_BINS;
	memset(cnt, 0, sizeof cnt);
	for (int s = 0; s < 3; s++) {
		const struct gs_hist *h = series(op, s);
		if (!h->total)
			continue;
		for (uint32_t i = 0; i < h->n_buckets; i++) {
			double us;
			int k;
			if (!h->counts[i])
				continue;
			us = bucket_us(h, i);
			k = us <= rg->lo_us ? 0 : floor_int((lg(us) - lg(rg->lo_us)) * HIST_PER_DECADE);
			if (k >= nb)
				k = nb - 1;
			if (k < 0)
				k = 0;
			cnt[s][k] += h->counts[i];
			if (cnt[s][k] > ymax)
				ymax = cnt[s][k];
		}
	}
	snprintf(title, sizeof title, "%s: latency histogram", op->name);
	svg_open(f, "hist", W, H, title);
	svg_title(f, b.x0, 16, "histogram");
	frame(f, &b);
	log_x_axis(f, &b, rg);
	if (!ymax) {
		no_data(f, &b, "no answered calls");
		fputs("</svg>\n", f);
		return;
	}
	fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%llu</text>\n", b.x0 - 4,
		b.y0 + 8, (unsigned long long)ymax);
	fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">0</text>\n", b.x0 - 4,
		b.y0 + b.h);
	for (int s = 0; s < 3; s++) {
		for (int k = 0; k < nb; k++) {
			double x = b.x0 + b.w * k / nb, w = b.w / nb, hh;
			char lo[32], hi[32];
			if (!cnt[s][k])
				continue;
			hh = b.h * (double)cnt[s][k] / (double)ymax;
			if (hh < 1)
				hh = 1;
			{
				/* the bin's range, for the tooltip: lo * 10^(k/10) */
				double a = rg->lo_us * pow10i(k / HIST_PER_DECADE);
				for (int j = 0; j < k % HIST_PER_DECADE; j++)
					a *= 1.2589254117941673;
				rp_fmt_dur(lo, sizeof lo, a);
				rp_fmt_dur(hi, sizeof hi, a * 1.2589254117941673);
			}
			fprintf(f, "<rect class=\"bar %s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"%s>"
				"<title>%s %s..%s: %llu</title></rect>\n",
				series_cls[s], x + (s ? 1 : 0), b.y0 + b.h - hh, w - (s ? 2 : 0.5), hh, series_color[s],
				s ? " fill-opacity=\"0.55\"" : "", series_name[s], lo, hi,
				(unsigned long long)cnt[s][k]);
		}
	}
	for (int s = 0, x = (int)b.x0 + 110; s < 3; s++) {
		if (!series(op, s)->total)
			continue;
		legend(f, x, 16, series_color[s], series_cls[s], series_name[s]);
		x += 100;
	}
	fputs("</svg>\n", f);
}

void rp_plot_cdf(FILE *f, const struct rp_op *op, const struct rp_range *rg)
{
	const int W = 540, H = 240;
	struct box b = { 56, 26, W - 70, H - 26 - 40 };
	char title[RP_NAME_MAX + 64];
	static const double marks[] = { 0.5, 0.9, 0.99 };

	snprintf(title, sizeof title, "%s: latency CDF", op->name);
	svg_open(f, "cdf", W, H, title);
	svg_title(f, b.x0, 16, "CDF");
	frame(f, &b);
	log_x_axis(f, &b, rg);
	for (int m = 0; m < 3; m++) {
		double y = b.y0 + b.h * (1 - marks[m]);
		fprintf(f, "<line class=\"grid mark\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			"<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
			b.x0, y, b.x0 + b.w, y, b.x0 - 4, y + 4, marks[m]);
	}
	fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">0</text>\n", b.x0 - 4,
		b.y0 + b.h);
	if (!op->total.total) {
		no_data(f, &b, "no answered calls");
		fputs("</svg>\n", f);
		return;
	}
	for (int s = 0; s < 3; s++) {
		const struct gs_hist *h = series(op, s);
		uint64_t cum = 0;
		double last_x = -1, px = 0, py = 0;
		bool pending = false;
		if (!h->total)
			continue;
		fprintf(f, "<path class=\"cdf %s\" stroke=\"%s\" d=\"M%.1f %.1f", series_cls[s], series_color[s],
			lx(rg, (double)(h->min > 0 ? h->min : 0) / 1000.0, b.x0, b.w), b.y0 + b.h);
		for (uint32_t i = 0; i < h->n_buckets; i++) {
			double x, y;
			if (!h->counts[i])
				continue;
			cum += h->counts[i];
			x = lx(rg, bucket_us(h, i), b.x0, b.w);
			y = b.y0 + b.h * (1 - (double)cum / (double)h->total);
			/* one point per half pixel column: the last one in it */
			if (pending && x - last_x >= 0.5) {
				fprintf(f, " L%.1f %.1f", px, py);
				last_x = px;
			}
			px = x;
			py = y;
			pending = true;
		}
		if (pending)
			fprintf(f, " L%.1f %.1f", px, py);
		fprintf(f, "\"><title>%s</title></path>\n", series_name[s]);
	}
	for (int s = 0, x = (int)b.x0 + 110; s < 3; s++) {
		if (!series(op, s)->total)
			continue;
		legend(f, x, 16, series_color[s], series_cls[s], series_name[s]);
		x += 100;
	}
	fputs("</svg>\n", f);
}

/* ---- latency over time ------------------------------------------------------------ */

static double time_span_ns(const struct gs_report *r)
{
	double span = (double)r->bins_used * (double)r->width;
	if (r->t_last > r->origin && (double)(r->t_last - r->origin) > span)
		span = (double)(r->t_last - r->origin);
	return span > 0 ? span : (double)r->width;
}

static void time_x_axis(FILE *f, const struct box *b, double span_ns)
{
	/* 5..10 ticks at a 1-2-5 step */
	double span_s = span_ns / 1e9, step = pow10i(floor_int(lg(span_s / 5)));
	if (span_s / step > 20)
		step *= 5;
	else if (span_s / step > 10)
		step *= 2;
	for (int i = 0; i <= 25; i++) {
		double t = step * i, x;
		if (t > span_s * 1.0001)
			break;
		x = b->x0 + b->w * t / span_s;
		fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			"<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g s</text>\n",
			x, b->y0, x, b->y0 + b->h, x, b->y0 + b->h + 14, t);
	}
}

void rp_plot_time(FILE *f, const struct gs_report *r, const struct rp_range *rg)
{
	const int W = 1100, H = 340;
	struct box b = { 70, 30, W - 90 - 170, H - 30 - 40 };
	double span = time_span_ns(r);
	static const struct {
		double q;
		const char *cls, *name, *color;
	} lines[] = {
		{ 0.5, "p50", "p50 per bin", "#2ca02c" },
		{ 0.99, "p99", "p99 per bin", "#d62728" },
		{ 1.0, "max", "max per bin", "#555555" },
	};

	char attrs[160];
	time_attrs(r, span, attrs, sizeof attrs);
	svg_open_attrs(f, "time", W, H, "latency over time", attrs);
	svg_title(f, b.x0, 18, "total_us over time (request first byte): sampled calls and per-bin percentiles");
	frame(f, &b);
	time_x_axis(f, &b, span);
	log_y_axis(f, &b, rg);
	if (!r->all.answered) {
		no_data(f, &b, "no answered calls");
		fputs("</svg>\n", f);
		return;
	}
	fputs("<g class=\"points\">\n", f);
	for (uint32_t i = 0; i < r->nsmp; i++) {
		const struct rp_sample *s = &r->smp[i];
		double x = b.x0 + b.w * (double)(s->t - r->origin) / span;
		double y = ly(rg, (double)s->total / 1000.0, &b);
		if (x < b.x0)
			x = b.x0;
		fprintf(f, "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"1.8\" fill=\"%s\"/>\n", x, y,
			s->op == r->cfg.max_ops ? "#999999" : rp_color(s->op));
	}
	fputs("</g>\n", f);
	for (size_t l = 0; l < sizeof lines / sizeof *lines; l++) {
		bool pen = false;
		fprintf(f, "<path class=\"line %s\" stroke=\"%s\" d=\"", lines[l].cls, lines[l].color);
		for (uint32_t i = 0; i < r->bins_used; i++) {
			const struct rp_bin *bn = &r->bins[i];
			double x, y;
			if (!bn->answered) {
				pen = false;
				continue;
			}
			x = b.x0 + b.w * ((double)i + 0.5) * (double)r->width / span;
			y = ly(rg, (double)(lines[l].q >= 1 ? bn->max : rp_bin_quantile(bn, lines[l].q)) / 1000.0, &b);
			fprintf(f, "%s%.1f %.1f", pen ? " L" : " M", x, y);
			pen = true;
		}
		fprintf(f, "\"><title>%s</title></path>\n", lines[l].name);
	}
	/* legend: the lines, then the operations' colours */
	{
		/* a column right of the plot: the lines, then the operations' colours */
		double x = b.x0 + b.w + 12, y = b.y0 + 10;
		for (size_t l = 0; l < sizeof lines / sizeof *lines; l++, y += 15)
			legend(f, x, y, lines[l].color, lines[l].cls, lines[l].name);
		y += 8;
		for (uint32_t i = 0; i < r->nops && i < 14; i++, y += 15) {
			char name[24];
			snprintf(name, sizeof name, "%.22s", r->ops[i].name);
			legend(f, x, y, rp_color(i), "op", name);
		}
		if (r->nops > 10 || r->other_used)
			legend(f, x, y, "#999999", "op", "(colours repeat)");
	}
	fputs("</svg>\n", f);
}

void rp_plot_rate(FILE *f, const struct gs_report *r)
{
	const int W = 1100, H = 170;
	struct box b = { 70, 26, W - 90 - 170, H - 26 - 36 };
	double span = time_span_ns(r), ymax = 0, secs = (double)r->width / 1e9;
	char lab[64], attrs[160];

	time_attrs(r, span, attrs, sizeof attrs);
	svg_open_attrs(f, "rate", W, H, "calls per second over time", attrs);
	snprintf(lab, sizeof lab, "calls per second (bins of %g s; errors in red)", secs);
	svg_title(f, b.x0, 16, lab);
	frame(f, &b);
	time_x_axis(f, &b, span);
	for (uint32_t i = 0; i < r->bins_used; i++)
		if (r->bins[i].calls / secs > ymax)
			ymax = r->bins[i].calls / secs;
	if (ymax <= 0) {
		no_data(f, &b, "no calls");
		fputs("</svg>\n", f);
		return;
	}
	fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.4g</text>\n", b.x0 - 4,
		b.y0 + 8, ymax);
	for (uint32_t i = 0; i < r->bins_used; i++) {
		const struct rp_bin *bn = &r->bins[i];
		double x = b.x0 + b.w * (double)i * (double)r->width / span;
		double w = b.w * (double)r->width / span;
		double h = b.h * bn->calls / secs / ymax, he = b.h * bn->errors / secs / ymax;
		if (!bn->calls)
			continue;
		if (w > 1.5)
			w -= 0.5;
		fprintf(f, "<rect class=\"bar calls\" data-bin=\"%u\" data-calls=\"%u\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"#1f77b4\">"
			"<title>%u %s, %u %s</title></rect>\n",
			i, bn->calls, x, b.y0 + b.h - h, w, h, bn->calls, gs_plural(bn->calls, "call", "calls"), bn->errors,
			gs_plural(bn->errors, "error", "errors"));
		if (bn->errors)
			fprintf(f, "<rect class=\"bar errors\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"#d62728\"/>\n",
				x, b.y0 + b.h - he, w, he);
	}
	fputs("</svg>\n", f);
}

/* ---- the slowest calls, one stacked bar each ----------------------------------------- */

enum { SEG_REQ, SEG_NET, SEG_HOST, SEG_SHOST, SEG_PROC, SEG_CLIENT, SEG_REP, SEG_XFER, NSEG };
static const char *const seg_cls[NSEG] = { "reqx", "net", "far", "host", "proc", "client", "repx", "xfer" };
static const char *const seg_color[NSEG] = { "#6baed6", "#9467bd", "#ff7f0e", "#fd8d3c", "#d62728",
					     "#2ca02c", "#c6dbef", "#bdbdbd" };
static const char *const seg_name[NSEG] = {
	"request bytes in transit (request first -> last byte)",
	"network (merge: client total - server total)",
	"far side held it (server_us)",
	"server's host held it (server side's server_us)",
	"server process (ORB + servant)",
	"client kernel",
	"reply bytes in transit (reply first -> last byte)",
	"request and reply bytes passing the server's host",
};

static int64_t nn(int64_t v)
{
	return v > 0 ? v : 0;
}

/* The parts of a slow call's total, in order along the bar. */
static void segments(const struct rp_slow *s, int64_t seg[NSEG])
{
	const struct gs_report_split *sp = &s->split;
	bool net = sp->network_ns != GS_REPORT_UNKNOWN, host = sp->server_host_ns != GS_REPORT_UNKNOWN;
	bool proc = sp->server_proc_ns != GS_REPORT_UNKNOWN, cli = sp->client_proc_ns != GS_REPORT_UNKNOWN;
	int held = host ? SEG_SHOST : SEG_HOST;
	int64_t sum = 0;
	memset(seg, 0, NSEG * sizeof *seg);
	if (net && host) {
		/* two vantage points: total = network + the server side's total, and
		 * that is its transfers + the time its host held the call */
		seg[SEG_NET] = nn(sp->network_ns);
		seg[held] = nn(sp->server_host_ns);
	} else {
		seg[SEG_REQ] = nn(s->req_xfer);
		seg[held] = nn(host ? sp->server_host_ns : s->hold);
		seg[SEG_REP] = nn(s->rep_xfer);
	}
	if (proc) {
		seg[SEG_PROC] = nn(sp->server_proc_ns) < seg[held] ? nn(sp->server_proc_ns) : seg[held];
		seg[held] -= seg[SEG_PROC];
	}
	if (cli)
		seg[SEG_CLIENT] = nn(sp->client_proc_ns);
	for (int i = 0; i < NSEG; i++)
		sum += seg[i];
	/* what no vantage point explains goes where it must be: bytes passing
	 * the server's host (two taps), else what the far side held */
	if (sum < s->total)
		seg[net && host ? SEG_XFER : held] += s->total - sum;
}

void rp_plot_where(FILE *f, const struct rp_op *const *ops, uint32_t n)
{
	static const char *const cls[6] = { "oncpu", "runq", "blocked", "orbin", "servant", "orbout" };
	static const char *const color[6] = { "#2ca02c", "#ff7f0e", "#7f7f7f", "#9467bd", "#1f77b4", "#c5b0d5" };
	static const char *const name[6] = { "on CPU", "runnable, in the run queue", "blocked (off CPU)",
					     "ORB in (t4 -> upcall start)", "servant (upcall)",
					     "ORB out (upcall end -> t5)" };
	const int W = 1100, row = 16;
	const double bx = 330, bw = W - bx - 110;
	uint32_t rows = 0, groups = 0;
	double max = 0, y;
	bool used[6] = { false };
	for (uint32_t i = 0; i < n; i++) {
		const struct rp_op *o = ops[i];
		double a = 0, b = 0;
		for (int k = 0; k < 3; k++) {
			a += o->n_sched ? (double)o->sched[k] / (double)o->n_sched : 0;
			b += o->n_orb ? (double)o->orb[k] / (double)o->n_orb : 0;
		}
		rows += (o->n_sched != 0) + (o->n_orb != 0);
		groups += o->n_sched || o->n_orb;
		if (a > max)
			max = a;
		if (b > max)
			max = b;
	}
	if (!rows)
		return;
	if (max <= 0)
		max = 1;
	svg_open(f, "where", W, 34 + (int)rows * (row + 4) + 8 * (int)groups + 14 + 2 * 16 + 8,
		 "where the server's time went, per operation");
	svg_title(f, 10, 18, "mean server_process_us per operation: on-CPU / run queue / blocked, ORB in / servant / ORB out");
	y = 34;
	for (uint32_t i = 0; i < n; i++) {
		const struct rp_op *o = ops[i];
		if (!o->n_sched && !o->n_orb)
			continue;
		for (int part = 0; part < 2; part++) {
			uint64_t cnt = part ? o->n_orb : o->n_sched;
			const int64_t *sum = part ? o->orb : o->sched;
			char label[RP_NAME_MAX + 48];
			double x = bx;
			if (!cnt)
				continue;
			snprintf(label, sizeof label, "%s (%s, %llu)", o->name, part ? "orb" : "sched", (unsigned long long)cnt);
			fprintf(f, "<text class=\"rowlabel\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", bx - 6, y + 12);
			rp_html_text(f, label);
			fputs("</text>\n<g class=\"op\">\n", f);
			for (int k = 0; k < 3; k++) {
				int c = part * 3 + k;
				int64_t mean = sum[k] / (int64_t)cnt;
				double w = bw * (double)mean / max;
				char d[32];
				if (mean <= 0)
					continue;
				used[c] = true;
				rp_fmt_us(d, sizeof d, mean);
				fprintf(f, "<rect class=\"seg seg-%s\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
					"fill=\"%s\"><title>", cls[c], x, y + 1, w, row - 2, color[c]);
				rp_html_text(f, name[c]);
				fprintf(f, ": %s us</title></rect>\n", d);
				x += w;
			}
			fputs("</g>\n", f);
			y += row + 4;
		}
		y += 8;
	}
	y += 14;
	for (int k = 0, col = 0; k < 6; k++) {
		if (!used[k])
			continue;
		legend(f, 10 + (col % 3) * 360, y + (col / 3) * 16, color[k], cls[k], name[k]);
		col++;
	}
	fputs("</svg>\n", f);
}

void rp_plot_slow(FILE *f, const struct gs_report *r, const struct rp_slow *const *order, uint32_t n)
{
	const int W = 1100, row = 20;
	const double bx = 330, bw = W - bx - 110;
	int H = 40 + (int)n * row + 30 + 16 * 4;
	double max = 0;
	bool used[NSEG] = { false };

	svg_open(f, "slow", W, H, "the slowest calls and where their time went");
	svg_title(f, 10, 18, "slowest calls: total_us split along the bar");
	if (!n) {
		struct box b = { 10, 30, W - 20, 40 };
		no_data(f, &b, "no answered calls");
		fputs("</svg>\n", f);
		return;
	}
	max = (double)order[0]->total;
	if (max <= 0)
		max = 1;
	for (uint32_t i = 0; i < n; i++) {
		const struct rp_slow *s = order[i];
		int64_t seg[NSEG];
		double y = 34 + (double)i * row, x = bx;
		char tot[32], label[RP_NAME_MAX + 48];
		const char *name = s->op < r->cfg.max_ops ? r->ops[s->op].name : s->op == r->cfg.max_ops ? "(other)" : "?";
		segments(s, seg);
		snprintf(label, sizeof label, "%u. %s #%u", i + 1, name, s->request_id);
		fprintf(f, "<text class=\"rowlabel\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", bx - 6, y + 13);
		rp_html_text(f, label);
		fputs("</text>\n", f);
		fprintf(f, "<g class=\"call\">\n");
		for (int k = 0; k < NSEG; k++) {
			double w = bw * (double)seg[k] / max;
			char d[32];
			if (seg[k] <= 0)
				continue;
			used[k] = true;
			rp_fmt_us(d, sizeof d, seg[k]);
			fprintf(f, "<rect class=\"seg seg-%s\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\">"
				"<title>", seg_cls[k], x, y + 2, w, row - 4, seg_color[k]);
			rp_html_text(f, seg_name[k]);
			fprintf(f, ": %s us</title></rect>\n", d);
			x += w;
		}
		fputs("</g>\n", f);
		rp_fmt_us(tot, sizeof tot, s->total);
		fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\">%s us</text>\n", x + 6, y + 13, tot);
	}
	{
		double y = 34 + (double)n * row + 22, x = 10;
		int col = 0;
		for (int k = 0; k < NSEG; k++) {
			if (!used[k])
				continue;
			legend(f, x + (col % 2) * 540, y + (col / 2) * 16, seg_color[k], seg_cls[k], seg_name[k]);
			col++;
		}
	}
	fputs("</svg>\n", f);
}
