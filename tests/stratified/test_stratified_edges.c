/* SPDX-License-Identifier: MIT */
/* tests/stratified/test_stratified_edges.c: the accumulator's report
 * reader (hwp_strat_acc_read_json) at its edges: strata of the wrong count
 * or shape, repeated pcs and tuples, and stats that disagree with the
 * profile are refused with their reason and the byte offset (found from
 * the text, never from the reader); a good report reads back byte for
 * byte. */
#define HWPROF_IMPL
#include "hwprof/hwprof.h"

#include "harness.h"

#define HEAD                                                                      \
    "{\"model\":\"strat_acc\",\"version\":1,\"desc\":{\"tuples\":8,\"pcs\":4,"        \
    "\"strata\":2,\"replace\":0,\"min_samples\":1},\"stats\":{\"events\":1,"          \
    "\"dropped\":0,\"evicted\":0,\"cycles\":0,\"total\":3,\"dropped_count\":0,"       \
    "\"dropped_pc_count\":0,\"tuples\":1,\"pcs\":1}"
#define PCP "{\"kind\":1,\"pc\":\"0x40\",\"count\":3,\"samples\":1,\"top_w\":\"0x7\",\"top_count\":3,\"lost\":0}"
#define TUP "{\"kind\":1,\"pc\":\"0x40\",\"w\":\"0x7\",\"count\":3,\"samples\":1,\"stratum\":1}"
#define GOOD HEAD ",\"strata\":[[0,0],[3,1]],\"pc_profile\":[" PCP "],\"profile\":[" TUP "]}"

static const hwp_strat_acc_desc desc = {8, 4, 2, 0, 1};

typedef struct acc {
    hwp_strat_acc a;
    void *mem;
} acc;

static void open_acc(acc *x) {
    size_t n = hwp_strat_acc_bytes(&desc);
    x->mem = malloc(n);
    CHECK_EQ(hwp_strat_acc_init(&x->a, x->mem, n, &desc, NULL), HWP_OK);
}

static size_t after(const char *t, const char *mark) {
    const char *p = strstr(t, mark);
    CHECK(p != NULL);
    return p ? (size_t)(p - t) + strlen(mark) : 0;
}

/* The report the accumulator writes for one message reads back to the
 * same text (the cases below damage this text). */
static void test_good_report_reads_back(void) {
    hwp_strat_msg m = {0x40, 7, 3, 1, 1, 1, 0};
    char buf[2048];
    hwp_bufwriter b;
    hwp_writer w;
    acc x, y;
    open_acc(&x);
    open_acc(&y);
    hwp_strat_acc_fold(&x.a, &m, 1);
    w = hwp_writer_buf(&b, buf, sizeof buf);
    hwp_strat_acc_write_json(&x.a, &w);
    CHECK_STR(buf, GOOD);
    CHECK_EQ(hwp_strat_acc_read_json(&y.a, GOOD, strlen(GOOD), NULL), HWP_OK);
    CHECK_EQ(hwp_strat_acc_count(&y.a, 1, 0x40, 7), 3);
    w = hwp_writer_buf(&b, buf, sizeof buf);
    hwp_strat_acc_write_json(&y.a, &w);
    CHECK_STR(buf, GOOD);
    free(x.mem);
    free(y.mem);
}

static void test_damage_refused(void) {
    static const struct { const char *text, *why, *mark; } c[] = {
        {HEAD ",\"strata\":[[0,0],[3,1],[1,1]]}", "strat_acc: more strata than desc.strata",
         "[3,1],"},
        {HEAD ",\"strata\":[[0,0],[3,1,5]]}", "strat_acc: a stratum is [length, samples]",
         "[3,1,"},
        {HEAD ",\"strata\":[[0,0]]}", "strat_acc: fewer strata than desc.strata", "[[0,0]]"},
        {HEAD ",\"pc_profile\":[" PCP "," PCP "]}", "strat_acc: pc repeated or over desc.pcs",
         PCP "," PCP},
        {HEAD ",\"profile\":[" TUP "," TUP "]}", "strat_acc: tuple repeated or over desc.tuples",
         TUP "," TUP},
        {HEAD ",\"strata\":[[0,0],[3,1]],\"pc_profile\":[" PCP "]}",
         "strat_acc: stats.tuples or stats.pcs disagree with the profile", "]}"},
    };
    size_t k;
    acc x;
    open_acc(&x);
    for (k = 0; k < sizeof c / sizeof c[0]; k++) {
        hwp_json_err e = {0, NULL};
        size_t want = after(c[k].text, c[k].mark);
        CHECK_EQ(hwp_strat_acc_read_json(&x.a, c[k].text, strlen(c[k].text), &e), HWP_EFORMAT);
        if (!CHECK(e.why && !strcmp(e.why, c[k].why) && e.offset == want))
            printf("      case %zu: want \"%s\" at %zu, got \"%s\" at %zu\n", k, c[k].why,
                   want, e.why ? e.why : "(read)", e.offset);
    }
    free(x.mem);
}

/* Every entry refuses NULL and an instance that was never initialised
 * (EINVAL, zero, no output, "null"), and writes nothing into it. */
static void test_uninitialised_refused(void) {
    static const unsigned char zero[sizeof(hwp_strat_acc)];
    hwp_strat_msg m = {0x40, 7, 3, 1, 1, 1, 0};
    hwp_strat_value v[2];
    hwp_strat_pc p[2];
    hwp_strat_acc_stats st;
    hwp_strat_acc z;
    uint32_t cur = 0;
    char buf[64];
    hwp_bufwriter b;
    hwp_writer w = hwp_writer_buf(&b, buf, sizeof buf);
    acc x;
    open_acc(&x);
    hwp_strat_acc_fold(&x.a, &m, 1);
    memset(&z, 0, sizeof z);
    hwp_strat_acc_add(&z, 1, 0x40, 7, 1);
    hwp_strat_acc_fold(&z, &m, 1);
    CHECK(memcmp(&z, zero, sizeof z) == 0);
    CHECK_EQ(hwp_strat_acc_count(&z, 1, 0x40, 7), 0);
    CHECK_EQ(hwp_strat_acc_pc_count(&z, 1, 0x40), 0);
    CHECK(hwp_strat_acc_invariance(&z, 1, 0x40, 7) == 0.0);
    CHECK(hwp_strat_acc_estimate(&z, 1, 0x40, 7) == 0.0);
    CHECK_EQ(hwp_strat_acc_top_values(&z, 1, 0x40, v, 2), 0);
    CHECK_EQ(hwp_strat_acc_top_values(&x.a, 1, 0x40, NULL, 2), 0); /* cap without out */
    CHECK_EQ(hwp_strat_acc_top_pcs(&z, 1, p, 2), 0);
    CHECK_EQ(hwp_strat_acc_top_pcs(&x.a, 1, NULL, 2), 0);
    CHECK(!hwp_strat_acc_next(&z, &cur, &m));
    CHECK(!hwp_strat_acc_next(&x.a, NULL, &m));
    CHECK(!hwp_strat_acc_next(&x.a, &cur, NULL));
    CHECK_EQ(hwp_strat_acc_merge(&z, &x.a), HWP_EINVAL);
    CHECK_EQ(hwp_strat_acc_merge(&x.a, &z), HWP_EINVAL);
    CHECK_EQ(hwp_strat_acc_merge(&x.a, &x.a), HWP_EINVAL); /* into itself */
    CHECK_EQ(hwp_strat_acc_count(&x.a, 1, 0x40, 7), 3);
    CHECK_EQ(hwp_strat_acc_reset(&z), HWP_EINVAL);
    CHECK_EQ(hwp_strat_acc_flush(&z), HWP_EINVAL);
    CHECK_EQ(hwp_strat_acc_get_stats(&z, &st), HWP_EINVAL);
    CHECK_EQ(hwp_strat_acc_get_stats(&x.a, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_strat_acc_read_json(&z, GOOD, strlen(GOOD), NULL), HWP_EINVAL);
    CHECK_EQ(hwp_strat_acc_read_desc(NULL, GOOD, strlen(GOOD), NULL), HWP_EINVAL);
    CHECK(memcmp(&z, zero, sizeof z) == 0);
    hwp_strat_acc_write_text(&z, &w);
    CHECK_EQ(b.len, 0);
    hwp_strat_acc_write_json(&z, &w);
    CHECK_STR(buf, "null");
    free(x.mem);
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_good_report_reads_back);
    HWT_RUN(test_damage_refused);
    HWT_RUN(test_uninitialised_refused);
    return hwt_end();
}
