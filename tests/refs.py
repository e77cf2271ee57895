"""Independent Python references for every study's chain, for the tests and
`make bench`: x = F(x) `steps` times from seed.  Each is written from the
study's definition in docs/studies.md and shares nothing with kernels/ or
with the coordinator's kernels/<study>/reference.c.

CHAINS maps a study name to (state_len, chain(seed_bytes, steps) -> bytes);
KATS maps a hash study to its message hash (for the known answers)."""
import hashlib
import struct


def _hash_chain(fn):
    def chain(seed, steps):
        x = seed
        for _ in range(steps):
            x = fn(x).digest()
        return x
    return chain


M64 = (1 << 64) - 1
M32 = (1 << 32) - 1


def _ror(v, r, bits):
    mask = (1 << bits) - 1
    return ((v >> r) | (v << (bits - r))) & mask


def _lanes(x, size):
    return [int.from_bytes(x[i:i + size], "little")
            for i in range(0, len(x), size)]


def _bytes(lanes, size):
    return b"".join(v.to_bytes(size, "little") for v in lanes)


def _mul_chain(seed, steps):
    """mul: x = ror64(x * M + A, 23) ^ K."""
    x = int.from_bytes(seed, "little")
    for _ in range(steps):
        x = _ror((x * 0x9e3779b97f4a7c15 + 0xd1b54a32d192ed03) & M64, 23,
                 64) ^ 0xbf58476d1ce4e5b9
    return x.to_bytes(8, "little")


def _mixed_lanes(mult, adds, r, bits):
    """t[i] = x[i] * mult + adds[i]; x[i] = t[i] ^ ror(t[i + 1], r)."""
    mask, size, n = (1 << bits) - 1, bits // 8, len(adds)

    def chain(seed, steps):
        x = _lanes(seed, size)
        for _ in range(steps):
            t = [(v * mult + a) & mask for v, a in zip(x, adds)]
            x = [t[i] ^ _ror(t[(i + 1) % n], r, bits) for i in range(n)]
        return _bytes(x, size)
    return chain


# div32, div64, bitperm (docs/studies.md gives each round and its ranges).
def _words(fmt, seed):
    return list(struct.unpack("<" + fmt, seed))


def _div_round(a, b, width, c):
    """One div32/div64 round on (a, b): h = width / 2,
    d = 2^h | (b mod 2^h), q = a // d, r = a % d,
    (a, b) <- (b ^ c, a ^ q ^ (r << h)) mod 2^width."""
    h = width // 2
    mask = (1 << width) - 1
    d = (1 << h) | (b & ((1 << h) - 1))
    q, r = divmod(a, d)
    return b ^ c, (a ^ q ^ (r << h)) & mask


DIV32_C = 0x9E3779B9
DIV64_C = 0x9E3779B97F4A7C15


def _div_chain(fmt, width, c):
    def chain(seed, steps):
        a, b = _words(fmt, seed)
        for _ in range(steps):
            a, b = _div_round(a, b, width, c)
        return struct.pack("<" + fmt, a, b)
    return chain


BITPERM_M = 0x9B3CF1A6D2584E07
BITPERM_N = 0x6E25C9B1F0A3D748
BITPERM_K = 0x9E3779B97F4A7C15


def _positions(mask):
    return [i for i in range(64) if mask >> i & 1]


def _bitperm_chain(seed, steps):
    """x <- rev64(pdep(pext(x, M), N) | pdep(pext(x, ~M), ~N)) + K: the
    j-th set bit of M moves to the j-th set bit of N, the j-th clear bit
    of M to the j-th clear bit of N, then bit i goes to 63 - i."""
    src = _positions(BITPERM_M) + _positions(~BITPERM_M & M64)
    dst = _positions(BITPERM_N) + _positions(~BITPERM_N & M64)
    moves = [(s, 63 - t) for s, t in zip(src, dst)]
    (x,) = _words("Q", seed)
    for _ in range(steps):
        y = 0
        for s, t in moves:
            y |= (x >> s & 1) << t
        x = (y + BITPERM_K) & M64
    return struct.pack("<Q", x)


CHAINS = {
    "sha3": (32, _hash_chain(hashlib.sha3_256)),
    "sha512": (64, _hash_chain(hashlib.sha512)),
    "mul": (8, _mul_chain),
    "mul-wide": (32, _mixed_lanes(
        0x9e3779b97f4a7c15, [0xd1b54a32d192ed03, 0x8bb84b93962eacc9,
                             0x2545f4914f6cdd1d, 0x94d049bb133111eb],
        23, 64)),
    "mul32": (64, _mixed_lanes(
        0x85ebca6b, [(2 * i + 1) * 0x9e3779b9 & M32 for i in range(16)],
        13, 32)),
    "div32": (8, _div_chain("II", 32, DIV32_C)),
    "div64": (16, _div_chain("QQ", 64, DIV64_C)),
    "bitperm": (8, _bitperm_chain),
}

KATS = {
    "sha3": lambda m: hashlib.sha3_256(m).digest(),
    "sha512": lambda m: hashlib.sha512(m).digest(),
}


def chain_hex(study, steps, seed=None):
    """Hex digest after `steps` steps of study from seed (default zeros)."""
    n, fn = CHAINS[study]
    return fn(bytes(n) if seed is None else seed, steps).hex()


def msg_chain_hex(study, steps, msg_len):
    """`run --msg-len`'s chain (kernels/kernel.h): each step hashes the
    previous digest followed by zeros up to msg_len bytes, with hashlib."""
    n = CHAINS[study][0]
    h, x = KATS[study], bytes(n)
    for _ in range(steps):
        x = h(x + bytes(msg_len - n))
    return x.hex()


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
