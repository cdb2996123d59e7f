// SPDX-License-Identifier: BSD-2-Clause
#include "err_buf.h"

#include <stdarg.h>
#include <stdio.h>

int gs_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return 2;
}
