/*
 * What brackets the measurement window: the host lock (a wait record
 * while another agent holds it), the preflight noise verdict, and the
 * window records with the host's state at its begin and end.  Each writes
 * its records through emit.h and ends the agent (fatal) when it cannot go
 * on.  Nothing is returned to free; the lock's descriptor stays open on
 * purpose, so the lock lasts until the agent exits.
 */
#ifndef SEQORCH_AGENT_WINDOW_H
#define SEQORCH_AGENT_WINDOW_H

#include "opts.h"

/* Take o->lock as o->holder; with --no-wait a held lock exits 4. */
void window_lock(const struct opts *o);

/*
 * The preflight record: the noise verdict for cpu (docs/measurement.md)
 * and, with --cpu auto, why cpu was chosen (choice, or NULL).  With
 * --require-quiet a noisy host ends the agent (exit 5) before anything
 * is timed.
 */
void window_preflight(const struct opts *o, int cpu, const char *choice);

/* A window record: phase PROTO_V_BEGIN or _END, the host's state now. */
void window_record(const char *phase, int cpu);

#endif
