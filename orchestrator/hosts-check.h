/* `seqorch hosts check` (hosts-check.c), for cmd-hosts.c. */
#ifndef SEQORCH_HOSTS_CHECK_H
#define SEQORCH_HOSTS_CHECK_H

#include "config.h"

#include <stddef.h>

/*
 * Check hosts[0..n), at most parallel at once, and print each host's
 * report to stdout in the order given; the hosts that failed are named on
 * stderr.  Returns 0 when every host is usable, else SO_EBUILD (a host
 * that cannot be reached or misses what a build needs cannot build).
 */
int hosts_check(struct host **hosts, size_t n, int parallel);

#endif
