/* The subcommands of giopscope; each returns the process exit code. */
#ifndef GS_COMMANDS_H
#define GS_COMMANDS_H

#define GS_VERSION "0.1.0"

int gs_cmd_read(int argc, char **argv);

#endif
