/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib0 where programs look for hardware (docs/architecture.md section 2): the
 * file-system view.  libsoftib.so answers the C library's file calls for
 * exactly the paths that describe softib0 -- /dev/infiniband/<dev_name>,
 * /sys/class/infiniband/softib0/..., /sys/class/infiniband_verbs/abi_version,
 * /sys/class/misc/rdma_cm/abi_version -- live, without root and without
 * creating anything on disk; every other path and descriptor goes to libc
 * untouched.  man/softib-device.7 (How programs find softib0) lists the calls.
 *
 *   fs_tree.c   the tree: which paths exist, path resolution, stat, listings,
 *               the character devices registered below
 *   fs_sysfs.c  what softib0's sysfs files say (the kernel's formats), live
 *               from this process's HCA
 *   fs_view.c, fs_fds.c, fs_dirs.c (fs_libc.h)
 *               the interposed libc calls: paths and the working directory,
 *               the descriptors they hand out, directory streams
 */
#ifndef SIB_PROVIDER_FS_VIEW_H
#define SIB_PROVIDER_FS_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* A virtual character device under /dev/infiniband (for example rdma_cm). */
struct softib_cdev_ops {
	const char *name;      /* the node's name under /dev/infiniband */
	unsigned major, minor; /* st_rdev of the node and of the descriptors it opens */
	/* open(2) of the node: a real descriptor the caller gets (poll, epoll,
	 * fcntl and read readiness work on it natively), or -1 with errno set. */
	int (*open)(int flags);
	/* write(2) / read(2) on a descriptor open returned; NULL: the real call. */
	ssize_t (*write)(int fd, const void *buf, size_t len);
	ssize_t (*read)(int fd, void *buf, size_t len);
	/* close(2) of such a descriptor, before the real close. */
	void (*close)(int fd);
	/* ioctl(2) on such a descriptor; NULL, or -1 with ENOTTY: the real
	 * ioctl on the descriptor open returned (generic requests such as
	 * FIONBIO work on it as on any file). */
	int (*ioctl)(int fd, unsigned long request, void *arg);
};
/* Makes /dev/infiniband/<ops->name> exist for this process: stat, access
 * and open answer for it, fstat on its descriptors says S_ISCHR with
 * st_rdev = makedev(major, minor), and write/read/close/ioctl on them go
 * to ops.
 * 0, or -EEXIST / -ENOMEM.  ops must outlive the process.
 * (Also -EINVAL for an ops without open or a name that is not one path
 * component.)  Descriptors copied with dup/dup2/dup3/F_DUPFD reach ops
 * too, with the fd open returned, while that descriptor stays open. */
int softib_fs_add_cdev(const struct softib_cdev_ops *ops);

/* ---- the tree (fs_tree.c), for fs_view.c and tests/unit/test_fs_view.c ---- */

/* What a node of the view is.  Numbered nodes carry their port number and
 * table index. */
enum sib_fs_id {
	SIB_FS_NONE = 0,
	SIB_FS_SYS,	   /* /sys */
	SIB_FS_CLASS,	   /* /sys/class */
	SIB_FS_IB,	   /* /sys/class/infiniband */
	SIB_FS_IBDEV,	   /* /sys/class/infiniband/softib0 */
	SIB_FS_NODE_ATTR,  /* .../softib0/<attr>: index = sib_fs_node_attrs[] */
	SIB_FS_PORTS,	   /* .../softib0/ports */
	SIB_FS_PORT,	   /* .../ports/<port> */
	SIB_FS_PORT_ATTR,  /* .../ports/<port>/<attr>: index = sib_fs_port_attrs[] */
	SIB_FS_GIDS,	   /* .../ports/<port>/gids */
	SIB_FS_GID,	   /* .../gids/<index> */
	SIB_FS_PKEYS,	   /* .../ports/<port>/pkeys */
	SIB_FS_PKEY,	   /* .../pkeys/<index> */
	SIB_FS_DEVICE,	   /* .../softib0/device */
	SIB_FS_DEV_ATTR,   /* .../device/<attr>: index = sib_fs_device_attrs[] */
	SIB_FS_NET,	   /* .../device/net */
	SIB_FS_NETIF,	   /* .../device/net/<ifname>: the interface's own directory */
	SIB_FS_VERBS,	   /* /sys/class/infiniband_verbs */
	SIB_FS_VERBS_ABI,  /* /sys/class/infiniband_verbs/abi_version */
	SIB_FS_MISC,	   /* /sys/class/misc */
	SIB_FS_RDMA_CM,	   /* /sys/class/misc/rdma_cm */
	SIB_FS_RDMA_CM_ABI, /* /sys/class/misc/rdma_cm/abi_version */
	SIB_FS_MAD,	   /* /sys/class/infiniband_mad */
	SIB_FS_MAD_ABI,	   /* /sys/class/infiniband_mad/abi_version */
	SIB_FS_UMAD,	   /* .../infiniband_mad/umadN, issmN: index 0 umad, 1 issm */
	SIB_FS_UMAD_ATTR,  /* .../umadN/<attr>: port = the umad dir's index, index =
			    * sib_fs_umad_attrs[] */
	SIB_FS_DEV,	   /* /dev */
	SIB_FS_DEVIB,	   /* /dev/infiniband */
	SIB_FS_CDEV,	   /* /dev/infiniband/<name>: index = registration order */
};

struct sib_fs_node {
	uint16_t id; /* enum sib_fs_id */
	uint16_t port;
	uint32_t index;
};

enum sib_fs_type { SIB_FS_T_DIR, SIB_FS_T_FILE, SIB_FS_T_CDEV };

/* What resolving a path found. */
enum sib_fs_found {
	SIB_FS_PASS, /* not the view's: libc answers, with lk->path if lk->rewritten */
	SIB_FS_HIT,  /* lk->node, whose normalized path is lk->path */
	SIB_FS_ERR,  /* the view answers with errno lk->err (ENOENT, ENOTDIR, ...) */
};

struct sib_fs_lookup {
	struct sib_fs_node node;
	char path[4096];     /* HIT: the node's path; PASS: what libc should see */
	bool rewritten;	     /* PASS: use path (absolute) instead of the caller's */
	bool missing_in_dir; /* ERR ENOENT: the last component is absent from a
			      * directory of the view (creating it is refused) */
	int err;
};

/*
 * Resolves path (absolute, or relative to base, an absolute directory path)
 * lexically: "." and repeated slashes are dropped, ".." climbs the view's own
 * directories.  A path that leaves the view through a name the view does not
 * have (a real device, /dev/null, a real directory's "..") is PASS, so the
 * kernel resolves it as it would without softib; only a path whose every
 * component is the view's is HIT or ERR.  base may be NULL for absolute
 * paths.  base_virtual: base is a directory only the view has (a virtual
 * working directory or directory descriptor), so a PASS hands libc an
 * absolute path (lk->rewritten); otherwise libc gets the caller's path.
 */
enum sib_fs_found sib_fs_resolve(const char *base, bool base_virtual, const char *path,
				 struct sib_fs_lookup *lk);

/* A cheap first test for an absolute path: false means PASS for sure. */
bool sib_fs_maybe_ours(const char *abs_path);

enum sib_fs_type sib_fs_type(const struct sib_fs_node *n);
/* Directories that may also exist for real (/sys, /dev, /sys/class/infiniband
 * on a host with RDMA hardware, ...): listed merged with the real one; stat,
 * open and chdir use the real one when it exists. */
bool sib_fs_real_backed(const struct sib_fs_node *n);
/* The node's absolute path; false if it does not fit. */
bool sib_fs_path(const struct sib_fs_node *n, char *buf, size_t size);
/* The view's own stat of a node (sysfs: files 0444 of 4096 bytes,
 * directories 0755; /dev/infiniband: character devices 0666). */
void sib_fs_stat(const struct sib_fs_node *n, struct stat *st);
/* access(2) of a node for this process: 0 or EACCES. */
int sib_fs_access(const struct sib_fs_node *n, int amode, bool effective_ids);

/* A directory's children, in order: calls fn(arg, name, child) for each
 * (without "." and ".."); stops early when fn returns nonzero. */
void sib_fs_list(const struct sib_fs_node *dir,
		 int (*fn)(void *arg, const char *name, const struct sib_fs_node *child),
		 void *arg);
unsigned char sib_fs_dtype(const struct sib_fs_node *n); /* DT_DIR, DT_REG, DT_CHR */

/* The character device behind a SIB_FS_CDEV node; NULL if none. */
const struct softib_cdev_ops *sib_fs_cdev(const struct sib_fs_node *n);

/* ---- the files' contents (fs_sysfs.c) ---- */

/* Names of the attribute files, indexed as sib_fs_node.index says. */
extern const char *const sib_fs_node_attrs[];
extern const unsigned sib_fs_node_attr_count;
extern const char *const sib_fs_port_attrs[];
extern const unsigned sib_fs_port_attr_count;
extern const char *const sib_fs_device_attrs[];
extern const unsigned sib_fs_device_attr_count;
extern const char *const sib_fs_umad_attrs[];
extern const unsigned sib_fs_umad_attr_count;
/* The name of /sys/class/infiniband_mad's directory i: 0 umad, 1 issm. */
const char *sib_fs_umad_dir(unsigned i);

/*
 * The text a file of the view holds now, as the kernel's sysfs prints it
 * (at most size - 1 bytes, NUL-terminated).  Port attributes read this
 * process's port: the first read brings softib0 up (as opening it would)
 * and the view keeps the port up until the process exits.  Length, or a
 * negative errno.
 */
int sib_fs_read_file(const struct sib_fs_node *n, char *buf, size_t size);

/* The network interface the port's UDP socket is bound to (or would be:
 * SOFTIB_ADDR, SOFTIB_NETDEV, else 127.0.0.1), for device/net/<ifname>;
 * false when it has none. */
bool sib_fs_netdev(char name[16]);

/* The node GUID softib0 shows (sysfs node_guid, ibv_get_device_guid): on a
 * fabric (SOFTIB_FABRIC) the topology CA's, which brings the port up to
 * attach; elsewhere the process's own. */
uint64_t sib_fs_node_guid(void);

struct sib_hca;
/* Tests: the HCA the view reads instead of this process's own (NULL: own). */
void sib_fs_use_hca(struct sib_hca *hca);

#endif
