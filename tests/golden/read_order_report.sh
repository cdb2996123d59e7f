#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Run by `make check-golden`: what people read, on the shipped capture.
#  - The HTML report's time axis covers every call whatever the order the captures are
#    given in: tests/data/omniorb_demo.pcap is cut in two at a time between connections
#    (earlier.pcap, later.pcap) and read as `read later.pcap earlier.pcap --report`; the
#    time and rate plots' axis (their data-origin-ns, data-bin-ns, data-bins, data-span-ns)
#    must hold every call's t_request_first (from the pairs CSV, by column name), each
#    rate bar (data-bin, data-calls) must hold exactly the calls that began in its bin,
#    no call may be "before the first bin", and the bins are those of the files in order.
#  - Counts read as English: no "1 calls", "1 errors", "1 connections"... in the report,
#    the summary or the tail, on a capture cut to one call.
#  - `--pairs --format text` starts with its header line, the columns named as in
#    docs/output.md, and has one line per call.
set -u
cd "$(dirname "$0")/../.." || exit 2
GS=${GIOPSCOPE:-build/giopscope}
CAP=tests/data/omniorb_demo.pcap
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "PASS $*"; pass=$((pass + 1)); }
ko() { echo "FAIL $*"; fail=$((fail + 1)); }

# split_pcap IN T OUT_BEFORE OUT_AFTER: a classic pcap cut at time T (seconds, decimal);
# keep_first IN N OUT: its first N records
python3 - "$CAP" "$tmp" <<'EOF' || { ko "splitting $CAP"; exit 1; }
import struct, sys
src, out = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
magic = data[:4]
end = {b"\xd4\xc3\xb2\xa1": "<", b"\xa1\xb2\xc3\xd4": ">", b"\x4d\x3c\xb2\xa1": "<", b"\xa1\xb2\x3c\x4d": ">"}[magic]
nano = magic in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
recs, off = [], 24
while off + 16 <= len(data):
    sec, frac, incl, orig = struct.unpack(end + "IIII", data[off:off + 16])
    recs.append((sec * 10**9 + (frac if nano else frac * 1000), data[off:off + 16 + incl]))
    off += 16 + incl
# the widest gap between two records: between connections in this capture
gaps = [(recs[i + 1][0] - recs[i][0], i + 1) for i in range(len(recs) - 1)]
cut = max(gaps)[1]
with open(out + "/earlier.pcap", "wb") as f:
    f.write(data[:24] + b"".join(r[1] for r in recs[:cut]))
with open(out + "/later.pcap", "wb") as f:
    f.write(data[:24] + b"".join(r[1] for r in recs[cut:]))
EOF

"$GS" read --pairs --format csv "$tmp/later.pcap" "$tmp/earlier.pcap" >"$tmp/pairs.csv" 2>/dev/null
"$GS" read "$tmp/later.pcap" "$tmp/earlier.pcap" --report "$tmp/rev.html" >/dev/null 2>&1
"$GS" read "$tmp/earlier.pcap" "$tmp/later.pcap" --report "$tmp/fwd.html" >/dev/null 2>&1
if python3 - "$tmp/pairs.csv" "$tmp/rev.html" "$tmp/fwd.html" <<'EOF'; then ok "report time axis, captures out of order"; else ko "report time axis, captures out of order"; fi
import csv, re, sys
def ns(s):
    a, b = s.split(".")
    return int(a) * 10**9 + int(b.ljust(9, "0"))
rows = list(csv.DictReader(open(sys.argv[1])))
ts = [ns(r["t_request_first"]) for r in rows]
bad = []
def axis(html, cls):
    m = re.search(r'<svg class="plot %s"[^>]*>' % cls, html)
    if not m:
        return None
    a = dict(re.findall(r'data-([a-z-]+)="(-?\d+)"', m.group(0)))
    return {k: int(v) for k, v in a.items()}
def bars(html):
    rate = html[html.index('<svg class="plot rate"'):]
    rate = rate[:rate.index("</svg>")]
    return {int(i): int(n) for i, n in re.findall(r'data-bin="(\d+)" data-calls="(\d+)"', rate)}
rev = open(sys.argv[2]).read()
fwd = open(sys.argv[3]).read()
if len(ts) < 100:
    bad.append("only %d calls in the pairs CSV" % len(ts))
for cls in ("time", "rate"):
    a = axis(rev, cls)
    if not a or not all(k in a for k in ("origin-ns", "bin-ns", "bins", "span-ns")):
        bad.append("%s plot: no axis attributes" % cls)
        continue
    o, w, n, span = a["origin-ns"], a["bin-ns"], a["bins"], a["span-ns"]
    if o > min(ts):
        bad.append("%s plot starts at %d, after the first call %d" % (cls, o, min(ts)))
    if o + span < max(ts) or o + n * w <= max(ts):
        bad.append("%s plot ends before the last call" % cls)
a = axis(rev, "rate")
if a:
    want = {}
    for t in ts:
        i = (t - a["origin-ns"]) // a["bin-ns"]
        want[i] = want.get(i, 0) + 1
    got = bars(rev)
    if got != want:
        bad.append("rate bars %s, want %s" % (sorted(got.items())[:8], sorted(want.items())[:8]))
    if sum(got.values()) != len(ts):
        bad.append("rate bars hold %d calls, the CSV %d" % (sum(got.values()), len(ts)))
    if axis(fwd, "rate") != a or bars(fwd) != got:
        bad.append("the files in time order give other bins: %s vs %s" % (axis(fwd, "rate"), a))
if "before the first bin" in rev:
    bad.append("calls drawn before the first bin")
for b in bad:
    print("   ", b)
sys.exit(1 if bad else 0)
EOF

# plurals: the capture cut to its first call (its connection's first frames)
one=$tmp/one.pcap
python3 - "$CAP" "$one" <<'EOF'
import struct, sys
data = open(sys.argv[1], "rb").read()
off, keep = 24, 0
# the handshake and the first request/reply: 6 records of the demo's first connection
for _ in range(6):
    sec, frac, incl, orig = struct.unpack("<IIII", data[off:off + 16])
    off += 16 + incl
open(sys.argv[2], "wb").write(data[:off])
EOF
n1=$("$GS" read --pairs --format csv "$one" 2>/dev/null | tail -n +2 | wc -l)
"$GS" read "$one" --tail 5 --report "$tmp/one.html" >"$tmp/one.txt" 2>&1
if [ "$n1" -ne 1 ]; then
	ko "plurals: the cut capture has $n1 calls, want 1"
elif grep -Eo '(^|[^0-9.])1 (calls|errors|connections|segments|windows|notes)\b' "$tmp/one.txt" "$tmp/one.html" >"$tmp/pl"; then
	ko "plurals: $(sort -u "$tmp/pl" | tr '\n' ';')"
elif ! grep -q '>1 call (1 answered, ' "$tmp/one.html" || ! grep -q 'slowest 1 call$' "$tmp/one.txt" ||
	! grep -q 'in 1 connection$' "$tmp/one.txt"; then
	ko "plurals: '1 call' / 'slowest 1 call' / 'in 1 connection' not found"
else
	ok "plurals on a one-call capture"
fi

# --pairs --format text: the header, then one line per call
"$GS" read --pairs --format text "$CAP" >"$tmp/text.txt" 2>/dev/null
"$GS" read --pairs --format csv "$CAP" >"$tmp/all.csv" 2>/dev/null
hdr=$(head -n 1 "$tmp/text.txt" | tr -s ' ')
rows_text=$(($(wc -l <"$tmp/text.txt") - 1))
rows_csv=$(($(wc -l <"$tmp/all.csv") - 1))
if [ "$hdr" != "client server request_id kind operation status total_us server_us" ]; then
	ko "text header: '$hdr'"
elif [ "$rows_text" -ne "$rows_csv" ]; then
	ko "text rows: $rows_text, CSV rows $rows_csv"
else
	ok "--pairs --format text: header and $rows_text rows"
fi

echo "read_order_report: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
