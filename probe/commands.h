/* SPDX-License-Identifier: BSD-2-Clause */
/* The subcommands of giopscope; each returns the process exit code. */
#ifndef GS_COMMANDS_H
#define GS_COMMANDS_H

#define GS_VERSION "0.1.0"

int gs_cmd_read(int argc, char **argv);
int gs_cmd_live(int argc, char **argv);
int gs_cmd_attach(int argc, char **argv);
int gs_cmd_dpdk(int argc, char **argv);
int gs_cmd_merge(int argc, char **argv);

/* Set by the signal handlers main() installs (SIGINT, SIGTERM, SIGHUP): a
 * continuous source stops, writes its summary and exits. */
#include <signal.h>
extern volatile sig_atomic_t gs_stop_requested;

#endif
