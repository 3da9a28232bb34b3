/* RAP benchmarks: ns and instructions per event of hwp_rap_add on a Zipf
 * stream over 2^20 distinct 64-bit keys and on a synthetic basic-block
 * trace, at the paper's 8 KB with eps = 1% and 10%, with and without the
 * stage-0 buffer and the cost shim; beside an exact hash-table count and
 * a Space-Saving table of the same 8 KB, on the same stream, in the same
 * run. Accuracy and peak nodes: bench/rap/rap_report. */
#include "bench.h" /* first: it sets _POSIX_C_SOURCE for clock_gettime */

#define HWPROF_IMPL
#include "hwprof/rap.h"

#include "gen.h"
#include "rap/peers.h"
#include "rap/rap_util.h"

#define STREAM (1u << 20) /* events precomputed, cycled               */
#define CHUNK 4096u       /* events per benchmark iteration           */

static uint64_t zipf_keys[STREAM], code_keys[STREAM];

typedef struct rap_ctx {
    hwp_rap *t;
    const uint64_t *keys;
    uint32_t at;
} rap_ctx;

/* One benchmark loop per structure, each inlining its own update: a
 * context holding the structure and a cursor into the stream. */
#define DEFINE_RUN(name, ctx_t, add, result)                              \
    static uint64_t name(void *ctx, uint64_t iters) {                     \
        ctx_t *c = (ctx_t *)ctx;                                          \
        uint64_t i;                                                       \
        unsigned k;                                                       \
        for (i = 0; i < iters; i++) {                                     \
            const uint64_t *p = c->keys + c->at;                          \
            for (k = 0; k < CHUNK; k++) add(c->t, p[k]);                  \
            c->at = (c->at + CHUNK) & (STREAM - 1);                       \
        }                                                                 \
        return result;                                                    \
    }

typedef struct exact_ctx {
    exact_tab t[1];
    const uint64_t *keys;
    uint32_t at;
} exact_ctx;

typedef struct ss_ctx {
    ss_tab t[1];
    const uint64_t *keys;
    uint32_t at;
} ss_ctx;

#define RAP_ADD(r, key) hwp_rap_add(r, key, 1)
DEFINE_RUN(run_rap, rap_ctx, RAP_ADD, c->t->n + c->t->nodes)
DEFINE_RUN(run_exact, exact_ctx, exact_add, c->t->count[c->keys[0] & c->t->mask])
DEFINE_RUN(run_ss, ss_ctx, ss_add, c->t->count[c->t->heap[0]])

static rap_ctx *make_rap(double eps, uint32_t buffer, uint32_t cache,
                         hwp_cost *cost, const uint64_t *keys) {
    rap_ctx *c = (rap_ctx *)calloc(1, sizeof *c);
    hwp_rap_desc d;
    memset(&d, 0, sizeof d);
    d.eps = eps;
    d.buffer = buffer;
    d.cache = cache;
    c->t = hwx_rap_new(&d, cost);
    c->keys = keys;
    /* Warm up one pass so the tree is in its steady state. */
    run_rap(c, STREAM / CHUNK);
    return c;
}

int main(int argc, char **argv) {
    hwp_rng g;
    hwg_zipf z;
    hwx_code code;
    hwp_cost cost;
    exact_ctx *ex = (exact_ctx *)calloc(1, sizeof *ex);
    ss_ctx *ss = (ss_ctx *)calloc(1, sizeof *ss);
    unsigned i;
    hwb_begin(argc, argv);
    hwp_rng_seed(&g, 1);
    hwg_zipf_init(&z, 1u << 20, 1.0);
    hwx_code_init(&code, 3000, 0x400000, 1);
    for (i = 0; i < STREAM; i++) {
        zipf_keys[i] = hwg_key(hwg_zipf_next(&z, &g));
        code_keys[i] = hwx_code_next(&code);
    }
    hwp_cost_init(&cost, NULL);
    exact_init(ex->t, 21);
    ex->keys = zipf_keys;
    ss->keys = zipf_keys;
    hwb_run("rap/zipf/eps1", run_rap, make_rap(0.01, 0, 0, NULL, zipf_keys),
            CHUNK);
    hwb_run("rap/zipf/eps10", run_rap, make_rap(0.10, 0, 0, NULL, zipf_keys),
            CHUNK);
    hwb_run("rap/zipf/eps1+cache1k", run_rap,
            make_rap(0.01, 0, 1024, NULL, zipf_keys), CHUNK);
    hwb_run("rap/zipf/eps10+cache1k", run_rap,
            make_rap(0.10, 0, 1024, NULL, zipf_keys), CHUNK);
    hwb_run("rap/zipf/eps1+cache4k", run_rap,
            make_rap(0.01, 0, 4096, NULL, zipf_keys), CHUNK);
    hwb_run("peer/zipf/exact_hash", run_exact, ex, CHUNK);
    hwb_run("peer/zipf/space_saving_8k", run_ss, ss, CHUNK);
    hwb_run("rap/zipf/eps1+cache1k+cost", run_rap,
            make_rap(0.01, 0, 1024, &cost, zipf_keys), CHUNK);
    hwb_run("rap/zipf/eps1+buf1k+cache1k", run_rap,
            make_rap(0.01, 1024, 1024, NULL, zipf_keys), CHUNK);
    hwb_run("rap/code/eps10", run_rap, make_rap(0.10, 0, 0, NULL, code_keys),
            CHUNK);
    hwb_run("rap/code/eps10+cache1k", run_rap,
            make_rap(0.10, 0, 1024, NULL, code_keys), CHUNK);
    hwb_run("rap/code/eps10+buf1k+cache1k", run_rap,
            make_rap(0.10, 1024, 1024, NULL, code_keys), CHUNK);
    hwx_code_free(&code);
    return hwb_end();
}
