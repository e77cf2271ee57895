/* Host-state snapshots taken at the edges of a measurement window. */
#ifndef SEQORCH_AGENT_STATE_H
#define SEQORCH_AGENT_STATE_H

#include "jsonl.h"

/*
 * Write, as the object field key of o, a snapshot of what could disturb
 * timing on this host, described
 * for cpu (the CPU the agent is pinned to; -1 when it is not pinned, and
 * then the CPU it runs on now is described): at, load1, load5, load15,
 * calib_mhz, governor, freq_khz, temp_c, throttle_count, busy_on_cpu and
 * runnable (docs/protocol.md).  A value that cannot be read is JSON null,
 * never a guess.  Takes about 20 ms (calibration and a /proc scan).
 */
void state_snapshot(struct jsonl *o, const char *key, int cpu);

#endif
