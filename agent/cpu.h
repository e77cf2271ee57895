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

/*
 * The AT_HWCAP and AT_HWCAP2 bits the kernel (or emulator) gave this
 * process, by Linux's names (those of /proc/cpuinfo's "Features" line),
 * space separated, into buf: what cpu_features() decided from.  0, or -1
 * (buf empty) where there are none: anything but Linux on AArch64.
 */
int cpu_hwcap_names(char *buf, size_t len);

/*
 * The x86-64 processor signature from cpuid leaf 1, in decimal as
 * /proc/cpuinfo and lscpu give it ("family 25 model 17 stepping 1"), into
 * buf: what tells a Zen 4 from a Zen 5 where a VM names the cpu only "AMD
 * EPYC".  0, or -1 (buf empty) on other architectures.
 */
int cpu_signature(char *buf, size_t len);

#endif
