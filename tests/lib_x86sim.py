"""An x86-64 interpreter for the kernels' assembly, so that their
instructions are checked where the CPU lacks them (a Genoa VM that hides
AVX-512, CI machines): tests/test_44_simulated.py runs the AVX-512
kernels' functions here against independent references.

It reads assembly in AT&T syntax, a kernel.S through the C preprocessor
as the build does or what `cc -S` wrote for a kernel.c, lays out its
data, and executes its instructions one by one: the general registers
at every width, the flags CF, ZF, SF and OF, and 32 vector registers of
512 bits with VEX and EVEX semantics (a write to an xmm or ymm register
zeroes the rest of it).  Only the instructions the kernels use are
known; any other stops with an error naming it, so code that starts using
a new one fails loudly here rather than being checked against a guess,
and that instruction's semantics are added from the Intel SDM.  Not a
model of timing, nor of encodings (the assembler's job, which the native
build checks).
"""
import math
import re
import struct
import subprocess

M64 = (1 << 64) - 1
SUFFIX = {"b": 1, "w": 2, "l": 4, "q": 8}
LANES = {"x": 2, "y": 4, "z": 8}    # 64-bit lanes of xmm, ymm, zmm

DATA = 0x10000          # data, then the caller's buffers
STACK_TOP = 0x200000    # the stack grows down from here
MEMSIZE = 0x210000
RETURN = 0xdead0000     # the caller's return address: ret to it ends
CODE = 0x40000000       # return addresses of calls: CODE + index


def _regs():
    """Register name -> (64-bit register, bytes)."""
    out = {}
    legacy = {"a": "ax", "b": "bx", "c": "cx", "d": "dx"}
    for k, x in legacy.items():
        out["r" + x] = ("r" + x, 8)
        out["e" + x] = ("r" + x, 4)
        out[x] = ("r" + x, 2)
        out[k + "l"] = ("r" + x, 1)
    for x in ("si", "di", "bp", "sp"):
        out["r" + x] = ("r" + x, 8)
        out["e" + x] = ("r" + x, 4)
        out[x] = ("r" + x, 2)
        out[x + "l"] = ("r" + x, 1)
    for i in range(8, 16):
        r = "r%d" % i
        out[r] = (r, 8)
        out[r + "d"] = (r, 4)
        out[r + "w"] = (r, 2)
        out[r + "b"] = (r, 1)
    return out


REGS = _regs()
GPR = sorted({full for full, _ in REGS.values()})


class SimError(Exception):
    pass


def mask(size):
    return (1 << 8 * size) - 1


def rol(x, n, bits=64):
    n %= bits
    m = (1 << bits) - 1
    return ((x << n) | (x >> (bits - n))) & m if n else x


def ror(x, n, bits=64):
    return rol(x, bits - n % bits, bits)


def sext(v, size):
    return v - (1 << 8 * size) if v >> (8 * size - 1) & 1 else v


def elems(words, e):
    """64-bit words as elements of e bytes, lowest first."""
    if e == 8:
        return list(words)
    n, m = 8 // e, mask(e)
    return [w >> 8 * e * i & m for w in words for i in range(n)]


def words(es, e):
    """Elements of e bytes back into 64-bit words."""
    if e == 8:
        return [x & M64 for x in es]
    n, m = 8 // e, mask(e)
    return [sum((es[j + i] & m) << 8 * e * i for i in range(n))
            for j in range(0, len(es), n)]


def d2b(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def b2d(v):
    return struct.unpack("<d", struct.pack("<Q", v & M64))[0]


def fdiv(a, b):
    """IEEE division, Python's for b != 0."""
    if b != 0:
        return a / b
    if a == 0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1, b)


def cvt_u64(x, signed):
    """Truncation of a double to an integer; out of range or NaN gives
    the integer indefinite (2^64 - 1 unsigned, 2^63 signed)."""
    if signed:
        if math.isnan(x) or not -2.0 ** 63 <= x < 2.0 ** 63:
            return 1 << 63
        return int(x) & M64
    if math.isnan(x) or not -1.0 < x < 2.0 ** 64:
        return M64
    return int(x)


class Mem:
    """A memory operand: base + index * scale + disp (rip: a label);
    bcast: EVEX {1toN}, one element read for every lane."""
    def __init__(self, disp, base, index, scale, bcast=False):
        self.disp, self.base, self.index, self.scale = \
            disp, base, index, scale
        self.bcast = bcast


def parse_operand(text):
    """('imm', v) | ('reg', 64-bit name, bytes) | ('vec', n, lanes) |
    ('mem', Mem)."""
    if text.startswith("$"):
        return ("imm", int(text[1:], 0))
    if text.startswith("%"):
        r = text[1:]
        if r in REGS:
            return ("reg",) + REGS[r]
        m = re.fullmatch(r"([xyz])mm(\d+)", r)
        if m and int(m.group(2)) < 32:
            return ("vec", int(m.group(2)), LANES[m.group(1)])
        m = re.fullmatch(r"k([0-7])", r)
        if m:
            return ("k", int(m.group(1)))
        raise SimError("unknown register %r" % text)
    bcast = re.search(r"\{1to(\d+)\}$", text)
    if bcast:
        text = text[:bcast.start()]
    m = re.fullmatch(r"([^(]*)\((%\w+)?(?:,\s*%(\w+)(?:,\s*(\d+))?)?\)",
                     text)
    if not m:
        raise SimError("unknown operand %r" % text)
    disp, base, index, scale = m.groups()
    base = base[1:] if base else None
    if base == "rip":
        lm = re.fullmatch(r"([\w.$]+)(?:\+(\d+))?", disp)
        if not lm:
            raise SimError("unknown rip operand %r" % text)
        return ("mem", Mem((lm.group(1), int(lm.group(2) or 0)),
                           "rip", None, 1, bool(bcast)))
    for r in (base, index):
        if r is not None and REGS.get(r, (None, 0))[1] != 8:
            raise SimError("address register %r is not 64-bit" % r)
    return ("mem", Mem(expression(disp or "0"), base, index,
                       int(scale or 1), bool(bcast)))


def expression(text):
    """A displacement such as -8 or OpenSSL's 40*4-96: integers, + - *
    and parentheses only."""
    if not re.fullmatch(r"[-+*()\s\dxa-fA-F]+", text):
        raise SimError("unknown displacement %r" % text)
    try:
        return int(eval(text, {"__builtins__": {}}, {}))
    except (SyntaxError, NameError) as e:
        raise SimError("unknown displacement %r: %s" % (text, e)) from None


def split_operands(s):
    """Operands split at commas outside parentheses and quotes."""
    out, depth, cur, quoted = [], 0, "", False
    for ch in s:
        if ch == '"':
            quoted = not quoted
        if ch == "," and depth == 0 and not quoted:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def c_string(text):
    """A .string/.ascii operand's bytes (C escapes)."""
    body = text.strip()[1:-1]
    return body.encode("latin-1").decode("unicode_escape").encode(
        "latin-1")


def strip_comment(line):
    """line without a # comment (outside a string)."""
    quoted = False
    for i, ch in enumerate(line):
        if ch == '"':
            quoted = not quoted
        elif ch == "#" and not quoted:
            return line[:i]
    return line


class Program:
    """Assembly: code, labels, data.  path is preprocessed with cc (a
    .S), or read as it is (what `cc -S` wrote)."""

    def __init__(self, path, cc="cc", preprocess=True):
        if preprocess:
            text = subprocess.run(
                [cc, "-E", "-P", "-x", "assembler-with-cpp", str(path)],
                check=True, capture_output=True, text=True).stdout
        else:
            text = open(path).read()
        self.code = []          # (mnemonic, operands, their text, line,
        #                         write mask or None)
        self.labels = {}        # name -> ("code", index) or ("data", addr)
        self.local = {}         # numeric label -> [code indices]
        self.data = bytearray()
        code = True
        for line in text.splitlines():
            line = strip_comment(line).strip()
            while True:
                m = re.match(r"([A-Za-z_.$][\w.$]*|\d+):\s*", line)
                if not m:
                    break
                name = m.group(1)
                if code and name.isdigit():
                    self.local.setdefault(name, []).append(len(self.code))
                elif code:
                    self.labels[name] = ("code", len(self.code))
                else:
                    self.labels[name] = ("data", DATA + len(self.data))
                line = line[m.end():]
            if not line:
                continue
            op, _, rest = line.replace("\t", " ").partition(" ")
            rest = rest.strip()
            args = split_operands(rest)
            if op == ".text":
                code = True
            elif op in (".data", ".bss"):
                code = False
            elif op == ".section":
                code = args[0].startswith(".text")
            elif op in (".balign", ".p2align", ".align"):
                n = int(args[0], 0)
                n = 1 << n if op == ".p2align" else n
                if not code:
                    while len(self.data) % n:
                        self.data.append(0)
            elif op in (".quad", ".long", ".value", ".short", ".word",
                        ".byte") and not code:
                size = {".quad": 8, ".long": 4, ".byte": 1}.get(op, 2)
                for a in args:
                    # A number or OpenSSL's 64-3; a pointer (a label) is
                    # never followed by kernels: 0, which no read reaches.
                    try:
                        v = expression(a)
                    except SimError:
                        v = 0
                    self.data += (v & mask(size)).to_bytes(size, "little")
            elif op in (".zero", ".skip") and not code:
                self.data += bytes(int(args[0], 0))
            elif op in (".string", ".asciz", ".ascii") and not code:
                self.data += c_string(rest) + (b"" if op == ".ascii"
                                               else b"\0")
            elif op in (".byte", ".long", ".value", ".quad") and code:
                # Bytes among the instructions: perlasm writes some
                # instructions so (repz ret, rep movsb); others stop the
                # simulation when executed.
                known = {(0xf3, 0xc3): "ret", (0xf3, 0xa4): "rep movsb"}
                try:
                    key = tuple(int(a, 0) for a in args) \
                        if op == ".byte" else None
                except ValueError:
                    key = None
                self.code.append((known.get(key, op), [], args, line,
                                  None))
            elif op.startswith("."):
                continue        # .globl, .type, .size, .cfi_*, ...
            elif code:
                # A branch's or call's operand is a label, kept as text;
                # an AVX-512 write mask {%kN} or {%kN}{z} goes with the
                # instruction, as (N, zeroing).
                km = None
                if args and re.search(r"\{%k[0-7]\}(\{z\})?$", args[-1]):
                    m = re.search(r"\{%k([0-7])\}(\{z\})?$", args[-1])
                    km = (int(m.group(1)), bool(m.group(2)))
                    args[-1] = args[-1][:m.start()]
                ops = [] if op.startswith(("j", "call")) else \
                    [parse_operand(a) for a in args]
                self.code.append((op, ops, args, line, km))
            else:
                raise SimError("instruction %r outside the code" % line)

    def function(self, name):
        kind, where = self.labels.get(name, (None, None))
        if kind != "code":
            raise SimError("no function %r" % name)
        return where


CONDITIONS = {
    "e": lambda f: f.zf, "z": lambda f: f.zf,
    "ne": lambda f: not f.zf, "nz": lambda f: not f.zf,
    "b": lambda f: f.cf, "c": lambda f: f.cf, "nae": lambda f: f.cf,
    "nb": lambda f: not f.cf, "nc": lambda f: not f.cf,
    "ae": lambda f: not f.cf,
    "a": lambda f: not f.cf and not f.zf, "nbe": lambda f: not f.cf and
    not f.zf,
    "be": lambda f: f.cf or f.zf, "na": lambda f: f.cf or f.zf,
    "s": lambda f: f.sf, "ns": lambda f: not f.sf,
    "o": lambda f: f.of, "no": lambda f: not f.of,
    "l": lambda f: f.sf != f.of, "nge": lambda f: f.sf != f.of,
    "ge": lambda f: f.sf == f.of, "nl": lambda f: f.sf == f.of,
    "g": lambda f: not f.zf and f.sf == f.of,
    "nle": lambda f: not f.zf and f.sf == f.of,
    "le": lambda f: f.zf or f.sf != f.of,
    "ng": lambda f: f.zf or f.sf != f.of,
}
ALU = ("add", "sub", "and", "or", "xor", "cmp", "test", "adc", "sbb")
UNARY = ("inc", "dec", "neg", "not")
SHIFT = ("sal", "shl", "shr", "sar", "rol", "ror")
OTHER = ("mov", "movabs", "lea", "imul", "push", "pop", "xchg")


class Machine:
    """Registers and memory; call() runs one function of a Program."""

    def __init__(self, prog):
        self.prog = prog
        self.mem = bytearray(MEMSIZE)
        self.mem[DATA:DATA + len(prog.data)] = prog.data
        self.heap = (DATA + len(prog.data) + 63) & ~63
        self.gpr = dict.fromkeys(GPR, 0)
        self.vec = [[0] * 8 for _ in range(32)]
        self.k = [0] * 8
        self.cf = self.zf = self.sf = self.of = False
        self.wmask = None       # the instruction's {%kN}, {%kN}{z}

    # -- memory --------------------------------------------------------
    def alloc(self, data, align=64):
        """Caller-side bytes (a state, a digest): their address."""
        addr = (self.heap + align - 1) & ~(align - 1)
        if addr + len(data) > STACK_TOP - 0x10000:
            raise SimError("out of simulated memory")
        self.mem[addr:addr + len(data)] = data
        self.heap = addr + len(data)
        return addr

    def read(self, addr, n):
        if addr < DATA or addr + n > MEMSIZE:
            raise SimError("read of %d bytes at %#x: outside memory"
                           % (n, addr))
        return int.from_bytes(self.mem[addr:addr + n], "little")

    def write(self, addr, n, v):
        if addr < DATA + len(self.prog.data) or addr + n > MEMSIZE:
            raise SimError("write of %d bytes at %#x: outside the "
                           "buffers and the stack" % (n, addr))
        self.mem[addr:addr + n] = (v & mask(n)).to_bytes(n, "little")

    def address(self, m):
        if m.base == "rip":
            kind, where = self.prog.labels.get(m.disp[0], (None, None))
            if kind != "data":
                raise SimError("no data label %r" % m.disp[0])
            return where + m.disp[1]
        a = m.disp
        if m.base:
            a += self.gpr[m.base]
        if m.index:
            a += self.gpr[m.index] * m.scale
        return a & M64

    # -- operands ------------------------------------------------------
    def get(self, o, size):
        """o's value as an unsigned integer of size bytes."""
        if o[0] == "imm":
            return o[1] & mask(size)
        if o[0] == "reg":
            return self.gpr[o[1]] & mask(size)
        if o[0] == "mem":
            return self.read(self.address(o[1]), size)
        if o[0] == "vec":
            return self.vec[o[1]][0] & mask(size)
        raise SimError("bad operand %r" % (o,))

    def put(self, o, v, size):
        """A 32-bit write zero-extends into the 64-bit register; 8- and
        16-bit writes keep the bits above them."""
        if o[0] == "reg":
            old = self.gpr[o[1]]
            if size >= 4:
                self.gpr[o[1]] = v & mask(size)
            else:
                self.gpr[o[1]] = (old & ~mask(size) & M64) | \
                    (v & mask(size))
        elif o[0] == "mem":
            self.write(self.address(o[1]), size, v)
        else:
            raise SimError("cannot write %r" % (o,))

    def vget(self, o, lanes, e=8):
        """lanes 64-bit words of a vector register or memory (a
        broadcast repeats its element of e bytes)."""
        if o[0] == "vec":
            return list(self.vec[o[1]][:lanes])
        if o[0] == "mem":
            a = self.address(o[1])
            if o[1].bcast:
                return words([self.read(a, e)] * (lanes * 8 // e), e)
            return [self.read(a + 8 * i, 8) for i in range(lanes)]
        raise SimError("not a vector operand: %r" % (o,))

    def vset(self, o, ws):
        """Write a register (zeroing above its width) or memory, through
        the instruction's write mask, a bit a 64-bit lane: merging keeps
        what a masked-off lane held (memory is not written there),
        zeroing clears it."""
        if self.wmask is not None:
            k, zero = self.wmask
            bits = self.k[k]
            old = self.vget(o, len(ws)) if o[0] == "vec" else None
            if o[0] == "mem":
                a = self.address(o[1])
                for i, w in enumerate(ws):
                    if bits >> i & 1:
                        self.write(a + 8 * i, 8, w)
                return
            ws = [w if bits >> i & 1 else 0 if zero else old[i]
                  for i, w in enumerate(ws)]
        if o[0] == "vec":
            self.vec[o[1]] = [w & M64 for w in ws] + [0] * (8 - len(ws))
        elif o[0] == "mem":
            a = self.address(o[1])
            for i, w in enumerate(ws):
                self.write(a + 8 * i, 8, w)
        else:
            raise SimError("not a vector operand: %r" % (o,))

    # -- execution -----------------------------------------------------
    def call(self, name, *args, limit=50_000_000):
        """Run function name with integer arguments (SysV: rdi, rsi,
        rdx, rcx) until it returns; the instructions it took."""
        for r, v in zip(("rdi", "rsi", "rdx", "rcx"), args):
            self.gpr[r] = v & M64
        self.gpr["rsp"] = STACK_TOP - 64
        self.push(RETURN)
        pc = self.prog.function(name)
        n = 0
        while True:
            if pc >= len(self.prog.code):
                raise SimError("ran off the end of the code")
            op, ops, args, line, self.wmask = self.prog.code[pc]
            n += 1
            if n > limit:
                raise SimError("no return after %d instructions" % limit)
            try:
                nxt = self.step(op, ops, args, pc)
            except SimError as e:
                raise SimError("%s: %s" % (line, e)) from None
            if nxt == "ret":
                back = self.pop()
                if back == RETURN:
                    return n
                if not CODE <= back < CODE + len(self.prog.code):
                    raise SimError("%s: return to %#x, which no call "
                                   "pushed" % (line, back))
                nxt = back - CODE
            pc = pc + 1 if nxt is None else nxt

    def push(self, v):
        self.gpr["rsp"] = (self.gpr["rsp"] - 8) & M64
        self.write(self.gpr["rsp"], 8, v)

    def pop(self):
        v = self.read(self.gpr["rsp"], 8)
        self.gpr["rsp"] = (self.gpr["rsp"] + 8) & M64
        return v

    def target(self, text, pc):
        m = re.fullmatch(r"(\d+)([bf])", text)
        if m:
            at = self.prog.local.get(m.group(1), [])
            cand = [i for i in at if (i <= pc if m.group(2) == "b"
                                      else i > pc)]
            if not cand:
                raise SimError("no label %s" % text)
            return max(cand) if m.group(2) == "b" else min(cand)
        return self.prog.function(text)

    def flags(self, r, size, cf=False, of=False):
        self.zf = r & mask(size) == 0
        self.sf = bool(r >> (8 * size - 1) & 1)
        self.cf, self.of = cf, of

    def step(self, op, o, text, pc):
        if op.startswith("j"):
            if op == "jmp":
                return self.target(text[0], pc)
            cond = CONDITIONS.get(op[1:])
            if cond is None:
                raise SimError("instruction %r is not simulated" % op)
            return self.target(text[0], pc) if cond(self) else None
        if op in ("call", "callq"):
            self.push(CODE + pc + 1)
            return self.target(text[0], pc)
        if op in ("ret", "retq"):
            return "ret"
        if op == "rep movsb":
            n = self.gpr["rcx"]
            src, dst = self.gpr["rsi"], self.gpr["rdi"]
            for i in range(n):
                self.write(dst + i, 1, self.read(src + i, 1))
            self.gpr["rsi"], self.gpr["rdi"] = src + n, dst + n
            self.gpr["rcx"] = 0
            return None
        if op.startswith("."):
            raise SimError("bytes among the instructions are not "
                           "simulated")
        m = re.fullmatch(r"k(xnor|xor|and|or|andn|shiftl|shiftr|mov|not)w",
                         op)
        if m:
            kind = m.group(1)
            if kind in ("shiftl", "shiftr"):    # $n, ksrc, kdst
                v = self.k[o[1][1]]
                n = o[0][1]
                r = v << n if kind == "shiftl" else v >> n
            elif kind in ("mov", "not"):        # src, dst
                v = self.k[o[0][1]] if o[0][0] == "k" else self.get(o[0], 2)
                r = ~v if kind == "not" else v
            else:                               # ksrc2, ksrc1, kdst
                a, b = self.k[o[1][1]], self.k[o[0][1]]
                r = {"xnor": ~(a ^ b), "xor": a ^ b, "and": a & b,
                     "or": a | b, "andn": ~a & b}[kind]
            if o[-1][0] == "k":
                self.k[o[-1][1]] = r & 0xffff
            else:
                self.put(o[-1], r & 0xffff, o[-1][2])
            return None
        if op in ("nop", "nopl", "nopw", "endbr64"):
            return None
        if op == "leave":
            self.gpr["rsp"] = self.gpr["rbp"]
            self.gpr["rbp"] = self.pop()
            return None
        if op == "cltq":
            self.gpr["rax"] = sext(self.gpr["rax"] & 0xffffffff, 4) & M64
            return None
        if op == "cqto":
            self.gpr["rdx"] = M64 if self.gpr["rax"] >> 63 else 0
            return None
        if op == "rorx":
            size = o[2][2]
            self.put(o[2], ror(self.get(o[1], size), o[0][1], 8 * size),
                     size)
            return None
        if op == "andn":    # andn src2, src1, dst: ~src1 & src2
            size = o[2][2]
            self.put(o[2], ~self.get(o[1], size) & self.get(o[0], size)
                     & mask(size), size)
            self.flags(self.get(o[2], size), size)
            return None
        m = re.fullmatch(r"mov([zs])([bwl])([wlq])", op)
        if m:
            v = self.get(o[0], SUFFIX[m.group(2)])
            if m.group(1) == "s":
                v = sext(v, SUFFIX[m.group(2)])
            self.put(o[1], v, SUFFIX[m.group(3)])
            return None
        if op.startswith("v"):
            return self.vstep(op, o)
        base, size = op, None
        if op not in ALU + UNARY + SHIFT + OTHER and op[-1] in SUFFIX:
            base, size = op[:-1], SUFFIX[op[-1]]
        if base not in ALU + UNARY + SHIFT + OTHER:
            raise SimError("instruction %r is not simulated" % op)
        if size is None:
            regs = [x[2] for x in o if x[0] == "reg"]
            size = regs[-1] if regs else 8
        return self.integer(base, size, o)

    def integer(self, op, size, o):
        get, put, m = self.get, self.put, mask(size)
        top = 8 * size - 1
        if op in ("mov", "movabs"):
            put(o[1], get(o[0], size), size)
        elif op == "lea":
            put(o[1], self.address(o[0][1]), size)
        elif op == "xchg":
            a, b = get(o[0], size), get(o[1], size)
            put(o[0], b, size)
            put(o[1], a, size)
        elif op == "push":
            self.push(get(o[0], 8))
        elif op == "pop":
            put(o[0], self.pop(), 8)
        elif op in ("add", "adc", "sub", "sbb", "cmp"):
            a, b = get(o[-1], size), get(o[0], size)
            c = int(self.cf) if op in ("adc", "sbb") else 0
            if op in ("add", "adc"):
                r = a + b + c
                cf = r > m
                of = (a >> top) == (b >> top) != (r >> top & 1)
            else:
                r = a - b - c
                cf = r < 0
                of = (a >> top) != (b >> top) and \
                    (r >> top & 1) != (a >> top)
            if op != "cmp":
                put(o[-1], r, size)
            self.flags(r & m, size, cf, bool(of))
        elif op in ("and", "or", "xor", "test"):
            a, b = get(o[-1], size), get(o[0], size)
            r = {"and": a & b, "test": a & b, "or": a | b, "xor": a ^ b}[op]
            if op != "test":
                put(o[-1], r, size)
            self.flags(r, size)
        elif op in ("inc", "dec"):
            a = get(o[0], size)
            r = (a + (1 if op == "inc" else -1)) & m
            put(o[0], r, size)
            cf = self.cf
            self.flags(r, size, cf, r == (1 << top if op == "inc"
                                          else m >> 1))
        elif op == "neg":
            a = get(o[0], size)
            r = -a & m
            put(o[0], r, size)
            self.flags(r, size, a != 0, a == 1 << top)
        elif op == "not":
            put(o[0], ~get(o[0], size) & m, size)
        elif op == "imul":
            if len(o) == 1:
                raise SimError("one-operand imul is not simulated")
            a = sext(get(o[1] if len(o) == 3 else o[-1], size), size)
            b = sext(get(o[0], size), size)
            full = a * b
            put(o[-1], full, size)
            wide = sext(full & m, size) != full
            self.flags(full & m, size, wide, wide)
        elif op in SHIFT:
            if len(o) == 1:
                n = 1
            else:
                n = get(o[0], 1) & (63 if size == 8 else 31)
            a = get(o[-1], size)
            if n == 0:
                return None
            bits = 8 * size
            if op in ("sal", "shl"):
                r, cf = a << n, a >> (bits - n) & 1 if n <= bits else 0
            elif op == "shr":
                r, cf = a >> n, a >> (n - 1) & 1
            elif op == "sar":
                r, cf = sext(a, size) >> n, sext(a, size) >> (n - 1) & 1
            elif op == "rol":
                r = rol(a, n, bits)
                cf = r & 1
            else:
                r = ror(a, n, bits)
                cf = r >> (bits - 1) & 1
            put(o[-1], r, size)
            if op in ("rol", "ror"):
                self.cf = bool(cf)
            else:
                self.flags(r & m, size, bool(cf))
        return None

    def width(self, o):
        """The lanes of the instruction: its last vector register's."""
        for x in reversed(o):
            if x[0] == "vec":
                return x[2]
        raise SimError("no vector register")

    def vstep(self, op, o):
        vg, vs = self.vget, self.vset
        if op == "vzeroupper":
            for r in range(16):
                self.vec[r][2:] = [0] * 6
            return None
        if re.fullmatch(r"vmov(dq[au](8|16|32|64)?|[au]p[sd])", op):
            vs(o[1], vg(o[0], self.width(o)))
            return None
        if op in ("vmovq", "vmovd"):
            e = 8 if op == "vmovq" else 4
            if o[1][0] == "vec":
                vs(o[1], [self.get(o[0], e), 0])
            else:
                self.put(o[1], self.vec[o[0][1]][0] & mask(e), e)
            return None
        m = re.fullmatch(r"vpinsr([bwdq])", op)
        if m:               # $i, src, vsrc, vdst
            e = SUFFIX["bwlq"["bwdq".index(m.group(1))]]
            es = elems(vg(o[2], 2), e)
            es[o[0][1] % len(es)] = self.get(o[1], e)
            vs(o[3], words(es, e))
            return None
        m = re.fullmatch(r"vpextr([bwdq])", op)
        if m:               # $i, vsrc, dst
            e = SUFFIX["bwlq"["bwdq".index(m.group(1))]]
            es = elems(vg(o[1], 2), e)
            dst = o[2]
            self.put(dst, es[o[0][1] % len(es)],
                     dst[2] if dst[0] == "reg" else e)
            return None
        m = re.fullmatch(r"vpbroadcast([bwdq])", op)
        if m:
            e = SUFFIX["bwlq"["bwdq".index(m.group(1))]]
            n = self.width(o[1:])
            v = self.get(o[0], e)
            vs(o[1], words([v] * (8 * n // e), e))
            return None
        n = self.width(o)
        m = re.fullmatch(r"vp(add|sub|mull|xor|and|andn|or)([bwdq]?)", op)
        if m:               # src2, src1, dst: dst = src1 op src2
            e = SUFFIX["bwlq"["bwdq".index(m.group(2))]] if m.group(2) \
                else 8
            f = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b,
                 "mull": lambda a, b: a * b, "xor": lambda a, b: a ^ b,
                 "and": lambda a, b: a & b, "andn": lambda a, b: ~a & b,
                 "or": lambda a, b: a | b}[m.group(1)]
            a, b = elems(vg(o[1], n), e), elems(vg(o[0], n, e), e)
            vs(o[2], words([f(x, y) & mask(e) for x, y in zip(a, b)], e))
            return None
        m = re.fullmatch(r"vp(srl|sll|sra|rol|ror)([wdq])", op)
        if m and o[0][0] == "imm":      # $c, src, dst
            e = SUFFIX["bwlq"["bwdq".index(m.group(2))]]
            c, bits = o[0][1], 8 * e
            f = {"srl": lambda x: x >> c if c < bits else 0,
                 "sll": lambda x: x << c if c < bits else 0,
                 "sra": lambda x: sext(x, e) >> min(c, bits - 1),
                 "rol": lambda x: rol(x, c, bits),
                 "ror": lambda x: ror(x, c, bits)}[m.group(1)]
            vs(o[2], words([f(x) & mask(e) for x in
                            elems(vg(o[1], n), e)], e))
            return None
        m = re.fullmatch(r"vps([rl])lv([dq])", op)
        if m:               # counts, src, dst: past the width, 0
            e = SUFFIX["bwlq"["bwdq".index(m.group(2))]]
            f = (lambda x, c: x >> c) if m.group(1) == "r" else \
                (lambda x, c: x << c)
            vs(o[2], words([f(x, c) & mask(e) if c < 8 * e else 0
                            for x, c in zip(elems(vg(o[1], n), e),
                                            elems(vg(o[0], n, e), e))], e))
            return None
        m = re.fullmatch(r"vpro([lr])v([dq])", op)
        if m:               # counts, src, dst
            e = SUFFIX["bwlq"["bwdq".index(m.group(2))]]
            f = rol if m.group(1) == "l" else ror
            vs(o[2], words([f(x, c, 8 * e) for x, c in zip(
                elems(vg(o[1], n), e), elems(vg(o[0], n, e), e))], e))
            return None
        if op in ("vpternlogq", "vpternlogd"):
            # $imm, c, b, a(dst): result bit from imm[a << 2 | b << 1 | c]
            imm = o[0][1]
            a, b = vg(o[3], n), vg(o[2], n)
            c = vg(o[1], n, 8 if op[-1] == "q" else 4)
            out = []
            for x, y, z in zip(a, b, c):
                r = 0
                for k in range(8):
                    if imm >> k & 1:
                        r |= (x if k & 4 else ~x) & (y if k & 2 else ~y) \
                            & (z if k & 1 else ~z)
                out.append(r & M64)
            vs(o[3], out)
            return None
        m = re.fullmatch(r"vpunpck([lh])(bw|wd|dq|qdq)", op)
        if m:               # src2, src1, dst, within 128 bits
            e = {"bw": 1, "wd": 2, "dq": 4, "qdq": 8}[m.group(2)]
            a, b = vg(o[1], n), vg(o[0], n)
            out = []
            for j in range(0, n, 2):
                x, y = elems(a[j:j + 2], e), elems(b[j:j + 2], e)
                half = len(x) // 2
                x = x[half:] if m.group(1) == "h" else x[:half]
                y = y[half:] if m.group(1) == "h" else y[:half]
                out += words([v for p in zip(x, y) for v in p], e)
            vs(o[2], out)
            return None
        if op == "vpshufd":     # $imm, src, dst: dwords within 128 bits
            imm, a = o[0][1], vg(o[1], n)
            out = []
            for j in range(0, n, 2):
                d = elems(a[j:j + 2], 4)
                out += words([d[imm >> 2 * k & 3] for k in range(4)], 4)
            vs(o[2], out)
            return None
        if op == "vpshufb":     # control, src, dst: bytes within 128 bits
            a, c = vg(o[1], n), vg(o[0], n)
            out = []
            for j in range(0, n, 2):
                src, ctl = elems(a[j:j + 2], 1), elems(c[j:j + 2], 1)
                out += words([0 if k & 0x80 else src[k & 15]
                              for k in ctl], 1)
            vs(o[2], out)
            return None
        if op == "vshufpd":     # $imm, src2, src1, dst
            imm = o[0][1]
            a, b = vg(o[2], n), vg(o[1], n)
            out = []
            for j in range(0, n, 2):
                out += [a[j + (imm >> j & 1)], b[j + (imm >> (j + 1) & 1)]]
            vs(o[3], out)
            return None
        m = re.fullmatch(r"valign([dq])", op)
        if m:               # $imm, src2, src1, dst: (src1:src2) >> imm
            e = 8 if m.group(1) == "q" else 4
            k = n * 8 // e
            cat = elems(vg(o[1], n), e) + elems(vg(o[2], n), e)
            s = o[0][1] & (k - 1)
            vs(o[3], words(cat[s:s + k], e))
            return None
        if op == "vpalignr":    # $bytes, src2, src1, dst, within 128 bits
            imm = o[0][1]
            a, b = vg(o[2], n), vg(o[1], n)
            out = []
            for j in range(0, n, 2):
                cat = b[j] | b[j + 1] << 64 | a[j] << 128 | a[j + 1] << 192
                v = cat >> 8 * imm if imm < 32 else 0
                out += [v & M64, v >> 64 & M64]
            vs(o[3], out)
            return None
        if op == "vpermq" and o[0][0] != "imm":     # table, index, dst
            table, index = vg(o[0], n), vg(o[1], n)
            vs(o[2], [table[i & (n - 1)] for i in index])
            return None
        if op == "vpblendmq":   # src2, src1, dst{k}: k ? src2 : src1
            if self.wmask is None:
                raise SimError("vpblendmq without a mask")
            bits, a, b = self.k[self.wmask[0]], vg(o[1], n), vg(o[0], n)
            self.wmask = None
            vs(o[2], [y if bits >> i & 1 else x
                      for i, (x, y) in enumerate(zip(a, b))])
            return None
        if op == "vpblendd":    # $imm, src2, src1, dst: imm ? src2 : src1
            imm = o[0][1]
            a, b = elems(vg(o[2], n), 4), elems(vg(o[1], n), 4)
            vs(o[3], words([y if imm >> (i % 8) & 1 else x
                            for i, (x, y) in enumerate(zip(a, b))], 4))
            return None
        if op in ("vpsrldq", "vpslldq"):    # $bytes, src, dst, per 128
            c, a = o[0][1], vg(o[1], n)
            out = []
            for j in range(0, n, 2):
                v = a[j] | a[j + 1] << 64
                v = (v >> 8 * c if op == "vpsrldq" else v << 8 * c) \
                    if c < 16 else 0
                out += [v & M64, v >> 64 & M64]
            vs(o[2], out)
            return None
        if op == "vpermq" and o[0][0] == "imm":     # $imm, src, dst
            imm, a = o[0][1], vg(o[1], n)
            out = []
            for j in range(0, n, 4):
                out += [a[j + (imm >> 2 * k & 3)] for k in range(4)]
            vs(o[2], out)
            return None
        if op in ("vextracti128", "vextracti64x2", "vextracti32x4"):
            i = o[0][1] & (self.width(o[1:2]) // 2 - 1)
            vs(o[2], vg(o[1], 8)[2 * i:2 * i + 2])
            return None
        m = re.fullmatch(r"vcvt(u?)qq2pd", op)
        if m:
            vs(o[1], [d2b(float(x if m.group(1) else sext(x, 8)))
                      for x in vg(o[0], n)])
            return None
        m = re.fullmatch(r"vcvttpd2(u?)qq", op)
        if m:
            vs(o[1], [cvt_u64(b2d(x), not m.group(1))
                      for x in vg(o[0], n)])
            return None
        m = re.fullmatch(r"v(add|sub|mul|div)(sd|pd)", op)
        if m:               # src2, src1, dst
            f = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b,
                 "mul": lambda a, b: a * b, "div": fdiv}[m.group(1)]
            a, b = vg(o[1], n), vg(o[0], n if m.group(2) == "pd" else 1)
            k = 1 if m.group(2) == "sd" else n
            out = [d2b(f(b2d(x), b2d(y))) for x, y in zip(a[:k], b[:k])]
            vs(o[2], out + a[k:])
            return None
        raise SimError("instruction %r is not simulated" % op)
