/* The sha3 study: x = SHA3-256(x) from 32 zero bytes (seed 000). */
#include "kernel.h"

const struct study study_sha3 = {
	.name = "sha3",
	.description = "x = SHA3-256(x) from 32 zero bytes, all 24 rounds, "
	    "standard padding",
	.unit = "hash",
	.state_len = 32,
	.kat_msg = "abc",
	.kat_hex = "3a985da74fe225b2045c172d6bd390bd"
	    "855f086e3e9d525b46bfe24511431532",
};
