/* The sha3 study: x = SHA3-256(x) from 32 zero bytes (seed 000). */
#include "kernel.h"

const struct study STUDY_THIS = {
	.description = "x = SHA3-256(x) from 32 zero bytes, all 24 rounds, "
	    "standard padding",
	.unit = "hash",
	.unit_plural = "hashes",
	.state_len = 32,
	.seed_hex = "00000000000000000000000000000000"
	    "00000000000000000000000000000000",
	.default_steps = 10000000,
	.control = "openssl-evp",
	.kat_msg = "abc",
	.kat_hex = "3a985da74fe225b2045c172d6bd390bd"
	    "855f086e3e9d525b46bfe24511431532",
	/* OpenSSL's EVP chain: about 1.6M steps a second. */
	.max_steps = 5000000000,
};
