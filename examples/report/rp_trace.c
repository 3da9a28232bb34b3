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
 * reference BBV detector (bbv_ids). Each file given is a process (pid
 * N for the N-th file: a vCPU, thread or run of its own, on its own
 * clock from 0) and each detector a track of it (tid 1 and 2): one
 * complete event per run of intervals in one phase, an instant event
 * where the phase changes, and a counter of the phase id. */
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

int rp_out_chrome_trace(const rp_set *s, const char *path) {
    uint64_t len = s->phase_interval;
    char *text = NULL;
    size_t n = 0, p0 = 0, b0 = 0;
    unsigned k;
    FILE *f;
    int rc;
    if (!len || (!s->nphase && !s->nbbv)) {
        fprintf(stderr, "hwprof-report: --chrome-trace: the report has no timeline (the path "
                        "profiler's phase per interval: models=pathprof, a run longer than "
                        "one path_interval); %s not written\n", path);
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
        size_t p1 = s->phase_end[k], b1 = s->bbv_end[k];
        if (p1 > p0 || b1 > b0)
            fprintf(f, "%s\n{\"ph\":\"M\",\"pid\":%u,\"name\":\"process_name\",\"args\":"
                       "{\"name\":\"hwprof file %u (clock: guest instructions)\"}}",
                    p0 || b0 ? "," : "", k + 1, k + 1);
        rp__track(f, k + 1, 1, "path", s->phase_ids + p0, p1 - p0, len);
        rp__track(f, k + 1, 2, "bbv", s->bbv_ids + b0, b1 - b0, len);
        p0 = p1;
        b0 = b1;
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
