#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""tshark_pairs.py: the expected GIOP pairs of a capture, according to Wireshark.

usage: tshark_pairs.py CAPTURE [-o OUT.csv] [--ports 2809,...] [--tshark PATH]

Writes the rows giopscope's `read CAPTURE --pairs --format csv` must produce
(the pairs CSV of docs/output.md: one row per GIOP Request/LocateRequest), but
derived without any giopscope code: every GIOP fact (version, message type,
request id, operation, response flags, reply/locate status, message size) comes
from Wireshark's GIOP dissector; this script only does the bookkeeping.

tshark is run twice over the capture (concurrently):

  segments  `-T fields`: for every TCP segment its connection (tcp.stream),
            direction, raw sequence number, payload length and time.  This
            gives, per direction, the time the capture FIRST saw each byte,
            and the segments that carried only bytes seen before (the
            retransmissions).
  messages  `-Y giop -T json`: every GIOP message that the dissector found.
            `-T fields` cannot be used here: it aggregates each field over a
            whole frame, and a frame may carry several GIOP messages (a Reply
            has no operation, a 1.0 header no fragment flag, ...), so values
            cannot be attributed to their message.  The JSON output keeps the
            tree in order (duplicate keys: "giop" header, then the message
            body), which we parse with an order-preserving decoder one packet
            at a time.

tshark settings (all explicit, whatever the user's profile says):
  * tcp.desegment_tcp_streams, giop.desegment_giop_messages: TRUE, so every
    GIOP message is seen once, whole, in the frame that completed it.
  * giop.reassemble: FALSE.  With it TRUE, tshark 4.0 keeps GIOP 1.1 fragment
    state keyed on a "request id" that it reads out of the 1.1 Fragment body
    (1.1 Fragments have none) and later messages with that id, even on other
    connections, are shown with stale reassembled content (wrong operation or
    request id).  We only need each message's header and the request/reply
    header of a first fragment, and we do the fragment accounting ourselves.
  * tcp.reassemble_out_of_order: TRUE, or reordered segments break the
    reassembly.  But with it TRUE tshark waits forever for bytes that the
    capture lost (and for bytes the snaplen cut off) and dissects nothing
    after such a hole in that direction.  So, when the capture has holes, a
    third run with it FALSE is made, and a direction with a hole takes the
    messages that begin before the hole from the first run and those after
    it from the third.
  * tcp.try_heuristic_first: TRUE.  GIOP is found by a heuristic (the "GIOP"
    magic), which tshark by default tries only after the port's own
    dissector: GIOP on port 80 or 8080 would be taken for HTTP and lost.
    `--ports` also adds `-d tcp.port==N,giop` for ports that must be GIOP.
  * tcp.check_checksum / ip.check_checksum: FALSE (captures taken on the
    sending host carry unfinished checksums because of offload);
    tcp.no_subdissector_on_error: TRUE (tshark's default: segments tshark
    calls retransmissions are not dissected again).

Columns:
  * request_bytes/reply_bytes: giop.len + 12, summed over the message and all
    its Fragments.  A GIOP 1.1 Fragment belongs to the most recent message of
    that direction still expecting fragments; a 1.2+ Fragment to the open
    message with its request id.
  * t_*: byte-exact.  A message occupies [start, end) of its TCP direction,
    start being the end of the previous GIOP message there (the first starts
    at the first payload byte after the SYN); t_*_first/t_*_last are the
    times of the first frames that carried its first/last byte, from its
    first to its last fragment.  A retransmission does not move them, a
    segment that arrived early (reordering) does.  Each placement is checked
    against what tshark says: the message must begin in the segment tshark
    reassembled it from (or dissected it in) and its newest byte must have
    arrived in the frame where tshark dissected it.  When the cursor does not
    pass (after a hole, after a message tshark could not see, capture started
    mid-connection) the start of that segment is tried instead; if neither
    passes, the message gets frame times (t_first = first frame tshark
    reassembled it from, t_last = the frame where it was dissected) and a
    note goes to stderr.
  * retransmits: the segments that carried only already-seen bytes and
    overlap the byte ranges of the request or of its reply; empty when such
    a segment reaches bytes that no placed message accounts for and the call
    has a message that could not be placed.
  * GIOP messages that tshark dissects in a frame that is a pure
    retransmission are ignored (they were counted the first time).
  * An empty field means "unknown" (e.g. the snaplen cut off the operation
    name, or the response flags): compare_pairs.py does not compare it.

Limits (tshark's): with a snaplen, tshark sees only the messages that start a
segment and do not need reassembly across truncated segments; across a hole
it sees nothing of the message the hole is in, nor a later message of that
direction that needs out-of-order reassembly.  Those calls are not reported.

Pairing: per TCP connection (tcp.stream) and direction.  A Request (or
LocateRequest) sent A->B is answered by the Reply (LocateReply) B->A with the
same request id; if an id is outstanding twice, the newest request that
expects a reply gets it.  Without a reply: ONEWAY if no reply was expected,
else CANCELLED if a CancelRequest for it was seen, else NO_REPLY.
"""
import argparse
import bisect
import csv
import ipaddress
import json
import os
import subprocess
import sys
import tempfile
import threading

HEADER = ("client,server,request_id,giop,kind,operation,oneway,status,"
          "request_bytes,reply_bytes,t_request_first,t_request_last,"
          "t_reply_first,t_reply_last,total_us,server_us,retransmits,"
          "gap_fills,capture_loss").split(",")

# GIOP message types
REQUEST, REPLY, CANCEL, LOCATE_REQUEST, LOCATE_REPLY, CLOSE, ERROR, FRAGMENT = range(8)

REPLY_STATUS = ("NO_EXCEPTION", "USER_EXCEPTION", "SYSTEM_EXCEPTION",
                "LOCATION_FORWARD", "LOCATION_FORWARD_PERM", "NEEDS_ADDRESSING_MODE")
LOCATE_STATUS = ("UNKNOWN_OBJECT", "OBJECT_HERE", "OBJECT_FORWARD",
                 "OBJECT_FORWARD_PERM", "LOC_SYSTEM_EXCEPTION",
                 "LOC_NEEDS_ADDRESSING_MODE")

PREFS = {
    "tcp.desegment_tcp_streams": "TRUE",
    "tcp.analyze_sequence_numbers": "TRUE",
    "tcp.check_checksum": "FALSE",
    "ip.check_checksum": "FALSE",
    "giop.desegment_giop_messages": "TRUE",
    "giop.reassemble": "FALSE",
    "tcp.try_heuristic_first": "TRUE",
    "tcp.no_subdissector_on_error": "TRUE",
}

SEQ_MOD = 1 << 32


def note(msg):
    sys.stderr.write("tshark_pairs: %s\n" % msg)


def die(msg, code=2):
    note(msg)
    sys.exit(code)


# ------------------------------------------------------------------ formatting
def parse_epoch(text):
    """'1795997789.512594877' -> nanoseconds as an int (no float rounding)."""
    text = text.strip()
    sign = 1
    if text.startswith("-"):
        sign, text = -1, text[1:]
    whole, _, frac = text.partition(".")
    return sign * (int(whole or "0") * 1000000000 + int((frac + "000000000")[:9]))


def fmt_epoch(ns):
    return "%d.%09d" % divmod(ns, 1000000000)


def fmt_us(ns):
    mag = abs(ns)
    return "%s%d.%03d" % ("-" if ns < 0 else "", mag // 1000, mag % 1000)


def fmt_endpoint(addr, port):
    ip = ipaddress.ip_address(addr)
    if ip.version == 4:
        return "%s:%d" % (ip, port)
    return "[%s]:%d" % (v6_text(ip), port)


def v6_text(ip):
    """RFC 5952 text, as glibc's inet_ntop writes it: lower case, the longest
    (leftmost) run of 2+ zero groups as '::', and the dotted quad kept for
    ::ffff:a.b.c.d and ::a.b.c.d."""
    w = [int.from_bytes(ip.packed[i:i + 2], "big") for i in range(0, 16, 2)]
    lead = next((i for i, x in enumerate(w) if x), 8)   # zero groups at the start
    if lead == 6 or (lead == 5 and w[5] == 0xFFFF):
        return "::%s%s" % ("ffff:" if lead == 5 else "", ipaddress.IPv4Address(ip.packed[12:]))
    return ip.compressed


def fmt_dir(dkey):
    return "connection %d, direction from %s" % (dkey[0], fmt_endpoint(dkey[1], dkey[2]))


# ------------------------------------------------------------------ tshark
class Tshark:
    def __init__(self, exe, capture, ports):
        self.exe = exe
        self.capture = capture
        self.decode_as = []
        for p in ports:
            self.decode_as += ["-d", "tcp.port==%d,giop" % p]

    def args(self, out_of_order):
        a = [self.exe, "-n", "-r", self.capture]
        prefs = dict(PREFS)
        prefs["tcp.reassemble_out_of_order"] = "TRUE" if out_of_order else "FALSE"
        for k, v in prefs.items():
            a += ["-o", "%s:%s" % (k, v)]
        return a + self.decode_as

    def start(self, extra, out_of_order=True):
        err = tempfile.TemporaryFile()
        proc = subprocess.Popen(self.args(out_of_order) + extra, stdout=subprocess.PIPE,
                                stderr=err)
        return proc, err

    def finish(self, proc, err, what):
        rc = proc.wait()
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
        err.close()
        lines = [l for l in text.splitlines() if l.strip() and "Running as user" not in l
                 and "could be dangerous" not in l]
        if rc != 0:
            # tshark reports e.g. a capture cut short in the middle of a packet
            # with rc 2 after dissecting everything before it; anything else
            # that made it fail before it produced output is fatal.
            if not getattr(proc, "produced", False):
                die("tshark (%s) failed on %s (rc %d): %s"
                    % (what, self.capture, rc, " / ".join(lines) or "no message"))
            note("tshark (%s) rc %d: %s" % (what, rc, " / ".join(lines)))
        return rc


# ------------------------------------------------------------------ segments
SEG_FIELDS = ["frame.number", "frame.time_epoch", "frame.protocols", "frame.len",
              "frame.cap_len", "tcp.stream", "ip.src", "ipv6.src", "tcp.srcport",
              "tcp.seq_raw", "tcp.len", "tcp.flags.syn"]


def read_segments(proc, sink):
    """Consumes the `-T fields` run; appends tuples to sink (run in a thread)."""
    for raw in proc.stdout:
        proc.produced = True
        f = raw.decode("utf-8", "replace").rstrip("\r\n").split("\t")
        if len(f) < len(SEG_FIELDS) or f[5] == "" or f[9] == "":
            continue
        protos = f[2].split(":")
        # the address family of the IP header that carries this TCP header
        fam = None
        for p in protos[:protos.index("tcp") if "tcp" in protos else len(protos)]:
            if p in ("ip", "ipv6"):
                fam = p
        src = f[6] if fam == "ip" else f[7]
        truncated = f[3] != f[4]
        sink.append((int(f[0]), parse_epoch(f[1]), int(f[5]), src, int(f[8]),
                     int(f[9]), int(f[10] or 0), f[11] in ("1", "True"), truncated))


class Direction:
    """One direction of one TCP connection: which bytes the capture saw, when
    each was first seen, and the retransmitted segments.  Byte offsets are
    relative to the first payload byte after the SYN (or, without a SYN, to
    the first data segment seen), with 32-bit sequence wrap undone."""

    def __init__(self):
        self.isn = None          # raw sequence number of offset 0
        self.syn = False
        self.hi = 0              # highest end offset so far (for unwrapping)
        self.cov_s = []          # merged byte intervals seen, starts ...
        self.cov_e = []          # ... and ends (disjoint, non-touching, sorted)
        self.pieces = []         # (start, end, frame, fill): bytes first seen in frame;
                                 # fill: the frame brought bytes below the highest byte
                                 # seen before it (lost or reordered before the tap)
        self.rtx = []            # (start, end, frame) of pure retransmissions
        self.truncated = False   # some segment's payload was cut by the snaplen

    def offset(self, raw):
        rel = (raw - self.isn) % SEQ_MOD
        return rel + ((self.hi - rel + SEQ_MOD // 2) // SEQ_MOD) * SEQ_MOD

    def add(self, a, b, frame):
        """Bytes [a, b) seen in frame; records them, returns True when every
        one of them had been seen before (a retransmission)."""
        s, e = self.cov_s, self.cov_e
        i = bisect.bisect_left(e, a)            # first interval ending at/after a
        j = bisect.bisect_right(s, b)           # intervals i..j-1 touch [a, b]
        if i < j and s[i] <= a and b <= e[i]:
            self.rtx.append((a, b, frame))
            return True
        new = []
        cur = a
        for k in range(i, j):
            if s[k] > cur:
                new.append((cur, min(s[k], b)))
            cur = max(cur, e[k])
        if cur < b:
            new.append((cur, b))
        fill = bool(self.cov_s) and new[0][0] < self.cov_e[-1]
        for x, y in new:
            self.pieces.append((x, y, frame, fill))
        lo = min(a, s[i]) if i < j else a
        hi = max(b, e[j - 1]) if i < j else b
        s[i:j] = [lo]
        e[i:j] = [hi]
        self.hi = max(self.hi, b)
        return False

    def seal(self):
        self.pieces.sort()
        self.piece_starts = [p[0] for p in self.pieces]

    @property
    def start(self):
        if self.syn or not self.cov_s:
            return 0
        return self.cov_s[0]

    def hole(self):
        """Offset of the first byte missing from the capture before the last
        byte seen, or None."""
        if not self.cov_s:
            return None
        if self.cov_s[0] > self.start:
            return self.start
        return self.cov_e[0] if len(self.cov_s) > 1 else None

    def first_frames(self, a, b):
        """(frame of byte a, frame of byte b-1, newest frame, oldest frame, gap-filling
        frames) over the first sightings of the bytes [a, b), or None if some byte
        of [a, b) was never seen.  The oldest frame brought the message's earliest
        byte (t_first), the newest completed it (t_last)."""
        if b <= a:
            return None
        k = bisect.bisect_right(self.piece_starts, a) - 1
        if k < 0:
            return None
        first = newest = oldest = None
        fills = set()
        pos = a
        last = None
        while pos < b:
            if k >= len(self.pieces):
                return None
            ps, pe, fr, fill = self.pieces[k]
            if not (ps <= pos < pe):
                return None
            if first is None:
                first = fr
            newest = fr if newest is None else max(newest, fr)
            oldest = fr if oldest is None else min(oldest, fr)
            if fill:
                fills.add(fr)
            last = fr
            pos = pe
            k += 1
        return first, last, newest, oldest, fills


class Segment:
    __slots__ = ("dkey", "start", "end", "truncated")

    def __init__(self, dkey, start, end, truncated):
        self.dkey, self.start, self.end, self.truncated = dkey, start, end, truncated


def build_directions(segments):
    """-> (directions by (stream, src addr, src port), frame times, the data
    Segment of each frame, the frames that are pure retransmissions)."""
    dirs = {}
    times = {}
    seg_of = {}
    rtx_frames = set()
    for frame, t, stream, src, sport, seq, length, syn, truncated in segments:
        times[frame] = t
        dkey = (stream, src, sport)
        d = dirs.get(dkey)
        if d is None:
            d = dirs[dkey] = Direction()
        data_seq = seq + 1 if syn else seq
        if syn and not d.syn and not d.cov_s:
            d.isn, d.syn, d.hi = data_seq, True, 0
        if length <= 0:
            continue
        if d.isn is None:
            d.isn = data_seq
        a = d.offset(data_seq)
        d.truncated = d.truncated or truncated
        seg_of[frame] = Segment(dkey, a, a + length, truncated)
        if d.add(a, a + length, frame):
            rtx_frames.add(frame)
    for d in dirs.values():
        d.seal()
    return dirs, times, seg_of, rtx_frames


# ------------------------------------------------------------------ messages
class Obj(list):
    """A JSON object as an ordered list of (key, value): tshark repeats keys."""


def get(obj, name):
    """Value of the first field `name` in obj: top level first, then depth first."""
    for k, v in obj:
        if k == name and not isinstance(v, Obj):
            return v
    for k, v in obj:
        if isinstance(v, Obj):
            r = get(v, name)
            if r is not None:
                return r
    return None


def child(obj, name):
    """The first sub-object called name."""
    return next((v for k, v in obj if k == name and isinstance(v, Obj)), None)


def as_int(v):
    if v is None:
        return None
    try:
        return int(v, 16) if v[:2] in ("0x", "0X") else int(v)
    except ValueError:
        return None


class Msg:
    __slots__ = ("frame", "stream", "src", "dst", "sport", "dport", "major", "minor",
                 "type", "size", "more", "request_id", "op", "rsp_expected",
                 "response_flags", "reply_status", "locate_status", "seg_frames",
                 "start", "end", "t_first", "t_last", "half", "fills")

    def __init__(self, **kw):
        for k in self.__slots__:
            setattr(self, k, kw.get(k))


BODY_FIELDS = (("giop.request_id", "request_id"), ("giop.request_op", "op"),
               ("giop.rsp_expected", "rsp_expected"),
               ("giop.response_flag", "response_flags"),
               ("giop.replystatus", "reply_status"),
               ("giop.locale_status", "locate_status"))  # sic, tshark's name


def packet_messages(pkt):
    """The GIOP messages of one packet of tshark's JSON, in order."""
    source = child(pkt, "_source")
    layers = child(source, "layers") if source is not None else None
    if layers is None:
        return []
    frame = src = dst = None
    tcp = None
    seg_frames = None
    msgs = []
    cur = None
    for key, val in layers:
        if key == "frame":
            frame = int(get(val, "frame.number"))
        elif key in ("ip", "ipv6") and tcp is None:
            src, dst = get(val, key + ".src"), get(val, key + ".dst")
        elif key == "tcp" and tcp is None:
            tcp = val
        elif key == "giop":
            if tcp is None or src is None:
                continue
            major = as_int(get(val, "giop.major_version"))
            minor = as_int(get(val, "giop.minor_version"))
            mtype = as_int(get(val, "giop.type"))
            size = as_int(get(val, "giop.len"))
            if major is None or minor is None or mtype is None or size is None:
                cur = None
                continue
            frag = get(val, "giop.flags.fragment")
            cur = Msg(frame=frame, stream=int(get(tcp, "tcp.stream")), src=src, dst=dst,
                      sport=int(get(tcp, "tcp.srcport")), dport=int(get(tcp, "tcp.dstport")),
                      major=major, minor=minor, type=mtype, size=size + 12,
                      more=(minor >= 1 and frag in ("1", "True")),
                      seg_frames=seg_frames if not msgs else None)
            msgs.append(cur)
        elif isinstance(val, Obj):
            if cur is None:
                # before the first GIOP message: the reassembled-PDU info
                segs = [int(v) for k, v in val if k == "tcp.segment"] if key == "tcp.segments" else []
                if not segs:
                    inner = next((v for k, v in val if k == "tcp.segments" and isinstance(v, Obj)), None)
                    if inner is not None:
                        segs = [int(v) for k, v in inner if k == "tcp.segment"]
                if segs:
                    seg_frames = segs
            else:
                for field, attr in BODY_FIELDS:
                    if getattr(cur, attr) is None:
                        v = get(val, field)
                        if v is not None:
                            setattr(cur, attr, v)
    return msgs


def read_messages(proc, sink):
    """Parses tshark's pretty-printed JSON one packet object at a time."""
    decoder = json.JSONDecoder(object_pairs_hook=Obj)
    chunk = None
    for raw in proc.stdout:
        proc.produced = True
        if raw.startswith(b"  {"):
            chunk = [raw]
        elif raw.startswith(b"  }"):
            if chunk is not None:
                chunk.append(b"}")
                sink.extend(packet_messages(decoder.decode(b"".join(chunk).decode("utf-8", "replace"))))
            chunk = None
        elif chunk is not None:
            chunk.append(raw)


# ------------------------------------------------------------------ the pairing
class Half:
    """The request or the reply of a call: all its fragments."""

    def __init__(self, msg):
        self.bytes = msg.size
        self.t_first, self.t_last = msg.t_first, msg.t_last
        self.fills = None if msg.fills is None else set(msg.fills)
        self.open = msg.more
        self.rid = msg.request_id
        self.rtx = set()
        self.rtx_unknown = False

    def extend(self, msg):
        self.bytes += msg.size
        self.t_first = min(self.t_first, msg.t_first)
        self.t_last = max(self.t_last, msg.t_last)
        fills = getattr(msg, "fills", None)
        self.fills = None if self.fills is None or fills is None else self.fills | fills
        self.open = msg.more


class Call:
    def __init__(self, msg, kind):
        self.stream = msg.stream
        self.cdir = (msg.stream, msg.src, msg.sport)
        self.sdir = (msg.stream, msg.dst, msg.dport)
        self.client = fmt_endpoint(msg.src, msg.sport)
        self.server = fmt_endpoint(msg.dst, msg.dport)
        self.rid = msg.request_id
        self.giop = "%d.%d" % (msg.major, msg.minor)
        self.kind = kind
        if kind == "LocateRequest":
            self.op, self.oneway = "", False
        else:
            self.op = msg.op
            if msg.minor >= 2 or msg.major > 1:
                flags = as_int(msg.response_flags)
                self.oneway = None if flags is None else (flags & 1) == 0
            else:
                exp = msg.rsp_expected
                self.oneway = None if exp is None else exp in ("0", "False")
        self.request = Half(msg)
        self.reply = None
        self.status = None
        self.cancelled = False


def place(d, seg_of, m, a, at_cursor=False):
    """first_frames() of message m if it occupies [a, a + size) of direction d,
    else None.  Its first byte must be in the segment tshark says it starts
    in, and its newest byte must have come in the frame where tshark
    dissected it or before (when the capture truncated that frame, tshark dissects the
    message's head from it as is: then the message must start there)."""
    r = d.first_frames(a, a + m.size)
    if r is None:
        return None
    head = seg_of.get(m.seg_frames[0] if m.seg_frames else m.frame)
    # Right after the previous message the offset is known; elsewhere the
    # message must start in the segment tshark names.  (With reordered
    # segments tshark names the frame that completed the stream, which may
    # carry an earlier part of it.)
    if not at_cursor and (head is None or not head.start <= a < head.end):
        return None
    # tshark dissects a message in the frame that completed it; with
    # reordered segments that frame can carry an earlier part of it, so the
    # newest byte may have come before (never after) that frame
    if r[2] <= m.frame:
        return r
    own = seg_of.get(m.frame)
    if own is not None and own.truncated and own.start == a and r[0] == m.frame:
        return r
    return None


def locate_times(dirs, times, seg_of, msgs):
    """Byte range and t_first/t_last of every message.  Walks each direction
    with a cursor at the end of the previous message; where that does not fit
    (a hole, a message tshark could not see) it tries the start of the
    segment the message begins in, and failing that takes the times of the
    frames.  Returns the messages by direction."""
    bydir = {}
    for m in msgs:
        bydir.setdefault((m.stream, m.src, m.sport), []).append(m)
    for dkey, ms in bydir.items():
        d = dirs.get(dkey)
        pos = d.start if d is not None else None
        loose = 0
        prev_frame = None
        for m in ms:
            r = None
            if d is not None:
                if pos is not None:
                    r = place(d, seg_of, m, pos, at_cursor=True)
                    if r is not None:
                        m.start = pos
                if r is None and m.frame != prev_frame:
                    head = seg_of.get(m.seg_frames[0] if m.seg_frames else m.frame)
                    if head is not None and head.start != pos:
                        r = place(d, seg_of, m, head.start)
                        if r is not None:
                            m.start = head.start
            prev_frame = m.frame
            if r is not None:
                m.end = m.start + m.size
                # earliest byte to arrive, and the frame that completed the message
                m.t_first, m.t_last = times[r[3]], times[r[2]]
                m.fills = r[4]
                pos = m.end
            else:
                loose += 1
                m.start = m.end = pos = None
                m.fills = None
                first = m.seg_frames[0] if m.seg_frames else m.frame
                m.t_first = times.get(first, times.get(m.frame))
                m.t_last = times.get(m.frame)
        if loose:
            note("%s: %d of %d GIOP messages could not be placed in the byte stream; "
                 "their times are those of frames" % (fmt_dir(dkey), loose, len(ms)))
    return bydir


def pair(msgs):
    calls = []
    pending = {}    # (stream, client addr, client port, request id) -> [Call]
    open_halves = {}  # direction -> [Half] awaiting Fragments
    for m in msgs:
        dkey = (m.stream, m.src, m.sport)
        m.request_id = as_int(m.request_id)
        half = None
        if m.type in (REQUEST, LOCATE_REQUEST):
            if m.request_id is None:
                note("frame %d: request without a request id, skipped" % m.frame)
                half = Half(m)   # still absorbs its fragments
            else:
                c = Call(m, "Request" if m.type == REQUEST else "LocateRequest")
                calls.append(c)
                pending.setdefault((m.stream, m.src, m.sport, m.request_id), []).append(c)
                half = c.request
        elif m.type in (REPLY, LOCATE_REPLY):
            want = "Request" if m.type == REPLY else "LocateRequest"
            cands = [c for c in pending.get((m.stream, m.dst, m.dport, m.request_id), ())
                     if c.kind == want and c.reply is None]
            c = None
            if cands:
                waiting = [c for c in cands if c.oneway is not True]
                c = (waiting or cands)[-1]
            half = Half(m)
            if c is None:
                note("frame %d: %s to request id %s that the capture does not have"
                     % (m.frame, "Reply" if m.type == REPLY else "LocateReply", m.request_id))
            else:
                c.reply = half
                names = REPLY_STATUS if m.type == REPLY else LOCATE_STATUS
                st = as_int(m.reply_status if m.type == REPLY else m.locate_status)
                c.status = names[st] if st is not None and 0 <= st < len(names) else None
                if c.status is None:
                    note("frame %d: unknown reply status %s" % (m.frame, st))
        elif m.type == FRAGMENT:
            lst = open_halves.get(dkey, [])
            k = None
            if (m.major, m.minor) >= (1, 2) and m.request_id is not None:
                k = next((i for i in range(len(lst) - 1, -1, -1) if lst[i].rid == m.request_id), None)
            if k is None and lst:
                k = len(lst) - 1
            if k is None:
                note("frame %d: Fragment with no fragmented message open in that direction" % m.frame)
            else:
                half = lst[k]
                half.extend(m)
                if not half.open:
                    del lst[k]
        elif m.type == CANCEL:
            for c in pending.get((m.stream, m.src, m.sport, m.request_id), ()):
                c.cancelled = True
        m.half = half
        if half is not None and m.type != FRAGMENT and half.open:
            open_halves.setdefault(dkey, []).append(half)

    return calls


def count_retransmissions(bydir, dirs):
    """Adds to each Half the pure retransmissions that overlap its bytes.  A
    retransmission that reaches bytes no placed message accounts for may
    belong to a message that could not be placed: those get rtx_unknown."""
    for dkey, ms in bydir.items():
        d = dirs.get(dkey)
        if d is None or not d.rtx:
            continue
        placed = sorted((m for m in ms if m.start is not None), key=lambda m: m.start)
        starts = [m.start for m in placed]
        unexplained = False
        for a, b, frame in d.rtx:
            k = max(bisect.bisect_right(starts, a) - 1, 0)
            covered = a
            while k < len(placed) and placed[k].start < b:
                m = placed[k]
                if m.end > a:
                    if m.half is not None:
                        m.half.rtx.add(frame)
                    if m.start <= covered:
                        covered = max(covered, m.end)
                k += 1
            if covered < b:
                unexplained = True
        if unexplained:
            for m in ms:
                if m.start is None and m.half is not None:
                    m.half.rtx_unknown = True


def rows_of(calls):
    rows = []
    for c in calls:
        rq, rp = c.request, c.reply
        if rp is not None:
            status = c.status
        elif c.oneway is True:
            status = "ONEWAY"
        elif c.cancelled:
            status = "CANCELLED"
        elif c.oneway is False:
            status = "NO_REPLY"
        else:
            status = None
        if rq.rtx_unknown or (rp is not None and rp.rtx_unknown):
            rtx = None
        else:
            rtx = len(rq.rtx) + (len(rp.rtx) if rp is not None else 0)
        row = [c.client, c.server, str(c.rid), c.giop, c.kind, c.op,
               None if c.oneway is None else ("1" if c.oneway else "0"), status,
               str(rq.bytes), str(rp.bytes) if rp else "",
               fmt_epoch(rq.t_first), fmt_epoch(rq.t_last),
               fmt_epoch(rp.t_first) if rp else "", fmt_epoch(rp.t_last) if rp else "",
               fmt_us(rp.t_last - rq.t_first) if rp else "",
               fmt_us(rp.t_first - rq.t_last) if rp else "",
               None if rtx is None else str(rtx)]
        # gap fills and capture loss are known where every byte of the call was
        # placed (seen by the capture); elsewhere they are not compared
        halves = [rq] + ([rp] if rp is not None else [])
        if any(h.fills is None for h in halves):
            row += [None, None]
        else:
            row += [str(len(set().union(*[h.fills for h in halves]))), "0"]
        rows.append(((rq.t_first, c.client, c.rid), ["" if v is None else v for v in row]))
    rows.sort(key=lambda r: r[0])
    return [r for _, r in rows]


# ------------------------------------------------------------------ main
def run(capture, exe, ports):
    ts = Tshark(exe, capture, ports)
    seg_proc, seg_err = ts.start(["-Y", "tcp && !icmp && !icmpv6", "-T", "fields",
                                  "-E", "separator=\t", "-E", "occurrence=l"]
                                 + sum((["-e", f] for f in SEG_FIELDS), []))
    segments = []
    reader = threading.Thread(target=read_segments, args=(seg_proc, segments))
    reader.start()
    msg_proc, msg_err = ts.start(["-Y", "giop && !icmp && !icmpv6", "-T", "json"], True)
    msgs = []
    read_messages(msg_proc, msgs)
    reader.join()
    ts.finish(seg_proc, seg_err, "segments")
    ts.finish(msg_proc, msg_err, "messages")

    dirs, times, seg_of, rtx_frames = build_directions(segments)
    # With tcp.reassemble_out_of_order tshark waits forever at a hole (and
    # cannot reassemble segments cut by the snaplen): a direction with a hole
    # takes the messages before the hole from this run, the ones after it
    # from a run without out-of-order reassembly.
    split = {}
    for dkey, d in dirs.items():
        at = d.start if d.truncated else d.hole()
        if at is not None:
            split[dkey] = at
    if split:
        proc, err = ts.start(["-Y", "giop && !icmp && !icmpv6", "-T", "json"], False)
        in_order = []
        read_messages(proc, in_order)
        ts.finish(proc, err, "messages, in-order reassembly")

        def after_hole(m):
            seg = seg_of.get(m.frame)
            return seg is None or seg.start >= split[(m.stream, m.src, m.sport)]

        msgs = ([m for m in msgs if (m.stream, m.src, m.sport) not in split or not after_hole(m)]
                + [m for m in in_order if (m.stream, m.src, m.sport) in split and after_hole(m)])
        msgs.sort(key=lambda m: m.frame)   # stable: keeps the order within a frame
        for dkey in sorted(split, key=lambda k: (k[0], k[2])):
            note("%s: %s at byte %d" % (fmt_dir(dkey), "payload cut by the snaplen"
                                        if dirs[dkey].truncated else "bytes missing from the capture",
                                        split[dkey]))
    msgs = [m for m in msgs if m.frame not in rtx_frames]
    bydir = locate_times(dirs, times, seg_of, msgs)
    calls = pair(msgs)
    count_retransmissions(bydir, dirs)
    return rows_of(calls)


def parse_ports(text):
    ports = []
    for p in text.split(","):
        p = p.strip()
        if not p:
            continue
        if not p.isdigit() or not 0 < int(p) < 65536:
            raise argparse.ArgumentTypeError("bad port %r" % p)
        ports.append(int(p))
    return ports


def main():
    ap = argparse.ArgumentParser(
        description="Expected GIOP pairs (the pairs CSV of docs/output.md) of a capture, from tshark's GIOP dissector.")
    ap.add_argument("capture", help="pcap or pcapng file")
    ap.add_argument("-o", "--output", help="write the CSV here (default: stdout)")
    ap.add_argument("--ports", type=parse_ports, default=[],
                    help="comma-separated TCP ports to decode as GIOP (tshark -d tcp.port==N,giop)")
    ap.add_argument("--tshark", default=os.environ.get("TSHARK", "tshark"),
                    help="tshark executable (default: $TSHARK or tshark)")
    a = ap.parse_args()
    if not os.path.isfile(a.capture):
        die("cannot read %s" % a.capture)
    try:
        rows = run(a.capture, a.tshark, a.ports)
    except FileNotFoundError:
        die("cannot run %s (is tshark installed?)" % a.tshark)
    out = open(a.output, "w", newline="") if a.output else sys.stdout
    w = csv.writer(out, lineterminator="\n")
    w.writerow(HEADER)
    w.writerows(rows)
    if a.output:
        out.close()
    else:
        out.flush()
    note("%s: %d pairs" % (a.capture, len(rows)))


if __name__ == "__main__":
    main()
