/* Unit tests for hwprof/rap.h's two-dimensional tree (hwp_rap2): desc
 * defaults and bad input, cells checked by hand, rectangle queries and
 * hot rectangles against a brute-force exact profile, the domain, merge,
 * reset, the insn entry and the JSON reader. Fast and deterministic. */
#define HWPROF_IMPL
#include "hwprof/rap.h"

#include "harness.h"
#include "rap/fuzz_drive.h"
#include "rap/rap2_util.h"

#define ALIGN16(buf) ((unsigned char *)(((uintptr_t)(buf) + 15) & ~(uintptr_t)15))
static unsigned char mem_raw[(1u << 19) + 16], mem2_raw[(1u << 19) + 16];
#define mem ALIGN16(mem_raw)
#define mem2 ALIGN16(mem2_raw)
#define MEMSZ (sizeof mem_raw - 16)

static char rep[1 << 18], rep2[1 << 18];

static size_t report(const hwp_rap2 *r, char *buf) {
    hwp_bufwriter b;
    hwp_writer w = hwp_writer_buf(&b, buf, sizeof rep);
    hwp_rap2_write_json(r, &w);
    return b.len;
}

/* A small square domain, no stage 0, enough nodes to split to points. */
static hwp_rap2_desc square(unsigned bits) {
    hwp_rap2_desc d;
    memset(&d, 0, sizeof d);
    d.x_bits = d.y_bits = bits;
    d.tree.eps = 0.01;
    d.tree.nodes = 4096;
    d.tree.buffer = HWP_RAP_BUFFER_NONE;
    return d;
}

static void test_rap2_defaults(void) {
    hwp_rap2 r;
    hwp_rap2_desc got, z;
    hwp_rap_desc t;
    memset(&z, 0, sizeof z);
    memset(&t, 0, sizeof t);
    memset(&got, 0, sizeof got);
    CHECK_EQ(hwp_rap2_init(&r, mem, MEMSZ, NULL, NULL), HWP_OK);
    CHECK_EQ(hwp_rap2_get_desc(&r, &got), HWP_OK);
    CHECK_EQ(got.x_bits, 32);
    CHECK_EQ(got.y_bits, 32);
    CHECK_EQ(got.x_source, HWP_RAP_SRC_PC);
    CHECK_EQ(got.y_source, HWP_RAP_SRC_ADDR);
    CHECK_EQ(got.tree.key_bits, 64);
    CHECK_EQ(got.tree.branching, 4);
    CHECK_EQ(got.tree.nodes, 512);
    CHECK_EQ(got.tree.buffer, 1024);
    CHECK(got.tree.eps == 0.10);
    /* The storage is the tree's, nothing more. */
    t.key_bits = 64;
    CHECK_EQ(hwp_rap2_bytes(&z), hwp_rap_bytes(&t));
    CHECK_EQ(hwp_rap2_bytes(NULL), HWP_RAP2_BYTES(512, 1024, 0));
    /* Storage one byte short at the worst alignment. */
    CHECK_EQ(hwp_rap2_init(&r, mem + 1, hwp_rap2_bytes(NULL) - 1, NULL, NULL),
             HWP_ENOSPC);
}

/* Every bad field is refused with a reason naming it. */
static void test_rap2_bad_desc(void) {
    static const char *const field[] = {
        "x_bits", "x_bits", "x_base", "y_base", "x_source", "y_source",
        "key_base", "source", "key_bits", "eps", "eps", "nodes", "y_bits"};
    size_t i;
    for (i = 0; i < sizeof field / sizeof field[0]; i++) {
        hwp_rap2_desc d;
        hwp_rap2 r;
        memset(&d, 0, sizeof d);
        switch (i) {
        case 0: d.x_bits = 64; break;
        case 1: d.x_bits = 40; d.y_bits = 25; break;
        case 2: d.x_bits = 8; d.x_base = ~(uint64_t)0 - 3; break;
        case 3: d.y_bits = 8; d.y_base = ~(uint64_t)0 - 3; break;
        case 4: d.x_source = 4; break;
        case 5: d.y_source = 7; break;
        case 6: d.tree.key_base = 1; break;
        case 7: d.tree.source = HWP_RAP_SRC_ADDR; break;
        case 8: d.tree.key_bits = 63; break;
        case 9: d.tree.eps = 1.0; break;
        case 10: d.tree.eps = -0.5; break;
        case 11: d.tree.nodes = 4; break; /* below one level of b = 4 */
        default: d.y_bits = 70; break;
        }
        CHECK_EQ(hwp_rap2_bytes(&d), 0);
        CHECK_EQ(hwp_rap2_init(&r, mem, MEMSZ, &d, NULL), HWP_EINVAL);
        if (!strstr(hwp_why(&r), field[i]))
            printf("    case %u: \"%s\" does not name %s\n", (unsigned)i,
                   hwp_why(&r), field[i]);
        CHECK(strstr(hwp_why(&r), field[i]) != NULL);
    }
}

/* Cells worked out by hand, not from the code: with 4-bit sides and b =
 * 4 a depth-1 range is a quadrant (both halves split at once), and a
 * pair heavy enough to split all the way ends in its own 1 x 1 cell. */
static void test_rap2_cells_by_hand(void) {
    hwp_rap2_desc d = square(4);
    hwp_rap2 r;
    hwp_rap2_rect hot[16];
    hwp_rap_est e;
    hwp_rap2_box q = {0, 7, 8, 15};
    size_t n, i;
    int saw_point = 0;
    CHECK_EQ(hwp_rap2_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
    for (i = 0; i < 1000; i++) hwp_rap2_add(&r, 5, 9, 1);
    n = hwp_rap2_hot(&r, 0.5, hot, 16);
    CHECK_EQ(n, 1);
    CHECK_EQ(hot[0].box.x_lo, 5);
    CHECK_EQ(hot[0].box.x_hi, 5);
    CHECK_EQ(hot[0].box.y_lo, 9);
    CHECK_EQ(hot[0].box.y_hi, 9);
    /* The quadrant x < 8, y >= 8 holds all of it, the others none; the
     * first event was counted at the root (the tree had no children
     * yet), so it is only in the upper bounds. */
    CHECK_EQ(hwp_rap2_query(&r, &q, &e), HWP_OK);
    CHECK_EQ(e.lower, 999);
    CHECK_EQ(e.upper, 1000);
    q.x_lo = 8;
    q.x_hi = 15;
    CHECK_EQ(hwp_rap2_query(&r, &q, &e), HWP_OK);
    CHECK_EQ(e.lower, 0);
    CHECK_EQ(e.upper, 1);
    /* Unequal sides: x has 8 bits, y 2; the longer side's high bits
     * come first, then the two interleave. */
    memset(&d, 0, sizeof d);
    d.x_bits = 8;
    d.y_bits = 2;
    d.x_base = 0x1000;
    d.y_base = 0x40;
    d.tree.eps = 0.01;
    d.tree.nodes = 4096;
    d.tree.buffer = HWP_RAP_BUFFER_NONE;
    CHECK_EQ(hwp_rap2_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
    for (i = 0; i < 1000; i++) hwp_rap2_add(&r, 0x1000 + 200, 0x43, 1);
    n = hwp_rap2_hot(&r, 0.5, hot, 16);
    for (i = 0; i < n && i < 16; i++)
        if (hot[i].box.x_lo == 0x10c8 && hot[i].box.x_hi == 0x10c8 &&
            hot[i].box.y_lo == 0x43 && hot[i].box.y_hi == 0x43)
            saw_point = 1;
    CHECK(saw_point);
}

/* Random pairs, random boxes: the exact weight of every box lies in the
 * query's bounds, before and after the flush of stage 0. */
static void test_rap2_query_bounds(void) {
    static hwx_pair ev[4000];
    hwp_rng g;
    unsigned pass, bad = 0, tight = 0;
    hwp_rng_seed(&g, 7);
    for (pass = 0; pass < 4; pass++) {
        hwp_rap2_desc d;
        hwp_rap2 *r;
        hwx_exact2 x;
        size_t i;
        unsigned k, stage;
        memset(&d, 0, sizeof d);
        d.x_bits = pass & 1 ? 12 : 20;
        d.y_bits = pass & 2 ? 12 : 6;
        d.x_base = 0x400000;
        d.y_base = 0x7f0000000000ull;
        d.tree.nodes = 64;
        d.tree.buffer = pass & 1 ? 16 : HWP_RAP_BUFFER_NONE;
        d.tree.first_merge = 256;
        r = hwx_rap2_new(&d, NULL);
        for (i = 0; i < 4000; i++) {
            uint64_t hx = hwp_rng_below(&g, 4) ? 0x40 : hwp_rng_next(&g);
            uint64_t hy = hwp_rng_below(&g, 3) ? 0x11 : hwp_rng_next(&g);
            ev[i].x = d.x_base + ((hx + hwp_rng_below(&g, 8)) & hwp_mask64(d.x_bits));
            ev[i].y = d.y_base + ((hy + hwp_rng_below(&g, 4)) & hwp_mask64(d.y_bits));
            ev[i].weight = 1 + hwp_rng_below(&g, 3);
            hwp_rap2_add(r, ev[i].x, ev[i].y, ev[i].weight);
        }
        hwx_exact2_build(&x, ev, 4000);
        for (stage = 0; stage < 2; stage++) {
            if (stage) hwp_rap2_flush(r);
            for (k = 0; k < 300; k++) {
                hwp_rap2_box q;
                hwp_rap_est e;
                uint64_t a = hwp_rng_below(&g, 0x80), b = hwp_rng_below(&g, 0x80);
                uint64_t c = hwp_rng_below(&g, 0x20), dd = hwp_rng_below(&g, 0x20);
                uint64_t t;
                q.x_lo = d.x_base + (a < b ? a : b);
                q.x_hi = d.x_base + (a < b ? b : a);
                q.y_lo = d.y_base + (c < dd ? c : dd);
                q.y_hi = d.y_base + (c < dd ? dd : c);
                if (k == 0) { /* a box wider than the domain */
                    q.x_lo = 0;
                    q.x_hi = ~(uint64_t)0;
                    q.y_lo = 0;
                    q.y_hi = ~(uint64_t)0;
                }
                CHECK_EQ(hwp_rap2_query(r, &q, &e), HWP_OK);
                t = hwx_exact2_box(&x, &q);
                if (t < e.lower || t > e.upper || e.estimate < (double)e.lower ||
                    e.estimate > (double)e.upper)
                    bad++;
                if (k == 0) CHECK(e.lower == t && e.upper == t);
                tight += e.upper - e.lower <= t / 4;
            }
        }
        hwx_exact2_free(&x);
        free(r);
    }
    CHECK_EQ(bad, 0);
    CHECK(tight > 0); /* the bounds are not vacuous */
    {
        hwp_rap2 r;
        hwp_rap2_box q = {5, 4, 0, 0};
        hwp_rap_est e;
        CHECK_EQ(hwp_rap2_init(&r, mem, MEMSZ, NULL, NULL), HWP_OK);
        CHECK_EQ(hwp_rap2_query(&r, &q, &e), HWP_EINVAL);
        CHECK_HAS(hwp_why(&r), "x_lo <= x_hi");
        CHECK_EQ(hwp_rap2_query(&r, NULL, &e), HWP_EINVAL);
        CHECK_HAS(hwp_why(&r), "box and out must be non-NULL");
    }
}

/* A pair outside either side's domain is counted, not folded in. */
static void test_rap2_domain(void) {
    hwp_rap2_desc d = square(8);
    hwp_rap2 r;
    hwp_rap_stats st;
    hwp_rap2_box all = {0, ~(uint64_t)0, 0, ~(uint64_t)0};
    hwp_rap_est e;
    d.x_base = 0x100;
    d.y_base = 0x2000;
    CHECK_EQ(hwp_rap2_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
    hwp_rap2_add(&r, 0x100, 0x2000, 3);  /* the first cell  */
    hwp_rap2_add(&r, 0x1ff, 0x20ff, 2);  /* the last cell   */
    hwp_rap2_add(&r, 0xff, 0x2000, 5);   /* x below         */
    hwp_rap2_add(&r, 0x200, 0x2000, 7);  /* x above         */
    hwp_rap2_add(&r, 0x100, 0x2100, 11); /* y above         */
    hwp_rap2_add(&r, 0, 0, 13);          /* both            */
    CHECK_EQ(hwp_rap2_get_stats(&r, &st), HWP_OK);
    CHECK_EQ(st.events, 41);
    CHECK_EQ(st.dropped, 36);
    CHECK_EQ(st.n, 5);
    CHECK_EQ(hwp_rap2_query(&r, &all, &e), HWP_OK);
    CHECK_EQ(e.lower, 5);
    CHECK_EQ(e.upper, 5);
}

/* Bounds hold for every node after merging two halves; the merge checks
 * the desc and charges no cycles. */
static void test_rap2_merge(void) {
    static hwx_pair ev[6000];
    hwp_rap2_desc d;
    hwp_rap2 a, b;
    hwp_cost cost;
    hwp_rap_stats sa, sb;
    hwp_rng g;
    size_t i;
    hwx_check2 c;
    memset(&d, 0, sizeof d);
    d.x_bits = 24;
    d.y_bits = 24;
    d.tree.nodes = 256;
    hwp_cost_init(&cost, NULL);
    hwp_rng_seed(&g, 11);
    CHECK_EQ(hwp_rap2_init(&a, mem, MEMSZ, &d, &cost), HWP_OK);
    CHECK_EQ(hwp_rap2_init(&b, mem2, MEMSZ, &d, &cost), HWP_OK);
    for (i = 0; i < 6000; i++) {
        ev[i].x = hwp_rng_below(&g, 2) ? 0x1234 : hwp_rng_below(&g, 1u << 24);
        ev[i].y = (ev[i].x * 64 + hwp_rng_below(&g, 64)) & 0xFFFFFF;
        ev[i].weight = 1;
        hwp_rap2_add(i < 3000 ? &a : &b, ev[i].x, ev[i].y, 1);
    }
    hwp_rap2_get_stats(&a, &sa);
    hwp_rap2_get_stats(&b, &sb);
    sa.cycles += sb.cycles; /* both runs' stalls, and nothing for merging */
    CHECK(sb.cycles > 0);
    CHECK_EQ(hwp_rap2_merge(&a, &b), HWP_OK);
    hwp_rap2_get_stats(&a, &sb);
    CHECK_EQ(sb.cycles, sa.cycles);
    CHECK_EQ(sb.events, 6000);
    hwp_rap2_flush(&a);
    CHECK(hwx_check2_tree(&a, ev, 6000, 0.0, &c));
    d.y_base = 0x1000;
    CHECK_EQ(hwp_rap2_init(&b, mem2, MEMSZ, &d, NULL), HWP_OK);
    CHECK_EQ(hwp_rap2_merge(&a, &b), HWP_EMISMATCH);
    CHECK(strstr(hwp_why(&a), "y_base") != NULL);
    CHECK_EQ(hwp_rap2_merge(&a, &a), HWP_EINVAL);
}

/* Reset gives a fresh instance's report; the insn entry takes the pair
 * of fields the desc names, through the tree's class filter. */
static void test_rap2_reset_and_insn(void) {
    hwp_rap2_desc d = square(16);
    hwp_rap2 r;
    hwp_insn in;
    hwp_rap_stats st;
    hwp_rap2_box q = {0x10, 0x10, 0x20, 0x20};
    hwp_rap_est e;
    size_t n0, i;
    d.x_source = HWP_RAP_SRC_PC;
    d.y_source = HWP_RAP_SRC_VALUE;
    d.tree.cls_mask = HWP_CLS_BIT(HWP_CLS_LOAD);
    CHECK_EQ(hwp_rap2_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
    n0 = report(&r, rep);
    memset(&in, 0, sizeof in);
    in.pc = 0x10;
    in.addr = 0x99;
    in.value = 0x20;
    in.cls = HWP_CLS_LOAD;
    for (i = 0; i < 1000; i++) hwp_rap2_insn(&r, &in);
    in.cls = HWP_CLS_STORE; /* filtered out */
    hwp_rap2_insn(&r, &in);
    hwp_rap2_get_stats(&r, &st);
    CHECK_EQ(st.events, 1000);
    /* (pc, value) was profiled, not (pc, addr): all but the events
     * counted above the cell while the tree split down to it (one a
     * level, 16 levels) are in it. */
    CHECK_EQ(hwp_rap2_query(&r, &q, &e), HWP_OK);
    CHECK(e.lower >= 1000 - 16);
    q.y_lo = q.y_hi = 0x99;
    CHECK_EQ(hwp_rap2_query(&r, &q, &e), HWP_OK);
    CHECK(e.upper <= 16);
    CHECK_EQ(hwp_rap2_reset(&r), HWP_OK);
    CHECK_EQ(report(&r, rep2), n0);
    CHECK(memcmp(rep, rep2, n0) == 0);
}

/* Hot rectangles and the accuracy call against the exact profile: a
 * planted hot block of code x data is found inside its box. */
static void test_rap2_hot_and_accuracy(void) {
    static hwx_pair ev[20000];
    hwp_rap2_desc d;
    hwp_rap2 *r;
    hwp_rap2_rect hot[32];
    hwp_rap_acc acc;
    hwx_exact2 x;
    hwp_rng g;
    size_t i, n;
    int inside = 0;
    memset(&d, 0, sizeof d);
    d.x_base = 0x400000;
    d.y_base = 0x7ff000000000ull;
    d.tree.nodes = 1024;
    r = hwx_rap2_new(&d, NULL);
    hwp_rng_seed(&g, 3);
    for (i = 0; i < 20000; i++) {
        if (hwp_rng_below(&g, 10) < 4) { /* 40%: a loop over an array */
            ev[i].x = 0x401000 + 4 * hwp_rng_below(&g, 16);
            ev[i].y = 0x7ff000100000ull + 8 * hwp_rng_below(&g, 32);
        } else {
            ev[i].x = 0x400000 + hwp_rng_below(&g, 1u << 20);
            ev[i].y = 0x7ff000000000ull + hwp_rng_below(&g, 1u << 30);
        }
        ev[i].weight = 1;
        hwp_rap2_add(r, ev[i].x, ev[i].y, 1);
    }
    hwp_rap2_flush(r);
    n = hwp_rap2_hot(r, 0.10, hot, 32);
    CHECK(n > 0 && n <= 32);
    for (i = 0; i < n && i < 32; i++)
        if (hot[i].box.x_lo >= 0x401000 && hot[i].box.x_hi < 0x401040 &&
            hot[i].box.y_lo >= 0x7ff000100000ull &&
            hot[i].box.y_hi < 0x7ff000100100ull)
            inside++;
    CHECK(inside > 0);
    hwx_exact2_build(&x, ev, 20000);
    CHECK_EQ(hwp_rap2_accuracy(r, 0.10, hwx_exact2_box, &x, &acc), HWP_OK);
    CHECK(acc.hot > 0);
    CHECK_EQ(acc.violations, 0);
    CHECK(acc.mean_pct <= 10.0);
    {   /* the text report lists the same hot rectangles, one a line */
        static char text[8192];
        hwp_bufwriter tb;
        hwp_writer tw = hwp_writer_buf(&tb, text, sizeof text);
        const char *p = text;
        size_t lines = 0;
        hwp_rap2_write_text(r, &tw);
        CHECK_HAS(text, "rap2: x 32 bits, y 32 bits, eps=");
        CHECK_HAS(text, "rap2: hot rectangles (>= 10.0% of n):\n");
        while ((p = strstr(p, "] x [")) != NULL) lines++, p++;
        CHECK_EQ(lines, n);
    }
    hwx_exact2_free(&x);
    free(r);
}

/* The report reads back to itself; every cut of it, a damaged tree and
 * a foreign desc are refused with an offset inside the text and leave
 * the instance's report as it was. */
static void test_rap2_json(void) {
    hwp_rap2_desc d, back;
    hwp_rap2 a, b;
    hwp_json_err err;
    size_t n, cut, n0;
    char *p;
    unsigned i;
    memset(&d, 0, sizeof d);
    d.x_bits = 20;
    d.y_bits = 30;
    d.x_base = 0x400000;
    d.tree.nodes = 64;
    d.tree.buffer = 8;
    CHECK_EQ(hwp_rap2_init(&a, mem, MEMSZ, &d, NULL), HWP_OK);
    for (i = 0; i < 3000; i++)
        hwp_rap2_add(&a, 0x400000 + (i * 37u) % 4096, (uint64_t)(i % 7) << 20, 1);
    hwp_rap2_add(&a, 1, 1, 4); /* dropped: the report keeps the count */
    n = report(&a, rep);
    CHECK(n < sizeof rep - 1);
    CHECK_EQ(hwp_rap2_read_desc(&back, rep, n, &err), HWP_OK);
    CHECK_EQ(hwp_rap2_init(&b, mem2, MEMSZ, &back, NULL), HWP_OK);
    CHECK_EQ(hwp_rap2_read_json(&b, rep, n, &err), HWP_OK);
    CHECK_EQ(report(&b, rep2), n);
    CHECK(memcmp(rep, rep2, n) == 0);
    /* Cut reports: refused, offset inside, b unchanged. */
    for (cut = 0; cut < n; cut += 1 + cut / 16) {
        err.why = NULL;
        CHECK(hwp_rap2_read_json(&b, rep, cut, &err) != HWP_OK);
        CHECK(err.why != NULL && err.offset <= cut);
    }
    CHECK_EQ(report(&b, rep2), n);
    CHECK(memcmp(rep, rep2, n) == 0);
    /* A damaged count inside the tree: the offset points into the tree. */
    memcpy(rep2, rep, n);
    p = strstr(rep2, "\"count\":");
    CHECK(p != NULL);
    p[8] = 'x';
    CHECK_EQ(hwp_rap2_read_json(&b, rep2, n, &err), HWP_EFORMAT);
    CHECK(err.offset >= (size_t)(strstr(rep2, "\"tree\":{") - rep2) &&
          err.offset <= (size_t)(p - rep2) + 9);
    n0 = report(&b, rep2);
    CHECK(n0 == n && memcmp(rep, rep2, n) == 0);
    /* Another desc: a mismatch naming the field, also where the trees
     * agree (another y_base). */
    d.y_base = 0x1000;
    CHECK_EQ(hwp_rap2_init(&b, mem2, MEMSZ, &d, NULL), HWP_OK);
    CHECK_EQ(hwp_rap2_read_json(&b, rep, n, &err), HWP_EMISMATCH);
    CHECK(strstr(hwp_why(&b), "y_base") != NULL);
    d.y_base = 0;
    d.y_bits = 31;
    CHECK_EQ(hwp_rap2_init(&b, mem2, MEMSZ, &d, NULL), HWP_OK);
    CHECK_EQ(hwp_rap2_read_json(&b, rep, n, &err), HWP_EMISMATCH);
    CHECK(strstr(hwp_why(&b), "y_bits") != NULL);
    /* A 1-D report is not a 2-D one. */
    CHECK(hwp_rap2_read_desc(&back, "{\"model\":\"rap\",\"version\":1}", 27, &err) != HWP_OK);
}

/* The fuzz entry, driven deterministically (tests/rap/fuzz_drive.h). */
static void test_rap2_fuzz_driver(void) {
    static char m[1 << 17];
    hwp_rap2_desc d;
    hwp_rap2 r;
    hwp_rng g;
    size_t len, i;
    memset(&d, 0, sizeof d);
    d.x_bits = 16;
    d.y_bits = 24;
    d.tree.nodes = 64;
    d.tree.buffer = 16;
    CHECK_EQ(hwp_rap2_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
    hwp_rng_seed(&g, 12);
    for (i = 0; i < 4000; i++)
        hwp_rap2_add(&r, hwp_rng_below(&g, 2) ? 0x100 : hwp_rng_below(&g, 1u << 16),
                     hwp_rng_below(&g, 1u << 25), 1);
    len = report(&r, rep);
    CHECK(len < sizeof m);
    CHECK_EQ(hwx_fuzz_drive(rep, len, m, 13, 2000), 0);
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_rap2_defaults);
    HWT_RUN(test_rap2_bad_desc);
    HWT_RUN(test_rap2_cells_by_hand);
    HWT_RUN(test_rap2_query_bounds);
    HWT_RUN(test_rap2_domain);
    HWT_RUN(test_rap2_merge);
    HWT_RUN(test_rap2_reset_and_insn);
    HWT_RUN(test_rap2_hot_and_accuracy);
    HWT_RUN(test_rap2_json);
    HWT_RUN(test_rap2_fuzz_driver);
    return hwt_end();
}
