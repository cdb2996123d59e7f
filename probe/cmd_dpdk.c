/* giopscope dpdk: kernel-bypass capture from DPDK ports (probe/dpdk/).  This
 * file only dispatches, so that a build without DPDK still has the command
 * and says why it cannot run. */
#include <stdio.h>

#include "commands.h"
#ifdef GS_HAVE_DPDK
#include "dpdk/dpdk_main.h"
#endif

int gs_cmd_dpdk(int argc, char **argv)
{
#ifdef GS_HAVE_DPDK
	return gs_dpdk_main(argc, argv);
#else
	(void)argc;
	(void)argv;
	fprintf(stderr, "giopscope dpdk: built without DPDK (install dpdk-dev, libdpdk-dev and rebuild)\n");
	return 2;
#endif
}
