#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""offline_bench.py: giopscope's offline figures, measured next to tshark, a bare
libpcap loop and cat, in one run; the results go to a JSON file that
offline_report.py turns into docs/benchmarks.md sections and SVG plots.

usage: offline_bench.py quick|full [-o RESULTS.json]

environment:
  BENCH_BIN   where giopgen, bare_loop and the giopscope under test are
              (default build/bench; run.sh puts a private copy of build/giopscope
              there, so a rebuild during the run cannot change the binary measured)
  BENCH_DATA  where generated captures are kept between runs (default BENCH_BIN/data);
              a capture is made again when the generator or its options change

What it measures (see docs/benchmarks.md for the why):
  1. throughput: on each capture, rounds in which every arm runs once, the order
     rotating from round to round (A B C D, B C D A, ...), so that drift in the
     machine's speed hits every arm alike; medians over rounds; each ratio to the
     bare loop is taken within a round, then the median of those is reported.
     Every command runs under /usr/bin/time -f '%e %U %S %M' (peak RSS = %M).
  2. tshark's GIOP dissector on the smaller captures only (it is quadratic).
  3. instructions per packet with callgrind, on two small captures: the
     difference between them divided by the difference in packets is the cost
     of one more packet, start-up excluded.
  4. peak RSS on 10x and 100x more calls (giopgen piped into giopscope read -),
     and on a capture in which every request is sent before the first reply.
  5. (full) a perf profile of read and read --pairs on the largest file.
"""
import argparse
import hashlib
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

PLANS = {
    # a first look in under 2 minutes
    "quick": dict(sizes=[2000, 4000, 8000], tshark_sizes=[2000, 4000, 8000], big=100000,
                  rounds=3, tshark_rounds=2, callgrind=[2000, 4000], mem_base=10000,
                  open_all=50000, perf=False),
    "full": dict(sizes=[10000, 20000, 40000, 80000], tshark_sizes=[10000, 20000, 40000, 80000],
                 big=1000000, rounds=5, tshark_rounds=3, callgrind=[20000, 40000],
                 mem_base=1000000, open_all=1000000, perf=True),
}
SEED = 1

BIN = os.environ.get("BENCH_BIN", "build/bench")
DATA = os.environ.get("BENCH_DATA", os.path.join(BIN, "data"))
GIOPSCOPE = os.path.join(BIN, "giopscope")
GIOPGEN = os.path.join(BIN, "giopgen")
BARE = os.path.join(BIN, "bare_loop")
TIME = "/usr/bin/time"

# tshark extracting, per GIOP message, what giopscope needs to pair it; the same
# preferences as tests/oracle/tshark_pairs.py (TCP and GIOP desegmentation on)
TSHARK_PREFS = ["-o", "tcp.desegment_tcp_streams:TRUE", "-o", "giop.desegment_giop_messages:TRUE",
                "-o", "giop.reassemble:FALSE", "-o", "tcp.try_heuristic_first:TRUE",
                "-o", "tcp.check_checksum:FALSE"]
TSHARK_FIELDS = ["frame.time_epoch", "tcp.stream", "giop.type", "giop.request_id",
                 "giop.request_op", "giop.rsp_expected", "giop.response_flag",
                 "giop.replystatus", "giop.len"]


def note(msg):
    sys.stderr.write("offline_bench: %s\n" % msg)
    sys.stderr.flush()


def sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


def shell_text(argv, stdout=None, stdin=None):
    s = " ".join(shlex.quote(a) for a in argv)
    if stdin:
        s = "%s | %s" % (stdin, s)
    if stdout:
        s += " > " + stdout
    return s


# ------------------------------------------------------------------ running
def timed(argv, stdout_null=True, pipe_from=None, capture_stderr=False):
    """Runs argv under /usr/bin/time; wall clock from here (finer than %e).
    pipe_from: argv of a producer whose stdout feeds argv's stdin (not timed)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        cmd = [TIME, "-f", "%e %U %S %M", "-o", tf.name] + argv
        err = subprocess.PIPE
        t0 = time.perf_counter()
        if pipe_from:
            prod = subprocess.Popen(pipe_from, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            p = subprocess.run(cmd, stdin=prod.stdout, stdout=subprocess.DEVNULL if stdout_null
                               else subprocess.PIPE, stderr=err)
            prod.stdout.close()
            prc = prod.wait()
        else:
            p = subprocess.run(cmd, stdout=subprocess.DEVNULL if stdout_null else subprocess.PIPE,
                               stderr=err)
            prc = 0
        wall = time.perf_counter() - t0
        lines = [l for l in tf.read().splitlines() if l.strip()]
    if p.returncode != 0 or prc != 0 or not lines:
        raise RuntimeError("%s failed (rc %d, producer rc %d): %s" % (
            shell_text(argv), p.returncode, prc, p.stderr.decode(errors="replace")[-500:]))
    e, u, s, m = lines[-1].split()
    r = dict(wall=wall, user=float(u), sys=float(s), cpu=float(u) + float(s), rss_kb=int(m))
    if not stdout_null:
        r["stdout"] = p.stdout.decode(errors="replace")
    if capture_stderr:
        r["stderr"] = p.stderr.decode(errors="replace")
    return r


def med(xs):
    return statistics.median(xs) if xs else None


# ------------------------------------------------------------------ captures
def capture(calls, mix="default", open_all=False):
    """The capture of `calls` calls (made once, kept in DATA), with its facts."""
    os.makedirs(DATA, exist_ok=True)
    gen_sha = sha(GIOPGEN)
    name = "%s%s-%d-s%d" % (mix, "-openall" if open_all else "", calls, SEED)
    path = os.path.join(DATA, name + ".pcap")
    meta_path = os.path.join(DATA, name + ".json")
    argv = [GIOPGEN, "--calls", str(calls), "--seed", str(SEED), "--mix", mix]
    if open_all:
        argv.append("--open-all")
    argv += ["-o", path]
    try:
        with open(meta_path) as f:
            meta = json.load(f)
        if meta["gen_sha"] == gen_sha and meta["argv"] == argv and \
                os.path.getsize(path) == meta["bytes"]:
            return meta
    except (OSError, ValueError, KeyError):
        pass
    note("generating %s" % path)
    t0 = time.perf_counter()
    p = subprocess.run(argv, stderr=subprocess.PIPE, check=True)
    summary = p.stderr.decode().strip()
    m = re.search(r"(\d+) packets", summary)
    meta = dict(path=path, name=name, calls=calls, mix=mix, open_all=open_all, argv=argv,
                command=shell_text(argv), gen_sha=gen_sha, summary=summary,
                packets=int(m.group(1)), bytes=os.path.getsize(path),
                gen_seconds=round(time.perf_counter() - t0, 2))
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=1)
    return meta


# ------------------------------------------------------------------ arms
def arms_for(path, with_tshark):
    a = [
        ("cat", ["cat", path], "/dev/null"),
        ("bare_loop", [BARE, path], "/dev/null"),
        ("read", [GIOPSCOPE, "read", path], "/dev/null"),
        ("read_pairs_csv", [GIOPSCOPE, "read", path, "--pairs", "--format", "csv", "-o", "/dev/null"],
         None),
    ]
    if with_tshark:
        t = ["tshark", "-n", "-r", path] + TSHARK_PREFS + ["-Y", "giop", "-T", "fields"]
        for f in TSHARK_FIELDS:
            t += ["-e", f]
        a.append(("tshark", t, "/dev/null"))
    return a


def throughput(cap, rounds, with_tshark, tshark_rounds):
    """Interleaved rounds over the arms of one capture."""
    arms = arms_for(cap["path"], with_tshark)
    subprocess.run(["cat", cap["path"]], stdout=subprocess.DEVNULL, check=True)   # page cache
    runs = {name: [] for name, _, _ in arms}
    for r in range(max(rounds, tshark_rounds if with_tshark else 0)):
        order = arms[r % len(arms):] + arms[:r % len(arms)]
        for name, argv, _ in order:
            if name == "tshark" and r >= tshark_rounds:
                continue
            if name != "tshark" and r >= rounds:
                continue
            runs[name].append(timed(argv))
    out = {}
    for name, argv, redirect in arms:
        rs = runs[name]
        walls = [x["wall"] for x in rs]
        d = dict(command=shell_text(argv, redirect), n=len(rs), wall=walls,
                 cpu=[x["cpu"] for x in rs], rss_kb=[x["rss_kb"] for x in rs],
                 wall_med=med(walls), cpu_med=med([x["cpu"] for x in rs]),
                 rss_med_kb=med([x["rss_kb"] for x in rs]))
        # ratio to the bare loop within each round (same moment, same machine state)
        bare = runs["bare_loop"]
        k = min(len(rs), len(bare))
        d["ratio_wall"] = med([rs[i]["wall"] / bare[i]["wall"] for i in range(k)])
        d["ratio_cpu"] = med([rs[i]["cpu"] / bare[i]["cpu"] for i in range(k)
                              if bare[i]["cpu"] > 0])
        d["packets_per_s"] = cap["packets"] / d["wall_med"]
        d["calls_per_s"] = cap["calls"] / d["wall_med"]
        out[name] = d
    return out


# ------------------------------------------------------------------ callgrind
def callgrind(cap, arm, argv):
    with tempfile.TemporaryDirectory() as td:
        outf = os.path.join(td, "cg.out")
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + outf] + argv
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        total = None
        with open(outf) as f:
            for line in f:
                if line.startswith("totals:") or line.startswith("summary:"):
                    total = int(line.split()[1])
        ann = subprocess.run(["callgrind_annotate", "--threshold=95", outf],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode()
    funcs = []
    for line in ann.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*([\d.]+)%\)\s+(\S+):(\S+)(?:.*\[(\S+)\])?", line)
        if m:
            obj = os.path.basename(m.group(5) or "")
            fn = re.sub(r"\s.*", "", m.group(4))
            if fn.startswith("0x"):   # no symbols (libpcap): say whose code it is
                fn = "%s (%s, no symbols)" % (fn, obj or "?")
            funcs.append(dict(ir=int(m.group(1).replace(",", "")), pct=float(m.group(2)),
                              file=m.group(3), fn=fn, obj=obj))
    return dict(arm=arm, command=shell_text(cmd[:2] + ["--callgrind-out-file=OUT"] + argv),
                ir=total, packets=cap["packets"], calls=cap["calls"], top=funcs[:15])


def instructions(caps):
    out = []
    for cap in caps:
        p = cap["path"]
        for arm, argv in (("bare_loop", [BARE, p]), ("read", [GIOPSCOPE, "read", p]),
                          ("read_pairs_csv", [GIOPSCOPE, "read", p, "--pairs", "--format", "csv",
                                              "-o", "/dev/null"])):
            note("callgrind %s on %s" % (arm, cap["name"]))
            out.append(callgrind(cap, arm, argv))
    return out


# ------------------------------------------------------------------ memory
def summary_facts(text):
    facts = {}
    m = re.search(r"^calls (\d+):", text, re.M)
    if m:
        facts["calls"] = int(m.group(1))
    m = re.search(r"^packets (\d+)", text, re.M)
    if m:
        facts["packets"] = int(m.group(1))
    # bounds that were hit (docs/design.md, Bounds): a flat RSS must not come from
    # dropping calls; the summary lists non-zero counters on its "also:" line
    also = re.search(r"^also: (.*)$", text, re.M)
    counters = dict((k, int(v)) for k, v in re.findall(r"(\w+) (\d+)", also.group(1))) if also else {}
    facts["bounds"] = ["%s %d" % (k, v) for k, v in sorted(counters.items())
                       if v and k in ("connections_evicted", "open_calls_evicted", "rows_out_of_order",
                                      "strings_refused", "head_pool_full", "ooo_dropped_bytes")]
    return facts


def memory_streamed(calls, pairs):
    gen = [GIOPGEN, "--calls", str(calls), "--seed", str(SEED), "-q", "-o", "-"]
    argv = [GIOPSCOPE, "read", "-"]
    if pairs:
        argv += ["--pairs", "--format", "csv", "-o", "/dev/null", "--summary"]
    note("streaming %d calls into %s" % (calls, " ".join(argv[1:])))
    r = timed(argv, stdout_null=pairs, pipe_from=gen, capture_stderr=True)
    text = r.pop("stderr") if pairs else r.pop("stdout")
    r.update(summary_facts(text))
    r["command"] = shell_text(argv, "/dev/null" if not pairs else None, stdin=shell_text(gen))
    r["calls_expected"] = calls
    return r


def memory_file(cap, pairs):
    argv = [GIOPSCOPE, "read", cap["path"]]
    if pairs:
        argv += ["--pairs", "--format", "csv", "-o", "/dev/null", "--summary"]
    note("reading %s (%s)" % (cap["name"], "pairs" if pairs else "summary"))
    r = timed(argv, stdout_null=pairs, capture_stderr=True)
    text = r.pop("stderr") if pairs else r.pop("stdout")
    r.update(summary_facts(text))
    r["command"] = shell_text(argv, None if pairs else "/dev/null")
    r["calls_expected"] = cap["calls"]
    r["capture"] = cap["name"]
    return r


# ------------------------------------------------------------------ perf
def perf_profile(cap):
    out = {}
    for arm, extra in (("read", []), ("read_pairs_csv", ["--pairs", "--format", "csv", "-o", "/dev/null"])):
        with tempfile.TemporaryDirectory() as td:
            data = os.path.join(td, "perf.data")
            argv = [GIOPSCOPE, "read", cap["path"]] + extra
            rec = ["perf", "record", "-F", "2999", "-o", data, "--"] + argv
            p = subprocess.run(rec, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if p.returncode != 0:
                note("perf record failed: %s" % p.stderr.decode(errors="replace")[-300:])
                return None
            rep = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children",
                                  "--sort", "dso,symbol", "--percent-limit", "0.8"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode()
        rows = []
        for line in rep.splitlines():
            m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(\S+)", line)
            if m:
                rows.append(dict(pct=float(m.group(1)), dso=m.group(2), space=m.group(3),
                                 sym=m.group(4)))
        out[arm] = dict(command="perf record -F 2999 -- " + shell_text(argv) +
                        "; perf report --stdio --no-children --sort dso,symbol", top=rows[:25])
    return out


# ------------------------------------------------------------------ machine
def machine():
    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    def cmd(*a):
        try:
            return subprocess.run(a, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode().strip()
        except OSError:
            return ""
    return dict(nproc=os.cpu_count(), cpu_model=model, kernel=platform.release(),
                date=time.strftime("%Y-%m-%d %H:%M:%S %Z"), loadavg=load,
                commit=cmd("git", "describe", "--always", "--dirty"),
                tshark=cmd("tshark", "--version").splitlines()[0] if cmd("tshark", "--version") else "",
                libpcap=cmd(BARE, "--version") or "", giopscope_sha=sha(GIOPSCOPE),
                mem_total_kb=int(open("/proc/meminfo").read().split()[1]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=sorted(PLANS))
    ap.add_argument("-o", "--output", default=None)
    a = ap.parse_args()
    plan = PLANS[a.mode]
    out_path = a.output or os.path.join(BIN, "results-offline-%s.json" % a.mode)
    for exe in (GIOPSCOPE, GIOPGEN, BARE):
        if not os.access(exe, os.X_OK):
            sys.exit("offline_bench: %s is missing (run through bench/run.sh)" % exe)
    t_start = time.perf_counter()
    res = dict(mode=a.mode, plan=plan, machine=machine())

    # captures
    small = [capture(n) for n in sorted(set(plan["sizes"]) | set(plan["tshark_sizes"]))]
    big = capture(plan["big"])
    big_echo = capture(plan["big"], mix="echo")
    res["captures"] = [dict((k, v) for k, v in c.items() if k != "argv") for c in small + [big, big_echo]]

    def save(stage):
        # after every stage: a run cut short still leaves what it measured
        res["done"] = stage
        with open("/proc/loadavg") as f:
            res["machine"]["loadavg_end"] = f.read().split()[:3]
        res["seconds"] = round(time.perf_counter() - t_start, 1)
        with open(out_path + ".tmp", "w") as f:
            json.dump(res, f, indent=1)
        os.replace(out_path + ".tmp", out_path)

    # 1 + 2: throughput, every size, tshark on the small ones
    res["throughput"] = []
    for cap in small + [big, big_echo]:
        with_tshark = cap["calls"] in plan["tshark_sizes"] and cap["mix"] == "default"
        note("throughput on %s%s" % (cap["name"], " (with tshark)" if with_tshark else ""))
        rows = throughput(cap, plan["rounds"], with_tshark, plan["tshark_rounds"])
        res["throughput"].append(dict(capture=cap["name"], calls=cap["calls"], mix=cap["mix"],
                                      packets=cap["packets"], bytes=cap["bytes"], arms=rows))
    save("throughput")

    # 3: instructions per packet
    res["callgrind"] = instructions([capture(n) for n in plan["callgrind"]])
    save("callgrind")

    # 4: memory: the base capture, 10x streamed, all calls open at once, then 100x
    base = plan["mem_base"]
    mem = dict(base=base, file=[], streamed=[], open_all=[])
    res["memory"] = mem
    for cap in (big,) if big["calls"] == base else (capture(base),):
        for pairs in (False, True):
            mem["file"].append(memory_file(cap, pairs))
    for pairs in (False, True):
        r = memory_streamed(base * 10, pairs)
        r["factor"] = 10
        mem["streamed"].append(r)
    oa = capture(plan["open_all"], open_all=True)
    res["captures"].append(dict((k, v) for k, v in oa.items() if k != "argv"))
    mem["open_all"] = [memory_file(oa, False), memory_file(oa, True)]
    save("memory-10x")

    # 5: where the time goes
    if plan["perf"]:
        note("perf profile on %s" % big["name"])
        res["perf"] = perf_profile(big)
        save("perf")

    r = memory_streamed(base * 100, True)
    r["factor"] = 100
    mem["streamed"].append(r)
    save("all")
    note("results in %s (%.0f s)" % (out_path, res["seconds"]))


if __name__ == "__main__":
    main()
