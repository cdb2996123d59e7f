/* SPDX-License-Identifier: BSD-2-Clause */
/* analysis/out_file.c -- see out_file.h */
#include "out_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* the longest part of NAME kept in ".NAME.XXXXXX" (a name is at most 255 bytes) */
#define TMP_BASE_MAX 200

/* Creates ".BASE.XXXXXX" beside PATH (X: random letters and digits, retried while taken)
 * for writing: its descriptor, or -1 with errno set. */
static int make_tmp(char *tmp, size_t len, const char *path, mode_t mode)
{
	static const char sym[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	int dirlen = slash ? (int)(slash + 1 - path) : 0;
	size_t baselen = strlen(base);

	if (baselen == 0) {
		errno = EISDIR;
		return -1;
	}
	if (baselen > TMP_BASE_MAX)
		baselen = TMP_BASE_MAX;
	for (int attempt = 0; attempt < 100; attempt++) {
		unsigned char rnd[6];
		char x[sizeof rnd + 1];
		int n, fd;
		if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
			/* no entropy yet (early boot): the pid and the attempt still differ */
			unsigned v = (unsigned)getpid() * 2654435761u + (unsigned)attempt * 40503u;
			for (size_t i = 0; i < sizeof rnd; i++, v >>= 5)
				rnd[i] = (unsigned char)v;
		}
		for (size_t i = 0; i < sizeof rnd; i++)
			x[i] = sym[rnd[i] % (sizeof sym - 1)];
		x[sizeof rnd] = '\0';
		n = snprintf(tmp, len, "%.*s.%.*s.%s", dirlen, path, (int)baselen, base, x);
		if (n < 0 || (size_t)n >= len) {
			errno = ENAMETOOLONG;
			return -1;
		}
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

/* TRUNC false: only proves that PATH could be written (gs_out_check) */
static int out_open(struct gs_out *o, const char *path, mode_t mode, bool trunc)
{
	struct stat st;
	bool exists = false;
	int fd, err;

	memset(o, 0, sizeof *o);
	o->path = path;
	if (strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode))
			return ELOOP;
		if (S_ISDIR(st.st_mode))
			return EISDIR;
		exists = true;
	} else if (errno != ENOENT) {
		return errno;
	}
	fd = -1;
	err = 0;
	if (!exists || S_ISREG(st.st_mode)) {
		fd = make_tmp(o->tmp, sizeof o->tmp, path, mode);
		err = fd < 0 ? errno : 0;
		if (fd < 0) {
			o->tmp[0] = '\0';
			/* a folder we may not write in: PATH itself, in place, as before */
			if (!exists || (err != EACCES && err != EPERM))
				return err;
		}
	}
	if (fd < 0) {
		/* a terminal, /dev/null, a FIFO: written where it is */
		int flags = O_WRONLY | O_NOFOLLOW | O_CLOEXEC | (trunc ? O_CREAT | O_TRUNC : 0);
		if ((fd = open(path, flags, mode)) < 0)
			return errno;
	} else if (exists) {
		/* as if NAME had been truncated: its permissions (and owner, where we may) */
		if (fchown(fd, st.st_uid, st.st_gid) != 0) {
			/* not ours to give away: the file stays ours */
		}
		if (fchmod(fd, st.st_mode & 0777) != 0) {
			/* keeps the mode it was created with */
		}
	}
	if (!(o->f = fdopen(fd, "w"))) {
		err = errno;
		close(fd);
		if (o->tmp[0])
			unlink(o->tmp);
		o->tmp[0] = '\0';
		return err;
	}
	return 0;
}

int gs_out_create(struct gs_out *o, const char *path, mode_t mode)
{
	return out_open(o, path, mode, true);
}

int gs_out_commit(struct gs_out *o)
{
	if (!o->f || !o->tmp[0])
		return 0;
	if (rename(o->tmp, o->path) != 0)
		return errno;
	o->tmp[0] = '\0';
	return 0;
}

int gs_out_close(struct gs_out *o, bool keep)
{
	int err = 0;
	if (!o->f)
		return 0;
	if (o->f == stdout) {
		errno = 0;
		if (fflush(stdout) != 0 || ferror(stdout))
			err = errno ? errno : EIO;
		o->f = NULL;
		return err;
	}
	errno = 0;
	if (ferror(o->f))
		err = EIO; /* a write failed earlier (the caller said so) */
	if (fclose(o->f) != 0 && !err)
		err = errno ? errno : EIO;
	o->f = NULL;
	if (o->tmp[0]) {
		if (keep && !err && rename(o->tmp, o->path) != 0)
			err = errno;
		if (!keep || err)
			unlink(o->tmp);
		o->tmp[0] = '\0';
	}
	return err;
}

int gs_out_check(const char *path, mode_t mode)
{
	struct gs_out o;
	int err;
	if (strcmp(path, "-") == 0)
		return 0;
	if ((err = out_open(&o, path, mode, false)) != 0)
		return err;
	gs_out_close(&o, false);
	return 0;
}

const char *gs_out_why(char *buf, size_t len, const char *path, int err)
{
	if (err == ELOOP)
		snprintf(buf, len, "%s: is a symbolic link, not followed", path);
	else
		snprintf(buf, len, "cannot write %s: %s", path, strerror(err));
	return buf;
}
