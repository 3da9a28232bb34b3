/* bench/core/bench_core.c: host instructions per guest instruction of
 * core.h in each mode (bench/callgrind.sh bench_core), on a synthetic
 * stream shaped like compiled code: basic blocks of 5 instructions in
 * loops over a 64 KB code footprint, a third of the instructions loads
 * or stores walking arrays with some random accesses, a conditional
 * branch ending each block (loop branches taken 7 times in 8, the rest
 * data dependent). The stream is generated once; each iteration feeds
 * all of it. `--trace FILE [--skip N]` takes 2^20 records of a recorded
 * trace instead, after the first N (docs/trace-format.md;
 * bench/core/cg_compare.sh leaves gzip's in BUILD/cg/gzip.hwpt), without
 * registers. */
#include "bench.h" /* first: it sets _POSIX_C_SOURCE */
#define HWPROF_IMPL
#include "hwprof/hwprof.h"
#include "hwx.h"

static uint32_t NREC = 1u << 16;

typedef struct bctx {
    hwp_core c;
    void *mem;
    hwp_insn *rec;
    hwp_core_ops *ops;
    int with_ops;
    uint32_t every; /* sampled: a window every `every` instructions */
    uint32_t window;
} bctx;

static void gen(hwp_insn *rec, hwp_core_ops *ops) {
    hwp_rng r;
    uint64_t pc = 0x400000, arr = 0x10000000;
    uint32_t i, loop = 0;
    hwp_rng_seed(&r, 42);
    for (i = 0; i < NREC; i++) {
        hwp_insn *in = &rec[i];
        hwp_core_ops *o = &ops[i];
        uint32_t k = i % 5, len = 2 + hwp_rng_below(&r, 5);
        memset(in, 0, sizeof *in);
        memset(o, 0, sizeof *o);
        in->pc = pc;
        in->next_pc = pc + len;
        o->len = (uint8_t)len;
        o->regs = 1;
        o->nsrc = 1;
        o->src[0] = (uint8_t)(1 + hwp_rng_below(&r, 16));
        o->ndst = 1;
        o->dst[0] = (uint8_t)(1 + hwp_rng_below(&r, 16));
        if (k == 1 || k == 3) {
            in->cls = hwp_rng_below(&r, 4) ? HWP_CLS_LOAD : HWP_CLS_STORE;
            in->addr = hwp_rng_below(&r, 8) ? (arr += 8)
                                           : 0x20000000 + 64 * hwp_rng_below(&r, 1u << 16);
            o->size = 8;
        } else if (k == 4) {
            int taken;
            in->cls = HWP_CLS_BR_COND;
            taken = (++loop & 7) ? 1 : (int)hwp_rng_below(&r, 2);
            if (taken) {
                in->events = HWP_EV_TAKEN;
                in->next_pc = 0x400000 + (hwp_rng_below(&r, 1u << 16) & ~(uint64_t)15);
            }
            in->addr = in->next_pc;
        } else if (k == 2 && hwp_rng_below(&r, 10) == 0) {
            o->op = HWP_CORE_OP_MUL;
        }
        pc = in->next_pc;
    }
    /* the last record leads back to the first */
    rec[NREC - 1].next_pc = rec[0].pc;
}

/* The first `cap` records of a trace file; 0 on error. */
static uint32_t load_trace(const char *path, uint64_t skip, hwp_insn *rec,
                           hwp_core_ops *ops, uint32_t cap) {
    FILE *f = fopen(path, "rb");
    long len;
    char *buf;
    hwx_trace_reader r;
    uint32_t n = 0;
    if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) <= 0) return 0;
    buf = (char *)malloc((size_t)len);
    rewind(f);
    if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) return 0;
    fclose(f);
    if (hwx_trace_open(&r, buf, (size_t)len) != HWP_OK) return 0;
    while (skip && hwx_trace_next(&r, &rec[0]) == 1) skip--;
    while (n < cap && hwx_trace_next(&r, &rec[n]) == 1) {
        memset(&ops[n], 0, sizeof ops[n]);
        n++;
    }
    free(buf);
    return n;
}

static uint64_t run(void *vctx, uint64_t iters) {
    bctx *b = (bctx *)vctx;
    uint64_t it, sum = 0;
    uint32_t i, left = b->every;
    hwp_core_out o;
    for (it = 0; it < iters; it++)
        for (i = 0; i < NREC; i++) {
            if (b->every && !--left) {
                hwp_core_window(&b->c, b->window);
                left = b->every;
            }
            hwp_core_insn_ex(&b->c, &b->rec[i], b->with_ops ? &b->ops[i] : NULL, &o);
            sum += o.cycle;
        }
    return sum;
}

/* The floor: the same host loop with the model body compiled out. The
 * hook still reads the record and hands back a cycle, so what is left
 * is the feeding itself (the loop, the record's address, the call's
 * arguments and the result), which no model can go below. */
static uint64_t run_floor(void *vctx, uint64_t iters) {
    bctx *b = (bctx *)vctx;
    uint64_t it, sum = 0;
    uint32_t i;
    for (it = 0; it < iters; it++)
        for (i = 0; i < NREC; i++) {
            const hwp_insn *in = &b->rec[i];
            sum += in->pc ^ in->addr;
            /* one record at a time, as a host hands them (no vectorising) */
            __asm__ __volatile__("" : "+r"(sum));
        }
    return sum;
}

static void bench(const char *name, uint32_t mode, int with_ops, uint32_t every,
                  hwp_insn *rec, hwp_core_ops *ops) {
    static bctx b;
    hwp_core_desc d;
    size_t n;
    memset(&d, 0, sizeof d);
    d.mode = mode;
    n = hwp_core_bytes(&d);
    b.mem = malloc(n);
    b.rec = rec;
    b.ops = ops;
    b.with_ops = with_ops;
    b.every = every;
    b.window = 240; /* lead-in 80, ProfileMe's W = 80, drain 80 */
    if (!b.mem || hwp_core_init(&b.c, b.mem, n, &d, NULL) != HWP_OK) {
        fprintf(stderr, "bench_core: init failed: %s\n", hwp_why(&b.c));
        exit(1);
    }
    hwb_run(name, run, &b, NREC);
    free(b.mem);
}

int main(int argc, char **argv) {
    hwp_insn *rec;
    hwp_core_ops *ops;
    const char *trace = NULL;
    uint64_t skip = 0;
    int i, j;
    for (i = j = 1; i < argc; i++) { /* take --trace out for hwb_begin */
        if (!strcmp(argv[i], "--trace") && i + 1 < argc) trace = argv[++i];
        else if (!strcmp(argv[i], "--skip") && i + 1 < argc) skip = strtoull(argv[++i], NULL, 10);
        else argv[j++] = argv[i];
    }
    argc = j;
    if (trace) NREC = 1u << 20;
    rec = (hwp_insn *)malloc(NREC * sizeof *rec);
    ops = (hwp_core_ops *)malloc(NREC * sizeof *ops);
    if (!rec || !ops) return 1;
    if (trace) {
        NREC = load_trace(trace, skip, rec, ops, NREC);
        if (!NREC) {
            fprintf(stderr, "bench_core: cannot read %s\n", trace);
            return 1;
        }
    } else {
        gen(rec, ops);
    }
    hwb_begin(argc, argv);
    {
        static bctx f;
        f.rec = rec;
        hwb_run("core/floor", run_floor, &f, NREC);
    }
    bench("core/caches", HWP_CORE_CACHES, 0, 0, rec, ops);
    bench("core/timing", HWP_CORE_TIMING, 0, 0, rec, ops);
    bench("core/timing_regs", HWP_CORE_TIMING, 1, 0, rec, ops);
    /* ProfileMe's default interval: a selection every 10000 fetches */
    bench("core/sampled", HWP_CORE_SAMPLED, 1, 10000, rec, ops);
    free(rec);
    free(ops);
    return hwb_end();
}
