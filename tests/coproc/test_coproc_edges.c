/* SPDX-License-Identifier: MIT */
/* tests/coproc/test_coproc_edges.c: the buffered value sampler (coproc.h's
 * section 5 baseline) at its edges: a full table counts what it dropped,
 * merges of differing descs are refused naming the field, buffered samples
 * survive a JSON round trip, and a report whose buffer is full (one the
 * sampler can never write: a full buffer interrupts) is refused instead of
 * letting the next sample write past the storage. */
#define HWPROF_IMPL
#include "hwprof/hwprof.h"

#include "harness.h"

typedef struct sampler {
    hwp_cp_simple s;
    void *mem;
} sampler;

static hwp_status open_sampler(sampler *x, const hwp_cp_simple_desc *d) {
    size_t n = hwp_cp_simple_bytes(d);
    x->mem = n ? malloc(n) : NULL; /* exactly: ASan sees a write past it */
    return hwp_cp_simple_init(&x->s, x->mem, n, d, NULL);
}

/* The next load takes a sample of (pc, value). */
static void sample(hwp_cp_simple *s, uint64_t pc, uint64_t value) {
    hwp_cp_simple_skip(s, UINT64_MAX);
    CHECK_EQ(hwp_cp_simple_due(s), 1);
    hwp_cp_simple_load(s, pc, value);
}

static size_t write_json(const hwp_cp_simple *s, char *buf, size_t cap) {
    hwp_bufwriter b;
    hwp_writer w = hwp_writer_buf(&b, buf, cap);
    hwp_cp_simple_write_json(s, &w);
    CHECK_EQ(b.dropped, 0);
    return b.len;
}

/* A table of 4 entries holds two loads' total and one value each; a
 * sample with no room for its total, or for its pair, is dropped and
 * counted, and the estimates keep numerator and denominator equal. */
static void test_full_table_counts_drops(void) {
    hwp_cp_simple_desc d = {2, 1, 4, 1, 5};
    hwp_cp_simple_stats st = {0, 0, 0, 0, 0, 0, 0};
    hwp_cp_est e[4];
    sampler x;
    CHECK_EQ(open_sampler(&x, &d), HWP_OK);
    sample(&x.s, 1, 10);
    sample(&x.s, 2, 20);
    sample(&x.s, 3, 30); /* no slot for load 3's total */
    sample(&x.s, 1, 11); /* load 1's total, but no slot for the pair */
    sample(&x.s, 1, 10);
    CHECK_EQ(hwp_cp_simple_get_stats(&x.s, &st), HWP_OK);
    CHECK_EQ(st.samples, 5);
    CHECK_EQ(st.dropped, 2);
    CHECK_EQ(st.interrupts, 5); /* a buffer of one interrupts every sample */
    CHECK_EQ(st.pending, 0);
    CHECK_EQ(hwp_cp_simple_estimates(&x.s, e, 4), 2);
    CHECK(e[0].pc == 1 && e[0].value == 10 && e[0].samples == 2 && e[0].inv == 1.0);
    CHECK(e[1].pc == 2 && e[1].value == 20 && e[1].samples == 1 && e[1].inv == 1.0);
    free(x.mem);
}

/* Each desc field that differs is named; the destination is unchanged. */
static void test_merge_mismatch_named(void) {
    static const struct { hwp_cp_simple_desc d; const char *why; } c[] = {
        {{6, 2, 8, 1, 5}, "coproc simple: period differs from the other desc"},
        {{4, 3, 8, 1, 5}, "coproc simple: buffer differs from the other desc"},
        {{4, 2, 16, 1, 5}, "coproc simple: entries differs from the other desc"},
        {{4, 2, 8, 2, 5}, "coproc simple: min_samples differs from the other desc"},
        {{4, 2, 8, 1, 6}, "coproc simple: seed differs from the other desc"},
    };
    hwp_cp_simple_desc d = {4, 2, 8, 1, 5};
    hwp_cp_simple bad;
    sampler dst;
    size_t k;
    CHECK_EQ(open_sampler(&dst, &d), HWP_OK);
    sample(&dst.s, 1, 1);
    for (k = 0; k < sizeof c / sizeof c[0]; k++) {
        sampler src;
        CHECK_EQ(open_sampler(&src, &c[k].d), HWP_OK);
        sample(&src.s, 2, 2);
        CHECK_EQ(hwp_cp_simple_merge(&dst.s, &src.s), HWP_EMISMATCH);
        CHECK_STR(hwp_why(&dst.s), c[k].why);
        CHECK_EQ(dst.s.samples, 1);
        free(src.mem);
    }
    memset(&bad, 0, sizeof bad);
    CHECK_EQ(hwp_cp_simple_merge(&dst.s, &bad), HWP_EINVAL);
    CHECK_EQ(hwp_cp_simple_merge(&bad, &dst.s), HWP_EINVAL);
    free(dst.mem);
}

/* Samples still in the buffer are part of the report: read back, they
 * give the same report, and flushing both gives the same estimates. */
static void test_buffer_round_trip(void) {
    hwp_cp_simple_desc d = {4, 4, 16, 1, 9};
    char a[2048], b[2048];
    hwp_cp_est ea[4], eb[4];
    hwp_json_err err;
    sampler x, y;
    size_t na, nb, k;
    CHECK_EQ(open_sampler(&x, &d), HWP_OK);
    CHECK_EQ(open_sampler(&y, &d), HWP_OK);
    sample(&x.s, 0x40, 7);
    sample(&x.s, 0x40, 8);
    sample(&x.s, 0x44, 1);
    CHECK_EQ(x.s.pending, 3);
    na = write_json(&x.s, a, sizeof a);
    CHECK_EQ(hwp_cp_simple_read_json(&y.s, a, na, &err), HWP_OK);
    CHECK(err.why == NULL);
    CHECK_EQ(y.s.pending, 3);
    nb = write_json(&y.s, b, sizeof b);
    CHECK_STR(b, a);
    CHECK_EQ(hwp_cp_simple_flush(&x.s), HWP_OK);
    CHECK_EQ(hwp_cp_simple_flush(&y.s), HWP_OK);
    CHECK_EQ(hwp_cp_simple_estimates(&x.s, ea, 4), 3);
    CHECK_EQ(hwp_cp_simple_estimates(&y.s, eb, 4), 3);
    for (k = 0; k < 3; k++)
        CHECK(ea[k].pc == eb[k].pc && ea[k].value == eb[k].value && ea[k].inv == eb[k].inv);
    (void)nb;
    free(x.mem);
    free(y.mem);
}

/* A report of another desc is refused at its desc object. */
static void test_desc_differs(void) {
    hwp_cp_simple_desc d = {4, 4, 16, 1, 9}, e = {6, 4, 16, 1, 9};
    char a[2048];
    hwp_json_err err;
    sampler x, y;
    size_t na;
    CHECK_EQ(open_sampler(&x, &d), HWP_OK);
    CHECK_EQ(open_sampler(&y, &e), HWP_OK);
    na = write_json(&x.s, a, sizeof a);
    CHECK_EQ(hwp_cp_simple_read_json(&y.s, a, na, &err), HWP_EMISMATCH);
    CHECK(err.why && !strcmp(err.why, "coproc simple: period differs from the other desc"));
    CHECK_EQ(err.offset, (size_t)(strstr(a, "\"desc\":") - a) + 7);
    free(x.mem);
    free(y.mem);
}

/* The desc is checked before anything changes: a report of another desc
 * whose stats come first leaves a sampler with samples as it was (the
 * stats were read into it before the desc was refused), and a second
 * desc in one report is malformed. */
static void test_desc_checked_first(void) {
    hwp_cp_simple_desc d = {4, 4, 16, 1, 9};
    const char *late =
        "{\"model\":\"coproc_simple\",\"version\":1,\"stats\":{\"events\":99,"
        "\"samples\":50},\"desc\":{\"period\":6,\"buffer\":4,\"entries\":16,"
        "\"min_samples\":1,\"seed\":\"0x9\"}}";
    const char *twice =
        "{\"model\":\"coproc_simple\",\"version\":1,\"desc\":{\"period\":4,"
        "\"buffer\":4,\"entries\":16,\"min_samples\":1,\"seed\":\"0x9\"},"
        "\"desc\":{\"period\":4}}";
    char a[2048], b[2048];
    hwp_json_err err;
    sampler x;
    CHECK_EQ(open_sampler(&x, &d), HWP_OK);
    sample(&x.s, 0x40, 7);
    sample(&x.s, 0x44, 1);
    write_json(&x.s, a, sizeof a);
    CHECK_EQ(hwp_cp_simple_read_json(&x.s, late, strlen(late), &err), HWP_EMISMATCH);
    write_json(&x.s, b, sizeof b);
    CHECK_STR(b, a);
    CHECK_EQ(hwp_cp_simple_read_json(&x.s, twice, strlen(twice), &err), HWP_EFORMAT);
    CHECK(err.why && !strcmp(err.why, "coproc simple: a report holds one desc"));
    free(x.mem);
}

/* A buffer of `buffer` samples interrupts when it fills, so at rest it
 * holds at most buffer - 1; a report claiming a full one is refused (it
 * was read, and the next sample wrote 16 bytes past the storage). */
static void test_full_buffer_report_refused(void) {
    hwp_cp_simple_desc d = {4, 2, 4, 1, 7};
    const char *t =
        "{\"model\":\"coproc_simple\",\"version\":1,\"desc\":{\"period\":4,\"buffer\":2,"
        "\"entries\":4,\"min_samples\":1,\"seed\":\"0x7\"},"
        "\"buffer\":[{\"pc\":\"0x1\",\"value\":\"0x2\"},{\"pc\":\"0x3\",\"value\":\"0x4\"}]}";
    hwp_json_err err;
    sampler x;
    int k;
    CHECK_EQ(open_sampler(&x, &d), HWP_OK);
    CHECK_EQ(hwp_cp_simple_read_json(&x.s, t, strlen(t), &err), HWP_EFORMAT);
    CHECK(err.why && !strcmp(err.why, "coproc simple: more buffered samples than the buffer holds"));
    CHECK_EQ(err.offset, strlen(t) - 2); /* after the second sample */
    CHECK_EQ(x.s.pending, 0);            /* refused: as after a reset */
    for (k = 0; k < 40; k++) hwp_cp_simple_load(&x.s, 9, 9);
    CHECK(x.s.pending < d.buffer);
    free(x.mem);
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_full_table_counts_drops);
    HWT_RUN(test_merge_mismatch_named);
    HWT_RUN(test_buffer_round_trip);
    HWT_RUN(test_desc_differs);
    HWT_RUN(test_desc_checked_first);
    HWT_RUN(test_full_buffer_report_refused);
    return hwt_end();
}
