/*
 * The sha512 study: x = SHA-512(x) from 64 zero bytes (seed 002), each hash
 * one padded compression block.
 */
#include "kernel.h"

const struct study STUDY_THIS = {
	.description = "x = SHA-512(x) from 64 zero bytes, one padded block "
	    "per hash",
	.unit = "hash",
	.unit_plural = "hashes",
	.state_len = 64,
	.seed_hex = "00000000000000000000000000000000"
	    "00000000000000000000000000000000"
	    "00000000000000000000000000000000"
	    "00000000000000000000000000000000",
	.default_steps = 10000000,
	.control = "openssl-transform",
	/*
	 * 80 rounds of 4 one-cycle steps (rotate, xor, xor, add) on e's and
	 * on a's chain; the SHA512 instructions' latency on AArch64 is not
	 * measured here.
	 */
	.floor_x86_64 = 320,
	.kat_msg = "abc",
	.kat_hex = "ddaf35a193617abacc417349ae204131"
	    "12e6fa4e89a97ea20a9eeee64b55d39a"
	    "2192992a274fc1a836ba3c23a3feebbd"
	    "454d4423643ce80e2a9ac94fa54ca49f",
	/* OpenSSL's EVP chain: about 2.5M steps a second. */
	.max_steps = 10000000000,
};
