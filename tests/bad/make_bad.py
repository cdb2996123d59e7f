#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""make_bad.py: hostile and broken captures for giopscope's bad-input tests.

usage: make_bad.py OUTDIR [--source CAPTURE.pcap] [--list]

Writes into OUTDIR one capture per case of tests/bad/cases.txt (python3 stdlib
only, deterministic: every random byte comes from a seeded generator, every
time stamp is computed).  Two kinds:

  * cut or rewritten from a real capture (default tests/data/corpus/
    v01_giop12_echo2000.pcap: omniORB GIOP 1.2, one connection, 2001 calls, all
    messages at segment starts): empty file, text, cut mid-record, snaplen 80,
    unsupported link type, pcapng with a corrupt block, ...
  * synthetic: our own Ethernet/IPv4(or IPv6)/TCP frames with a SYN handshake
    and correct sequence numbers, carrying GIOP messages we encode ourselves
    (or random bytes), to put one hostile thing in an otherwise valid stream.

Some cases also get NAME.ref.pcap: a clean capture of what precedes the bad
point.  run.sh checks that every row giopscope writes for the reference is
also written, identically and in order, for the bad capture ("every call
decoded before the bad point is still written").

--list prints, per case, the number of GIOP Request/LocateRequest messages the
generator put before the bad point (the row counts of cases.txt come from it).
"""

import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SOURCE = os.path.join(HERE, "..", "data", "corpus", "v01_giop12_echo2000.pcap")

NOTES = {}  # case name -> text for --list


def note(name, text):
    NOTES[name] = text


# ---------------------------------------------------------------- pcap files

PCAP_MAGIC_US = 0xA1B2C3D4
PCAP_MAGIC_NS = 0xA1B23C4D


class Pcap:
    """A classic pcap file in memory: header fields and a list of records."""

    def __init__(self, linktype=1, snaplen=262144, nsec=True):
        self.linktype = linktype
        self.snaplen = snaplen
        self.nsec = nsec
        self.records = []  # (sec, frac, caplen, wirelen, data)

    @classmethod
    def read(cls, path):
        with open(path, "rb") as f:
            raw = f.read()
        magic_le = struct.unpack_from("<I", raw, 0)[0]
        if magic_le in (PCAP_MAGIC_US, PCAP_MAGIC_NS):
            e = "<"
            magic = magic_le
        else:
            magic = struct.unpack_from(">I", raw, 0)[0]
            if magic not in (PCAP_MAGIC_US, PCAP_MAGIC_NS):
                raise SystemExit("make_bad.py: %s is not a classic pcap file" % path)
            e = ">"
        _, _, _, _, _, snaplen, linktype = struct.unpack_from(e + "IHHiIII", raw, 0)
        p = cls(linktype & 0xFFFF, snaplen, magic == PCAP_MAGIC_NS)
        off = 24
        while off + 16 <= len(raw):
            sec, frac, cap, wire = struct.unpack_from(e + "IIII", raw, off)
            off += 16
            p.records.append((sec, frac, cap, wire, raw[off:off + cap]))
            off += cap
        if not p.nsec:  # keep everything in nanoseconds
            p.records = [(s, f * 1000, c, w, d) for (s, f, c, w, d) in p.records]
            p.nsec = True
        return p

    def header(self, linktype=None, snaplen=None):
        return struct.pack("<IHHiIII", PCAP_MAGIC_NS, 2, 4, 0, 0,
                           self.snaplen if snaplen is None else snaplen,
                           self.linktype if linktype is None else linktype)

    @staticmethod
    def record(rec, caplen=None):
        sec, frac, cap, wire, data = rec
        if caplen is not None and caplen < cap:
            cap = caplen
            data = data[:cap]
        return struct.pack("<IIII", sec, frac, cap, wire) + data

    def to_bytes(self, records=None, **kw):
        recs = self.records if records is None else records
        return self.header(**kw) + b"".join(self.record(r) for r in recs)


def write(outdir, name, data):
    with open(os.path.join(outdir, name), "wb") as f:
        f.write(data)


# ------------------------------------------------------------- pcapng files

def _pad4(b):
    return b + b"\0" * (-len(b) % 4)


def ng_block(btype, body):
    body = _pad4(body)
    n = 12 + len(body)
    return struct.pack("<II", btype, n) + body + struct.pack("<I", n)


def ng_option(code, value):
    return struct.pack("<HH", code, len(value)) + _pad4(value)


def pcapng_bytes(records, linktype=1, snaplen=262144, tsresol=9, tsoffset=None, ts_override=None):
    """SHB + one IDB + an EPB per record (records in ns); `ts_override(i)` gives
    a raw 64-bit time stamp in units of the interface's resolution."""
    shb = ng_block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    opts = ng_option(9, bytes([tsresol]))
    if tsoffset is not None:
        opts += ng_option(14, struct.pack("<q", tsoffset))
    opts += ng_option(0, b"")
    idb = ng_block(1, struct.pack("<HHI", linktype, 0, snaplen) + opts)
    out = [shb, idb]
    for i, (sec, frac, cap, wire, data) in enumerate(records):
        ts = sec * 10 ** tsresol + frac // (10 ** (9 - tsresol)) if tsresol <= 9 else 0
        if ts_override is not None:
            ts = ts_override(i)
        out.append(ng_block(6, struct.pack("<IIIII", 0, ts >> 32, ts & 0xFFFFFFFF, cap, wire) + data))
    return out


# ------------------------------------------------------- frames we build

def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ip4(a):
    return bytes(int(x) for x in a.split("."))


def ip6(a):
    # only the forms used here: "fd00::N"
    head, tail = a.split("::")
    hw = [int(x, 16) for x in head.split(":") if x]
    tw = [int(x, 16) for x in tail.split(":") if x]
    words = hw + [0] * (8 - len(hw) - len(tw)) + tw
    return struct.pack("!8H", *words)


FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10


def tcp_header(sport, dport, seq, ack, flags, doff_words=5, options=b"", window=65535):
    hdr = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                      (doff_words & 0xF) << 4, flags, window, 0, 0)
    return hdr + options


def ipv4_packet(src, dst, l4, proto=6, ident=0, ihl_words=5, total=None):
    tot = 20 + len(l4) if total is None else total
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | (ihl_words & 0xF), 0, tot, ident & 0xFFFF, 0x4000,
                      64, proto, 0, ip4(src), ip4(dst))
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + l4


def ipv6_packet(src, dst, l4, ext=(), proto=6):
    """`ext`: list of (next-header-type, raw header bytes) put before the TCP header."""
    chain = b""
    types = [t for t, _ in ext] + [proto]
    for i, (t, raw) in enumerate(ext):
        chain += bytes([types[i + 1]]) + raw[1:]
    first = types[0]
    return struct.pack("!IHBB16s16s", 0x60000000, len(chain) + len(l4), first, 64,
                       ip6(src), ip6(dst)) + chain + l4


def ext_opts(hdr_ext_len=0):
    """A hop-by-hop/destination/routing header of (hdr_ext_len+1)*8 bytes (PadN)."""
    n = (hdr_ext_len + 1) * 8
    body = bytes([0, hdr_ext_len, 1, n - 4]) + b"\0" * (n - 4)
    return body


def ether(payload, v6=False):
    return (b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01" +
            struct.pack("!H", 0x86DD if v6 else 0x0800) + payload)


class Capture:
    """Synthetic frames with time stamps 10 us apart."""

    def __init__(self, t0=1_700_000_000 * 10 ** 9):
        self.t = t0
        self.records = []

    def add(self, frame, caplen=None, wirelen=None, dt=10_000):
        self.t += dt
        cap = len(frame) if caplen is None else caplen
        wire = len(frame) if wirelen is None else wirelen
        self.records.append((self.t // 10 ** 9, self.t % 10 ** 9, cap, wire, frame[:cap]))

    def pcap(self, linktype=1):
        p = Pcap(linktype=linktype)
        p.records = list(self.records)
        return p.to_bytes()


class Conn:
    """One TCP connection between a client and a server, both directions,
    sequence numbers kept right (32-bit wrap included)."""

    def __init__(self, cap, cli="10.9.0.1", srv="10.9.0.2", cport=40000, sport=2809,
                 isn_c=1000, isn_s=5000, v6=False, ext=(), mss=1448):
        self.cap, self.cli, self.srv, self.cport, self.sport = cap, cli, srv, cport, sport
        self.seq = [isn_c, isn_s]  # next sequence number of each side
        self.v6, self.ext, self.mss = v6, ext, mss
        self.ident = [1, 1]

    def frame(self, d, seq, flags, payload=b"", ack=True, doff_words=5, options=b""):
        src, dst = (self.cli, self.srv) if d == 0 else (self.srv, self.cli)
        sp, dp = (self.cport, self.sport) if d == 0 else (self.sport, self.cport)
        ackno = self.seq[1 - d] if ack else 0
        tcp = tcp_header(sp, dp, seq, ackno, flags | (ACK if ack else 0), doff_words, options) + payload
        if self.v6:
            pkt = ipv6_packet(src, dst, tcp, ext=self.ext)
        else:
            pkt = ipv4_packet(src, dst, tcp, ident=self.ident[d])
            self.ident[d] += 1
        return ether(pkt, self.v6)

    def handshake(self):
        self.cap.add(self.frame(0, self.seq[0], SYN, ack=False))
        self.seq[0] += 1
        self.cap.add(self.frame(1, self.seq[1], SYN))
        self.seq[1] += 1
        self.cap.add(self.frame(0, self.seq[0], 0))
        return self

    def send(self, d, data, ack_after=True):
        """data from side d (0 client, 1 server), in MSS-sized segments."""
        for i in range(0, len(data), self.mss):
            chunk = data[i:i + self.mss]
            self.cap.add(self.frame(d, self.seq[d], PSH, chunk))
            self.seq[d] += len(chunk)
        if ack_after and data:
            self.cap.add(self.frame(1 - d, self.seq[1 - d], 0))

    def raw(self, d, seq_off, data, flags=PSH):
        """A segment at seq[d] + seq_off (does not move seq[d])."""
        self.cap.add(self.frame(d, self.seq[d] + seq_off, flags, data))

    def call(self, req, rep):
        self.send(0, req, ack_after=False)
        if rep is not None:
            self.send(1, rep)

    def close(self):
        self.cap.add(self.frame(0, self.seq[0], FIN))
        self.seq[0] += 1
        self.cap.add(self.frame(1, self.seq[1], FIN))
        self.seq[1] += 1
        self.cap.add(self.frame(0, self.seq[0], 0))


# ---------------------------------------------------------------- GIOP

class CDR:
    """CDR encoder; offsets (for alignment) count from the GIOP header start."""

    def __init__(self, le=True):
        self.b = bytearray()
        self.le = le
        self.e = "<" if le else ">"

    def align(self, n):
        while (12 + len(self.b)) % n:
            self.b.append(0)
        return self

    def octet(self, v):
        self.b.append(v & 0xFF)
        return self

    def ushort(self, v):
        self.align(2)
        self.b += struct.pack(self.e + "H", v & 0xFFFF)
        return self

    def ulong(self, v):
        self.align(4)
        self.b += struct.pack(self.e + "I", v & 0xFFFFFFFF)
        return self

    def octets(self, data, length=None):
        self.ulong(len(data) if length is None else length)
        self.b += data
        return self

    def string(self, s, nul=True, length=None):
        raw = s.encode() + (b"\0" if nul else b"")
        return self.octets(raw, length)

    def raw(self, data):
        self.b += data
        return self


def giop(minor, mtype, body, le=True, more=False, size=None, major=1, magic=b"GIOP"):
    flags = (1 if le else 0) | (2 if more else 0)
    n = len(body) if size is None else size
    return magic + bytes([major, minor, flags, mtype]) + struct.pack("<I" if le else ">I", n & 0xFFFFFFFF) + bytes(body)


KEY = b"\xfe\x8b\x7e\x2e\x5c\x00\x00\x1a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"


def contexts(c, ctxs, count=None):
    c.ulong(len(ctxs) if count is None else count)
    for cid, data in ctxs:
        c.ulong(cid)
        c.octets(data)


CODESETS = (1, b"\x01\x00\x00\x00\x01\x00\x01\x05\x09\x01\x01\x00")


def request12(rid, op, key=KEY, oneway=False, ctxs=(CODESETS,), ctx_count=None, body=b"",
              op_len=None, op_nul=True, key_len=None, more=False, le=True, size=None):
    c = CDR(le)
    c.ulong(rid).octet(0 if oneway else 3).raw(b"\0\0\0")
    c.ushort(0).octets(key, key_len)
    c.string(op, op_nul, op_len)
    contexts(c, list(ctxs), ctx_count)
    if body:
        c.align(8).raw(body)
    return giop(2, 0, c.b, le, more=more, size=size)


def reply12(rid, status=0, body=b"\0\0\0\0", le=True, more=False):
    c = CDR(le)
    c.ulong(rid).ulong(status)
    contexts(c, [])
    if body:
        c.align(8).raw(body)
    return giop(2, 1, c.b, le, more=more)


def request10(rid, op, key=KEY, oneway=False, ctxs=(CODESETS,), ctx_count=None, minor=0, body=b"",
              more=False):
    c = CDR(True)
    contexts(c, list(ctxs), ctx_count)
    c.ulong(rid).octet(0 if oneway else 1)
    if minor == 1:
        c.raw(b"\0\0\0")
    c.octets(key).string(op).octets(b"")
    if body:
        c.raw(body)
    return giop(minor, 0, c.b, True, more=more)


def reply10(rid, status=0, minor=0, body=b"\0\0\0\0"):
    c = CDR(True)
    contexts(c, [])
    c.ulong(rid).ulong(status).raw(body)
    return giop(minor, 1, c.b, True)


def fragment12(rid, data, more):
    c = CDR(True)
    c.ulong(rid).raw(data)
    return giop(2, 7, c.b, True, more=more)


def fragment11(data, more):
    return giop(1, 7, data, True, more=more)


def echo_body(rng, n=32):
    s = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n))
    c = CDR(True)
    c.string(s)
    return bytes(c.b)


def good_calls(conn, rng, first_rid, n, op="echoString"):
    """n ordinary two-way calls; returns the next request id."""
    rid = first_rid
    for _ in range(n):
        conn.call(request12(rid, op, body=echo_body(rng)), reply12(rid, 0, body=echo_body(rng)))
        rid += 2
    return rid


# ---------------------------------------------------------------- cases

def giop_requests_in(records, linktype=1):
    """Number of segments in the records whose TCP payload starts with a GIOP
    Request/LocateRequest (true of every request in the corpus captures)."""
    n = 0
    for sec, frac, cap, wire, data in records:
        if linktype != 1 or len(data) < 14 or data[12:14] != b"\x08\x00":
            continue
        ip = data[14:]
        ihl = (ip[0] & 15) * 4
        tcp = ip[ihl:]
        if len(tcp) < 20:
            continue
        pl = tcp[(tcp[12] >> 4) * 4:]
        if len(pl) >= 8 and pl[:4] == b"GIOP" and pl[7] in (0, 3):
            n += 1
    return n


def from_source(out, src_path):
    src = Pcap.read(src_path)
    R = src.records
    total = giop_requests_in(R)

    write(out, "empty.pcap", b"")
    note("empty", "0 requests")
    write(out, "text.pcap", b"This is not a capture.\nIt is a text file with some lines.\n" * 20)
    note("text", "0 requests")
    write(out, "header_only.pcap", src.header())
    note("header_only", "0 requests")
    write(out, "short_file_header.pcap", src.header()[:10])
    note("short_file_header", "0 requests")

    # N good records, then a record whose data stops early
    n = 1000
    sec, frac, cap, wire, data = R[n]
    write(out, "cut_mid_record.pcap",
          src.to_bytes(R[:n]) + struct.pack("<IIII", sec, frac, cap, wire) + data[:cap // 2])
    write(out, "cut_mid_record.ref.pcap", src.to_bytes(R[:n]))
    note("cut_mid_record", "%d requests in the %d good records" % (giop_requests_in(R[:n]), n))

    # N good records, then 7 bytes of the next record header
    n = 1501
    write(out, "cut_mid_record_header.pcap", src.to_bytes(R[:n]) + src.record(R[n])[:7])
    write(out, "cut_mid_record_header.ref.pcap", src.to_bytes(R[:n]))
    note("cut_mid_record_header", "%d requests in the %d good records" % (giop_requests_in(R[:n]), n))

    # a record header claiming 2 GB of data
    n = 700
    sec, frac, cap, wire, data = R[n]
    write(out, "huge_caplen.pcap",
          src.to_bytes(R[:n]) + struct.pack("<IIII", sec, frac, 0x7FFFFFFF, 0x7FFFFFFF) + data)
    write(out, "huge_caplen.ref.pcap", src.to_bytes(R[:n]))
    note("huge_caplen", "%d requests in the %d good records" % (giop_requests_in(R[:n]), n))

    # like `editcap -s N`: snaplen in the file header and each record's caplen
    for snap in (40, 74, 80, 96):
        write(out, "snaplen%d.pcap" % snap,
              src.header(snaplen=snap) + b"".join(Pcap.record(r, snap) for r in R))
    note("snaplen40", "%d requests; every TCP header is cut" % total)
    note("snaplen74", "%d requests; 8 GIOP bytes per segment: not even the 12-byte header" % total)
    note("snaplen80", "%d requests; 14 GIOP bytes per segment: no request id" % total)
    note("snaplen96", "%d requests; 30 GIOP bytes per segment: request ids, no operations" % total)

    write(out, "linktype105.pcap", src.to_bytes(linktype=105))
    note("linktype105", "0 requests (link type refused)")

    # pcapng: a faithful copy, then one with a corrupt block, one cut mid-block
    blocks = pcapng_bytes(R, snaplen=src.snaplen)
    write(out, "pcapng_ok.pcapng", b"".join(blocks))
    note("pcapng_ok", "%d requests" % total)
    n = 2000  # EPBs before the bad one (blocks[0:2] are SHB and IDB)
    bad = bytearray(blocks[2 + n])
    struct.pack_into("<I", bad, 4, 0x00FFFFF0)  # block total length: 16 MB, beyond the file
    write(out, "pcapng_corrupt_block.pcapng", b"".join(blocks[:2 + n]) + bytes(bad) + b"".join(blocks[3 + n:]))
    write(out, "pcapng_corrupt_block.ref.pcapng", b"".join(blocks[:2 + n]))
    note("pcapng_corrupt_block", "%d requests in the %d good blocks" % (giop_requests_in(R[:n]), n))
    bad = bytearray(blocks[2 + n])
    struct.pack_into("<I", bad, len(bad) - 4, 0x99)  # trailing length differs from the leading one
    write(out, "pcapng_bad_trailer.pcapng", b"".join(blocks[:2 + n]) + bytes(bad) + b"".join(blocks[3 + n:]))
    write(out, "pcapng_bad_trailer.ref.pcapng", b"".join(blocks[:2 + n]))
    note("pcapng_bad_trailer", "%d requests in the %d good blocks" % (giop_requests_in(R[:n]), n))
    n = 3001
    write(out, "pcapng_cut.pcapng", b"".join(blocks[:2 + n]) + blocks[2 + n][:30])
    write(out, "pcapng_cut.ref.pcapng", b"".join(blocks[:2 + n]))
    note("pcapng_cut", "%d requests in the %d good blocks" % (giop_requests_in(R[:n]), n))

    # classic pcap time stamps past 2038 (ts_sec >= 2^31: unsigned in the format,
    # negative if read as a signed 32-bit number): the same capture, in 2040
    shift = 2208988800 - R[0][0]
    write(out, "pcap_ts_2040.pcap", src.to_bytes([(s + shift, f, c, w, d) for (s, f, c, w, d) in R]))
    note("pcap_ts_2040", "%d requests, time stamps from 2040-01-01 (ts_sec 2208988800)" % total)

    # pcapng whose time stamps do not fit in int64 nanoseconds (if_tsoffset)
    # classic pcap time stamps past 2038 (ts_sec >= 2^31: unsigned in the format,
    # negative if read as a signed 32-bit number): the same capture, in 2040
    shift = 2208988800 - R[0][0]
    write(out, "pcap_ts_2040.pcap", src.to_bytes([(s + shift, f, c, w, d) for (s, f, c, w, d) in R]))
    note("pcap_ts_2040", "%d requests, time stamps from 2040-01-01 (ts_sec 2208988800)" % total)

    # pcapng whose time stamps do not fit in int64 nanoseconds: if_tsresol 10^0
    # (units of a second) and 64-bit time stamps around 2^62 s
    write(out, "pcapng_huge_ts.pcapng",
          b"".join(pcapng_bytes(R[:200], tsresol=0, ts_override=lambda i: (1 << 62) + i)))
    note("pcapng_huge_ts", "%d requests, time stamps 2^62 s after 1970" % giop_requests_in(R[:200]))


def synthetic(out):
    # 1. random bytes on a GIOP port, from both sides
    rng = random.Random(2809)
    cap = Capture()
    conn = Conn(cap).handshake()
    for _ in range(20):
        conn.send(0, bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 1400))), ack_after=False)
        conn.send(1, bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 300))))
    conn.close()
    write(out, "random_2809.pcap", cap.pcap())
    note("random_2809", "0 requests")

    # 2. five good calls, then random bytes on the same connection
    rng = random.Random(2810)
    cap = Capture()
    conn = Conn(cap).handshake()
    good_calls(conn, rng, 2, 5)
    ref = cap.pcap()
    for _ in range(10):
        conn.send(0, bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 1400))))
    conn.close()
    write(out, "random_after_calls.pcap", cap.pcap())
    write(out, "random_after_calls.ref.pcap", ref)
    note("random_after_calls", "5 requests before the random bytes")

    # 3. GIOP headers with absurd sizes in an otherwise valid stream
    for name, size in (("giop_size_ffffffff", 0xFFFFFFFF), ("giop_size_0", 0)):
        rng = random.Random(size & 0xFFFF)
        cap = Capture()
        conn = Conn(cap).handshake()
        rid = good_calls(conn, rng, 2, 3)
        ref = cap.pcap()
        bad = request12(rid, "echoString", body=echo_body(rng), size=size)
        conn.call(bad, reply12(rid, 0, body=echo_body(rng)))
        good_calls(conn, rng, rid + 2, 3)
        conn.close()
        write(out, name + ".pcap", cap.pcap())
        write(out, name + ".ref.pcap", ref)
        note(name, "3 good requests, the bad one, 3 good requests")

    # 4. an unsupported GIOP version in the middle of a stream
    rng = random.Random(99)
    cap = Capture()
    conn = Conn(cap).handshake()
    rid = good_calls(conn, rng, 2, 3)
    ref = cap.pcap()
    conn.call(giop(9, 0, request12(rid, "echoString")[12:], major=9), reply12(rid, 0))
    good_calls(conn, rng, rid + 2, 3)
    conn.close()
    write(out, "giop_bad_version.pcap", cap.pcap())
    write(out, "giop_bad_version.ref.pcap", ref)
    note("giop_bad_version", "3 good requests, the GIOP 9.0 one, 3 good requests")

    # 5. service-context count 0xffffffff (GIOP 1.2: after the operation; 1.0: first)
    rng = random.Random(5)
    cap = Capture()
    conn = Conn(cap).handshake()
    rid = good_calls(conn, rng, 2, 2)
    ref = cap.pcap()
    conn.call(request12(rid, "echoString", ctx_count=0xFFFFFFFF, body=echo_body(rng)), reply12(rid, 0))
    good_calls(conn, rng, rid + 2, 2)
    conn.close()
    c2 = Conn(cap, cport=40001).handshake()
    c2.call(request10(100, "echoString", body=echo_body(rng)), reply10(100))
    c2.call(request10(101, "echoString", ctx_count=0xFFFFFFFF, body=echo_body(rng)), reply10(101))
    c2.call(request10(102, "echoString", body=echo_body(rng)), reply10(102))
    c2.close()
    write(out, "sc_count_ffffffff.pcap", cap.pcap())
    write(out, "sc_count_ffffffff.ref.pcap", ref)
    note("sc_count_ffffffff", "1.2: 2 good, the bad one, 2 good; 1.0: 1 good, the bad one, 1 good")

    # 6. strings: no NUL (tolerated), zero length (tolerated), huge lengths (malformed)
    rng = random.Random(6)
    cap = Capture()
    conn = Conn(cap).handshake()
    conn.call(request12(2, "opNoNul", op_nul=False, body=echo_body(rng)), reply12(2, 0))
    conn.call(request12(4, "", op_nul=False, op_len=0, body=echo_body(rng)), reply12(4, 0))
    conn.call(request12(6, "echoString", body=echo_body(rng)), reply12(6, 0))
    conn.close()
    write(out, "string_no_nul.pcap", cap.pcap())
    note("string_no_nul", "3 requests: op without NUL, op of length 0, a normal one")

    rng = random.Random(7)
    cap = Capture()
    conn = Conn(cap).handshake()
    rid = good_calls(conn, rng, 2, 2)
    ref = cap.pcap()
    conn.call(request12(rid, "echoString", op_len=0xFFFFFFF0, body=echo_body(rng)), reply12(rid, 0))
    conn.call(request12(rid + 2, "echoString", key_len=0x7FFFFFFF, body=echo_body(rng)), reply12(rid + 2, 0))
    good_calls(conn, rng, rid + 4, 2)
    conn.close()
    write(out, "string_huge_len.pcap", cap.pcap())
    write(out, "string_huge_len.ref.pcap", ref)
    note("string_huge_len", "2 good, op length 0xfffffff0, key length 0x7fffffff, 2 good")

    # 7. a Fragment chain that never ends (20000 fragments, more-fragments always set)
    rng = random.Random(8)
    cap = Capture()
    conn = Conn(cap).handshake()
    rid = good_calls(conn, rng, 2, 1)
    first = request12(rid, "echoOctets", more=True, body=b"\0" * 64)
    total = len(first)
    conn.send(0, first, ack_after=False)
    frag = fragment12(rid, b"\xab" * 200, more=True)
    for i in range(20000):
        conn.send(0, frag, ack_after=(i % 50 == 49))
        total += len(frag)
    conn.close()
    write(out, "fragments_endless.pcap", cap.pcap())
    note("fragments_endless", "2 requests; the second: %d bytes in 20001 messages, never finished" % total)

    # 8. Fragments with no start (1.2 with unknown ids, 1.1 with none before), between good calls
    rng = random.Random(9)
    cap = Capture()
    conn = Conn(cap).handshake()
    rid = good_calls(conn, rng, 2, 2)
    conn.send(0, fragment12(999, b"\x11" * 40, more=True), ack_after=False)
    conn.send(0, fragment12(999, b"\x11" * 40, more=False), ack_after=False)
    conn.send(1, fragment12(rid - 2, b"\x22" * 40, more=False))  # a reply fragment after the reply ended
    rid = good_calls(conn, rng, rid, 2)
    conn.close()
    c2 = Conn(cap, cport=40001).handshake()
    c2.send(0, fragment11(b"\x33" * 40, more=True), ack_after=False)
    c2.send(0, fragment11(b"\x33" * 40, more=False))
    c2.call(request10(7, "echoString", minor=1, body=echo_body(rng)), reply10(7, minor=1))
    c2.send(1, fragment11(b"\x44" * 40, more=False))
    c2.close()
    write(out, "fragments_no_start.pcap", cap.pcap())
    note("fragments_no_start", "5 requests (4 on a 1.2 connection, 1 on a 1.1 connection)")

    # 9. request-id reuse: the same id twice before its reply
    rng = random.Random(10)
    cap = Capture()
    conn = Conn(cap).handshake()
    conn.send(0, request12(7, "first", body=echo_body(rng)))
    conn.send(0, request12(7, "second", body=echo_body(rng)))
    conn.send(1, reply12(7, 0))
    conn.call(request12(9, "third", body=echo_body(rng)), reply12(9, 0))
    conn.close()
    write(out, "request_id_reuse.pcap", cap.pcap())
    note("request_id_reuse", "3 requests: id 7 twice (the first gets NO_REPLY), id 9")

    # 10. overlapping TCP segments with different contents: the first bytes seen win
    rng = random.Random(11)
    cap = Capture()
    conn = Conn(cap).handshake()
    m = request12(2, "overlapOp", body=echo_body(rng, 64))
    half = 40
    conn.raw(0, 0, m[:half + 20])
    # covers [half, len): its first 20 bytes overlap with different contents
    conn.raw(0, half, b"X" * 20 + m[half + 20:])
    conn.seq[0] += len(m)
    conn.send(1, reply12(2, 0))
    m2 = request12(4, "retransOp", body=echo_body(rng, 64))
    conn.send(0, m2, ack_after=False)
    # an entire retransmission of bytes already seen, with different contents
    conn.raw(0, -len(m2), b"GIOP\x01\x02\x01\x00" + b"Z" * (len(m2) - 8))
    conn.send(1, reply12(4, 0))
    conn.close()
    write(out, "overlap_diff.pcap", cap.pcap())
    note("overlap_diff", "2 requests; overlapOp (overlap rewritten), retransOp (1 retransmission)")

    # 11. sequence numbers that wrap around 2^32 in both directions, with and without SYN
    rng = random.Random(12)
    cap = Capture()
    conn = Conn(cap, isn_c=0xFFFFFF00, isn_s=0xFFFFFFF0).handshake()
    good_calls(conn, rng, 2, 50)
    conn.close()
    c2 = Conn(cap, cport=40002, isn_c=0xFFFFFC00, isn_s=0xFFFFFE00)  # joined mid-connection
    good_calls(c2, rng, 1000, 50)
    c2.close()
    write(out, "seq_wrap.pcap", cap.pcap())
    note("seq_wrap", "100 requests: 50 with SYNs, 50 joined mid-connection, both across 2^32")

    # 12. IPv6 extension-header chains: 4 headers (fine), 40 (hostile), one running past the packet
    rng = random.Random(13)
    cap = Capture()
    ok_chain = [(0, ext_opts(0)), (60, ext_opts(1)), (43, ext_opts(0)), (60, ext_opts(2))]
    conn = Conn(cap, cli="fd00::1", srv="fd00::2", v6=True, ext=ok_chain).handshake()
    good_calls(conn, rng, 2, 5)
    conn.close()
    long_chain = [(0, ext_opts(0))] + [(60, ext_opts(0))] * 39
    c2 = Conn(cap, cli="fd00::1", srv="fd00::2", cport=40001, v6=True, ext=long_chain).handshake()
    good_calls(c2, rng, 2, 5)
    c2.close()
    past = [(60, ext_opts(0)[:1] + b"\xff" + ext_opts(0)[2:])]  # claims 2048 bytes
    c3 = Conn(cap, cli="fd00::1", srv="fd00::2", cport=40002, v6=True, ext=past).handshake()
    good_calls(c3, rng, 2, 5)
    c3.close()
    write(out, "ipv6_ext_chain.pcap", cap.pcap())
    note("ipv6_ext_chain", "15 requests, 5 of them decodable (4 ext headers); 40 headers; a header past the packet")

    # 12b. two pipelined requests in one segment, captured up to 8 bytes into the
    #      second one's 12-byte GIOP header (a snapshot length cutting a header)
    rng = random.Random(16)
    cap = Capture()
    conn = Conn(cap).handshake()
    rid = good_calls(conn, rng, 2, 2)
    ref = cap.pcap()
    a = request12(rid, "pipeA", body=echo_body(rng))
    b = request12(rid + 2, "pipeB", body=echo_body(rng))
    fr = conn.frame(0, conn.seq[0], PSH, a + b)
    cap.add(fr, caplen=len(fr) - len(b) + 8)
    conn.seq[0] += len(a) + len(b)
    conn.send(1, reply12(rid, 0) + reply12(rid + 2, 0))
    good_calls(conn, rng, rid + 4, 2)
    conn.close()
    write(out, "snap_inside_second_header.pcap", cap.pcap())
    write(out, "snap_inside_second_header.ref.pcap", ref)
    note("snap_inside_second_header", "6 requests; the 4th (pipeB) has only 8 bytes of its header captured")

    # 12c. a reply whose request is held behind a hole (its first 20 bytes were
    #      not captured), and an open-call table so small (--max-open-calls 2) that
    #      two requests on another connection push the parked reply out
    rng = random.Random(17)
    cap = Capture()
    conn = Conn(cap).handshake()
    req = request12(2, "heldReq", body=echo_body(rng))
    conn.raw(0, 20, req[20:])           # the first 20 bytes never captured
    conn.send(1, reply12(2, 0))         # acks up to the hole only
    c2 = Conn(cap, cport=40001).handshake()
    c2.send(0, request12(10, "openX", body=echo_body(rng)), ack_after=False)
    c2.send(0, request12(12, "openY", body=echo_body(rng)), ack_after=False)
    write(out, "parked_reply_evicted.pcap", cap.pcap())
    note("parked_reply_evicted", "3 requests, one of them (heldReq) without its GIOP header in the capture")

    # 13. broken IPv4/TCP headers between good calls: IHL 4, TCP data offset 3,
    #     a record whose caplen exceeds its wire length
    rng = random.Random(14)
    cap = Capture()
    conn = Conn(cap).handshake()
    rid = good_calls(conn, rng, 2, 2)
    fr = bytearray(conn.frame(0, conn.seq[0], PSH, b"GIOP junk"))
    fr[14] = 0x44
    cap.add(bytes(fr))
    cap.add(conn.frame(0, conn.seq[0], PSH, b"GIOP junk", doff_words=3))
    fr = conn.frame(0, conn.seq[0], 0)
    cap.add(fr, wirelen=len(fr) - 10)
    good_calls(conn, rng, rid, 2)
    conn.close()
    write(out, "bad_ip_tcp_headers.pcap", cap.pcap())
    note("bad_ip_tcp_headers", "4 requests around 3 frames with broken IPv4/TCP headers")

    # 14. a TCP data offset (60 bytes) beyond the IP packet (20 bytes of TCP), in a
    #     frame captured whole: an invalid header, not one cut by the snapshot length
    rng = random.Random(15)
    cap = Capture()
    conn = Conn(cap).handshake()
    rid = good_calls(conn, rng, 2, 2)
    cap.add(conn.frame(0, conn.seq[0], 0, b"", doff_words=15))
    good_calls(conn, rng, rid, 2)
    conn.close()
    write(out, "tcp_doff_past_packet.pcap", cap.pcap())
    note("tcp_doff_past_packet", "4 requests around a frame whose TCP header claims 60 of its 20 bytes")


def main(argv):
    args = argv[1:]
    src = DEFAULT_SOURCE
    show = False
    if "--list" in args:
        args.remove("--list")
        show = True
    if "--source" in args:
        i = args.index("--source")
        src = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1 or args[0].startswith("-"):
        sys.stderr.write("usage: make_bad.py OUTDIR [--source CAPTURE.pcap] [--list]\n")
        return 2
    out = args[0]
    os.makedirs(out, exist_ok=True)
    if not os.path.exists(src):
        sys.stderr.write("make_bad.py: source capture %s missing\n" % src)
        return 2
    from_source(out, src)
    synthetic(out)
    if show:
        for k in sorted(NOTES):
            print("%-24s %s" % (k, NOTES[k]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
