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

typedef struct rap2_ctx {
    hwp_rap2 *t;
    uint32_t at;
} rap2_ctx;

typedef struct rap1_ctx {
    hwp_rap *t;
    uint32_t at;
} rap1_ctx;

/* Exact count of pairs: open addressing on (x, y), 2^21 slots. */
typedef struct exact2_ctx {
    uint64_t *x, *y, *count;
    uint64_t mask;
    uint32_t at;
} exact2_ctx;

static inline void exact2_add(exact2_ctx *t, uint64_t x, uint64_t y) {
    uint64_t i = ((x ^ (y * 0xC2B2AE3D27D4EB4Full)) * 0x9E3779B97F4A7C15ull) >> 43 &
                 t->mask;
    while (t->count[i] && (t->x[i] != x || t->y[i] != y)) i = (i + 1) & t->mask;
    t->x[i] = x;
    t->y[i] = y;
    t->count[i]++;
}

/* The runs' results, so the compiler keeps the work. */
static uint64_t n_of2(const hwp_rap2 *r) {
    hwp_rap_stats st;
    hwp_rap2_get_stats(r, &st);
    return st.n;
}

static uint64_t n_of(const hwp_rap *r) {
    hwp_rap_stats st;
    hwp_rap_get_stats(r, &st);
    return st.n;
}

/* The structure's address is read once per chunk (a store through it
 * may alias the context). */
static uint64_t run_rap2(void *ctx, uint64_t iters) {
    rap2_ctx *c = (rap2_ctx *)ctx;
    uint64_t i;
    unsigned k;
    for (i = 0; i < iters; i++) {
        hwp_rap2 *t = c->t;
        const uint64_t *p = pcs + c->at, *a = addrs + c->at;
        for (k = 0; k < CHUNK; k++) hwp_rap2_add(t, p[k], a[k], 1);
        c->at = (c->at + CHUNK) % STREAM;
    }
    return n_of2(c->t);
}

static uint64_t run_rap1(void *ctx, uint64_t iters) {
    rap1_ctx *c = (rap1_ctx *)ctx;
    uint64_t i;
    unsigned k;
    for (i = 0; i < iters; i++) {
        hwp_rap *t = c->t;
        const uint64_t *p = pcs + c->at;
        for (k = 0; k < CHUNK; k++) hwp_rap_add(t, p[k], 1);
        c->at = (c->at + CHUNK) % STREAM;
    }
    return n_of(c->t);
}

static uint64_t run_exact2(void *ctx, uint64_t iters) {
    exact2_ctx *c = (exact2_ctx *)ctx;
    uint64_t i;
    unsigned k;
    for (i = 0; i < iters; i++) {
        const uint64_t *p = pcs + c->at, *a = addrs + c->at;
        for (k = 0; k < CHUNK; k++) exact2_add(c, p[k], a[k]);
        c->at = (c->at + CHUNK) % STREAM;
    }
    return c->count[0];
}

/* 16 KB of nodes; the PC side spans 2^24 bytes from the code's base, the
 * data side 2^40 from 0; warmed up over one pass of the stream. */
static rap2_ctx *make_rap2(uint32_t buffer) {
    rap2_ctx *c = (rap2_ctx *)calloc(1, sizeof *c);
    hwp_rap2_desc d;
    size_t bytes;
    memset(&d, 0, sizeof d);
    d.x_base = 0x400000;
    d.x_bits = 24;
    d.y_bits = 40;
    d.tree.nodes = 1024;
    d.tree.buffer = buffer ? buffer : HWP_RAP_BUFFER_NONE;
    bytes = hwp_rap2_bytes(&d);
    c->t = (hwp_rap2 *)malloc(sizeof *c->t);
    if (!c->t || hwp_rap2_init(c->t, malloc(bytes), bytes, &d, NULL) != HWP_OK) {
        fprintf(stderr, "bench_rap2: init refused\n");
        exit(1);
    }
    run_rap2(c, STREAM / CHUNK);
    return c;
}

static rap1_ctx *make_rap1(void) {
    rap1_ctx *c = (rap1_ctx *)calloc(1, sizeof *c);
    hwp_rap_desc d;
    memset(&d, 0, sizeof d);
    d.nodes = 1024;
    d.buffer = HWP_RAP_BUFFER_NONE;
    c->t = hwx_rap_new(&d, NULL);
    run_rap1(c, STREAM / CHUNK);
    return c;
}

static exact2_ctx *make_exact2(void) {
    exact2_ctx *c = (exact2_ctx *)calloc(1, sizeof *c);
    size_t n = (size_t)1 << 21;
    c->x = (uint64_t *)calloc(n, sizeof *c->x);
    c->y = (uint64_t *)calloc(n, sizeof *c->y);
    c->count = (uint64_t *)calloc(n, sizeof *c->count);
    c->mask = n - 1;
    run_exact2(c, STREAM / CHUNK); /* every pair's slot touched, as warm as the trees */
    return c;
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
    hwb_run("rap2/code_data/16k", run_rap2, make_rap2(0), CHUNK);
    hwb_run("rap2/code_data/16k+buf1k", run_rap2, make_rap2(1024), CHUNK);
    hwb_run("rap1/code/16k", run_rap1, make_rap1(), CHUNK);
    hwb_run("peer/code_data/exact_pairs", run_exact2, make_exact2(), CHUNK);
    hwx_code_free(&code);
    return hwb_end();
}
