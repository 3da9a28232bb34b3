/* bench/pathprof/phase_score.c: the two online phase detectors scored
 * against reference phases, as Vaswani et al. score theirs (sec. 8.3:
 * SimPoint's offline phases as the baseline; sensitivity, false
 * positives, same-phase accuracy, stability, average phase length).
 *
 * Usage: phase_score TRACE INTERVAL REF_IDS [THRESHOLD_PCT[,THRESHOLD_PCT...]]
 *   TRACE     a recorded trace (docs/trace-format.md); its first vCPU
 *   INTERVAL  instructions per interval, as given to
 *             `hwprof-report --bbv FILE --trace TRACE --interval N`
 *   REF_IDS   one reference phase id per interval, one per line
 *             (bench/pathprof/simpoint.py on that BBV file)
 *   THRESHOLD_PCT  both detectors' Manhattan-distance threshold in % of
 *             INTERVAL, 1..200 (default 60: the paper's optimum, sec. 8.3);
 *             a list runs a pair of detectors per threshold in the same
 *             replay (a sweep: the detectors compared at an equal
 *             false-positive rate, bench/pathprof/phase_sweep.py)
 * Replays the trace through a default path stack feeding the path-based
 * detector (sec. 6) and, beside it, Sherwood et al.'s BBV tracker at the
 * same hardware budget (hwp_phase_bbv_desc), both with INTERVAL and
 * THRESHOLD_PCT; scores each detector's ids against
 * REF_IDS with hwp_phase_score over the intervals all three have, and
 * prints one line per detector and threshold with its budget in bytes.
 *
 * Why a replayer and not the hosts: the reference, the BBV file and both
 * detectors must see the same instruction stream. A recorded trace gives
 * that exactly; two live runs (one to write the BBVs, one to score after
 * clustering) differ by their environment and address layout.
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

/* Phase ids per interval of one detector. */
typedef struct ids { uint32_t *v; size_t n, cap; } ids;

static void on_interval(void *ctx, const hwp_phase_interval *r) {
    ids *d = (ids *)ctx;
    if (d->n == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 1024;
        d->v = realloc(d->v, d->cap * sizeof *d->v);
        if (!d->v) { fputs("phase_score: out of memory\n", stderr); exit(2); }
    }
    d->v[d->n++] = r->phase;
}

static void *init_phase(hwp_phase *ph, hwp_phase_desc *d, ids *out) {
    void *mem;
    d->on_interval = on_interval;
    d->ctx = out;
    mem = malloc(hwp_phase_bytes(d));
    if (!mem || hwp_phase_init(ph, mem, hwp_phase_bytes(d), d, NULL) != HWP_OK) {
        fprintf(stderr, "phase_score: %s\n", mem ? hwp_why(ph) : "out of memory");
        exit(2);
    }
    return mem;
}

static int read_ref(const char *file, ids *ref) {
    FILE *f = fopen(file, "r");
    unsigned long v;
    int c;
    if (!f) { perror(file); return -1; }
    while ((c = fscanf(f, "%lu", &v)) == 1) {
        hwp_phase_interval r;
        memset(&r, 0, sizeof r);
        r.phase = (uint32_t)v;
        on_interval(ref, &r);
    }
    fclose(f);
    if (c != EOF) {
        fprintf(stderr, "phase_score: %s: line %zu: expected a phase id\n", file, ref->n + 1);
        return -1;
    }
    return 0;
}

static void score(const char *name, const hwp_phase_desc *d, const ids *ref, const ids *det) {
    hwp_phase_scores s;
    size_t n = ref->n < det->n ? ref->n : det->n;
    if (hwp_phase_score(ref->v, det->v, n, 0, &s) != HWP_OK) {
        printf("%-5s no intervals to score\n", name);
        return;
    }
    printf("%-5s %5zu B  intervals %zu  sensitivity %6.2f  false pos %6.2f  same-phase %6.2f"
           "  stability %6.2f  avg phase %5.2f  (ref changes %llu, flagged %llu)\n",
           name, hwp_phase_hw_bytes(d), n, s.sensitivity, s.false_pos, s.same_phase,
           s.stability, s.avg_phase_len, (unsigned long long)s.ref_changes,
           (unsigned long long)s.det_changes);
}

#define MAX_T 32

/* The path detectors past the first: fed from the stack's path sink
 * with what hwp_path_attach would feed them (the path's instructions). */
static hwp_phase *more_path;
static unsigned n_more;
static void on_path(void *ctx, const hwp_path_rec *r) {
    unsigned i;
    (void)ctx;
    for (i = 0; i < n_more; i++) hwp_phase_add_path(&more_path[i], &r->pd, r->insns);
}

int main(int argc, char **argv) {
    struct stat st;
    hwx_trace_reader r;
    hwp_insn in;
    hwp_path p;
    hwp_phase pp[MAX_T], pb[MAX_T];
    hwp_path_desc d;
    hwp_phase_desc dp[MAX_T], db[MAX_T];
    ids ref = {0}, dpath[MAX_T], dbbv[MAX_T];
    void *mem, *m1[MAX_T], *m2[MAX_T];
    const void *buf;
    uint64_t interval, pct[MAX_T] = {60};
    uint32_t vcpu = 0, since = 0;
    unsigned nt = 1, t;
    int fd, got, started = 0;
    char *end;
    if (argc != 4 && argc != 5) {
        fputs("usage: phase_score TRACE INTERVAL REF_IDS [THRESHOLD_PCT[,...]]\n", stderr);
        return 2;
    }
    interval = strtoull(argv[2], &end, 10);
    if (*end || !interval || interval > 0x80000000u) {
        fprintf(stderr, "phase_score: INTERVAL must be 1..2^31 instructions, got '%s'\n",
                argv[2]);
        return 2;
    }
    if (argc == 5) {
        const char *at = argv[4];
        for (nt = 0;; at = end + 1) {
            pct[nt] = strtoull(at, &end, 10);
            if (end == at || (*end && *end != ',') || !pct[nt] || pct[nt] > 200 ||
                nt == MAX_T) {
                fprintf(stderr,
                        "phase_score: THRESHOLD_PCT must be 1..200 (at most %u, comma-"
                        "separated), got '%s'\n", MAX_T, argv[4]);
                return 2;
            }
            nt++;
            if (!*end) break;
        }
    }
    if (read_ref(argv[3], &ref)) return 2;
    memset(dpath, 0, sizeof dpath);
    memset(dbbv, 0, sizeof dbbv);
    for (t = 0; t < nt; t++) {
        memset(&dp[t], 0, sizeof dp[t]);
        dp[t].interval = interval;
        dp[t].threshold = interval * pct[t] / 100 ? interval * pct[t] / 100 : 1;
        if (hwp_phase_bbv_desc(&dp[t], &db[t]) != HWP_OK) return 2;
        m1[t] = init_phase(&pp[t], &dp[t], &dpath[t]);
        m2[t] = init_phase(&pb[t], &db[t], &dbbv[t]);
    }
    more_path = pp + 1;
    n_more = nt - 1;
    memset(&d, 0, sizeof d);
    if (n_more) d.on_path = on_path;
    mem = malloc(hwp_path_bytes(&d));
    if (!mem || hwp_path_init(&p, mem, hwp_path_bytes(&d), &d, NULL) != HWP_OK ||
        hwp_path_attach(&p, NULL, &pp[0]) != HWP_OK) {
        fputs("phase_score: cannot start the path stack\n", stderr);
        return 2;
    }
    fd = open(argv[1], O_RDONLY);
    memset(&r, 0, sizeof r);
    if (fd < 0 || fstat(fd, &st) != 0) { perror(argv[1]); return 2; }
    buf = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (buf == MAP_FAILED) { perror(argv[1]); return 2; }
    if (hwx_trace_open(&r, buf, (size_t)st.st_size) != HWP_OK) {
        fprintf(stderr, "phase_score: %s: byte %zu: %s\n", argv[1], r.err_off, r.why);
        return 2;
    }
    while ((got = hwx_trace_next(&r, &in)) == 1) {
        if (!started) { vcpu = r.vcpu; hwp_path_begin(&p, in.pc); started = 1; }
        if (r.vcpu != vcpu) continue;
        hwp_path_insn(&p, &in);
        since++;
        if (hwp_cls_is_branch(in.cls)) {
            for (t = 0; t < nt; t++) hwp_phase_add_branch(&pb[t], in.pc, since);
            since = 0;
        }
    }
    if (got < 0) {
        fprintf(stderr, "phase_score: %s: byte %zu: %s\n", argv[1], r.err_off, r.why);
        return 2;
    }
    hwp_path_flush(&p);
    printf("reference intervals %zu; detector intervals: path %zu, bbv %zu\n", ref.n, dpath[0].n,
           dbbv[0].n);
    for (t = 0; t < nt; t++) {
        if (nt > 1) printf("threshold %llu%%\n", (unsigned long long)pct[t]);
        score("path", &dp[t], &ref, &dpath[t]);
        score("bbv", &db[t], &ref, &dbbv[t]);
        free(m1[t]);
        free(m2[t]);
        free(dpath[t].v);
        free(dbbv[t].v);
    }
    free(mem);
    free(ref.v);
    munmap((void *)buf, (size_t)st.st_size);
    close(fd);
    return 0;
}
