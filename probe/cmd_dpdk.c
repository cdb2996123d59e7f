/* giopscope dpdk: not built yet (a placeholder so that the command exists). */
#include <stdio.h>

#include "commands.h"

int gs_cmd_dpdk(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "giopscope dpdk: not available in this build yet\n");
	return 2;
}
