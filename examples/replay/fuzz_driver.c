/* examples/replay/fuzz_driver.c: a deterministic driver for the trace
 * reader's fuzz entry (fuzz_trace.c), so every CI run exercises it without
 * libFuzzer: a valid two-chunk trace, then truncations and 1500
 * seeded mutations (bit flips, byte overwrites, insertions, deletions),
 * each once as is and once with the chunk checksums recomputed so the
 * damage reaches the record decoder. The entry traps on any contract
 * violation; ASan and valgrind watch the reads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t fnv1a(const uint8_t *p, size_t n) {
    uint32_t h = 2166136261u;
    while (n--) h = (h ^ *p++) * 16777619u;
    return h;
}

static int varint(const uint8_t *b, size_t len, size_t *off, uint64_t *v) {
    unsigned shift = 0;
    *v = 0;
    while (*off < len && shift < 64) {
        uint8_t c = b[(*off)++];
        *v |= (uint64_t)(c & 0x7F) << shift;
        if (!(c & 0x80)) return 1;
        shift += 7;
    }
    return 0;
}

/* Re-seal every chunk whose header still parses, so mutations inside a
 * payload reach the record decoder instead of stopping at the checksum
 * (docs/trace-format.md: tag, vcpu, nrec, nbytes, checksum, payload). */
static void reseal(uint8_t *b, size_t len) {
    size_t off = 16;
    while (off < len && b[off] == 'C') {
        uint64_t vcpu, nrec, nbytes;
        uint32_t h;
        off++;
        if (!varint(b, len, &off, &vcpu) || !varint(b, len, &off, &nrec) ||
            !varint(b, len, &off, &nbytes) || len - off < 4 || nbytes > len - off - 4)
            return;
        h = fnv1a(b + off + 4, (size_t)nbytes);
        b[off] = (uint8_t)h;
        b[off + 1] = (uint8_t)(h >> 8);
        b[off + 2] = (uint8_t)(h >> 16);
        b[off + 3] = (uint8_t)(h >> 24);
        off += 4 + (size_t)nbytes;
    }
}

typedef struct {
    uint8_t *b;
    size_t len, cap;
} membuf;

static void put(void *ctx, const char *s, size_t n) {
    membuf *m = (membuf *)ctx;
    if (m->len + n > m->cap) {
        m->cap = (m->len + n) * 2;
        m->b = (uint8_t *)realloc(m->b, m->cap);
        if (!m->b) abort();
    }
    memcpy(m->b + m->len, s, n);
    m->len += n;
}

int main(void) {
    static hwx_trace_writer tw;
    membuf m = {0, 0, 0};
    hwp_writer w;
    hwp_rng r;
    uint8_t *c;
    size_t i, cut;
    uint64_t pc = 0x400000;
    w.write = put;
    w.ctx = &m;
    hwp_rng_seed(&r, 2026);
    hwx_trace_write_header(&w);
    hwx_trace_writer_init(&tw, &w, 3);
    for (i = 0; i < 25000; i++) { /* 2 chunks */
        hwp_insn in;
        memset(&in, 0, sizeof in);
        in.pc = pc;
        in.next_pc = pc + 1 + hwp_rng_below(&r, 9);
        in.cls = hwp_rng_below(&r, HWP_CLS_COUNT);
        if (in.cls == HWP_CLS_LOAD) {
            in.addr = 0x7000000 + 8 * hwp_rng_below(&r, 4096);
            in.value = hwp_rng_next(&r) >> hwp_rng_below(&r, 64);
        }
        in.events = hwp_rng_below(&r, 4) == 0 ? HWP_EV_TAKEN : 0;
        hwx_trace_put(&tw, &in);
        pc = in.next_pc;
    }
    hwx_trace_flush(&tw);
    hwx_trace_write_end(&w, tw.total);
    LLVMFuzzerTestOneInput(m.b, m.len);
    for (cut = 0; cut < m.len; cut += 1 + cut / 8) LLVMFuzzerTestOneInput(m.b, cut);
    c = (uint8_t *)malloc(m.len + 16);
    for (i = 0; i < 1500; i++) {
        size_t n = m.len, at = hwp_rng_below(&r, m.len);
        memcpy(c, m.b, m.len);
        switch (hwp_rng_below(&r, 4)) {
        case 0: c[at] ^= (uint8_t)(1u << hwp_rng_below(&r, 8)); break;
        case 1: c[at] = (uint8_t)hwp_rng_u32(&r); break;
        case 2: memmove(c + at + 1, c + at, n - at); c[at] = (uint8_t)hwp_rng_u32(&r); n++; break;
        default: memmove(c + at, c + at + 1, n - at - 1); n--; break;
        }
        LLVMFuzzerTestOneInput(c, n);
        reseal(c, n);
        LLVMFuzzerTestOneInput(c, n);
    }
    printf("fuzz driver: %zu-byte trace, truncations and 1500 mutations survived\n",
           m.len);
    free(c);
    free(m.b);
    return 0;
}
