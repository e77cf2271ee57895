/*
 * What macOS offers instead of /proc and sched_setaffinity, for the
 * preflight (preflight.c) and the unpinned agent (agent.c).  Every
 * function exists on every OS and says "not here" elsewhere, so the
 * callers carry no #if; only macos.c calls Apple's APIs.
 */
#ifndef SEQORCH_AGENT_MACOS_H
#define SEQORCH_AGENT_MACOS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Move the calling thread to QoS class user-interactive, which keeps it
 * on a performance core (there is no hard affinity on macOS).  Appends
 * what happened ("; running at qos class user-interactive", or why that
 * failed) to the string in why (len bytes).  Returns 0 when set, -1 when
 * it failed, 1 on an OS without QoS classes (why untouched).
 */
int macos_qos(char *why, size_t len);

/*
 * How busy each CPU was over ms milliseconds, from two reads of
 * host_processor_info's tick counters: busy[cpu] the share of user,
 * system and nice ticks, for cpu < max; -1 for a CPU that did not tick.
 * Returns the number of CPUs, or -1 when the counters cannot be read (or
 * elsewhere than macOS).
 */
int macos_busy(unsigned ms, double *busy, int max);

/* Another seqorch-agent process: running (a thread runs) or waiting. */
struct macos_agent {
	int pid;
	int running;
};

/*
 * The other seqorch-agent processes, at most max of them into agents.
 * Returns how many, or -1 when the process list cannot be read (or
 * elsewhere than macOS).
 */
int macos_agents(struct macos_agent *agents, int max);

/*
 * The hw.optional.arm.FEAT_* sysctls that read 1, by name, space
 * separated, into buf (macfacts.h): what the variants are selected by on
 * a Mac.  0, or -1 (buf empty) when there are none to read (elsewhere
 * than macOS, or a macOS before 12).
 */
int macos_feat_names(char *buf, size_t len);

/*
 * The power source and the battery's charge, from IOKit's power sources
 * (loaded at run time: the agent links nothing but libc), in pmset's
 * words: "AC attached; charging; 87%" (macfacts_power_describe).  0, or
 * -1 (buf empty) when they cannot be read (or elsewhere than macOS).
 */
int macos_power(char *buf, size_t len);

/*
 * The state Darwin's notify(3) keeps for name: 0 with it in *v, or -1.
 * -1 elsewhere than macOS.
 */
int macos_notify_state(const char *name, uint64_t *v);

/*
 * The system's thermal pressure level (notify(3),
 * kOSThermalNotificationPressureLevelName) by its name: "nominal",
 * "moderate", "heavy", "trapping", "sleeping" (or "level N").  0, or -1
 * (buf empty) when it cannot be read (or elsewhere than macOS).
 */
int macos_thermal(char *buf, size_t len);

#endif
