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
}

KATS = {
    "sha3": lambda m: hashlib.sha3_256(m).digest(),
}


def chain_hex(study, steps, seed=None):
    """Hex digest after `steps` steps of study from seed (default zeros)."""
    n, fn = CHAINS[study]
    return fn(bytes(n) if seed is None else seed, steps).hex()


def _randomx_chain(seed, steps):
    """x = RandomX("test key 000", x) through the system's librandomx
    (Debian librandomx0) with ctypes, in light mode: plain calls of the
    public C API, sharing no code with kernels/randomx."""
    import ctypes
    lib = ctypes.CDLL("librandomx.so.0")
    lib.randomx_get_flags.restype = ctypes.c_int
    lib.randomx_alloc_cache.restype = ctypes.c_void_p
    lib.randomx_alloc_cache.argtypes = [ctypes.c_int]
    lib.randomx_init_cache.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                       ctypes.c_size_t]
    lib.randomx_create_vm.restype = ctypes.c_void_p
    lib.randomx_create_vm.argtypes = [ctypes.c_int, ctypes.c_void_p,
                                      ctypes.c_void_p]
    lib.randomx_calculate_hash.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                           ctypes.c_size_t, ctypes.c_char_p]
    lib.randomx_destroy_vm.argtypes = [ctypes.c_void_p]
    lib.randomx_release_cache.argtypes = [ctypes.c_void_p]
    flags = lib.randomx_get_flags()
    cache = lib.randomx_alloc_cache(flags)
    key = b"test key 000"
    lib.randomx_init_cache(cache, key, len(key))
    vm = lib.randomx_create_vm(flags, cache, None)
    out = ctypes.create_string_buffer(32)
    x = seed
    for _ in range(steps):
        lib.randomx_calculate_hash(vm, x, len(x), out)
        x = out.raw
    lib.randomx_destroy_vm(vm)
    lib.randomx_release_cache(cache)
    return x


CHAINS["randomx"] = (32, _randomx_chain)
