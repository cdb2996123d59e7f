/* SPDX-License-Identifier: BSD-2-Clause */
/* giopscope dpdk, built with DPDK: called by probe/cmd_dpdk.c. */
#ifndef GS_DPDK_MAIN_H
#define GS_DPDK_MAIN_H

int gs_dpdk_main(int argc, char **argv);

#endif
