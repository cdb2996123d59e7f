/* SPDX-License-Identifier: BSD-2-Clause */
// work_client: omniORB client for the workloads IDL (bench/workloads/work.idl), the client side
// of bench/workloads.sh; it logs its own view of every call next to what the wire shows.
//
//   work_client [-ORB<option> <value>]... -i IORFILE -kind prims|recA|recU|any -way two|one
//               -bytes B [-n N] [-lat FILE.csv] [-q]
//   work_client [-ORB<option> <value>]... -deferred IORLIST [-rounds R] [-usec U] [-lat FILE.csv] [-q]
//
// Workload mode: N calls (default 1000, at most 10 000 000), one after the other on one thread
// and one connection, of echo<Kind> (-way two) or send<Kind> (oneway). The payload's element
// count is the one whose marshalled arguments (stamp, id, payload: CDR as in a GIOP 1.2 request
// body, which starts 8-aligned) come closest to B bytes; the client marshals them into a
// cdrMemoryStream to find it (CDR padding makes the size a step function of the count) and
// prints "client: kind=K way=W count=N arg_bytes=A" on stderr. The payload is built once; per
// call only stamp (CLOCK_REALTIME ns) and id (the call's seq) change. Echoes are checked after
// the call's end stamp, so the check is not in the logged time.
//   prims: sequence<Prims> (all primitive kinds); recA: sequence<RecA> (no CDR padding);
//   recU: sequence<RecU> (padding in every element); any: an Any holding sequence<double>.
//
// Deferred mode (DII deferred synchronous): IORLIST has one stringified IOR per line (N of them,
// at most 4096), every line a work_server of its own. Per round (R rounds, default 10), one
// Request for work(usec) (default 1000) per server is built, then each is sent by
// ORB::send_multiple_requests_deferred with a one-element sequence (t_start right before), then
// all N are collected with ORB::get_next_response (t_end as each comes back). omniORB's
// get_next_response only knows the requests sent through send_multiple_requests_deferred (a
// bare Request::send_deferred is not in its queue and it would wait forever), hence that call;
// it blocks on the oldest request still out when none has finished: the head-of-line wait is
// part of what the bench measures. Row: thread = server index, seq = round.
//
//   -lat    one CSV row per call: thread,seq,op,size,t_start_ns,t_end_ns,latency_ns,outcome
//           (size = element count, or usec in deferred mode; t_* = CLOCK_REALTIME right
//           before / after the call); outcome NO_EXCEPTION, ONEWAY, BAD_ECHO, SYSTEM_EXCEPTION:X
//
// The client stops after 20 bad calls in a row, prints "client: calls=N bad=N" on stderr and
// exits 1 if any call was bad, 2 on usage errors. Unless an -ORBclientCallTimeOutPeriod is
// given, calls time out after 30 s (bounded runs).

#include <work.hh>

#include "rig.hh"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

enum Kind { K_PRIMS, K_RECA, K_RECU, K_ANY };
const char* const kKindNames[] = {"prims", "recA", "recU", "any"};
const char* const kEchoOps[] = {"echoPrims", "echoRecA", "echoRecU", "echoAny"};
const char* const kSendOps[] = {"sendPrims", "sendRecA", "sendRecU", "sendAny"};

struct Row {
    unsigned thread, seq;
    const char* op;
    unsigned long size;
    long long t0, t1;
    std::string outcome;
};

[[noreturn]] void usage(const char* why)
{
    if (why)
        std::fprintf(stderr, "client: %s\n", why);
    std::fprintf(stderr,
                 "usage: work_client [-ORB<option> <value>]... -i IORFILE -kind prims|recA|recU|any\n"
                 "                   -way two|one -bytes B [-n N] [-lat FILE.csv] [-q]\n"
                 "       work_client [-ORB<option> <value>]... -deferred IORLIST [-rounds R] [-usec U]\n"
                 "                   [-lat FILE.csv] [-q]\n");
    std::exit(2);
}

unsigned long parse_num(const char* s, unsigned long max, const char* what)
{
    return rig::parse_num(s, max, what, usage);
}

// bounded: an IOR list of 4096 servers is well under 16 MiB
std::string read_text(const std::string& path)
{
    return rig::read_file("client", path, 16u << 20);
}

std::vector<std::string> lines_of(const std::string& s)
{
    std::vector<std::string> out;
    size_t p = 0;
    while (p < s.size() && out.size() < 4096) {
        size_t q = s.find('\n', p);
        if (q == std::string::npos)
            q = s.size();
        std::string l = s.substr(p, q - p);
        while (!l.empty() && (l.back() == '\r' || l.back() == ' '))
            l.pop_back();
        if (!l.empty())
            out.push_back(l);
        p = q + 1;
    }
    return out;
}

// The payloads, built once for a given element count.
struct Payload {
    Work::PrimsSeq prims;
    Work::RecASeq reca;
    Work::RecUSeq recu;
    CORBA::Any any;
};

void build(Kind k, CORBA::ULong n, Payload* p)
{
    switch (k) {
    case K_PRIMS:
        p->prims.length(n);
        for (CORBA::ULong i = 0; i < n; ++i) {
            Work::Prims& e = p->prims[i];
            e.o = static_cast<CORBA::Octet>(i);
            e.b = (i & 1) != 0;
            e.c = static_cast<CORBA::Char>('a' + i % 26);
            e.s = static_cast<CORBA::Short>(-static_cast<int>(i % 30000));
            e.us = static_cast<CORBA::UShort>(i % 60000);
            e.l = -static_cast<CORBA::Long>(i);
            e.ul = i * 3u;
            e.ll = -static_cast<CORBA::LongLong>(i) * 1000003LL;
            e.ull = static_cast<CORBA::ULongLong>(i) * 1000033ULL;
            e.f = static_cast<CORBA::Float>(i) * 0.25f;
            e.d = static_cast<CORBA::Double>(i) * 0.125;
        }
        break;
    case K_RECA:
        p->reca.length(n);
        for (CORBA::ULong i = 0; i < n; ++i) {
            Work::RecA& e = p->reca[i];
            e.d = static_cast<CORBA::Double>(i) * 0.5;
            e.ll = static_cast<CORBA::LongLong>(i) << 20;
            e.l = static_cast<CORBA::Long>(i);
            e.f = static_cast<CORBA::Float>(i) * 0.75f;
            e.s = static_cast<CORBA::Short>(i % 30000);
            e.us = static_cast<CORBA::UShort>(i % 60000);
            e.o = static_cast<CORBA::Octet>(i);
            e.c = static_cast<CORBA::Char>('A' + i % 26);
            e.b = (i & 1) == 0;
            e.o2 = static_cast<CORBA::Octet>(~i);
        }
        break;
    case K_RECU:
        p->recu.length(n);
        for (CORBA::ULong i = 0; i < n; ++i) {
            Work::RecU& e = p->recu[i];
            e.o = static_cast<CORBA::Octet>(i);
            e.d = static_cast<CORBA::Double>(i) * 1.5;
            e.s = static_cast<CORBA::Short>(i % 20000);
            e.ll = static_cast<CORBA::LongLong>(i) * -7;
        }
        break;
    case K_ANY: {
        Work::Doubles d;
        d.length(n);
        for (CORBA::ULong i = 0; i < n; ++i)
            d[i] = static_cast<CORBA::Double>(i) / 3.0;
        p->any <<= d;
        break;
    }
    }
}

// The bytes the arguments (stamp, id, payload) take in CDR from an 8-aligned start, as in a
// GIOP 1.2 request body.
unsigned long arg_bytes(Kind k, CORBA::ULong n)
{
    Payload p;
    build(k, n, &p);
    cdrMemoryStream s;
    CORBA::ULongLong stamp = 0;
    CORBA::ULong id = 0;
    stamp >>= s;
    id >>= s;
    switch (k) {
    case K_PRIMS: p.prims >>= s; break;
    case K_RECA: p.reca >>= s; break;
    case K_RECU: p.recu >>= s; break;
    case K_ANY: p.any >>= s; break;
    }
    return static_cast<unsigned long>(s.bufSize());
}

// The element count whose arguments come closest to `bytes` (ties: the larger). The size grows
// with the count, so a binary search finds the first count at or above it (bounded: 2^20).
CORBA::ULong count_for(Kind k, unsigned long bytes)
{
    CORBA::ULong lo = 0, hi = 1u << 20;
    while (lo < hi) {
        CORBA::ULong mid = lo + (hi - lo) / 2;
        if (arg_bytes(k, mid) >= bytes)
            hi = mid;
        else
            lo = mid + 1;
    }
    if (lo > 0) {
        unsigned long above = arg_bytes(k, lo), below = arg_bytes(k, lo - 1);
        if (bytes - below < above - bytes)
            return lo - 1;
    }
    return lo;
}

bool same(const Work::Prims& a, const Work::Prims& b)
{
    return a.o == b.o && a.b == b.b && a.c == b.c && a.s == b.s && a.us == b.us && a.l == b.l &&
           a.ul == b.ul && a.ll == b.ll && a.ull == b.ull && a.f == b.f && a.d == b.d;
}
bool same(const Work::RecA& a, const Work::RecA& b)
{
    return a.d == b.d && a.ll == b.ll && a.l == b.l && a.f == b.f && a.s == b.s && a.us == b.us &&
           a.o == b.o && a.c == b.c && a.b == b.b && a.o2 == b.o2;
}
bool same(const Work::RecU& a, const Work::RecU& b)
{
    return a.o == b.o && a.d == b.d && a.s == b.s && a.ll == b.ll;
}
template <class S>
bool same_seq(const S& a, const S& b)
{
    if (a.length() != b.length())
        return false;
    for (CORBA::ULong i = 0; i < a.length(); ++i)
        if (!same(a[i], b[i]))
            return false;
    return true;
}

struct Config {
    std::string ior_file, lat_file, deferred_file;
    Kind kind = K_PRIMS;
    bool have_kind = false;
    bool twoway = true;
    unsigned long bytes = 0;
    unsigned long n = 1000;
    unsigned long rounds = 10;
    unsigned long usec = 1000;
    bool quiet = false;
};

unsigned long g_calls = 0, g_bad = 0;

// One workload call; returns the outcome and sets *ok.
std::string call_once(Work::Bench_ptr obj, const Config& cfg, const Payload& p, CORBA::ULong id,
                      long long* t0, long long* t1, bool* ok)
{
    *ok = false;
    try {
        *t0 = rig::now_ns();
        CORBA::ULongLong stamp = static_cast<CORBA::ULongLong>(*t0);
        if (!cfg.twoway) {
            switch (cfg.kind) {
            case K_PRIMS: obj->sendPrims(stamp, id, p.prims); break;
            case K_RECA: obj->sendRecA(stamp, id, p.reca); break;
            case K_RECU: obj->sendRecU(stamp, id, p.recu); break;
            case K_ANY: obj->sendAny(stamp, id, p.any); break;
            }
            *t1 = rig::now_ns();
            *ok = true;
            return "ONEWAY";
        }
        switch (cfg.kind) {
        case K_PRIMS: {
            Work::PrimsSeq_var r = obj->echoPrims(stamp, id, p.prims);
            *t1 = rig::now_ns();
            *ok = same_seq(r.in(), p.prims);
            break;
        }
        case K_RECA: {
            Work::RecASeq_var r = obj->echoRecA(stamp, id, p.reca);
            *t1 = rig::now_ns();
            *ok = same_seq(r.in(), p.reca);
            break;
        }
        case K_RECU: {
            Work::RecUSeq_var r = obj->echoRecU(stamp, id, p.recu);
            *t1 = rig::now_ns();
            *ok = same_seq(r.in(), p.recu);
            break;
        }
        case K_ANY: {
            CORBA::Any_var r = obj->echoAny(stamp, id, p.any);
            *t1 = rig::now_ns();
            const Work::Doubles* got = nullptr;
            const Work::Doubles* sent = nullptr;
            *ok = (r.in() >>= got) && (p.any >>= sent) && got->length() == sent->length();
            for (CORBA::ULong i = 0; *ok && i < got->length(); ++i)
                *ok = (*got)[i] == (*sent)[i];
            break;
        }
        }
        return *ok ? "NO_EXCEPTION" : "BAD_ECHO";
    } catch (const CORBA::SystemException& ex) {
        *t1 = rig::now_ns();
        return std::string("SYSTEM_EXCEPTION:") + ex._name();
    }
}

int run_workload(CORBA::ORB_ptr orb, const Config& cfg, std::vector<Row>* rows)
{
    CORBA::ULong count = count_for(cfg.kind, cfg.bytes);
    unsigned long ab = arg_bytes(cfg.kind, count);
    std::fprintf(stderr, "client: kind=%s way=%s count=%lu arg_bytes=%lu\n", kKindNames[cfg.kind],
                 cfg.twoway ? "two" : "one", static_cast<unsigned long>(count), ab);
    Payload p;
    build(cfg.kind, count, &p);
    CORBA::Object_var obj = orb->string_to_object(lines_of(read_text(cfg.ior_file)).at(0).c_str());
    Work::Bench_var b = Work::Bench::_narrow(obj);
    if (CORBA::is_nil(b)) {
        std::fprintf(stderr, "client: the IOR in %s is not a Work::Bench\n", cfg.ior_file.c_str());
        return 1;
    }
    const char* op = cfg.twoway ? kEchoOps[cfg.kind] : kSendOps[cfg.kind];
    rows->reserve(cfg.n);
    unsigned bad_in_row = 0;
    for (unsigned long k = 0; k < cfg.n; ++k) {
        long long t0 = 0, t1 = 0;
        bool ok = false;
        std::string outcome = call_once(b, cfg, p, static_cast<CORBA::ULong>(k), &t0, &t1, &ok);
        rows->push_back(Row{0, static_cast<unsigned>(k), op, count, t0, t1, outcome});
        ++g_calls;
        if (ok) {
            bad_in_row = 0;
            continue;
        }
        ++g_bad;
        if (!cfg.quiet)
            std::fprintf(stderr, "client: seq %lu %s: unexpected %s\n", k, op, outcome.c_str());
        if (++bad_in_row >= 20) {
            std::fprintf(stderr, "client: 20 bad calls in a row, stopping\n");
            break;
        }
    }
    return 0;
}

int run_deferred(CORBA::ORB_ptr orb, const Config& cfg, std::vector<Row>* rows)
{
    std::vector<std::string> iors = lines_of(read_text(cfg.deferred_file));
    if (iors.empty()) {
        std::fprintf(stderr, "client: no IOR in %s\n", cfg.deferred_file.c_str());
        return 2;
    }
    const size_t n = iors.size();
    std::vector<CORBA::Object_var> objs(n);
    for (size_t i = 0; i < n; ++i)
        objs[i] = orb->string_to_object(iors[i].c_str());
    std::fprintf(stderr, "client: deferred servers=%zu rounds=%lu usec=%lu\n", n, cfg.rounds, cfg.usec);
    rows->reserve(n * cfg.rounds);
    unsigned bad_in_row = 0;
    for (unsigned long r = 0; r < cfg.rounds; ++r) {
        // the Requests are built before the clock starts: only sending and collecting are timed
        std::vector<CORBA::Request_var> reqs(n);
        std::unordered_map<CORBA::Request_ptr, size_t> index;
        for (size_t i = 0; i < n; ++i) {
            reqs[i] = objs[i]->_request("work");
            reqs[i]->add_in_arg() <<= static_cast<CORBA::ULong>(cfg.usec);
            reqs[i]->set_return_type(CORBA::_tc_ulong);
            index[reqs[i].in()] = i;
        }
        std::vector<long long> t0(n, 0);
        CORBA::ORB::RequestSeq one;
        one.length(1);
        for (size_t i = 0; i < n; ++i) {
            one[0] = CORBA::Request::_duplicate(reqs[i].in());
            t0[i] = rig::now_ns();
            orb->send_multiple_requests_deferred(one);
        }
        for (size_t k = 0; k < n; ++k) {  // exactly n responses are outstanding
            CORBA::Request_var got;
            orb->get_next_response(got.out());
            long long t1 = rig::now_ns();
            auto it = index.find(got.in());
            if (it == index.end()) {
                std::fprintf(stderr, "client: get_next_response returned an unknown request\n");
                ++g_bad;
                continue;
            }
            size_t i = it->second;
            std::string outcome = "NO_EXCEPTION";
            bool ok = false;
            CORBA::Exception* ex = got->env()->exception();
            if (ex) {
                outcome = std::string("SYSTEM_EXCEPTION:") + ex->_name();
            } else {
                CORBA::ULong v = 0;
                ok = (got->return_value() >>= v) && v == cfg.usec;
                if (!ok)
                    outcome = "BAD_ECHO";
            }
            rows->push_back(Row{static_cast<unsigned>(i), static_cast<unsigned>(r), "work",
                                cfg.usec, t0[i], t1, outcome});
            ++g_calls;
            if (ok) {
                bad_in_row = 0;
                continue;
            }
            ++g_bad;
            if (!cfg.quiet)
                std::fprintf(stderr, "client: round %lu server %zu: unexpected %s\n", r, i,
                             outcome.c_str());
            if (++bad_in_row >= 20) {
                std::fprintf(stderr, "client: 20 bad calls in a row, stopping\n");
                return 0;  // what is still out is waited for by orb->destroy()
            }
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    std::signal(SIGPIPE, SIG_IGN);

    std::vector<char*> av;
    int ac = 0;
    CORBA::ORB_var orb = rig::client_orb_init(argc, argv, &av, &ac);  // bounded calls
    if (CORBA::is_nil(orb))
        return 2;

    Config cfg;
    for (int i = 1; i < ac; ++i) {
        std::string a = av[i];
        auto val = [&]() -> const char* {
            if (i + 1 >= ac)
                usage(("missing value for " + a).c_str());
            return av[++i];
        };
        if (a == "-i")
            cfg.ior_file = val();
        else if (a == "-deferred")
            cfg.deferred_file = val();
        else if (a == "-lat")
            cfg.lat_file = val();
        else if (a == "-kind") {
            std::string k = val();
            for (int j = 0; j < 4; ++j)
                if (k == kKindNames[j]) {
                    cfg.kind = static_cast<Kind>(j);
                    cfg.have_kind = true;
                }
            if (!cfg.have_kind)
                usage(("unknown kind '" + k + "'").c_str());
        } else if (a == "-way") {
            std::string w = val();
            if (w != "two" && w != "one")
                usage("-way is two or one");
            cfg.twoway = (w == "two");
        } else if (a == "-bytes")
            cfg.bytes = parse_num(val(), 16ul * 1024 * 1024, "byte count");
        else if (a == "-n")
            cfg.n = parse_num(val(), 10000000ul, "count");
        else if (a == "-rounds")
            cfg.rounds = parse_num(val(), 1000000ul, "round count");
        else if (a == "-usec")
            cfg.usec = parse_num(val(), 1000000ul, "usec");
        else if (a == "-q")
            cfg.quiet = true;
        else
            usage(("unknown argument '" + a + "'").c_str());
    }
    if (cfg.ior_file.empty() == cfg.deferred_file.empty())
        usage("give one of -i IORFILE and -deferred IORLIST");
    if (!cfg.ior_file.empty() && !cfg.have_kind)
        usage("-kind is required with -i");

    FILE* lat = nullptr;
    if (!cfg.lat_file.empty()) {
        lat = std::fopen(cfg.lat_file.c_str(), "w");
        if (!lat) {
            std::fprintf(stderr, "client: %s: %s\n", cfg.lat_file.c_str(), std::strerror(errno));
            return 2;
        }
    }

    std::vector<Row> rows;
    int rc = 0;
    try {
        rc = cfg.deferred_file.empty() ? run_workload(orb, cfg, &rows) : run_deferred(orb, cfg, &rows);
    } catch (const CORBA::Exception& ex) {
        rig::report_corba("client", ex);
        rc = 1;
    } catch (const std::exception& ex) {
        std::fprintf(stderr, "client: %s\n", ex.what());
        rc = 1;
    }

    if (lat) {
        std::fprintf(lat, "thread,seq,op,size,t_start_ns,t_end_ns,latency_ns,outcome\n");
        for (const Row& r : rows)
            std::fprintf(lat, "%u,%u,%s,%lu,%lld,%lld,%lld,%s\n", r.thread, r.seq, r.op, r.size,
                         r.t0, r.t1, r.t1 - r.t0, r.outcome.c_str());
        if (std::fclose(lat) != 0) {
            std::fprintf(stderr, "client: writing %s failed\n", cfg.lat_file.c_str());
            rc = 1;
        }
    }
    try {
        orb->destroy();
    } catch (const CORBA::Exception&) {
    }
    std::fprintf(stderr, "client: calls=%lu bad=%lu\n", g_calls, g_bad);
    if (rc == 0 && (g_bad > 0 || g_calls == 0))
        rc = 1;
    return rc;
}
