/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib-sm: the program (options, daemon mode, the main loop).  The
 * engine is fabric/sm.c and fabric/sa.c; softib-sm(8) documents it all.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fabric/partitions.h"
#include "fabric/sm.h"
#include "fabric/sm_fabric.h"
#include "fabric/sm_stats.h"
#include "base/counters_socket.h"
#include "base/log.h"
#include "base/rundir.h"
#include "wire/smp.h"

static volatile sig_atomic_t stop_signal, reload_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* SIGHUP: read the partitions file again (as OpenSM does). */
static void on_hup(int sig)
{
	reload_signal = sig;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: softib-sm [--listen ADDR:PORT] [--daemon] [--idle-exit SECONDS]\n"
		"                 [--sweep SECONDS] [--log FILE] [--key-file FILE]\n"
		"                 [--protect-bits 0-3] [--lease SECONDS] [--priority 0-15]\n"
		"                 [--lid-cache FILE] [--partitions FILE] [--show-keys]\n"
		"  --listen ADDR:PORT  where ports reach the SM (default the first of\n"
		"                      $SOFTIB_SM, else %s); the others are its peers\n"
		"  --daemon            detach (own session, standard streams to /dev/null or\n"
		"                      the log file); exit after --idle-exit with no ports\n"
		"  --idle-exit SECONDS exit after this long without ports or packets\n"
		"                      (daemon default 30, foreground default 0 = never)\n"
		"  --sweep SECONDS     seconds between sweeps (default 2)\n"
		"  --routing ENGINE    on a fabric (SOFTIB_FABRIC): minhop (default) or updn\n"
		"  --log FILE          log and join/leave lines to FILE (default $SOFTIB_LOG_FILE)\n"
		"  --key-file FILE     the subnet's SM_Key and M_Key (default: in $SOFTIB_RUN_DIR,\n"
		"                      named for the subnet's first SM address; made if missing)\n"
		"  --protect-bits N    M_KeyProtectBits the ports get (default 1)\n"
		"  --lease SECONDS     M_KeyLeasePeriod the ports get (default 60; 0 = forever)\n"
		"  --priority N        SMInfo:Priority against other SMs (default 0)\n"
		"  --lid-cache FILE    where GUID -> LID bindings are kept across restarts\n"
		"                      (default: beside the key file, .lids for .keys)\n"
		"  --partitions FILE   the partitions, in OpenSM's partitions.conf syntax\n"
		"                      (default $SOFTIB_PARTITIONS; none: 0x7fff, every port full)\n"
		"  --show-keys         print the key file's path and keys, and exit\n"
		"See softib-sm(8).\n",
		SIB_SM_DEFAULT);
}

/* ---------------------------------------------------------------- keys */

/* Random 64 bits, never 0 (0 means "no key" in IBA). */
static uint64_t random_key(void)
{
	uint64_t k = 0;

	while (!k)
		if (getrandom(&k, sizeof(k), 0) != (ssize_t)sizeof(k))
			k = 0;
	return k;
}

/* "sm_key 0x..." and "m_key 0x..." lines; -EINVAL when either is missing. */
static int keys_parse(FILE *f, uint64_t *sm_key, uint64_t *m_key)
{
	char line[256], name[32];
	unsigned long long v;
	bool have_sm = false, have_m = false;

	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || sscanf(line, "%31s %llx", name, &v) != 2)
			continue;
		if (!strcmp(name, "sm_key")) {
			*sm_key = v;
			have_sm = true;
		} else if (!strcmp(name, "m_key")) {
			*m_key = v;
			have_m = true;
		}
	}
	return have_sm && have_m && *sm_key ? 0 : -EINVAL;
}

/*
 * The subnet's keys from path, made (random, mode 0600) when the file does
 * not exist.  A file anyone but its owner can read is refused: whoever
 * reads it can reconfigure every port of the subnet.  *created: this call
 * made it.  0 or -1 after a line on stderr.
 */
static int keys_load(const char *path, const char *subnet, uint64_t *sm_key, uint64_t *m_key,
		     bool *created)
{
	char tmp[SIB_RUN_DIR_MAX + 192];
	struct stat st;
	FILE *f;
	int fd, rc;

	*created = false;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		/* Written aside and linked in: two SMs starting at once end
		 * with one set of keys, whole. */
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid()) >= sizeof(tmp)) {
			fprintf(stderr, "softib-sm: the key file's name %s is too long\n", path);
			return -1;
		}
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		f = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!f) {
			fprintf(stderr, "softib-sm: cannot write the key file %s: %s\n", tmp,
				strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		*sm_key = random_key();
		*m_key = random_key();
		fprintf(f,
			"# softib-sm keys of the subnet of %s (softib-sm(8)).  Whoever reads\n"
			"# this file can reconfigure every port of the subnet: keep it private.\n"
			"sm_key 0x%016llx\nm_key 0x%016llx\n",
			subnet, (unsigned long long)*sm_key, (unsigned long long)*m_key);
		rc = fclose(f);
		if (!rc && link(tmp, path) == 0)
			*created = true;
		unlink(tmp);
		if (rc) {
			fprintf(stderr, "softib-sm: cannot write the key file %s\n", tmp);
			return -1;
		}
		if (*created)
			return 0;
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC); /* another SM won */
	}
	if (fd < 0) {
		fprintf(stderr, "softib-sm: cannot read the key file %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077)) {
		fprintf(stderr,
			"softib-sm: the key file %s must be a regular file of this user that only "
			"this user can read (chmod 600)\n",
			path);
		close(fd);
		return -1;
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -1;
	}
	rc = keys_parse(f, sm_key, m_key);
	fclose(f);
	if (rc) {
		fprintf(stderr, "softib-sm: the key file %s has no sm_key and m_key lines\n", path);
		return -1;
	}
	return 0;
}

/* The default key file: the run directory, named for the subnet (the
 * first SM address ports are given), so that an SM and its standby on
 * one host share it.  0 or -1. */
static int default_key_file(const struct sib_endpoint *subnet, char *path, size_t len)
{
	char e[SIB_ENDPOINT_STRLEN];

	sib_endpoint_str(subnet, e);
	return sib_run_sm_file(e, "keys", path, len) ? -1 : 0;
}

static size_t stats_text(void *arg, char *buf, size_t len)
{
	return sib_sm_stats_text(arg, buf, len);
}

/* ---------------------------------------------------------------- LID cache */

static void lid_cache_load(struct sib_sm *sm, const char *path)
{
	unsigned long long guid;
	unsigned lid;
	char line[128];
	FILE *f = fopen(path, "re");

	if (!f)
		return; /* none yet */
	while (fgets(line, sizeof(line), f))
		if (line[0] != '#' && sscanf(line, "%llx %u", &guid, &lid) == 2)
			sib_sm_remember_lid(sm, guid, (uint16_t)lid);
	fclose(f);
}

static void lid_cache_line(void *arg, uint64_t guid, uint16_t lid)
{
	fprintf(arg, "0x%016llx %u\n", (unsigned long long)guid, lid);
}

/* Written aside and renamed over: a crash leaves the old cache whole. */
static void lid_cache_save(const struct sib_sm *sm, const char *path)
{
	char tmp[SIB_RUN_DIR_MAX + 192];
	FILE *f;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid()) >= sizeof(tmp)) {
		sib_warn("softib-sm: the LID cache's name %s is too long", path);
		return;
	}
	f = fopen(tmp, "we");
	if (!f) {
		sib_warn("softib-sm: cannot write the LID cache %s: %s", tmp, strerror(errno));
		return;
	}
	fprintf(f, "# softib-sm GUID -> LID (softib-sm(8))\n");
	sib_sm_lids_foreach(sm, lid_cache_line, f);
	if (fclose(f) || rename(tmp, path)) {
		sib_warn("softib-sm: cannot write the LID cache %s: %s", path, strerror(errno));
		unlink(tmp);
	}
}

/* SOFTIB_SM's entries (the subnet's SM addresses, in order). */
static unsigned sm_list(const char *list, struct sib_endpoint *out, unsigned max)
{
	char buf[512], *save = NULL;
	unsigned n = 0;

	if (!list || !*list || !strcmp(list, "none"))
		return 0;
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *t = strtok_r(buf, ",", &save); t && n < max; t = strtok_r(NULL, ",", &save)) {
		while (*t == ' ')
			t++;
		if (*t && !sib_endpoint_parse(t, SIB_SM_PORT_DEFAULT, &out[n]))
			n++;
	}
	return n;
}

/* Is the UDP address free?  A quick, quiet check so that the loser of two
 * SMs started at once exits without a word (the link's own bind would log
 * an error first). */
static int address_in_use(const struct sib_endpoint *ep)
{
	struct sockaddr_storage ss;
	socklen_t len = sib_endpoint_to_sockaddr(ep, ep->family == SIB_AF_INET ? AF_INET : AF_INET6,
						 &ss);
	int fd, rc = 0;

	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	if (bind(fd, (struct sockaddr *)&ss, len) && errno == EADDRINUSE)
		rc = 1;
	close(fd);
	return rc;
}

/*
 * Detaches (fork, new session, fork again), but the first process, the one
 * the starter waits for, returns only once the last one has bound the
 * address or found it taken: when `softib-sm --daemon` returns, exactly one
 * SM listens there, however slow the machine.  The last process reports a
 * bind by writing a byte into *ready (a pipe); a process that ends without
 * writing closes the pipe, and the first process then asks the address.
 */
static void daemonize(const struct sib_endpoint *ep, const char *log_file, int *ready)
{
	int fds[2], fd;
	char c;
	ssize_t n;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC)) {
		perror("softib-sm: pipe");
		exit(1);
	}
	pid = fork();
	if (pid < 0) {
		perror("softib-sm: fork");
		exit(1);
	}
	if (pid > 0) {
		close(fds[1]);
		while ((n = read(fds[0], &c, 1)) < 0 && errno == EINTR)
			;
		_exit(n == 1 || address_in_use(ep) ? 0 : 1);
	}
	close(fds[0]);
	*ready = fds[1];
	setsid();
	pid = fork(); /* not a session leader: can never regain a terminal */
	if (pid < 0)
		_exit(1);
	if (pid > 0)
		_exit(0);
	if (chdir("/"))
		_exit(1);
	umask(022);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	if (log_file && *log_file) {
		fd = open(log_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			if (fd > 2)
				close(fd);
		}
	}
}

static int parse_uint(const char *opt, const char *v, unsigned max, unsigned *out)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 0);
	if (errno || *end || !*v || v[0] == '-' || n > max) {
		fprintf(stderr, "softib-sm: %s %s: want 0..%u\n", opt, v, max);
		return -1;
	}
	*out = (unsigned)n;
	return 0;
}

/* The partitions file (partitions.h); NULL after saying why. */
static struct sib_partitions *load_partitions(const char *path)
{
	struct sib_partitions *ps = calloc(1, sizeof(*ps));
	char err[256], *text = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "re");
	int rc;

	if (!ps || !f) {
		fprintf(stderr, "softib-sm: partitions file %s: %s\n", path,
			strerror(ps ? errno : ENOMEM));
		free(ps);
		if (f)
			fclose(f);
		return NULL;
	}
	rc = (int)getdelim(&text, &len, 0, f); /* the whole file */
	fclose(f);
	rc = sib_partitions_parse(rc < 0 ? "" : text, ps, err, sizeof(err));
	free(text);
	if (rc) {
		fprintf(stderr, "softib-sm: partitions file %s: %s\n", path, err);
		free(ps);
		return NULL;
	}
	return ps;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "daemon", no_argument, NULL, 'd' },
		{ "idle-exit", required_argument, NULL, 'i' },
		{ "sweep", required_argument, NULL, 's' },
		{ "log", required_argument, NULL, 'L' },
		{ "key-file", required_argument, NULL, 'k' },
		{ "protect-bits", required_argument, NULL, 'p' },
		{ "lease", required_argument, NULL, 'e' },
		{ "priority", required_argument, NULL, 'P' },
		{ "lid-cache", required_argument, NULL, 'c' },
		{ "show-keys", no_argument, NULL, 'K' },
		{ "partitions", required_argument, NULL, 'T' },
		{ "routing", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sm_env = getenv("SOFTIB_SM");
	const char *listen = NULL;
	const char *log_file = getenv("SOFTIB_LOG_FILE");
	const char *key_file = NULL, *lid_cache = NULL;
	const char *parts_file = getenv("SOFTIB_PARTITIONS");
	struct sib_partitions *parts = NULL;
	char key_path[SIB_RUN_DIR_MAX + 128], cache_path[SIB_RUN_DIR_MAX + 136];
	double idle_exit = -1, sweep_s = 2;
	enum sib_rt_engine routing = SIB_RT_MINHOP;
	bool daemon_mode = false, show_keys = false, keys_created = false, listed = false;
	unsigned protect_bits = 1, lease = 60, priority = 0, nlist;
	struct sib_endpoint ep, list[SIB_SM_MAX_PEERS + 1];
	struct sib_link *link;
	char eps[SIB_ENDPOINT_STRLEN], pe[SIB_ENDPOINT_STRLEN];
	static char stats_buf[4096];
	char stats_path[SIB_RUN_DIR_MAX + 64];
	int stats_fd = -1;
	struct sib_sm sm;
	uint64_t guid = 0, idle_since, sm_key, m_key, lids_saved = 0, rx_seen = 0;
	struct sib_link_counters lc;
	int c, rc, ready = -1;

	while ((c = getopt_long(argc, argv, "l:di:s:L:k:p:e:P:c:KhT:R:", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			listen = optarg;
			break;
		case 'd':
			daemon_mode = true;
			break;
		case 'i':
			idle_exit = atof(optarg);
			break;
		case 's':
			sweep_s = atof(optarg);
			break;
		case 'L':
			log_file = optarg;
			break;
		case 'k':
			key_file = optarg;
			break;
		case 'p':
			if (parse_uint("--protect-bits", optarg, 3, &protect_bits))
				return 2;
			break;
		case 'e':
			if (parse_uint("--lease", optarg, 0xffff, &lease))
				return 2;
			break;
		case 'P':
			if (parse_uint("--priority", optarg, 15, &priority))
				return 2;
			break;
		case 'c':
			lid_cache = optarg;
			break;
		case 'K':
			show_keys = true;
			break;
		case 'R':
			if (sib_route_engine_parse(optarg) < 0) {
				fprintf(stderr, "softib-sm: --routing is minhop or updn, not %s\n",
					optarg);
				return 2;
			}
			routing = (enum sib_rt_engine)sib_route_engine_parse(optarg);
			break;
		case 'T':
			parts_file = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || sweep_s <= 0) {
		usage(stderr);
		return 2;
	}
	if (getenv("SOFTIB_FABRIC") && *getenv("SOFTIB_FABRIC")) {
		/* On a softib-switch fabric: attach like an HCA and sweep it. */
		struct sib_sm_fabric_opts fo = {
			.fabric = getenv("SOFTIB_FABRIC"),
			.node = getenv("SOFTIB_NODE"),
			.sweep_s = sweep_s,
			.engine = routing,
		};

		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		return sib_sm_fabric_run(&fo, &stop_signal);
	}
	if (parts_file && *parts_file) {
		parts = load_partitions(parts_file);
		if (!parts)
			return 2;
	}
	/* The subnet's SM addresses: SOFTIB_SM, the first being its name. */
	nlist = sm_list(sm_env, list, SIB_SM_MAX_PEERS + 1);
	if (!listen)
		listen = nlist ? NULL : SIB_SM_DEFAULT;
	if (listen && sib_endpoint_parse(listen, SIB_SM_PORT_DEFAULT, &ep)) {
		fprintf(stderr, "softib-sm: --listen %s is not ADDR[:PORT]\n", listen);
		return 2;
	}
	if (!listen)
		ep = list[0];
	if (idle_exit < 0)
		idle_exit = daemon_mode ? 30 : 0;
	sib_endpoint_str(&ep, eps);
	for (unsigned i = 0; i < nlist; i++)
		listed |= sib_endpoint_equal(&list[i], &ep);
	if (!key_file) {
		if (default_key_file(listed ? &list[0] : &ep, key_path, sizeof(key_path)))
			return 1;
		key_file = key_path;
	}
	if (show_keys) {
		FILE *f = fopen(key_file, "re");

		if (!f) {
			fprintf(stderr, "softib-sm: no key file %s: %s\n", key_file, strerror(errno));
			return 1;
		}
		if (keys_parse(f, &sm_key, &m_key)) {
			fclose(f);
			fprintf(stderr, "softib-sm: the key file %s has no sm_key and m_key lines\n",
				key_file);
			return 1;
		}
		fclose(f);
		printf("key file %s\nsm_key 0x%016llx\nm_key 0x%016llx\n", key_file,
		       (unsigned long long)sm_key, (unsigned long long)m_key);
		return 0;
	}

	if (daemon_mode) {
		/* Never hold the starter's pipes (or anything else it left
		 * open without close-on-exec). */
		close_range(3, ~0u, 0);
		if (address_in_use(&ep))
			return 0;
		daemonize(&ep, log_file, &ready);
		if (log_file && *log_file)
			setenv("SOFTIB_LOG_FILE", log_file, 1);
	} else if (address_in_use(&ep)) {
		fprintf(stderr, "softib-sm: an SM already listens on %s\n", eps);
		return 0;
	}
	if (keys_load(key_file, eps, &sm_key, &m_key, &keys_created))
		return 1;
	if (!lid_cache) {
		/* Beside the keys: a port that joins right after a restart must
		 * not get the LID of one that has not trapped again yet. */
		size_t n = strlen(key_file);

		if (n > 5 && !strcmp(key_file + n - 5, ".keys"))
			snprintf(cache_path, sizeof(cache_path), "%.*s.lids", (int)(n - 5), key_file);
		else
			snprintf(cache_path, sizeof(cache_path), "%s.lids", key_file);
		lid_cache = cache_path;
	}
	rc = sib_link_udp_open(eps, NULL, &link);
	if (rc) {
		if (keys_created)
			unlink(key_file); /* the other SM serves, with keys of its own */
		return rc == -EADDRINUSE ? 0 : 1; /* lost a race: the other SM serves */
	}
	if (ready >= 0) { /* bound: the starter may return */
		if (write(ready, "1", 1) != 1)
			perror("softib-sm: telling the starter");
		close(ready);
	}

	if (getrandom(&guid, sizeof(guid), 0) != (ssize_t)sizeof(guid))
		guid = (uint64_t)getpid() << 20;
	guid = (guid | 0x0200000000000000ull) & ~0x0100000000000000ull & ~0xfull;
	if (sib_sm_init(&sm, link, guid, sib_link_now_ns())) {
		fprintf(stderr, "softib-sm: out of memory\n");
		sib_link_close(link);
		return 1;
	}
	sm.sweep_ns = (uint64_t)(sweep_s * 1e9);
	sm.next_sweep_ns = sib_link_now_ns() + sm.sweep_ns;
	sm.out = stdout;
	sm.sm_key = sm_key;
	sm.m_key = m_key;
	sm.protect_bits = (uint8_t)protect_bits;
	sm.lease_period = (uint16_t)lease;
	sm.priority = (uint8_t)priority;
	sm.partitions = parts;
	/* The other SM addresses of SOFTIB_SM are peers when we are one of
	 * them (an SM listening elsewhere is of another subnet). */
	for (unsigned i = 0; i < nlist && listed; i++)
		if (!sib_endpoint_equal(&list[i], &ep))
			sib_sm_add_peer(&sm, &list[i]);
	lid_cache_load(&sm, lid_cache);
	lids_saved = sm.lid_changes;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("softib-sm: listening on %s, LID %u, GUID 0x%016llx, keys %s%s%s\n", eps, sm.lid,
	       (unsigned long long)guid, key_file, keys_created ? " (new)" : "",
	       daemon_mode ? " (daemon)" : "");
	for (unsigned i = 0; i < sm.npeers; i++)
		printf("softib-sm: another SM of this subnet may be at %s\n",
		       sib_endpoint_str(&sm.peers[i].ep, pe));

	/* The counters, for `softib info --sm` (sm_stats.h): served from this
	 * loop, never blocking it. */
	if (!sib_run_sm_file(eps, "sock", stats_path, sizeof(stats_path)) &&
	    (stats_fd = sib_counters_listen(stats_path)) >= 0)
		fcntl(stats_fd, F_SETFL, O_NONBLOCK);
	else
		stats_path[0] = 0;

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_hup);
	signal(SIGPIPE, SIG_IGN);
	idle_since = sib_link_now_ns();
	while (!stop_signal) {
		uint64_t now = sib_link_now_ns(), next;
		struct pollfd pfd[2];
		int timeout;

		while (stats_fd >= 0 &&
		       !sib_counters_serve_one(stats_fd, stats_text, &sm, stats_buf, sizeof(stats_buf)))
			;

		if (reload_signal) {
			reload_signal = 0;
			if (parts_file && *parts_file) {
				struct sib_partitions *np = load_partitions(parts_file);

				if (np) {
					sm.partitions = np;
					free(parts);
					parts = np;
					printf("softib-sm: partitions read again from %s\n",
					       parts_file);
					fflush(stdout);
					sib_sm_reconfigure(&sm);
				}
			}
		}

		sib_sm_step(&sm, now);
		if (sm.lid_changes != lids_saved) {
			lid_cache_save(&sm, lid_cache);
			lids_saved = sm.lid_changes;
		}
		/* In use while it knows a port, and while anything arrives: a
		 * port that has only probed or trapped is not known yet, and an
		 * SM that left under it would leave it without LIDs and paths. */
		sib_link_counters_get(link, &lc);
		if (sib_sm_known_ports(&sm) || sm.state != IB_SM_STATE_MASTER ||
		    lc.rx_packets != rx_seen)
			idle_since = now;
		rx_seen = lc.rx_packets;
		if (idle_exit > 0 && now - idle_since >= (uint64_t)(idle_exit * 1e9)) {
			printf("softib-sm: no ports and no packet for %g s; exiting\n", idle_exit);
			/* Keys this run made protect nobody now: leave no file. */
			if (keys_created) {
				unlink(key_file);
				unlink(lid_cache);
				lid_cache = NULL;
			}
			break;
		}
		if (sib_link_wait_arm(link) > 0)
			continue;
		next = sib_sm_next_deadline(&sm);
		if (idle_exit > 0 && !sib_sm_known_ports(&sm)) {
			uint64_t idle_end = idle_since + (uint64_t)(idle_exit * 1e9);

			if (idle_end < next)
				next = idle_end;
		}
		now = sib_link_now_ns();
		timeout = next <= now ? 0 : (int)((next - now) / 1000000 + 1);
		pfd[0].fd = sib_link_wait_fd(link);
		pfd[0].events = POLLIN;
		pfd[1].fd = stats_fd; /* -1: poll ignores it */
		pfd[1].events = POLLIN;
		poll(pfd, 2, timeout);
	}
	if (stats_fd >= 0) {
		close(stats_fd);
		unlink(stats_path);
	}
	if (lid_cache)
		lid_cache_save(&sm, lid_cache);
	sib_sm_fini(&sm);
	free(parts);
	sib_link_close(link);
	return 0;
}
