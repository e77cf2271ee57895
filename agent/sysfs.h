/*
 * Reading /sys and /proc for the preflight and the CPU choice.  Every path
 * is taken under a root: "" on a real host, or, for tests only, the
 * directory named by SEQORCH_SYSFS_ROOT, which holds a recorded copy of
 * the files (tests/sysfs/).  A host measured under such a root says so in
 * its facts (sysfs_root), so a stray setting cannot pass unnoticed.
 */
#ifndef SEQORCH_AGENT_SYSFS_H
#define SEQORCH_AGENT_SYSFS_H

#include <stddef.h>

#define SYSFS_MAX_CPUS 1024

/* SEQORCH_SYSFS_ROOT, or NULL on a real host (static storage). */
const char *sysfs_root(void);

/*
 * First line of the file at the formatted path (under the root), without
 * its newline, into buf.  0, or -1 when it cannot be read.
 */
int sysfs_line(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The integer the formatted file starts with: 0, or -1. */
int sysfs_ll(long long *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * The CPU list ("0-3,8,10-11", empty allowed) in the formatted file, as
 * set[cpu] = 1 for cpu < SYSFS_MAX_CPUS.  Returns the number of CPUs, or
 * -1 when the file is unreadable or not a CPU list.
 */
int sysfs_cpus(unsigned char *set, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Parse a CPU list as sysfs_cpus does; -1 when malformed. */
int sysfs_parse_cpus(const char *s, unsigned char *set);

/* set as a CPU list ("1,3-5"), "none" when empty, cut to len. */
void sysfs_format_cpus(const unsigned char *set, char *buf, size_t len);

/* Full path of a relative one ("/proc/stat") under the root. */
void sysfs_path(char *buf, size_t len, const char *path);

/*
 * How busy each CPU was over ms milliseconds, from two reads of
 * /proc/stat: busy[cpu] is the share of time in user, nice, system, irq
 * and softirq; steal[cpu] the share the hypervisor gave to someone else.
 * -1 for a CPU /proc/stat does not list or that did not advance.  The
 * caller sleeps through ms (this thread does no work meanwhile, so its
 * own CPU counts only what others ran there).  Returns 0, or -1 when
 * /proc/stat cannot be read.
 */
int sysfs_busy(unsigned ms, double *busy, double *steal);

#endif
