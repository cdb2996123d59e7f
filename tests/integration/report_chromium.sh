#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/report_chromium.sh -- the HTML report in a real browser (Debian's chromium,
# headless): it renders, its plots are there and not empty, and it needs nothing from outside.
#
# The report is made from the shipped omniORB capture: with `giopscope read --report` when that
# option exists, else with `giopscope merge` of the capture with itself (the same report code,
# with the merge's split bars). Checks:
#   self_contained  no http:// or https:// anywhere, no <script>, <link>, src= or url(
#   dom             chromium --dump-dom: the plots (per operation histogram and CDF, latency over
#                   time, calls per second, slowest calls) exist and hold drawn elements (bars,
#                   CDF paths with points, scatter points, stacked segments)
#   screenshot      chromium --screenshot at 1200x2000: a PNG (decoded here with zlib) that is
#                   not blank: enough non-white pixels, and coloured ones (the plots)
#   offline         chromium with every host name resolving to nothing and proxying to a dead
#                   port still gives the same DOM (nothing was fetched to build it)
#   waterfall       the report of a capture at a middle tier (tests/data/nested): chromium's DOM
#                   has a waterfall per slow relay call, its nested call's bar inside the call's
#                   server hold, and downstream shading there
# Prints PASS/FAIL per check, then "N passed, N failed"; exit 0, 1 on failure, 77 when chromium
# is missing. Chromium runs in its own process group under a bounded wait; that group is killed
# by its id if it overstays.
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 2

BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
CAPTURE=${CAPTURE:-tests/data/omniorb_demo.pcap}
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}

. tests/lib/common.sh
[ -n "$CHROMIUM" ] && [ -x "$CHROMIUM" ] || skip "chromium not installed (scripts/install-deps.sh check)"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
[ -x "$GIOPSCOPE" ] || skip "$GIOPSCOPE not built"
[ -f "$CAPTURE" ] || skip "$CAPTURE missing"

WORK=$(mktemp -d /tmp/gs-report-chromium.XXXXXX) || exit 2
CHROME_PID=""
cleanup() {
    if [ -n "$CHROME_PID" ] && kill -0 "$CHROME_PID" 2>/dev/null; then
        kill -s KILL -- "-$CHROME_PID" 2>/dev/null
        wait "$CHROME_PID" 2>/dev/null
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PASSED=0
FAILED=0
pass() { echo "PASS $1${2:+: $2}"; PASSED=$((PASSED + 1)); }
fail() { echo "FAIL $1: $2"; FAILED=$((FAILED + 1)); }

# chrome OUT ARGS...: headless chromium in a fresh profile, its own process group, at most 90 s
chrome() {
    local out=$1 profile
    shift
    profile=$(mktemp -d "$WORK/profile.XXXXXX")
    setsid "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --disable-default-apps --disable-extensions --user-data-dir="$profile" "$@" \
        >"$out" 2>"$out.err" </dev/null &
    CHROME_PID=$!
    for _ in $(seq 1 900); do
        kill -0 "$CHROME_PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$CHROME_PID" 2>/dev/null; then
        kill -s KILL -- "-$CHROME_PID" 2>/dev/null
        wait "$CHROME_PID" 2>/dev/null
        CHROME_PID=""
        return 124
    fi
    wait "$CHROME_PID"
    local rc=$?
    CHROME_PID=""
    return $rc
}

# ---------------------------------------------------------------- the report
REPORT=$WORK/report.html
if "$GIOPSCOPE" read --help 2>/dev/null | grep -q -- "--report"; then
    how="giopscope read --report"
    "$GIOPSCOPE" read -q "$CAPTURE" --report "$REPORT" >/dev/null 2>"$WORK/gs.err"
else
    how="giopscope merge (the capture with itself) --report"
    "$GIOPSCOPE" merge -q "$CAPTURE" "$CAPTURE" --report "$REPORT" >/dev/null 2>"$WORK/gs.err"
fi
rc=$?
if [ "$rc" != 0 ] || [ ! -s "$REPORT" ]; then
    fail report "$how: exit $rc: $(head -2 "$WORK/gs.err")"
    echo "$PASSED passed, $FAILED failed"
    exit 1
fi
echo "# report by $how: $(wc -c <"$REPORT") bytes"

if grep -Eiq 'https?://|<script|<link|src=|url\(' "$REPORT"; then
    fail self_contained "$(grep -Eio '.{20}(https?://|<script|<link|src=|url\().{20}' "$REPORT" | head -3)"
else
    pass self_contained "no URL, script, link, src= or url( in $(wc -c <"$REPORT") bytes"
fi

# ---------------------------------------------------------------- the DOM as chromium built it
dom_check() { # dom_check DOMFILE: counts of drawn elements
    python3 - "$1" <<'PY'
import re, sys
d = open(sys.argv[1], errors="replace").read()
def n(pat):
    return len(re.findall(pat, d))
plots = {k: n(r'<svg class="plot %s"' % k) for k in ("hist", "cdf", "time", "rate", "slow")}
bars = n(r'<rect class="bar total"')
pts = n(r'<circle class="pt"')
segs = n(r'<rect class="seg seg-')
cdfs = [len(m) for m in re.findall(r'<path class="cdf total"[^>]* d="([^"]*)"', d)]
rates = n(r'<rect class="bar calls"')
ok = (plots["hist"] >= 2 and plots["cdf"] == plots["hist"] and plots["time"] == 1 and plots["rate"] == 1
      and plots["slow"] == 1 and bars >= 5 and pts >= 50 and segs >= 10 and cdfs and min(cdfs) > 20 and rates >= 3)
print("plots %s; histogram bars %d, CDF paths %d (shortest %d chars), scatter points %d, rate bars %d, "
      "slow-call segments %d" % (plots, bars, len(cdfs), min(cdfs) if cdfs else 0, pts, rates, segs))
sys.exit(0 if ok else 1)
PY
}
chrome "$WORK/dom.html" --dump-dom "file://$REPORT"
rc=$?
if [ "$rc" != 0 ]; then
    fail dom "chromium --dump-dom exit $rc: $(grep -v 'dbus\|Fontconfig' "$WORK/dom.html.err" | head -2)"
elif out=$(dom_check "$WORK/dom.html"); then
    pass dom "$out"
else
    fail dom "$out"
fi

# ---------------------------------------------------------------- a screenshot, not blank
chrome "$WORK/shot.log" --screenshot="$WORK/shot.png" --window-size=1200,2000 --hide-scrollbars "file://$REPORT"
rc=$?
if [ "$rc" != 0 ] || [ ! -s "$WORK/shot.png" ]; then
    fail screenshot "chromium --screenshot exit $rc, $(ls -l "$WORK/shot.png" 2>&1)"
else
    if out=$(python3 - "$WORK/shot.png" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, w = 8, b"", 0
while pos < len(data):
    ln, typ = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + ln]
    pos += 12 + ln
    if typ == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        assert depth == 8 and ctype in (2, 6), "unexpected PNG format %d/%d" % (depth, ctype)
        bpp = 3 if ctype == 2 else 4
    elif typ == b"IDAT":
        idat += body
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
nonwhite = coloured = 0
off = 0
rows = min(h, 1200)   # the top of the page: tables, latency over time, the first plots
for y in range(rows):
    f = raw[off]
    line = bytearray(raw[off + 1:off + 1 + stride])
    off += 1 + stride
    # undo the PNG filters (None, Sub, Up, Average, Paeth)
    if f == 2:
        line = bytearray((p + q) & 255 for p, q in zip(line, prev))
    elif f == 1:
        for i in range(bpp, stride):
            line[i] = (line[i] + line[i - bpp]) & 255
    elif f in (3, 4):
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            if f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            else:
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    prev = line
    for x in range(0, stride, bpp * 2):   # every other pixel is plenty
        r, g, bl = line[x], line[x + 1], line[x + 2]
        if min(r, g, bl) < 235:
            nonwhite += 1
        if max(r, g, bl) - min(r, g, bl) > 60:
            coloured += 1
total = w * rows // 2
print("%dx%d (top %d rows): %.1f%% not white, %.2f%% coloured" % (w, h, rows, 100.0 * nonwhite / total, 100.0 * coloured / total))
sys.exit(0 if nonwhite > total * 0.02 and coloured > total * 0.002 else 1)
PY
    ); then
        pass screenshot "$out"
    else
        fail screenshot "$out"
    fi
fi

# ---------------------------------------------------------------- offline: nothing to fetch
chrome "$WORK/dom_offline.html" --dump-dom --host-resolver-rules="MAP * ~NOTFOUND" \
    --proxy-server="127.0.0.1:9" "file://$REPORT"
rc=$?
if [ "$rc" = 0 ] && out=$(dom_check "$WORK/dom_offline.html") && cmp -s "$WORK/dom.html" "$WORK/dom_offline.html"; then
    pass offline "the same DOM with no name resolution and a dead proxy"
else
    fail offline "exit $rc; $(cmp "$WORK/dom.html" "$WORK/dom_offline.html" 2>&1 | head -1)"
fi

# ---------------------------------------------------------------- nested calls' waterfalls
# A capture at the middle tier of a three-tier chain (tests/data/nested): the report's slow
# relay calls each get a waterfall; in chromium's DOM each has its call's bar and, under it,
# its nested call's bar within the call's server hold, and downstream shading in that hold.
NESTED=${NESTED:-tests/data/nested/three_tier.pcap}
if [ -f "$NESTED" ] && "$GIOPSCOPE" read -q "$NESTED" --report "$WORK/nested.html" >/dev/null 2>"$WORK/nested.err"; then
    chrome "$WORK/nested_dom.html" --dump-dom "file://$WORK/nested.html"
    if out=$(python3 - "$WORK/nested_dom.html" <<'PY'
import re, sys
d = open(sys.argv[1], errors="replace").read()
wfs = re.findall(r'<svg class="plot waterfall".*?</svg>', d, re.S)
bad = []
def bars(w, cls):
    return [(float(x), float(x) + float(wd), float(y)) for x, y, wd in
            re.findall(r'<rect class="wf %s" x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)"' % cls, w)]
for i, w in enumerate(wfs):
    srv, down = bars(w, "wf-srv"), bars(w, "wf-down")
    rows = sorted({y for _, _, y in srv})
    if len(rows) < 2 or not down:
        bad.append("waterfall %d: %d rows, %d downstream stretches" % (i + 1, len(rows), len(down)))
        continue
    top = [b for b in srv if b[2] == rows[0]][0]
    kids = [b for b in srv if b[2] != rows[0]]
    # every nested call's hold inside the top call's hold, and shaded downstream there
    if any(k[0] < top[0] - 0.01 or k[1] > top[1] + 0.01 for k in kids):
        bad.append("waterfall %d: a nested call's bar outside its parent's hold" % (i + 1))
    if not any(dn[2] == rows[0] and dn[0] >= top[0] - 0.01 and dn[1] <= top[1] + 0.01 for dn in down):
        bad.append("waterfall %d: no downstream shading in the top call's hold" % (i + 1))
if len(wfs) < 5:
    bad.append("%d waterfalls (the 5 slow relay calls at least)" % len(wfs))
print("; ".join(bad) if bad else "%d waterfalls, nested calls inside their parents' holds, shaded" % len(wfs))
sys.exit(1 if bad else 0)
PY
    ); then
        pass waterfall "$out"
    else
        fail waterfall "$out"
    fi
else
    fail waterfall "no report of $NESTED: $(head -2 "$WORK/nested.err" 2>/dev/null)"
fi

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
