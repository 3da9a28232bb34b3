/* rap_report [SVG_PATH]: the figures of docs/rap.md that are not timings.
 * For RAP at the paper's 8 KB (and 64 KB) on three synthetic streams of
 * 2^22 events (Zipf over 2^20 distinct 64-bit keys, a basic-block trace,
 * heavy-tailed load values): peak nodes, deferred splits, the
 * a-posteriori bound, and the paper's percent error on hot ranges (sec.
 * 4.3) against the exact profile; Space-Saving's error on the same Zipf
 * stream in the same 8 KB; the stage-0 buffer's cut in tree updates on
 * the code trace (sec. 3.3) and what it does to the bound and the errors. With SVG_PATH, writes the code tree at
 * eps = 10% as an SVG.
 *
 * rap_report --keys FILE NAME [SVG_PATH [LO HI]]: the same rows for a
 * real key stream (little-endian uint64 keys, from `hwprof-replay --dump`), plus the
 * stage-0 buffer's cut and accuracy, and the hot ranges of the 8 KB, eps = 10% tree
 * each with its exact count; with SVG_PATH, that tree as an SVG, over the
 * smallest tree range holding [LO, HI] if given (the picture in
 * docs/rap.md: python3.11's PCs over its text segment,
 * bench/rap/real_keys.sh). */
#define HWPROF_IMPL
#define HWPROF_STDIO
#include "hwprof/rap.h"

#include <stdio.h>
#include <string.h>

#include "gen.h"
#include "rap/peers.h"
#include "rap/rap_util.h"

#define N (1u << 22)

static hwx_event ev[N];
static uint64_t keys[N];
static const uint64_t *stream = keys; /* what run() feeds the tree   */
static size_t nstream = N;

enum { ZIPF, CODE, VALUES };
static const char *const names[] = {"zipf 2^20 keys", "code (bb trace)",
                                    "load values"};

static void make(int kind, uint64_t seed) {
    hwp_rng g;
    hwg_zipf z, small;
    hwx_code code;
    unsigned i;
    hwp_rng_seed(&g, seed);
    hwg_zipf_init(&z, 1u << 20, 1.0);
    hwg_zipf_init(&small, 1u << 16, 1.2);
    hwx_code_init(&code, 3000, 0x400000, seed);
    for (i = 0; i < N; i++) {
        uint64_t k;
        unsigned u;
        switch (kind) {
        case ZIPF: k = hwg_key(hwg_zipf_next(&z, &g)); break;
        case CODE: k = hwx_code_next(&code); break;
        default:
            u = hwp_rng_below(&g, 100);
            k = u < 20   ? 0
                : u < 50 ? hwg_zipf_next(&small, &g)
                : u < 80 ? 0x7f0000000000ull + 16 * hwg_zipf_next(&small, &g)
                         : hwp_rng_next(&g) >> hwp_rng_below(&g, 64);
        }
        keys[i] = k;
    }
    hwx_code_free(&code);
}

static uint64_t peak_buffered; /* most weight in stage 0 during run() */

static hwp_rap *run(double eps, uint32_t nodes, uint32_t buffer) {
    hwp_rap *r;
    hwp_rap_desc d;
    size_t i;
    memset(&d, 0, sizeof d);
    d.eps = eps;
    d.nodes = nodes;
    d.buffer = buffer ? buffer : HWP_RAP_BUFFER_NONE;
    r = hwx_rap_new(&d, NULL);
    peak_buffered = 0;
    for (i = 0; i < nstream; i++) {
        hwp_rap_stats st;
        hwp_rap_add(r, stream[i], 1);
        if (buffer && (i & 63u) == 0) {
            hwp_rap_get_stats(r, &st);
            if (st.buffered > peak_buffered) peak_buffered = st.buffered;
        }
    }
    hwp_rap_flush(r);
    return r;
}

static void space_saving(const hwx_exact *x) {
    static ss_tab s;
    unsigned i, hot = 0;
    double sum = 0, mx = 0;
    ss_init(&s);
    for (i = 0; i < N; i++) ss_add(&s, keys[i]);
    for (i = 0; i < s.size; i++) {
        uint64_t t = hwx_exact_range((void *)x, s.key[i], s.key[i]);
        double pct;
        if (t < N / 100) continue; /* keys with >= 1% of the stream */
        pct = 100.0 * (double)(s.count[i] - t) / (double)t;
        sum += pct;
        if (pct > mx) mx = pct;
        hot++;
    }
    printf("| %-16s | space-saving 8KB | keys >= 1%%: %u | mean %.3f%% | "
           "max %.3f%% | (256 counters) |\n",
           names[ZIPF], hot, hot ? sum / hot : 0, mx);
}

/* The SVG's x axis: 0-0 picks the range holding 99% of the weight. */
static uint64_t svg_lo, svg_hi;

/* The table rows of one stream (docs/rap.md, "Figures"): eps = 10% and
 * 1% at 8 KB and 64 KB; the 8 KB, eps = 10% tree goes to svg if given. */
static void rows(const char *name, hwx_exact *x, const char *svg) {
    static const double epss[] = {0.10, 0.01};
    static const uint32_t pools[] = {512, 4096};
    unsigned e, p;
    for (p = 0; p < 2; p++)
        for (e = 0; e < 2; e++) {
            hwp_rap *r = run(epss[e], pools[p], 0);
            hwp_rap_acc a10, a1;
            hwp_rap_stats st;
            hwp_rap_get_stats(r, &st);
            hwp_rap_accuracy(r, 0.10, hwx_exact_range, x, &a10);
            hwp_rap_accuracy(r, 0.01, hwx_exact_range, x, &a1);
            printf("| %-16s | eps=%2.0f%% %2uKB | %u | %llu | %.4f | %u, "
                   "%.3f%%, %.3f%% | %u, %.3f%%, %.3f%% |\n",
                   name, 100 * epss[e], pools[p] / 64, st.peak,
                   (unsigned long long)st.deferred,
                   (double)st.bound / (double)st.n, a10.hot,
                   a10.mean_pct, a10.max_pct, a1.hot, a1.mean_pct,
                   a1.max_pct);
            if (a10.violations || a1.violations)
                printf("BOUND VIOLATED: %llu nodes\n",
                       (unsigned long long)(a10.violations + a1.violations));
            if (e == 0 && p == 0 && svg) {
                FILE *f = fopen(svg, "w");
                hwp_writer w = hwp_writer_stdio(f);
                if (!svg_hi) hwp_rap_write_svg(r, &w);
                else if (hwp_rap_write_svg_range(r, &w, svg_lo, svg_hi))
                    fprintf(stderr, "rap_report: bad svg range [%#llx, "
                                    "%#llx]\n", (unsigned long long)svg_lo,
                            (unsigned long long)svg_hi);
                fclose(f);
            }
            free(r);
        }
}

/* The stage-0 buffer's cut in tree updates (sec. 3.3) and what it does to
 * accuracy: eps = 10% and 1%, 8 KB, 1K entries against no buffer on the
 * same stream (factor = events / tree updates; peak = most weight ever
 * resident in the buffer, as a fraction of the stream). */
static void buffer_cut(const char *name, hwx_exact *x) {
    static const double epss[] = {0.10, 0.01};
    unsigned e, b;
    printf("\nstage-0 buffer on %s (8KB; %zu events):\n| config | buffer | "
           "tree updates | factor | peak resident/n | bound/n | hot@10%%: n, "
           "mean, max err |\n|---|---|---|---|---|---|---|\n",
           name, nstream);
    for (e = 0; e < 2; e++)
        for (b = 0; b < 2; b++) {
            hwp_rap *r = run(epss[e], 512, b ? 1024 : 0);
            hwp_rap_acc a;
            hwp_rap_stats st;
            hwp_rap_get_stats(r, &st);
            hwp_rap_accuracy(r, 0.10, hwx_exact_range, x, &a);
            printf("| eps=%2.0f%% | %s | %llu | %.1f | %.5f | %.4f | %u, "
                   "%.3f%%, %.3f%% |\n",
                   100 * epss[e], b ? "1K" : "none",
                   (unsigned long long)st.updates,
                   (double)nstream / (double)st.updates,
                   (double)peak_buffered / (double)nstream,
                   (double)st.bound / (double)st.n, a.hot,
                   a.mean_pct, a.max_pct);
            if (a.violations)
                printf("BOUND VIOLATED: %llu nodes\n",
                       (unsigned long long)a.violations);
            free(r);
        }
    printf("\n");
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A real stream: the rows, the buffer's cut, and the hot ranges of the
 * 8 KB, eps = 10% tree beside their exact counts. */
static int real(const char *path, const char *name, const char *svg) {
    FILE *f = fopen(path, "rb");
    uint64_t *k, *sorted;
    size_t n = 0, cap = 1u << 20, i, j, nhot;
    hwx_exact x;
    hwp_rap_range hot[64];
    hwp_rap *r;
    unsigned char b[8];
    k = (uint64_t *)malloc(cap * sizeof *k);
    if (!f || !k) {
        fprintf(stderr, "rap_report: cannot read %s\n", path);
        return 1;
    }
    while (fread(b, 1, 8, f) == 8) {
        if (n == cap) {
            cap *= 2;
            k = (uint64_t *)realloc(k, cap * sizeof *k);
            if (!k) return 1;
        }
        for (k[n] = 0, j = 0; j < 8; j++) k[n] |= (uint64_t)b[j] << (8 * j);
        n++;
    }
    fclose(f);
    /* The exact profile: distinct keys with running counts. */
    sorted = (uint64_t *)malloc((n ? n : 1) * sizeof *sorted);
    x.key = (uint64_t *)malloc((n ? n : 1) * sizeof *x.key);
    x.cum = (uint64_t *)malloc((n ? n : 1) * sizeof *x.cum);
    if (!sorted || !x.key || !x.cum) return 1;
    memcpy(sorted, k, n * sizeof *k);
    qsort(sorted, n, sizeof *sorted, cmp_u64);
    for (i = 0, x.n = 0; i < n; i++) {
        if (!x.n || x.key[x.n - 1] != sorted[i]) x.key[x.n++] = sorted[i];
        x.cum[x.n - 1] = i + 1;
    }
    free(sorted);
    stream = k;
    nstream = n;
    printf("%s: %zu keys, %zu distinct\n\n| stream | config | peak nodes | "
           "deferred | bound/n | hot@10%%: n, mean, max err | hot@1%%: n, "
           "mean, max err |\n|---|---|---|---|---|---|---|\n",
           name, n, x.n);
    rows(name, &x, svg);
    buffer_cut(name, &x);
    r = run(0.10, 512, 0);
    nhot = hwp_rap_hot(r, 0.10, hot, 64);
    printf("hot ranges at 10%% (8KB, eps 10%%): lo-hi, own+cold, with hot "
           "sub-ranges, exact, error\n");
    for (i = 0; i < nhot && i < 64; i++) {
        uint64_t t = hwx_exact_range(&x, hot[i].lo, hot[i].hi);
        printf("  %#llx-%#llx depth %u: %.2f%%, %.2f%%, exact %.2f%%, error "
               "%.3f%%\n",
               (unsigned long long)hot[i].lo, (unsigned long long)hot[i].hi,
               hot[i].depth, 100.0 * (double)hot[i].excl / (double)n,
               100.0 * (double)hot[i].sum / (double)n,
               100.0 * (double)t / (double)n,
               t ? 100.0 * ((double)t - (double)hot[i].sum) / (double)t : 0.0);
    }
    free(r);
    free(k);
    return 0;
}

int main(int argc, char **argv) {
    hwx_exact x;
    int kind;
    unsigned i;
    if (argc >= 4 && !strcmp(argv[1], "--keys")) {
        if (argc > 6) {
            svg_lo = strtoull(argv[5], NULL, 0);
            svg_hi = strtoull(argv[6], NULL, 0);
        }
        return real(argv[2], argv[3], argc > 4 ? argv[4] : NULL);
    }
    printf("| stream | config | peak nodes | deferred | bound/n | hot@10%%: n, "
           "mean, max err | hot@1%%: n, mean, max err |\n|---|---|---|---|---|---|---|\n");
    for (kind = ZIPF; kind <= VALUES; kind++) {
        make(kind, 7);
        for (i = 0; i < N; i++) {
            ev[i].key = keys[i];
            ev[i].weight = 1;
        }
        hwx_exact_build(&x, ev, N);
        rows(names[kind], &x, kind == CODE && argc > 1 ? argv[1] : NULL);
        if (kind == ZIPF) space_saving(&x);
        if (kind == CODE) buffer_cut("the code trace", &x);
        hwx_exact_free(&x);
    }
    return 0;
}
