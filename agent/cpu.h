/*
 * Run-time CPU feature detection for the kernels' KF_* bits
 * (cpuid/xgetbv on x86-64, getauxval on Linux/arm64, sysctl on macOS).
 */
#ifndef SEQORCH_AGENT_CPU_H
#define SEQORCH_AGENT_CPU_H

#include <stddef.h>

/* KF_* bits this CPU and OS support; cached after the first call. */
unsigned cpu_features(void);

/*
 * Names of the KF_* bits in `missing`, comma separated, into buf.
 * Used for "skipped: cpu lacks avx512" messages.
 */
void cpu_feature_names(unsigned bits, char *buf, size_t len);

#endif
