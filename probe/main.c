/* SPDX-License-Identifier: BSD-2-Clause */
/* giopscope: CORBA GIOP/IIOP latency from the wire. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"

/* The one mutable global: what a signal handler may touch. */
volatile sig_atomic_t gs_stop_requested;

static void on_signal(int sig)
{
	gs_stop_requested = sig;
}

static void install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* no SA_RESTART: a blocking read returns EINTR and the loop sees the flag */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static const struct {
	const char *name;
	int (*fn)(int, char **);
} commands[] = {
	{ "read", gs_cmd_read },
	{ "live", gs_cmd_live },
	{ "attach", gs_cmd_attach },
	{ "dpdk", gs_cmd_dpdk },
	{ "merge", gs_cmd_merge },
};

static void usage(FILE *f)
{
	fputs("usage: giopscope COMMAND [options]\n"
	      "  read FILE...     analyse pcap/pcapng captures offline ('-' for stdin)\n"
	      "  live -i IFACE    capture on an interface with libpcap, calls as they end\n"
	      "  attach --pid PID | --comm NAME | --port N   eBPF taps on running ORB processes\n"
	      "  dpdk [EAL options] -- [options]   kernel-bypass capture from a DPDK port\n"
	      "  merge CLIENT.pcap SERVER.pcap   the same calls from both hosts: network vs server time\n"
	      "  help             this text; 'giopscope COMMAND --help' for a command's options\n"
	      "  version          print the version\n"
	      "live and attach take -Z USER: once the tap is open, become USER (as tcpdump -Z)\n"
	      "exit codes: 0 done, 1 bad input (calls decoded before it are still written),\n"
	      "            2 usage or environment error\n",
	      f);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
		if (strcmp(argv[1], commands[i].name) == 0) {
			install_signals();
			return commands[i].fn(argc - 1, argv + 1);
		}
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0) {
		printf("giopscope %s\n", GS_VERSION);
		return 0;
	}
	fprintf(stderr, "giopscope: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
