/* SPDX-License-Identifier: BSD-2-Clause */
// bench_relay: a middle tier for the Bench IDL (tests/orb/bench.idl). An Echo servant that
// serves every call by making the same call, with the same argument, on a back-end Echo: the
// argument (an echo's length, slow's usec) then names both the incoming call and the outgoing
// one it caused, so a test can tell which back-end call a client call was waiting for without
// asking giopscope (tests/integration/nested_calls.sh, issue 32).
//
//   bench_relay [-ORB<option> <value>]... -b BACKENDIORFILE -o IORFILE [-p PIDFILE] [-bidir]
//               [-relay-log FILE] [-q]
//
//   -ORBendPoint giop:tcp:ADDR:PORT   where to listen (several -ORBendPoint: one per network)
//   -b FILE   the back end's IOR (a bench_server or another bench_relay)
//   -o FILE   write our Echo's IOR to FILE (atomically, last: its appearance means "ready")
//   -p FILE   write our pid to FILE
//   -bidir    our Echo in a child POA with the BiDirectional policy (as bench_server -bidir)
//   -relay-log FILE  one line per call served:
//             `tid,op,arg,t_in_ns,t_fwd_start_ns,t_fwd_end_ns,t_out_ns`: CLOCK_REALTIME as the
//             servant method is entered, right before and after the forwarded stub call, and
//             as the method returns (or throws); tid the upcall thread, arg as in bench_server's
//             -servant-log. Kept in memory (the first 1 048 576 calls) and written at stop.
//   -q        quiet (no "relay: ready" line)
//
// The thread model is omniORB's own and set with its options (-ORBthreadPerConnectionPolicy 0
// -ORBthreadPoolWatchConnection ...): the relay adds none. The forwarded calls are bounded like
// bench_client's (-ORBclientCallTimeOutPeriod 30000 unless given).
//
// Forwarding: echoString, echoOctets, echoRecs, slow, spin, fire (oneway, forwarded oneway),
// fail (the back end's Busy is raised again), callMeBack(cb, n) (forwarded with the client's
// Callback reference: the BACK END then pings the client itself, so the client must be
// reachable from the back end). A system exception from the back end goes back to our client as
// the same exception (COMPLETED_MAYBE).
//
// SIGTERM / SIGINT / SIGHUP: the ORB is destroyed (calls in progress finish), the log is
// written, "relay: calls=N forwarded=N failed=N" on stderr, exit 0 (1 if the log could not be
// written). Exit 2 on usage errors, 1 on a CORBA or system error.

#include <bench.hh>

#include "rig.hh"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sys/syscall.h>
#include <unistd.h>

namespace {

std::atomic<unsigned long> g_calls{0};
std::atomic<unsigned long> g_forwarded{0};
std::atomic<unsigned long> g_failed{0};

struct RelayRec {
    long tid;
    const char* op;
    long long arg, in_ns, fwd_start_ns, fwd_end_ns, out_ns;
};
const size_t kMaxRecs = 1u << 20;
RelayRec* g_recs = nullptr;  // set before the POA is activated; nullptr: no -relay-log
std::atomic<size_t> g_nrecs{0};

// One upcall's four instants: t_in at construction, the forward's two around the stub call
// (fwd()), t_out and the record at destruction (return or exception).
class RelaySpan {
public:
    RelaySpan(const char* op, long long arg) : op_(op), arg_(arg), in_(rig::now_ns()) { ++g_calls; }
    ~RelaySpan()
    {
        long long out = rig::now_ns();
        if (!g_recs)
            return;
        static thread_local long tid = static_cast<long>(syscall(SYS_gettid));
        size_t i = g_nrecs.fetch_add(1, std::memory_order_relaxed);
        if (i < kMaxRecs)
            g_recs[i] = RelayRec{tid, op_, arg_, in_, fwd0_, fwd1_, out};
    }
    // Runs the forwarded call f between the two forward instants; a back-end exception is
    // counted and passed on (the end instant is still taken).
    template <typename F>
    auto fwd(F f) -> decltype(f())
    {
        struct End {
            RelaySpan* s;
            bool done = false;
            ~End()
            {
                s->fwd1_ = rig::now_ns();
                ++(done ? g_forwarded : g_failed);
            }
        } end{this};
        fwd0_ = rig::now_ns();
        auto r = f();
        end.done = true;
        return r;
    }
    RelaySpan(const RelaySpan&) = delete;
    RelaySpan& operator=(const RelaySpan&) = delete;

private:
    const char* op_;
    long long arg_;
    long long in_;
    long long fwd0_ = 0, fwd1_ = 0;
};

class RelayImpl : public POA_Bench::Echo {
public:
    explicit RelayImpl(Bench::Echo_ptr back) : back_(Bench::Echo::_duplicate(back)) {}

    char* echoString(const char* s) override
    {
        RelaySpan span("echoString", static_cast<long long>(std::strlen(s)));
        return span.fwd([&] { return back_->echoString(s); });
    }
    Bench::Octets* echoOctets(const Bench::Octets& o) override
    {
        RelaySpan span("echoOctets", o.length());
        return span.fwd([&] { return back_->echoOctets(o); });
    }
    Bench::Recs* echoRecs(const Bench::Recs& r) override
    {
        RelaySpan span("echoRecs", r.length());
        return span.fwd([&] { return back_->echoRecs(r); });
    }
    void slow(CORBA::ULong usec) override
    {
        RelaySpan span("slow", usec);
        span.fwd([&] { back_->slow(usec); return 0; });
    }
    void spin(CORBA::ULong usec) override
    {
        RelaySpan span("spin", usec);
        span.fwd([&] { back_->spin(usec); return 0; });
    }
    void fire(const char* s) override
    {
        RelaySpan span("fire", static_cast<long long>(std::strlen(s)));
        span.fwd([&] { back_->fire(s); return 0; });
    }
    void fail(CORBA::Long code) override
    {
        RelaySpan span("fail", code);
        span.fwd([&] { back_->fail(code); return 0; });  // Busy(code) passes through
    }
    CORBA::Long callMeBack(Bench::Callback_ptr cb, CORBA::Long n) override
    {
        RelaySpan span("callMeBack", n);
        return span.fwd([&] { return back_->callMeBack(cb, n); });
    }

private:
    Bench::Echo_var back_;
};

void usage(const char* why)
{
    if (why)
        std::fprintf(stderr, "relay: %s\n", why);
    std::fprintf(stderr,
                 "usage: bench_relay [-ORB<option> <value>]... -b BACKENDIORFILE -o IORFILE "
                 "[-p PIDFILE] [-bidir] [-relay-log FILE] [-q]\n");
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv)
{
    // before the ORB starts its threads: they all inherit the mask
    sigset_t stopset;
    if (!rig::block_stop_signals(&stopset)) {
        std::perror("relay: pthread_sigmask");
        return 1;
    }
    std::vector<char*> av;
    int ac = 0;
    CORBA::ORB_var orb = rig::client_orb_init(argc, argv, &av, &ac);  // bounded forwarded calls
    if (CORBA::is_nil(orb))
        return 2;

    std::string ior_file, back_file, pid_file, relay_log;
    bool quiet = false, bidir = false;
    for (int i = 1; i < ac; ++i) {
        std::string a = av[i];
        auto val = [&]() -> std::string {
            if (i + 1 >= ac)
                usage(("option " + a + " needs a value").c_str());
            return av[++i];
        };
        if (a == "-o")
            ior_file = val();
        else if (a == "-b")
            back_file = val();
        else if (a == "-p")
            pid_file = val();
        else if (a == "-q")
            quiet = true;
        else if (a == "-bidir")
            bidir = true;
        else if (a == "-relay-log")
            relay_log = val();
        else
            usage(("unknown argument '" + a + "'").c_str());
    }
    if (ior_file.empty() || back_file.empty())
        usage("-o IORFILE and -b BACKENDIORFILE are required");
    FILE* log = nullptr;
    if (!relay_log.empty()) {
        log = std::fopen(relay_log.c_str(), "w");
        if (!log) {
            std::fprintf(stderr, "relay: %s: %s\n", relay_log.c_str(), std::strerror(errno));
            return 2;
        }
        g_recs = new RelayRec[kMaxRecs];
    }

    int rc = 0;
    try {
        std::string back_ior = rig::trim_right(rig::read_file("relay", back_file, 64 * 1024));
        CORBA::Object_var bobj = orb->string_to_object(back_ior.c_str());
        Bench::Echo_var back = Bench::Echo::_narrow(bobj);
        if (CORBA::is_nil(back)) {
            std::fprintf(stderr, "relay: the IOR in %s is not a Bench::Echo\n", back_file.c_str());
            return 1;
        }

        PortableServer::POAManager_var pman;
        PortableServer::POA_var poa = rig::serving_poa(orb, bidir, &pman);
        RelayImpl* servant = new RelayImpl(back.in());
        PortableServer::ObjectId_var oid = poa->activate_object(servant);
        servant->_remove_ref();  // the POA holds it now
        CORBA::Object_var ref = poa->id_to_reference(oid.in());
        CORBA::String_var ior = orb->object_to_string(ref);
        pman->activate();

        if (!pid_file.empty() && !rig::write_file_atomic("relay", pid_file, std::to_string(static_cast<long>(getpid()))))
            return 1;
        if (!rig::write_file_atomic("relay", ior_file, ior.in()))  // last: "ready"
            return 1;
        if (!quiet)
            std::fprintf(stderr, "relay: ready pid=%ld\n", static_cast<long>(getpid()));

        rig::wait_stop_signal(&stopset);
        orb->destroy();  // lets calls in progress finish
    } catch (const CORBA::Exception& ex) {
        rig::report_corba("relay", ex);
        rc = 1;
    }
    if (log) {
        // the ORB is destroyed: no upcall runs any more
        size_t n = g_nrecs.load();
        for (size_t i = 0; i < n && i < kMaxRecs; ++i) {
            const RelayRec& r = g_recs[i];
            std::fprintf(log, "%ld,%s,%lld,%lld,%lld,%lld,%lld\n", r.tid, r.op, r.arg, r.in_ns,
                         r.fwd_start_ns, r.fwd_end_ns, r.out_ns);
        }
        if (n > kMaxRecs)
            std::fprintf(stderr, "relay: -relay-log: %zu calls, only the first %zu kept\n", n, kMaxRecs);
        if (std::fclose(log) != 0) {
            std::perror("relay: -relay-log");
            rc = 1;
        }
    }
    std::fprintf(stderr, "relay: calls=%lu forwarded=%lu failed=%lu\n", g_calls.load(), g_forwarded.load(),
                 g_failed.load());
    return rc;
}
