/* bench/pathprof/phase_score.c: the two online phase detectors scored
 * against reference phases, as Vaswani et al. score theirs (sec. 8.3:
 * SimPoint's offline phases as the baseline; sensitivity, false
 * positives, same-phase accuracy, stability, average phase length).
 *
 * Usage: phase_score TRACE INTERVAL REF_IDS [THRESHOLD_PCT]
 *   TRACE     a recorded trace (docs/trace-format.md); its first vCPU
 *   INTERVAL  instructions per interval, as given to
 *             `hwprof-report --bbv FILE --trace TRACE --interval N`
 *   REF_IDS   one reference phase id per interval, one per line
 *             (bench/pathprof/simpoint.py on that BBV file)
 *   THRESHOLD_PCT  both detectors' Manhattan-distance threshold in % of
 *             INTERVAL, 1..200 (default 60: the paper's optimum, sec. 8.3)
 * Replays the trace through a default path stack feeding the path-based
 * detector (sec. 6) and, beside it, Sherwood et al.'s BBV tracker at the
 * same hardware budget (hwp_phase_bbv_desc), both with INTERVAL and
 * THRESHOLD_PCT; scores each detector's ids against
 * REF_IDS with hwp_phase_score over the intervals all three have, and
 * prints one line per detector with its budget in bytes.
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

int main(int argc, char **argv) {
    struct stat st;
    hwx_trace_reader r;
    hwp_insn in;
    hwp_path p;
    hwp_phase pp, pb;
    hwp_path_desc d;
    hwp_phase_desc dp, db;
    ids ref = {0}, dpath = {0}, dbbv = {0};
    void *mem, *m1, *m2;
    const void *buf;
    uint64_t interval, pct = 60;
    uint32_t vcpu = 0, since = 0;
    int fd, got, started = 0;
    char *end;
    if (argc != 4 && argc != 5) {
        fputs("usage: phase_score TRACE INTERVAL REF_IDS [THRESHOLD_PCT]\n", stderr);
        return 2;
    }
    interval = strtoull(argv[2], &end, 10);
    if (*end || !interval || interval > 0x80000000u) {
        fprintf(stderr, "phase_score: INTERVAL must be 1..2^31 instructions, got '%s'\n",
                argv[2]);
        return 2;
    }
    if (argc == 5) {
        pct = strtoull(argv[4], &end, 10);
        if (*end || !pct || pct > 200) {
            fprintf(stderr, "phase_score: THRESHOLD_PCT must be 1..200, got '%s'\n", argv[4]);
            return 2;
        }
    }
    if (read_ref(argv[3], &ref)) return 2;
    memset(&dp, 0, sizeof dp);
    dp.interval = interval;
    dp.threshold = interval * pct / 100 ? interval * pct / 100 : 1;
    if (hwp_phase_bbv_desc(&dp, &db) != HWP_OK) return 2;
    m1 = init_phase(&pp, &dp, &dpath);
    m2 = init_phase(&pb, &db, &dbbv);
    memset(&d, 0, sizeof d);
    mem = malloc(hwp_path_bytes(&d));
    if (!mem || hwp_path_init(&p, mem, hwp_path_bytes(&d), &d, NULL) != HWP_OK ||
        hwp_path_attach(&p, NULL, &pp) != HWP_OK) {
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
            hwp_phase_add_branch(&pb, in.pc, since);
            since = 0;
        }
    }
    if (got < 0) {
        fprintf(stderr, "phase_score: %s: byte %zu: %s\n", argv[1], r.err_off, r.why);
        return 2;
    }
    hwp_path_flush(&p);
    printf("reference intervals %zu; detector intervals: path %zu, bbv %zu\n", ref.n, dpath.n,
           dbbv.n);
    score("path", &dp, &ref, &dpath);
    score("bbv", &db, &ref, &dbbv);
    free(mem);
    free(m1);
    free(m2);
    free(ref.v);
    free(dpath.v);
    free(dbbv.v);
    munmap((void *)buf, (size_t)st.st_size);
    close(fd);
    return 0;
}
