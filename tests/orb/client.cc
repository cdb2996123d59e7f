/* SPDX-License-Identifier: BSD-2-Clause */
// bench_client: omniORB client for the Bench IDL (tests/orb/bench.idl); makes the calls whose
// GIOP traffic giopscope's integration tests capture, and logs its own view of every call.
//
//   bench_client [-ORB<option> <value>]... -i IORFILE [-d DEADIORFILE] -op OP [-size N] [-n N]
//                [-threads N] [-usecs U1,U2,...] [-distinct] [-bidir] [-lat FILE.csv] [-q]
//
//   -op     echoString | echoOctets | echoRecs | slow | fire | fail | dead | nonexist | mix |
//           callback | spin
//   -size   string length / octets / records / servant sleep usec (slow) / servant CPU usec
//           (spin) / pings per call
//           (callback) (default 32)
//   -n      calls per thread (default 100, at most 100 000 000)
//   -threads (or -t) client threads sharing the object reference (default 1, at most 256)
//   -usecs  for slow and spin: cycle through these sleep times (index = thread + seq) instead of -size
//   -distinct  every call its own size: -size + 1000 * thread + seq (echoString, echoOctets,
//           echoRecs, slow, spin without -usecs; -n at most 1000), so that a size names one
//           call of the run (nested_calls.sh matches a relay's forwarded call to it by size)
//   -lat    write one CSV row per call:
//             thread,seq,op,size,t_start_ns,t_end_ns,latency_ns,outcome
//           t_* = clock_gettime(CLOCK_REALTIME) right before / after the stub call
//   -d      the IOR of a deactivated object (required for dead and mix)
//   -bidir  (callback) activate the Callback servant in a child POA with the BiDirectional
//           policy (BiDirPolicy::BOTH); run with -ORBofferBiDirectionalGIOP 1 (and a
//           -ORBclientTransportRule that allows bidir) so that the server's pings come back
//           over this client's own connection (GIOP 1.2)
//
// mix cycles echoString, fire, fail, echoOctets, fire, dead, slow(size), echoRecs, nonexist.
// dead = echoString on the deactivated object; nonexist = _non_existent(); fail passes the
// call's seq as the code. callback = callMeBack(cb, size) on a Callback servant of our own
// (ping(n) returns n; the server pings size times, so the sum must be size*(size-1)/2); it
// needs a listening endpoint (-ORBendPoint giop:tcp:ADDR:PORT, reachable from the server,
// unless bidirectional GIOP is used). Outcomes: NO_EXCEPTION, ONEWAY, USER_EXCEPTION:Busy,
// SYSTEM_EXCEPTION:<NAME>, NON_EXISTENT=<0|1>, BAD_SUM=<sum> (callMeBack returned a wrong sum).
//
// SIGUSR1 ends the run early: every thread stops after its call in progress, and the CSV, the
// summary line and the exit status are those of a run of that many calls (a benchmark runs
// -n 100000000 and stops the client when it has what it wants; bench/attach_toggle.sh).
//
// A call is "bad" when its outcome is not the one expected for its op, or an echo came back
// different. The client stops early after 20 bad calls in a row (e.g. the server went away),
// prints "client: calls=N bad=N pings=N" on stderr (pings = ping calls our Callback servant
// served) and exits 1 if any call was bad, 2 on usage errors.
// Unless an -ORBclientCallTimeOutPeriod is given, calls time out after 30 s (bounded runs).

#include <bench.hh>

#include "rig.hh"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

namespace {

enum Op { OP_ECHOSTRING, OP_ECHOOCTETS, OP_ECHORECS, OP_SLOW, OP_FIRE, OP_FAIL, OP_DEAD,
          OP_NONEXIST, OP_MIX, OP_CALLBACK, OP_SPIN };
const int kNumOps = OP_SPIN + 1;

// -op names
const char* const kOpNames[kNumOps] = {"echoString", "echoOctets", "echoRecs", "slow", "fire",
                                       "fail", "dead", "nonexist", "mix", "callback", "spin"};
// op column of the latency CSV (as the reference corpus' client writes it)
const char* const kLatNames[kNumOps] = {"echoString", "echoOctets", "echoRecs", "slow", "fire",
                                        "fail", "dead", "nonexist", "mix", "callMeBack", "spin"};

const Op kMix[] = {OP_ECHOSTRING, OP_FIRE, OP_FAIL, OP_ECHOOCTETS, OP_FIRE, OP_DEAD, OP_SLOW,
                   OP_ECHORECS, OP_NONEXIST};

// One call of the latency CSV, 32 bytes (a long run keeps tens of millions of them): the
// outcome as an index into its thread's list of distinct outcomes (a handful).
struct Row {
    unsigned seq;
    unsigned size;
    unsigned short op;
    unsigned short outcome;
    long long t0, t1;
};

struct Rows {
    std::vector<Row> rows;
    std::vector<std::string> outcomes;

    unsigned short intern(const std::string& o)
    {
        for (size_t i = 0; i < outcomes.size(); ++i)
            if (outcomes[i] == o)
                return static_cast<unsigned short>(i);
        if (outcomes.size() >= 65535)
            return 65535;  // "OTHER" (below): 65 535 distinct outcomes is not a test run
        outcomes.push_back(o);
        return static_cast<unsigned short>(outcomes.size() - 1);
    }
    const char* name(unsigned short i) const
    {
        return i < outcomes.size() ? outcomes[i].c_str() : "OTHER";
    }
};

struct Config {
    std::string ior_file, dead_file, lat_file;
    Op op = OP_ECHOSTRING;
    unsigned long size = 32;
    unsigned long n = 100;
    unsigned threads = 1;
    std::vector<unsigned long> usecs;
    bool bidir = false;
    bool quiet = false;
    bool distinct = false;
};

std::atomic<unsigned long> g_bad{0};
std::atomic<unsigned long> g_calls{0};
std::atomic<bool> g_go{false};
std::atomic<bool> g_stop{false};
std::atomic<unsigned long> g_pings{0};

// The callback object the server pings during callMeBack.
class CallbackImpl : public POA_Bench::Callback {
public:
    CORBA::Long ping(CORBA::Long n) override
    {
        ++g_pings;
        return n;
    }
};

[[noreturn]] void usage(const char* why)
{
    if (why)
        std::fprintf(stderr, "client: %s\n", why);
    std::fprintf(stderr,
                 "usage: bench_client [-ORB<option> <value>]... -i IORFILE [-d DEADIORFILE]\n"
                 "       -op echoString|echoOctets|echoRecs|slow|fire|fail|dead|nonexist|mix|callback|spin\n"
                 "       [-size N] [-n N] [-threads N] [-usecs U1,U2,...] [-distinct] [-bidir]\n"
                 "       [-lat FILE.csv] [-q]\n");
    std::exit(2);
}

unsigned long parse_num(const char* s, unsigned long max, const char* what)
{
    return rig::parse_num(s, max, what, usage);
}

std::string read_ior(const std::string& path)
{
    return rig::trim_right(rig::read_file("client", path, 1u << 20));
}

// One call; returns the outcome and sets *ok to whether it was the expected one.
std::string do_call(Bench::Echo_ptr echo, Bench::Echo_ptr dead, Bench::Callback_ptr cb, Op op,
                    unsigned long size, unsigned seq, bool* ok)
{
    *ok = false;
    try {
        switch (op) {
        case OP_ECHOSTRING: {
            std::string s(size, 'x');
            for (unsigned long i = 0; i < size; ++i)
                s[i] = static_cast<char>('a' + (i + seq) % 26);
            CORBA::String_var r = echo->echoString(s.c_str());
            *ok = (s == r.in());
            return "NO_EXCEPTION";
        }
        case OP_ECHOOCTETS: {
            Bench::Octets o;
            o.length(static_cast<CORBA::ULong>(size));
            for (unsigned long i = 0; i < size; ++i)
                o[i] = static_cast<CORBA::Octet>(i * 7 + seq);
            Bench::Octets_var r = echo->echoOctets(o);
            *ok = r->length() == o.length() &&
                  (size == 0 || std::memcmp(r->get_buffer(), o.get_buffer(), size) == 0);
            return "NO_EXCEPTION";
        }
        case OP_ECHORECS: {
            Bench::Recs v;
            v.length(static_cast<CORBA::ULong>(size));
            for (unsigned long i = 0; i < size; ++i) {
                v[i].a = static_cast<CORBA::Long>(i + seq);
                v[i].b = static_cast<double>(i) * 0.5;
                v[i].c = static_cast<CORBA::Short>(i & 0x7fff);
            }
            Bench::Recs_var r = echo->echoRecs(v);
            *ok = r->length() == v.length();
            for (CORBA::ULong i = 0; *ok && i < v.length(); ++i)
                *ok = r[i].a == v[i].a && r[i].b == v[i].b && r[i].c == v[i].c;
            return "NO_EXCEPTION";
        }
        case OP_SLOW:
            echo->slow(static_cast<CORBA::ULong>(size));
            *ok = true;
            return "NO_EXCEPTION";
        case OP_SPIN:
            echo->spin(static_cast<CORBA::ULong>(size));
            *ok = true;
            return "NO_EXCEPTION";
        case OP_FIRE: {
            std::string s(size, 'f');
            echo->fire(s.c_str());
            *ok = true;
            return "ONEWAY";
        }
        case OP_FAIL:
            echo->fail(static_cast<CORBA::Long>(size));
            return "NO_EXCEPTION";  // not expected
        case OP_DEAD: {
            std::string s(size, 'd');
            CORBA::String_var r = dead->echoString(s.c_str());
            return "NO_EXCEPTION";  // not expected
        }
        case OP_NONEXIST: {
            CORBA::Boolean ne = echo->_non_existent();
            *ok = !ne;
            return ne ? "NON_EXISTENT=1" : "NON_EXISTENT=0";
        }
        case OP_CALLBACK: {
            CORBA::Long n = static_cast<CORBA::Long>(size);
            CORBA::Long sum = echo->callMeBack(cb, n);
            CORBA::Long want = static_cast<CORBA::Long>(static_cast<long long>(n) * (n - 1) / 2);
            *ok = (sum == want);
            return *ok ? "NO_EXCEPTION" : "BAD_SUM=" + std::to_string(sum);
        }
        case OP_MIX:
            break;
        }
    } catch (const Bench::Busy& b) {
        *ok = (op == OP_FAIL && b.code == static_cast<CORBA::Long>(size));
        return "USER_EXCEPTION:Busy";
    } catch (const CORBA::OBJECT_NOT_EXIST&) {
        *ok = (op == OP_DEAD);
        return "SYSTEM_EXCEPTION:OBJECT_NOT_EXIST";
    } catch (const CORBA::SystemException& ex) {
        return std::string("SYSTEM_EXCEPTION:") + ex._name();
    } catch (const CORBA::UserException& ex) {
        return std::string("USER_EXCEPTION:") + ex._name();
    }
    return "INTERNAL";
}

void worker(const Config& cfg, Bench::Echo_ptr echo, Bench::Echo_ptr dead, Bench::Callback_ptr cb,
            unsigned tid, Rows* rows)
{
    // grown outside the timed stub calls; reserved up to 1M (a run stopped by SIGUSR1 gives
    // -n as a bound only)
    rows->rows.reserve(cfg.n < (1ul << 20) ? cfg.n : (1ul << 20));
    while (!g_go.load())
        std::this_thread::yield();
    unsigned bad_in_row = 0;
    for (unsigned long k = 0; k < cfg.n && !g_stop.load(); ++k) {
        unsigned seq = static_cast<unsigned>(k);
        Op op = cfg.op == OP_MIX ? kMix[k % (sizeof kMix / sizeof kMix[0])] : cfg.op;
        unsigned long size = cfg.size;
        if ((op == OP_SLOW || op == OP_SPIN) && !cfg.usecs.empty())
            size = cfg.usecs[(tid + k) % cfg.usecs.size()];
        else if (cfg.distinct && (op == OP_ECHOSTRING || op == OP_ECHOOCTETS || op == OP_ECHORECS ||
                                  op == OP_SLOW || op == OP_SPIN))
            size += 1000ul * tid + seq;
        else if (op == OP_FAIL)
            size = seq;
        else if (op == OP_NONEXIST)
            size = 0;
        bool ok = false;
        long long t0 = rig::now_ns();
        std::string outcome = do_call(echo, dead, cb, op, size, seq, &ok);
        long long t1 = rig::now_ns();
        rows->rows.push_back(Row{seq, static_cast<unsigned>(size), static_cast<unsigned short>(op),
                                 rows->intern(outcome), t0, t1});
        ++g_calls;
        if (ok) {
            bad_in_row = 0;
        } else {
            ++g_bad;
            if (!cfg.quiet)
                std::fprintf(stderr, "client: thread %u seq %u %s: unexpected %s\n", tid, seq,
                             kOpNames[op], outcome.c_str());
            if (++bad_in_row >= 20) {
                std::fprintf(stderr, "client: 20 bad calls in a row, stopping\n");
                g_stop = true;
            }
        }
    }
}

}  // namespace

int main(int argc, char** argv)
{
    std::signal(SIGPIPE, SIG_IGN);
    // SIGUSR1 (stop after the calls in progress): blocked here, before the ORB starts its
    // threads, so that every thread inherits the mask and only the waiter below takes it (no
    // EINTR in the ORB's or the calls' syscalls)
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, nullptr);
    std::thread([usr1]() {
        int sig = 0;
        while (sigwait(&usr1, &sig) != 0) {
        }
        g_stop = true;
    }).detach();

    std::vector<char*> av;
    int ac = 0;
    CORBA::ORB_var orb = rig::client_orb_init(argc, argv, &av, &ac);  // bounded calls
    if (CORBA::is_nil(orb))
        return 2;

    Config cfg;
    for (int i = 1; i < ac; ++i) {
        std::string a = av[i];
        auto val = [&]() -> const char* {
            if (i + 1 >= ac) {
                std::string msg = "missing value for " + a;
                usage(msg.c_str());
            }
            return av[++i];
        };
        if (a == "-i")
            cfg.ior_file = val();
        else if (a == "-d")
            cfg.dead_file = val();
        else if (a == "-lat")
            cfg.lat_file = val();
        else if (a == "-op") {
            std::string o = val();
            bool found = false;
            for (int k = 0; k < kNumOps; ++k)
                if (o == kOpNames[k]) {
                    cfg.op = static_cast<Op>(k);
                    found = true;
                }
            if (!found)
                usage(("unknown op '" + o + "'").c_str());
        } else if (a == "-size")
            cfg.size = parse_num(val(), 64ul * 1024 * 1024, "size");
        else if (a == "-n")
            cfg.n = parse_num(val(), 100000000ul, "count");
        else if (a == "-threads" || a == "-t")
            cfg.threads = static_cast<unsigned>(parse_num(val(), 256, "thread count"));
        else if (a == "-usecs") {
            std::string list = val();
            size_t p = 0;
            while (p <= list.size() && cfg.usecs.size() < 1024) {
                size_t q = list.find(',', p);
                if (q == std::string::npos)
                    q = list.size();
                cfg.usecs.push_back(parse_num(list.substr(p, q - p).c_str(), 10000000ul, "usec"));
                p = q + 1;
            }
        } else if (a == "-bidir")
            cfg.bidir = true;
        else if (a == "-distinct")
            cfg.distinct = true;
        else if (a == "-q")
            cfg.quiet = true;
        else
            usage(("unknown argument '" + a + "'").c_str());
    }
    if (cfg.ior_file.empty())
        usage("-i IORFILE is required");
    if (cfg.threads == 0)
        usage("-threads must be at least 1");
    if ((cfg.op == OP_DEAD || cfg.op == OP_MIX) && cfg.dead_file.empty())
        usage("-op dead and -op mix need -d DEADIORFILE");
    if (cfg.op == OP_CALLBACK && cfg.size > 100000)
        usage("-op callback: at most 100000 pings per call (-size)");
    if (cfg.distinct && cfg.n > 1000)
        usage("-distinct: at most 1000 calls per thread (-n), so that the sizes stay distinct");
    if (cfg.bidir && cfg.op != OP_CALLBACK)
        usage("-bidir only makes sense with -op callback");

    FILE* lat = nullptr;
    if (!cfg.lat_file.empty()) {
        lat = std::fopen(cfg.lat_file.c_str(), "w");
        if (!lat) {
            std::fprintf(stderr, "client: %s: %s\n", cfg.lat_file.c_str(), std::strerror(errno));
            return 2;
        }
    }

    std::vector<Rows> rows(cfg.threads);
    int rc = 0;
    try {
        CORBA::Object_var obj = orb->string_to_object(read_ior(cfg.ior_file).c_str());
        Bench::Echo_var echo = Bench::Echo::_narrow(obj);
        Bench::Echo_var dead;
        if (!cfg.dead_file.empty()) {
            CORBA::Object_var dobj = orb->string_to_object(read_ior(cfg.dead_file).c_str());
            dead = Bench::Echo::_narrow(dobj);
        }
        if (CORBA::is_nil(echo)) {
            std::fprintf(stderr, "client: the IOR in %s is not a Bench::Echo\n", cfg.ior_file.c_str());
            return 1;
        }
        // -op callback: our Callback servant, in the root POA or (-bidir) in a child POA with
        // the BiDirectional policy. Other ops create no POA (and so no listening endpoint).
        Bench::Callback_var cb;
        if (cfg.op == OP_CALLBACK) {
            PortableServer::POAManager_var pman;
            PortableServer::POA_var poa = rig::serving_poa(orb, cfg.bidir, &pman);
            CallbackImpl* servant = new CallbackImpl();
            PortableServer::ObjectId_var oid = poa->activate_object(servant);
            servant->_remove_ref();  // the POA holds it now
            CORBA::Object_var cobj = poa->id_to_reference(oid.in());
            cb = Bench::Callback::_narrow(cobj);
            pman->activate();
        }
        std::vector<std::thread> ths;
        for (unsigned t = 0; t < cfg.threads; ++t)
            ths.emplace_back(worker, std::cref(cfg), echo.in(), dead.in(), cb.in(), t, &rows[t]);
        g_go = true;  // all threads start together (v05-style: every thread's first call overlaps)
        for (auto& th : ths)
            th.join();
    } catch (const CORBA::Exception& ex) {
        rig::report_corba("client", ex);
        rc = 1;
    }

    if (lat) {
        std::fprintf(lat, "thread,seq,op,size,t_start_ns,t_end_ns,latency_ns,outcome\n");
        for (unsigned t = 0; t < cfg.threads; ++t)
            for (const Row& r : rows[t].rows)
                std::fprintf(lat, "%u,%u,%s,%u,%lld,%lld,%lld,%s\n", t, r.seq, kLatNames[r.op],
                             r.size, r.t0, r.t1, r.t1 - r.t0, rows[t].name(r.outcome));
        if (std::fclose(lat) != 0) {
            std::fprintf(stderr, "client: writing %s failed\n", cfg.lat_file.c_str());
            rc = 1;
        }
    }
    try {
        orb->destroy();
    } catch (const CORBA::Exception&) {
    }
    std::fprintf(stderr, "client: calls=%lu bad=%lu pings=%lu\n", g_calls.load(), g_bad.load(),
                 g_pings.load());
    if (g_bad.load() > 0 || (cfg.n > 0 && g_calls.load() == 0))
        rc = 1;
    return rc;
}
