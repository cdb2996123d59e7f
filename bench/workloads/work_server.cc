/* SPDX-License-Identifier: BSD-2-Clause */
// work_server: omniORB servant for the workloads IDL (bench/workloads/work.idl), the server side
// of bench/workloads.sh.
//
//   work_server [-ORB<option> <value>]... -o IORFILE [-q]
//
//   -ORBendPoint giop:tcp:ADDR:PORT     where to listen
//   -o FILE   write the Bench object's stringified IOR to FILE (atomically: tmp + rename; its
//             appearance means "ready")
//   -q        quiet (no "server: ready" line)
//
// Servant: echo* return their payload, send* (oneway) count it, work(usec) nanosleep()s usec
// (capped at 1 s: a bench never needs more, and a bad argument cannot hang a run) and returns it.
//
// SIGTERM / SIGINT / SIGHUP: blocked in every thread, taken by sigwait() in main, which then
// destroys the ORB (waits for calls in progress), prints "server: calls=N oneways=N" on stderr
// and exits 0. Exit 2 on usage errors, 1 on a CORBA or system error.

#include <work.hh>

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
#include <unistd.h>

namespace {

std::atomic<unsigned long> g_calls{0};
std::atomic<unsigned long> g_oneways{0};

const CORBA::ULong kMaxSleepUsec = 1000000u;

class BenchImpl : public POA_Work::Bench {
public:
    Work::PrimsSeq* echoPrims(CORBA::ULongLong, CORBA::ULong, const Work::PrimsSeq& v) override
    {
        ++g_calls;
        return new Work::PrimsSeq(v);
    }
    Work::RecASeq* echoRecA(CORBA::ULongLong, CORBA::ULong, const Work::RecASeq& v) override
    {
        ++g_calls;
        return new Work::RecASeq(v);
    }
    Work::RecUSeq* echoRecU(CORBA::ULongLong, CORBA::ULong, const Work::RecUSeq& v) override
    {
        ++g_calls;
        return new Work::RecUSeq(v);
    }
    CORBA::Any* echoAny(CORBA::ULongLong, CORBA::ULong, const CORBA::Any& v) override
    {
        ++g_calls;
        return new CORBA::Any(v);
    }
    void sendPrims(CORBA::ULongLong, CORBA::ULong, const Work::PrimsSeq&) override { ++g_oneways; }
    void sendRecA(CORBA::ULongLong, CORBA::ULong, const Work::RecASeq&) override { ++g_oneways; }
    void sendRecU(CORBA::ULongLong, CORBA::ULong, const Work::RecUSeq&) override { ++g_oneways; }
    void sendAny(CORBA::ULongLong, CORBA::ULong, const CORBA::Any&) override { ++g_oneways; }

    CORBA::ULong work(CORBA::ULong usec) override
    {
        ++g_calls;
        CORBA::ULong u = usec > kMaxSleepUsec ? kMaxSleepUsec : usec;
        struct timespec ts;
        ts.tv_sec = u / 1000000u;
        ts.tv_nsec = static_cast<long>(u % 1000000u) * 1000L;
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
        return usec;
    }
};

[[noreturn]] void usage()
{
    std::fprintf(stderr, "usage: work_server [-ORB<option> <value>]... -o IORFILE [-q]\n");
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

    CORBA::ORB_var orb;
    try {
        orb = CORBA::ORB_init(argc, argv);  // consumes the -ORB options
    } catch (const CORBA::SystemException& ex) {
        std::fprintf(stderr, "server: ORB_init: %s\n", ex._name());
        return 2;
    }
    std::string ior_file;
    bool quiet = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "-o" && i + 1 < argc)
            ior_file = argv[++i];
        else if (a == "-q")
            quiet = true;
        else {
            std::fprintf(stderr, "server: unknown argument '%s'\n", a.c_str());
            usage();
        }
    }
    if (ior_file.empty())
        usage();

    int rc = 0;
    try {
        CORBA::Object_var obj = orb->resolve_initial_references("RootPOA");
        PortableServer::POA_var poa = PortableServer::POA::_narrow(obj);
        PortableServer::POAManager_var pman = poa->the_POAManager();
        BenchImpl* servant = new BenchImpl();
        PortableServer::ObjectId_var oid = poa->activate_object(servant);
        servant->_remove_ref();  // the POA holds it now
        CORBA::Object_var ref = poa->id_to_reference(oid.in());
        CORBA::String_var ior = orb->object_to_string(ref);
        pman->activate();
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
    std::fprintf(stderr, "server: calls=%lu oneways=%lu\n", g_calls.load(), g_oneways.load());
    return rc;
}
