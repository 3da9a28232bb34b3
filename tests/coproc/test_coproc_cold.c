/* SPDX-License-Identifier: MIT */
/* tests/coproc/test_coproc_cold.c: the co-processor's cold paths, each
 * against what the header and docs/ARCHITECTURE.md state: an instance
 * that was never initialised is refused by every entry point (status
 * EINVAL, queries answer 0, the JSON writer writes null); a bad desc or
 * application parameter is refused naming the field; merges of
 * instances whose descs or programs differ are refused naming what
 * differs, and an empty instance takes the program of what merges into
 * it; a full result table keeps what it holds and counts what it lost;
 * the idle watchdog fires after `limit` rejected instructions in a row;
 * the call-stack program lists every context it counted. */
#define HWPROF_IMPL
#include "hwprof/hwprof.h"

#include "harness.h"

/* Small descs keep each instance a few KiB. */
static hwp_cp_desc small_desc(void) {
    hwp_cp_desc d;
    memset(&d, 0, sizeof d);
    d.buffer_bytes = 360; /* ten 36-byte samples */
    d.cam_entries = 16;
    d.data_words = 128;
    d.bit_table_bits = 64;
    d.table_entries = 16;
    d.lvp_loads = 16;
    d.lvp_values = 4;
    d.clock_x16 = 1024; /* a fast co-processor: nothing is dropped */
    return d;
}

static void *open_cp(hwp_cp *x, const hwp_cp_desc *d) {
    size_t n = hwp_cp_bytes(d);
    void *m = n ? malloc(n) : NULL;
    if (!m || hwp_cp_init(x, m, n, d, NULL) != HWP_OK) {
        printf("init failed: %s\n", m ? hwp_why(x) : "bytes");
        abort();
    }
    return m;
}

static hwp_insn insn(uint64_t pc, uint32_t cls, uint64_t next, uint32_t ev) {
    hwp_insn i = {0, 0, 0, 0, 0, 0};
    i.pc = pc, i.next_pc = next, i.cls = cls, i.events = ev;
    return i;
}

static void feed(hwp_cp *x, uint64_t pc, uint32_t cls, uint64_t next, uint32_t ev) {
    hwp_insn i = insn(pc, cls, next, ev);
    hwp_cp_insn(x, &i);
}

static size_t text_of(const hwp_cp *x, int json, char *buf, size_t cap) {
    hwp_bufwriter b;
    hwp_writer w = hwp_writer_buf(&b, buf, cap);
    if (json) hwp_cp_write_json(x, &w);
    else hwp_cp_write_text(x, &w);
    CHECK_EQ(b.dropped, 0);
    return b.len;
}

/* ARCHITECTURE.md: every entry point refuses an instance init has not
 * accepted (zeroed, or left by a failed init) without touching it. */
static void test_uninitialised_refused(void) {
    hwp_cp z, ok;
    hwp_cp_desc d = small_desc();
    hwp_cp_stats st;
    hwp_cp_vprof vp;
    hwp_cp_ctx c[1];
    hwp_cp_program p;
    uint64_t t = 7, nt = 7;
    char buf[64];
    void *m = open_cp(&ok, &d);
    memset(&z, 0, sizeof z);
    memset(&p, 0, sizeof p);
    CHECK_EQ(hwp_cp_filter_classes(&z, 1), HWP_EINVAL);
    CHECK_EQ(hwp_cp_filter_region(&z, 1, 0), HWP_EINVAL);
    CHECK_EQ(hwp_cp_filter_mask_pc(&z, 4), HWP_EINVAL);
    CHECK_EQ(hwp_cp_filter_clear(&z), HWP_EINVAL);
    CHECK_EQ(hwp_cp_filter_idle(&z, 4), HWP_EINVAL);
    CHECK_EQ(hwp_cp_filter_idle(NULL, 4), HWP_EINVAL);
    CHECK_EQ(hwp_cp_program_load(&z, &p), HWP_EINVAL);
    CHECK_EQ(hwp_cp_lvp_start(&z, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_cp_lvp_invalidate(&z, 4), HWP_EINVAL);
    CHECK_EQ(hwp_cp_lvp_on_characterised(&z, NULL, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_cp_edge_start(&z), HWP_EINVAL);
    CHECK_EQ(hwp_cp_callstack_start(&z, 1, 0, 1), HWP_EINVAL);
    CHECK_EQ(hwp_cp_memdep_start(&z, 0), HWP_EINVAL);
    CHECK_EQ(hwp_cp_conflict_start(&z, 6, 64), HWP_EINVAL);
    CHECK_EQ(hwp_cp_sync(&z), HWP_EINVAL);
    CHECK_EQ(hwp_cp_flush(&z), HWP_EINVAL);
    CHECK_EQ(hwp_cp_reset(&z), HWP_EINVAL);
    CHECK_EQ(hwp_cp_get_stats(&z, &st), HWP_EINVAL);
    CHECK_EQ(hwp_cp_get_stats(&ok, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_cp_merge(&z, &ok), HWP_EINVAL);
    CHECK_EQ(hwp_cp_merge(&ok, &z), HWP_EINVAL);
    CHECK_EQ(hwp_cp_merge(&ok, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_cp_lvp_estimates(&z, NULL, 0), 0);
    CHECK(!hwp_cp_lvp_value(&z, 4, &vp));
    CHECK(!hwp_cp_lvp_value(&ok, 4, NULL));
    CHECK(!hwp_cp_edge(&z, 4, &t, &nt));
    CHECK(t == 0 && nt == 0); /* the outputs say "no counts", not garbage */
    CHECK_EQ(hwp_cp_edge_target(&z, 4, 8), 0);
    CHECK_EQ(hwp_cp_callstack_count(&z, NULL, 0), 0);
    CHECK_EQ(hwp_cp_callstack_contexts(&z, c, 1), 0);
    CHECK_EQ(hwp_cp_memdep_count(&z, 4, 8), 0);
    CHECK_EQ(hwp_cp_conflict_set(&z, 0), 0);
    CHECK_EQ(hwp_cp_conflict_block(&z, 0), 0);
    CHECK_EQ(hwp_cp_conflict_pc(&z, 0), 0);
    CHECK_EQ(text_of(&z, 0, buf, sizeof buf), 0);
    buf[text_of(&z, 1, buf, sizeof buf - 1)] = 0;
    CHECK_STR(buf, "null");
    /* the refusals left the instance that was passed beside them alone */
    CHECK_EQ(hwp_cp_get_stats(&ok, &st), HWP_OK);
    CHECK_EQ(st.events, 0);
    free(m);
}

/* Each desc field out of its documented range: no size, init refused
 * with a reason naming the field. */
static void test_desc_field_named(void) {
    static const struct { unsigned field; uint32_t v; const char *name; } c[] = {
        {0, 1u << 25, "buffer_bytes"}, {1, 32, "fields"},
        {2, 1u << 21, "cam_entries"}, {3, 8, "data_words"},
        {3, 1u << 25, "data_words"}, {4, 32, "bit_table_bits"},
        {4, 1u << 29, "bit_table_bits"}, {4, 100, "bit_table_bits"},
        {5, 5, "n_hashes"}, {6, 1025, "clock_x16"},
        {7, 3, "table_entries"}, {7, 1u << 25, "table_entries"},
        {8, 3, "lvp_loads"}, {8, 1u << 25, "lvp_loads"},
        {9, 65, "lvp_values"}};
    size_t k;
    unsigned char mem[64];
    for (k = 0; k < sizeof c / sizeof c[0]; k++) {
        hwp_cp_desc d = small_desc();
        uint32_t *f[10];
        hwp_cp x;
        f[0] = &d.buffer_bytes, f[1] = &d.fields, f[2] = &d.cam_entries;
        f[3] = &d.data_words, f[4] = &d.bit_table_bits, f[5] = &d.n_hashes;
        f[6] = &d.clock_x16, f[7] = &d.table_entries, f[8] = &d.lvp_loads;
        f[9] = &d.lvp_values;
        *f[c[k].field] = c[k].v;
        CHECK_EQ(hwp_cp_bytes(&d), 0);
        CHECK_EQ(hwp_cp_init(&x, mem, sizeof mem, &d, NULL), HWP_EINVAL);
        if (!CHECK_HAS(hwp_why(&x), c[k].name)) printf("      case %zu\n", k);
    }
}

/* Merging instances whose descs differ is refused, naming the first
 * field that differs, and leaves the destination as it was. */
static void test_merge_desc_named(void) {
    static const char *const names[] = {
        "buffer_bytes", "fields", "cam_entries", "data_words", "bit_table_bits",
        "n_hashes", "clock_x16", "table_entries", "lvp_loads", "lvp_values", "seed"};
    hwp_cp dst;
    hwp_cp_desc d = small_desc();
    hwp_cp_stats st;
    void *m = open_cp(&dst, &d);
    unsigned k;
    CHECK_EQ(hwp_cp_edge_start(&dst), HWP_OK);
    feed(&dst, 0x10, HWP_CLS_BR_COND, 0x20, HWP_EV_TAKEN);
    for (k = 0; k < sizeof names / sizeof names[0]; k++) {
        hwp_cp_desc e = small_desc();
        hwp_cp src;
        void *ms;
        switch (k) {
        case 0: e.buffer_bytes *= 2; break;
        case 1: e.fields = HWP_CP_F_ALL & ~HWP_CP_F_VALUE; break;
        case 2: e.cam_entries *= 2; break;
        case 3: e.data_words *= 2; break;
        case 4: e.bit_table_bits *= 2; break;
        case 5: e.n_hashes = 3; break;
        case 6: e.clock_x16 = 32; break;
        case 7: e.table_entries *= 2; break;
        case 8: e.lvp_loads *= 2; break;
        case 9: e.lvp_values = 5; break;
        default: e.seed = 9; break;
        }
        ms = open_cp(&src, &e);
        CHECK_EQ(hwp_cp_edge_start(&src), HWP_OK);
        feed(&src, 0x10, HWP_CLS_BR_COND, 0x20, HWP_EV_TAKEN);
        CHECK_EQ(hwp_cp_merge(&dst, &src), HWP_EMISMATCH);
        if (!CHECK_HAS(hwp_why(&dst), names[k])) printf("      case %u\n", k);
        free(ms);
    }
    CHECK_EQ(hwp_cp_get_stats(&dst, &st), HWP_OK);
    CHECK_EQ(st.events, 1);
    free(m);
}

/* Merges across programs: an instance with no program and no events
 * takes the program of the one merged into it (its counts then answer
 * the program's queries); two different programs are refused. */
static void test_merge_programs(void) {
    hwp_cp a, b, e, c;
    hwp_cp_desc d = small_desc();
    uint64_t t, nt;
    void *ma = open_cp(&a, &d), *mb = open_cp(&b, &d), *me = open_cp(&e, &d);
    void *mc = open_cp(&c, &d);
    CHECK_EQ(hwp_cp_edge_start(&a), HWP_OK);
    feed(&a, 0x10, HWP_CLS_BR_COND, 0x20, HWP_EV_TAKEN);
    feed(&a, 0x10, HWP_CLS_BR_COND, 0x14, 0);
    feed(&a, 0x10, HWP_CLS_BR_COND, 0x20, HWP_EV_TAKEN);
    CHECK_EQ(hwp_cp_flush(&a), HWP_OK);
    CHECK_EQ(hwp_cp_merge(&e, &a), HWP_OK); /* e: no program, no events */
    CHECK(hwp_cp_edge(&e, 0x10, &t, &nt));
    CHECK(t == 2 && nt == 1);
    /* e now runs edge profiling: a second edge instance merges too */
    CHECK_EQ(hwp_cp_merge(&e, &a), HWP_OK);
    CHECK(hwp_cp_edge(&e, 0x10, &t, &nt));
    CHECK(t == 4 && nt == 2);
    CHECK_EQ(hwp_cp_memdep_start(&b, 2), HWP_OK);
    CHECK_EQ(hwp_cp_merge(&e, &b), HWP_EMISMATCH);
    CHECK_HAS(hwp_why(&e), "programs differ");
    /* an instance that has seen events keeps its (absent) program */
    feed(&c, 0x10, HWP_CLS_BR_COND, 0x20, HWP_EV_TAKEN);
    CHECK_EQ(hwp_cp_merge(&c, &a), HWP_EMISMATCH);
    /* and one with no program merges into any */
    CHECK_EQ(hwp_cp_merge(&a, &c), HWP_OK);
    free(ma), free(mb), free(me), free(mc);
}

/* Every application's start refuses parameters or fields it cannot
 * work with, naming what is wrong, and leaves the running program. */
static void test_start_refusals(void) {
    hwp_cp x, y;
    hwp_cp_desc d = small_desc();
    hwp_cp_desc nf = small_desc();
    hwp_cp_program p;
    hwp_cp_lvp_desc l;
    void *m = open_cp(&x, &d), *my;
    unsigned k;
    memset(&p, 0, sizeof p);
    CHECK_EQ(hwp_cp_filter_classes(&x, ~(uint32_t)HWP_CLS_ALL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&x), "class bits");
    CHECK_EQ(hwp_cp_program_load(&x, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&x), "NULL");
    p.cls_mask = ~(uint32_t)HWP_CLS_ALL;
    CHECK_EQ(hwp_cp_program_load(&x, &p), HWP_EINVAL);
    CHECK_HAS(hwp_why(&x), "class bits");
    CHECK_EQ(hwp_cp_lvp_invalidate(&x, 4), HWP_EINVAL);
    CHECK_HAS(hwp_why(&x), "load-value profiling");
    CHECK_EQ(hwp_cp_callstack_start(&x, 0, 0, 1), HWP_EINVAL);
    CHECK_HAS(hwp_why(&x), "events");
    CHECK_EQ(hwp_cp_callstack_start(&x, 1, 0, 0), HWP_EINVAL);
    CHECK_EQ(hwp_cp_callstack_start(&x, 1, 0, 65), HWP_EINVAL);
    CHECK_HAS(hwp_why(&x), "depth 1..64");
    CHECK_EQ(hwp_cp_callstack_start(&x, 1, ~(uint32_t)HWP_CLS_ALL, 1), HWP_EINVAL);
    CHECK_EQ(hwp_cp_memdep_start(&x, 13), HWP_EINVAL);
    CHECK_HAS(hwp_why(&x), "gran_bits");
    CHECK_EQ(hwp_cp_conflict_start(&x, 17, 64), HWP_EINVAL);
    CHECK_EQ(hwp_cp_conflict_start(&x, 6, 48), HWP_EINVAL);
    CHECK_EQ(hwp_cp_conflict_start(&x, 6, 1u << 25), HWP_EINVAL);
    CHECK_HAS(hwp_why(&x), "pow2 sets");
    /* 4 slots fit 16 CAM entries and 128 data words; each case breaks
     * one parameter, and the reason names it */
    for (k = 0; k < 16; k++) {
        static const char *const why[] = {
            "slots", "slots", "resel_min", "keep_hits", "failed_limit",
            "done_limit", "copy_min", "counter_bits", "counter_bits",
            "resel_shift", "min_visits", "thrash_mult", "conf_lo_pct",
            "conf_hi_pct", "max_part_log2", "min_samples"};
        memset(&l, 0, sizeof l);
        l.slots = 4;
        switch (k) {
        case 0: l.slots = 3; break;
        case 1: l.slots = 32; break; /* more than 16 CAM entries */
        case 2: l.resel_min = 0x10000; break;
        case 3: l.keep_hits = 0x10000; break;
        case 4: l.failed_limit = 0x10000; break;
        case 5: l.done_limit = 5; break;
        case 6: l.copy_min = 0x10000; break;
        case 7: l.counter_bits = 17; break;
        case 8: l.counter_bits = 1; break;
        case 9: l.resel_shift = 9; break;
        case 10: l.min_visits = 3, l.max_visits = 2; break;
        case 11: l.thrash_mult = 16384; break;
        case 12: l.conf_lo_pct = 50, l.conf_hi_pct = 40; break;
        case 13: l.conf_hi_pct = 101; break;
        case 14: l.max_part_log2 = 17; break;
        default: l.min_samples = 0x80000000u; break;
        }
        CHECK_EQ(hwp_cp_lvp_start(&x, &l), HWP_EINVAL);
        if (!CHECK_HAS(hwp_why(&x), why[k])) printf("      case %u\n", k);
    }
    memset(&l, 0, sizeof l);
    l.slots = 4;
    /* applications that need fields the desc does not capture */
    nf.fields = HWP_CP_F_ADDR;
    my = open_cp(&y, &nf);
    CHECK_EQ(hwp_cp_edge_start(&y), HWP_EINVAL);
    CHECK_HAS(hwp_why(&y), "NEXT");
    CHECK_EQ(hwp_cp_callstack_start(&y, 1, 0, 1), HWP_EINVAL);
    CHECK_HAS(hwp_why(&y), "EVENTS");
    CHECK_EQ(hwp_cp_memdep_start(&y, 2), HWP_EINVAL);
    CHECK_HAS(hwp_why(&y), "PC and ADDR");
    CHECK_EQ(hwp_cp_conflict_start(&y, 6, 64), HWP_EINVAL);
    CHECK_HAS(hwp_why(&y), "EVENTS");
    CHECK_EQ(hwp_cp_lvp_start(&y, &l), HWP_EINVAL);
    CHECK_HAS(hwp_why(&y), "VALUE");
    free(my);
    nf = small_desc();
    nf.data_words = 64; /* the stack alone takes 64 words */
    my = open_cp(&y, &nf);
    CHECK_EQ(hwp_cp_callstack_start(&y, 1, 0, 1), HWP_EINVAL);
    CHECK_HAS(hwp_why(&y), "128 data words");
    free(my);
    /* none of the refusals started a program */
    feed(&x, 0x10, HWP_CLS_LOAD, 0x14, 0);
    CHECK_EQ(x.tagged, 0);
    free(m);
}

/* A result table of two entries: a third branch has no room; the two
 * that fit keep exact counts and the third is counted as lost (the
 * table never replaces). */
static void test_full_result_table(void) {
    hwp_cp x;
    hwp_cp_desc d = small_desc();
    hwp_cp_stats st;
    uint64_t t, nt, pc;
    unsigned found = 0, i;
    void *m;
    d.table_entries = 2;
    m = open_cp(&x, &d);
    CHECK_EQ(hwp_cp_edge_start(&x), HWP_OK);
    for (i = 0; i < 3; i++)
        for (pc = 0x100; pc <= 0x300; pc += 0x100)
            feed(&x, pc, HWP_CLS_BR_COND, pc + 0x40, HWP_EV_TAKEN);
    CHECK_EQ(hwp_cp_flush(&x), HWP_OK);
    CHECK_EQ(hwp_cp_get_stats(&x, &st), HWP_OK);
    CHECK_EQ(st.table_lost, 1);
    for (pc = 0x100; pc <= 0x300; pc += 0x100) {
        if (hwp_cp_edge(&x, pc, &t, &nt)) {
            found++;
            CHECK(t == 3 && nt == 0);
        } else {
            CHECK(t == 0 && nt == 0);
        }
    }
    CHECK_EQ(found, 2);
    CHECK_EQ(hwp_cp_edge_target(&x, 0x400, 0x440), 0); /* probes a full table */
    free(m);
}

static unsigned idle_calls;
static uint32_t count_idle(hwp_cp *x, void *ctx) {
    (void)x, (void)ctx;
    idle_calls++;
    return 0;
}

/* The idle watchdog: on_idle runs after `limit` class-passing
 * instructions in a row rejected by the PC filter; an accepted one
 * starts the count again; 0 turns it off. */
static void test_idle_watchdog(void) {
    hwp_cp x;
    hwp_cp_desc d = small_desc();
    hwp_cp_program p;
    hwp_cp_stats st;
    void *m = open_cp(&x, &d);
    int i;
    memset(&p, 0, sizeof p);
    p.cls_mask = HWP_CLS_BIT(HWP_CLS_LOAD);
    p.on_idle = count_idle;
    CHECK_EQ(hwp_cp_program_load(&x, &p), HWP_OK);
    CHECK_EQ(hwp_cp_filter_mask_pc(&x, 0x40), HWP_OK);
    CHECK_EQ(hwp_cp_filter_idle(&x, 3), HWP_OK);
    for (i = 0; i < 7; i++) feed(&x, 0x40, HWP_CLS_LOAD, 0x44, 0);
    CHECK_EQ(idle_calls, 2);
    feed(&x, 0x80, HWP_CLS_LOAD, 0x84, 0); /* accepted: the streak restarts */
    feed(&x, 0x40, HWP_CLS_LOAD, 0x44, 0);
    feed(&x, 0x40, HWP_CLS_LOAD, 0x44, 0);
    CHECK_EQ(idle_calls, 2);
    feed(&x, 0x40, HWP_CLS_LOAD, 0x44, 0);
    CHECK_EQ(idle_calls, 3);
    CHECK_EQ(hwp_cp_filter_idle(&x, 0), HWP_OK);
    for (i = 0; i < 10; i++) feed(&x, 0x40, HWP_CLS_LOAD, 0x44, 0);
    CHECK_EQ(idle_calls, 3);
    CHECK_EQ(hwp_cp_get_stats(&x, &st), HWP_OK);
    CHECK_EQ(st.idle_events, 3);
    CHECK_EQ(st.masked_rejected, 20);
    free(m);
}

/* The call-stack program's context list: every context counted, each
 * with the count hwp_cp_callstack_count gives its sites; cap bounds
 * what is written, never what is counted. */
static void test_callstack_contexts(void) {
    hwp_cp x;
    hwp_cp_desc d = small_desc();
    hwp_cp_ctx c[4], none = {0xAB, 0xCD};
    const uint64_t in_f[1] = {0xA0}, in_g[2] = {0xB0, 0xA0};
    uint64_t sites[65];
    size_t n, k;
    unsigned seen = 0;
    void *m = open_cp(&x, &d);
    CHECK_EQ(hwp_cp_callstack_start(&x, HWP_EV_MISPRED, HWP_CLS_BIT(HWP_CLS_BR_COND), 2),
             HWP_OK);
    feed(&x, 0x1000, HWP_CLS_BR_COND, 0x1004, HWP_EV_MISPRED); /* main: 1 */
    feed(&x, 0xA0, HWP_CLS_CALL, 0x2000, 0);
    feed(&x, 0x2000, HWP_CLS_BR_COND, 0x2004, HWP_EV_MISPRED); /* f: 2 */
    feed(&x, 0x2000, HWP_CLS_BR_COND, 0x2004, HWP_EV_MISPRED);
    feed(&x, 0xB0, HWP_CLS_CALL, 0x3000, 0);
    feed(&x, 0x3000, HWP_CLS_BR_COND, 0x3004, HWP_EV_MISPRED); /* g in f: 3 */
    feed(&x, 0x3000, HWP_CLS_BR_COND, 0x3004, HWP_EV_MISPRED);
    feed(&x, 0x3000, HWP_CLS_BR_COND, 0x3004, HWP_EV_MISPRED);
    feed(&x, 0x3000, HWP_CLS_BR_COND, 0x3004, 0);
    CHECK_EQ(hwp_cp_flush(&x), HWP_OK);
    CHECK_EQ(hwp_cp_callstack_contexts(&x, NULL, 0), 3);
    CHECK_EQ(hwp_cp_callstack_contexts(&x, &none, 0), 3);
    CHECK(none.key == 0xAB && none.events == 0xCD);
    n = hwp_cp_callstack_contexts(&x, c, 4);
    CHECK_EQ(n, 3);
    for (k = 0; k < n && k < 4; k++) {
        if (c[k].key == hwp_cp_callstack_key(NULL, 0)) seen |= 1, CHECK_EQ(c[k].events, 1);
        if (c[k].key == hwp_cp_callstack_key(in_f, 1)) seen |= 2, CHECK_EQ(c[k].events, 2);
        if (c[k].key == hwp_cp_callstack_key(in_g, 2)) seen |= 4, CHECK_EQ(c[k].events, 3);
    }
    CHECK_EQ(seen, 7);
    CHECK_EQ(hwp_cp_callstack_count(&x, in_g, 2), 3);
    /* more than 64 sites, or sites missing, name no context */
    memset(sites, 0, sizeof sites);
    CHECK_EQ(hwp_cp_callstack_key(sites, 65), 0);
    CHECK_EQ(hwp_cp_callstack_key(NULL, 1), 0);
    CHECK_EQ(hwp_cp_callstack_count(&x, sites, 65), 0);
    CHECK_EQ(hwp_cp_callstack_count(&x, NULL, 1), 0);
    free(m);
}

/* The text report of a load-value run lists each load it holds with the
 * samples hwp_cp_lvp_value reports for it. */
static void test_lvp_text(void) {
    hwp_cp x;
    hwp_cp_desc d = small_desc();
    hwp_cp_vprof vp;
    char *buf = malloc(1 << 16), want[64];
    int i;
    void *m;
    d.cam_entries = 256, d.data_words = 1024, d.lvp_loads = 64;
    m = open_cp(&x, &d);
    CHECK_EQ(hwp_cp_lvp_start(&x, NULL), HWP_OK);
    for (i = 0; i < 20000; i++) {
        hwp_insn in = insn(0x400, HWP_CLS_LOAD, 0x404, 0);
        in.value = 7;
        hwp_cp_insn(&x, &in);
    }
    CHECK_EQ(hwp_cp_flush(&x), HWP_OK);
    CHECK(hwp_cp_lvp_value(&x, 0x400, &vp));
    CHECK(vp.samples > 0 && vp.nvals >= 1 && vp.value[0] == 7);
    buf[text_of(&x, 0, buf, (1 << 16) - 1)] = 0;
    CHECK_HAS(buf, "program lvp");
    snprintf(want, sizeof want, "load 0x400 samples %" PRIu64 " ", vp.samples);
    CHECK_HAS(buf, want);
    CHECK_HAS(buf, "value 0x7 hits ");
    free(buf);
    free(m);
}

/* The baseline sampler and the metric refuse what they cannot use. */
static void test_simple_cold(void) {
    hwp_cp_simple z;
    hwp_cp_simple_desc d;
    hwp_cp_simple_stats st;
    hwp_cp_truth t = {1, 2, 3};
    char buf[16];
    hwp_bufwriter b;
    hwp_writer w = hwp_writer_buf(&b, buf, sizeof buf - 1);
    memset(&z, 0, sizeof z);
    memset(&d, 0, sizeof d);
    CHECK(hwp_cp_simple_bytes(NULL) > 0);
    CHECK_EQ(hwp_cp_simple_bytes(NULL), hwp_cp_simple_bytes(&d)); /* zero = defaults */
    d.entries = 12;
    CHECK_EQ(hwp_cp_simple_bytes(&d), 0);
    d.entries = 2;
    CHECK_EQ(hwp_cp_simple_bytes(&d), 0);
    CHECK_EQ(hwp_cp_simple_reset(&z), HWP_EINVAL);
    CHECK_EQ(hwp_cp_simple_flush(&z), HWP_EINVAL);
    CHECK_EQ(hwp_cp_simple_get_stats(&z, &st), HWP_EINVAL);
    CHECK_EQ(hwp_cp_simple_merge(&z, &z), HWP_EINVAL);
    CHECK_EQ(hwp_cp_simple_estimates(&z, NULL, 0), 0);
    CHECK_EQ(hwp_cp_simple_read_desc(NULL, "{}", 2, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_cp_read_desc(NULL, "{}", 2, NULL), HWP_EINVAL);
    hwp_cp_simple_write_json(&z, &w);
    buf[b.len] = 0;
    CHECK_STR(buf, "null");
    /* the longest period still takes a sample of 2^32 - 2 loads (its mean
     * gap is 2^32 - 2), so no period meets an overhead of 0; of fewer
     * loads a period longer than the run takes none, and costs nothing */
    CHECK_EQ(hwp_cp_simple_period_for(0xFFFFFFFEull, 0, NULL, NULL), 0xFFFFFFFFu);
    CHECK_EQ(hwp_cp_simple_overhead(1000, hwp_cp_simple_period_for(1000, 0, NULL, NULL),
                                    NULL, NULL), 0);
    /* the overhead model takes a period below 2 as 2 */
    CHECK_EQ(hwp_cp_simple_overhead(1000, 0, NULL, NULL),
             hwp_cp_simple_overhead(1000, 2, NULL, NULL));
    /* no desc: the documented defaults (a sample every 10000 loads) */
    {
        hwp_cp_simple s;
        size_t n = hwp_cp_simple_bytes(NULL);
        void *m = malloc(n);
        char js[512];
        hwp_bufwriter jb;
        hwp_writer jw = hwp_writer_buf(&jb, js, sizeof js - 1);
        CHECK_EQ(hwp_cp_simple_init(&s, m, n, NULL, NULL), HWP_OK);
        hwp_cp_simple_write_json(&s, &jw);
        js[jb.len] = 0;
        CHECK_HAS(js, "\"period\":10000,");
        free(m);
    }
    CHECK(hwp_cp_wrms(NULL, 0, NULL, 0, 0) == -1.0);
    CHECK(hwp_cp_wrms(&t, 1, NULL, 1, 0) == -1.0);
}

/* Edge profiling (sec. 3.6): a branch's 16-bit co-processor counter
 * saturating interrupts, and the host's table keeps counting exactly past
 * 2^16; direct calls are no indirect targets, indirect calls are. */
static void test_edge_counts_past_counter(void) {
    hwp_cp x;
    hwp_cp_desc d = small_desc();
    uint64_t t = 0, nt = 0;
    void *m = open_cp(&x, &d);
    int i;
    CHECK_EQ(hwp_cp_edge_start(&x), HWP_OK);
    for (i = 0; i < 70000; i++) feed(&x, 0x10, HWP_CLS_BR_COND, 0x40, HWP_EV_TAKEN);
    for (i = 0; i < 3; i++) feed(&x, 0x10, HWP_CLS_BR_COND, 0x14, 0);
    for (i = 0; i < 5; i++) feed(&x, 0x50, HWP_CLS_CALL, 0x900, 0);
    for (i = 0; i < 4; i++) feed(&x, 0x60, HWP_CLS_CALL, 0xA00, HWP_EV_INDIRECT);
    CHECK_EQ(hwp_cp_flush(&x), HWP_OK);
    CHECK(hwp_cp_edge(&x, 0x10, &t, &nt));
    CHECK_EQ(t, 70000);
    CHECK_EQ(nt, 3);
    CHECK_EQ(hwp_cp_edge_target(&x, 0x50, 0x900), 0);
    CHECK_EQ(hwp_cp_edge_target(&x, 0x60, 0xA00), 4);
    free(m);
}

/* Report src with `from` replaced by `to`, read into x. */
static hwp_status read_edited(hwp_cp *x, const char *src, const char *from,
                              const char *to, hwp_json_err *err) {
    char out[4096];
    if (hwt_edit(src, from, to, out, sizeof out) < 0) return HWP_OK;
    return hwp_cp_read_json(x, out, strlen(out), err);
}

/* Reports the readers cannot hold are refused with the reason. */
static void test_reports_refused(void) {
    hwp_cp x;
    hwp_cp_desc d = small_desc(), rd;
    hwp_cp_simple s;
    hwp_cp_simple_desc sd = {2, 2, 4, 1, 5};
    hwp_json_err err = {0, 0};
    char js[1024], src[4096];
    size_t n = hwp_cp_simple_bytes(&sd);
    void *m = open_cp(&x, &d), *ms = malloc(n);
    CHECK_EQ(hwp_cp_edge_start(&x), HWP_OK);
    feed(&x, 0x10, HWP_CLS_BR_COND, 0x40, HWP_EV_TAKEN);
    CHECK_EQ(hwp_cp_flush(&x), HWP_OK);
    src[text_of(&x, 1, src, sizeof src - 1)] = 0;
    CHECK_EQ(read_edited(&x, src, "\"kind\":\"edge\"", "\"kind\":\"bogus\"", &err),
             HWP_EFORMAT);
    CHECK_HAS(err.why, "unknown table kind");
    CHECK_EQ(read_edited(&x, src, "\"app\":\"edge\"", "\"app\":\"lvp\"", &err),
             HWP_EFORMAT);
    CHECK_HAS(err.why, "needs \"lvp\"");
    snprintf(js, sizeof js, "{\"model\":\"coproc\",\"version\":1,\"desc\":{\"cam_entries\":4294967296}}");
    CHECK_EQ(hwp_cp_read_desc(&rd, js, strlen(js), &err), HWP_EFORMAT);
    CHECK_HAS(err.why, "out of the field's range");
    /* five loads' totals for a table of four entries */
    CHECK_EQ(hwp_cp_simple_init(&s, ms, n, &sd, NULL), HWP_OK);
    snprintf(js, sizeof js,
             "{\"model\":\"coproc_simple\",\"version\":1,\"desc\":{\"period\":2,\"buffer\":2,"
             "\"entries\":4,\"min_samples\":1,\"seed\":\"0x5\"},\"stats\":{\"events\":5,"
             "\"dropped\":0,\"evicted\":0,\"cycles\":0,\"samples\":5,\"interrupts\":3,"
             "\"pending\":0},\"buffer\":[],\"pairs\":[{\"pc\":\"0x1\",\"count\":1},"
             "{\"pc\":\"0x2\",\"count\":1},{\"pc\":\"0x3\",\"count\":1},"
             "{\"pc\":\"0x4\",\"count\":1},{\"pc\":\"0x5\",\"count\":1}]}");
    CHECK_EQ(hwp_cp_simple_read_json(&s, js, strlen(js), &err), HWP_EFORMAT);
    CHECK_HAS(err.why, "more pairs than the table holds");
    free(ms);
    free(m);
}

/* A report's load records read back into the slots they had, so it
 * writes out the same: records whose home slots collide (and wrap past
 * the table's end) and a full table, each listed in several orders. The
 * load table is linear-probed; listing it in slot order from 0 re-inserts
 * a wrapped cluster in other slots, and the next report lists it
 * differently. */
static void test_load_records_round_trip(void) {
    hwp_cp x, y;
    hwp_cp_desc d = small_desc();
    hwp_json_err err = {0, 0};
    char *empty = malloc(1 << 14), *in = malloc(1 << 14), *out1 = malloc(1 << 14),
         *out2 = malloc(1 << 14), rec[128], *cut;
    uint64_t pcs[16], pc;
    uint32_t n = 0, round, i, mask = d.lvp_loads - 1;
    void *mx, *my;
    d.cam_entries = 256, d.data_words = 1024; /* what load-value profiling needs */
    mx = open_cp(&x, &d), my = open_cp(&y, &d);
    CHECK_EQ(hwp_cp_lvp_start(&x, NULL), HWP_OK);
    empty[text_of(&x, 1, empty, (1 << 14) - 1)] = 0;
    cut = strstr(empty, "\"loads\":[]");
    CHECK(cut != NULL);
    cut += 9; /* between the brackets */
    /* four loads homed on the last slot, two on the one before, then ten
     * anywhere: the first six wrap past the end of the table */
    for (pc = 0x1000; n < 16; pc += 4) {
        uint32_t home = (uint32_t)hwp_mix64(pc) & mask;
        if ((n < 4 && home == mask) || (n >= 4 && n < 6 && home == mask - 1) ||
            (n >= 6 && home < mask - 1))
            pcs[n++] = pc;
    }
    for (round = 0; round < 8; round++) {
        uint32_t k = round < 4 ? 8 : 16, at = 0; /* part full, then full */
        char list[4096];
        list[0] = 0;
        for (i = 0; i < k; i++) {
            uint32_t j = (i * (2 * round + 1) + round) % k; /* an order per round */
            snprintf(rec, sizeof rec,
                     "%s{\"pc\":\"0x%" PRIx64 "\",\"samples\":1,\"values\":"
                     "[{\"value\":\"0x1\",\"hits\":1,\"misses\":0}]}",
                     i ? "," : "", pcs[j]);
            at += (uint32_t)snprintf(list + at, sizeof list - at, "%s", rec);
        }
        snprintf(in, 1 << 14, "%.*s%s%s", (int)(cut - empty), empty, list, cut);
        CHECK_EQ(hwp_cp_read_json(&x, in, strlen(in), &err), HWP_OK);
        out1[text_of(&x, 1, out1, (1 << 14) - 1)] = 0;
        CHECK_EQ(hwp_cp_read_json(&y, out1, strlen(out1), &err), HWP_OK);
        out2[text_of(&y, 1, out2, (1 << 14) - 1)] = 0;
        CHECK_STR(out2, out1);
    }
    free(empty), free(in), free(out1), free(out2);
    free(mx), free(my);
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_uninitialised_refused);
    HWT_RUN(test_desc_field_named);
    HWT_RUN(test_merge_desc_named);
    HWT_RUN(test_merge_programs);
    HWT_RUN(test_start_refusals);
    HWT_RUN(test_full_result_table);
    HWT_RUN(test_idle_watchdog);
    HWT_RUN(test_callstack_contexts);
    HWT_RUN(test_lvp_text);
    HWT_RUN(test_simple_cold);
    HWT_RUN(test_edge_counts_past_counter);
    HWT_RUN(test_reports_refused);
    HWT_RUN(test_load_records_round_trip);
    return hwt_end();
}
