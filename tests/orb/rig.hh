/* SPDX-License-Identifier: BSD-2-Clause */
// tests/orb/rig.hh -- what every omniORB program of the project's rigs shares: the test rig
// (tests/orb: bench_server, bench_client) and the benchmark workloads (bench/workloads:
// work_server, work_client). Header-only: clocks, number parsing, reading and writing the
// small files (IORs, pid files) through which the scripts talk to the programs, the
// stop-signal handling of the servers, and the clients' ORB_init with bounded calls.
//
// The programs are test tools: on a usage error they print and exit(2) themselves, so the
// helpers that can fail on user input take the program's name ("client", "server") for the
// message and a usage function to call.
#ifndef GIOPSCOPE_TESTS_ORB_RIG_HH
#define GIOPSCOPE_TESTS_ORB_RIG_HH

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include <omniORB4/CORBA.h>
#include <pthread.h>
#include <unistd.h>

namespace rig {

// CLOCK_REALTIME in integer nanoseconds: the clock the capture time stamps are in, so a
// program's own per-call times can be set against giopscope's.
inline long long now_ns()
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

// A decimal number in [0, max]; anything else (sign, junk after it, overflow) calls
// usage("bad WHAT 'S'"), which does not return.
inline unsigned long parse_num(const char* s, unsigned long max, const char* what,
                               void (*usage)(const char*))
{
    char* end = nullptr;
    errno = 0;
    unsigned long v = std::strtoul(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v > max) {
        std::string msg = std::string("bad ") + what + " '" + s + "'";
        usage(msg.c_str());
    }
    return v;
}

// The first max bytes (at least) of a small text file; exit(2) with "WHO: PATH: reason" when
// it cannot be opened. Bounded: an IOR file is never more than a few KB, an IOR list of 4096
// servers well under 16 MiB.
inline std::string read_file(const char* who, const std::string& path, size_t max)
{
    FILE* f = std::fopen(path.c_str(), "r");
    if (!f) {
        std::fprintf(stderr, "%s: %s: %s\n", who, path.c_str(), std::strerror(errno));
        std::exit(2);
    }
    std::string s;
    char buf[4096];
    size_t k;
    while (s.size() < max && (k = std::fread(buf, 1, sizeof buf, f)) > 0)
        s.append(buf, k);
    std::fclose(f);
    return s;
}

// s without the line ends and blanks a writer left after it (an IOR file ends in '\n')
inline std::string trim_right(std::string s)
{
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' '))
        s.pop_back();
    return s;
}

// text and a '\n' into path, through a temporary file and rename(): a script that waits for
// the file never reads half of it (its appearance means "ready").
inline bool write_file_atomic(const char* who, const std::string& path, const std::string& text)
{
    std::string tmp = path + ".tmp." + std::to_string(static_cast<long>(getpid()));
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (!f) {
        std::fprintf(stderr, "%s: %s: %s\n", who, tmp.c_str(), std::strerror(errno));
        return false;
    }
    bool ok = std::fputs(text.c_str(), f) >= 0 && std::fputc('\n', f) != EOF;
    ok = (std::fclose(f) == 0) && ok;
    if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::fprintf(stderr, "%s: cannot write %s: %s\n", who, path.c_str(), std::strerror(errno));
        std::remove(tmp.c_str());
        return false;
    }
    return true;
}

// Servers: SIGTERM, SIGINT and SIGHUP blocked in the calling thread -- call it before the ORB
// starts its threads, so that they all inherit the mask and only wait_stop_signal() sees the
// signal -- and SIGPIPE ignored (a client that goes away must not kill the server).
inline bool block_stop_signals(sigset_t* set)
{
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGHUP);
    if (pthread_sigmask(SIG_BLOCK, set, nullptr) != 0)
        return false;
    std::signal(SIGPIPE, SIG_IGN);
    return true;
}

// Returns when one of the signals of block_stop_signals() arrives.
inline void wait_stop_signal(const sigset_t* set)
{
    int sig = 0;
    while (sigwait(set, &sig) != 0) {
    }
}

// Clients: CORBA::ORB_init on argv with -ORBclientCallTimeOutPeriod 30000 added unless the
// caller gave one, so that every call of a test or bench run is bounded (a server that went
// away costs 30 s, not forever). The options ORB_init did not consume are left in *av (with
// its count in *ac) for the program's own parsing. Nil (after a line on stderr) if ORB_init
// fails.
inline CORBA::ORB_ptr client_orb_init(int argc, char** argv, std::vector<char*>* av, int* ac)
{
    bool have_timeout = false;
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "-ORBclientCallTimeOutPeriod") == 0)
            have_timeout = true;
    av->assign(argv, argv + argc);
    static char opt_to[] = "-ORBclientCallTimeOutPeriod";
    static char val_to[] = "30000";
    if (!have_timeout) {
        av->push_back(opt_to);
        av->push_back(val_to);
    }
    av->push_back(nullptr);
    *ac = static_cast<int>(av->size()) - 1;
    try {
        return CORBA::ORB_init(*ac, av->data());  // consumes the -ORB options
    } catch (const CORBA::SystemException& ex) {
        std::fprintf(stderr, "client: ORB_init: %s\n", ex._name());
        return CORBA::ORB::_nil();
    }
}

// The POA a program's servants are activated in: the root POA, or with `bidir` a child
// POA with the BiDirectional policy (BiDirPolicy::BOTH), which bidirectional GIOP needs on
// both sides (README.md, "Callbacks and bidirectional GIOP"). Its manager is the root's,
// in *pman, to activate once the servants are in.
inline PortableServer::POA_ptr serving_poa(CORBA::ORB_ptr orb, bool bidir, PortableServer::POAManager_var* pman)
{
    CORBA::Object_var obj = orb->resolve_initial_references("RootPOA");
    PortableServer::POA_var root = PortableServer::POA::_narrow(obj);
    *pman = root->the_POAManager();
    if (!bidir)
        return root._retn();
    CORBA::Any v;
    v <<= BiDirPolicy::BOTH;
    CORBA::PolicyList pl;
    pl.length(1);
    pl[0] = orb->create_policy(BiDirPolicy::BIDIRECTIONAL_POLICY_TYPE, v);
    PortableServer::POA_ptr poa = root->create_POA("bidir", *pman, pl);
    pl[0]->destroy();
    return poa;
}

// A CORBA exception that ended a program's main work: one line on stderr, `who: ...`.
inline void report_corba(const char* who, const CORBA::Exception& ex)
{
    const CORBA::SystemException* sys = CORBA::SystemException::_downcast(&ex);
    if (sys)
        std::fprintf(stderr, "%s: CORBA system exception %s minor 0x%lx\n", who, ex._name(),
                     static_cast<unsigned long>(sys->minor()));
    else
        std::fprintf(stderr, "%s: CORBA exception %s\n", who, ex._name());
}

}  // namespace rig

#endif
