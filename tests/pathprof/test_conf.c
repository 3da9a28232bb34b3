/* SPDX-License-Identifier: MIT */
/* The path profiler's conformance rows (tests/conformance/pathprof.c)
 * run through the contract's checks, until the shared driver runs every
 * model's rows: bytes/init at odd alignments, zero desc = documented
 * defaults, bad fields named, reset = fresh init, JSON round trip
 * (write(read(write(x))) == write(x)), merge of two halves within the
 * row's bound, stats never decreasing. */
#define HWPROF_IMPL
#include "hwprof/pathprof.h"

#include "harness.h"
#include "conformance/conformance.h"

#define N 20000u

static unsigned char mem[4][1 << 16];
static char j1[1 << 16], j2[1 << 16];
static union { hwp_path p; hwp_hpt h; hwp_phase ph; } hx[4];

static size_t json_of(const hwp_conf_row *r, const void *x, char *buf) {
    hwp_bufwriter b;
    hwp_writer w = hwp_writer_buf(&b, buf, sizeof j1);
    r->write_json(x, &w);
    return b.len;
}

static const hwp_conf_row *row;

static void check_row(void) {
    const hwp_conf_row *r = row;
    unsigned char d[256], d2[256];
    /* merge of another desc (EMISMATCH) is checked per component in
     * test_pathprof.c */
    void *x = &hx[0], *y = &hx[1], *z = &hx[2];
    size_t i, n, need, off;
    hwp_json_err e;
    hwp_conf_stats s0, s1;
    /* odd alignments: bytes() is enough, one less is not at the worst */
    r->small(d);
    need = r->bytes(d);
    CHECK(need > 0);
    for (off = 0; off < 16; off++)
        CHECK_EQ(r->init(x, mem[0] + off, need, d, NULL), HWP_OK);
    off = (17u - ((uintptr_t)mem[0] & 15u)) & 15u; /* 1 past a boundary */
    CHECK_EQ(r->init(x, mem[0] + off, need - 1, d, NULL), HWP_ENOSPC);
    /* zero desc = documented defaults: same JSON */
    memset(d, 0, sizeof d);
    r->documented(d2);
    CHECK_EQ(r->init(x, mem[0] + 3, sizeof mem[0] - 3, d, NULL), HWP_OK);
    CHECK_EQ(r->init(y, mem[1] + 5, sizeof mem[1] - 5, d2, NULL), HWP_OK);
    json_of(r, x, j1);
    json_of(r, y, j2);
    CHECK_STR(j1, j2);
    /* bad fields */
    for (i = 0; i < r->nbad; i++) {
        r->small(d);
        r->bad(d, i);
        CHECK_EQ(r->bytes(d), 0);
        CHECK_EQ(r->init(x, mem[0], sizeof mem[0], d, NULL), HWP_EINVAL);
        CHECK_HAS(((hwp_head *)x)->why, r->bad_fields[i]);
    }
    /* reset = fresh; stats never decrease */
    r->small(d);
    CHECK_EQ(r->init(x, mem[0] + 7, sizeof mem[0] - 7, d, NULL), HWP_OK);
    json_of(r, x, j1);
    memset(&s0, 0, sizeof s0);
    for (i = 0; i < 10; i++) {
        r->feed(x, 42, i * (N / 10), N / 10);
        CHECK_EQ(r->stats(x, &s1), HWP_OK);
        CHECK(s1.events >= s0.events && s1.dropped >= s0.dropped &&
              s1.evicted >= s0.evicted && s1.cycles >= s0.cycles);
        s0 = s1;
    }
    CHECK(s1.events > 0);
    CHECK_EQ(r->flush(x), HWP_OK);
    CHECK_EQ(r->reset(x), HWP_OK);
    json_of(r, x, j2);
    CHECK_STR(j1, j2);
    /* JSON round trip through read_desc + read_json */
    r->feed(x, 7, 0, N);
    CHECK_EQ(r->flush(x), HWP_OK);
    n = json_of(r, x, j1);
    CHECK_EQ(r->read_desc(d2, j1, n, &e), HWP_OK);
    CHECK_EQ(r->init(y, mem[1] + 9, sizeof mem[1] - 9, d2, NULL), HWP_OK);
    CHECK_EQ(r->read_json(y, j1, n, &e), HWP_OK);
    json_of(r, y, j2);
    CHECK_STR(j1, j2);
    /* malformed: cut short */
    CHECK_EQ(r->read_json(y, j1, n / 2, &e), HWP_EFORMAT);
    CHECK(e.why != NULL && e.offset <= n / 2);
    /* merge of two halves (charges nothing) */
    CHECK_EQ(r->init(x, mem[0], sizeof mem[0], d, NULL), HWP_OK);
    CHECK_EQ(r->init(y, mem[1], sizeof mem[1], d, NULL), HWP_OK);
    CHECK_EQ(r->init(z, mem[2], sizeof mem[2], d, NULL), HWP_OK);
    r->feed(x, 11, 0, N);
    r->flush(x);
    r->feed(y, 11, 0, N / 2);
    r->flush(y);
    r->feed(z, 11, N / 2, N - N / 2);
    r->flush(z);
    r->stats(y, &s0);
    CHECK_EQ(r->merge(y, z), HWP_OK);
    {
        const char *why = r->merge_check ? r->merge_check(x, y) : NULL;
        CHECK_STR(why ? why : "", "");
    }
}

static void conf_path(void) { row = &hwp_conf_pathprof[0]; check_row(); }
static void conf_hpt(void) { row = &hwp_conf_pathprof[1]; check_row(); }
static void conf_phase(void) { row = &hwp_conf_pathprof[2]; check_row(); }

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    if (!hwp_conf_pathprof[3].name) {
        HWT_RUN(conf_path);
        HWT_RUN(conf_hpt);
        HWT_RUN(conf_phase);
    }
    return hwt_end();
}
