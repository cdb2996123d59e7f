#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The include graph of the tree against the data flow (`make check-layers`).

    tests/check_layers.py [--dot FILE] [--quiet] [--top DIR]
    tests/check_layers.py --self-test


Reads every quoted #include of the C sources and headers of ebpf/, decoders/, analysis/,
probe/, bench/ and tests/. A module is a file's path without its extension (a private header
NAME_impl.h is NAME's). Two rules, and the status says whether the tree keeps them:

  - no import circle: no module reaches itself through the includes of its files;
  - no include against the data flow: a module includes only modules of its own layer or of
    a layer below (LAYERS, lowest first). Inside the engine the stages are layers of their
    own, in the order the data goes through them: a stage hands its output to the next by
    calling it, so it includes the stages after it, never one before it, and none includes
    the engine that composes them.

Prints each violation as FILE -> INCLUDED (why); exit 0 when there is none, 1 otherwise.
--top reads another tree (default: the one this script is in). --self-test runs the check on
small trees it writes into a temporary folder (a circle, an include against the flow, a clean
one) and exits 1 unless it fails the first two and passes the third (make check runs it).
"""
import argparse
import fnmatch
import os
import re
import sys
import tempfile

# (pattern of a module path, layer); the first that matches; lowest layer first
LAYERS = [
    ("ebpf/*", 0),                      # the shared kernel-user ABI headers
    ("decoders/*", 1),
    # the analysis' plain types and tools, used by all of it
    ("analysis/call", 2), ("analysis/counters", 2), ("analysis/endpoint", 2),
    ("analysis/fmt_num", 2), ("analysis/hist", 2), ("analysis/intern", 2),
    ("analysis/flow_hash", 2), ("analysis/out_file", 2), ("analysis/text_out", 2),
    ("analysis/table_mem", 2), ("analysis/conn", 2),
    # the engine's stages, downstream first (a stage includes only those after it in the flow)
    ("analysis/problems", 3), ("analysis/pending", 4), ("analysis/calls", 5),
    ("analysis/evidence", 6), ("analysis/pairing", 7), ("analysis/framer", 8),
    ("analysis/reasm", 9), ("analysis/flows", 10),
    # the engine: composes the stages (engine.h is what everything after it sees)
    ("analysis/engine", 11), ("analysis/engine_shard", 11), ("analysis/call_merge", 11),
    # what takes the engine's calls: statistics, sinks, reports, merge, attach's logs
    ("analysis/*", 12),
    ("probe/*", 13),
    ("bench/*", 14),
    ("tests/*", 14),
]
ROOTS = ["ebpf", "decoders", "analysis", "probe", "bench", "tests"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def module(path):
    stem = os.path.splitext(path)[0]
    if stem.endswith(".bpf"):
        stem = stem[:-4]
    if stem.endswith("_impl"):
        stem = stem[:-5]
    return stem


def layer(mod):
    for pat, n in LAYERS:
        if fnmatch.fnmatch(mod, pat):
            return n
    return None


def sources(top):
    out = []
    for root in ROOTS:
        for d, _, files in os.walk(os.path.join(top, root)):
            for f in files:
                if f.endswith((".c", ".h")):
                    out.append(os.path.relpath(os.path.join(d, f), top))
    return sorted(out)


def edges(top, files):
    """(file, included file) for every quoted include that names a file of the tree."""
    out = []
    for f in files:
        with open(os.path.join(top, f), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for inc in INCLUDE.findall(text):
            p = os.path.normpath(os.path.join(os.path.dirname(f), inc))
            if os.path.exists(os.path.join(top, p)):
                out.append((f, p))
            # else: generated (build/gen, build/ebpf skeletons) or a system header
    return out


def circles(graph):
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def check(top, dot=None):
    """(files, includes, modules, violations) of the tree at top."""
    files = sources(top)
    es = edges(top, files)
    graph, bad = {}, []
    for f, p in es:
        a_mod, b_mod = module(f), module(p)
        graph.setdefault(a_mod, set())
        graph.setdefault(b_mod, set())
        if a_mod == b_mod:
            continue
        graph[a_mod].add(b_mod)
        la, lb = layer(a_mod), layer(b_mod)
        if la is None or lb is None:
            bad.append("%s -> %s (no layer for %s: add it to LAYERS)" % (f, p, a_mod if la is None else b_mod))
        elif lb > la:
            bad.append("%s -> %s (against the data flow: layer %d includes layer %d)" % (f, p, la, lb))
    circ = circles(graph)
    for c in circ:
        bad.append("import circle: %s" % " <-> ".join(c))
    if dot:
        with open(dot, "w", encoding="utf-8") as fh:
            fh.write("digraph includes {\n  rankdir=TB;\n")
            for m in sorted(graph):
                for n in sorted(graph[m]):
                    fh.write('  "%s" -> "%s";\n' % (m, n))
            fh.write("}\n")
    return files, es, graph, bad


# the self-test's trees: {path: [included names]}; whether check() must find a violation
SELF_TESTS = [
    ("circle", True, {"analysis/stats.c": ["stats.h"], "analysis/stats.h": ["report.h"],
                      "analysis/report.h": ["stats.h"]}),
    ("against the flow", True, {"analysis/pairing.c": ["pairing.h", "framer.h"],
                                "analysis/pairing.h": [], "analysis/framer.h": []}),
    ("engine included by a stage", True, {"analysis/flows.c": ["engine.h"], "analysis/engine.h": []}),
    ("clean", False, {"analysis/framer.c": ["framer.h"], "analysis/framer.h": ["pairing.h", "../decoders/giop/giop.h"],
                      "analysis/pairing.h": ["calls.h"], "analysis/calls.h": ["call.h"], "analysis/call.h": [],
                      "decoders/giop/giop.h": [], "probe/cmd_read.c": ["../analysis/engine.h"],
                      "analysis/engine.h": ["flows.h"], "analysis/flows.h": ["reasm.h"], "analysis/reasm.h": []}),
]


def self_test():
    ok = True
    for name, want_bad, tree in SELF_TESTS:
        with tempfile.TemporaryDirectory(prefix="check-layers-") as top:
            for path, incs in tree.items():
                os.makedirs(os.path.join(top, os.path.dirname(path)), exist_ok=True)
                with open(os.path.join(top, path), "w", encoding="utf-8") as fh:
                    fh.write("".join('#include "%s"\n' % i for i in incs))
            bad = check(top)[3]
        if bool(bad) != want_bad:
            ok = False
        print("check-layers self-test: %s: %s (%s)" % (name, "ok" if bool(bad) == want_bad else "WRONG",
                                                       "; ".join(bad) if bad else "no violation"))
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dot", help="write the module graph in Graphviz form to this file")
    ap.add_argument("--quiet", action="store_true", help="only the violations and the status line")
    ap.add_argument("--top", help="the tree to read (default: this script's)")
    ap.add_argument("--self-test", action="store_true", help="check the check on small trees it writes")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    top = a.top or os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    files, es, graph, bad = check(top, a.dot)
    if not a.quiet:
        print("check-layers: %d files, %d includes between %d modules" % (len(files), len(es), len(graph)))
    for b in bad:
        print("check-layers: " + b)
    print("check-layers: %s" % ("ok: no import circle, no include against the data flow" if not bad
                                 else "%d violations" % len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
