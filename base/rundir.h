/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib's per-user directory: softib-sm's key files and LID caches, and
 * the socket through which each process's counters are read (`softib info
 * --pid`).  SOFTIB_RUN_DIR names it; else $XDG_RUNTIME_DIR/softib, else
 * /tmp/softib-<uid>.  Only its user may use it: it is made 0700 when
 * missing and refused when it is not a directory of this user's that
 * nobody else can enter -- the kernel's file permissions are what keeps
 * another user out of the keys and the counters.  When /tmp/softib-<uid>
 * is refused (another user made it first) softib uses
 * $XDG_CACHE_HOME/softib-run or $HOME/.cache/softib-run instead, with one
 * warning: every process of the user makes the same choice.
 */
#ifndef SIB_BASE_RUNDIR_H
#define SIB_BASE_RUNDIR_H

#include <stddef.h>

#define SIB_RUN_DIR_MAX 4096

/* The directory's path in buf (created if missing).  0, or a negative
 * errno after a log line saying what is wrong with it. */
int sib_run_dir(char *buf, size_t len);

/* The file of softib-sm at endpoint ep ("ADDR:PORT") in the directory:
 * sm-ADDR_PORT.suffix (':', '[' and ']' made '_').  0 or a negative errno. */
int sib_run_sm_file(const char *ep, const char *suffix, char *buf, size_t len);
/* The same for another program: KIND-ADDR_PORT.suffix (softib-switch: "switch"). */
int sib_run_file(const char *kind, const char *ep, const char *suffix, char *buf, size_t len);

#endif
