# SPDX-License-Identifier: BSD-2-Clause
"""offline_svg.py: a log-log line plot as a standalone SVG, with nothing but the
standard library (no matplotlib on the machines that run `make bench`)."""
import math
from xml.sax.saxutils import escape

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#7f7f7f"]


def _decades(lo, hi):
    return list(range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1))


def _label(v, unit):
    if unit == "calls":
        for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
            if v >= div:
                return "%g%s" % (v / div, suf)
        return "%g" % v
    return "%g %s" % (v, unit) if unit else "%g" % v


def loglog(series, title, xlabel, ylabel, xunit="calls", yunit="s", guides=(), width=760,
           height=460, legend="tl"):
    """series: [(label, [(x, y), ...], dashed)]; guides: [(label, slope)] reference lines
    y ~ x^slope through the first point of the first series (what linear and quadratic
    look like on these axes); legend: tl, tr, bl or br (a corner the data leaves free)."""
    pts = [p for _, s, _ in series for p in s if p[0] > 0 and p[1] > 0]
    if not pts:
        return "<svg xmlns='http://www.w3.org/2000/svg'/>"
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y0, y1 = min(p[1] for p in pts), max(p[1] for p in pts)
    dx, dy = _decades(x0 / 1.5, x1 * 1.5), _decades(y0 / 2, y1 * 2)
    lx0, lx1, ly0, ly1 = dx[0], dx[-1], dy[0], dy[-1]
    ml, mr, mt, mb = 78, 20, 40, 56
    pw, ph = width - ml - mr, height - mt - mb

    def X(x):
        return ml + (math.log10(x) - lx0) / (lx1 - lx0) * pw

    def Y(y):
        return mt + ph - (math.log10(y) - ly0) / (ly1 - ly0) * ph

    o = ["<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
         "font-family='sans-serif' font-size='12'>" % (width, height),
         "<rect width='100%' height='100%' fill='white'/>",
         "<text x='%d' y='22' font-size='15' font-weight='bold'>%s</text>" % (ml, escape(title))]
    for d in dx:
        x = X(10 ** d)
        o.append("<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' stroke='#ddd'/>" % (x, mt, x, mt + ph))
        o.append("<text x='%.1f' y='%d' text-anchor='middle'>%s</text>" % (
            x, mt + ph + 18, _label(10 ** d, xunit)))
    for d in dy:
        y = Y(10 ** d)
        o.append("<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#ddd'/>" % (ml, y, ml + pw, y))
        o.append("<text x='%d' y='%.1f' text-anchor='end'>%s</text>" % (
            ml - 6, y + 4, _label(10 ** d, yunit)))
    o.append("<rect x='%d' y='%d' width='%d' height='%d' fill='none' stroke='#333'/>" % (ml, mt, pw, ph))
    o.append("<text x='%.1f' y='%d' text-anchor='middle'>%s</text>" % (ml + pw / 2, height - 12,
                                                                       escape(xlabel)))
    o.append("<text transform='translate(16,%.1f) rotate(-90)' text-anchor='middle'>%s</text>" % (
        mt + ph / 2, escape(ylabel)))
    o.append("<clipPath id='plot'><rect x='%d' y='%d' width='%d' height='%d'/></clipPath>" % (
        ml, mt, pw, ph))
    anchor = series[0][1][0] if series and series[0][1] else None
    for label, slope in guides:
        if not anchor:
            break
        ax, ay = anchor
        xa, xb = 10 ** lx0, 10 ** lx1
        ya, yb = ay * (xa / ax) ** slope, ay * (xb / ax) ** slope
        o.append("<line clip-path='url(#plot)' x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
                 "stroke='#999' stroke-dasharray='2,4'/>" % (X(xa), Y(ya), X(xb), Y(yb)))
        # label where the guide leaves the plot on the right or the top
        lxr = min(xb, ax * (10 ** ly1 / ay) ** (1 / slope)) if slope > 0 else xb
        o.append("<text x='%.1f' y='%.1f' fill='#777' text-anchor='end'>%s</text>" % (
            X(lxr) - 4, Y(ay * (lxr / ax) ** slope) + 14, escape(label)))
    for i, (label, s, dashed) in enumerate(series):
        c = COLORS[i % len(COLORS)]
        s = [p for p in s if p[0] > 0 and p[1] > 0]
        if not s:
            continue
        path = " ".join("%s%.1f,%.1f" % ("M" if j == 0 else "L", X(x), Y(y)) for j, (x, y) in enumerate(s))
        o.append("<path d='%s' fill='none' stroke='%s' stroke-width='2'%s/>" % (
            path, c, " stroke-dasharray='6,4'" if dashed else ""))
        for x, y in s:
            o.append("<circle cx='%.1f' cy='%.1f' r='3.5' fill='%s'/>" % (X(x), Y(y), c))
        ly = (mt + 16 + 18 * i) if legend[0] == "t" else (mt + ph - 10 - 18 * (len(series) - 1 - i))
        lx = ml + 12 if legend[1] == "l" else ml + pw - 270
        o.append("<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='%s' stroke-width='2'%s/>" % (
            lx, ly - 4, lx + 24, ly - 4, c, " stroke-dasharray='6,4'" if dashed else ""))
        o.append("<text x='%d' y='%d'>%s</text>" % (lx + 30, ly, escape(label)))
    o.append("</svg>")
    return "\n".join(o) + "\n"
