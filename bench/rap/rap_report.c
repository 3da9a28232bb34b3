/* rap_report [SVG_PATH]: the figures of docs/rap.md that are not timings.
 * For RAP at the paper's 8 KB (and 64 KB) on three synthetic streams of
 * 2^22 events (Zipf over 2^20 distinct 64-bit keys, a basic-block trace,
 * heavy-tailed load values): peak nodes, deferred splits, the
 * a-posteriori bound, and the paper's percent error on hot ranges (sec.
 * 4.3) against the exact profile; Space-Saving's error on the same Zipf
 * stream in the same 8 KB; the stage-0 buffer's cut in tree updates on
 * the code trace (sec. 3.3). With SVG_PATH, writes the code tree at
 * eps = 10% as an SVG (the picture in docs/rap.md). */
#define HWPROF_IMPL
#define HWPROF_STDIO
#include "hwprof/rap.h"

#include <stdio.h>

#include "gen.h"
#include "rap/peers.h"
#include "rap/rap_util.h"

#define N (1u << 22)

static hwx_event ev[N];
static uint64_t keys[N];

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

static hwp_rap *run(double eps, uint32_t nodes, uint32_t buffer) {
    hwp_rap *r;
    hwp_rap_desc d;
    unsigned i;
    memset(&d, 0, sizeof d);
    d.eps = eps;
    d.nodes = nodes;
    d.buffer = buffer;
    r = hwx_rap_new(&d, NULL);
    for (i = 0; i < N; i++) hwp_rap_add(r, keys[i], 1);
    hwp_rap_flush(r);
    return r;
}

static void space_saving(const hwx_exact *x) {
    static ss_tab s;
    unsigned i, hot = 0;
    double sum = 0, mx = 0;
    memset(&s, 0, sizeof s);
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

int main(int argc, char **argv) {
    static const double epss[] = {0.10, 0.01};
    static const uint32_t pools[] = {512, 4096};
    hwx_exact x;
    int kind;
    unsigned e, p, i;
    printf("| stream | config | peak nodes | deferred | bound/n | hot@10%%: n, "
           "mean, max err | hot@1%%: n, mean, max err |\n|---|---|---|---|---|---|---|\n");
    for (kind = ZIPF; kind <= VALUES; kind++) {
        make(kind, 7);
        for (i = 0; i < N; i++) {
            ev[i].key = keys[i];
            ev[i].weight = 1;
        }
        hwx_exact_build(&x, ev, N);
        for (p = 0; p < 2; p++)
            for (e = 0; e < 2; e++) {
                hwp_rap *r = run(epss[e], pools[p], 0);
                hwp_rap_acc a10, a1;
                hwp_rap_accuracy(r, 0.10, hwx_exact_range, &x, &a10);
                hwp_rap_accuracy(r, 0.01, hwx_exact_range, &x, &a1);
                printf("| %-16s | eps=%2.0f%% %2uKB | %u | %llu | %.4f | %u, "
                       "%.3f%%, %.3f%% | %u, %.3f%%, %.3f%% |\n",
                       names[kind], 100 * epss[e], pools[p] / 64, r->peak,
                       (unsigned long long)r->deferred,
                       (double)hwp_rap_bound(r) / (double)r->n, a10.hot,
                       a10.mean_pct, a10.max_pct, a1.hot, a1.mean_pct,
                       a1.max_pct);
                if (a10.violations || a1.violations)
                    printf("BOUND VIOLATED: %llu nodes\n",
                           (unsigned long long)(a10.violations + a1.violations));
                if (kind == CODE && e == 0 && p == 0 && argc > 1) {
                    FILE *f = fopen(argv[1], "w");
                    hwp_writer w = hwp_writer_stdio(f);
                    hwp_rap_write_svg(r, &w);
                    fclose(f);
                }
            }
        if (kind == ZIPF) space_saving(&x);
        if (kind == CODE) {
            hwp_rap *r = run(0.10, 512, 0), *rb = run(0.10, 512, 1024);
            printf("\nstage-0 buffer on the code trace (eps 10%%, 8KB): %u "
                   "events -> %llu tree updates with 1K entries (factor %.1f), "
                   "%llu without\n\n",
                   N, (unsigned long long)rb->updates,
                   (double)N / (double)rb->updates,
                   (unsigned long long)r->updates);
        }
        hwx_exact_free(&x);
    }
    return 0;
}
