/* tests/core/test_core_equiv.c: core.h's results do not move when its
 * hot path is made faster.
 *
 * Every figure the core gives is folded into one FNV-1a digest per run:
 * each instruction's hwp_core_out (events, fetch and data levels, the
 * clock, and the five stage cycles when it was timed), each finished
 * record from hwp_core_done (pc, stages, events, wasted slots), in
 * order, and the JSON report after the flush. Equal digests mean every
 * per-instruction figure, hence every per-PC table built from them and
 * every total, is the same.
 *
 *   test_core_equiv            the unit test: random streams through
 *                              five machines (the three modes, both
 *                              issue orders, the three predictors, an
 *                              LLC, tiny caches that miss, no TLB / no
 *                              RAS), against the digests the
 *                              unoptimised core (before the last-line
 *                              filters, age bytes and once-per-cycle
 *                              closing) gave for the same streams.
 *   test_core_equiv --print    the digests of those runs.
 *   test_core_equiv --trace F [--limit N]
 *                              the digests of a recorded trace in each
 *                              mode; bench/core/equiv.sh builds this file
 *                              against an older core.h and this one and
 *                              compares them on real programs' traces.
 */
#define HWPROF_IMPL
#include "hwprof/hwprof.h"
#include "harness.h"
#include "hwx.h"

typedef struct digest {
    uint64_t h;
} digest;

static void dput(digest *d, const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    size_t i;
    for (i = 0; i < n; i++) {
        d->h ^= b[i];
        d->h *= 0x100000001b3ull;
    }
}

static void dput64(digest *d, uint64_t v) {
    unsigned char b[8];
    unsigned i;
    for (i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
    dput(d, b, 8);
}

static void dwrite(void *ctx, const char *s, size_t n) { dput((digest *)ctx, s, n); }

static void drain(hwp_core *c, digest *d) {
    hwp_core_rec r[64];
    size_t n, i;
    while ((n = hwp_core_done(c, r, 64)) > 0)
        for (i = 0; i < n && i < 64; i++) {
            dput64(d, r[i].pc);
            dput64(d, r[i].fetch);
            dput64(d, r[i].map);
            dput64(d, r[i].issue);
            dput64(d, r[i].ready);
            dput64(d, r[i].retire);
            dput64(d, r[i].wasted);
            dput64(d, r[i].events);
        }
}

/* A run in progress: the core and the digest. */
typedef struct erun {
    hwp_core c;
    void *mem;
    digest d;
    hwp_rng win; /* sampled mode: where windows open */
} erun;

static int eopen(erun *e, const hwp_core_desc *desc) {
    size_t n = hwp_core_bytes(desc);
    e->mem = malloc(n);
    e->d.h = 0xcbf29ce484222325ull;
    hwp_rng_seed(&e->win, 7);
    return e->mem && hwp_core_init(&e->c, e->mem, n, desc, NULL) == HWP_OK;
}

static void efeed(erun *e, const hwp_insn *in, const hwp_core_ops *ops) {
    hwp_core_out o;
    memset(&o, 0, sizeof o);
    /* sampled: a window of 1..320 about every 1000 instructions */
    if (hwp_rng_below(&e->win, 1000) == 0)
        hwp_core_window(&e->c, 1 + hwp_rng_below(&e->win, 320));
    hwp_core_insn_ex(&e->c, in, ops, &o);
    dput64(&e->d, o.cycle);
    dput64(&e->d, o.events);
    dput64(&e->d, o.ilevel);
    dput64(&e->d, o.dlevel);
    dput64(&e->d, o.timed);
    if (o.timed) {
        dput64(&e->d, o.fetch);
        dput64(&e->d, o.map);
        dput64(&e->d, o.issue);
        dput64(&e->d, o.ready);
        dput64(&e->d, o.retire);
    }
    if (hwp_rng_below(&e->win, 50) == 0) drain(&e->c, &e->d);
}

static uint64_t eclose(erun *e) {
    hwp_writer w;
    hwp_core_flush(&e->c);
    drain(&e->c, &e->d);
    w.write = dwrite;
    w.ctx = &e->d;
    hwp_core_write_json(&e->c, &w);
    free(e->mem);
    return e->d.h;
}

/* A random stream shaped to reach every path: loops in a few code
 * regions (some far apart, for ITLB misses), every class and a few
 * unknown ones, calls and matching returns, accesses that straddle
 * lines, lengths and registers given or not. */
static void gen(hwp_rng *r, hwp_insn *in, hwp_core_ops *ops, uint64_t *pc,
                uint64_t *stack, unsigned *sp) {
    uint32_t k = hwp_rng_below(r, 100), len = 1 + hwp_rng_below(r, 15);
    memset(in, 0, sizeof *in);
    memset(ops, 0, sizeof *ops);
    in->pc = *pc;
    in->next_pc = *pc + len;
    if (hwp_rng_below(r, 2)) ops->len = (uint8_t)len;
    if (hwp_rng_below(r, 3)) {
        ops->regs = 1;
        ops->nsrc = (uint8_t)hwp_rng_below(r, 4);
        ops->ndst = (uint8_t)hwp_rng_below(r, 3);
        ops->src[0] = (uint8_t)hwp_rng_below(r, 24);
        ops->src[1] = (uint8_t)hwp_rng_below(r, 24);
        ops->src[2] = (uint8_t)hwp_rng_below(r, 24);
        ops->dst[0] = (uint8_t)hwp_rng_below(r, 24);
        ops->dst[1] = (uint8_t)hwp_rng_below(r, 24);
    }
    if (hwp_rng_below(r, 8) == 0) ops->op = (uint8_t)hwp_rng_below(r, HWP_CORE_OP_COUNT);
    if (k < 35) {
        in->cls = k < 25 ? HWP_CLS_LOAD : HWP_CLS_STORE;
        in->addr = hwp_rng_below(r, 4) ? 0x10000000 + 8 * hwp_rng_below(r, 64)
                   : hwp_rng_below(r, 2) ? 0x20000000 + hwp_rng_below(r, 1u << 22)
                                         : 0x7ff000000000ull + hwp_rng_below(r, 1u << 16);
        ops->size = (uint8_t)(1u << hwp_rng_below(r, 5));
    } else if (k < 55) {
        in->cls = HWP_CLS_BR_COND;
        in->addr = (*pc & ~(uint64_t)0xfff) + hwp_rng_below(r, 4096);
        if (hwp_rng_below(r, 3)) {
            in->events = HWP_EV_TAKEN;
            in->next_pc = in->addr;
        }
    } else if (k < 58) {
        in->cls = HWP_CLS_JUMP;
        in->events = HWP_EV_TAKEN;
        in->next_pc = in->addr = 0x400000 + hwp_rng_below(r, 1u << 14);
    } else if (k < 61 && *sp < 64) {
        in->cls = HWP_CLS_CALL;
        in->events = HWP_EV_TAKEN | (hwp_rng_below(r, 2) ? HWP_EV_INDIRECT : 0u);
        stack[(*sp)++] = *pc + len;
        in->next_pc = in->addr = (hwp_rng_below(r, 4) ? 0x400000 : 0x7f0000000000ull) +
                                 0x100 * hwp_rng_below(r, 64);
    } else if (k < 64 && *sp) {
        in->cls = HWP_CLS_RET;
        in->events = HWP_EV_TAKEN;
        in->next_pc = in->addr = hwp_rng_below(r, 10) ? stack[--(*sp)] : 0x401234;
    } else if (k < 66) {
        in->cls = HWP_CLS_INDIRECT;
        in->events = HWP_EV_TAKEN;
        in->next_pc = in->addr = 0x400000 + 0x40 * hwp_rng_below(r, 8);
    } else if (k == 66) {
        in->cls = HWP_CLS_COUNT + hwp_rng_below(r, 3); /* unknown: dropped */
    } else if (k == 67) {
        in->events = HWP_EV_TRAP;
    }
    *pc = in->next_pc;
}

static hwp_core_desc machine(unsigned i) {
    hwp_core_desc d;
    memset(&d, 0, sizeof d);
    switch (i) {
    case 0: break; /* the 21264, full timing */
    case 1: d.mode = HWP_CORE_CACHES; break;
    case 2: d.mode = HWP_CORE_SAMPLED; break;
    case 3: /* tiny caches with an LLC, in order, gshare */
        d.order = HWP_CORE_INORDER;
        d.bp = HWP_CORE_GSHARE;
        d.l1i.sets = 4; d.l1i.ways = 2; d.l1i.line = 16;
        d.l1d.sets = 8; d.l1d.ways = 4; d.l1d.line = 32;
        d.l2.sets = 16; d.l2.ways = 3; d.l2.line = 64;
        d.llc.sets = 64; d.llc.ways = 8; d.llc.line = 64;
        d.itlb.sets = 2; d.itlb.ways = 2; d.itlb.line = 4096;
        d.dtlb.sets = 4; d.dtlb.ways = 1; d.dtlb.line = 4096;
        d.rob = 16; d.window = 4; d.fetch_width = 2; d.issue_width = 2;
        d.retire_width = 1; d.ras = 4;
        break;
    default: /* cachegrind's machine in sampled mode */
        d.mode = HWP_CORE_SAMPLED;
        d.flags = HWP_CORE_NO_RAS | HWP_CORE_NO_TLB;
        d.bp = HWP_CORE_GSELECT; d.bp_global = 16384; d.bp_hist = 7;
        d.l1i.sets = 64; d.l1i.ways = 8; d.l1i.line = 64;
        d.l1d.sets = 64; d.l1d.ways = 8; d.l1d.line = 64;
        d.l2.sets = 1024; d.l2.ways = 16; d.l2.line = 64;
        break;
    }
    return d;
}
#define MACHINES 5u

/* Machine i over a random stream of n instructions from seed. */
static uint64_t random_run(unsigned i, uint64_t seed, unsigned n) {
    hwp_core_desc d = machine(i);
    erun e;
    hwp_rng r;
    uint64_t pc = 0x400000, stack[64];
    unsigned sp = 0, j;
    hwp_insn in;
    hwp_core_ops ops;
    if (!eopen(&e, &d)) return 0;
    hwp_rng_seed(&r, seed);
    for (j = 0; j < n; j++) {
        gen(&r, &in, &ops, &pc, stack, &sp);
        efeed(&e, &in, hwp_rng_below(&r, 4) ? &ops : NULL);
    }
    return eclose(&e);
}

/* The digests of random_run(i, 1000 + i, 100000) from the core before its
 * hot path was reworked (its hwp_core_insn_ex, hwp__core_timed and
 * caches as they were when the cachegrind comparison was made). */
static const uint64_t golden[MACHINES] = {
    0x7a168522d9713285ull, 0x61ec56900a93f1f4ull, 0x4d561a2d7e6cac52ull,
    0x1289d1a90f9767aaull, 0x208ee93a0556845dull,
};

static void test_random_streams(void) {
    unsigned i;
    for (i = 0; i < MACHINES; i++) {
        uint64_t h = random_run(i, 1000 + i, 100000);
        if (h != golden[i]) fprintf(stderr, "machine %u: digest %016llx\n", i,
                                    (unsigned long long)h);
        CHECK_EQ(h, golden[i]);
    }
}

/* The three modes of the default machine over a recorded trace, without
 * and with windows; registers are not in a trace. */
static int trace_run(const char *path, uint64_t limit) {
    FILE *f = fopen(path, "rb");
    long len;
    char *buf;
    unsigned m;
    if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) <= 0) return 1;
    buf = (char *)malloc((size_t)len);
    rewind(f);
    if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) return 1;
    fclose(f);
    for (m = 0; m < 3; m++) {
        hwp_core_desc d = machine(m);
        hwx_trace_reader rd;
        hwp_insn in;
        erun e;
        uint64_t n = 0;
        if (!eopen(&e, &d) || hwx_trace_open(&rd, buf, (size_t)len) != HWP_OK) return 1;
        while (n < limit && hwx_trace_next(&rd, &in) == 1) {
            efeed(&e, &in, NULL);
            n++;
        }
        printf("%s mode %u: %llu instructions, digest %016llx\n", path, m,
               (unsigned long long)n, (unsigned long long)eclose(&e));
    }
    free(buf);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 3 && !strcmp(argv[1], "--trace"))
        return trace_run(argv[2], argc >= 5 && !strcmp(argv[3], "--limit")
                                      ? strtoull(argv[4], NULL, 10)
                                      : ~(uint64_t)0);
    if (argc >= 2 && !strcmp(argv[1], "--print")) {
        unsigned i;
        for (i = 0; i < MACHINES; i++)
            printf("0x%016llxull,\n", (unsigned long long)random_run(i, 1000 + i, 100000));
        return 0;
    }
    hwt_begin(argc, argv);
    HWT_RUN(test_random_streams);
    return hwt_end();
}
