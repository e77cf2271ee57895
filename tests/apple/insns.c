/*
 * Prints each kernel's disassembly declaration (struct kernel: symbol,
 * insns, forbidden) from the registry table it is linked with, one
 * tab-separated line a variant: study, variant, symbol, the required and
 * the forbidden mnemonics comma-separated ("-" for none).  Built for
 * aarch64 by tests/test_27_apple.py, so the lists are those an arm64
 * agent declares.
 */
#include "registry.h"

#include <stdio.h>

static void
list(const char *const *m)
{
	int i;

	if (m == NULL || m[0] == NULL) {
		fputs("-", stdout);
		return;
	}
	for (i = 0; m[i] != NULL; i++)
		printf("%s%s", i ? "," : "", m[i]);
}

int
main(void)
{
	const struct registry_kernel *r;

	for (r = registry_kernels; r->study != NULL; r++) {
		printf("%s\t%s\t%s\t", r->study, r->variant,
		    r->k->symbol ? r->k->symbol : "-");
		list(r->k->insns);
		putchar('\t');
		list(r->k->forbidden);
		putchar('\n');
	}
	return 0;
}
