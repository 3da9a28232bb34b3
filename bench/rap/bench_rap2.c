/* 2-D RAP benchmarks: ns and instructions per pair of hwp_rap2_add on a
 * code x data stream (a synthetic basic-block trace's PCs, each with the
 * array its loop walks), at 16 KB of nodes with the zero desc's eps =
 * 10%, with and without the stage-0 buffer; beside the 1-D tree on the
 * PCs alone and an exact open-addressing count of the pairs, on the same
 * stream, in the same run. `bench/callgrind.sh build/bench/rap/bench_rap2`
 * gives the instructions (docs/rap.md, "Two-dimensional ranges"). */
#include "bench.h" /* first: it sets _POSIX_C_SOURCE for clock_gettime */

#define HWPROF_IMPL
#include "hwprof/rap.h"

#include "gen.h"
#include "rap/rap_util.h"

#define STREAM (1u << 20) /* pairs precomputed, cycled */
#define CHUNK 4096u

static uint64_t pcs[STREAM], addrs[STREAM];

/* Exact count of pairs: open addressing on (x, y), 2^21 slots. */
typedef struct exact2 {
    uint64_t *x, *y, *count;
    uint64_t mask;
} exact2;

static inline void exact2_add(exact2 *t, uint64_t x, uint64_t y) {
    uint64_t i = ((x ^ (y * 0xC2B2AE3D27D4EB4Full)) * 0x9E3779B97F4A7C15ull) >> 43 &
                 t->mask;
    while (t->count[i] && (t->x[i] != x || t->y[i] != y)) i = (i + 1) & t->mask;
    t->x[i] = x;
    t->y[i] = y;
    t->count[i]++;
}

/* One chunk of pairs into each structure. The structure's address is a
 * parameter, read once per chunk (a store through it may alias a
 * context). */
static void chunk_rap2(void *t, const uint64_t *p, const uint64_t *a) {
    unsigned k;
    for (k = 0; k < CHUNK; k++) hwp_rap2_add((hwp_rap2 *)t, p[k], a[k], 1);
}

static void chunk_rap1(void *t, const uint64_t *p, const uint64_t *a) {
    unsigned k;
    (void)a; /* the PCs alone */
    for (k = 0; k < CHUNK; k++) hwp_rap_add((hwp_rap *)t, p[k], 1);
}

static void chunk_exact2(void *t, const uint64_t *p, const uint64_t *a) {
    unsigned k;
    for (k = 0; k < CHUNK; k++) exact2_add((exact2 *)t, p[k], a[k]);
}

/* The runs' results, so the compiler keeps the work. */
static uint64_t n_of2(const void *t) {
    hwp_rap_stats st;
    hwp_rap2_get_stats((const hwp_rap2 *)t, &st);
    return st.n;
}

static uint64_t n_of(const void *t) {
    hwp_rap_stats st;
    hwp_rap_get_stats((const hwp_rap *)t, &st);
    return st.n;
}

static uint64_t count0(const void *t) { return ((const exact2 *)t)->count[0]; }

/* A structure under test and where it is in the stream. */
typedef struct run_ctx {
    void *t;
    uint32_t at;
    void (*chunk)(void *t, const uint64_t *pc, const uint64_t *addr);
    uint64_t (*result)(const void *t);
} run_ctx;

/* iters chunks of the stream from where the last run stopped, cycled. */
static uint64_t run(void *ctx, uint64_t iters) {
    run_ctx *c = (run_ctx *)ctx;
    uint64_t i;
    for (i = 0; i < iters; i++) {
        c->chunk(c->t, pcs + c->at, addrs + c->at);
        c->at = (c->at + CHUNK) % STREAM;
    }
    return c->result(c->t);
}

/* The context of t, warmed up over one pass of the stream. */
static run_ctx *warm(void *t, void (*chunk)(void *, const uint64_t *, const uint64_t *),
                     uint64_t (*result)(const void *)) {
    run_ctx *c = (run_ctx *)calloc(1, sizeof *c);
    c->t = t;
    c->chunk = chunk;
    c->result = result;
    run(c, STREAM / CHUNK);
    return c;
}

/* 16 KB of nodes; the PC side spans 2^24 bytes from the code's base, the
 * data side 2^40 from 0. */
static run_ctx *make_rap2(uint32_t buffer) {
    hwp_rap2_desc d;
    hwp_rap2 *t = (hwp_rap2 *)malloc(sizeof *t);
    size_t bytes;
    memset(&d, 0, sizeof d);
    d.x_base = 0x400000;
    d.x_bits = 24;
    d.y_bits = 40;
    d.tree.nodes = 1024;
    d.tree.buffer = buffer ? buffer : HWP_RAP_BUFFER_NONE;
    bytes = hwp_rap2_bytes(&d);
    if (!t || hwp_rap2_init(t, malloc(bytes), bytes, &d, NULL) != HWP_OK) {
        fprintf(stderr, "bench_rap2: init refused\n");
        exit(1);
    }
    return warm(t, chunk_rap2, n_of2);
}

static run_ctx *make_rap1(void) {
    hwp_rap_desc d;
    memset(&d, 0, sizeof d);
    d.nodes = 1024;
    d.buffer = HWP_RAP_BUFFER_NONE;
    return warm(hwx_rap_new(&d, NULL), chunk_rap1, n_of);
}

/* Every pair's slot touched in the warm-up, as warm as the trees. */
static run_ctx *make_exact2(void) {
    exact2 *t = (exact2 *)calloc(1, sizeof *t);
    size_t n = (size_t)1 << 21;
    t->x = (uint64_t *)calloc(n, sizeof *t->x);
    t->y = (uint64_t *)calloc(n, sizeof *t->y);
    t->count = (uint64_t *)calloc(n, sizeof *t->count);
    t->mask = n - 1;
    return warm(t, chunk_exact2, count0);
}

int main(int argc, char **argv) {
    hwx_code code;
    hwp_rng g;
    unsigned i;
    hwb_begin(argc, argv);
    hwp_rng_seed(&g, 5);
    hwx_code_init(&code, 3000, 0x400000, 1);
    /* Each PC walks an array of its own (its base from the PC), 8 bytes
     * a step, with one access in 16 to anywhere in a 1 GB heap. */
    for (i = 0; i < STREAM; i++) {
        uint64_t pc = hwx_code_next(&code);
        pcs[i] = pc;
        addrs[i] = hwp_rng_below(&g, 16)
                       ? 0x10000000 + (hwp_mix64(pc) & 0xFFFFF000u) +
                             8 * (i & 511u)
                       : 0x10000000 + hwp_rng_below(&g, 1u << 30);
    }
    hwb_run("rap2/code_data/16k", run, make_rap2(0), CHUNK);
    hwb_run("rap2/code_data/16k+buf1k", run, make_rap2(1024), CHUNK);
    hwb_run("rap1/code/16k", run, make_rap1(), CHUNK);
    hwb_run("peer/code_data/exact_pairs", run, make_exact2(), CHUNK);
    hwx_code_free(&code);
    return hwb_end();
}
