/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * On-demand paging: touching an ODP region's bytes without trusting that
 * they are mapped.  An HCA with ODP faults a missing page in and fails the
 * access when the fault cannot be served (no mapping, or a read-only one
 * for a write); here the kernel does the same for us: process_vm_readv and
 * process_vm_writev on our own pid return EFAULT (or a short count) where a
 * memcpy would raise SIGSEGV, and madvise(MADV_POPULATE_READ/WRITE, Linux
 * 5.14) faults pages in, failing on what cannot be mapped.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/log.h"
#include "memreg/memreg.h"

#ifndef MADV_POPULATE_READ /* glibc < 2.35 lacks the names, not the kernel */
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

/* One copy between our address space and itself; true when all n moved. */
static bool odp_vm_copy(void *local, const void *remote, size_t n, bool write)
{
	struct iovec l = { .iov_base = local, .iov_len = n };
	struct iovec r = { .iov_base = (void *)remote, .iov_len = n };
	ssize_t got;

	/* getpid each time: a pid cached before a fork would name the parent. */
	pid_t self = getpid();

	do {
		got = write ? process_vm_writev(self, &l, 1, &r, 1, 0)
			    : process_vm_readv(self, &l, 1, &r, 1, 0);
	} while (got < 0 && errno == EINTR);
	if (got < 0 && errno != EFAULT)
		sib_dbg("ODP %s of %zu bytes at %p: %m", write ? "write" : "read", n, remote);
	return got == (ssize_t)n;
}

enum memreg_verdict memreg_odp_read(const uint8_t *src, void *dst, size_t n)
{
	if (!n || odp_vm_copy(dst, src, n, false))
		return MEMREG_OK;
	return MEMREG_NOT_MAPPED;
}

enum memreg_verdict memreg_odp_write(uint8_t *dst, const void *src, size_t n)
{
	if (!n || odp_vm_copy((void *)src, dst, n, true))
		return MEMREG_OK;
	return MEMREG_NOT_MAPPED;
}

enum memreg_verdict memreg_odp_fault_in(const uint8_t *addr, size_t n, bool write)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)addr & ~(page - 1);
	uintptr_t hi = (uintptr_t)addr + n;

	if (!n)
		return MEMREG_OK;
	/* ENOMEM: not mapped; EFAULT: mapped but not for this access. */
	if (madvise((void *)lo, hi - lo, write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ) == 0)
		return MEMREG_OK;
	if (errno == EINVAL)
		sib_dbg("ODP fault-in of %zu bytes at %p: %m (a kernel before 5.14, or "
			"memory that cannot be populated)", n, (const void *)addr);
	return MEMREG_NOT_MAPPED;
}
