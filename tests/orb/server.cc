/* SPDX-License-Identifier: BSD-2-Clause */
// bench_server: omniORB servant for the Bench IDL (tests/orb/bench.idl), used to make real GIOP
// captures for giopscope's integration tests.
//
//   bench_server [-ORB<option> <value>]... -o IORFILE [-d DEADIORFILE] [-p PIDFILE] [-bidir]
//                [-servant-log FILE] [-q]
//
//   -ORBendPoint giop:tcp:ADDR:PORT     where to listen (IPv6: giop:tcp:[fd00::2]:2809)
//   -o FILE   write the Echo object's stringified IOR to FILE (atomically: tmp + rename)
//   -d FILE   activate a second Echo, write its IOR to FILE, then deactivate it: calls on
//             it get OBJECT_NOT_EXIST (or a LocateReply UNKNOWN_OBJECT) -- the "dead" case
//   -p FILE   write our pid to FILE
//   -bidir    activate the objects in a child POA with the BiDirectional policy
//             (BiDirPolicy::BOTH); with -ORBacceptBiDirectionalGIOP 1 (and a
//             -ORBserverTransportRule that allows bidir) a client's offer of bidirectional GIOP
//             is accepted and callMeBack's pings go back over the client's own connection
//   -servant-log FILE  one line per servant call,
//             `tid,op,arg,t_entry_ns,t_exit_ns,cpu_entry_ns,cpu_exit_ns`: CLOCK_REALTIME as
//             the servant method is entered and as it returns (or throws), and the thread's
//             CPU clock (CLOCK_THREAD_CPUTIME_ID) read just inside those two instants,
//             the thread's id and the call's argument (echo*: its length, slow, spin: usec, fail:
//             code, callMeBack: n, fire: string length). Kept in memory (a slot taken with
//             an atomic add: nothing between the exit instant and the return but a few
//             stores; the first 1 048 576 calls) and written when the server stops. The
//             ground truth of tests/integration/attach_truth.sh
//   -q        quiet (no "server: ready" line)
//
// Servant: echoString/echoOctets/echoRecs return their argument, slow(usec) nanosleep()s usec
// (capped at 10 s), spin(usec) computes until its thread has used usec of CPU time
// (CLOCK_THREAD_CPUTIME_ID; same cap), fire (oneway) counts, fail(code) raises Busy(code), callMeBack(cb, n) calls
// cb->ping(i) for i < n (n capped) and returns the sum.
//
// SIGTERM / SIGINT / SIGHUP: blocked in every thread, taken by sigwait() in main, which then
// destroys the ORB (waits for calls in progress), prints "server: fired=N calls=N" on stderr and
// exits 0. Exit 2 on usage errors, 1 on a CORBA or system error.

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

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace {

std::atomic<unsigned long> g_fired{0};
std::atomic<unsigned long> g_calls{0};

const CORBA::ULong kMaxSleepUsec = 10u * 1000u * 1000u;
const CORBA::Long kMaxPings = 100000;

// -servant-log: the calls' spans, filled by the servant threads, written at the end
struct SpanRec {
    long tid;
    const char* op;
    long long arg, entry_ns, exit_ns;
    long long cpu_entry_ns, cpu_exit_ns;  // the thread's CPU clock (CLOCK_THREAD_CPUTIME_ID)
};
const size_t kMaxSpans = 1u << 20;
SpanRec* g_spans = nullptr;  // set before the POA is activated, nullptr: off
std::atomic<size_t> g_nspans{0};

// The servant's own view of a call: entry instant at construction, exit instant and its
// record at destruction (a return or an exception). Nothing when -servant-log is not given.
class ServantSpan {
public:
    ServantSpan(const char* op, long long arg)
        : op_(op), arg_(arg), entry_(g_spans ? rig::now_ns() : 0), cpu_entry_(g_spans ? thread_cpu_ns() : 0)
    {
    }
    ~ServantSpan()
    {
        if (!g_spans)
            return;
        long long cpu_exit = thread_cpu_ns();
        long long exit_ns = rig::now_ns();
        static thread_local long tid = static_cast<long>(syscall(SYS_gettid));
        size_t i = g_nspans.fetch_add(1, std::memory_order_relaxed);
        if (i < kMaxSpans)
            g_spans[i] = SpanRec{tid, op_, arg_, entry_, exit_ns, cpu_entry_, cpu_exit};
    }
    static long long thread_cpu_ns()
    {
        struct timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
    }
    ServantSpan(const ServantSpan&) = delete;
    ServantSpan& operator=(const ServantSpan&) = delete;

private:
    const char* op_;
    long long arg_;
    long long entry_;
    long long cpu_entry_;
};

void sleep_usec(CORBA::ULong usec)
{
    if (usec > kMaxSleepUsec)
        usec = kMaxSleepUsec;
    struct timespec ts;
    ts.tv_sec = usec / 1000000u;
    ts.tv_nsec = static_cast<long>(usec % 1000000u) * 1000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

// Computes until the calling thread has used `usec` of CPU time (preemption does not count).
void spin_usec(CORBA::ULong usec)
{
    if (usec > kMaxSleepUsec)
        usec = kMaxSleepUsec;
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    long long end = static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec + usec * 1000LL;
    volatile unsigned long sink = 0;
    for (;;) {
        for (int i = 0; i < 1000; ++i)
            sink = sink + static_cast<unsigned long>(i);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        if (static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec >= end)
            break;
    }
}

class EchoImpl : public POA_Bench::Echo {
public:
    char* echoString(const char* s) override
    {
        ServantSpan span("echoString", static_cast<long long>(std::strlen(s)));
        ++g_calls;
        return CORBA::string_dup(s);
    }
    Bench::Octets* echoOctets(const Bench::Octets& o) override
    {
        ServantSpan span("echoOctets", o.length());
        ++g_calls;
        return new Bench::Octets(o);
    }
    Bench::Recs* echoRecs(const Bench::Recs& r) override
    {
        ServantSpan span("echoRecs", r.length());
        ++g_calls;
        return new Bench::Recs(r);
    }
    void slow(CORBA::ULong usec) override
    {
        ServantSpan span("slow", usec);
        ++g_calls;
        sleep_usec(usec);
    }
    void spin(CORBA::ULong usec) override
    {
        ServantSpan span("spin", usec);
        ++g_calls;
        spin_usec(usec);
    }
    void fire(const char* s) override
    {
        ServantSpan span("fire", static_cast<long long>(std::strlen(s)));
        ++g_calls;
        ++g_fired;
    }
    void fail(CORBA::Long code) override
    {
        ServantSpan span("fail", code);
        ++g_calls;
        throw Bench::Busy(code);
    }
    CORBA::Long callMeBack(Bench::Callback_ptr cb, CORBA::Long n) override
    {
        ServantSpan span("callMeBack", n);
        ++g_calls;
        if (CORBA::is_nil(cb))
            throw CORBA::BAD_PARAM(0, CORBA::COMPLETED_NO);
        if (n < 0)
            n = 0;
        if (n > kMaxPings)
            n = kMaxPings;
        CORBA::Long sum = 0;
        for (CORBA::Long i = 0; i < n; ++i)
            sum += cb->ping(i);
        return sum;
    }
};

void usage()
{
    std::fprintf(stderr,
                 "usage: bench_server [-ORB<option> <value>]... -o IORFILE [-d DEADIORFILE] "
                 "[-p PIDFILE] [-bidir] [-servant-log FILE] [-q]\n");
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv)
{
    // before the ORB starts its threads: they all inherit the mask
    sigset_t stopset;
    if (!rig::block_stop_signals(&stopset)) {
        std::perror("server: pthread_sigmask");
        return 1;
    }

    std::string ior_file, dead_file, pid_file, servant_log;
    bool quiet = false, bidir = false;
    CORBA::ORB_var orb;
    try {
        orb = CORBA::ORB_init(argc, argv);  // consumes the -ORB options
    } catch (const CORBA::SystemException& ex) {
        std::fprintf(stderr, "server: ORB_init: %s\n", ex._name());
        return 2;
    }
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto val = [&]() -> std::string {
            if (i + 1 >= argc)
                usage();
            return argv[++i];
        };
        if (a == "-o")
            ior_file = val();
        else if (a == "-d")
            dead_file = val();
        else if (a == "-p")
            pid_file = val();
        else if (a == "-q")
            quiet = true;
        else if (a == "-bidir")
            bidir = true;
        else if (a == "-servant-log")
            servant_log = val();
        else {
            std::fprintf(stderr, "server: unknown argument '%s'\n", a.c_str());
            usage();
        }
    }
    if (ior_file.empty())
        usage();
    FILE* span_file = nullptr;
    if (!servant_log.empty()) {
        span_file = std::fopen(servant_log.c_str(), "w");
        if (!span_file) {
            std::fprintf(stderr, "server: %s: %s\n", servant_log.c_str(), std::strerror(errno));
            return 2;
        }
        g_spans = new SpanRec[kMaxSpans];
    }

    int rc = 0;
    try {
        PortableServer::POAManager_var pman;
        PortableServer::POA_var poa = rig::serving_poa(orb, bidir, &pman);

        EchoImpl* servant = new EchoImpl();
        PortableServer::ObjectId_var oid = poa->activate_object(servant);
        servant->_remove_ref();  // the POA holds it now
        CORBA::Object_var ref = poa->id_to_reference(oid.in());
        CORBA::String_var ior = orb->object_to_string(ref);

        std::string dead_ior;
        if (!dead_file.empty()) {
            EchoImpl* dead = new EchoImpl();
            PortableServer::ObjectId_var doid = poa->activate_object(dead);
            dead->_remove_ref();
            CORBA::Object_var dref = poa->id_to_reference(doid.in());
            CORBA::String_var ds = orb->object_to_string(dref);
            dead_ior = ds.in();
            poa->deactivate_object(doid.in());
        }

        pman->activate();

        if (!dead_file.empty() && !rig::write_file_atomic("server", dead_file, dead_ior))
            return 1;
        if (!pid_file.empty() && !rig::write_file_atomic("server", pid_file, std::to_string(static_cast<long>(getpid()))))
            return 1;
        // the IOR file last: its appearance means "ready"
        if (!rig::write_file_atomic("server", ior_file, ior.in()))
            return 1;
        if (!quiet)
            std::fprintf(stderr, "server: ready pid=%ld\n", static_cast<long>(getpid()));

        // omniORB serves requests on its own threads; main only waits for a stop signal.
        rig::wait_stop_signal(&stopset);
        orb->destroy();  // shutdown(wait=true): lets calls in progress finish
    } catch (const CORBA::Exception& ex) {
        rig::report_corba("server", ex);
        rc = 1;
    }
    if (span_file) {
        // the ORB is destroyed: no servant runs any more
        size_t n = g_nspans.load();
        for (size_t i = 0; i < n && i < kMaxSpans; ++i)
            std::fprintf(span_file, "%ld,%s,%lld,%lld,%lld,%lld,%lld\n", g_spans[i].tid, g_spans[i].op,
                         g_spans[i].arg, g_spans[i].entry_ns, g_spans[i].exit_ns, g_spans[i].cpu_entry_ns,
                         g_spans[i].cpu_exit_ns);
        if (n > kMaxSpans)
            std::fprintf(stderr, "server: -servant-log: %zu calls, only the first %zu kept\n", n, kMaxSpans);
        if (std::fclose(span_file) != 0) {
            std::perror("server: -servant-log");
            rc = 1;
        }
    }
    std::fprintf(stderr, "server: fired=%lu calls=%lu\n", g_fired.load(), g_calls.load());
    return rc;
}
