/* SPDX-License-Identifier: BSD-2-Clause */
/* -Z USER (probe/privdrop.c, compiled in): the user lookup and its refusals,
 * and the drop itself, done in a child process so that this one keeps its
 * privileges for the next case.  As root the switch to `nobody` is checked
 * for real (ids, no way back to uid 0, no capabilities); otherwise the
 * lookup's refusal to switch users is. */
#include <errno.h>
#include <linux/capability.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "unit.h"
#include "../../probe/privdrop.h"

/* the capability sets of this process, effective and permitted (both words) */
static void caps_now(uint64_t *eff, uint64_t *prm)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof d);
	*eff = *prm = ~0ull;
	if (syscall(SYS_capget, &h, d) == 0) {
		*eff = (uint64_t)d[0].effective | (uint64_t)d[1].effective << 32;
		*prm = (uint64_t)d[0].permitted | (uint64_t)d[1].permitted << 32;
	}
}

static void test_lookup_refusals(void **state)
{
	struct gs_privdrop p;
	char err[256];
	assert_int_equal(gs_priv_lookup(&p, "no_such_user_xyz", err, sizeof err), ENOENT);
	assert_false(p.set);
	assert_non_null(strstr(err, "no user 'no_such_user_xyz'"));
	assert_null(strchr(err, '\n'));
	assert_int_equal(gs_priv_lookup(&p, "", err, sizeof err), EINVAL);
	assert_int_equal(gs_priv_lookup(&p, NULL, err, sizeof err), EINVAL);
	assert_false(p.set);
	/* uid 0 would keep everything: refused, whatever the name */
	assert_int_equal(gs_priv_lookup(&p, "root", err, sizeof err), EINVAL);
	assert_non_null(strstr(err, "uid 0"));
	assert_false(p.set);
	/* a name that would break the one-line message is no user */
	assert_int_equal(gs_priv_lookup(&p, "no\nbody", err, sizeof err), ENOENT);
	assert_null(strchr(err, '\n'));
	/* a very long name: looked up, not found, the message still bounded */
	{
		char big[600];
		memset(big, 'x', sizeof big - 1);
		big[sizeof big - 1] = '\0';
		assert_int_equal(gs_priv_lookup(&p, big, err, sizeof err), ENOENT);
		assert_true(strlen(err) < 100);
	}
}

static void test_lookup_nobody(void **state)
{
	struct gs_privdrop p;
	struct passwd *pw = getpwnam("nobody");
	char err[256];
	int r;
	assert_non_null(pw); /* Debian always has it; the integration tests use it too */
	r = gs_priv_lookup(&p, "nobody", err, sizeof err);
	if (geteuid() == 0) {
		assert_int_equal(r, 0);
		assert_true(p.set);
		assert_true(p.switch_ids);
		assert_int_equal(p.uid, pw->pw_uid);
		assert_int_equal(p.gid, pw->pw_gid);
		assert_string_equal(p.name, "nobody");
	} else if (geteuid() == pw->pw_uid && getuid() == pw->pw_uid) {
		assert_int_equal(r, 0);
		assert_true(p.set);
		assert_false(p.switch_ids); /* only the capabilities go */
	} else {
		assert_int_equal(r, EPERM);
		assert_non_null(strstr(err, "needs root"));
	}
}

/* Runs fn in a child; its exit status (0: every check held). */
static int in_child(int (*fn)(void))
{
	int st = 0;
	pid_t pid = fork();
	if (pid == 0)
		_exit(fn());
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* each failed check its own exit status, for the message */
static int child_switch(void)
{
	struct gs_privdrop p;
	struct passwd *pw = getpwnam("nobody");
	char err[256];
	uid_t r, e, s;
	uint64_t eff, prm;
	if (!pw || gs_priv_lookup(&p, "nobody", err, sizeof err) != 0)
		return 10;
	if (gs_priv_drop(&p, err, sizeof err) != 0)
		return 11;
	if (getresuid(&r, &e, &s) != 0 || r != pw->pw_uid || e != pw->pw_uid || s != pw->pw_uid)
		return 12;
	if (getgid() != pw->pw_gid || getegid() != pw->pw_gid)
		return 13;
	if (setuid(0) == 0 || seteuid(0) == 0 || setgid(0) == 0)
		return 14;
	caps_now(&eff, &prm);
	if (eff || prm)
		return 15;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return 16;
	/* root's groups are gone too */
	{
		gid_t g[64];
		int n = getgroups(64, g);
		for (int i = 0; i < n; i++)
			if (g[i] == 0)
				return 17;
	}
	return 0;
}

static int child_caps_only(void)
{
	struct gs_privdrop p;
	char err[256];
	uid_t before = getuid();
	uint64_t eff, prm;
	memset(&p, 0, sizeof p); /* no -Z: attach's drop after loading */
	if (gs_priv_drop(&p, err, sizeof err) != 0)
		return 20;
	if (getuid() != before)
		return 21;
	caps_now(&eff, &prm);
	if (eff || prm)
		return 22;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return 23;
	return 0;
}

static void test_drop(void **state)
{
	/* without -Z: the user stays, every capability goes (as root or not) */
	assert_int_equal(in_child(child_caps_only), 0);
	if (geteuid() == 0)
		assert_int_equal(in_child(child_switch), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup_refusals),
		cmocka_unit_test(test_lookup_nobody),
		cmocka_unit_test(test_drop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
