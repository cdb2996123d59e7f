/* giopscope: CORBA GIOP/IIOP latency from the wire. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

static void usage(FILE *f)
{
	fputs("usage: giopscope COMMAND [options]\n"
	      "  read FILE...     analyse pcap/pcapng captures offline ('-' for stdin)\n"
	      "  help             this text; 'giopscope COMMAND --help' for a command's options\n"
	      "  version          print the version\n"
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
	if (strcmp(argv[1], "read") == 0)
		return gs_cmd_read(argc - 1, argv + 1);
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
