/* tests/profileme/fig3_real.c: Fig. 3 of the ProfileMe paper (5.1,
 * convergence of per-PC estimates) reproduced on a real recorded trace.
 *
 *   fig3_real TRACE OUT.svg [S1,S2,...] [SEEDS]
 *
 * TRACE is a file in the format of docs/trace-format.md (the Valgrind
 * tool's or the QEMU plugin's `record=FILE`). One pass over it counts every
 * PC exactly (an open-addressing hash map kept here, independent of the
 * model) and feeds every record through hwp_pm_insn of one sampler per
 * (S, seed), each delivering into its own hwp_pm_table. Then, per PC a
 * sampler saw, the point (k, kS / N) with k its samples and N its exact
 * retire count goes into an SVG scatter per S, with the one-standard-
 * deviation envelope y = 1 +/- 1/sqrt(k) of Fig. 3. The caption and stdout
 * give the fraction of points inside the envelope (PCs with k >= 10, the
 * paper's axis) and hwp_pm_accuracy's figures (envelope on E[k] = N/S,
 * PCs with E[k] >= 10). Host-side tool: uses libc (mmap, stdio), not part
 * of the default test run because it needs a recorded trace. */
#define _POSIX_C_SOURCE 200809L
#define HWPROF_IMPL
#include "hwprof/profileme.h"
#include "hwx.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_S 4
#define MAX_SEEDS 8
#define TABLE_CAP 65536u /* per sampler; samples of S = 1000 fit */
#define MIN_K 10.0       /* points scored for the envelope fraction */
#define Y_MAX 3.0        /* ratios above are drawn on the top edge  */

/* ---- exact per-PC counts ------------------------------------------------ */

typedef struct exact {
    uint64_t *pc, *n;
    uint64_t mask, used;
} exact;

static void exact_init(exact *x, unsigned log2cap) {
    x->mask = ((uint64_t)1 << log2cap) - 1;
    x->used = 0;
    x->pc = calloc(x->mask + 1, sizeof *x->pc);
    x->n = calloc(x->mask + 1, sizeof *x->n);
    if (!x->pc || !x->n) { fprintf(stderr, "fig3_real: out of memory\n"); exit(1); }
}

/* Slot of pc (pc 0 never occurs in a real trace; it marks a free slot). */
static uint64_t exact_slot(const exact *x, uint64_t pc) {
    uint64_t i = (pc * 0x9E3779B97F4A7C15ull) >> 20;
    for (;; i++) {
        i &= x->mask;
        if (x->pc[i] == pc || x->pc[i] == 0) return i;
    }
}

static void exact_add(exact *x, uint64_t pc) {
    uint64_t i = exact_slot(x, pc);
    if (!x->pc[i]) {
        if (++x->used > x->mask / 2) {
            fprintf(stderr, "fig3_real: more distinct PCs than the exact map holds\n");
            exit(1);
        }
        x->pc[i] = pc;
    }
    x->n[i]++;
}

static uint64_t exact_truth(void *ctx, uint64_t pc) {
    const exact *x = ctx;
    uint64_t i = exact_slot(x, pc);
    return x->pc[i] == pc ? x->n[i] : 0;
}

/* ---- one sampler per (S, seed) ------------------------------------------ */

typedef struct run {
    uint32_t S;
    uint64_t seed;
    hwp_pm pm;
    hwp_pm_table tab;
    void *mem[2]; /* the table's and the sampler's storage */
} run;

static void *alloc16(size_t n) {
    void *p = NULL;
    if (posix_memalign(&p, 16, n)) { fprintf(stderr, "fig3_real: out of memory\n"); exit(1); }
    return p;
}

static void run_init(run *r, uint32_t S, uint64_t seed) {
    hwp_pm_table_desc td;
    hwp_pm_desc d;
    size_t tb, pb;
    memset(&td, 0, sizeof td);
    td.capacity = TABLE_CAP;
    td.interval = S;
    tb = hwp_pm_table_bytes(&td);
    r->mem[0] = alloc16(tb);
    if (hwp_pm_table_init(&r->tab, r->mem[0], tb, &td, NULL) != HWP_OK) {
        fprintf(stderr, "fig3_real: table: %s\n", hwp_why(&r->tab));
        exit(1);
    }
    memset(&d, 0, sizeof d);
    d.seed = seed;
    d.interval = S; /* default distribution: uniform, mean S (4.1.1) */
    d.deliver = hwp_pm_table_deliver;
    d.user = &r->tab;
    pb = hwp_pm_bytes(&d);
    r->mem[1] = alloc16(pb);
    if (hwp_pm_init(&r->pm, r->mem[1], pb, &d, NULL) != HWP_OK) {
        fprintf(stderr, "fig3_real: sampler: %s\n", hwp_why(&r->pm));
        exit(1);
    }
    r->S = S;
    r->seed = seed;
}

/* ---- SVG ----------------------------------------------------------------- */

#define PW 420.0 /* panel plot area */
#define PH 300.0
#define ML 60.0
#define MT 50.0
#define GAP 90.0

static const char *const seed_colour[MAX_SEEDS] = {
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd",
    "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

typedef struct panel {
    double x0;    /* left edge of the plot area */
    double lxmax; /* log10 of the x-axis end    */
} panel;

static double px(const panel *p, double k) { return p->x0 + PW * log10(k) / p->lxmax; }
static double py(double y) { return MT + PH * (1.0 - y / Y_MAX); }

static void svg_envelope(FILE *f, const panel *p, double sign) {
    int i, n = 200;
    fprintf(f, "<polyline fill='none' stroke='#000' stroke-width='1.5' points='");
    for (i = 0; i <= n; i++) {
        double k = pow(10.0, p->lxmax * i / n);
        double y = 1.0 + sign / sqrt(k);
        fprintf(f, "%.1f,%.1f ", px(p, k), py(y));
    }
    fprintf(f, "'/>\n");
}

static void svg_axes(FILE *f, const panel *p, uint32_t S) {
    int d;
    double y;
    fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='none' stroke='#444'/>\n",
            p->x0, MT, PW, PH);
    for (d = 0; d <= (int)p->lxmax; d++) {
        double x = px(p, pow(10.0, d));
        fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#ddd'/>\n",
                x, MT, x, MT + PH);
        fprintf(f, "<text x='%.1f' y='%.1f' text-anchor='middle'>10<tspan dy='-6' font-size='9'>%d</tspan></text>\n",
                x, MT + PH + 18, d);
    }
    for (y = 0; y <= Y_MAX + 1e-9; y += 0.5) {
        fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='%s'/>\n",
                p->x0, py(y), p->x0 + PW, py(y), y == 1.0 ? "#999" : "#eee");
        fprintf(f, "<text x='%.1f' y='%.1f' text-anchor='end'>%.1f</text>\n",
                p->x0 - 6, py(y) + 4, y);
    }
    fprintf(f, "<text x='%.1f' y='%.1f' text-anchor='middle'>samples k of the PC (log scale)</text>\n",
            p->x0 + PW / 2, MT + PH + 40);
    fprintf(f, "<text x='%.1f' y='%.1f' text-anchor='middle' transform='rotate(-90 %.1f %.1f)'>estimate kS / actual count</text>\n",
            p->x0 - 40, MT + PH / 2, p->x0 - 40, MT + PH / 2);
    fprintf(f, "<text x='%.1f' y='%.1f' text-anchor='middle' font-weight='bold'>S = %u</text>\n",
            p->x0 + PW / 2, MT - 10, S);
}

/* ---- main ---------------------------------------------------------------- */

typedef struct score {
    uint64_t pts, scored, inside, above; /* observed-k envelope, k >= MIN_K */
    hwp_pm_acc acc;                      /* hwp_pm_accuracy, E[k] >= 10    */
} score;

/* Largest k among the samplers of interval S: the panel's x range. */
static uint64_t max_k(const run *runs, unsigned nr, uint32_t S) {
    uint64_t m = 1;
    unsigned i;
    uint32_t j;
    for (i = 0; i < nr; i++) {
        if (runs[i].S != S) continue;
        for (j = 0; j < runs[i].tab.d.capacity; j++) {
            const hwp_pm_entry *e = hwp_pm_table_at(&runs[i].tab, j);
            if (e && e->samples > m) m = e->samples;
        }
    }
    return m;
}

static score score_run(run *r, exact *x, FILE *svg, const panel *p, const char *colour) {
    score s;
    uint32_t i;
    memset(&s, 0, sizeof s);
    fprintf(svg, "<g fill='%s' fill-opacity='0.45'>\n", colour);
    for (i = 0; i < r->tab.d.capacity; i++) {
        const hwp_pm_entry *e = hwp_pm_table_at(&r->tab, i);
        double k, ratio, y;
        uint64_t n;
        if (!e) continue;
        n = exact_truth(x, e->pc);
        if (!n) { fprintf(stderr, "fig3_real: sampled pc %llx never executed\n",
                          (unsigned long long)e->pc); exit(1); }
        k = (double)e->samples;
        ratio = k * r->S / (double)n;
        s.pts++;
        if (k >= MIN_K) {
            s.scored++;
            if ((ratio - 1.0) * (ratio - 1.0) * k <= 1.0) s.inside++;
        }
        y = ratio;
        if (y > Y_MAX) { y = Y_MAX; s.above++; }
        fprintf(svg, "<circle cx='%.1f' cy='%.1f' r='1.8'/>\n", px(p, k), py(y));
    }
    fprintf(svg, "</g>\n");
    hwp_pm_accuracy(&r->tab, HWP_PM_PROP_RETIRED, exact_truth, x, 10.0, &s.acc);
    return s;
}

static void *map_file(const char *path, size_t *len) {
    struct stat st;
    void *p;
    int fd = open(path, O_RDONLY);
    if (fd < 0 || fstat(fd, &st) != 0) { perror(path); exit(1); }
    *len = (size_t)st.st_size;
    p = mmap(NULL, *len ? *len : 1, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) { perror(path); exit(1); }
    close(fd);
    return p;
}

int main(int argc, char **argv) {
    static run runs[MAX_S * MAX_SEEDS];
    uint32_t S[MAX_S];
    unsigned nS = 0, nseeds = 3, i, j, nr = 0;
    hwx_trace_reader rd;
    hwp_insn in;
    exact x;
    size_t len;
    void *buf;
    int rc;
    FILE *svg;
    double W, H;
    const char *list = argc > 3 ? argv[3] : "1000,10000";
    char *end;

    if (argc < 3) {
        fprintf(stderr, "usage: fig3_real TRACE OUT.svg [S1,S2,...] [SEEDS]\n");
        return 2;
    }
    while (*list && nS < MAX_S) {
        unsigned long v = strtoul(list, &end, 10);
        if (end == list || v < 2 || v > 100000000ul) { fprintf(stderr, "fig3_real: bad S list\n"); return 2; }
        S[nS++] = (uint32_t)v;
        list = *end == ',' ? end + 1 : end;
    }
    if (argc > 4) nseeds = (unsigned)strtoul(argv[4], NULL, 10);
    if (!nS || nseeds < 1 || nseeds > MAX_SEEDS) { fprintf(stderr, "fig3_real: 1..%d seeds\n", MAX_SEEDS); return 2; }

    for (i = 0; i < nS; i++)
        for (j = 0; j < nseeds; j++) run_init(&runs[nr++], S[i], 1 + j);
    exact_init(&x, 22);

    buf = map_file(argv[1], &len);
    if (hwx_trace_open(&rd, buf, len) != HWP_OK) {
        fprintf(stderr, "fig3_real: %s: offset %zu: %s\n", argv[1], rd.err_off, rd.why);
        return 1;
    }
    while ((rc = hwx_trace_next(&rd, &in)) == 1) {
        exact_add(&x, in.pc);
        for (i = 0; i < nr; i++) hwp_pm_insn(&runs[i].pm, &in, 0);
    }
    if (rc < 0) {
        fprintf(stderr, "fig3_real: %s: offset %zu: %s\n", argv[1], rd.err_off, rd.why);
        return 1;
    }
    for (i = 0; i < nr; i++) {
        hwp_pm_flush(&runs[i].pm);
        if (runs[i].tab.dropped || runs[i].pm.st.dropped) {
            fprintf(stderr, "fig3_real: S=%u seed %llu lost samples\n", runs[i].S,
                    (unsigned long long)runs[i].seed);
            return 1;
        }
    }
    printf("trace %s: %llu records, %llu distinct PCs\n", argv[1],
           (unsigned long long)rd.records, (unsigned long long)x.used);

    svg = fopen(argv[2], "w");
    if (!svg) { perror(argv[2]); return 1; }
    W = ML + nS * PW + (nS - 1) * GAP + 30;
    H = MT + PH + 60 + 18.0 * (nS + 3);
    fprintf(svg, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' "
                 "viewBox='0 0 %.0f %.0f' font-family='sans-serif' font-size='12'>\n",
            W, H, W, H);
    fprintf(svg, "<rect width='100%%' height='100%%' fill='#fff'/>\n");
    for (i = 0; i < nS; i++) {
        panel p;
        score tot;
        char line[512];
        memset(&tot, 0, sizeof tot);
        p.x0 = ML + i * (PW + GAP);
        p.lxmax = ceil(log10((double)max_k(runs, nr, S[i]) * 1.2));
        if (p.lxmax < 1) p.lxmax = 1;
        svg_axes(svg, &p, S[i]);
        for (j = 0; j < nr; j++) {
            score s;
            if (runs[j].S != S[i]) continue;
            s = score_run(&runs[j], &x, svg, &p, seed_colour[runs[j].seed - 1]);
            printf("S=%u seed=%llu: %llu PCs sampled, %llu with k>=%.0f, inside 1+/-1/sqrt(k): %.3f;"
                   " hwp_pm_accuracy(E[k]>=10): %llu PCs, in_envelope %.3f, mean_ratio %.4f, weighted_err %.4f\n",
                   S[i], (unsigned long long)runs[j].seed, (unsigned long long)s.pts,
                   (unsigned long long)s.scored, MIN_K,
                   s.scored ? (double)s.inside / s.scored : 0.0,
                   (unsigned long long)s.acc.pcs, s.acc.in_envelope, s.acc.mean_ratio,
                   s.acc.weighted_err);
            tot.pts += s.pts;
            tot.scored += s.scored;
            tot.inside += s.inside;
            tot.above += s.above;
            tot.acc.pcs += s.acc.pcs;
            tot.acc.in_envelope += s.acc.in_envelope * (double)s.acc.pcs;
        }
        for (j = 0; j < nseeds; j++)
            fprintf(svg, "<circle cx='%.1f' cy='%.1f' r='3' fill='%s'/>"
                         "<text x='%.1f' y='%.1f'>seed %u</text>\n",
                    p.x0 + PW - 60, MT + 14 + 15.0 * j, seed_colour[j],
                    p.x0 + PW - 52, MT + 18 + 15.0 * j, j + 1);
        svg_envelope(svg, &p, 1.0);
        svg_envelope(svg, &p, -1.0);
        snprintf(line, sizeof line,
                 "S = %u, %u seeds: %llu points; k &gt;= 10: %.3f inside 1 &#177; 1/&#8730;k "
                 "(%llu/%llu); on E[k] &gt;= 10 (hwp_pm_accuracy): %.3f of %llu; %llu above %.0f drawn at the top",
                 S[i], nseeds, (unsigned long long)tot.pts,
                 tot.scored ? (double)tot.inside / tot.scored : 0.0,
                 (unsigned long long)tot.inside, (unsigned long long)tot.scored,
                 tot.acc.pcs ? tot.acc.in_envelope / (double)tot.acc.pcs : 0.0,
                 (unsigned long long)tot.acc.pcs, (unsigned long long)tot.above, Y_MAX);
        fprintf(svg, "<text x='%.1f' y='%.1f'>%s</text>\n", ML - 40, MT + PH + 70 + 18.0 * i, line);
        printf("S=%u pooled: k>=10 inside %.3f (%llu/%llu); E[k]>=10 inside %.3f of %llu\n", S[i],
               tot.scored ? (double)tot.inside / tot.scored : 0.0,
               (unsigned long long)tot.inside, (unsigned long long)tot.scored,
               tot.acc.pcs ? tot.acc.in_envelope / (double)tot.acc.pcs : 0.0,
               (unsigned long long)tot.acc.pcs);
    }
    fprintf(svg, "<text x='%.1f' y='%.1f'>Per-PC retire-count estimates (ProfileMe Fig. 3, left column) on a real trace: "
                 "%llu instructions, %llu distinct PCs. One dot per PC and seed (colour = seed);</text>\n",
            ML - 40, MT + PH + 70 + 18.0 * nS, (unsigned long long)rd.records,
            (unsigned long long)x.used);
    fprintf(svg, "<text x='%.1f' y='%.1f'>black curves: y = 1 &#177; 1/&#8730;k, one standard deviation; "
                 "about two thirds of the points are expected inside.</text>\n",
            ML - 40, MT + PH + 70 + 18.0 * (nS + 1));
    fprintf(svg, "</svg>\n");
    if (fclose(svg) != 0) { perror(argv[2]); return 1; }
    for (i = 0; i < nr; i++) {
        free(runs[i].mem[0]);
        free(runs[i].mem[1]);
    }
    free(x.pc);
    free(x.n);
    munmap(buf, len ? len : 1);
    return 0;
}
