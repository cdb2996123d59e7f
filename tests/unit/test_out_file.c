/* SPDX-License-Identifier: BSD-2-Clause */
/* gs_out_* (analysis/out_file.c): every file giopscope writes (-o, -w, --report,
 * --trace) is a new file beside its name, never opened through a symbolic link, not
 * inherited across exec, and it replaces what is under the name only when kept. */
#include "unit.h"
#include "../../analysis/out_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

struct dir {
	char path[64];
	char a[128], b[128];
};

static void dir_make(struct dir *d)
{
	strcpy(d->path, "/tmp/gs-out-file.XXXXXX");
	assert_non_null(mkdtemp(d->path));
	snprintf(d->a, sizeof d->a, "%s/victim", d->path);
	snprintf(d->b, sizeof d->b, "%s/link", d->path);
}

static void dir_rm(struct dir *d)
{
	unlink(d->a);
	unlink(d->b);
	assert_int_equal(rmdir(d->path), 0); /* nothing else left in it */
}

/* entries of the folder besides . and .. */
static int entries(const struct dir *d)
{
	DIR *dp = opendir(d->path);
	struct dirent *de;
	int n = 0;
	assert_non_null(dp);
	while ((de = readdir(dp)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(dp);
	return n;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void expect(const char *path, const char *text)
{
	char buf[64] = "";
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	if (!fgets(buf, sizeof buf, f))
		buf[0] = '\0';
	fclose(f);
	assert_string_equal(buf, text);
}

static void test_link_refused_target_untouched(void **state)
{
	struct dir d;
	struct gs_out o;
	char why[256];
	(void)state;
	dir_make(&d);
	put(d.a, "not yours");
	assert_int_equal(symlink(d.a, d.b), 0);
	assert_int_equal(gs_out_create(&o, d.b, 0666), ELOOP);
	assert_null(o.f);
	assert_int_equal(gs_out_check(d.b, 0666), ELOOP);
	expect(d.a, "not yours");
	assert_int_equal(entries(&d), 2);
	gs_out_why(why, sizeof why, "keep.csv", ELOOP);
	assert_string_equal(why, "keep.csv: is a symbolic link, not followed");
	gs_out_why(why, sizeof why, "x/y", ENOENT);
	assert_string_equal(why, "cannot write x/y: No such file or directory");
	dir_rm(&d);
}

/* a new name: created under a temporary name with the umask applied, close-on-exec,
 * and under its own name only once kept */
static void test_new_file_mode_cloexec_commit(void **state)
{
	struct dir d;
	struct gs_out o;
	struct stat st;
	mode_t old = umask(027);
	(void)state;
	dir_make(&d);
	assert_int_equal(gs_out_create(&o, d.a, 0666), 0);
	assert_non_null(o.f);
	assert_true(fcntl(fileno(o.f), F_GETFD) & FD_CLOEXEC);
	assert_true(o.tmp[0] != '\0');
	assert_int_equal(access(d.a, F_OK), -1);        /* not there yet */
	assert_int_equal(entries(&d), 1);                /* the temporary file */
	fputs("rows", o.f);
	assert_int_equal(gs_out_close(&o, true), 0);
	assert_null(o.f);
	expect(d.a, "rows");
	assert_int_equal(stat(d.a, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);      /* 0666 & ~027 */
	assert_int_equal(entries(&d), 1);
	assert_int_equal(gs_out_close(&o, true), 0);    /* again: nothing to do */
	umask(old);
	dir_rm(&d);
}

/* an existing file: untouched until kept; a discarded run leaves it and nothing else */
static void test_existing_file_replaced_only_when_kept(void **state)
{
	struct dir d;
	struct gs_out o;
	struct stat st;
	(void)state;
	dir_make(&d);
	put(d.a, "old contents, longer");
	assert_int_equal(chmod(d.a, 0604), 0);
	assert_int_equal(gs_out_create(&o, d.a, 0666), 0);
	fputs("new", o.f);
	fflush(o.f);
	expect(d.a, "old contents, longer");
	assert_int_equal(gs_out_close(&o, false), 0);   /* a set-up that failed */
	expect(d.a, "old contents, longer");
	assert_int_equal(entries(&d), 1);

	/* committed while still open (a live capture once running): written on there */
	assert_int_equal(gs_out_create(&o, d.a, 0666), 0);
	fputs("new", o.f);
	assert_int_equal(gs_out_commit(&o), 0);
	assert_string_equal(o.tmp, "");
	fputs(" rows", o.f);
	assert_int_equal(gs_out_close(&o, false), 0);   /* committed: stays */
	expect(d.a, "new rows");
	assert_int_equal(stat(d.a, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0604);      /* the permissions it had */
	assert_int_equal(entries(&d), 1);
	dir_rm(&d);
}

static void test_check_touches_nothing(void **state)
{
	struct dir d;
	(void)state;
	dir_make(&d);
	assert_int_equal(gs_out_check(d.a, 0666), 0);   /* could be created: is not */
	assert_int_equal(access(d.a, F_OK), -1);
	put(d.a, "kept");
	assert_int_equal(gs_out_check(d.a, 0666), 0);
	expect(d.a, "kept");
	assert_int_equal(entries(&d), 1);
	assert_int_equal(gs_out_check(d.path, 0666), EISDIR);
	assert_int_equal(gs_out_check("-", 0666), 0);   /* standard output: nothing to try */
	assert_int_equal(gs_out_check("/nonexistent-dir/x", 0666), ENOENT);
	dir_rm(&d);
}

/* not a regular file: written where it is, never renamed over */
static void test_device_in_place(void **state)
{
	struct gs_out o;
	struct stat st;
	(void)state;
	assert_int_equal(gs_out_create(&o, "/dev/null", 0666), 0);
	assert_string_equal(o.tmp, "");
	fputs("x", o.f);
	assert_int_equal(gs_out_close(&o, true), 0);
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(gs_out_create(&o, "-", 0666), 0);
	assert_ptr_equal(o.f, stdout);
	assert_int_equal(gs_out_close(&o, true), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_link_refused_target_untouched),
		UT(test_new_file_mode_cloexec_commit),
		UT(test_existing_file_replaced_only_when_kept),
		UT(test_check_touches_nothing),
		UT(test_device_in_place),
	};
	return cmocka_run_group_tests_name("test_out_file", tests, NULL, NULL);
}
