/* examples/common/hwx_trace.c: the hwprof trace format, version 2.
 * docs/trace-format.md is the specification; this is its reference
 * implementation. Freestanding: the writer emits through a hwp_writer, the
 * reader works on a buffer the host mapped. */
#include "hwx.h"

static const uint8_t hwx__trace_magic[8] = {'H', 'W', 'P', 'T',
                                            'R', 'A', 'C', 'E'};

enum {
    HWX__TAG_CHUNK = 'C',
    HWX__TAG_END = 'E',
    HWX__TAG_RETIRE = 'R', /* version 2 */
    HWX__R_CLS = 7u,      /* bits 0..2: hwp_cls                  */
    HWX__R_PC = 1u << 3,  /* pc differs from previous next_pc    */
    HWX__R_ADDR = 1u << 4,
    HWX__R_VALUE = 1u << 5,
    HWX__R_EVENTS = 1u << 6,
    HWX__R_RESERVED = 1u << 7,
    HWX__MAX_RECORD = 1 + 5 * 10 /* flags + five 10-byte varints */
};

HWP_STATIC_ASSERT(trace_header_fits, HWX_TRACE_HDR >= 1 + 3 * 10 + 4);
HWP_STATIC_ASSERT(trace_record_fits, HWX_TRACE_SLACK >= HWX__MAX_RECORD);

HWP_STATIC_ASSERT(trace_classes_fit, HWP_CLS_COUNT <= 8);

/* ---- writer -------------------------------------------------------------- */

static size_t hwx__put_varint(uint8_t *p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* FNV-1a over a chunk payload: catches flipped bits that would still
 * decode (a damaged value byte). */
static uint32_t hwx__fnv1a(const uint8_t *p, size_t n) {
    uint32_t h = 2166136261u;
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

static uint64_t hwx__zigzag(uint64_t d) {
    return (d << 1) ^ (uint64_t)(0 - (d >> 63));
}

static uint64_t hwx__unzigzag(uint64_t z) {
    return (z >> 1) ^ (uint64_t)(0 - (z & 1));
}

static void hwx__put_le32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

void hwx_trace_write_header(const hwp_writer *out) {
    uint8_t h[16];
    hwp_copy(h, hwx__trace_magic, 8);
    hwx__put_le32(h + 8, HWX_TRACE_VERSION);
    hwx__put_le32(h + 12, 0); /* flags: none defined in version 1 */
    hwp_put(out, (const char *)h, sizeof h);
}

void hwx_trace_writer_init(hwx_trace_writer *t, const hwp_writer *out,
                           uint32_t vcpu) {
    t->out = *out;
    t->vcpu = vcpu;
    t->len = 0;
    t->nrec = 0;
    t->total = 0;
    t->prev_next = 0;
    t->prev_addr = 0;
}

/* The chunk header is built right-aligned in the slack before the payload
 * so header and payload leave in ONE hwp_put: a host whose writer locks
 * per call (several vCPUs, one file) never interleaves them. */
void hwx_trace_flush(hwx_trace_writer *t) {
    uint8_t h[HWX_TRACE_HDR];
    size_t n = 0;
    if (!t->nrec) return;
    h[n++] = HWX__TAG_CHUNK;
    n += hwx__put_varint(h + n, t->vcpu);
    n += hwx__put_varint(h + n, t->nrec);
    n += hwx__put_varint(h + n, t->len);
    hwx__put_le32(h + n, hwx__fnv1a(t->buf + HWX_TRACE_HDR, t->len));
    n += 4;
    hwp_copy(t->buf + HWX_TRACE_HDR - n, h, n);
    hwp_put(&t->out, (const char *)t->buf + HWX_TRACE_HDR - n, n + t->len);
    t->len = 0;
    t->nrec = 0;
    t->prev_next = 0; /* every chunk decodes on its own */
    t->prev_addr = 0;
}

void hwx_trace_put(hwx_trace_writer *t, const hwp_insn *in) {
    uint8_t *p = t->buf + HWX_TRACE_HDR + t->len;
    size_t n = 1;
    uint8_t f = (uint8_t)(in->cls & HWX__R_CLS);
    if (in->pc != t->prev_next || t->nrec == 0) {
        f |= HWX__R_PC;
        n += hwx__put_varint(p + n, hwx__zigzag(in->pc - t->prev_next));
    }
    n += hwx__put_varint(p + n, hwx__zigzag(in->next_pc - in->pc));
    if (in->addr) {
        f |= HWX__R_ADDR;
        n += hwx__put_varint(p + n, hwx__zigzag(in->addr - t->prev_addr));
        t->prev_addr = in->addr;
    }
    if (in->value) {
        f |= HWX__R_VALUE;
        n += hwx__put_varint(p + n, in->value);
    }
    if (in->events) {
        f |= HWX__R_EVENTS;
        n += hwx__put_varint(p + n, in->events);
    }
    p[0] = f;
    t->prev_next = in->next_pc;
    t->len += (uint32_t)n;
    t->nrec++;
    t->total++;
    if (t->len >= HWX_TRACE_CHUNK) hwx_trace_flush(t);
}

void hwx_trace_put_retire(hwx_trace_writer *t, uint64_t lo, uint64_t hi) {
    uint8_t e[1 + 3 * 10];
    size_t n = 0;
    if (lo > hi) return;
    hwx_trace_flush(t); /* the records before the unmap come first */
    e[n++] = HWX__TAG_RETIRE;
    n += hwx__put_varint(e + n, t->vcpu);
    n += hwx__put_varint(e + n, lo);
    n += hwx__put_varint(e + n, hi - lo);
    hwp_put(&t->out, (const char *)e, n);
}

void hwx_trace_write_end(const hwp_writer *out, uint64_t total_records) {
    uint8_t e[11];
    size_t n = 0;
    e[n++] = HWX__TAG_END;
    n += hwx__put_varint(e + n, total_records);
    hwp_put(out, (const char *)e, n);
}

/* ---- reader -------------------------------------------------------------- */

static int hwx__trace_err(hwx_trace_reader *r, size_t off, const char *why) {
    r->err_off = off;
    r->why = why;
    return -1;
}

/* LEB128 from [r->off, lim); 0 on success. Rejects a varint that runs
 * past lim or past 10 bytes or overflows 64 bits. */
static int hwx__get_varint(hwx_trace_reader *r, size_t lim, uint64_t *v,
                           const char *what) {
    uint64_t x = 0;
    unsigned shift = 0;
    size_t start = r->off;
    for (;;) {
        uint8_t c;
        if (r->off >= lim)
            return hwx__trace_err(r, r->off, what);
        c = r->buf[r->off++];
        if (shift == 63 && (c & 0x7E))
            return hwx__trace_err(r, r->off - 1, "trace: varint overflows 64 bits");
        x |= (uint64_t)(c & 0x7F) << shift;
        if (!(c & 0x80)) break;
        shift += 7;
        if (shift > 63)
            return hwx__trace_err(r, start, "trace: varint longer than 10 bytes");
    }
    *v = x;
    return 0;
}

hwp_status hwx_trace_open(hwx_trace_reader *r, const void *buf, size_t len) {
    const uint8_t *b = (const uint8_t *)buf;
    uint32_t ver, flags;
    hwp_zero(r, sizeof *r);
    r->buf = b;
    r->len = len;
    r->why = "";
    if (!b || len < 16) {
        r->err_off = len;
        r->why = "trace: shorter than the 16-byte header";
        return HWP_EFORMAT;
    }
    for (ver = 0; ver < 8; ver++)
        if (b[ver] != hwx__trace_magic[ver]) {
            r->err_off = ver;
            r->why = "trace: bad magic (not an hwprof trace)";
            return HWP_EFORMAT;
        }
    ver = (uint32_t)b[8] | (uint32_t)b[9] << 8 | (uint32_t)b[10] << 16 |
          (uint32_t)b[11] << 24;
    flags = (uint32_t)b[12] | (uint32_t)b[13] << 8 | (uint32_t)b[14] << 16 |
            (uint32_t)b[15] << 24;
    if (ver < 1 || ver > HWX_TRACE_VERSION) {
        r->err_off = 8;
        r->why = "trace: unsupported version";
        return HWP_EFORMAT;
    }
    if (flags) {
        r->err_off = 12;
        r->why = "trace: unknown header flags";
        return HWP_EFORMAT;
    }
    r->version = ver;
    r->off = 16;
    r->chunk_end = 16;
    return HWP_OK;
}

/* Read the next chunk header, retire item or end marker. 1: a chunk is
 * open; HWX_TRACE_RETIRE: a retire item was read; 0: clean end; -1:
 * error. */
static int hwx__trace_chunk(hwx_trace_reader *r) {
    uint64_t vcpu, nrec, nbytes;
    uint32_t sum;
    const char *cut;
    size_t tag_off = r->off;
    uint8_t tag;
    if (r->off >= r->len) {
        if (!r->ended)
            return hwx__trace_err(r, r->off, "trace: truncated (no end marker)");
        return 0;
    }
    if (r->ended)
        return hwx__trace_err(r, r->off, "trace: data after the end marker");
    tag = r->buf[r->off++];
    if (tag == HWX__TAG_END) {
        uint64_t total;
        if (hwx__get_varint(r, r->len, &total, "trace: truncated end marker"))
            return -1;
        if (total != r->records)
            return hwx__trace_err(r, tag_off,
                                  "trace: end marker record count disagrees");
        r->ended = 1;
        if (r->off != r->len)
            return hwx__trace_err(r, r->off, "trace: data after the end marker");
        return 0;
    }
    if (tag != HWX__TAG_CHUNK && !(tag == HWX__TAG_RETIRE && r->version >= 2))
        return hwx__trace_err(r, tag_off, "trace: unknown item tag");
    /* Both items start with three varints: the vcpu, then a chunk's nrec
     * and nbytes or a retire item's lo and span. */
    cut = tag == HWX__TAG_CHUNK ? "trace: truncated chunk header" : "trace: truncated retire item";
    if (hwx__get_varint(r, r->len, &vcpu, cut) || hwx__get_varint(r, r->len, &nrec, cut) ||
        hwx__get_varint(r, r->len, &nbytes, cut))
        return -1;
    if (vcpu > 0xFFFFFFFFu)
        return hwx__trace_err(r, tag_off, "trace: vcpu id out of range");
    r->vcpu = (uint32_t)vcpu;
    if (tag == HWX__TAG_RETIRE) {
        if (nrec + nbytes < nrec)
            return hwx__trace_err(r, tag_off, "trace: retire range runs past 2^64");
        r->lo = nrec;
        r->hi = nrec + nbytes;
        r->retires++;
        r->chunk_end = r->off; /* no payload: the next item follows */
        return HWX_TRACE_RETIRE;
    }
    if (nbytes > HWX_TRACE_CHUNK + HWX__MAX_RECORD)
        return hwx__trace_err(r, tag_off, "trace: chunk larger than the format allows");
    if (nrec == 0 || nrec * 2 > nbytes)
        return hwx__trace_err(r, tag_off, "trace: chunk record count impossible for its size");
    if (r->len - r->off < 4)
        return hwx__trace_err(r, r->len, "trace: truncated chunk header");
    sum = (uint32_t)r->buf[r->off] | (uint32_t)r->buf[r->off + 1] << 8 |
          (uint32_t)r->buf[r->off + 2] << 16 | (uint32_t)r->buf[r->off + 3] << 24;
    r->off += 4;
    if (nbytes > r->len - r->off)
        return hwx__trace_err(r, r->len, "trace: truncated chunk payload");
#ifndef HWX_TRACE_FUZZING /* the fuzz target skips it to reach the decoder */
    if (hwx__fnv1a(r->buf + r->off, (size_t)nbytes) != sum)
        return hwx__trace_err(r, tag_off, "trace: chunk checksum mismatch");
#else
    (void)sum;
#endif
    r->chunk_left = nrec;
    r->chunk_end = r->off + (size_t)nbytes;
    r->prev_next = 0;
    r->prev_addr = 0;
    return 1;
}

int hwx_trace_next(hwx_trace_reader *r, hwp_insn *out) {
    uint64_t v;
    uint8_t f;
    size_t rec_off, lim;
    if (r->why && r->why[0]) return -1; /* sticky error */
    while (!r->chunk_left) {
        int c;
        if (r->off != r->chunk_end)
            return hwx__trace_err(r, r->off, "trace: chunk payload longer than its records");
        c = hwx__trace_chunk(r);
        if (c == HWX_TRACE_RETIRE) {
            if (r->want_retire) return HWX_TRACE_RETIRE;
            continue;
        }
        if (c <= 0) return c;
    }
    lim = r->chunk_end;
    rec_off = r->off;
    if (r->off >= lim)
        return hwx__trace_err(r, r->off, "trace: chunk payload shorter than its records");
    f = r->buf[r->off++];
    if (f & HWX__R_RESERVED)
        return hwx__trace_err(r, rec_off, "trace: reserved record flag set");
    hwp_zero(out, sizeof *out);
    out->cls = f & HWX__R_CLS;
    out->pc = r->prev_next;
    if (f & HWX__R_PC) {
        if (hwx__get_varint(r, lim, &v, "trace: record runs past its chunk")) return -1;
        out->pc = r->prev_next + hwx__unzigzag(v);
    }
    if (hwx__get_varint(r, lim, &v, "trace: record runs past its chunk")) return -1;
    out->next_pc = out->pc + hwx__unzigzag(v);
    if (f & HWX__R_ADDR) {
        if (hwx__get_varint(r, lim, &v, "trace: record runs past its chunk")) return -1;
        out->addr = r->prev_addr + hwx__unzigzag(v);
        r->prev_addr = out->addr;
    }
    if (f & HWX__R_VALUE) {
        if (hwx__get_varint(r, lim, &v, "trace: record runs past its chunk")) return -1;
        out->value = v;
    }
    if (f & HWX__R_EVENTS) {
        if (hwx__get_varint(r, lim, &v, "trace: record runs past its chunk")) return -1;
        if (v > 0xFFFFFFFFu)
            return hwx__trace_err(r, rec_off, "trace: event bits out of range");
        out->events = (uint32_t)v;
    }
    r->prev_next = out->next_pc;
    r->chunk_left--;
    r->records++;
    if (!r->chunk_left && r->off != r->chunk_end)
        return hwx__trace_err(r, r->off, "trace: chunk payload longer than its records");
    return 1;
}
