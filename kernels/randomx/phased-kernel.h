/*
 * The light and full variants' kernel: the library prebuild.sh built,
 * through phased.cpp.  A variant's kernel.c defines RANDOMX_FULL (0 or 1)
 * and includes this once; the names it defines are static.
 */
#include "cpu.h"
#include "kernel.h"
#include "randomx/chain.h"
#include "randomx/phased.h"

#include <string.h>

static int
phased_setup(void **ctx)
{
	struct rxp *r;
	char why[160];

	if (rxp_create(RANDOMX_FULL, RANDOMX_CHAIN_KEY,
	    strlen(RANDOMX_CHAIN_KEY), &r, why, sizeof why) != 0)
		return -1;
	*ctx = r;
	return 0;
}

static void
phased_teardown(void *ctx)
{
	rxp_destroy(ctx);
}

static int
phased_hash(void *ctx, const uint8_t *msg, size_t len, uint8_t *out)
{
	rxp_hash(ctx, msg, len, out);
	return 0;
}

static int
phased_chain(void *ctx, uint8_t *x, uint64_t steps)
{
	uint64_t ns[RXP_NPHASES], i;

	/* The metrics are this chain's: a few stores, not worth a timer. */
	rxp_phases(ctx, ns);
	for (i = 0; i < steps; i++)
		rxp_hash(ctx, x, 32, x);
	return 0;
}

static size_t
phased_metrics(void *ctx, struct kernel_metric *m, size_t max)
{
	static const char *const names[RXP_NPHASES] = {
		[RXP_PROGGEN] = "phase_proggen",
		[RXP_COMPILE] = "phase_compile",
		[RXP_EXECUTE] = "phase_execute",
		/* What RandomX's W^X switch calls (virtual_memory.cpp):
		 * on Apple a thread's JIT write protection, elsewhere the
		 * pages' protection; the report says they do not compare. */
#if defined(__APPLE__)
		[RXP_MPROTECT] = "phase_jit_write_protect",
#else
		[RXP_MPROTECT] = "phase_mprotect",
#endif
	};
	uint64_t ns[RXP_NPHASES];
	size_t i;

	rxp_phases(ctx, ns);
	for (i = 0; i < RXP_NPHASES && i < max; i++) {
		m[i].name = names[i];
		m[i].value = (double)ns[i];
	}
	return i;
}

/* The seeds' Mac build: -march=native had silently lost hardware AES. */
static const char *
phased_warning(void *ctx)
{
	if (!rxp_hard_aes(ctx) &&
	    (cpu_features() & (KF_X86_AES | KF_ARM_AES)) != 0)
		return "selects software AES on a CPU with hardware AES";
	return NULL;
}

const struct kernel KERNEL_THIS = {
#if RANDOMX_FULL
	.description = "upstream RandomX built here, full mode (2 GiB "
	    "dataset), secure JIT, phases timed",
#else
	.description = "upstream RandomX built here, light mode (256 MiB "
	    "cache), secure JIT, phases timed",
#endif
	.symbol = "phased_chain",
	.setup = phased_setup,
	.teardown = phased_teardown,
	.hash = phased_hash,
	.chain = phased_chain,
	.metrics = phased_metrics,
	.warning = phased_warning,
};
