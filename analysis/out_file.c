/* analysis/out_file.c -- see out_file.h */
#include "out_file.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <unistd.h>

FILE *gs_out_open(const char *path, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
	FILE *f;
	if (fd < 0)
		return NULL;
	if (!(f = fdopen(fd, "w"))) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return f;
}

int gs_out_check(const char *path, mode_t mode)
{
	FILE *f;
	if (path[0] == '-' && path[1] == 0)
		return 0;
	if (!(f = gs_out_open(path, mode)))
		return errno ? errno : EIO;
	return fclose(f) == 0 ? 0 : (errno ? errno : EIO);
}
