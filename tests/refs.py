"""Independent Python references for every study's chain, for the tests and
`make bench`: x = F(x) `steps` times from seed.  Each is written from the
study's definition in docs/studies.md and shares nothing with kernels/ or
with the coordinator's kernels/<study>/reference.c.

CHAINS maps a study name to (state_len, chain(seed_bytes, steps) -> bytes);
KATS maps a hash study to its message hash (for the known answers)."""
import hashlib


def _hash_chain(fn):
    def chain(seed, steps):
        x = seed
        for _ in range(steps):
            x = fn(x).digest()
        return x
    return chain


CHAINS = {
    "sha3": (32, _hash_chain(hashlib.sha3_256)),
    "sha512": (64, _hash_chain(hashlib.sha512)),
}

KATS = {
    "sha3": lambda m: hashlib.sha3_256(m).digest(),
    "sha512": lambda m: hashlib.sha512(m).digest(),
}


def chain_hex(study, steps, seed=None):
    """Hex digest after `steps` steps of study from seed (default zeros)."""
    n, fn = CHAINS[study]
    return fn(bytes(n) if seed is None else seed, steps).hex()
