/* SPDX-License-Identifier: MIT */
/* tests/core/test_core_cold.c: the core's cold paths, each against what
 * core.h and docs/ARCHITECTURE.md state: every desc field out of its
 * documented range is refused with a reason naming it (no storage size,
 * init refused); an instance that was never initialised is refused by
 * every entry point; a merge of differing descs names the field; a
 * report with an unknown, oversized or missing field is refused with
 * the reason and the byte offset of the field. */
#define HWPROF_IMPL
#include "hwprof/hwprof.h"

#include "harness.h"

typedef struct bad_case {
    void (*set)(hwp_core_desc *d);
    const char *why;
} bad_case;

/* One setter per case: each breaks one field of a default desc. */
#define BAD(name, stmt) static void name(hwp_core_desc *d) { stmt; }
BAD(b_mode, d->mode = 4)
BAD(b_order, d->order = 3)
BAD(b_flags, d->flags = 0x80000000u)
BAD(b_l1i_sets, d->l1i.sets = 3)
BAD(b_l1d_ways, d->l1d.sets = 512; d->l1d.ways = 2000; d->l1d.line = 64)
BAD(b_l2_line, d->l2.sets = 1024; d->l2.ways = 1; d->l2.line = 2)
BAD(b_l1i_lat, d->l1i.latency = 70000)
BAD(b_l2_size, d->l2.sets = 1u << 24; d->l2.ways = 8; d->l2.line = 64)
BAD(b_llc_part, d->llc.sets = 1024)
BAD(b_itlb_page, d->itlb.sets = 1; d->itlb.ways = 64; d->itlb.line = 2)
BAD(b_l1_line, d->l1i.sets = 512; d->l1i.ways = 2; d->l1i.line = 128)
BAD(b_memory, d->memory = 70000)
BAD(b_walk, d->walk = 70000)
BAD(b_bp, d->bp = 4)
BAD(b_bp_global, d->bp_global = 3)
BAD(b_bp_hist, d->bp_hist = 64)
BAD(b_gselect, d->bp = HWP_CORE_GSELECT; d->bp_hist = 13)
BAD(b_bp_local, d->bp_local = 3)
BAD(b_bp_local_hist, d->bp_local_hist = 17)
BAD(b_local_gshare, d->bp = HWP_CORE_GSHARE; d->bp_local = 1024)
BAD(b_btb, d->btb = 3)
BAD(b_ras, d->flags = HWP_CORE_NO_RAS; d->ras = 4)
BAD(b_mispredict, d->mispredict = 70000)
BAD(b_fetch, d->fetch_width = 65)
BAD(b_issue, d->issue_width = 65)
BAD(b_retire, d->retire_width = 65)
BAD(b_rob, d->rob = 5000)
BAD(b_window, d->rob = 10; d->window = 11)
BAD(b_lat_int, d->lat_int = 70000)
BAD(b_lat_mul, d->lat_mul = 70000)
BAD(b_lat_div, d->lat_div = 70000)
BAD(b_lat_fp, d->lat_fp = 70000)
BAD(b_lat_fdiv, d->lat_fdiv = 70000)
BAD(b_horizon_pow2, d->horizon = 3)
BAD(b_horizon_short, d->horizon = 1024)
BAD(b_horizon_auto, d->rob = 4096; d->memory = 65535)
#undef BAD

static void test_desc_field_named(void) {
    static const bad_case c[] = {
        {b_mode, "mode"}, {b_order, "order"}, {b_flags, "flags"},
        {b_l1i_sets, "l1i.sets"}, {b_l1d_ways, "l1d.ways"}, {b_l2_line, "l2.line"},
        {b_l1i_lat, "l1i.latency"}, {b_l2_size, "l2.ways"}, {b_llc_part, "llc.ways"},
        {b_itlb_page, "itlb.line"}, {b_l1_line, "l2.line must be >= the L1"},
        {b_memory, "memory"}, {b_walk, "walk"}, {b_bp, "bp must"},
        {b_bp_global, "bp_global"}, {b_bp_hist, "bp_hist"}, {b_gselect, "gselect"},
        {b_bp_local, "bp_local must be a power"}, {b_bp_local_hist, "bp_local_hist"},
        {b_local_gshare, "bp_local must be 0"}, {b_btb, "btb"}, {b_ras, "ras"},
        {b_mispredict, "mispredict"}, {b_fetch, "fetch_width"},
        {b_issue, "issue_width"}, {b_retire, "retire_width"}, {b_rob, "rob"},
        {b_window, "window"}, {b_lat_int, "lat_int"}, {b_lat_mul, "lat_mul"},
        {b_lat_div, "lat_div"}, {b_lat_fp, "lat_fp"}, {b_lat_fdiv, "lat_fdiv"},
        {b_horizon_pow2, "horizon must be a power"},
        {b_horizon_short, "horizon must cover"},
        {b_horizon_auto, "rob x latencies exceed"}};
    unsigned char mem[64];
    size_t k;
    for (k = 0; k < sizeof c / sizeof c[0]; k++) {
        hwp_core_desc d;
        hwp_core x;
        memset(&d, 0, sizeof d);
        c[k].set(&d);
        CHECK_EQ(hwp_core_bytes(&d), 0);
        CHECK_EQ(hwp_core_init(&x, mem, sizeof mem, &d, NULL), HWP_EINVAL);
        if (!CHECK_HAS(hwp_why(&x), c[k].why)) printf("      case %zu\n", k);
    }
}

static void *open_core(hwp_core *x, const hwp_core_desc *d) {
    size_t n = hwp_core_bytes(d);
    void *m = malloc(n);
    if (!m || hwp_core_init(x, m, n, d, NULL) != HWP_OK) abort();
    return m;
}

static void test_uninitialised_refused(void) {
    hwp_core z, ok;
    hwp_core_stats st;
    hwp_core_rec r[1];
    hwp_core_desc d;
    char buf[16];
    hwp_bufwriter b;
    hwp_writer w = hwp_writer_buf(&b, buf, sizeof buf);
    void *m;
    memset(&d, 0, sizeof d);
    d.rob = 8, d.l2.sets = 64, d.l2.ways = 1, d.l2.line = 64; /* small */
    m = open_core(&ok, &d);
    memset(&z, 0, sizeof z);
    CHECK_EQ(hwp_core_init(NULL, NULL, 0, NULL, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_core_reset(&z), HWP_EINVAL);
    CHECK_EQ(hwp_core_flush(&z), HWP_EINVAL);
    CHECK_EQ(hwp_core_done(&z, r, 1), 0);
    CHECK_EQ(hwp_core_get_stats(&z, &st), HWP_EINVAL);
    CHECK_EQ(hwp_core_get_stats(&ok, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_core_merge(&z, &ok), HWP_EINVAL);
    CHECK_EQ(hwp_core_merge(&ok, &z), HWP_EINVAL);
    CHECK_EQ(hwp_core_read_json(&z, "{}", 2, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_core_read_desc(NULL, "{}", 2, NULL), HWP_EINVAL);
    hwp_core_write_json(&z, &w); /* like every model's report of a bad handle */
    CHECK_STR(buf, "null");
    CHECK_STR(hwp_why(&z), "not initialised");
    free(m);
}

/* Merging cores of different descs names the first field that differs. */
static void test_merge_desc_named(void) {
    hwp_core a, b;
    hwp_core_desc d, e;
    void *ma, *mb;
    memset(&d, 0, sizeof d);
    d.rob = 8, d.l2.sets = 64, d.l2.ways = 1, d.l2.line = 64;
    e = d;
    e.btb = 1024;
    ma = open_core(&a, &d);
    mb = open_core(&b, &e);
    CHECK_EQ(hwp_core_merge(&a, &b), HWP_EMISMATCH);
    CHECK_HAS(hwp_why(&a), "btb");
    free(ma), free(mb);
}

/* The report of a small core, with `from` replaced by `to` once. */
static hwp_status read_edited(hwp_core *x, const char *from, const char *to,
                              hwp_json_err *err, size_t *at) {
    char src[8192], out[8192];
    hwp_bufwriter b;
    hwp_writer w = hwp_writer_buf(&b, src, sizeof src - 1);
    long n;
    hwp_core_write_json(x, &w);
    src[b.len] = 0;
    if ((n = hwt_edit(src, from, to, out, sizeof out)) < 0) return HWP_OK;
    *at = (size_t)n;
    return hwp_core_read_json(x, out, strlen(out), err);
}

/* Reports with a field the reader does not know, a desc value over 32
 * bits or a missing field are refused with the reason and the offset
 * of the field (or of the end, for a missing one). */
static void test_report_refused(void) {
    hwp_core x;
    hwp_core_desc d, rd;
    hwp_json_err err;
    size_t at = 0;
    void *m;
    memset(&d, 0, sizeof d);
    d.rob = 8, d.l2.sets = 64, d.l2.ways = 1, d.l2.line = 64;
    m = open_core(&x, &d);
    CHECK_EQ(read_edited(&x, "\"rob\":", "\"robs\":", &err, &at), HWP_EFORMAT);
    CHECK_HAS(err.why, "unknown field");
    CHECK(err.offset >= at && err.offset <= at + 8);
    CHECK_EQ(read_edited(&x, "\"rob\":8", "\"rob\":4294967296", &err, &at), HWP_EFORMAT);
    CHECK_HAS(err.why, "out of the field's range");
    CHECK(err.offset >= at && err.offset <= at + 20);
    CHECK_EQ(read_edited(&x, "\"events\":", "\"eventz\":", &err, &at), HWP_EFORMAT);
    CHECK_HAS(err.why, "unknown field");
    CHECK_EQ(read_edited(&x, "\"events\":0,", "", &err, &at), HWP_EFORMAT);
    CHECK_HAS(err.why, "a field is missing");
    CHECK_EQ(read_edited(&x, "\"rob\":8,", "", &err, &at), HWP_EFORMAT);
    CHECK_HAS(err.why, "a field is missing");
    /* a desc alone has no stats to miss, but every desc field */
    CHECK_EQ(hwp_core_read_desc(&rd, "{\"model\":\"core\",\"version\":1,\"desc\":{\"rob\":8}}",
                                45, &err), HWP_EFORMAT);
    CHECK_HAS(err.why, "a field is missing");
    /* a report a refusal left the instance usable */
    CHECK_EQ(read_edited(&x, "\"rob\":8", "\"rob\":8", &err, &at), HWP_OK);
    free(m);
}

/* The text report: 1000 straight-line instructions from 0x1000 (4000
 * bytes: 63 lines of 64), every fourth a load of one line and one in 100
 * of an unknown class, dropped. What it prints is the stream's: 990
 * instructions fetched, 63 I-lines and 1 D-line missed once each (and
 * so 64 L2 misses of 64 references), 250 loads, no branches. */
static void test_text_report(void) {
    hwp_core c;
    hwp_core_desc d;
    hwp_insn in;
    char buf[1024];
    hwp_bufwriter b;
    hwp_writer w = hwp_writer_buf(&b, buf, sizeof buf);
    void *m;
    unsigned i;
    memset(&d, 0, sizeof d);
    m = open_core(&c, &d);
    for (i = 0; i < 1000; i++) {
        memset(&in, 0, sizeof in);
        in.pc = 0x1000 + 4u * i;
        in.next_pc = in.pc + 4u;
        in.cls = i % 100 == 99 ? 99u : i % 4 == 0 ? HWP_CLS_LOAD : HWP_CLS_OTHER;
        in.addr = 0x80000;
        hwp_core_insn(&c, &in, NULL);
    }
    hwp_core_write_text(&c, &w);
    CHECK_HAS(buf, "core: 990 instructions (10 dropped), ");
    CHECK_HAS(buf, "L1I 63/990 (6.36%), L1D reads 1/250 (0.40%), writes 0/0 (0.00%), "
                   "L2 64/64 (100.00%)\n");
    CHECK_HAS(buf, "conditional 0/0 (0.00%), indirect 0/0 (0.00%), returns 0/0 (0.00%)\n");
    free(m);
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_desc_field_named);
    HWT_RUN(test_uninitialised_refused);
    HWT_RUN(test_merge_desc_named);
    HWT_RUN(test_report_refused);
    HWT_RUN(test_text_report);
    return hwt_end();
}
