/* SPDX-License-Identifier: BSD-2-Clause */
#include "opt_refuse.h"

int gs_opt_refuse(FILE *err, const char *cmd, int opt, const char *word, const char *hint)
{
	if (opt == ':')
		fprintf(err, "giopscope %s: %s needs a value (giopscope %s --help%s)\n", cmd, word, cmd,
			hint ? hint : "");
	else
		fprintf(err, "giopscope %s: unknown option '%s' (giopscope %s --help%s)\n", cmd, word, cmd,
			hint ? hint : "");
	return 2;
}
