/* bench/pathprof/hpt_sim.c: Hot Path Table replacement experiments on the
 * path stream of a recorded program (docs/pathprof.md, "Real programs").
 *
 * hwprof-replay measures the HPT the model implements (LFU or LRU, at most
 * 256 ways). This tool measures tables the model does not offer, on the
 * same path stream: it reads a trace (docs/trace-format.md) and feeds every
 * record of its first vCPU through a default path stack (BL, 32 entries,
 * drop; hwp_path_insn from the first pc, flushed at the end, as
 * hwx_session does), keeps the completed paths, and replays them into
 *   ways  512xW LFU for W = 1..512 (512: fully associative). For W <= 256
 *        the library's hwp_hpt runs on the same stream beside the
 *        simulator; both overlaps are printed, and every simulated entry
 *        must hold the accumulator hwp_hpt_lookup reports (exit 1 if not):
 *        the simulator's LFU is the model's, so its other figures can be
 *        trusted.
 *  age   a replacement priority halved every P paths beside exact
 *        accumulators (at 4, 16 and 512 ways), then LFUDA (a newcomer's
 *        priority starts at the last victim's, "dynamic aging" as in web
 *        caches) beside LFU at 2..512 ways, with the library's policy
 *        aging (LFUDA) beside the simulator's at up to 256 ways; and the
 *        library's policy decay (Misra-Gries per set) beside its
 *        simulation, at the same ways; then `dynamic`.
 *  dynamic  the paper's dynamic overlap (sec. 8.1) of the library's
 *        512x4 table under LFU, aging and decay: emptied at each window
 *        of 100M (the paper's), 10M and 1M instructions, scored against
 *        that window's exact paths, the mean over whole windows.
 *  diag  where the overlap goes at 512x4 (LFU and LFUDA), the paths above n/512 (all
 *        that a one-pass table of 512 counters is sure to hold), and when the exact
 *        top-512 paths first appear (tenths of the path stream).
 *  paths the path population: how paths end (a back-edge, an indirect
 *        jump, a return, the split at the maximum length, the final
 *        flush), their share of the path executions and their distinct
 *        paths; then, per tenth of the stream and for its second half,
 *        the distinct paths and the perfect 512-entry table of that
 *        part alone (what a flat whole-run profile is made of).
 * Overlap (Vaswani et al. sec. 8.1) is hwp_path_overlap against the exact counts
 * of the same path stream. The hosts' exact profile comes from their own
 * unbounded stack, which also counts paths the model's 32-entry stack
 * drops, so their figures may differ from these in the second decimal.
 *
 * Usage: hpt_sim TRACE [ways|age|dynamic|diag|paths]
 *        hpt_sim --selftest   the dynamic overlap on a stream scored by hand,
 *                             then `ways` on a seeded Zipf(1.0) stream of 40,000
 *                             paths over 4,096 (the unit test: the simulator
 *                             must keep the library's entries at 1-256 ways)
 * A host-side tool (stdio, malloc, mmap), not part of the library. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define HWPROF_IMPL
#include "hwprof/pathprof.h"
#include "hwx.h"
#include "gen.h"

#define SIM_ENTRIES 512u

/* The path stream, then its distinct paths: ids[i] names path i. */
static hwp_path_pd *stream;
static uint32_t n, cap, *ids, U;
/* Instructions (trace records) retired when path i completed, and so far. */
static uint64_t *at, fed;
/* How path i ended (END_*), from the record that completed it. */
enum { END_BACK, END_IND, END_RET, END_SPLIT, END_FLUSH, END_N };
static uint8_t *ends;
static const hwp_insn *cur; /* the record being fed; NULL while flushing */
static hwp_path_row *exact; /* U rows: each distinct path and its count */
static hwp_path_row *scratch; /* a copy of exact: hwp_path_overlap sorts */

static void keep(const hwp_path_pd *pd) {
    if (n == cap) {
        cap = cap ? 2 * cap : 1u << 20;
        stream = realloc(stream, (size_t)cap * sizeof *stream);
        ends = realloc(ends, cap);
        at = realloc(at, (size_t)cap * sizeof *at);
        if (!stream || !ends || !at) { fputs("hpt_sim: out of memory\n", stderr); exit(2); }
    }
    /* BL paths (Table 1) end at a back-edge, an indirect jump or a
     * return; any other completion is the split at max_len */
    ends[n] = !cur                             ? END_FLUSH
              : cur->cls == HWP_CLS_RET      ? END_RET
              : cur->cls == HWP_CLS_INDIRECT ? END_IND
              : cur->next_pc <= cur->pc      ? END_BACK
                                             : END_SPLIT;
    at[n] = fed;
    stream[n++] = *pd;
}
static void on_path(void *ctx, const hwp_path_rec *r) {
    (void)ctx;
    keep(&r->pd);
}

/* A synthetic stream for the self-test: rank k is a path of 1-8
 * branches from one of 512 starts, so sets see hot and cold paths. */
static void synth(void) {
    hwp_rng r;
    hwg_zipf z;
    uint32_t i;
    hwp_rng_seed(&r, 3);
    hwg_zipf_init(&z, 4096, 1.0);
    for (i = 0; i < 40000; i++) {
        uint64_t k = hwg_zipf_next(&z, &r);
        hwp_path_pd pd;
        pd.start = 0x400000u + (k & 511u) * 64u;
        pd.shape = (2u << (k >> 9)) | (k >> 3 & 1u);
        fed += 10;
        keep(&pd);
    }
}

static int cmp_pd(const hwp_path_pd *x, const hwp_path_pd *y) {
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->shape != y->shape) return x->shape < y->shape ? -1 : 1;
    return 0;
}
static int cmp_idx(const void *a, const void *b) {
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    return cmp_pd(&stream[i], &stream[j]);
}
static int cmp_desc(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

static int read_trace(const char *file) {
    struct stat st;
    hwx_trace_reader r;
    hwp_insn in;
    hwp_path p;
    hwp_path_stats ps = {0};
    hwp_path_desc d;
    void *mem;
    const void *buf;
    uint32_t vcpu = 0;
    uint64_t other = 0;
    int fd = open(file, O_RDONLY), got, started = 0;
    memset(&r, 0, sizeof r);
    if (fd < 0 || fstat(fd, &st) != 0) { perror(file); return -1; }
    buf = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (buf == MAP_FAILED) { perror(file); return -1; }
    memset(&d, 0, sizeof d);
    d.on_path = on_path;
    mem = malloc(hwp_path_bytes(&d));
    if (!mem || hwp_path_init(&p, mem, hwp_path_bytes(&d), &d, NULL) != HWP_OK ||
        hwx_trace_open(&r, buf, (size_t)st.st_size) != HWP_OK) {
        fprintf(stderr, "hpt_sim: %s: cannot start (%s)\n", file, r.why ? r.why : "init");
        return -1;
    }
    while ((got = hwx_trace_next(&r, &in)) == 1) {
        if (!started) { vcpu = r.vcpu; hwp_path_begin(&p, in.pc); started = 1; }
        if (r.vcpu != vcpu) { other++; continue; }
        cur = &in;
        fed++;
        hwp_path_insn(&p, &in);
    }
    cur = NULL;
    if (got < 0) { fprintf(stderr, "hpt_sim: %s at %zu\n", r.why, r.err_off); return -1; }
    hwp_path_flush(&p);
    hwp_path_get_stats(&p, &ps);
    printf("records %llu (vCPU %u; %llu of other vCPUs skipped), paths %u, ignored %llu\n",
           (unsigned long long)r.records, vcpu, (unsigned long long)other, n,
           (unsigned long long)ps.dropped);
    free(mem);
    munmap((void *)buf, (size_t)st.st_size);
    close(fd);
    return 0;
}

/* Distinct paths by sorting an index of the stream. */
static void count_exact(void) {
    uint32_t *ix = malloc((size_t)n * sizeof *ix), i;
    ids = malloc((size_t)n * sizeof *ids);
    exact = malloc((size_t)n * sizeof *exact);
    scratch = malloc((size_t)n * sizeof *scratch);
    if (!ix || !ids || !exact || !scratch) { fputs("hpt_sim: out of memory\n", stderr); exit(2); }
    for (i = 0; i < n; i++) ix[i] = i;
    qsort(ix, n, sizeof *ix, cmp_idx);
    for (i = 0; i < n; i++) {
        if (!i || cmp_pd(&stream[ix[i]], &stream[ix[i - 1]])) {
            exact[U].pd = stream[ix[i]];
            exact[U++].count = 0;
        }
        ids[ix[i]] = U - 1;
        exact[U - 1].count++;
    }
    free(ix);
}

/* Count of the k-th hottest distinct path (k >= 1), and the flow share
 * of the top k (a perfect table of k entries). */
static uint64_t kth(uint32_t k, double *top_pct) {
    uint64_t *c = malloc((size_t)U * sizeof *c), t, sum = 0;
    uint32_t i;
    for (i = 0; i < U; i++) c[i] = exact[i].count;
    qsort(c, U, sizeof *c, cmp_desc);
    if (k > U) k = U;
    for (i = 0; i < k; i++) sum += c[i];
    t = c[k - 1];
    free(c);
    if (top_pct) *top_pct = 100.0 * (double)sum / n;
    return t;
}

/* The simulated table: SIM_ENTRIES entries, `ways` per set, the set of a
 * path chosen like the model's plb index (hwp_path_index on start ^
 * shape). acc is the exact accumulator; pri the replacement priority:
 *   AGE 0   plain LFU (pri = acc): the model's policy
 *   AGE P   pri halved every P paths
 *   LFUDA   a newcomer's pri is 1 + the last victim's pri
 *   DECAY   a miss in a full set lowers every pri by 1; the newcomer
 *           takes the first way at 0 (pri 1) or is left out */
#define LFUDA UINT64_MAX
#define DECAY (UINT64_MAX - 1)
typedef struct sim_ent { uint32_t id, acc, pri, valid; } sim_ent;

static sim_ent *simulate(uint32_t ways, uint64_t age) {
    uint32_t mask = SIM_ENTRIES / ways - 1, i, w, last = 0;
    sim_ent *t = calloc(SIM_ENTRIES, sizeof *t);
    if (!t) { fputs("hpt_sim: out of memory\n", stderr); exit(2); }
    for (i = 0; i < n; i++) {
        uint32_t id = ids[i];
        sim_ent *set = t + (size_t)hwp_path_index(stream[i].start ^ stream[i].shape, mask) * ways,
                *v = set;
        for (w = 0; w < ways && !(set[w].valid && set[w].id == id); w++) {}
        if (w < ways) {
            set[w].acc++;
            set[w].pri++;
        } else if (age == DECAY) {
            for (w = 0; w < ways && set[w].valid; w++) {}
            if (w == ways) { /* full: every priority drops, the first at 0 goes */
                for (v = NULL, w = 0; w < ways; w++) {
                    set[w].pri -= set[w].pri != 0;
                    if (!set[w].pri && !v) v = set + w;
                }
                if (!v) continue;
            } else {
                v = set + w;
            }
            v->valid = 1;
            v->id = id;
            v->acc = v->pri = 1;
        } else {
            /* empty ways first, then the smallest priority, lowest way on
             * ties (the model's LFU victim, Vaswani et al. sec. 5) */
            for (w = 0; w < ways; w++) {
                if (!set[w].valid) { v = set + w; break; }
                if (set[w].pri < v->pri) v = set + w;
            }
            if (age == LFUDA && v->valid) last = v->pri;
            v->valid = 1;
            v->id = id;
            v->acc = 1;
            v->pri = (age == LFUDA ? last : 0) + 1;
        }
        if (age && age < DECAY && (i + 1) % age == 0)
            for (w = 0; w < SIM_ENTRIES; w++) t[w].pri >>= 1;
    }
    return t;
}

/* Overlap of table rows with the exact profile. */
static double overlap(hwp_path_row *rows, uint32_t k) {
    memcpy(scratch, exact, (size_t)U * sizeof *exact);
    return hwp_path_overlap(rows, k, scratch, U);
}

/* Overlap of a simulated table with the exact profile. */
static double sim_overlap(const sim_ent *t) {
    hwp_path_row rows[SIM_ENTRIES];
    uint32_t w, k = 0;
    for (w = 0; w < SIM_ENTRIES; w++)
        if (t[w].valid) {
            rows[k].pd = exact[t[w].id].pd;
            rows[k++].count = t[w].acc;
        }
    return overlap(rows, k);
}

/* The library's table on the same stream: its overlap, and whether every
 * simulated entry holds the accumulator the library's table holds. */
static double lib_overlap(uint32_t ways, uint64_t age, const sim_ent *t, int *same) {
    hwp_hpt h;
    hwp_hpt_desc d;
    hwp_path_row rows[SIM_ENTRIES];
    void *mem;
    uint32_t i, valid = 0, k;
    double ov;
    memset(&d, 0, sizeof d);
    d.entries = SIM_ENTRIES;
    d.ways = ways;
    if (age) d.policy = age == DECAY ? HWP_HPT_DECAY : HWP_HPT_AGING; /* LFUDA */
    mem = malloc(hwp_hpt_bytes(&d));
    if (!mem || hwp_hpt_init(&h, mem, hwp_hpt_bytes(&d), &d, NULL) != HWP_OK) exit(2);
    for (i = 0; i < n; i++) hwp_hpt_add(&h, &stream[i], 1);
    for (i = 0; i < SIM_ENTRIES; i++)
        if (t[i].valid) valid++;
    k = (uint32_t)hwp_hpt_export(&h, rows, SIM_ENTRIES);
    *same = k == valid;
    for (i = 0; i < SIM_ENTRIES; i++)
        if (t[i].valid && hwp_hpt_lookup(&h, &exact[t[i].id].pd) != t[i].acc) *same = 0;
    ov = overlap(rows, k);
    free(mem);
    return ov;
}

/* The paper's dynamic overlap percentage (sec. 8.1): the profiler enabled
 * for one window of `win` instructions at a time, so the table starts
 * empty (hwp_hpt_reset) at each window, and its rows are scored against
 * that window's exact profile; the mean over the whole windows (a path
 * belongs to the window its last instruction retires in; a trailing
 * partial window is left out, as the paper's windows are all 100M). Also
 * the mean perfect table of as many entries per window (*perfect).
 * Returns the mean, or -1 with no whole window. */
static double dyn_overlap(uint32_t entries, uint32_t ways, uint32_t policy, uint64_t win,
                          uint32_t *windows, double *perfect) {
    hwp_hpt h;
    hwp_hpt_desc d;
    uint64_t whole = fed / win, w, *cnt = calloc(U, sizeof *cnt);
    uint64_t *top = malloc((size_t)U * sizeof *top);
    hwp_path_row *rows = malloc((size_t)entries * sizeof *rows);
    uint32_t *seen = malloc((size_t)U * sizeof *seen), i = 0;
    double sum = 0, best = 0;
    void *mem;
    memset(&d, 0, sizeof d);
    d.entries = entries;
    d.ways = ways;
    d.policy = policy;
    mem = malloc(hwp_hpt_bytes(&d));
    if (!cnt || !top || !rows || !seen || !mem ||
        hwp_hpt_init(&h, mem, hwp_hpt_bytes(&d), &d, NULL) != HWP_OK) {
        fputs("hpt_sim: out of memory\n", stderr);
        exit(2);
    }
    for (w = 0; w < whole; w++) {
        uint32_t m = 0, j, k;
        uint64_t tot = 0, held = 0;
        hwp_hpt_reset(&h);
        for (; i < n && (at[i] - 1) / win == w; i++) {
            hwp_hpt_add(&h, &stream[i], 1);
            if (!cnt[ids[i]]++) seen[m++] = ids[i];
        }
        for (j = 0; j < m; j++) { /* the window's exact profile */
            scratch[j].pd = exact[seen[j]].pd;
            top[j] = scratch[j].count = cnt[seen[j]];
            tot += cnt[seen[j]];
            cnt[seen[j]] = 0;
        }
        k = (uint32_t)hwp_hpt_export(&h, rows, entries);
        sum += hwp_path_overlap(rows, k < entries ? k : entries, scratch, m);
        qsort(top, m, sizeof *top, cmp_desc);
        for (j = 0; j < m && j < entries; j++) held += top[j];
        best += tot ? 100.0 * (double)held / (double)tot : 0;
    }
    free(mem);
    free(cnt);
    free(top);
    free(rows);
    free(seen);
    *windows = (uint32_t)whole;
    *perfect = whole ? best / (double)whole : -1;
    return whole ? sum / (double)whole : -1;
}

static int run_ways(void) {
    uint32_t ways;
    int bad = 0;
    for (ways = 1; ways <= SIM_ENTRIES; ways *= 2) {
        sim_ent *t = simulate(ways, 0);
        printf("512x%-3u LFU  simulator %6.2f", ways, sim_overlap(t));
        if (ways <= 256) {
            int same;
            double lib = lib_overlap(ways, 0, t, &same);
            printf("  hwp_hpt %6.2f  %s", lib, same ? "same entries" : "DIFFERENT ENTRIES");
            bad |= !same;
        }
        putchar('\n');
        free(t);
    }
    for (ways = 4; ways <= 16; ways *= 4) { /* the library's aging is LFUDA */
        sim_ent *t = simulate(ways, LFUDA), *u = simulate(ways, DECAY);
        int same, same_d;
        double lib = lib_overlap(ways, LFUDA, t, &same), lib_d = lib_overlap(ways, DECAY, u, &same_d);
        printf("512x%-3u LFUDA simulator %6.2f  hwp_hpt aging %6.2f  %s\n", ways,
               sim_overlap(t), lib, same ? "same entries" : "DIFFERENT ENTRIES");
        printf("512x%-3u decay simulator %6.2f  hwp_hpt decay %6.2f  %s\n", ways,
               sim_overlap(u), lib_d, same_d ? "same entries" : "DIFFERENT ENTRIES");
        bad |= !same || !same_d;
        free(t);
        free(u);
    }
    return bad;
}

/* The dynamic overlap at 512x4 for each policy, at the paper's window
 * (100M instructions) and at shorter ones: the paper's runs were 150 of
 * its windows long, the corpus runs are one or a few. */
static void run_dynamic(void) {
    static const uint64_t wins[] = {100000000, 10000000, 1000000};
    static const uint32_t pol[] = {HWP_HPT_PLAIN, HWP_HPT_AGING, HWP_HPT_DECAY};
    unsigned j, k;
    for (j = 0; j < sizeof wins / sizeof *wins; j++) {
        uint32_t nw = 0;
        double perfect = -1, ov[3];
        for (k = 0; k < 3; k++) ov[k] = dyn_overlap(SIM_ENTRIES, 4, pol[k], wins[j], &nw, &perfect);
        if (!nw) {
            printf("dynamic 512x4 window %llu: no whole window (%llu instructions)\n",
                   (unsigned long long)wins[j], (unsigned long long)fed);
            continue;
        }
        printf("dynamic 512x4 window %llu: windows %u  LFU %6.2f  aging %6.2f  decay %6.2f  "
               "perfect %6.2f\n",
               (unsigned long long)wins[j], nw, ov[0], ov[1], ov[2], perfect);
    }
}

static void run_age(void) {
    static const uint64_t periods[] = {4096, 65536, 1048576};
    static const uint32_t wl[] = {4, 16, SIM_ENTRIES};
    uint32_t ways;
    unsigned j, k;
    for (j = 0; j < sizeof periods / sizeof *periods; j++) {
        printf("age/%-8llu", (unsigned long long)periods[j]);
        for (k = 0; k < 3; k++) {
            sim_ent *t = simulate(wl[k], periods[j]);
            printf("  512x%-3u %6.2f", wl[k], sim_overlap(t));
            free(t);
        }
        putchar('\n');
    }
    for (ways = 2; ways <= SIM_ENTRIES; ways *= 2) {
        sim_ent *t = simulate(ways, LFUDA), *u = simulate(ways, 0), *x = simulate(ways, DECAY);
        printf("512x%-3u LFUDA %6.2f  LFU %6.2f", ways, sim_overlap(t), sim_overlap(u));
        if (ways <= 256) { /* the library's policies on the same stream */
            int same, same_d;
            double lib = lib_overlap(ways, LFUDA, t, &same);
            double lib_d = lib_overlap(ways, DECAY, x, &same_d);
            printf("  hwp_hpt aging %6.2f%s  hwp_hpt decay %6.2f%s", lib,
                   same ? "" : " DIFFERENT ENTRIES", lib_d, same_d ? "" : " DIFFERENT ENTRIES");
        }
        putchar('\n');
        free(t);
        free(u);
        free(x);
    }
}

/* Where a 512x4 table's overlap goes, under LFU and under LFUDA: how
 * many entries hold an exact top-512 path, and the share lost by
 * residents counted only since their last entry (evicted and admitted
 * again, or admitted late); the rest of the gap to the perfect table is
 * top-512 paths not resident at the end. */
static void diag_table(const char *name, uint64_t age) {
    uint64_t thr = kth(SIM_ENTRIES, NULL);
    sim_ent *t = simulate(4, age);
    uint32_t w, top = 0, other = 0, small = 0, partial = 0;
    double lost = 0;
    for (w = 0; w < SIM_ENTRIES; w++) {
        uint64_t c;
        if (!t[w].valid) continue;
        c = exact[t[w].id].count;
        if (c >= thr) top++;
        else {
            other++;
            small += t[w].acc <= 16;
        }
        if (t[w].acc < c) {
            partial++;
            lost += (double)(c - t[w].acc) / n;
        }
    }
    printf("512x4 %-5s: overlap %.2f; entries holding an exact top-512 path %u, others %u "
           "(accumulator <= 16: %u)\n  residents counted partly %u, their missing share %.2f "
           "points\n",
           name, sim_overlap(t), top, other, small, partial, 100 * lost);
    free(t);
}

static void run_diag(void) {
    uint64_t thr = kth(SIM_ENTRIES, NULL);
    uint32_t i, tenth[10] = {0}, above = 0;
    double share[10] = {0}, above_share = 0;
    char *seen = calloc(U, 1);
    diag_table("LFU", 0);
    diag_table("LFUDA", LFUDA);
    /* A one-pass table of k counters is sure to hold only the paths above
     * n / k (Misra and Gries; Metwally et al.'s Space-Saving): how much of
     * the perfect table that guarantee covers. */
    for (i = 0; i < U; i++)
        if (exact[i].count * SIM_ENTRIES > n) {
            above++;
            above_share += (double)exact[i].count / n;
        }
    printf("  paths above n/%u (what any one-pass %u-counter table is sure to hold): %u, "
           "%.2f%% of the flow\n", SIM_ENTRIES, SIM_ENTRIES, above, 100 * above_share);
    for (i = 0; i < n; i++)
        if (!seen[ids[i]]) {
            seen[ids[i]] = 1;
            if (exact[ids[i]].count >= thr) {
                tenth[(uint64_t)i * 10 / n]++;
                share[(uint64_t)i * 10 / n] += (double)exact[ids[i]].count / n;
            }
        }
    for (i = 0; i < 10; i++)
        printf("  tenth %u of the paths: %u top-512 paths first seen, %.2f%% of the flow\n", i,
               tenth[i], 100 * share[i]);
    free(seen);
}

/* Distinct paths in stream[lo, hi) and the share of that part's path
 * executions held by its own 512 hottest paths. */
static uint32_t part(uint32_t lo, uint32_t hi, double *top_pct) {
    uint64_t *c = calloc(U, sizeof *c), sum = 0;
    uint32_t i, d = 0;
    if (!c) { fputs("hpt_sim: out of memory\n", stderr); exit(2); }
    for (i = lo; i < hi; i++) c[ids[i]]++;
    for (i = 0; i < U; i++)
        if (c[i]) c[d++] = c[i];
    qsort(c, d, sizeof *c, cmp_desc);
    for (i = 0; i < d && i < SIM_ENTRIES; i++) sum += c[i];
    *top_pct = hi > lo ? 100.0 * (double)sum / (hi - lo) : 0;
    free(c);
    return d;
}

static void run_paths(void) {
    static const char *const name[END_N] = {"back-edge", "indirect jump", "return",
                                            "split at max_len", "flush at exit"};
    uint64_t execs[END_N] = {0};
    uint32_t distinct[END_N] = {0}, i, k;
    char *seen = calloc(U, 1);
    double top;
    if (!seen) { fputs("hpt_sim: out of memory\n", stderr); exit(2); }
    for (i = 0; i < n; i++) {
        execs[ends[i]]++;
        if (!seen[ids[i]]) {
            seen[ids[i]] = 1;
            distinct[ends[i]]++;
        }
    }
    for (k = 0; k < END_N; k++)
        printf("  ends: %-16s %6.2f%% of path executions, %6u distinct paths\n", name[k],
               100.0 * (double)execs[k] / n, distinct[k]);
    for (k = 0; k < 10; k++) {
        uint32_t lo = (uint32_t)((uint64_t)n * k / 10), hi = (uint32_t)((uint64_t)n * (k + 1) / 10);
        uint32_t d = part(lo, hi, &top);
        printf("  tenth %u of the stream: %6u distinct paths, its own top 512 hold %6.2f%%\n", k, d,
               top);
    }
    i = part(n / 2, n, &top);
    printf("  second half: %u distinct paths, its own top 512 hold %.2f%%\n", i, top);
    free(seen);
}

/* The dynamic overlap on a stream small enough to score by hand: paths
 * A A A B C C completing at instructions 10..60, a 2-entry, 2-way LFU
 * table. Windows of 30: {A A A}, then {B C C}, which the emptied table
 * holds whole: 100 and 100. (Not emptied, it would keep A:3 and let C
 * replace B: shares 3/5 and 2/5 against B 1/3, C 2/3, 40.) Windows of
 * 25: {A A}, 100; {A B C}, where C replaces A (lowest way on a tie):
 * B:1, C:1 against thirds, 66.67; the partial {C} is left out: mean
 * 83.33 (88.89 if it counted). The complete overlap of the run (A:3, C:2
 * against A 1/2, B 1/6, C 1/3) would be 83.33 too, from other shares. */
static int hand_case(void) {
    static const uint64_t key[] = {1, 1, 1, 2, 3, 3};
    uint32_t i, nw, nw2;
    double p, a, b;
    int bad;
    for (i = 0; i < 6; i++) {
        hwp_path_pd pd;
        pd.start = 0x1000 * key[i];
        pd.shape = 2;
        fed = 10 * (i + 1);
        keep(&pd);
    }
    count_exact();
    a = dyn_overlap(2, 2, HWP_HPT_PLAIN, 30, &nw, &p);
    b = dyn_overlap(2, 2, HWP_HPT_PLAIN, 25, &nw2, &p);
    bad = nw != 2 || nw2 != 2 || a < 99.99 || b < 83.33 || b > 83.34;
    printf("hand case: dynamic overlap %.2f over %u windows of 30 (100.00 expected), %.2f over "
           "%u of 25 (83.33)%s\n",
           a, nw, b, nw2, bad ? " WRONG" : "");
    free(ids);
    free(exact);
    free(scratch);
    n = U = 0;
    fed = 0;
    return bad;
}

int main(int argc, char **argv) {
    const char *what = argc > 2 ? argv[2] : "ways";
    double p512, p2048;
    int self = argc == 2 && !strcmp(argv[1], "--selftest");
    if (argc < 2 || (strcmp(what, "ways") && strcmp(what, "age") && strcmp(what, "diag") &&
                     strcmp(what, "paths") && strcmp(what, "dynamic"))) {
        fputs("usage: hpt_sim TRACE [ways|age|dynamic|diag|paths] | hpt_sim --selftest\n", stderr);
        return 2;
    }
    if (self && hand_case()) return 1;
    if (self) synth();
    else if (read_trace(argv[1]) != 0) return 2;
    if (!n) { fputs("hpt_sim: no paths\n", stderr); return 2; }
    count_exact();
    kth(SIM_ENTRIES, &p512);
    kth(2048, &p2048);
    printf("distinct paths %u; perfect 512-entry table %.2f, 2048 %.2f\n", U, p512, p2048);
    if (self && U <= SIM_ENTRIES) return 1; /* no replacement to compare */
    if (!strcmp(what, "ways")) return run_ways();
    if (!strcmp(what, "age")) {
        run_age();
        run_dynamic();
    }
    else if (!strcmp(what, "dynamic")) run_dynamic();
    else if (!strcmp(what, "paths")) run_paths();
    else run_diag();
    return 0;
}
