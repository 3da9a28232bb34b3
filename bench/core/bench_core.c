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
 * registers.
 *
 * The _block benchmarks feed the same records through the block path:
 * the stream cut into basic blocks as a host translates them (at each
 * branch, or where the next record does not follow on), each block
 * translated once (hwp_core_block_init, outside the measured loop), then
 * one hwp_core_run per execution with its data addresses. `--check`
 * runs the block path and the same blocks one instruction at a time
 * over the stream in the caches and sampled modes and says whether
 * every stat and the clock agree. */
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
    struct bstream *bs; /* the block benchmarks' stream */
} bctx;

/* The records cut into blocks: each distinct block translated once,
 * then the executions in order, each with its data addresses. */
typedef struct bexec {
    uint32_t blk, addr; /* the block; its first address in bstream.addr */
    uint32_t events;    /* the last instruction's */
    uint64_t next_pc;
} bexec;

typedef struct bstream {
    hwp_core_block **blk;
    uint32_t nblk;
    bexec *ex;
    uint32_t nex;
    uint64_t *addr;
} bstream;

/* Where a record ends its block: a branch, a jump or trap, a length no
 * x86 instruction has, a next record that does not follow on, or 64
 * instructions (the hosts' blocks are as short). */
static int ends_block(const hwp_insn *in, const hwp_insn *next, uint32_t n) {
    uint64_t d = in->next_pc - in->pc;
    return in->cls > HWP_CLS_STORE || (in->events & (HWP_EV_TAKEN | HWP_EV_TRAP)) ||
           d - 1u >= 15u || !next || next->pc != in->next_pc || n == 64;
}

/* Cut rec[0..nrec) into blocks translated for core c (of the desc every
 * benchmark's core has); a block is known by its first pc and length. */
static void cut_blocks(bstream *s, const hwp_core *c, const hwp_insn *rec, uint32_t nrec) {
    enum { HBITS = 18 };
    uint32_t *hash = (uint32_t *)calloc(1u << HBITS, sizeof *hash); /* index + 1 */
    uint32_t i = 0, j, na = 0;
    s->blk = (hwp_core_block **)malloc(nrec * sizeof *s->blk);
    s->ex = (bexec *)malloc(nrec * sizeof *s->ex);
    s->addr = (uint64_t *)malloc(nrec * sizeof *s->addr);
    s->nblk = s->nex = 0;
    if (!hash || !s->blk || !s->ex || !s->addr) exit(1);
    while (i < nrec) {
        uint32_t n = 1, h;
        bexec *e = &s->ex[s->nex++];
        while (!ends_block(&rec[i + n - 1], i + n < nrec ? &rec[i + n] : NULL, n)) n++;
        h = (uint32_t)((rec[i].pc * 0x9e3779b97f4a7c15ull + n) >> (64 - HBITS));
        while (hash[h] && (s->blk[hash[h] - 1]->pc != rec[i].pc || s->blk[hash[h] - 1]->n != n))
            h = (h + 1u) & ((1u << HBITS) - 1u);
        if (!hash[h]) { /* translate it: lengths from the fall-through */
            uint8_t cls[64];
            hwp_core_ops ops[64];
            size_t bytes = hwp_core_block_bytes(n);
            void *mem = malloc(bytes);
            memset(ops, 0, sizeof ops);
            for (j = 0; j < n; j++) {
                const hwp_insn *in = &rec[i + j];
                uint64_t d = in->next_pc - in->pc;
                cls[j] = (uint8_t)in->cls;
                ops[j].len = (uint8_t)(!(in->events & HWP_EV_TAKEN) && d - 1u < 15u ? d : 1u);
            }
            s->blk[s->nblk] = mem ? hwp_core_block_init(c, mem, bytes, rec[i].pc, cls, ops, n) : NULL;
            if (!s->blk[s->nblk]) {
                fprintf(stderr, "bench_core: cannot translate the block at %#llx\n",
                        (unsigned long long)rec[i].pc);
                exit(1);
            }
            hash[h] = ++s->nblk;
        }
        e->blk = hash[h] - 1u;
        e->addr = na;
        e->events = rec[i + n - 1].events;
        e->next_pc = rec[i + n - 1].next_pc;
        for (j = 0; j < n; j++)
            if (rec[i + j].cls == HWP_CLS_LOAD || rec[i + j].cls == HWP_CLS_STORE)
                s->addr[na++] = rec[i + j].addr;
        i += n;
    }
    free(hash);
}

/* One pass of the block stream; out (n of the largest block) runs each
 * block one instruction at a time. A window opens every `every`
 * instructions, where the per-record loop opens it. */
static uint64_t run_stream(bctx *b, hwp_core_out *out) {
    const bstream *s = b->bs;
    uint64_t sum = 0;
    uint32_t i, left = b->every;
    hwp_core_exec x;
    memset(&x, 0, sizeof x);
    for (i = 0; i < s->nex; i++) {
        const bexec *e = &s->ex[i];
        const hwp_core_block *blk = s->blk[e->blk];
        x.addr = s->addr + e->addr;
        x.next_pc = e->next_pc;
        x.events = e->events;
        if (b->every && left <= blk->n) { /* before its instruction left - 1 */
            x.win_at = left - 1u;
            x.win_n = b->window;
            left += b->every - blk->n;
        } else {
            x.win_n = 0;
            left -= b->every ? blk->n : 0u;
        }
        sum += hwp_core_run(&b->c, blk, &x, out);
    }
    return sum + hwp_core_cycle(&b->c);
}

static uint64_t run_block(void *vctx, uint64_t iters) {
    uint64_t it, sum = 0;
    for (it = 0; it < iters; it++) sum += run_stream((bctx *)vctx, NULL);
    return sum;
}

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

/* A core of the default desc in `mode` with b's feeding settings. */
static void open_core(bctx *b, uint32_t mode, int with_ops, uint32_t every) {
    hwp_core_desc d;
    size_t n;
    memset(&d, 0, sizeof d);
    d.mode = mode;
    n = hwp_core_bytes(&d);
    b->mem = malloc(n);
    b->with_ops = with_ops;
    b->every = every;
    b->window = 240; /* lead-in 80, ProfileMe's W = 80, drain 80 */
    if (!b->mem || hwp_core_init(&b->c, b->mem, n, &d, NULL) != HWP_OK) {
        fprintf(stderr, "bench_core: init failed: %s\n", hwp_why(&b->c));
        exit(1);
    }
}

/* bs NULL: the records one by one; else the block stream. */
/* The block path's floor: the same walk over the executions with the
 * model compiled out (the execution, its block and its first address
 * read, a value handed back). */
static uint64_t run_floor_block(void *vctx, uint64_t iters) {
    const bstream *s = ((bctx *)vctx)->bs;
    uint64_t it, sum = 0;
    uint32_t i;
    for (it = 0; it < iters; it++)
        for (i = 0; i < s->nex; i++) {
            const bexec *e = &s->ex[i];
            sum += s->blk[e->blk]->n ^ e->next_pc ^ e->events ^ s->addr[e->addr];
            __asm__ __volatile__("" : "+r"(sum));
        }
    return sum;
}

static void bench(const char *name, uint32_t mode, int with_ops, uint32_t every,
                  hwp_insn *rec, hwp_core_ops *ops, bstream *bs) {
    static bctx b;
    b.rec = rec;
    b.ops = ops;
    b.bs = bs;
    open_core(&b, mode, with_ops, every);
    hwb_run(name, bs ? run_block : run, &b, NREC);
    free(b.mem);
}

/* --check: the block path against the same blocks one instruction at a
 * time, in the caches and sampled modes; 0 when every stat and the
 * clock agree. */
static int check(bstream *bs) {
    static const uint32_t modes[2] = {HWP_CORE_CACHES, HWP_CORE_SAMPLED};
    static bctx blk, one;
    hwp_core_out out[64];
    hwp_core_stats sb, so;
    int i, bad = 0;
    for (i = 0; i < 2; i++) {
        blk.bs = one.bs = bs;
        open_core(&blk, modes[i], 1, i ? 10000 : 0);
        open_core(&one, modes[i], 1, i ? 10000 : 0);
        run_stream(&blk, NULL);
        run_stream(&one, out);
        hwp_core_flush(&blk.c);
        hwp_core_flush(&one.c);
        hwp_core_get_stats(&blk.c, &sb);
        hwp_core_get_stats(&one.c, &so);
        printf("%s: %u blocks, %u executions: block path %s one by one (cycles %llu, L1I misses %llu, L2 misses %llu)\n",
               i ? "sampled" : "caches", bs->nblk, bs->nex,
               memcmp(&sb, &so, sizeof sb) ? "DIFFERS from" : "identical to",
               (unsigned long long)sb.cycles, (unsigned long long)sb.l1i_misses,
               (unsigned long long)(sb.l2_imisses + sb.l2_rmisses + sb.l2_wmisses));
        bad |= memcmp(&sb, &so, sizeof sb) != 0;
        free(blk.mem);
        free(one.mem);
    }
    return bad;
}

int main(int argc, char **argv) {
    hwp_insn *rec;
    hwp_core_ops *ops;
    const char *trace = NULL;
    uint64_t skip = 0;
    int i, j, want_check = 0;
    static bstream bs;
    static bctx tr;
    for (i = j = 1; i < argc; i++) { /* take --trace out for hwb_begin */
        if (!strcmp(argv[i], "--trace") && i + 1 < argc) trace = argv[++i];
        else if (!strcmp(argv[i], "--skip") && i + 1 < argc) skip = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--check")) want_check = 1;
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
    /* blocks translated for a core of the default desc (caches mode:
     * the desc fields a block depends on are the same in every mode) */
    open_core(&tr, HWP_CORE_CACHES, 0, 0);
    cut_blocks(&bs, &tr.c, rec, NREC);
    if (want_check) return check(&bs);
    hwb_begin(argc, argv);
    {
        static bctx f;
        f.rec = rec;
        hwb_run("core/floor", run_floor, &f, NREC);
        f.bs = &bs;
        hwb_run("core/floor_block", run_floor_block, &f, NREC);
    }
    bench("core/caches", HWP_CORE_CACHES, 0, 0, rec, ops, NULL);
    bench("core/timing", HWP_CORE_TIMING, 0, 0, rec, ops, NULL);
    bench("core/timing_regs", HWP_CORE_TIMING, 1, 0, rec, ops, NULL);
    /* ProfileMe's default interval: a selection every 10000 fetches */
    bench("core/sampled", HWP_CORE_SAMPLED, 1, 10000, rec, ops, NULL);
    bench("core/caches_block", HWP_CORE_CACHES, 0, 0, rec, ops, &bs);
    bench("core/sampled_block", HWP_CORE_SAMPLED, 1, 10000, rec, ops, &bs);
    free(rec);
    free(ops);
    return hwb_end();
}
