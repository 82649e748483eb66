/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "base/rundir.h"

int sib_run_dir(char *buf, size_t len)
{
	const char *env = getenv("SOFTIB_RUN_DIR");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	int n;

	if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else if (xdg && *xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s/softib", xdg);
	else
		n = snprintf(buf, len, "/tmp/softib-%u", (unsigned)geteuid());
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	if (mkdir(buf, 0700) && errno != EEXIST) {
		int err = errno;

		sib_err("cannot make softib's directory %s: %s; set SOFTIB_RUN_DIR", buf,
			strerror(err));
		return -err;
	}
	/* Not a symlink someone planted in /tmp, ours, and closed to others. */
	if (lstat(buf, &st)) {
		int err = errno;

		sib_err("softib's directory %s: %s", buf, strerror(err));
		return -err;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		sib_err("softib's directory %s is not a directory that only this user (uid %u) "
			"owns and can enter; remove it or set SOFTIB_RUN_DIR",
			buf, (unsigned)geteuid());
		return -EPERM;
	}
	return 0;
}
