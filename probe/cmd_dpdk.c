/* SPDX-License-Identifier: BSD-2-Clause */
/* giopscope dpdk: kernel-bypass capture from DPDK ports (probe/dpdk/).  This
 * file only dispatches, so that a build without DPDK still has the command
 * and says why it cannot run. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#ifdef GS_HAVE_DPDK
#include "dpdk/dpdk_main.h"
#endif

/* -Z is not offered here (docs/dpdk.md, "Privileges"): DPDK's memory, its
 * run-time directory and a vfio-pci device stay root's after start, and the
 * EAL keeps using them until rte_eal_cleanup.  Said plainly, whatever
 * position the word has, rather than as an unknown option. */
static bool asks_for_z(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strncmp(argv[i], "-Z", 2) == 0 || strncmp(argv[i], "--relinquish-privileges", 23) == 0)
			return true;
	return false;
}

int gs_cmd_dpdk(int argc, char **argv)
{
	if (asks_for_z(argc, argv)) {
		fprintf(stderr, "giopscope dpdk: -Z is not supported: DPDK needs root until it exits "
			"(docs/dpdk.md, Privileges)\n");
		return 2;
	}
#ifdef GS_HAVE_DPDK
	return gs_dpdk_main(argc, argv);
#else
	(void)argc;
	(void)argv;
	fprintf(stderr, "giopscope dpdk: built without DPDK (install dpdk-dev, libdpdk-dev and rebuild)\n");
	return 2;
#endif
}
