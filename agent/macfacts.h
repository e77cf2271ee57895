/*
 * The macOS facts' wording, apart from the calls that read them
 * (macos.c), so that it is the same on every OS and unit-tested where
 * there is no Mac (tests/unit/test_agent.c): which hw.optional.arm
 * FEAT_* sysctls the agent reads and how they are listed, and how the
 * power source and the battery's charge state are described.
 */
#ifndef SEQORCH_AGENT_MACFACTS_H
#define SEQORCH_AGENT_MACFACTS_H

#include <stddef.h>

/*
 * Reads one integer sysctl: 0 with its value in *v, -1 when the name
 * does not exist on this system (an older macOS, another chip).
 */
typedef int (*macfacts_sysctl_fn)(const char *name, int *v);

/*
 * The names (without "hw.optional.arm.") of the FEAT_* sysctls that read
 * non-zero, in the order sysctl lists them (ASCII), space-separated,
 * into buf (len bytes; truncated at a name).  Returns how many were read at all (set or not),
 * so 0 means this macOS has none of them (before macOS 12) and the fact
 * is unknown, not empty.
 */
int macfacts_feat_names(macfacts_sysctl_fn get, char *buf, size_t len);

/* What IOKit's power sources say (IOPSCopyPowerSourcesInfo). */
struct macfacts_power {
	const char *source;	/* providing source: "AC Power",
				 * "Battery Power", "UPS Power"; NULL unknown */
	int battery;		/* an internal battery was found */
	int charging;		/* 1, 0, -1 unknown */
	int charged;		/* fully charged: 1, 0, -1 unknown */
	int percent;		/* current over max capacity; -1 unknown */
};

/*
 * p in pmset's words, as seed 002 recorded it: "AC attached; charging;
 * 87%", "AC attached; not charging; 80%", "AC attached; charged; 100%",
 * "on battery; 54%", "AC attached; no battery", "on UPS".  Returns 0, or
 * -1 (buf empty) when p->source is unknown.
 */
int macfacts_power_describe(const struct macfacts_power *p, char *buf,
    size_t len);

#endif
