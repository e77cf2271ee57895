/*
 * The noise preflight (docs/measurement.md): before each window, and for
 * `seqorch hosts check`, judge whether this host is quiet enough to
 * measure on, with the reasons when it is not.
 */
#ifndef SEQORCH_AGENT_PREFLIGHT_H
#define SEQORCH_AGENT_PREFLIGHT_H

#include "jsonl.h"

/*
 * Look at the host for cpu (the agent's CPU; -1 when not pinned): sleeps
 * about a quarter of a second to see what else runs.  Adds to rec the
 * fields "verdict" ("quiet" or "noisy"), "reasons" (what makes it noisy:
 * an empty array when quiet) and "notes" (what was seen or could not be
 * read, which does not decide the verdict), and into why (whylen bytes)
 * the reasons joined by "; ".  Returns 1 when quiet, 0 when noisy.
 */
int preflight_run(struct jsonl *rec, int cpu, char *why, size_t whylen);

#endif
