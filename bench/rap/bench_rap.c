/* RAP benchmarks: ns and instructions per event of hwp_rap_add on a Zipf
 * stream over 2^20 distinct 64-bit keys and on a synthetic basic-block
 * trace, at the paper's 8 KB with eps = 1% and 10%, with and without the
 * stage-0 buffer and the cost shim; beside an exact hash-table count and
 * Space-Saving (stream summary) and count-min (dyadic) tables of the same
 * 8 KB, on the same stream, in the same
 * run. Accuracy and peak nodes: bench/rap/rap_report.
 *
 * `bench_rap --keys FILE [bench options]` adds rap/trace/... runs over a
 * real key stream (--help says how it is used). hwprof-bench (bench/harness)
 * takes any key file whole, with every model and peer. */
#include "bench.h" /* first: it sets _POSIX_C_SOURCE for clock_gettime */

#define HWPROF_IMPL
#include "hwprof/rap.h"

#include "gen.h"
#include "rap/peers.h"
#include "rap/rap_util.h"

#define STREAM (1u << 20) /* events precomputed, cycled               */
#define CHUNK 4096u       /* events per benchmark iteration           */
#define TRACE_MAX (1u << 24) /* keys read from --keys FILE            */

static uint64_t zipf_keys[STREAM], code_keys[STREAM];

typedef struct rap_ctx {
    hwp_rap *t;
    const uint64_t *keys;
    uint32_t at, len; /* cursor and stream length (a multiple of CHUNK) */
} rap_ctx;

/* One benchmark loop per structure, each inlining its own update: a
 * context holding the structure and a cursor into the stream. The
 * structure's address is read once per chunk: a store through it may
 * alias the context, and a reload per event would be counted as the
 * structure's work. */
#define DEFINE_RUN(name, ctx_t, tab_t, add, result)                       \
    static uint64_t name(void *ctx, uint64_t iters) {                     \
        ctx_t *c = (ctx_t *)ctx;                                          \
        uint64_t i;                                                       \
        unsigned k;                                                       \
        for (i = 0; i < iters; i++) {                                     \
            const uint64_t *p = c->keys + c->at;                          \
            tab_t *t = c->t;                                              \
            for (k = 0; k < CHUNK; k++) add(t, p[k]);                     \
            c->at += CHUNK;                                               \
            if (c->at >= c->len) c->at = 0;                               \
        }                                                                 \
        return result;                                                    \
    }

typedef struct exact_ctx {
    exact_tab t[1];
    const uint64_t *keys;
    uint32_t at, len;
} exact_ctx;

typedef struct ss_ctx {
    ss_tab t[1];
    const uint64_t *keys;
    uint32_t at, len;
} ss_ctx;

typedef struct cm_ctx {
    cm_tab t[1];
    const uint64_t *keys;
    uint32_t at, len;
} cm_ctx;

/* The floor: the same loop and call site with a hook that only folds the
 * key into one word (so the loop is not optimised away). */
typedef struct noop_ctx {
    uint64_t t[1];
    const uint64_t *keys;
    uint32_t at, len;
} noop_ctx;
#define NOOP_ADD(t, key) (*(t) += (key))

#define RAP_ADD(r, key) hwp_rap_add(r, key, 1)
static uint64_t rap_result(const hwp_rap *r) {
    hwp_rap_stats st;
    hwp_rap_get_stats(r, &st);
    return st.n + st.nodes;
}
DEFINE_RUN(run_rap, rap_ctx, hwp_rap, RAP_ADD, rap_result(c->t))
DEFINE_RUN(run_noop, noop_ctx, uint64_t, NOOP_ADD, c->t[0])
DEFINE_RUN(run_exact, exact_ctx, exact_tab, exact_add, c->t->count[c->keys[0] & c->t->mask])
DEFINE_RUN(run_ss, ss_ctx, ss_tab, ss_add, c->t->size)
DEFINE_RUN(run_cm, cm_ctx, cm_tab, cm_add, c->t->c[0])

static rap_ctx *make_rap(double eps, uint32_t buffer, uint32_t cache,
                         hwp_cost *cost, const uint64_t *keys, uint32_t len) {
    rap_ctx *c = (rap_ctx *)calloc(1, sizeof *c);
    hwp_rap_desc d;
    memset(&d, 0, sizeof d);
    d.eps = eps;
    d.buffer = buffer ? buffer : HWP_RAP_BUFFER_NONE;
    d.cache = cache;
    c->t = hwx_rap_new(&d, cost);
    c->keys = keys;
    c->len = len;
    /* Warm up one pass (at most 2^20 events) so the tree is in its
     * steady state. */
    run_rap(c, (len < STREAM ? len : STREAM) / CHUNK);
    return c;
}

/* A RAP configuration: built and warmed up only when it is to be run, so
 * that a run of one benchmark (bench/callgrind.sh runs each alone, under
 * callgrind) does not pay for every other configuration's warm-up. */
static void bench_rap(const char *name, double eps, uint32_t buffer, uint32_t cache,
                      hwp_cost *cost, const uint64_t *keys, uint32_t len) {
    if (hwb_want(name))
        hwb_run(name, run_rap, make_rap(eps, buffer, cache, cost, keys, len), CHUNK);
}

static noop_ctx *make_noop(const uint64_t *keys, uint32_t len) {
    noop_ctx *c = (noop_ctx *)calloc(1, sizeof *c);
    c->keys = keys;
    c->len = len;
    return c;
}

static exact_ctx *make_exact(const uint64_t *keys, uint32_t len) {
    exact_ctx *c = (exact_ctx *)calloc(1, sizeof *c);
    exact_init(c->t, 21);
    c->keys = keys;
    c->len = len;
    return c;
}

#define KEYS_USAGE                                                            \
    "  --keys FILE        also time RAP and the exact table on FILE's keys\n"  \
    "                     (little-endian uint64, e.g. hwprof-replay --dump):\n" \
    "                     its first 2^24 keys at most, cut to whole chunks of\n" \
    "                     4096, cycled through as the runs need (a stderr line\n" \
    "                     says how many); hwprof-bench --keys FILE takes a file\n" \
    "                     whole\n"

/* --keys FILE: up to TRACE_MAX keys, truncated to whole chunks; removed
 * from argv before the harness sees it. Returns the key count (0: none). */
static uint32_t load_keys(int *argc, char **argv, uint64_t **out) {
    const char *path = NULL;
    int i, j;
    size_t n;
    long size;
    FILE *f;
    for (i = j = 1; i < *argc; i++) {
        if (!strcmp(argv[i], "--keys") && i + 1 < *argc) path = argv[++i];
        else argv[j++] = argv[i];
    }
    *argc = j;
    if (!path) return 0;
    f = fopen(path, "rb");
    *out = (uint64_t *)malloc((size_t)TRACE_MAX * sizeof **out);
    if (!f || !*out || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "bench_rap: cannot read %s\n", path);
        exit(2);
    }
    if (size % 8) {
        fprintf(stderr, "bench_rap: %s: size %ld is not a multiple of 8 (little-endian "
                "uint64 keys): %ld trailing bytes at offset %ld\n", path, size, size % 8,
                size - size % 8);
        exit(2);
    }
    n = fread(*out, sizeof **out, TRACE_MAX, f);
    fclose(f);
    if (n < CHUNK) {
        fprintf(stderr, "bench_rap: %s holds fewer than %u keys\n", path,
                CHUNK);
        exit(2);
    }
    fprintf(stderr, "bench_rap: %s: the first %zu of its %ld keys, cycled\n", path,
            n / CHUNK * CHUNK, size / 8);
    return (uint32_t)(n / CHUNK * CHUNK);
}

int main(int argc, char **argv) {
    hwp_rng g;
    hwg_zipf z;
    hwx_code code;
    hwp_cost cost;
    ss_ctx *ss = (ss_ctx *)calloc(1, sizeof *ss);
    uint64_t *trace = NULL;
    uint32_t trace_len;
    unsigned i;
    hwb_usage_add(KEYS_USAGE);
    trace_len = load_keys(&argc, argv, &trace);
    hwb_begin(argc, argv);
    hwp_rng_seed(&g, 1);
    hwg_zipf_init(&z, 1u << 20, 1.0);
    hwx_code_init(&code, 3000, 0x400000, 1);
    for (i = 0; i < STREAM; i++) {
        zipf_keys[i] = hwg_key(hwg_zipf_next(&z, &g));
        code_keys[i] = hwx_code_next(&code);
    }
    hwp_cost_init(&cost, NULL);
    ss_init(ss->t);
    ss->keys = zipf_keys;
    ss->len = STREAM;
    bench_rap("rap/zipf/eps1", 0.01, 0, 0, NULL, zipf_keys, STREAM);
    bench_rap("rap/zipf/eps10", 0.10, 0, 0, NULL, zipf_keys, STREAM);
    bench_rap("rap/zipf/eps1+cache1k", 0.01, 0, 1024, NULL, zipf_keys, STREAM);
    bench_rap("rap/zipf/eps10+cache1k", 0.10, 0, 1024, NULL, zipf_keys, STREAM);
    bench_rap("rap/zipf/eps1+cache4k", 0.01, 0, 4096, NULL, zipf_keys, STREAM);
    hwb_run("peer/zipf/exact_hash", run_exact, make_exact(zipf_keys, STREAM),
            CHUNK);
    hwb_run("floor/zipf/noop", run_noop, make_noop(zipf_keys, STREAM), CHUNK);
    hwb_run("peer/zipf/space_saving_8k", run_ss, ss, CHUNK);
    {   /* count-min with dyadic levels over the 64-bit keys, 8 KB */
        cm_ctx *cm = (cm_ctx *)calloc(1, sizeof *cm);
        cm_init(cm->t, 64, 8192);
        cm->keys = zipf_keys;
        cm->len = STREAM;
        hwb_run("peer/zipf/count_min_8k", run_cm, cm, CHUNK);
    }
    bench_rap("rap/zipf/eps1+cache1k+cost", 0.01, 0, 1024, &cost, zipf_keys, STREAM);
    bench_rap("rap/zipf/eps1+buf1k+cache1k", 0.01, 1024, 1024, NULL, zipf_keys, STREAM);
    /* The hosts' setting: a cost shim attached (examples/minivm always
     * attaches one), with and without the paper's stage-0 buffer. */
    bench_rap("rap/zipf/eps1+cost", 0.01, 0, 0, &cost, zipf_keys, STREAM);
    bench_rap("rap/zipf/eps10+cost", 0.10, 0, 0, &cost, zipf_keys, STREAM);
    bench_rap("rap/zipf/eps1+buf1k+cost", 0.01, 1024, 0, &cost, zipf_keys, STREAM);
    /* The code stream at the hosts' eps = 1% without the buffer: a deep
     * tree (a 2^22-byte code region in a 64-bit space) that the walk from
     * the spine crosses level by level. */
    bench_rap("rap/code/eps1", 0.01, 0, 0, NULL, code_keys, STREAM);
    hwb_run("peer/code/exact_hash", run_exact, make_exact(code_keys, STREAM),
            CHUNK);
    hwb_run("floor/code/noop", run_noop, make_noop(code_keys, STREAM), CHUNK);
    bench_rap("rap/code/eps10", 0.10, 0, 0, NULL, code_keys, STREAM);
    bench_rap("rap/code/eps10+cache1k", 0.10, 0, 1024, NULL, code_keys, STREAM);
    bench_rap("rap/code/eps10+buf1k+cache1k", 0.10, 1024, 1024, NULL, code_keys, STREAM);
    bench_rap("rap/code/eps1+buf1k+cost", 0.01, 1024, 0, &cost, code_keys, STREAM);
    if (trace_len) {
        bench_rap("rap/trace/eps1", 0.01, 0, 0, NULL, trace, trace_len);
        bench_rap("rap/trace/eps10", 0.10, 0, 0, NULL, trace, trace_len);
        hwb_run("peer/trace/exact_hash", run_exact,
                make_exact(trace, trace_len), CHUNK);
        bench_rap("rap/trace/eps1+buf1k", 0.01, 1024, 0, NULL, trace, trace_len);
        bench_rap("rap/trace/eps1+buf1k+cost", 0.01, 1024, 0, &cost, trace, trace_len);
        bench_rap("rap/trace/eps1+cost", 0.01, 0, 0, &cost, trace, trace_len);
    }
    hwx_code_free(&code);
    free(trace);
    return hwb_end();
}
