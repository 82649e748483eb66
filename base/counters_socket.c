/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/counters_socket.h"
#include "base/log.h"

void sib_text_put(struct sib_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->used + 1 >= t->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->used, t->len - t->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->used = t->used + (size_t)n < t->len ? t->used + (size_t)n : t->len - 1;
}

/* A Unix stream socket for path, and its address; the descriptor or a
 * negative errno. */
static int unix_socket(const char *path, struct sockaddr_un *sa)
{
	int fd;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	memcpy(sa->sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	return fd < 0 ? -errno : fd;
}

int sib_counters_listen(const char *path)
{
	struct sockaddr_un sa;
	int fd = unix_socket(path, &sa), err;

	if (fd < 0)
		return fd;
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 8)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* A client of this user off fd, with 1 s to read or send; -1 when there
 * was none to take (*err) or it was another user's. */
static int take_client(int fd, int *err)
{
	/* A client that never reads or writes cannot hold the server. */
	struct timeval tv = { .tv_sec = 1 };
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

	*err = 0;
	if (c < 0) {
		*err = errno == EWOULDBLOCK ? -EAGAIN : -errno;
		return -1;
	}
	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &clen) || cred.uid != geteuid()) {
		sib_dbg("counters socket: a client of uid %u refused (only uid %u may read)",
			(unsigned)cred.uid, (unsigned)geteuid());
		close(c);
		return -1;
	}
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return c;
}

static void send_all(int c, const char *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t w = send(c, buf + off, len - off, MSG_NOSIGNAL);

		if (w <= 0)
			break;
		off += (size_t)w;
	}
}

int sib_counters_serve_one(int fd, sib_counters_text_fn text, void *arg, char *buf, size_t len)
{
	int err, c = take_client(fd, &err);

	if (c < 0)
		return err;
	send_all(c, buf, text(arg, buf, len));
	close(c);
	return 0;
}

int sib_counters_serve_cmd(int fd, sib_counters_cmd_fn cmd, void *arg, char *buf, size_t len)
{
	char line[SIB_COUNTERS_CMD_MAX + 1];
	size_t off = 0;
	int err, c = take_client(fd, &err);

	if (c < 0)
		return err;
	while (off < SIB_COUNTERS_CMD_MAX) {
		ssize_t n = read(c, line + off, SIB_COUNTERS_CMD_MAX - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	line[off] = 0;
	line[strcspn(line, "\n")] = 0;
	send_all(c, buf, cmd(arg, line, buf, len));
	close(c);
	return 0;
}

long sib_counters_read(const char *path, char *buf, size_t len)
{
	return sib_counters_ask(path, NULL, buf, len);
}

long sib_counters_ask(const char *path, const char *line, char *buf, size_t len)
{
	struct sockaddr_un sa;
	size_t off = 0;
	int fd = unix_socket(path, &sa), err;

	if (fd < 0)
		return fd;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		close(fd);
		return err;
	}
	if (line) {
		size_t n = strnlen(line, SIB_COUNTERS_CMD_MAX);

		if (send(fd, line, n, MSG_NOSIGNAL) != (ssize_t)n) {
			err = -errno;
			close(fd);
			return err;
		}
		shutdown(fd, SHUT_WR);
	}
	while (off + 1 < len) {
		ssize_t n = read(fd, buf + off, len - 1 - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	buf[off] = 0;
	close(fd);
	return (long)off;
}
