/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "base/rundir.h"

/* Makes path (mode 0700) when missing.  0 when it is a directory of this
 * user's that nobody else can enter; else a negative errno, and *why says
 * what is wrong. */
static int check(const char *path, const char **why)
{
	struct stat st;

	if (mkdir(path, 0700) && errno != EEXIST) {
		*why = strerror(errno);
		return -errno;
	}
	/* Not a symlink someone planted in /tmp, ours, and closed to others. */
	if (lstat(path, &st)) {
		*why = strerror(errno);
		return -errno;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		*why = !S_ISDIR(st.st_mode)	  ? "it is not a directory"
		       : st.st_uid != geteuid() ? "another user owns it"
						: "other users can enter it";
		return -EPERM;
	}
	return 0;
}

/* Where a user's private directory goes when /tmp's is taken: under the
 * home directory, which no other user can create things in. */
static int home_dir(char *buf, size_t len)
{
	const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (cache && cache[0] == '/')
		n = snprintf(buf, len, "%s/softib-run", cache);
	else if (home && home[0] == '/')
		n = snprintf(buf, len, "%s/.cache/softib-run", home);
	else
		return -ENOENT;
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	/* ~/.cache may not exist yet. */
	if (!(cache && cache[0] == '/')) {
		char parent[SIB_RUN_DIR_MAX];

		snprintf(parent, sizeof(parent), "%s/.cache", home);
		if (mkdir(parent, 0700) && errno != EEXIST)
			return -errno;
	}
	return 0;
}

int sib_run_dir(char *buf, size_t len)
{
	static bool told;
	const char *env = getenv("SOFTIB_RUN_DIR");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char tmp[SIB_RUN_DIR_MAX];
	const char *why = NULL, *why2 = NULL;
	bool in_tmp = false;
	int n, rc;

	if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else if (xdg && *xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s/softib", xdg);
	else {
		n = snprintf(buf, len, "/tmp/softib-%u", (unsigned)geteuid());
		in_tmp = true;
	}
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	rc = check(buf, &why);
	if (!rc)
		return 0;
	/*
	 * /tmp is everyone's: another user who made /tmp/softib-UID first
	 * would keep this user's softib from starting its SM.  The home
	 * directory is this user's alone, so softib goes there, and says so
	 * once.
	 */
	if (in_tmp && (size_t)snprintf(tmp, sizeof(tmp), "%s", buf) < sizeof(tmp) &&
	    !home_dir(buf, len) && !check(buf, &why2)) {
		if (!told) {
			told = true;
			sib_warn("softib's directory %s cannot be used (%s); using %s instead (set "
				 "SOFTIB_RUN_DIR to choose one)",
				 tmp, why, buf);
		}
		return 0;
	}
	if (in_tmp)
		snprintf(buf, len, "%s", tmp);
	sib_err("softib's directory %s cannot be used (%s)%s; remove it or set SOFTIB_RUN_DIR to "
		"a directory that only this user (uid %u) owns and can enter",
		buf, why, in_tmp ? ", nor one under $HOME/.cache" : "", (unsigned)geteuid());
	return rc;
}

int sib_run_sm_file(const char *ep, const char *suffix, char *buf, size_t len)
{
	return sib_run_file("sm", ep, suffix, buf, len);
}

int sib_run_file(const char *kind, const char *ep, const char *suffix, char *buf, size_t len)
{
	char dir[SIB_RUN_DIR_MAX];
	size_t start;
	int rc = sib_run_dir(dir, sizeof(dir)), n;

	if (rc)
		return rc;
	n = snprintf(buf, len, "%s/%s-", dir, kind);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	start = (size_t)n;
	n = snprintf(buf + start, len - start, "%s.%s", ep, suffix);
	if (n < 0 || (size_t)n >= len - start)
		return -ENAMETOOLONG;
	for (char *c = buf + start; *c && c < buf + start + strlen(ep); c++)
		if (*c == ':' || *c == '[' || *c == ']')
			*c = '_';
	return 0;
}
