/* SPDX-License-Identifier: MIT */
/* tests/profileme/test_profileme_edges.c: ProfileMe's table reader at its
 * edges: each damaged entry is refused with its reason and the byte offset
 * (found from the text, never from the reader), a refused report leaves
 * no half-loaded profile, a report of another desc is refused naming the
 * field, and the paired sampler's buffer bound. */
#define HWPROF_IMPL
#include "hwprof/hwprof.h"

#include "harness.h"

#define DESC                                                                     \
    "{\"model\":\"pm_table\",\"version\":1,\"desc\":{\"capacity\":8,\"interval\":10000," \
    "\"window\":80,\"issue_width\":4,\"near_cycles\":15,\"paired\":0,\"min_samples\":10}"

typedef struct table {
    hwp_pm_table t;
    void *mem;
} table;

static void open_table(table *x, uint32_t capacity) {
    hwp_pm_table_desc d;
    size_t n;
    memset(&d, 0, sizeof d);
    d.capacity = capacity;
    n = hwp_pm_table_bytes(&d);
    x->mem = malloc(n);
    CHECK_EQ(hwp_pm_table_init(&x->t, x->mem, n, &d, NULL), HWP_OK);
}

/* Offset of the end of the first occurrence of `mark` in t (the byte just
 * after it), the place each case's error is reported. */
static size_t after(const char *t, const char *mark) {
    const char *p = strstr(t, mark);
    CHECK(p != NULL);
    return p ? (size_t)(p - t) + strlen(mark) : 0;
}

static void test_entries_refused(void) {
    static const struct { const char *text, *why, *mark; } c[] = {
        {DESC ",\"pcs\":[{\"pc\":\"0x40\",\"events\":{\"taken\":1,\"bogus\":1}}]}",
         "json: unknown field", "\"bogus\":"},
        {DESC ",\"pcs\":[{\"pc\":\"0x40\",\"lat_sum\":[1,2,3,4,5,6,7]}]}",
         "profileme table: lat_sum has 6 values", "6,"},
        {DESC ",\"pcs\":[{\"pc\":\"0x40\",\"lat_sum\":[1,2]}]}",
         "profileme table: lat_sum has 6 values", "[1,2]"},
        {DESC ",\"pcs\":[{\"samples\":3}]}", "profileme table: pc must be nonzero",
         "{\"samples\":3}"},
        {DESC ",\"pcs\":[{\"pc\":\"0x40\"},{\"pc\":\"0x80\"},{\"pc\":\"0x40\",\"samples\":2}]}",
         "profileme table: pc listed twice", "\"samples\":2}"},
        {"{\"model\":\"pm_table\",\"version\":1,\"pcs\":[],\"desc\":{}}",
         "profileme table: desc must come first", "\"pcs\":"},
        {"{\"model\":\"pm_table\",\"version\":1}", "profileme table: no desc", "1}"},
        {DESC ",\"pcs\":[{\"pc\":\"0x40\"}]} x", "json: text after the report", "]} "},
    };
    const char *stats_only = "{\"model\":\"pm_table\",\"version\":1,\"stats\":{}}";
    hwp_pm_table_desc d;
    hwp_json_err e = {0, NULL};
    table x;
    size_t k;
    /* read_desc skips what is not the desc, then finds none */
    CHECK_EQ(hwp_pm_table_read_desc(&d, stats_only, strlen(stats_only), &e), HWP_EFORMAT);
    CHECK(e.why && !strcmp(e.why, "profileme table: no desc"));
    CHECK_EQ(e.offset, strlen(stats_only));
    open_table(&x, 8);
    for (k = 0; k < sizeof c / sizeof c[0]; k++) {
        hwp_json_err e = {0, NULL};
        hwp_status rc = hwp_pm_table_read_json(&x.t, c[k].text, strlen(c[k].text), &e);
        size_t want = after(c[k].text, c[k].mark);
        CHECK_EQ(rc, HWP_EFORMAT);
        if (!CHECK(e.why && !strcmp(e.why, c[k].why) && e.offset == want))
            printf("      case %zu: want \"%s\" at %zu, got \"%s\" at %zu\n", k, c[k].why,
                   want, e.why ? e.why : "(read)", e.offset);
        CHECK_STR(hwp_why(&x.t), "profileme table: malformed report");
    }
    free(x.mem);
}

/* A refused report leaves the table as after a reset: the entries read
 * before the damage are gone, not half a profile. */
static void test_refused_leaves_no_half_profile(void) {
    const char *good = DESC ",\"pcs\":[{\"pc\":\"0x40\",\"samples\":5}]}";
    const char *bad = DESC ",\"pcs\":[{\"pc\":\"0x80\",\"samples\":7},{\"pc\":\"0x80\"}]}";
    hwp_pm_table_stats st;
    table x;
    memset(&st, 0xff, sizeof st);
    open_table(&x, 8);
    CHECK_EQ(hwp_pm_table_read_json(&x.t, good, strlen(good), NULL), HWP_OK);
    CHECK(hwp_pm_table_find(&x.t, 0x40) && hwp_pm_table_find(&x.t, 0x40)->samples == 5);
    CHECK_EQ(hwp_pm_table_read_json(&x.t, bad, strlen(bad), NULL), HWP_EFORMAT);
    CHECK(hwp_pm_table_find(&x.t, 0x40) == NULL);
    CHECK(hwp_pm_table_find(&x.t, 0x80) == NULL);
    CHECK_EQ(hwp_pm_table_get_stats(&x.t, &st), HWP_OK);
    CHECK_EQ(st.used, 0);
    free(x.mem);
}

/* A report of another desc is refused naming the first field that
 * differs, and the table keeps what it held. */
static void test_other_desc_refused(void) {
    const char *good = DESC ",\"pcs\":[{\"pc\":\"0x40\",\"samples\":5}]}";
    table x, y;
    open_table(&x, 16);
    open_table(&y, 8);
    CHECK_EQ(hwp_pm_table_read_json(&y.t, good, strlen(good), NULL), HWP_OK);
    CHECK_EQ(hwp_pm_table_read_json(&x.t, good, strlen(good), NULL), HWP_EMISMATCH);
    CHECK_STR(hwp_why(&x.t), "profileme table: capacity differs from the other desc");
    CHECK(hwp_pm_table_find(&x.t, 0x40) == NULL);
    free(x.mem);
    free(y.mem);
}

/* More distinct PCs than the capacity holds: refused, never written past
 * the table. */
static void test_more_pcs_than_capacity(void) {
    char text[2048];
    size_t len, k;
    hwp_json_err e = {0, NULL};
    table x;
    open_table(&x, 8);
    len = (size_t)snprintf(text, sizeof text, "%s,\"pcs\":[", DESC);
    for (k = 1; k <= 9; k++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%s{\"pc\":\"0x%zx\"}",
                                k > 1 ? "," : "", k * 0x10);
    len += (size_t)snprintf(text + len, sizeof text - len, "]}");
    CHECK_EQ(hwp_pm_table_read_json(&x.t, text, len, &e), HWP_EFORMAT);
    CHECK(e.why && !strcmp(e.why, "profileme table: more pcs than capacity holds"));
    CHECK(e.offset <= len && text[e.offset - 1] == '}'); /* right after an entry */
    free(x.mem);
}

/* Paired sampling needs a buffer of at least the pair. */
static void test_paired_buffer_bound(void) {
    hwp_pm_desc d;
    hwp_pm p;
    static unsigned char mem[1 << 16];
    memset(&d, 0, sizeof d);
    d.paired = 1;
    d.buffer = 1;
    CHECK_EQ(hwp_pm_bytes(&d), 0);
    CHECK_EQ(hwp_pm_init(&p, mem, sizeof mem, &d, NULL), HWP_EINVAL);
    CHECK_STR(hwp_why(&p), "profileme: buffer must be >= 2 records when paired");
    CHECK(!hwp_pm_paired(&p));
    d.buffer = 2;
    CHECK_EQ(hwp_pm_init(&p, mem, sizeof mem, &d, NULL), HWP_OK);
    CHECK(hwp_pm_paired(&p));
    CHECK(!hwp_pm_paired(NULL));
}

/* Every entry refuses NULL and an instance that was never initialised
 * (EINVAL, zero, NULL, "null"), and writes nothing into it. */
static void test_uninitialised_refused(void) {
    static const unsigned char zp[sizeof(hwp_pm)], zt[sizeof(hwp_pm_table)];
    hwp_pm p, ok;
    hwp_pm_table t;
    hwp_pm_stats st;
    hwp_pm_desc d;
    hwp_pm_table_desc td;
    hwp_pm_table_stats ts;
    hwp_pm_row row;
    hwp_pm_record r;
    char buf[64];
    hwp_bufwriter b;
    hwp_writer w = hwp_writer_buf(&b, buf, sizeof buf);
    static unsigned char mem[1 << 16];
    table x;
    memset(&p, 0, sizeof p);
    memset(&t, 0, sizeof t);
    memset(&r, 0, sizeof r);
    memset(&d, 0, sizeof d);
    r.pc = 0x40;
    CHECK_EQ(hwp_pm_init(&ok, mem, sizeof mem, &d, NULL), HWP_OK);
    open_table(&x, 8);
    CHECK_EQ(hwp_pm_tag(&p, 0x40, 1), 0);
    CHECK_EQ(hwp_pm_tag_empty(&p, 1), HWP_EINVAL);
    CHECK_EQ(hwp_pm_reset(&p), HWP_EINVAL);
    CHECK_EQ(hwp_pm_fetched(&p), 0);
    CHECK_EQ(hwp_pm_interval(&p), 0);
    CHECK_EQ(hwp_pm_window(&p), 0);
    CHECK_EQ(hwp_pm_get_stats(&p, &st), HWP_EINVAL);
    CHECK_EQ(hwp_pm_get_stats(&ok, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_pm_get_desc(&p, &d), HWP_EINVAL);
    CHECK_EQ(hwp_pm_get_desc(&ok, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_pm_set_deliver(&p, NULL, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_pm_merge(&p, &ok), HWP_EINVAL);
    CHECK_EQ(hwp_pm_merge(&ok, &p), HWP_EINVAL);
    CHECK_EQ(hwp_pm_read_desc(NULL, "{}", 2, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_pm_read_json(&p, "{}", 2, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_pm_read_json(&ok, NULL, 0, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_pm_table_desc_for(&p, &td), HWP_EINVAL);
    CHECK_EQ(hwp_pm_table_desc_for(&ok, NULL), HWP_EINVAL);
    CHECK(memcmp(&p, zp, sizeof p) == 0);
    hwp_pm_write_text(&p, &w);
    CHECK_STR(buf, "profileme: not initialised\n");
    w = hwp_writer_buf(&b, buf, sizeof buf);
    hwp_pm_write_json(&p, &w);
    CHECK_STR(buf, "null");
    w = hwp_writer_buf(&b, buf, sizeof buf);

    CHECK_EQ(hwp_pm_table_reset(&t), HWP_EINVAL);
    CHECK_EQ(hwp_pm_table_flush(&t), HWP_EINVAL);
    CHECK_EQ(hwp_pm_table_get_stats(&t, &ts), HWP_EINVAL);
    CHECK_EQ(hwp_pm_table_get_stats(&x.t, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_pm_table_add(&t, &r, 1), HWP_EINVAL);
    CHECK_EQ(hwp_pm_table_add(&x.t, NULL, 1), HWP_EINVAL);
    CHECK(hwp_pm_table_find(&t, 0x40) == NULL);
    CHECK(hwp_pm_table_find(&x.t, 0) == NULL);
    CHECK(hwp_pm_table_at(&t, 0) == NULL);
    CHECK(hwp_pm_table_at(&x.t, 8) == NULL); /* past the capacity */
    CHECK_EQ(hwp_pm_table_merge(&t, &x.t), HWP_EINVAL);
    CHECK_EQ(hwp_pm_table_merge(&x.t, &t), HWP_EINVAL);
    CHECK_EQ(hwp_pm_table_min_samples(&t), HWP_PM_MIN_SAMPLES);
    CHECK(hwp_pm_table_interval(&t) == 0.0);
    CHECK_EQ(hwp_pm_table_rank(&t, HWP_PM_RANK_SAMPLES, 1.96, &row, 1), 0);
    CHECK_EQ(hwp_pm_table_rank(&x.t, HWP_PM_RANK_SAMPLES + 1, 1.96, &row, 1), 0);
    CHECK_EQ(hwp_pm_table_read_desc(NULL, "{}", 2, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_pm_table_read_json(&t, "{}", 2, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_pm_table_read_json(&x.t, NULL, 0, NULL), HWP_EINVAL);
    CHECK(memcmp(&t, zt, sizeof t) == 0);
    hwp_pm_table_write_top(&t, &w, 5);
    CHECK_EQ(b.len, 0);
    hwp_pm_table_write_json(&t, &w);
    CHECK_STR(buf, "null");
    free(x.mem);
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_entries_refused);
    HWT_RUN(test_refused_leaves_no_half_profile);
    HWT_RUN(test_other_desc_refused);
    HWT_RUN(test_more_pcs_than_capacity);
    HWT_RUN(test_paired_buffer_bound);
    HWT_RUN(test_uninitialised_refused);
    return hwt_end();
}
