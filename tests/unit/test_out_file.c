/* gs_out_open / gs_out_check (analysis/out_file.c): every file giopscope writes
 * (-o, -w, --report, --trace) is created or truncated, never opened through a
 * symbolic link, and not inherited across exec. */
#include "unit.h"
#include "../../analysis/out_file.h"

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
	rmdir(d->path);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void test_link_refused_target_untouched(void **state)
{
	struct dir d;
	char buf[32] = "";
	FILE *f;
	(void)state;
	dir_make(&d);
	put(d.a, "not yours");
	assert_int_equal(symlink(d.a, d.b), 0);
	errno = 0;
	assert_null(gs_out_open(d.b, 0644));
	assert_int_equal(errno, ELOOP);
	assert_int_equal(gs_out_check(d.b, 0644), ELOOP);
	f = fopen(d.a, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof buf, f));
	fclose(f);
	assert_string_equal(buf, "not yours");
	dir_rm(&d);
}

static void test_created_truncated_mode_cloexec(void **state)
{
	struct dir d;
	struct stat st;
	FILE *f;
	mode_t old = umask(0);
	(void)state;
	dir_make(&d);
	put(d.a, "old contents, longer");
	f = gs_out_open(d.a, 0600);
	assert_non_null(f);
	assert_true(fcntl(fileno(f), F_GETFD) & FD_CLOEXEC);
	fputs("new", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(stat(d.a, &st), 0);
	assert_int_equal(st.st_size, 3);                 /* truncated */
	unlink(d.a);
	assert_int_equal(gs_out_check(d.a, 0600), 0);    /* created, empty */
	assert_int_equal(stat(d.a, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(gs_out_check("-", 0644), 0);    /* standard output: nothing to try */
	assert_int_equal(gs_out_check("/nonexistent-dir/x", 0644), ENOENT);
	umask(old);
	dir_rm(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_link_refused_target_untouched),
		UT(test_created_truncated_mode_cloexec),
	};
	return cmocka_run_group_tests_name("test_out_file", tests, NULL, NULL);
}
