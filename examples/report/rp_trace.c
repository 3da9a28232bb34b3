/* examples/report/rp_trace.c: --chrome-trace FILE, the report's timelines
 * in the Trace Event Format (Google's "Trace Event Format" document, read
 * by Perfetto's UI, chrome://tracing and speedscope): a JSON object whose
 * "traceEvents" array holds complete events (ph "X": ts and dur), instant
 * events ("i", scope "t": one thread), counters ("C": args are the
 * series) and metadata ("M": process_name, thread_name).
 *
 * The clock is the guest's instructions: a timestamp, which the format
 * counts in microseconds, is a count of retired instructions (said in
 * "otherData" and the process name, so a reader of "1 s" knows it means
 * a million instructions).
 *
 * What the saved reports hold over time is the phase of every interval of
 * the path profiler's detector (phase_ids) and, with exact=on, of the
 * reference BBV detector (bbv_ids), and with timeline=N the models'
 * counters at evenly spaced points ("timeline"). Each file given is a
 * process (pid N for the N-th file: a vCPU, thread or run of its own, on
 * its own clock from 0) and each detector a track of it (tid 1 and 2): one
 * complete event per run of intervals in one phase, an instant event
 * where the phase changes, and a counter of the phase id; each model's
 * counters are one counter track per model ("rap": splits, merges,
 * events), each point giving what its interval added. */
#define _GNU_SOURCE
#include "rp_out.h"

#include <stdlib.h>
#include <string.h>

/* One detector's track of one file: its runs, changes and counter. */
static void rp__track(FILE *f, unsigned pid, unsigned tid, const char *what, const uint32_t *id,
                      size_t n, uint64_t len) {
    size_t i = 0, j;
    if (!n) return;
    fprintf(f, ",\n{\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"thread_name\","
               "\"args\":{\"name\":\"%s phase detector\"}}", pid, tid, what);
    while (i < n) {
        for (j = i + 1; j < n && id[j] == id[i]; j++) continue;
        if (i)
            fprintf(f, ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":%u,\"tid\":%u,\"ts\":%llu,"
                       "\"name\":\"phase change\",\"args\":{\"from\":%u,\"to\":%u}}",
                    pid, tid, (unsigned long long)(i * len), id[i - 1], id[i]);
        fprintf(f, ",\n{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":%llu,\"dur\":%llu,"
                   "\"name\":\"phase %u\",\"cat\":\"%s\",\"args\":{\"phase\":%u,"
                   "\"first_interval\":%zu,\"intervals\":%zu}}",
                pid, tid, (unsigned long long)(i * len), (unsigned long long)((j - i) * len),
                id[i], what, id[i], i, j - i);
        fprintf(f, ",\n{\"ph\":\"C\",\"pid\":%u,\"ts\":%llu,\"name\":\"%s phase\","
                   "\"args\":{\"phase\":%u}}",
                pid, (unsigned long long)(i * len), what, id[i]);
        i = j;
    }
}

/* One file's counters over time, points [t0, t1): per model (the
 * counters' prefix, "rap" of "rap.splits") a counter event at the start
 * of each interval with what the interval added to each counter. */
static void rp__counters(FILE *f, const rp_set *s, unsigned pid, size_t t0, size_t t1) {
    size_t p, w = 1 + s->tl_cols;
    unsigned c, g;
    for (g = 0; g < s->tl_cols; g = c) {
        size_t plen = strcspn(s->tl_names[g], ".");
        for (c = g; c < s->tl_cols && !strncmp(s->tl_names[c], s->tl_names[g], plen + 1); c++) {}
        for (p = t0; p < t1; p++) {
            const uint64_t *row = s->tl + p * w, *prev = p > t0 ? row - w : NULL;
            unsigned k;
            fprintf(f, ",\n{\"ph\":\"C\",\"pid\":%u,\"ts\":%llu,\"name\":\"%.*s\",\"args\":{",
                    pid, (unsigned long long)(prev ? prev[0] : 0), (int)plen, s->tl_names[g]);
            for (k = g; k < c; k++)
                fprintf(f, "%s\"%s\":%llu", k > g ? "," : "", s->tl_names[k] + plen + 1,
                        (unsigned long long)(row[1 + k] - (prev ? prev[1 + k] : 0)));
            fprintf(f, "}}");
        }
    }
}

int rp_out_chrome_trace(const rp_set *s, const char *path) {
    uint64_t len = s->phase_interval;
    char *text = NULL;
    size_t n = 0, p0 = 0, b0 = 0, t0 = 0;
    unsigned k;
    FILE *f;
    int rc;
    if ((!len || (!s->nphase && !s->nbbv)) && !s->ntl) {
        fprintf(stderr, "hwprof-report: --chrome-trace: the report has no timeline (the path "
                        "profiler's phase per interval: models=pathprof, a run longer than "
                        "one path_interval; or the models' counters: timeline=N); %s not "
                        "written\n", path);
        return 1;
    }
    f = open_memstream(&text, &n);
    if (!f) {
        fprintf(stderr, "hwprof-report: out of memory\n");
        return 1;
    }
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"clock\":\"guest instructions: "
               "ts and dur count retired instructions, not microseconds\","
               "\"interval_instructions\":%llu,\"files\":%u,\"first_file\":",
            (unsigned long long)len, s->files);
    rp_json_str(f, s->first);
    fprintf(f, "},\n\"traceEvents\":[");
    /* a process per file (a vCPU, thread, process or run of its own), on
     * its own clock from 0 */
    for (k = 0; k < s->files; k++) {
        size_t p1 = s->phase_end[k], b1 = s->bbv_end[k], t1 = s->tl_end[k];
        if (p1 > p0 || b1 > b0 || t1 > t0)
            fprintf(f, "%s\n{\"ph\":\"M\",\"pid\":%u,\"name\":\"process_name\",\"args\":"
                       "{\"name\":\"hwprof file %u (clock: guest instructions)\"}}",
                    p0 || b0 || t0 ? "," : "", k + 1, k + 1);
        rp__track(f, k + 1, 1, "path", s->phase_ids + p0, p1 - p0, len);
        rp__track(f, k + 1, 2, "bbv", s->bbv_ids + b0, b1 - b0, len);
        rp__counters(f, s, k + 1, t0, t1);
        p0 = p1;
        b0 = b1;
        t0 = t1;
    }
    fprintf(f, "\n]}\n");
    if (fclose(f) != 0) {
        free(text);
        fprintf(stderr, "hwprof-report: out of memory\n");
        return 1;
    }
    rc = rp_save(path, text, n);
    free(text);
    return rc;
}
