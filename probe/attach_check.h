/* SPDX-License-Identifier: BSD-2-Clause */
/* `giopscope attach --check`: one line per program, text or JSON lines. */
#ifndef GS_ATTACH_CHECK_H
#define GS_ATTACH_CHECK_H

#include <stdbool.h>
#include <stdio.h>

#include "attach_load.h"

struct gs_check_out {
	FILE *f;
	bool jsonl;
	bool all;                 /* --check-all: the send/recv candidates attach would not use too */
	unsigned rows;
};

/* A gs_verdict_fn: writes one program's row (arg: the gs_check_out). */
void gs_check_row(void *arg, const struct gs_prog_verdict *v);

#endif
