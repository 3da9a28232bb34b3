"""An independent reader of the hwprof trace format (docs/trace-format.md),
written from the document, not from hwx_trace.c: the tests decode what the
plugin recorded with it, so the format and its C implementation are checked
against each other."""
import struct

CLS = ["other", "load", "store", "br_cond", "jump", "call", "ret", "indirect"]
EV_TAKEN = 1


class TraceError(Exception):
    def __init__(self, offset, why):
        super().__init__(f"offset {offset}: {why}")
        self.offset = offset


def _varint(b, off, lim):
    x = shift = 0
    start = off
    while True:
        if off >= lim:
            raise TraceError(off, "varint runs past its limit")
        c = b[off]
        off += 1
        x |= (c & 0x7F) << shift
        if not c & 0x80:
            break
        shift += 7
        if shift > 63:
            raise TraceError(start, "varint too long")
    if x >> 64:
        raise TraceError(start, "varint overflows 64 bits")
    return x, off


def _unzigzag(z):
    return (z >> 1) ^ -(z & 1)


def _fnv1a(data):
    h = 2166136261
    for c in data:
        h = ((h ^ c) * 16777619) & 0xFFFFFFFF
    return h


M64 = (1 << 64) - 1


def records(b):
    """Yield (vcpu, pc, next_pc, addr, value, cls, events) for every record;
    retire items (version 2) are checked and passed over."""
    if len(b) < 16 or b[:8] != b"HWPTRACE":
        raise TraceError(0, "bad header")
    version, flags = struct.unpack_from("<II", b, 8)
    if version not in (1, 2) or flags != 0:
        raise TraceError(8, "unsupported version or flags")
    off, total, ended = 16, 0, False
    while off < len(b):
        tag = b[off]
        if tag == ord("E"):
            n, off = _varint(b, off + 1, len(b))
            if n != total or off != len(b):
                raise TraceError(off, "bad end marker")
            ended = True
            break
        if tag == ord("R") and version >= 2:
            vcpu, off = _varint(b, off + 1, len(b))
            lo, off = _varint(b, off, len(b))
            span, off = _varint(b, off, len(b))
            if lo + span > M64:
                raise TraceError(off, "retire range past 2^64")
            continue
        if tag != ord("C"):
            raise TraceError(off, "unknown tag")
        vcpu, off = _varint(b, off + 1, len(b))
        nrec, off = _varint(b, off, len(b))
        nbytes, off = _varint(b, off, len(b))
        (csum,) = struct.unpack_from("<I", b, off)
        off += 4
        payload = b[off:off + nbytes]
        if len(payload) != nbytes or _fnv1a(payload) != csum:
            raise TraceError(off, "bad payload")
        lim = off + nbytes
        prev_next = prev_addr = 0
        for _ in range(nrec):
            f = b[off]
            off += 1
            if f & 0x80:
                raise TraceError(off - 1, "reserved flag")
            pc = prev_next
            if f & 8:
                z, off = _varint(b, off, lim)
                pc = (prev_next + _unzigzag(z)) & M64
            z, off = _varint(b, off, lim)
            nxt = (pc + _unzigzag(z)) & M64
            addr = value = events = 0
            if f & 16:
                z, off = _varint(b, off, lim)
                addr = prev_addr = (prev_addr + _unzigzag(z)) & M64
            if f & 32:
                value, off = _varint(b, off, lim)
            if f & 64:
                events, off = _varint(b, off, lim)
            prev_next = nxt
            total += 1
            yield vcpu, pc, nxt, addr, value, f & 7, events
        if off != lim:
            raise TraceError(off, "payload longer than its records")
    if not ended:
        raise TraceError(off, "no end marker")


def print_qemu(qemu, plugin):
    """Every QEMU test says which QEMU binary (and version) and which plugin
    build it ran."""
    import subprocess
    ver = subprocess.run([qemu, "--version"], capture_output=True, text=True).stdout
    print(f"QEMU: {qemu}: {(ver.splitlines() or ['?'])[0]}")
    print(f"plugin: {plugin}")


def qemu_major(qemu):
    """QEMU's major version from `--version` (0 if it cannot be read)."""
    import re
    import subprocess
    out = subprocess.run([qemu, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"version (\d+)\.", out)
    return int(m.group(1)) if m else 0
