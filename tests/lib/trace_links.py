#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The parent -> child links a Chrome/Perfetto JSON trace draws, bound the way Perfetto's JSON
importer binds flow events v1: an "s" event to the innermost complete ("X") slice open on its
track (pid, tid) at its ts, an "f" event with "bp":"e" to the slice enclosing its ts there.

usage: trace_links.py TRACE.json    prints one line per link: "PARENT => CHILD", each call as
                                    "client server request_id"; exits 1 when a flow event binds
                                    to no slice or a flow lacks its start or end
Used as a module: links(trace) -> (set of (parent_key, child_key), [problems])."""
import json
import sys


def calls_by_track(events):
    names = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"].split(" #")[0]
    slices = {}
    for e in events:
        if e.get("ph") != "X":
            continue
        track = (e["pid"], e["tid"])
        client, _, server = names.get(track, "? -> ?").partition(" -> ")
        key = (client, server, e["args"]["request_id"])
        slices.setdefault(track, []).append((e["ts"], e["ts"] + e["dur"], key))
    return slices


def enclosing(slices, track, ts, half_open):
    best = None
    for start, end, key in slices.get(track, []):
        inside = start <= ts < end if half_open else start <= ts <= end
        # the innermost: the latest start among those that hold ts
        if inside and (best is None or start >= best[0]):
            best = (start, key)
    return best[1] if best else None


def links(trace):
    events = trace["traceEvents"]
    slices = calls_by_track(events)
    starts, ends, problems = {}, {}, []
    for e in events:
        if e.get("ph") == "s":
            k = enclosing(slices, (e["pid"], e["tid"]), e["ts"], True)
            (starts.__setitem__(e["id"], k) if k else problems.append("flow %s starts in no slice" % e["id"]))
        elif e.get("ph") == "f":
            if e.get("bp") != "e":
                problems.append("flow %s ends without bp e" % e["id"])
            k = enclosing(slices, (e["pid"], e["tid"]), e["ts"], False)
            (ends.__setitem__(e["id"], k) if k else problems.append("flow %s ends in no slice" % e["id"]))
    out = set()
    for fid in set(starts) | set(ends):
        if fid not in starts or fid not in ends:
            problems.append("flow %s has no %s" % (fid, "start" if fid not in starts else "end"))
            continue
        out.add((starts[fid], ends[fid]))
    return out, problems


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        got, problems = links(json.load(f))
    for p, c in sorted(got, key=str):
        print("%s %s %s => %s %s %s" % (p + c))
    for p in problems:
        print("PROBLEM " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
