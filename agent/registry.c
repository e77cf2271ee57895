/*
 * The table of kernels.  A new variant is one folder under kernels/ and one
 * row here; a row for an architecture-specific variant sits behind the same
 * preprocessor test that gates its folder's `arch` file, because the
 * Makefile leaves out folders built for another architecture.
 */
#include "registry.h"

#include <string.h>

extern const struct study study_sha3;

extern const struct kernel kernel_sha3_c_wrapped;
extern const struct kernel kernel_sha3_c_fused;
extern const struct kernel kernel_sha3_c_unrolled;
extern const struct kernel kernel_sha3_openssl_evp;
#if defined(__x86_64__)
extern const struct kernel kernel_sha3_avx2_wrapped;
extern const struct kernel kernel_sha3_avx2_fused;
extern const struct kernel kernel_sha3_avx512_wrapped;
extern const struct kernel kernel_sha3_avx512_fused;
extern const struct kernel kernel_sha3_avx512_unrolled;
#endif
#if defined(__aarch64__)
extern const struct kernel kernel_sha3_arm_sha3_wrapped;
extern const struct kernel kernel_sha3_arm_sha3_fused;
extern const struct kernel kernel_sha3_arm_sha3_unrolled;
extern const struct kernel kernel_sha3_arm_scalar;
#endif

const struct study *const registry_studies[] = {
	&study_sha3,
	NULL,
};

const struct kernel *const registry_kernels[] = {
	&kernel_sha3_c_wrapped,
	&kernel_sha3_c_fused,
	&kernel_sha3_c_unrolled,
	&kernel_sha3_openssl_evp,
#if defined(__x86_64__)
	&kernel_sha3_avx2_wrapped,
	&kernel_sha3_avx2_fused,
	&kernel_sha3_avx512_wrapped,
	&kernel_sha3_avx512_fused,
	&kernel_sha3_avx512_unrolled,
#endif
#if defined(__aarch64__)
	&kernel_sha3_arm_sha3_wrapped,
	&kernel_sha3_arm_sha3_fused,
	&kernel_sha3_arm_sha3_unrolled,
	&kernel_sha3_arm_scalar,
#endif
	NULL,
};

const struct study *
registry_study(const char *name)
{
	size_t i;

	for (i = 0; registry_studies[i] != NULL; i++)
		if (strcmp(registry_studies[i]->name, name) == 0)
			return registry_studies[i];
	return NULL;
}
