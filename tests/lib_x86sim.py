"""An x86-64 interpreter for the generated kernels' assembly, so that
their instructions are checked where the CPU lacks them (a Genoa VM that
hides AVX-512, CI machines): tests/test_44_simulated.py runs the
AVX-512 kernels' functions here against Python's hashlib.

It reads a kernel.S (through the C preprocessor, as the build does),
lays out its read-only data, and executes its instructions one by one:
general registers, ZF (all the generated code branches on) and 32
vector registers of 512 bits, with VEX and EVEX semantics (a write to
an xmm or ymm register zeroes the rest of it).  Only the instructions the
generators emit are known; any other stops with an error naming it, so
a generator that starts emitting a new one fails loudly here rather than
being checked against a guess.  Not a model of timing, of encodings (the
assembler's job, which the native build checks), or of flags beyond ZF.
"""
import re
import subprocess

M64 = (1 << 64) - 1
GPR = ("rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp",
       "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15")
LANES = {"x": 2, "y": 4, "z": 8}    # 64-bit lanes of xmm, ymm, zmm

DATA = 0x10000          # read-only data, then the caller's buffers
STACK_TOP = 0x200000    # the stack grows down from here
MEMSIZE = 0x210000
RETURN = -1             # the caller's return address: ret to it ends


class SimError(Exception):
    pass


def rol(x, n):
    n &= 63
    return ((x << n) | (x >> (64 - n))) & M64 if n else x


def ror(x, n):
    return rol(x, 64 - (n & 63))


class Mem:
    """A memory operand: base + index * scale + disp (rip: a label);
    bcast: EVEX {1toN}, one qword read for every lane."""
    def __init__(self, disp, base, index, scale, bcast=False):
        self.disp, self.base, self.index, self.scale = \
            disp, base, index, scale
        self.bcast = bcast


def parse_operand(text):
    """('imm', v) | ('gpr', name) | ('vec', n, lanes) | ('mem', Mem)."""
    if text.startswith("$"):
        return ("imm", int(text[1:], 0))
    if text.startswith("%"):
        r = text[1:]
        if r in GPR or r == "rip":
            return ("gpr", r)
        m = re.fullmatch(r"([xyz])mm(\d+)", r)
        if m and int(m.group(2)) < 32:
            return ("vec", int(m.group(2)), LANES[m.group(1)])
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
    return ("mem", Mem(int(disp or "0", 0), base, index,
                       int(scale or 1), bool(bcast)))


class Program:
    """A preprocessed kernel.S: code, labels, data."""

    def __init__(self, path, cc="cc"):
        text = subprocess.run(
            [cc, "-E", "-P", "-x", "assembler-with-cpp", str(path)],
            check=True, capture_output=True, text=True).stdout
        self.code = []          # (mnemonic, operands, their text, line)
        self.labels = {}        # name -> ("code", index) or ("data", addr)
        self.local = {}         # numeric label -> [code indices]
        self.data = bytearray()
        section = "text"
        for line in text.splitlines():
            line = line.split("#")[0].strip()
            while True:
                m = re.match(r"([A-Za-z_.$][\w.$]*|\d+):\s*", line)
                if not m:
                    break
                name = m.group(1)
                if section == "text":
                    if name.isdigit():
                        self.local.setdefault(name, []).append(
                            len(self.code))
                    else:
                        self.labels[name] = ("code", len(self.code))
                else:
                    self.labels[name] = ("data", DATA + len(self.data))
                line = line[m.end():]
            if not line:
                continue
            op, _, rest = line.partition(" ")
            args = split_operands(rest.strip())
            if op == ".text":
                section = "text"
            elif op == ".section":
                section = "text" if args[0] == ".text" else args[0]
            elif op in (".balign", ".p2align"):
                n = int(args[0], 0)
                n = 1 << n if op == ".p2align" else n
                if section != "text":
                    while len(self.data) % n:
                        self.data.append(0)
            elif op == ".quad":
                for a in args:
                    self.data += (int(a, 0) & M64).to_bytes(8, "little")
            elif op in (".long", ".byte", ".short", ".word"):
                size = {".long": 4, ".byte": 1, ".short": 2, ".word": 2}[op]
                for a in args:
                    self.data += (int(a, 0) & ((1 << 8 * size) - 1)) \
                        .to_bytes(size, "little")
            elif op.startswith("."):
                continue        # .globl, .hidden, .type, .size, ...
            elif section == "text":
                # A branch's operand is a label, kept as text.
                ops = [] if op.startswith("j") else \
                    [parse_operand(a) for a in args]
                self.code.append((op, ops, args, line))
            else:
                raise SimError("instruction %r outside .text" % line)

    def function(self, name):
        kind, where = self.labels.get(name, (None, None))
        if kind != "code":
            raise SimError("no function %r" % name)
        return where


def split_operands(s):
    """Operands split at commas outside parentheses."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


class Machine:
    """Registers and memory; call() runs one function of a Program."""

    def __init__(self, prog):
        self.prog = prog
        self.mem = bytearray(MEMSIZE)
        self.mem[DATA:DATA + len(prog.data)] = prog.data
        self.heap = (DATA + len(prog.data) + 63) & ~63
        self.gpr = dict.fromkeys(GPR, 0)
        self.vec = [[0] * 8 for _ in range(32)]
        self.zf = 0

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
        self.mem[addr:addr + n] = (v & ((1 << 8 * n) - 1)).to_bytes(
            n, "little")

    def address(self, m, pc):
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
    def get64(self, o, pc):
        if o[0] == "imm":
            return o[1] & M64
        if o[0] == "gpr":
            return self.gpr[o[1]]
        if o[0] == "mem":
            return self.read(self.address(o[1], pc), 8)
        if o[0] == "vec":
            return self.vec[o[1]][0]
        raise SimError("bad operand")

    def set64(self, o, v, pc):
        if o[0] == "gpr":
            self.gpr[o[1]] = v & M64
        elif o[0] == "mem":
            self.write(self.address(o[1], pc), 8, v)
        else:
            raise SimError("cannot write %r" % (o,))

    def vget(self, o, lanes, pc):
        """lanes 64-bit words of a vector register or memory."""
        if o[0] == "vec":
            return list(self.vec[o[1]][:lanes])
        if o[0] == "mem":
            a = self.address(o[1], pc)
            if o[1].bcast:
                return [self.read(a, 8)] * lanes
            return [self.read(a + 8 * i, 8) for i in range(lanes)]
        raise SimError("not a vector operand: %r" % (o,))

    def vset(self, o, words, pc):
        """Write a register (zeroing above its width) or memory."""
        if o[0] == "vec":
            self.vec[o[1]] = [w & M64 for w in words] + \
                [0] * (8 - len(words))
        elif o[0] == "mem":
            a = self.address(o[1], pc)
            for i, w in enumerate(words):
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
        self.push(RETURN & M64)
        pc = self.prog.function(name)
        n = 0
        while True:
            if pc >= len(self.prog.code):
                raise SimError("ran off the end of the code")
            op, ops, args, line = self.prog.code[pc]
            n += 1
            if n > limit:
                raise SimError("no return after %d instructions" % limit)
            try:
                nxt = self.step(op, ops, args, pc)
            except SimError as e:
                raise SimError("%s: %s" % (line, e)) from None
            if nxt == "ret":
                if self.pop() != RETURN & M64:
                    raise SimError("ret to an address nobody pushed")
                return n
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
        kind, where = self.prog.labels.get(text, (None, None))
        if kind != "code":
            raise SimError("no code label %r" % text)
        return where

    def step(self, op, o, text, pc):
        g64, s64 = self.get64, self.set64
        # Branches and the stack.
        if op in ("jne", "jnz"):
            return self.target(text[0], pc) if not self.zf else None
        if op in ("je", "jz"):
            return self.target(text[0], pc) if self.zf else None
        if op == "jmp":
            return self.target(text[0], pc)
        if op == "ret":
            return "ret"
        if op == "push":
            self.push(g64(o[0], pc))
            return None
        if op == "pop":
            s64(o[0], self.pop(), pc)
            return None
        if op == "vzeroupper":
            for r in range(16):
                self.vec[r][2:] = [0] * 6
            return None
        # General registers, 64-bit operands (AT&T: source first).
        alu = {"add": lambda d, s: d + s, "sub": lambda d, s: d - s,
               "xor": lambda d, s: d ^ s, "and": lambda d, s: d & s,
               "or": lambda d, s: d | s}
        base = op[:-1] if op.endswith("q") and op[:-1] in alu else op
        if base in alu and len(o) == 2:
            v = alu[base](g64(o[1], pc), g64(o[0], pc)) & M64
            s64(o[1], v, pc)
            self.zf = int(v == 0)
            return None
        if op in ("cmp", "cmpq"):
            self.zf = int((g64(o[1], pc) - g64(o[0], pc)) & M64 == 0)
            return None
        if op in ("test", "testq"):
            self.zf = int(g64(o[1], pc) & g64(o[0], pc) == 0)
            return None
        if op in ("dec", "decq", "inc", "incq"):
            v = (g64(o[0], pc) + (1 if op.startswith("inc") else -1)) & M64
            s64(o[0], v, pc)
            self.zf = int(v == 0)
            return None
        if op in ("mov", "movq") and o[0][0] != "vec" and o[1][0] != "vec":
            s64(o[1], g64(o[0], pc), pc)
            return None
        if op in ("lea", "leaq"):
            s64(o[1], self.address(o[0][1], pc), pc)
            return None
        if op == "rorx":
            s64(o[2], ror(g64(o[1], pc), o[0][1]), pc)
            return None
        if op == "andn":    # andn src2, src1, dst: ~src1 & src2
            s64(o[2], ~g64(o[1], pc) & g64(o[0], pc) & M64, pc)
            return None
        return self.vstep(op, o, pc)

    def width(self, o):
        """The lanes of the instruction: its last vector register's."""
        for x in reversed(o):
            if x[0] == "vec":
                return x[2]
        raise SimError("no vector register")

    def vstep(self, op, o, pc):
        vg, vs = self.vget, self.vset
        moves = ("vmovdqa64", "vmovdqu64", "vmovdqa", "vmovdqu",
                 "vmovdqa32", "vmovdqu32", "vmovaps", "vmovups")
        if op in moves:
            n = self.width(o)
            vs(o[1], vg(o[0], n, pc), pc)
            return None
        if op == "vmovq":
            if o[1][0] == "vec":
                vs(o[1], [self.get64(o[0], pc), 0], pc)
            else:
                self.set64(o[1], self.vec[o[0][1]][0], pc)
            return None
        if op == "vpinsrq":     # $i, src64, vsrc, vdst
            w = vg(o[2], 2, pc)
            w[o[0][1] & 1] = self.get64(o[1], pc)
            vs(o[3], w, pc)
            return None
        if op == "vpextrq":     # $i, vsrc, dst64
            self.set64(o[2], self.vec[o[1][1]][o[0][1] & 1], pc)
            return None
        if op == "vpbroadcastq":
            n = self.width(o[1:])
            v = self.get64(o[0], pc) if o[0][0] != "vec" else \
                self.vec[o[0][1]][0]
            vs(o[1], [v] * n, pc)
            return None
        n = self.width(o)
        lanewise = {"vpxorq": lambda a, b: a ^ b, "vpxor": lambda a, b: a ^ b,
                    "vpandq": lambda a, b: a & b, "vpand": lambda a, b: a & b,
                    "vporq": lambda a, b: a | b, "vpor": lambda a, b: a | b,
                    "vpandnq": lambda a, b: ~a & b,
                    "vpaddq": lambda a, b: a + b,
                    "vpsubq": lambda a, b: a - b}
        if op in lanewise:      # src2, src1, dst: dst = src1 op src2
            f = lanewise[op]
            a, b = vg(o[1], n, pc), vg(o[0], n, pc)
            vs(o[2], [f(x, y) for x, y in zip(a, b)], pc)
            return None
        shifts = {"vpsrlq": lambda x, c: x >> c if c < 64 else 0,
                  "vpsllq": lambda x, c: x << c if c < 64 else 0,
                  "vprolq": rol, "vprorq": ror}
        if op in shifts and o[0][0] == "imm":   # $c, src, dst
            f, c = shifts[op], o[0][1]
            vs(o[2], [f(x, c) for x in vg(o[1], n, pc)], pc)
            return None
        if op in ("vprolvq", "vprorvq"):        # counts, src, dst
            f = rol if op == "vprolvq" else ror
            vs(o[2], [f(x, c) for x, c in zip(vg(o[1], n, pc),
                                              vg(o[0], n, pc))], pc)
            return None
        if op == "vpternlogq":  # $imm, c, b, a(dst): bit a<<2 | b<<1 | c
            imm = o[0][1]
            a, b, c = vg(o[3], n, pc), vg(o[2], n, pc), vg(o[1], n, pc)
            out = []
            for x, y, z in zip(a, b, c):
                r = 0
                for k in range(8):
                    if imm >> k & 1:
                        r |= (x if k & 4 else ~x) & (y if k & 2 else ~y) \
                            & (z if k & 1 else ~z)
                out.append(r & M64)
            vs(o[3], out, pc)
            return None
        if op in ("vpunpcklqdq", "vpunpckhqdq"):    # src2, src1, dst
            h = op == "vpunpckhqdq"
            a, b = vg(o[1], n, pc), vg(o[0], n, pc)
            out = []
            for j in range(0, n, 2):
                out += [a[j + h], b[j + h]]
            vs(o[2], out, pc)
            return None
        if op == "vpshufd":     # $imm, src, dst: dwords within 128 bits
            imm, a = o[0][1], vg(o[1], n, pc)
            out = []
            for j in range(0, n, 2):
                d = [a[j] & 0xffffffff, a[j] >> 32,
                     a[j + 1] & 0xffffffff, a[j + 1] >> 32]
                s = [d[imm >> 2 * k & 3] for k in range(4)]
                out += [s[0] | s[1] << 32, s[2] | s[3] << 32]
            vs(o[2], out, pc)
            return None
        if op == "vshufpd":     # $imm, src2, src1, dst
            imm = o[0][1]
            a, b = vg(o[2], n, pc), vg(o[1], n, pc)
            out = []
            for j in range(0, n, 2):
                out += [a[j + (imm >> j & 1)], b[j + (imm >> (j + 1) & 1)]]
            vs(o[3], out, pc)
            return None
        if op == "valignq":     # $imm, src2, src1, dst: (src1:src2) >> imm
            imm = o[0][1] & (n - 1)
            cat = vg(o[1], n, pc) + vg(o[2], n, pc)
            vs(o[3], cat[imm:imm + n], pc)
            return None
        if op == "vpalignr":    # $bytes, src2, src1, dst, per 128 bits
            imm = o[0][1]
            a, b = vg(o[2], n, pc), vg(o[1], n, pc)
            out = []
            for j in range(0, n, 2):
                cat = b[j] | b[j + 1] << 64 | a[j] << 128 | a[j + 1] << 192
                v = cat >> 8 * imm if imm < 32 else 0
                out += [v & M64, v >> 64 & M64]
            vs(o[3], out, pc)
            return None
        if op == "vpshufb":     # control, src, dst: bytes within 128 bits
            a, c = vg(o[1], n, pc), vg(o[0], n, pc)
            out = []
            for j in range(0, n, 2):
                src = (a[j] | a[j + 1] << 64).to_bytes(16, "little")
                ctl = (c[j] | c[j + 1] << 64).to_bytes(16, "little")
                v = int.from_bytes(bytes(0 if k & 0x80 else src[k & 15]
                                         for k in ctl), "little")
                out += [v & M64, v >> 64]
            vs(o[2], out, pc)
            return None
        if op in ("vextracti128", "vextracti64x2"):  # $i, ymm, xmm/mem
            i = o[0][1] & (self.width(o[1:2]) // 2 - 1)
            vs(o[2], vg(o[1], 8, pc)[2 * i:2 * i + 2], pc)
            return None
        raise SimError("instruction %r is not simulated" % op)
