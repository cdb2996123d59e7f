// bench_server: omniORB servant for the Bench IDL (tests/orb/bench.idl), used to make real GIOP
// captures for giopscope's integration tests.
//
//   bench_server [-ORB<option> <value>]... -o IORFILE [-d DEADIORFILE] [-p PIDFILE] [-bidir] [-q]
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
//   -q        quiet (no "server: ready" line)
//
// Servant: echoString/echoOctets/echoRecs return their argument, slow(usec) nanosleep()s usec
// (capped at 10 s), fire (oneway) counts, fail(code) raises Busy(code), callMeBack(cb, n) calls
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
#include <unistd.h>

namespace {

std::atomic<unsigned long> g_fired{0};
std::atomic<unsigned long> g_calls{0};

const CORBA::ULong kMaxSleepUsec = 10u * 1000u * 1000u;
const CORBA::Long kMaxPings = 100000;

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

class EchoImpl : public POA_Bench::Echo {
public:
    char* echoString(const char* s) override
    {
        ++g_calls;
        return CORBA::string_dup(s);
    }
    Bench::Octets* echoOctets(const Bench::Octets& o) override
    {
        ++g_calls;
        return new Bench::Octets(o);
    }
    Bench::Recs* echoRecs(const Bench::Recs& r) override
    {
        ++g_calls;
        return new Bench::Recs(r);
    }
    void slow(CORBA::ULong usec) override
    {
        ++g_calls;
        sleep_usec(usec);
    }
    void fire(const char*) override
    {
        ++g_calls;
        ++g_fired;
    }
    void fail(CORBA::Long code) override
    {
        ++g_calls;
        throw Bench::Busy(code);
    }
    CORBA::Long callMeBack(Bench::Callback_ptr cb, CORBA::Long n) override
    {
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
                 "[-p PIDFILE] [-bidir] [-q]\n");
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

    std::string ior_file, dead_file, pid_file;
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
        PortableServer::POA_var root = PortableServer::POA::_narrow(obj);
        PortableServer::POAManager_var pman = root->the_POAManager();
        PortableServer::POA_var poa = PortableServer::POA::_duplicate(root);
        if (bidir) {
            CORBA::Any v;
            v <<= BiDirPolicy::BOTH;
            CORBA::PolicyList pl;
            pl.length(1);
            pl[0] = orb->create_policy(BiDirPolicy::BIDIRECTIONAL_POLICY_TYPE, v);
            poa = root->create_POA("bidir", pman, pl);
            pl[0]->destroy();
        }

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
    } catch (const CORBA::SystemException& ex) {
        std::fprintf(stderr, "server: CORBA system exception %s minor 0x%lx\n", ex._name(),
                     static_cast<unsigned long>(ex.minor()));
        rc = 1;
    } catch (const CORBA::Exception& ex) {
        std::fprintf(stderr, "server: CORBA exception %s\n", ex._name());
        rc = 1;
    }
    std::fprintf(stderr, "server: fired=%lu calls=%lu\n", g_fired.load(), g_calls.load());
    return rc;
}
