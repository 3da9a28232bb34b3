/* SPDX-License-Identifier: MIT */
/* Unit tests for hwprof/coproc.h: desc validation, the instruction filter,
 * the sample buffer's drops, the resources, the load-value slot rules
 * (white-box against the appendix), the estimator, the sec. 3.6
 * applications on synthetic programs with known answers, merge, reports
 * and cost charging. Fast and deterministic (suite unit). */
#define _POSIX_C_SOURCE 200112L
#define HWPROF_IMPL
#include "hwprof/coproc.h"

#include "harness.h"
#include "coproc/lvp_stream.h"
#include "coproc/ht_stream.h"

static unsigned char *mem_for(size_t bytes) {
    void *p = NULL;
    if (posix_memalign(&p, 16, bytes ? bytes : 16)) abort();
    return (unsigned char *)p;
}

/* An instance with a fast co-processor (64 cycles per host instruction):
 * nothing is dropped unless a test wants it. */
static unsigned char *make(hwp_cp *x, hwp_cp_desc *d, hwp_cost *c) {
    size_t b = hwp_cp_bytes(d);
    unsigned char *m = mem_for(b);
    if (hwp_cp_init(x, m, b, d, c) != HWP_OK) {
        printf("init failed: %s\n", hwp_why(x));
        abort();
    }
    return m;
}

static hwp_insn insn(uint64_t pc, uint32_t cls, uint64_t addr, uint64_t value,
                     uint32_t events) {
    hwp_insn i = {0, 0, 0, 0, 0, 0};
    i.pc = pc, i.next_pc = pc + 4, i.addr = addr, i.value = value;
    i.cls = cls, i.events = events;
    return i;
}

static void test_desc_validation(void) {
    hwp_cp_desc d;
    hwp_cp x;
    unsigned char *m;
    size_t b = hwp_cp_bytes(NULL);
    CHECK(b > 0);
    CHECK_EQ(b, HWP_CP_BYTES(2048, 36, 256, 1024, 8192, 4096, 2048, 8));
    CHECK_EQ(b % 16, 15); /* room to align any address */
    memset(&d, 0, sizeof d);
    d.data_words = 1000;
    CHECK_EQ(hwp_cp_bytes(&d), 0);
    m = mem_for(b + 32);
    CHECK_EQ(hwp_cp_init(&x, m, b, &d, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&x), "data_words");
    d.data_words = 0;
    d.cam_entries = 100;
    CHECK_EQ(hwp_cp_init(&x, m, b, &d, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&x), "cam_entries");
    d.cam_entries = 0;
    d.buffer_bytes = 10; /* smaller than one 36-byte sample */
    CHECK_EQ(hwp_cp_init(&x, m, b, &d, NULL), HWP_EINVAL);
    d.buffer_bytes = 0;
    d.n_hashes = 5;
    CHECK_EQ(hwp_cp_init(&x, m, b, &d, NULL), HWP_EINVAL);
    /* storage of any alignment: the worst case takes all the padding */
    CHECK_EQ(hwp_cp_init(&x, m + 8, b - 7, NULL, NULL), HWP_OK);
    CHECK_EQ(hwp_cp_init(&x, m + 1, b, NULL, NULL), HWP_OK);
    CHECK_EQ(hwp_cp_init(&x, m + 1, b - 1, NULL, NULL), HWP_ENOSPC);
    CHECK_EQ(hwp_cp_init(&x, m, b, NULL, NULL), HWP_OK);
    CHECK_STR(hwp_why(&x), "");
    /* fewer fields: smaller samples, more of them in the same bytes */
    memset(&d, 0, sizeof d);
    d.fields = HWP_CP_F_PC | HWP_CP_F_VALUE;
    CHECK_EQ(hwp_cp_bytes(&d), HWP_CP_BYTES(2048, 16, 256, 1024, 8192, 4096, 2048, 8));
    /* a bad handle is refused by cold calls */
    {
        hwp_cp bad;
        memset(&bad, 0, sizeof bad);
        CHECK_EQ(hwp_cp_lvp_start(&bad, NULL), HWP_EINVAL);
        CHECK_EQ(hwp_cp_flush(&bad), HWP_EINVAL);
        CHECK_EQ(hwp_cp_filter_region(&bad, 1, 0), HWP_EINVAL);
    }
    /* lvp desc checks */
    {
        hwp_cp_lvp_desc ld;
        memset(&ld, 0, sizeof ld);
        ld.slots = 100;
        CHECK_EQ(hwp_cp_lvp_start(&x, &ld), HWP_EINVAL);
        CHECK_HAS(hwp_why(&x), "slots");
        ld.slots = 512; /* more than 256 CAM entries */
        CHECK_EQ(hwp_cp_lvp_start(&x, &ld), HWP_EINVAL);
        ld.slots = 0;
        ld.conf_lo_pct = 95;
        CHECK_EQ(hwp_cp_lvp_start(&x, &ld), HWP_EINVAL);
        CHECK_EQ(hwp_cp_lvp_start(&x, NULL), HWP_OK);
    }
    CHECK_EQ(hwp_cp_filter_region(&x, 3, 4), HWP_EINVAL);
    free(m);
}

/* A custom program that records which PCs reach its routine. */
typedef struct seen {
    uint64_t pcs[4096];
    uint32_t n;
    uint32_t extra; /* data writes per sample, to set the routine's cost */
} seen;

static int seen_routine(hwp_cp *x, const hwp_insn *s, void *ctx) {
    seen *z = (seen *)ctx;
    uint32_t k;
    if (z->n < 4096) z->pcs[z->n] = s->pc;
    z->n++;
    for (k = 0; k < z->extra; k++) hwp_cp_dwrite(x, k, s->pc);
    return HWP_CP_DONE;
}

static void load_seen(hwp_cp *x, seen *z, uint32_t cls_mask) {
    hwp_cp_program p;
    unsigned c;
    memset(&p, 0, sizeof p);
    for (c = 0; c < HWP_CLS_COUNT; c++) p.routine[c] = seen_routine;
    p.ctx = z;
    p.cls_mask = cls_mask;
    CHECK_EQ(hwp_cp_program_load(x, &p), HWP_OK);
}

static void test_filter_class_region_mask(void) {
    hwp_cp x;
    hwp_cp_desc d;
    hwp_cp_stats st;
    static seen z;
    unsigned char *m;
    hwp_rng r;
    uint64_t i, masked_pcs[16], in_region = 0, bad = 0, loads = 0;
    unsigned k;
    memset(&d, 0, sizeof d);
    d.clock_x16 = 1024;
    m = make(&x, &d, NULL);
    memset(&z, 0, sizeof z);
    load_seen(&x, &z, HWP_CLS_BIT(HWP_CLS_LOAD));
    CHECK_EQ(hwp_cp_filter_region(&x, 3, 2), HWP_OK);
    for (k = 0; k < 16; k++) {
        masked_pcs[k] = 0x1000 + 64u * k;
        hwp_cp_filter_mask_pc(&x, masked_pcs[k]);
        CHECK(hwp_cp_filter_masked(&x, masked_pcs[k]));
    }
    hwp_rng_seed(&r, 5);
    for (i = 0; i < 3000; i++) {
        uint64_t pc = 0x1000 + 4u * hwp_rng_below(&r, 512);
        uint32_t cls = hwp_rng_below(&r, 3) ? HWP_CLS_LOAD : HWP_CLS_OTHER;
        hwp_insn in = insn(pc, cls, 0, 0, 0);
        hwp_cp_insn(&x, &in);
        if (cls != HWP_CLS_LOAD) continue;
        loads++;
        /* region: the documented hash, computed here independently */
        if ((((pc * 0x9E3779B97F4A7C15ull) >> 32) & 3u) == 2u &&
            !hwp_cp_filter_masked(&x, pc))
            in_region++;
    }
    hwp_cp_flush(&x);
    hwp_cp_get_stats(&x, &st);
    CHECK_EQ(st.events, 3000);
    CHECK_EQ(st.class_passed, loads);
    CHECK_EQ(z.n, in_region);
    CHECK_EQ(st.tagged, in_region);
    CHECK_EQ(st.dropped, 0);
    CHECK_EQ(st.region_rejected + st.masked_rejected + st.tagged, loads);
    for (i = 0; i < z.n && i < 4096; i++) {
        if ((((z.pcs[i] * 0x9E3779B97F4A7C15ull) >> 32) & 3u) != 2u) bad++;
        for (k = 0; k < 16; k++)
            if (z.pcs[i] == masked_pcs[k]) bad++;
    }
    CHECK_EQ(bad, 0); /* a masked or out-of-region PC never reaches a routine */
    CHECK(in_region > 3000 / 3 / 4 / 2); /* the region is about a quarter */
    /* several hash functions: a PC is masked only if all its bits are set */
    CHECK_EQ(hwp_cp_filter_clear(&x), HWP_OK);
    CHECK(!hwp_cp_filter_masked(&x, masked_pcs[0]));
    free(m);
}

/* Drops happen exactly when the buffer is full. A slow co-processor
 * (clock 1/16 cycle per host instruction, 200-cycle routine): the first
 * sample starts at once and leaves the buffer, the next `cap` fill it,
 * every later one is dropped. */
static void test_buffer_drops_exact(void) {
    hwp_cp x;
    hwp_cp_desc d;
    hwp_cp_stats st;
    static seen z;
    unsigned char *m;
    uint32_t i, cap;
    memset(&d, 0, sizeof d);
    d.clock_x16 = 1;
    d.buffer_bytes = 360; /* 10 samples of 36 bytes */
    m = make(&x, &d, NULL);
    memset(&z, 0, sizeof z);
    z.extra = 200;
    load_seen(&x, &z, HWP_CLS_ALL);
    hwp_cp_get_stats(&x, &st);
    cap = st.buffer_samples;
    CHECK_EQ(cap, 10);
    for (i = 0; i < cap + 57; i++) {
        hwp_insn in = insn(0x100 + 4u * i, HWP_CLS_OTHER, 0, 0, 0);
        hwp_cp_insn(&x, &in);
    }
    hwp_cp_get_stats(&x, &st);
    CHECK_EQ(st.tagged, cap + 57);
    CHECK_EQ(st.dropped, 57 - 1);
    CHECK_EQ(st.processed, 1);
    hwp_cp_flush(&x);
    hwp_cp_get_stats(&x, &st);
    CHECK_EQ(st.processed, cap + 1);
    CHECK_EQ(z.n, cap + 1);
    CHECK_EQ(st.cp_cycles, (uint64_t)(cap + 1) * (1 + 200));
    free(m);
    /* a co-processor as fast as the arrivals never drops: 1-cycle routine
     * (dispatch only), one tagged instruction per host cycle */
    d.clock_x16 = 16;
    m = make(&x, &d, NULL);
    load_seen(&x, &z, HWP_CLS_ALL);
    z.extra = 0;
    for (i = 0; i < 5000; i++) {
        hwp_insn in = insn(0x100, HWP_CLS_OTHER, 0, 0, 0);
        hwp_cp_insn(&x, &in);
    }
    CHECK_EQ(x.dropped, 0);
    /* two cycles per sample, one arrival per cycle: half must go, less
     * the buffer's worth that is still queued */
    z.extra = 1;
    for (i = 0; i < 5000; i++) {
        hwp_insn in = insn(0x100, HWP_CLS_OTHER, 0, 0, 0);
        hwp_cp_insn(&x, &in);
    }
    CHECK(x.dropped >= 2500 - cap - 2 && x.dropped <= 2500 + 2);
    free(m);
}

static void test_resources(void) {
    hwp_cp x;
    hwp_cp_desc d;
    unsigned char *m;
    hwp_rng r;
    uint32_t i, bits;
    memset(&d, 0, sizeof d);
    d.cam_entries = 64;
    m = make(&x, &d, NULL);
    /* CAM: match returns the index; invalidate hides it; keys unique */
    for (i = 0; i < 64; i++) hwp_cp_cam_write(&x, i, 1000 + 7u * i);
    for (i = 0; i < 64; i++) CHECK_EQ(hwp_cp_cam_match(&x, 1000 + 7u * i), i);
    CHECK_EQ(hwp_cp_cam_match(&x, 999), HWP_CP_NONE);
    hwp_cp_cam_invalidate(&x, 5);
    CHECK_EQ(hwp_cp_cam_match(&x, 1035), HWP_CP_NONE);
    CHECK(!hwp_cp_cam_valid(&x, 5));
    CHECK_EQ(hwp_cp_cam_match(&x, 1042), 6); /* probe chains survive */
    hwp_cp_cam_write(&x, 7, 1000); /* key of entry 0 moves to entry 7 */
    CHECK_EQ(hwp_cp_cam_match(&x, 1000), 7);
    CHECK(!hwp_cp_cam_valid(&x, 0));
    hwp_rng_seed(&r, 9);
    for (i = 0; i < 20000; i++) { /* random churn against a reference */
        uint32_t e = hwp_rng_below(&r, 64);
        uint64_t key = hwp_rng_below(&r, 200);
        if (hwp_rng_below(&r, 3)) hwp_cp_cam_write(&x, e, key);
        else hwp_cp_cam_invalidate(&x, e);
    }
    {
        uint32_t bad = 0, k;
        for (i = 0; i < 200; i++) {
            uint32_t want = HWP_CP_NONE;
            for (k = 0; k < 64; k++)
                if (hwp_cp_cam_valid(&x, k) && x.cam_key[k] == i) want = k;
            if (hwp_cp_cam_match(&x, i) != want) bad++;
        }
        CHECK_EQ(bad, 0);
    }
    hwp_cp_cam_invalidate_all(&x);
    CHECK_EQ(hwp_cp_cam_match(&x, 1042), HWP_CP_NONE);
    /* saturating read-modify-write never wraps, for every width */
    for (bits = 1; bits <= 32; bits++) {
        uint64_t ref = 0, max = bits == 32 ? 0xFFFFFFFFull : (1ull << bits) - 1;
        uint32_t v = 0, bad = 0;
        hwp_cp_dwrite(&x, 3, 0);
        for (i = 0; i < 300; i++) {
            uint32_t add = hwp_rng_u32(&r) >> hwp_rng_below(&r, 32);
            ref = ref + add > max ? max : ref + add;
            v = hwp_cp_dsat_add(&x, 3, add, bits);
            if (v != ref) bad++;
        }
        CHECK_EQ(bad, 0);
        CHECK_EQ(v, max);
    }
    /* index registers: wrap at their width, or saturate */
    hwp_cp_ireg_width(&x, 1, 3);
    for (i = 0; i < 9; i++) hwp_cp_ireg_inc(&x, 1);
    CHECK_EQ(hwp_cp_ireg(&x, 1), 1);
    for (i = 0; i < 20; i++) hwp_cp_ireg_sinc(&x, 1);
    CHECK_EQ(hwp_cp_ireg(&x, 1), 7);
    for (i = 0; i < 20; i++) hwp_cp_ireg_sdec(&x, 1);
    CHECK_EQ(hwp_cp_ireg(&x, 1), 0);
    /* data addresses wrap at the array size */
    hwp_cp_dwrite(&x, 1024 + 9, 77);
    CHECK_EQ(hwp_cp_dread(&x, 9), 77);
    free(m);
}

/* ---- load-value profiling, white-box against the appendix ------------- */

static void lvp_feed(hwp_cp *x, uint64_t pc, uint64_t value) {
    hwp_cp_load(x, pc, 0, value);
    hwp_cp_sync(x);
}

/* A co-processor on the default desc at the fastest clock it allows (64
 * of its cycles per host instruction), so its routines keep up with the
 * stream, and a zeroed load-value desc for the test to fill in. */
static unsigned char *lvp_make(hwp_cp *x, hwp_cp_desc *d, hwp_cp_lvp_desc *ld) {
    memset(d, 0, sizeof *d);
    d->clock_x16 = 1024;
    memset(ld, 0, sizeof *ld);
    return make(x, d, NULL);
}

static void test_lvp_slot_rules(void) {
    hwp_cp x;
    hwp_cp_desc d;
    hwp_cp_lvp_desc ld;
    unsigned char *m;
    uint32_t i, t;
    uint64_t ign;
    memset(&d, 0, sizeof d);
    d.clock_x16 = 1024;
    d.seed = 3;
    m = make(&x, &d, NULL);
    memset(&ld, 0, sizeof ld);
    ld.slots = 4;
    ld.failed_limit = 100;
    ld.done_limit = 4;
    ld.thrash_mult = 1000; /* no thrash interrupts in this white-box run */
    CHECK_EQ(hwp_cp_lvp_start(&x, &ld), HWP_OK);
    /* empty slots are taken in order; the new value is active, hits 1 */
    for (i = 0; i < 4; i++) lvp_feed(&x, 0x100 + 4u * i, 7);
    for (i = 0; i < 4; i++) {
        CHECK_EQ(hwp_cp_cam_match(&x, 0x100 + 4u * i), i);
        CHECK_EQ(x.data[4 * i], 7);
        CHECK_EQ(x.data[4 * i + 1], 1);
        CHECK_EQ(x.data[4 * i + 2], 0);
        CHECK_EQ(x.data[4 * i + 3], 1);
    }
    CHECK_EQ(hwp_cp_ireg(&x, 0), 0); /* the replacement index wrapped */
    /* hits and misses: total counts both */
    lvp_feed(&x, 0x100, 7);
    lvp_feed(&x, 0x100, 8);
    CHECK_EQ(x.data[1], 2);
    CHECK_EQ(x.data[2], 1);
    CHECK_EQ(x.data[3], 3);
    /* a slot whose total is the maximum is never replaced: the random
     * number (0..255) cannot exceed it; the sample is ignored and the
     * failed counter rises */
    x.data[3] = 255;
    ign = x.lvp.ignored;
    for (i = 0; i < 50; i++) lvp_feed(&x, 0x900 + 4u * i, 1);
    CHECK_EQ(x.lvp.ignored - ign, 50);
    CHECK_EQ(hwp_cp_ireg(&x, 1), 50);
    CHECK_EQ(hwp_cp_cam_match(&x, 0x100), 0);
    CHECK_EQ(hwp_cp_ireg(&x, 0), 0);
    /* a slot with total 1 is replaced with probability 254/256: after a
     * success the index moves on, the failed counter drops by one and
     * the new slot is reset */
    x.data[3] = 1;
    t = hwp_cp_ireg(&x, 1);
    for (i = 0; i < 20 && hwp_cp_ireg(&x, 0) == 0; i++) lvp_feed(&x, 0xA00, 5);
    CHECK_EQ(hwp_cp_ireg(&x, 0), 1);
    CHECK_EQ(hwp_cp_cam_match(&x, 0xA00), 0);
    CHECK_EQ(hwp_cp_cam_match(&x, 0x100), HWP_CP_NONE);
    CHECK_EQ(x.data[0], 5);
    CHECK_EQ(x.data[3], 1);
    CHECK_EQ(hwp_cp_ireg(&x, 1), t + i - 1 - 1);
    CHECK_EQ(x.lvp.replacements, 1);
    /* informational replacement statistics: total 128 -> about 127/256 */
    {
        uint32_t wins = 0, k;
        for (k = 0; k < 2000; k++) {
            x.data[4 * 1 + 3] = 128;
            hwp_cp_cam_write(&x, 1, 0x104);
            hwp_cp_ireg_set(&x, 0, 1);
            lvp_feed(&x, 0xB00 + 4u * k, 1);
            if (hwp_cp_ireg(&x, 0) == 2) wins++;
            hwp_cp_ireg_set(&x, 1, 0);
        }
        CHECK(wins > 2000 * 127 / 256 - 120 && wins < 2000 * 127 / 256 + 120);
    }
    free(m);
}

static void test_lvp_reselect_off_saturate(void) {
    hwp_cp x;
    hwp_cp_desc d;
    hwp_cp_lvp_desc ld;
    unsigned char *m;
    uint32_t i;
    m = lvp_make(&x, &d, &ld);
    ld.slots = 4;
    ld.done_limit = 4;
    ld.resel_shift = 2; /* re-select below 25% */
    CHECK_EQ(hwp_cp_lvp_start(&x, &ld), HWP_OK);
    /* re-selection: few hits (< keep_hits 32) and invariance < 25% after
     * 16 samples: the current value becomes active, hits 1, misses 0 */
    lvp_feed(&x, 0x100, 1);                          /* H1 T1 */
    for (i = 0; i < 2; i++) lvp_feed(&x, 0x100, 1);  /* H3 */
    for (i = 0; i < 12; i++) lvp_feed(&x, 0x100, 2); /* M12: 15 seen */
    CHECK_EQ(x.data[0], 1);
    lvp_feed(&x, 0x100, 3); /* M13, 16 seen, 3 << 2 = 12 < 16 */
    CHECK_EQ(x.data[0], 3);
    CHECK_EQ(x.data[1], 1);
    CHECK_EQ(x.data[2], 0);
    CHECK_EQ(x.data[3], 16); /* total keeps counting across regions */
    CHECK_EQ(x.lvp.reselect, 1);
    /* keep: 40 hits then misses below 25%: the slot is turned off */
    lvp_feed(&x, 0x200, 9);
    for (i = 0; i < 39; i++) lvp_feed(&x, 0x200, 9);
    for (i = 0; i < 121; i++) lvp_feed(&x, 0x200, (i & 1) + 20);
    CHECK(!hwp_cp_cam_valid(&x, 1));
    CHECK_EQ(x.data[4 + 0], 9);
    CHECK_EQ(x.data[4 + 1], 40);
    CHECK_EQ(x.data[4 + 2], 121);
    CHECK_EQ(hwp_cp_ireg(&x, 2), 1); /* done */
    /* the next instance of 0x200 competes like any unslotted load */
    lvp_feed(&x, 0x200, 9);
    CHECK_EQ(hwp_cp_cam_match(&x, 0x200), 2);
    /* saturation: total reaches 255 -> off, counters never exceed it */
    for (i = 0; i < 400; i++) lvp_feed(&x, 0x300, i % 3 ? 4 : 5);
    CHECK(!hwp_cp_cam_valid(&x, 3) || x.data[15] < 255);
    for (i = 0; i < 16; i++) CHECK(x.data[i] <= 255 || i % 4 == 0);
    free(m);
}

/* Property: over random streams, slot counters stay within their width,
 * total >= hits + misses of the current region, and a masked PC never
 * reaches the load routine. */
static int spy_routine(hwp_cp *x, const hwp_insn *s, void *ctx) {
    uint32_t *bad = (uint32_t *)ctx;
    if (s->events & HWP_EV_TRAP) (*bad)++; /* was masked when it retired */
    return hwp__cp_lvp_routine(x, s, NULL);
}

static void test_lvp_properties(void) {
    hwp_cp x;
    hwp_cp_desc d;
    unsigned char *m;
    lvs s;
    static lvs_load L[300];
    uint32_t i, k, bad_counter = 0, bad_masked = 0;
    uint64_t pc, v;
    memset(&d, 0, sizeof d);
    d.clock_x16 = 64;
    m = make(&x, &d, NULL);
    CHECK_EQ(hwp_cp_lvp_start(&x, NULL), HWP_OK);
    x.prog.routine[HWP_CLS_LOAD] = spy_routine;
    x.prog.ctx = &bad_masked;
    lvs_init(&s, L, 300, 0.8, NULL, 50, 11);
    for (i = 0; i < 200000; i++) {
        lvs_next(&s, &pc, &v);
        hwp_cp_tick(&x, 3);
        {
            hwp_insn in = insn(pc, HWP_CLS_LOAD, 0, v,
                               hwp_cp_filter_masked(&x, pc) ? HWP_EV_TRAP : 0);
            hwp_cp_insn(&x, &in);
        }
        if (i % 997 == 0)
            for (k = 0; k < 128; k++)
                if (x.data[4 * k + 1] > 255 || x.data[4 * k + 2] > 255 ||
                    x.data[4 * k + 3] > 255 ||
                    x.data[4 * k + 1] + x.data[4 * k + 2] > x.data[4 * k + 3])
                    bad_counter++;
    }
    hwp_cp_flush(&x);
    CHECK_EQ(bad_counter, 0);
    CHECK_EQ(bad_masked, 0);
    CHECK(x.lvp.masked > 0);
    CHECK(x.interrupts > 0);
    free(m);
}

/* The estimation algorithm on hand-made records (appendix):
 * total 100; A: 40 hits, 10 misses (w .8); B: 20 hits, 20 misses (w .5).
 * unaccounted 10. A = 40 + 10*.8/1.3 + 20*.8/max(.8, .5) = 66.1538...
 * B = 20 + 10*.5/1.3 + 10*.5/max(.5, .2) = 33.8461... */
static void test_estimator(void) {
    hwp_cp x;
    hwp_cp_desc d;
    hwp_cp_est e[4];
    unsigned char *m;
    hwp__cp_load *l;
    bool found;
    memset(&d, 0, sizeof d);
    m = make(&x, &d, NULL);
    l = hwp__cp_load_find(&x, 0x42, &found);
    CHECK(!found);
    l->used = 1;
    l->pc = 0x42;
    l->total = 100;
    hwp__cp_load_add(&x, l, 0xA, 30, 5);
    hwp__cp_load_add(&x, l, 0xB, 20, 20);
    hwp__cp_load_add(&x, l, 0xA, 10, 5); /* same value: regions merge */
    CHECK_EQ(hwp_cp_lvp_estimates(&x, e, 4), 2);
    CHECK_EQ(e[0].value, 0xA);
    CHECK_NEAR(e[0].inv, 0.661538, 1e-5);
    CHECK_NEAR(e[1].inv, 0.338461, 1e-5);
    /* a single region: its hits plus its share of the unaccounted */
    l = hwp__cp_load_find(&x, 0x43, &found);
    l->used = 1;
    l->pc = 0x43;
    l->total = 200;
    hwp__cp_load_add(&x, l, 0xC, 90, 10);
    CHECK_EQ(hwp_cp_lvp_estimates(&x, e, 4), 3);
    CHECK_NEAR(e[2].inv, (90 + 100 * 0.9) / 200.0, 1e-9);
    free(m);
}

/* The metric against a hand computation. */
static void test_wrms(void) {
    hwp_cp_truth t[4] = {{1, 10, 60}, {1, 11, 40}, {2, 20, 95}, {2, 21, 5}};
    hwp_cp_est e[3];
    /* min_inv 0.1: pairs (1,10) .6 est .5, (1,11) .4 est 0, (2,20) .95
     * est .9; weights 60, 40, 95 */
    double want = sqrt((60 * 0.01 + 40 * 0.16 + 95 * 0.0025) / 195.0);
    memset(e, 0, sizeof e);
    e[0].pc = 2, e[0].value = 20, e[0].inv = 0.9;
    e[1].pc = 1, e[1].value = 10, e[1].inv = 0.5;
    e[2].pc = 7, e[2].value = 1, e[2].inv = 1.0;
    CHECK_NEAR(hwp_cp_wrms(t, 4, e, 3, 0.1), want, 1e-12);
    CHECK_NEAR(hwp_cp_wrms(t, 4, e, 3, 2.0), -1.0, 0);
    /* t is sorted in place now; truth in reverse order (and estimates
     * out of order again) must give the same value */
    {
        hwp_cp_truth r[4] = {t[3], t[2], t[1], t[0]};
        hwp_cp_est f[3];
        memset(f, 0, sizeof f);
        f[0].pc = 7, f[0].value = 1, f[0].inv = 1.0;
        f[1].pc = 1, f[1].value = 10, f[1].inv = 0.5;
        f[2].pc = 2, f[2].value = 20, f[2].inv = 0.9;
        CHECK_NEAR(hwp_cp_wrms(r, 4, f, 3, 0.1), want, 1e-12);
        CHECK(r[0].pc == 1 && r[0].value == 10 && r[3].value == 21);
    }
}

/* ---- regression: the minivm hashtable report ----------------------------
 * The VM host saw 0.9103 for the probe load (true 0.5204) and 0.9319 for
 * keys[slot] after an insert (true 0.7881). The cause is the paper's
 * scheme, not the estimator: the appendix's estimation "assumes the
 * captured samples are representative of the full program", and
 * confidence masking (sec. 4.3) stops profiling a load after its first
 * copies. These two loads drift (the table fills: value 0, an empty slot,
 * is 0.98 of the first 500 probes and 0.52 of all), so the profile is of
 * the early window. The test pins that down from both sides: on the VM's
 * exact stream the estimate equals the share in the window the
 * co-processor saw (estimator faithful), and that window is large enough
 * to keep it within 0.1 of the whole-run truth (at 128 slots, the
 * previous default, the window was the probe's first 21,739 of 61,391
 * executions, 0.603 against 0.520; at the default 256 it is 48,595,
 * 0.523); the same values shuffled into a steady stream are estimated at
 * the whole-run truth; the steady lookup load is right in both runs. */

typedef struct ht_run {
    double est[3];    /* estimated invariance of value 0 per load        */
    uint64_t seen[3]; /* samples in the load's memory record             */
    uint64_t dropped, ignored, interrupts;
} ht_run;

static const uint64_t ht_pcs[3] = {HTS_PROBE, HTS_SEEN, HTS_LOOK};

/* resample: every that many loads the host clears the bit table and turns
 * the opcode filter back on (0: never) */
static void ht_profile(const hts_ev *ev, size_t n, size_t resample, ht_run *r) {
    hwp_cp x;
    hwp_cp_desc d;
    hwp_cp_stats st;
    static hwp_cp_est es[4096];
    unsigned char *m;
    size_t i, ne;
    uint32_t k;
    memset(&d, 0, sizeof d);
    memset(r, 0, sizeof *r);
    m = make(&x, &d, NULL);
    CHECK_EQ(hwp_cp_lvp_start(&x, NULL), HWP_OK);
    for (i = 0; i < n; i++) {
        hwp_cp_tick(&x, 9); /* the VM retires ~10 bytecodes per load */
        hwp_cp_load(&x, ev[i].pc, 0, ev[i].value);
        if (resample && i && i % resample == 0) {
            CHECK_EQ(hwp_cp_filter_clear(&x), HWP_OK);
            CHECK_EQ(hwp_cp_filter_classes(&x, HWP_CLS_BIT(HWP_CLS_LOAD)), HWP_OK);
        }
    }
    hwp_cp_flush(&x);
    ne = hwp_cp_lvp_estimates(&x, es, 4096);
    CHECK(ne > 0 && ne <= 4096);
    for (i = 0; i < ne && i < 4096; i++)
        for (k = 0; k < 3; k++)
            if (es[i].pc == ht_pcs[k] && es[i].value == HTS_TAG) r->est[k] = es[i].inv;
    for (k = 0; k < 3; k++) {
        bool found;
        hwp__cp_load *l = hwp__cp_load_find(&x, ht_pcs[k], &found);
        if (found) r->seen[k] = l->total;
    }
    hwp_cp_get_stats(&x, &st);
    r->dropped = st.dropped;
    r->ignored = x.lvp.ignored;
    r->interrupts = st.interrupts;
    free(m);
}

/* share of value 0 in the first `first` executions of pc */
static double ht_share(const hts_ev *ev, size_t n, uint64_t pc, uint64_t first,
                       uint64_t *execs) {
    uint64_t seen = 0, zero = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        if (ev[i].pc != pc) continue;
        if (seen < first) zero += ev[i].value == HTS_TAG;
        seen++;
    }
    if (execs) *execs = seen;
    return first && seen ? (double)zero / (double)(first < seen ? first : seen) : -1.0;
}

static void test_lvp_hashtable_drift(void) {
    static hts h;
    static hts_ev ev[HTS_LOADS];
    uint64_t ex[3], pos;
    double truth[3], win[3];
    ht_run a, b, c;
    hwp_rng rng;
    size_t n = hts_generate(&h, ev, HTS_LOADS), i, np = 0;
    uint32_t k;
    static uint32_t where[61391];
    CHECK_EQ(n, HTS_LOADS);
    /* the stream is the VM's: whole-run counts from its --exact capture */
    for (k = 0; k < 3; k++) truth[k] = ht_share(ev, n, ht_pcs[k], ~0ull, &ex[k]);
    CHECK_EQ(ex[0], 61391);
    CHECK_EQ((uint64_t)(truth[0] * 61391 + 0.5), 31950);
    CHECK_EQ(ex[1], 10000);
    CHECK_EQ((uint64_t)(truth[1] * 10000 + 0.5), 7881);
    CHECK_EQ(ex[2], 40000);
    CHECK_EQ((uint64_t)(truth[2] * 40000 + 0.5), 24069);

    ht_profile(ev, n, 0, &a);
    /* nothing dropped or ignored: a record of T samples is exactly the
     * load's first T executions */
    CHECK_EQ(a.dropped, 0);
    CHECK_EQ(a.ignored, 0);
    for (k = 0; k < 3; k++) {
        win[k] = ht_share(ev, n, ht_pcs[k], a.seen[k], NULL);
        printf("    in order: load %#" PRIx64 " saw %" PRIu64 " of %" PRIu64
               ": estimate %.4f, window %.4f, whole run %.4f\n",
               ht_pcs[k], a.seen[k], ex[k], a.est[k], win[k], truth[k]);
        CHECK_NEAR(a.est[k], win[k], 0.01); /* faithful to what it saw */
    }
    /* the drifting loads are characterised from a window that is a
     * sizeable share of their executions, not only the first few
     * hundred, so the estimate stays within 0.1 of the whole run ... */
    CHECK(a.seen[0] * 4 > ex[0] && a.seen[1] * 2 > ex[1]);
    CHECK(a.est[0] < truth[0] + 0.1);
    CHECK(a.est[1] < truth[1] + 0.1);
    /* ... while the steady one is right */
    CHECK_NEAR(a.est[2], truth[2], 0.02);

    /* the host-side workaround docs/coproc.md measures: clear the bit
     * table and re-enable the filter every 50000 loads (~500 K
     * instructions). The records keep their masked flag, so the loads are
     * not masked again and are profiled to the end, within 0.03 of the
     * whole-run truth, at more interrupts: 8 against 5 at the default
     * 256 slots, where the run in order already profiles most of the
     * probe's executions; 16 against 6 at 128 slots, where it saw a
     * third of them. */
    ht_profile(ev, n, 50000, &c);
    printf("    re-sampled every 50000 loads: estimates %.4f %.4f %.4f, "
           "%" PRIu64 " interrupts (in order: %" PRIu64 ")\n",
           c.est[0], c.est[1], c.est[2], c.interrupts, a.interrupts);
    CHECK_NEAR(c.est[0], truth[0], 0.03);
    CHECK_NEAR(c.est[1], truth[1], 0.05);
    CHECK_NEAR(c.est[2], truth[2], 0.02);
    CHECK(c.interrupts > a.interrupts);

    /* the probe load's own values, shuffled among its executions: the
     * same distribution without the drift is estimated correctly */
    for (i = 0; i < n; i++)
        if (ev[i].pc == HTS_PROBE && np < 61391) where[np++] = (uint32_t)i;
    CHECK_EQ(np, 61391);
    hwp_rng_seed(&rng, 7);
    for (i = np - 1; i > 0; i--) {
        uint64_t t;
        pos = hwp_rng_below(&rng, i + 1);
        t = ev[where[i]].value;
        ev[where[i]].value = ev[where[pos]].value;
        ev[where[pos]].value = t;
    }
    ht_profile(ev, n, 0, &b);
    printf("    shuffled: probe load saw %" PRIu64 ": estimate %.4f, whole run %.4f\n",
           b.seen[0], b.est[0], truth[0]);
    CHECK_NEAR(b.est[0], truth[0], 0.03);
    CHECK_NEAR(b.est[2], truth[2], 0.02);
}

/* ---- sec. 3.6 applications on synthetic programs ---------------------- */

static void test_edge_profile(void) {
    hwp_cp x;
    hwp_cp_desc d;
    hwp_cost c;
    unsigned char *m;
    hwp_rng r;
    uint64_t taken[40] = {0}, nt[40] = {0}, tgt[4][3] = {{0}}, a, b;
    uint32_t i, k, bad = 0;
    memset(&d, 0, sizeof d);
    d.clock_x16 = 1024;
    d.cam_entries = 32; /* fewer entries than branches: flushes happen */
    hwp_cost_init(&c, NULL);
    m = make(&x, &d, &c);
    CHECK_EQ(hwp_cp_edge_start(&x), HWP_OK);
    hwp_rng_seed(&r, 21);
    for (i = 0; i < 200000; i++) {
        uint32_t kind = hwp_rng_below(&r, 10);
        hwp_insn in;
        if (kind < 7) {
            uint32_t br = hwp_rng_below(&r, 40);
            bool tk = hwp_rng_below(&r, 40) < br;
            in = insn(0x5000 + 16u * br, HWP_CLS_BR_COND, 0, 0, tk ? HWP_EV_TAKEN : 0);
            if (tk) taken[br]++;
            else nt[br]++;
        } else if (kind < 9) {
            uint32_t site = hwp_rng_below(&r, 4), t = hwp_rng_below(&r, 3);
            in = insn(0x9000 + 8u * site, HWP_CLS_INDIRECT, 0, 0, HWP_EV_TAKEN);
            in.next_pc = 0xF000 + 0x100u * t;
            tgt[site][t]++;
        } else {
            in = insn(0x7000, HWP_CLS_OTHER, 0, 0, 0);
        }
        hwp_cp_insn(&x, &in);
    }
    hwp_cp_flush(&x);
    CHECK_EQ(x.dropped, 0);
    for (k = 0; k < 40; k++) {
        hwp_cp_edge(&x, 0x5000 + 16u * k, &a, &b);
        if (a != taken[k] || b != nt[k]) bad++;
    }
    for (k = 0; k < 4; k++)
        for (i = 0; i < 3; i++)
            if (hwp_cp_edge_target(&x, 0x9000 + 8u * k, 0xF000 + 0x100u * i) != tgt[k][i])
                bad++;
    CHECK_EQ(bad, 0);
    CHECK(x.interrupts > 1);
    CHECK(!hwp_cp_edge(&x, 0x1234, &a, &b));
    /* every cycle charged is an interrupt, a word or a processed entry */
    CHECK_EQ(hwp_cost_model_cycles(&c, HWP_MODEL_COPROC),
             214 * x.interrupts + 20 * x.irq_samples + x.words);
    free(m);
}

/* main calls f at site 0xA0 and g at 0xB0; f calls h at 0xC0; events
 * (mispredicted branches) happen in h, in g and in main. */
static void test_callstack(void) {
    hwp_cp x;
    hwp_cp_desc d;
    unsigned char *m;
    uint64_t in_h = 0, in_g = 0, in_main = 0, i;
    hwp_rng r;
    const uint64_t ctx_h[2] = {0xC0, 0xA0}, ctx_g[1] = {0xB0};
    memset(&d, 0, sizeof d);
    d.clock_x16 = 1024;
    m = make(&x, &d, NULL);
    CHECK_EQ(hwp_cp_callstack_start(&x, HWP_EV_MISPRED,
                                    HWP_CLS_BIT(HWP_CLS_BR_COND), 2), HWP_OK);
    hwp_rng_seed(&r, 4);
#define EMIT(pc_, cls_, ev_)                                   \
    do {                                                       \
        hwp_insn in_ = insn(pc_, cls_, 0, 0, ev_);             \
        hwp_cp_insn(&x, &in_);                               \
    } while (0)
    for (i = 0; i < 3000; i++) {
        uint32_t j, ev;
        EMIT(0xA0, HWP_CLS_CALL, 0); /* main -> f */
        EMIT(0xC0, HWP_CLS_CALL, 0); /* f -> h */
        for (j = 0; j < 5; j++) {
            ev = hwp_rng_below(&r, 3) == 0 ? HWP_EV_MISPRED : 0;
            in_h += ev != 0;
            EMIT(0x3000, HWP_CLS_BR_COND, ev);
        }
        EMIT(0x3010, HWP_CLS_RET, 0);
        EMIT(0x2010, HWP_CLS_RET, 0);
        EMIT(0xB0, HWP_CLS_CALL, 0); /* main -> g */
        ev = hwp_rng_below(&r, 2) ? HWP_EV_MISPRED : 0;
        in_g += ev != 0;
        EMIT(0x4000, HWP_CLS_BR_COND, ev);
        EMIT(0x4010, HWP_CLS_RET, 0);
        ev = hwp_rng_below(&r, 4) == 0 ? HWP_EV_MISPRED : 0;
        in_main += ev != 0;
        EMIT(0x1000, HWP_CLS_BR_COND, ev);
    }
#undef EMIT
    hwp_cp_flush(&x);
    CHECK_EQ(x.dropped, 0);
    CHECK_EQ(hwp_cp_callstack_count(&x, ctx_h, 2), in_h);
    CHECK_EQ(hwp_cp_callstack_count(&x, ctx_g, 1), in_g);
    CHECK_EQ(hwp_cp_callstack_count(&x, NULL, 0), in_main);
    CHECK_EQ(hwp_cp_callstack_count(&x, ctx_h, 1), 0);
    CHECK(in_h > 0 && in_g > 0 && in_main > 0);
    free(m);
}

/* Stores at S1/S2 write addresses that loads L1/L2 read soon after; L3
 * reads an address no store wrote. */
static void test_memdep(void) {
    hwp_cp x;
    hwp_cp_desc d;
    unsigned char *m;
    uint64_t i, n12 = 0, n21 = 0;
    hwp_rng r;
    memset(&d, 0, sizeof d);
    d.clock_x16 = 1024;
    m = make(&x, &d, NULL);
    CHECK_EQ(hwp_cp_memdep_start(&x, 3), HWP_OK);
    hwp_rng_seed(&r, 8);
    for (i = 0; i < 20000; i++) {
        uint64_t a = 0x100000 + 8u * (i % 50);
        hwp_insn st = insn(hwp_rng_below(&r, 2) ? 0x51 : 0x52, HWP_CLS_STORE, a, 0, 0);
        hwp_insn ld = insn(hwp_rng_below(&r, 2) ? 0x61 : 0x62, HWP_CLS_LOAD, a, 0, 0);
        hwp_insn far = insn(0x63, HWP_CLS_LOAD, 0x900000 + 8u * i, 0, 0);
        hwp_cp_insn(&x, &st);
        hwp_cp_insn(&x, &far);
        hwp_cp_insn(&x, &ld);
        if (st.pc == 0x51 && ld.pc == 0x61) n12++;
        if (st.pc == 0x52 && ld.pc == 0x62) n21++;
    }
    hwp_cp_flush(&x);
    CHECK_EQ(x.dropped, 0);
    CHECK_EQ(hwp_cp_memdep_count(&x, 0x51, 0x61), n12);
    CHECK_EQ(hwp_cp_memdep_count(&x, 0x52, 0x62), n21);
    CHECK_EQ(hwp_cp_memdep_count(&x, 0x51, 0x63) + hwp_cp_memdep_count(&x, 0x52, 0x63), 0);
    CHECK_EQ(hwp_cp_memdep_count(&x, 0x51, 0x61) + hwp_cp_memdep_count(&x, 0x52, 0x61) +
                 hwp_cp_memdep_count(&x, 0x51, 0x62) + hwp_cp_memdep_count(&x, 0x52, 0x62),
             20000);
    free(m);
}

/* Two blocks in set 5 evict each other (a miss every other access);
 * a streaming scan misses once per block and never comes back. */
static void test_conflict(void) {
    hwp_cp x;
    hwp_cp_desc d;
    unsigned char *m;
    uint64_t i, a = (5u + 64u * 10u) << 6, b = (5u + 64u * 11u) << 6;
    memset(&d, 0, sizeof d);
    d.clock_x16 = 1024;
    m = make(&x, &d, NULL);
    CHECK_EQ(hwp_cp_conflict_start(&x, 6, 64), HWP_OK);
    for (i = 0; i < 1000; i++) {
        hwp_insn la = insn(0x10, HWP_CLS_LOAD, a, 0, HWP_EV_DCMISS);
        hwp_insn lb = insn(0x14, HWP_CLS_LOAD, b, 0, HWP_EV_DCMISS);
        /* a scan block every 4th round: 250 blocks fit the 256-entry
         * window, so a and b are never pushed out of it */
        hwp_insn sc = insn(0x18, i % 4 ? HWP_CLS_OTHER : HWP_CLS_LOAD,
                           0x40000000u + (i << 6), 0, HWP_EV_DCMISS);
        hwp_insn hit = insn(0x1c, HWP_CLS_LOAD, a, 0, 0);
        hwp_cp_insn(&x, &la);
        hwp_cp_insn(&x, &sc);
        hwp_cp_insn(&x, &lb);
        hwp_cp_insn(&x, &hit);
    }
    hwp_cp_flush(&x);
    /* each block misses 1000 times; the first miss of each is cold */
    CHECK_EQ(hwp_cp_conflict_block(&x, a), 999);
    CHECK_EQ(hwp_cp_conflict_block(&x, b), 999);
    CHECK_EQ(hwp_cp_conflict_set(&x, 5), 1998);
    CHECK_EQ(hwp_cp_conflict_block(&x, 0x40000000u), 0);
    CHECK_EQ(hwp_cp_conflict_set(&x, 0), 0);
    /* the PC that took the refills is kept (the program used to drop it) */
    CHECK_EQ(hwp_cp_conflict_pc(&x, 0x10), 999);
    CHECK_EQ(hwp_cp_conflict_pc(&x, 0x14), 999);
    CHECK_EQ(hwp_cp_conflict_pc(&x, 0x1c), 0);
    free(m);
}

/* Two vCPUs each profiling half of a program merge to the counts of the
 * whole; merge refuses instances built differently. */
static void test_merge_and_reports(void) {
    hwp_cp x, y, z;
    hwp_cp_desc d;
    unsigned char *m1, *m2, *m3;
    uint64_t i, a, b;
    static char buf[1 << 16];
    hwp_bufwriter bw;
    hwp_writer w;
    int depth = 0, bad = 0;
    size_t k;
    memset(&d, 0, sizeof d);
    d.clock_x16 = 1024;
    m1 = make(&x, &d, NULL);
    m2 = make(&y, &d, NULL);
    hwp_cp_edge_start(&x);
    hwp_cp_edge_start(&y);
    for (i = 0; i < 1000; i++) {
        hwp_insn in = insn(0x40 + 4u * (i % 3), HWP_CLS_BR_COND, 0, 0,
                           i % 5 ? HWP_EV_TAKEN : 0);
        hwp_cp_insn(i < 400 ? &x : &y, &in);
    }
    hwp_cp_flush(&x);
    hwp_cp_flush(&y);
    CHECK_EQ(hwp_cp_merge(&x, &y), HWP_OK);
    hwp_cp_edge(&x, 0x40, &a, &b);
    CHECK_EQ(a + b, 334);
    CHECK_EQ(x.events, 1000);
    d.cam_entries = 128;
    m3 = make(&z, &d, NULL);
    hwp_cp_edge_start(&z);
    CHECK_EQ(hwp_cp_merge(&x, &z), HWP_EMISMATCH);
    CHECK_HAS(hwp_why(&x), "cam_entries");
    /* reports */
    w = hwp_writer_buf(&bw, buf, sizeof buf);
    hwp_cp_write_json(&x, &w);
    CHECK_EQ(bw.dropped, 0);
    CHECK_HAS(buf, "{\"model\":\"coproc\",\"version\":1,\"desc\":{");
    CHECK_HAS(buf, "\"app\":\"edge\"");
    CHECK_HAS(buf, "\"stats\":{\"events\":1000,\"dropped\":0,\"evicted\":0,\"cycles\":");
    CHECK_HAS(buf, "\"kind\":\"edge\",\"k1\":\"0x40\"");
    for (k = 0; buf[k]; k++) {
        depth += (buf[k] == '{' || buf[k] == '[') - (buf[k] == '}' || buf[k] == ']');
        if (depth < 0) bad++;
    }
    CHECK_EQ(depth, 0);
    CHECK_EQ(bad, 0);
    w = hwp_writer_buf(&bw, buf, sizeof buf);
    hwp_cp_write_text(&x, &w);
    CHECK_HAS(buf, "coproc: program edge");
    CHECK_HAS(buf, "  interrupts ");
    free(m1);
    free(m2);
    free(m3);
}

/* Reports the co-processor never writes are refused with a reason, and
 * a report of another desc leaves the instance as it was, wherever its
 * desc sits: the reader checks the desc before it changes anything. */
static char rep[4096];

static const char *report_with(const hwp_cp *x, const char *tail) {
    hwp_bufwriter bw;
    hwp_writer w = hwp_writer_buf(&bw, rep, sizeof rep);
    char *st;
    hwp_cp_write_json(x, &w);
    st = strstr(rep, ",\"stats\"");
    CHECK(st != NULL && strlen(tail) < (size_t)(rep + sizeof rep - st));
    if (st) strcpy(st, tail);
    return rep;
}

static void test_report_refusals(void) {
    static const struct {
        const char *tail, *why;
    } bad[] = {
        {",\"app\":\"lvv\"}", "coproc: unknown app"},
        {",\"loads\":[{\"pc\":\"0x1\"},{\"pc\":\"0x2\"},{\"pc\":\"0x3\"}]}",
         "coproc: more load records than the load table holds"},
        {",\"loads\":[{\"samples\":1,\"pc\":\"0x1\"}]}",
         "coproc: a load record starts with its \"pc\""},
        {",\"loads\":[{}]}", "coproc: a load record starts with its \"pc\""},
        {",\"loads\":[{\"pc\":\"0x1\"},{\"pc\":\"0x1\"}]}",
         "coproc: two load records of one pc"},
        {",\"desc\":{\"cam_entries\":128}}", "coproc: a report holds one desc"},
    };
    hwp_cp x, y;
    hwp_cp_desc d, e;
    hwp_json_err err;
    unsigned char *m1, *m2;
    char before[4096], after[4096], *mis;
    hwp_bufwriter bw;
    hwp_writer w;
    size_t k;
    uint64_t i;
    memset(&d, 0, sizeof d);
    d.lvp_loads = 2;
    m1 = make(&x, &d, NULL);
    for (k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        const char *t = report_with(&x, bad[k].tail);
        err.why = NULL;
        CHECK_EQ(hwp_cp_read_json(&x, t, strlen(t), &err), HWP_EFORMAT);
        if (!CHECK(err.why && !strcmp(err.why, bad[k].why)))
            printf("      %s: %s\n", bad[k].tail, err.why ? err.why : "(none)");
    }
    /* y has a profile; a report of another desc with its stats first */
    e = d;
    e.cam_entries = 128;
    m2 = make(&y, &e, NULL);
    hwp_cp_edge_start(&y);
    for (i = 0; i < 100; i++) {
        hwp_insn in = insn(0x40 + 4u * (i % 3), HWP_CLS_BR_COND, 0, 0, HWP_EV_TAKEN);
        hwp_cp_insn(&y, &in);
    }
    hwp_cp_flush(&y);
    w = hwp_writer_buf(&bw, before, sizeof before);
    hwp_cp_write_json(&y, &w);
    report_with(&x, "");
    mis = strstr(rep, ",\"desc\"");
    CHECK(mis != NULL);
    if (mis) {
        static char t[4096];
        snprintf(t, sizeof t, "{\"model\":\"coproc\",\"version\":1,"
                 "\"stats\":{\"events\":7777},\"app\":\"none\"%s}", mis);
        CHECK_EQ(hwp_cp_read_json(&y, t, strlen(t), &err), HWP_EMISMATCH);
        CHECK_HAS(err.why, "cam_entries");
    }
    w = hwp_writer_buf(&bw, after, sizeof after);
    hwp_cp_write_json(&y, &w);
    CHECK_STR(after, before);
    free(m1);
    free(m2);
}

/* LVP end to end on a small program, with the text/JSON load lists and
 * the cost identity; merging a copy doubles every total. */
static void test_lvp_small_end_to_end(void) {
    hwp_cp x, y;
    hwp_cp_desc d;
    hwp_cost c;
    unsigned char *m, *m2;
    lvs s;
    static lvs_load L[20];
    static hwp_cp_truth tr[400];
    static hwp_cp_est es[400];
    static char buf[1 << 16];
    hwp_bufwriter bw;
    hwp_writer w;
    uint64_t pc, v, i, tot = 0;
    size_t nt, ne;
    double err;
    memset(&d, 0, sizeof d);
    hwp_cost_init(&c, NULL);
    m = make(&x, &d, &c);
    CHECK_EQ(hwp_cp_lvp_start(&x, NULL), HWP_OK);
    lvs_init(&s, L, 20, 1.0, NULL, 100, 3);
    for (i = 0; i < 300000; i++) {
        lvs_next(&s, &pc, &v);
        hwp_cp_tick(&x, 4);
        hwp_cp_load(&x, pc, 0, v);
    }
    hwp_cp_flush(&x);
    nt = lvs_truth(&s, tr);
    ne = hwp_cp_lvp_estimates(&x, es, 400);
    CHECK(ne > 20 && ne <= 400);
    err = hwp_cp_wrms(tr, nt, es, ne, 0.1);
    CHECK(err >= 0 && err < 0.15);
    CHECK(x.lvp.masked == 20 && x.lvp.complete);
    CHECK_EQ(hwp_cost_model_cycles(&c, HWP_MODEL_COPROC),
             214 * x.interrupts + 20 * x.irq_samples + x.words);
    w = hwp_writer_buf(&bw, buf, sizeof buf);
    hwp_cp_write_json(&x, &w);
    CHECK_HAS(buf, "\"complete\":1");
    CHECK_HAS(buf, "\"invariance\":");
    CHECK_EQ(bw.dropped, 0);
    m2 = make(&y, &d, NULL);
    hwp_cp_lvp_start(&y, NULL);
    for (i = 0; i <= x.loads_mask; i++) tot += x.loads[i].total;
    CHECK_EQ(hwp_cp_merge(&y, &x), HWP_OK);
    CHECK_EQ(hwp_cp_merge(&y, &x), HWP_OK);
    for (i = 0; i <= y.loads_mask; i++) tot -= y.loads[i].total / 2;
    CHECK_EQ(tot, 0);
    free(m);
    free(m2);
}

/* The buffered sampler: one interrupt per full buffer, charged by the
 * co-processor's cost model (interrupt, then per sample the handler's
 * time and two words read out). */
static void test_simple_sampler(void) {
    hwp_cp_simple s;
    hwp_cp_simple_desc sd;
    hwp_cp_simple_stats ss = {0, 0, 0, 0, 0, 0, 0};
    hwp_cost c;
    hwp_cp_est e[8];
    unsigned char *m;
    size_t b, n;
    uint64_t i, irqs;
    memset(&sd, 0, sizeof sd);
    sd.period = 1;
    CHECK_EQ(hwp_cp_simple_bytes(&sd), 0);
    sd.period = 100;
    sd.entries = 64;
    sd.buffer = 16;
    b = hwp_cp_simple_bytes(&sd);
    CHECK_EQ(b, HWP_CP_SIMPLE_BYTES(16, 64));
    m = mem_for(b);
    hwp_cost_init(&c, NULL);
    CHECK_EQ(hwp_cp_simple_init(&s, m + 1, b - 1, &sd, &c), HWP_ENOSPC);
    CHECK_EQ(hwp_cp_simple_init(&s, m, b, &sd, &c), HWP_OK);
    for (i = 0; i < 100000; i++) hwp_cp_simple_load(&s, 0x10, i % 4 ? 7 : 8);
    hwp_cp_simple_get_stats(&s, &ss);
    CHECK(ss.samples > 900 && ss.samples < 1100);
    irqs = ss.samples / 16;
    CHECK_EQ(ss.interrupts, irqs);
    CHECK_EQ(ss.pending, ss.samples % 16);
    CHECK_EQ(c.total, irqs * 214 + (ss.samples - ss.pending) * (20 + 2));
    CHECK_EQ(hwp_cp_simple_flush(&s), HWP_OK);
    CHECK_EQ(hwp_cp_simple_flush(&s), HWP_OK); /* idempotent */
    hwp_cp_simple_get_stats(&s, &ss);
    CHECK_EQ(ss.interrupts, irqs + (ss.samples % 16 ? 1 : 0));
    CHECK_EQ(c.total, ss.interrupts * 214 + ss.samples * 22);
    CHECK_EQ(ss.cycles, c.total);
    n = hwp_cp_simple_estimates(&s, e, 8);
    CHECK_EQ(n, 2);
    CHECK_EQ(hwp_cp_simple_estimates(&s, NULL, 0), 2);
    CHECK_NEAR(e[0].inv + e[1].inv, 1.0, 1e-12);
    CHECK_NEAR(e[0].value == 7 ? e[0].inv : e[1].inv, 0.75, 0.05);
    CHECK_EQ(e[0].samples, ss.samples);
    CHECK(e[0].lo <= e[0].inv && e[0].inv <= e[0].hi);
    {   /* the text report: the loads, the two pairs, both characterised */
        char text[256];
        hwp_bufwriter tb;
        hwp_writer tw = hwp_writer_buf(&tb, text, sizeof text);
        hwp_cp_simple_write_text(&s, &tw);
        CHECK_HAS(text, "coproc_simple: loads 100000, period 100,");
        CHECK_HAS(text, "; pairs 2, characterised 2\n");
    }
    {   /* merging an instance into a fresh one reproduces its estimates */
        hwp_cp_simple t;
        hwp_cp_est e2[8];
        unsigned char *m2 = mem_for(b);
        CHECK_EQ(hwp_cp_simple_init(&t, m2, b, &sd, NULL), HWP_OK);
        CHECK_EQ(hwp_cp_simple_merge(&t, &s), HWP_OK);
        CHECK_EQ(hwp_cp_simple_merge(&t, &s), HWP_OK);
        CHECK_EQ(hwp_cp_simple_estimates(&t, e2, 8), 2);
        CHECK_NEAR(e2[0].inv, e[0].inv, 1e-12);
        CHECK_EQ(t.samples, 2 * s.samples);
        free(m2);
    }
    {   /* skipping the loads before each due sample, then loading the
         * sampled one, leaves exactly the state of loading every one */
        hwp_cp_simple u;
        hwp_cost cu;
        unsigned char *m3 = mem_for(b);
        hwp_cp_est e3[8], e4[8];
        uint64_t fed, due;
        size_t k, n3;
        hwp_cost_init(&cu, NULL);
        CHECK_EQ(hwp_cp_simple_init(&u, m3, b, &sd, &cu), HWP_OK);
        due = hwp_cp_simple_due(&u);
        CHECK_EQ(hwp_cp_simple_skip(&u, ~(uint64_t)0), due - 1);
        CHECK_EQ(hwp_cp_simple_due(&u), 1); /* capped: the sample stays due */
        fed = u.loads;
        while (fed < 100000) {
            hwp_cp_simple_load(&u, 0x10, fed % 4 ? 7 : 8);
            fed++;
            due = hwp_cp_simple_due(&u);
            if (fed + due - 1 <= 100000) fed += hwp_cp_simple_skip(&u, due - 1);
        }
        hwp_cp_simple_flush(&u);
        CHECK_EQ(u.loads, s.loads);
        CHECK_EQ(u.countdown, s.countdown);
        CHECK_EQ(u.samples, s.samples);
        CHECK_EQ(u.lost, s.lost);
        CHECK_EQ(cu.total, c.total);
        n3 = hwp_cp_simple_estimates(&u, e3, 8);
        CHECK_EQ(n3, hwp_cp_simple_estimates(&s, e4, 8));
        for (k = 0; k < n3 && k < 8; k++)
            CHECK(e3[k].pc == e4[k].pc && e3[k].value == e4[k].value &&
                  e3[k].inv == e4[k].inv);
        free(m3);
    }
    free(m);
}

/* The period search gives the buffered sampler the co-processor's
 * overhead within 2%, measured by running it, not by its own formula. */
static void test_simple_period_search(void) {
    static const uint64_t targets[] = {20000, 50000, 120000, 234000};
    hwp_cp_simple_desc sd;
    size_t t;
    memset(&sd, 0, sizeof sd);
    sd.entries = 1024;
    for (t = 0; t < 4; t++) {
        hwp_cp_simple s;
        hwp_cost c;
        const uint64_t loads = 2000000;
        unsigned char *m;
        size_t b;
        uint64_t i;
        double ratio;
        sd.period = hwp_cp_simple_period_for(loads, targets[t], &sd, NULL);
        CHECK(sd.period >= 2 && sd.period < loads);
        b = hwp_cp_simple_bytes(&sd);
        m = mem_for(b);
        hwp_cost_init(&c, NULL);
        CHECK_EQ(hwp_cp_simple_init(&s, m, b, &sd, &c), HWP_OK);
        for (i = 0; i < loads; i++) hwp_cp_simple_load(&s, 0x40 + (i & 63) * 4, i & 3);
        hwp_cp_simple_flush(&s);
        ratio = (double)c.total / (double)targets[t];
        if (!CHECK(ratio > 0.98 && ratio < 1.02))
            printf("      target %" PRIu64 " period %u overhead %" PRIu64 "\n",
                   targets[t], sd.period, c.total);
        free(m);
    }
}

/* ---- defects of the load-value program found on real programs --------- */

/* A partition whose loads are almost all masked gets a sample now and
 * then; the idle watchdog never fires (each sample resets it), so the
 * visit used to last until the slots saturated. The desc bounds it. */
static void test_lvp_visit_bound(void) {
    hwp_cp x;
    hwp_cp_desc d;
    hwp_cp_lvp_desc ld;
    hwp_cp_stats st;
    hwp_cost c;
    unsigned char *m;
    uint64_t i, before;
    memset(&d, 0, sizeof d);
    d.clock_x16 = 1024;
    hwp_cost_init(&c, NULL);
    m = make(&x, &d, &c);
    memset(&ld, 0, sizeof ld);
    ld.visit_loads = 10000;
    ld.idle_limit = 1000;
    ld.min_visits = ld.max_visits = 1000; /* the load is never masked */
    CHECK_EQ(hwp_cp_lvp_start(&x, &ld), HWP_OK);
    for (i = 0; i < 200; i++) hwp_cp_filter_mask_pc(&x, 0x1000 + 4 * i);
    hwp_cp_get_stats(&x, &st);
    before = st.words;
    /* 200 masked loads, one unmasked load every 500 */
    for (i = 0; i < 100000; i++) {
        uint64_t pc = i % 500 ? 0x1000 + 4 * (i % 200) : 0x9000;
        hwp_cp_load(&x, pc, 0, 5);
    }
    hwp_cp_get_stats(&x, &st);
    /* 100000 loads / 10000 per visit: about 10 visits, each ending with
     * an interrupt and two words for the region registers */
    CHECK(st.visits >= 9 && st.visits <= 11);
    CHECK_EQ(st.idle_events, 0);
    CHECK(st.words - before >= 2 * st.visits);
    CHECK(st.interrupts >= st.visits - 1);
    {   /* visits count partition visits: one load copied at several
         * interrupts of the same visit is one visit */
        hwp_cp_vprof p;
        CHECK(hwp_cp_lvp_value(&x, 0x9000, &p));
        CHECK(x.loads[0].visits <= 11);
    }
    free(m);
}

/* A quiet moment is not the end of the run. gzip masks its hot loads, then
 * runs a stretch in which only masked loads execute: a full round of
 * quiet partitions used to declare the profile complete and turn the
 * opcode filter off, so the loads that ran afterwards were never
 * profiled (all of gzip's co-processor error came from loads with no
 * estimate). The loads of a later phase must be profiled, `complete` must
 * say what the quiet round saw and be cleared by the next load profiled,
 * and the idle events of a long quiet stretch must thin out (the window
 * doubles per quiet round). */
static void test_lvp_quiet_is_not_complete(void) {
    hwp_cp x;
    hwp_cp_desc d;
    hwp_cp_lvp_desc ld;
    hwp_cp_stats st;
    hwp_cp_vprof p;
    unsigned char *m;
    uint64_t i, idle0;
    memset(&d, 0, sizeof d);
    m = make(&x, &d, NULL);
    memset(&ld, 0, sizeof ld);
    ld.idle_limit = 1000;
    ld.max_visits = 1000; /* only confident loads are masked */
    CHECK_EQ(hwp_cp_lvp_start(&x, &ld), HWP_OK);
    /* phase 1: ten invariant loads, until all are masked */
    for (i = 0; i < 1000000 && x.lvp.masked < 10; i++) {
        hwp_cp_tick(&x, 3);
        hwp_cp_load(&x, 0x1000 + 8 * (i % 10), 0, 7 + i % 10);
    }
    CHECK_EQ(x.lvp.masked, 10);
    hwp_cp_get_stats(&x, &st);
    idle0 = st.idle_events;
    /* a quiet stretch of 1000 x (1 + 2 + ... + 64) loads: about 7 quiet
     * rounds at doubling windows, not 127 at the first window */
    for (i = 0; i < 127000; i++) hwp_cp_load(&x, 0x1000 + 8 * (i % 10), 0, 7 + i % 10);
    hwp_cp_get_stats(&x, &st);
    CHECK(x.lvp.complete);
    CHECK(st.idle_events - idle0 >= 5 && st.idle_events - idle0 <= 8);
    /* phase 2: new loads, half 42 and half 43, never confident enough to
     * mask, so they are still being profiled at the end */
    for (i = 0; i < 200000; i++) {
        hwp_cp_tick(&x, 3);
        hwp_cp_load(&x, 0x8000 + 8 * (i % 10), 0, 42 + (i / 10) % 2);
    }
    CHECK(!x.lvp.complete);
    hwp_cp_flush(&x);
    for (i = 0; i < 10; i++) {
        CHECK(hwp_cp_lvp_value(&x, 0x8000 + 8 * i, &p));
        CHECK(p.samples >= 64 && p.nvals == 2);
    }
    free(m);
}

/* Thrash at start-up must not split the rest of the run: once the
 * program's unmasked working set is small, the split is merged back, so a
 * load that runs only in a short burst is profiled whatever part of the
 * program it hashes to. Two ways to be small: quiet (only masked loads
 * run, the filter's idle watchdog fires) and busy with few loads (a few
 * unmasked loads run so often that the watchdog never fires; the visits
 * end at the desc's bound). Before, the start-up split stayed for the
 * whole run and a burst outside the current part was never profiled
 * (gzip's CRC table loads when quiet: 131,072 executions in three bursts,
 * no estimate; python3.11's heaviest loads when busy: the middle of the
 * run visited 22 of its 64 parts). */
static void lvp_split_then_merged(bool busy) {
    hwp_cp x;
    hwp_cp_desc d;
    hwp_cp_lvp_desc ld;
    hwp_cp_vprof p;
    unsigned char *m;
    uint64_t i, pc, burst[8];
    uint32_t nb = 0, mask;
    memset(&d, 0, sizeof d);
    m = make(&x, &d, NULL);
    memset(&ld, 0, sizeof ld);
    ld.idle_limit = 5000;
    if (busy) {
        ld.visit_loads = 10000;
        ld.min_visits = ld.max_visits = 1000; /* never masked */
    }
    CHECK_EQ(hwp_cp_lvp_start(&x, &ld), HWP_OK);
    /* start-up: 4000 loads run a few times each: thrash */
    for (i = 0; i < 40000; i++) {
        hwp_cp_tick(&x, 3);
        hwp_cp_load(&x, 0x100000 + 4 * (i % 4000), 0, i);
    }
    CHECK(x.lvp.thrash >= 1 && x.lvp.part_bits >= 1);
    /* the bursts go to loads outside the part now being profiled */
    mask = (uint32_t)hwp_mask64(x.lvp.part_bits);
    for (pc = 0x900000; nb < 8; pc += 4)
        if (((uint32_t)((pc * HWP__CP_REGION_MUL) >> 32) & mask) != (x.lvp.part & mask))
            burst[nb++] = pc;
    /* only loads the host has masked run, and when busy one in 10 loads
     * is one of 64 unmasked ones (every part meets one within the
     * watchdog's window; 64 fit the default 256 slots, far from
     * saturating) */
    for (i = 0; i < 16; i++) hwp_cp_filter_mask_pc(&x, 0x200000 + 4 * i);
    for (i = 0; i < 200000; i++) {
        pc = busy && i % 10 == 0 ? 0x300000 + 4 * (i / 10 % 64) : 0x200000 + 4 * (i % 16);
        hwp_cp_load(&x, pc, 0, 1);
    }
    if (busy) CHECK(x.lvp.by_cause[HWP__CP_C_VISIT] >= 1 && x.idle_events == 0);
    CHECK_EQ(x.lvp.part_bits, 0);
    /* eight short bursts, each shorter than the watchdog's window */
    for (nb = 0; nb < 8; nb++)
        for (i = 0; i < 3000; i++) {
            hwp_cp_tick(&x, 3);
            hwp_cp_load(&x, burst[nb], 0, 9);
        }
    hwp_cp_flush(&x);
    for (nb = 0; nb < 8; nb++) {
        CHECK(hwp_cp_lvp_value(&x, burst[nb], &p));
        CHECK(p.samples >= 64 && p.nvals == 1 && p.value[0] == 9);
    }
    free(m);
}

static void test_lvp_split_merged_when_quiet(void) { lvp_split_then_merged(false); }

/* Partitions are profiled in turn (sec. 4.2) whatever the split does.
 * Thrash splits the current part, a quiet part or a visit at its bound
 * merges one level, and a program whose working set sits at the edge of
 * the slots does both over and over. The turn used to be kept modulo the
 * current number of parts, so a split always landed on the sub-part with
 * the new bits zero and the merge that followed wrapped the turn back:
 * half of the finer parts were never visited (bash's estimates covered
 * 45% of its executions at visit_loads 2^18). The turn is now a count of
 * visits, and a part at any level is its low bits. */
static void test_lvp_fine_parts_in_turn(void) {
    hwp_cp x;
    hwp_cp_desc d;
    unsigned char *m;
    uint32_t i, seen = 0;
    memset(&d, 0, sizeof d);
    m = make(&x, &d, NULL);
    CHECK_EQ(hwp_cp_lvp_start(&x, NULL), HWP_OK);
    hwp__cp_lvp_split(&x); /* two parts */
    for (i = 0; i < 16; i++) {
        hwp__cp_lvp_split(&x); /* four: the current one's halves */
        CHECK_EQ(x.pc_mask, 3);
        seen |= 1u << x.pc_match;
        hwp__cp_visit_end(&x); /* the visit reached its bound: two again */
        CHECK_EQ(x.pc_mask, 1);
    }
    CHECK_EQ(seen, 15); /* every quarter had its turn */
    free(m);
}
static void test_lvp_split_merged_at_visit_bound(void) { lvp_split_then_merged(true); }

/* sec. 3.5: slots with fewer than copy_min samples are removed before the
 * interrupt, so the host copies (and pays for) only informative ones. */
static void test_lvp_lowinfo_removed(void) {
    hwp_cp x;
    hwp_cp_desc d;
    hwp_cp_lvp_desc ld;
    hwp_cp_stats st;
    hwp_cp_vprof p;
    unsigned char *m;
    uint32_t i, k;
    m = lvp_make(&x, &d, &ld);
    ld.slots = 8;
    ld.copy_min = 4;
    ld.thrash_mult = 1000;
    ld.done_limit = 4;
    CHECK_EQ(hwp_cp_lvp_start(&x, &ld), HWP_OK);
    /* four loads with 2 samples each and four with 255 (saturating: they
     * turn off and the done counter interrupts at 4) */
    for (i = 0; i < 4; i++)
        for (k = 0; k < 2; k++) lvp_feed(&x, 0x100 + 4 * i, 1);
    for (k = 0; k < 300; k++)
        for (i = 0; i < 4; i++) lvp_feed(&x, 0x200 + 4 * i, 9);
    hwp_cp_get_stats(&x, &st);
    CHECK(st.interrupts >= 1);
    CHECK_EQ(st.lowinfo_slots, 4);
    CHECK_EQ(st.lowinfo_samples, 8);
    CHECK(!hwp_cp_lvp_value(&x, 0x100, &p));
    CHECK(hwp_cp_lvp_value(&x, 0x200, &p));
    CHECK_EQ(st.irq_samples, 4); /* only the informative slots copied */
    free(m);
}

/* Two draws of the co-processor's random source must not share bits: a
 * Galois LFSR stepped once per draw gives draws whose low bits are the
 * previous draw's shifted by one. */
static void test_lfsr_draws_decorrelated(void) {
    hwp_cp x;
    unsigned char *m = make(&x, NULL, NULL);
    uint32_t prev = hwp_cp_rand(&x), i, same = 0;
    for (i = 0; i < 4096; i++) {
        uint32_t r = hwp_cp_rand(&x);
        same += ((prev >> 1) & 0x7Fu) == (r & 0x7Fu);
        prev = r;
    }
    /* independent 7-bit fields agree 1 time in 128: ~32 of 4096 */
    CHECK(same < 96);
    free(m);
}

/* The metric's documented threshold: zero means 0.1, as the docs say. */
static void test_wrms_default_threshold(void) {
    hwp_cp_truth t[3] = {{1, 10, 95}, {1, 11, 5}, {2, 20, 100}};
    hwp_cp_truth u[3] = {{1, 10, 95}, {1, 11, 5}, {2, 20, 100}};
    hwp_cp_est e[2];
    memset(e, 0, sizeof e);
    e[0].pc = 1, e[0].value = 10, e[0].inv = 0.9;
    e[1].pc = 2, e[1].value = 20, e[1].inv = 1.0;
    /* (1,11) at 0.05 is below 0.1: only the other two pairs count */
    CHECK_NEAR(hwp_cp_wrms(t, 3, e, 2, 0.0), hwp_cp_wrms(u, 3, e, 2, 0.1), 1e-12);
    CHECK_NEAR(hwp_cp_wrms(t, 3, e, 2, 0.0), sqrt(95 * 0.0025 / 195.0), 1e-12);
}

/* Estimates carry their sample count and interval; a load seen once or
 * twice is not characterised, however invariant it looks. The visit
 * bound (100 loads) makes 0x20's 200 samples two partition visits. */
static void test_lvp_estimates_intervals(void) {
    hwp_cp x;
    hwp_cp_desc d;
    hwp_cp_lvp_desc ld;
    hwp_cp_est e[8];
    unsigned char *m;
    size_t n, k;
    uint32_t i;
    m = lvp_make(&x, &d, &ld);
    ld.copy_min = 1;
    ld.visit_loads = 100;
    CHECK_EQ(hwp_cp_lvp_start(&x, &ld), HWP_OK);
    lvp_feed(&x, 0x10, 3);
    for (i = 0; i < 200; i++) lvp_feed(&x, 0x20, 4);
    hwp_cp_flush(&x);
    n = hwp_cp_lvp_estimates(&x, e, 8);
    CHECK_EQ(n, 2);
    CHECK_EQ(hwp_cp_lvp_estimates(&x, NULL, 0), 2);
    for (k = 0; k < n; k++) {
        CHECK(e[k].lo <= e[k].inv && e[k].inv <= e[k].hi);
        if (e[k].pc == 0x10) {
            CHECK_EQ(e[k].samples, 1);
            CHECK(!e[k].characterised);
            CHECK(e[k].lo < 0.3); /* one sample proves little */
        } else {
            CHECK_EQ(e[k].samples, 200);
            CHECK(e[k].characterised);
            CHECK(e[k].lo > 0.95);
        }
    }
    free(m);
}

/* The estimator hands a value the samples no region of it saw (the
 * unaccounted samples of re-selected regions): a load whose values all
 * differ re-selects every 16 samples, and copied right after a
 * re-selection its active value has 1 hit, 0 misses, so its estimate is
 * the whole total, 1.0. One sample measured that: the estimate carries 1
 * sample and is not characterised (on gzip such loads were reported
 * invariant at 0.90-0.92 with an exact invariance of 0.00-0.16). */
static void test_lvp_reselected_not_characterised(void) {
    hwp_cp x;
    hwp_cp_desc d;
    hwp_cp_lvp_desc ld;
    hwp_cp_est e[8];
    unsigned char *m;
    uint32_t s, n = 0;
    uint64_t v = 1000;
    m = lvp_make(&x, &d, &ld);
    ld.min_visits = 1; /* one visit is enough here: only samples count */
    CHECK_EQ(hwp_cp_lvp_start(&x, &ld), HWP_OK);
    /* feed distinct values until the slot has min_samples (64) samples
     * and has just re-selected (hits 1, misses 0) */
    do {
        lvp_feed(&x, 0x30, v++);
        s = hwp_cp_cam_match(&x, 0x30);
    } while (++n < 1000 && (s == HWP_CP_NONE || x.data[4 * s + 3] < 64 ||
                            x.data[4 * s + 1] != 1 || x.data[4 * s + 2] != 0));
    CHECK(n < 1000);
    CHECK(x.lvp.reselect >= 4);
    hwp_cp_flush(&x);
    CHECK_EQ(hwp_cp_lvp_estimates(&x, e, 8), 1);
    CHECK_EQ(e[0].value, v - 1);
    CHECK(e[0].inv > 0.9);  /* the estimator's answer, from one sample */
    CHECK_EQ(e[0].samples, 1);
    CHECK(!e[0].characterised);
    CHECK(e[0].lo < 0.3);
    free(m);
}

/* A load copied in one partition visit only is not characterised, however
 * many samples that visit gave (a value held for a phase looks invariant
 * inside it); its second visit characterises it. */
static void test_lvp_one_visit_not_characterised(void) {
    hwp_cp x;
    hwp_cp_desc d;
    hwp_cp_lvp_desc ld;
    hwp_cp_est e[4];
    hwp_cp_vprof p;
    hwp__cp_load *l;
    bool found;
    unsigned char *m;
    uint32_t i;
    m = lvp_make(&x, &d, &ld);
    ld.visit_loads = 150;
    CHECK_EQ(hwp_cp_lvp_start(&x, &ld), HWP_OK);
    for (i = 0; i < 150; i++) lvp_feed(&x, 0x50, 7);
    l = hwp__cp_load_find(&x, 0x50, &found);
    CHECK(found && l->visits == 1);
    CHECK_EQ(hwp_cp_lvp_estimates(&x, e, 4), 1);
    CHECK(e[0].samples >= 100); /* the 150th load began the next visit */
    CHECK(e[0].inv > 0.99);
    CHECK(!e[0].characterised);
    CHECK(hwp_cp_lvp_value(&x, 0x50, &p));
    CHECK(!p.characterised);
    for (i = 0; i < 150; i++) lvp_feed(&x, 0x50, 7);
    hwp_cp_flush(&x);
    CHECK_EQ(hwp_cp_lvp_estimates(&x, e, 4), 1);
    CHECK_EQ(e[0].samples, 300);
    CHECK(e[0].characterised);
    CHECK(hwp_cp_lvp_value(&x, 0x50, &p));
    CHECK(p.characterised);
    free(m);
}

/* One load holds value A for its first 3000 executions and B for the
 * next 7000 (exact invariance of A 0.3): a value held for a phase. Its
 * first visits fall inside A's phase, so it is masked as invariant;
 * masked for good it would be reported invariant in A (1.0). Re-sampling
 * profiles it again in B's phase, so A is not called invariant. The run
 * without re-sampling shows the stream does mislead. Returns A's
 * estimate. */
static double lvp_phase_run(uint32_t resample_insns, uint64_t *resampled,
                            bool *b_characterised) {
    hwp_cp x;
    hwp_cp_desc d;
    hwp_cp_lvp_desc ld;
    hwp_cp_est e[8];
    unsigned char *m;
    size_t n, k;
    uint32_t i;
    double a = -1;
    m = lvp_make(&x, &d, &ld);
    ld.visit_loads = 200;
    ld.idle_limit = 1000;
    ld.resample_insns = resample_insns;
    CHECK_EQ(hwp_cp_lvp_start(&x, &ld), HWP_OK);
    for (i = 0; i < 10000; i++) {
        hwp_cp_tick(&x, 9);
        lvp_feed(&x, 0x60, i < 3000 ? 0xA : 0xB);
    }
    hwp_cp_flush(&x);
    *resampled = x.lvp.resampled;
    *b_characterised = false;
    n = hwp_cp_lvp_estimates(&x, e, 8);
    for (k = 0; k < n && k < 8; k++) {
        if (e[k].value == 0xA) a = e[k].characterised ? e[k].inv : 0.0;
        if (e[k].value == 0xB) *b_characterised = e[k].characterised != 0;
    }
    free(m);
    return a;
}

static void test_lvp_phase_resampled(void) {
    uint64_t rs;
    bool b;
    double a = lvp_phase_run(0xFFFFFFFFu, &rs, &b); /* never re-sampled */
    CHECK_EQ(rs, 0);
    CHECK(a >= 0.9); /* the false claim: A invariant */
    CHECK(!b);
    a = lvp_phase_run(50000, &rs, &b);
    CHECK(rs >= 1);
    if (!CHECK(a < 0.9)) printf("      A's estimate %.3f\n", a);
    CHECK(b);
}

/* The estimate of (pc, value) in x, or -1. */
static double lvp_inv_of(const hwp_cp *x, uint64_t pc, uint64_t value) {
    static hwp_cp_est e[64];
    size_t n = hwp_cp_lvp_estimates(x, e, 64), k;
    for (k = 0; k < n && k < 64; k++)
        if (e[k].pc == pc && e[k].value == value) return e[k].inv;
    return -1;
}

/* x's report read back, and x merged into an empty profile, give (pc,
 * value) the estimate `inv`; a report whose share exceeds its load's
 * weight is refused with the reason. */
static void lvp_same_after_copy(const hwp_cp *x, uint64_t pc, uint64_t value,
                                double inv) {
    static char buf[1 << 16], bad[1 << 16];
    hwp_bufwriter bw;
    hwp_writer w;
    hwp_json_err err;
    hwp_cp y;
    unsigned char *m = mem_for(hwp_cp_bytes(&x->d));
    char *at;
    CHECK_EQ(hwp_cp_init(&y, m, hwp_cp_bytes(&x->d), &x->d, NULL), HWP_OK);
    w = hwp_writer_buf(&bw, buf, sizeof buf - 1);
    hwp_cp_write_json(x, &w);
    buf[bw.len] = 0;
    CHECK_EQ(bw.dropped, 0);
    CHECK_EQ(hwp_cp_read_json(&y, buf, bw.len, &err), HWP_OK);
    CHECK(fabs(lvp_inv_of(&y, pc, value) - inv) < 1e-4);
    hwp_cp_reset(&y);
    CHECK_EQ(hwp_cp_lvp_start(&y, &x->lvp.d), HWP_OK);
    CHECK_EQ(hwp_cp_merge(&y, x), HWP_OK);
    CHECK(fabs(lvp_inv_of(&y, pc, value) - inv) < 1e-9);
    /* a share above the weight is not one x wrote */
    at = strstr(buf, "\"share\":");
    CHECK(at != NULL);
    if (at) {
        size_t pre = (size_t)(at - buf) + 8;
        snprintf(bad, sizeof bad, "%.*s1e9%s", (int)pre, buf, strpbrk(at + 8, ",}"));
        CHECK_EQ(hwp_cp_read_json(&y, bad, strlen(bad), &err), HWP_EFORMAT);
        CHECK_HAS(err.why, "share");
    }
    free(m);
}

/* A value held for a phase in which its load ran alone, then rare in a
 * long crowded one: load 0x70 gives A 400 times in a row, then B once
 * in every 20 loads (the rest from seven invariant loads) 2000 times:
 * A's exact invariance 400 / 2400 = 0.17. The first two visits give A
 * its 400 samples and mask the load; each re-sampling (one per 8000
 * loads) profiles it for one visit with 10 samples of B and masks it
 * again, its estimate still invariant. By samples A keeps 0.93 of them;
 * each crowded visit says A is absent, and weighted by samples up to
 * min_samples (64) the visits hold the estimate below the confidence
 * threshold (0.81). */
static void test_lvp_crowded_phase(void) {
    hwp_cp x;
    hwp_cp_desc d;
    hwp_cp_lvp_desc ld;
    hwp_cp_est e[16];
    unsigned char *m;
    size_t n, k;
    uint32_t i;
    double a = -1;
    uint64_t b_samples = 0;
    m = lvp_make(&x, &d, &ld);
    ld.visit_loads = 200;
    ld.idle_limit = 1000;
    ld.resample_insns = 80000;
    CHECK_EQ(hwp_cp_lvp_start(&x, &ld), HWP_OK);
    for (i = 0; i < 400; i++) {
        hwp_cp_tick(&x, 9);
        lvp_feed(&x, 0x70, 0xA);
    }
    for (i = 0; i < 20 * 2000; i++) {
        hwp_cp_tick(&x, 9);
        if (i % 20 == 0) lvp_feed(&x, 0x70, 0xB);
        else lvp_feed(&x, 0x80 + 8 * (i % 7), 5);
    }
    hwp_cp_flush(&x);
    CHECK(x.lvp.resampled >= 3);
    n = hwp_cp_lvp_estimates(&x, e, 16);
    for (k = 0; k < n && k < 16; k++) {
        if (e[k].pc != 0x70) continue;
        if (e[k].value == 0xA && e[k].characterised) a = e[k].inv;
        if (e[k].value == 0xB) b_samples = e[k].samples;
    }
    /* the stream does mislead by samples: A has 400, B a few tens */
    CHECK(b_samples > 0 && b_samples * 9 < 400);
    if (!CHECK(a >= 0 && a < 0.9)) printf("      A's estimate %.3f\n", a);
    /* the visits' weights and shares travel in the report and in a
     * merge: both give A the same estimate */
    lvp_same_after_copy(&x, 0x70, 0xA, a);
    free(m);
}

/* ---- the JIT-facing API -------------------------------------------------- */

typedef struct told_log {
    uint64_t pc[8];
    unsigned n;
} told_log;

static void on_told(void *ctx, const hwp_cp_vprof *p) {
    told_log *t = (told_log *)ctx;
    if (t->n < 8) t->pc[t->n] = p->pc;
    t->n++;
}

static void test_jit_api(void) {
    hwp_cp x;
    hwp_cp_desc d;
    hwp_cp_lvp_desc ld;
    hwp_cp_vprof p;
    told_log log;
    unsigned char *m;
    uint32_t i;
    m = lvp_make(&x, &d, &ld);
    ld.min_samples = 100;
    ld.done_limit = 1;
    memset(&log, 0, sizeof log);
    CHECK_EQ(hwp_cp_lvp_on_characterised(&x, on_told, &log), HWP_EINVAL);
    CHECK_EQ(hwp_cp_lvp_start(&x, &ld), HWP_OK);
    CHECK_EQ(hwp_cp_lvp_on_characterised(&x, on_told, &log), HWP_OK);
    CHECK(!hwp_cp_lvp_value(&x, 0x40, &p));
    CHECK_EQ(p.samples, 0);
    /* 15 of 16 loads give 7: the slot saturates at 255 samples and turns
     * off, the done limit 1 interrupts, and the next partition visit
     * begins; the second saturation gives the record enough samples in
     * min_visits (2) visits */
    for (i = 0; i < 600; i++) lvp_feed(&x, 0x40, i % 16 ? 7 : 8);
    CHECK_EQ(log.n, 1);
    CHECK_EQ(log.pc[0], 0x40);
    CHECK(hwp_cp_lvp_value(&x, 0x40, &p));
    CHECK(p.characterised);
    CHECK(p.nvals >= 1);
    CHECK_EQ(p.value[0], 7);
    CHECK(p.inv[0] > 0.85 && p.inv[0] < 0.99);
    CHECK(p.lo[0] < p.inv[0] && p.hi[0] > p.inv[0]);
    CHECK(p.samples >= 100);
    /* a second round does not call again */
    for (i = 0; i < 400; i++) lvp_feed(&x, 0x40, 7);
    CHECK_EQ(log.n, 1);
    /* the host invalidated the code: the record is emptied, the PC is
     * tagged again and characterised again from new samples */
    CHECK_EQ(hwp_cp_lvp_invalidate(&x, 0x40), HWP_OK);
    CHECK(hwp_cp_lvp_value(&x, 0x40, &p));
    CHECK_EQ(p.samples, 0);
    CHECK(!hwp_cp_filter_masked(&x, 0x40));
    for (i = 0; i < 600; i++) lvp_feed(&x, 0x40, 9);
    CHECK_EQ(log.n, 2);
    CHECK(hwp_cp_lvp_value(&x, 0x40, &p));
    if (!CHECK_EQ(p.value[0], 9))
        printf("      nvals %u samples %" PRIu64 " inv %.3f %.3f\n", p.nvals, p.samples, p.inv[0], p.inv[1]);
    CHECK(p.inv[0] > 0.99);
    free(m);
}

/* A host load table too small for the working set: the slots that find
 * no record are dropped and counted, and their copy is not charged. */
static void test_lvp_load_table_full(void) {
    hwp_cp x;
    hwp_cp_desc d;
    hwp_cp_lvp_desc ld;
    hwp_cp_stats st;
    hwp_cost c;
    unsigned char *m;
    uint32_t i, k;
    memset(&d, 0, sizeof d);
    d.clock_x16 = 1024;
    d.lvp_loads = 4;
    hwp_cost_init(&c, NULL);
    m = make(&x, &d, &c);
    memset(&ld, 0, sizeof ld);
    ld.slots = 16;
    ld.thrash_mult = 1000;
    CHECK_EQ(hwp_cp_lvp_start(&x, &ld), HWP_OK);
    for (k = 0; k < 10; k++)
        for (i = 0; i < 8; i++) lvp_feed(&x, 0x100 + 4 * i, 5);
    hwp_cp_flush(&x);
    hwp_cp_get_stats(&x, &st);
    CHECK_EQ(st.loads_lost, 4);
    CHECK_EQ(st.samples_lost, 40);
    CHECK_EQ(st.irq_samples, 4 + 4); /* 4 copies + the 4 final records */
    /* words: per slot read the total and the key (2), per copy 3 more */
    CHECK_EQ(c.count[HWP_COST_COPROC_SAMPLE], 8);
    CHECK(st.dropped >= 4);
    free(m);
}

/* Bad load-value descs name their field. */
static void test_lvp_bad_desc(void) {
    hwp_cp x;
    hwp_cp_lvp_desc ld;
    unsigned char *m = make(&x, NULL, NULL);
    memset(&ld, 0, sizeof ld);
    ld.slots = 512; /* more than the 256 CAM entries */
    CHECK_EQ(hwp_cp_lvp_start(&x, &ld), HWP_EINVAL);
    CHECK_HAS(hwp_why(&x), "slots");
    memset(&ld, 0, sizeof ld);
    ld.done_limit = 1000;
    CHECK_EQ(hwp_cp_lvp_start(&x, &ld), HWP_EINVAL);
    CHECK_HAS(hwp_why(&x), "done_limit");
    memset(&ld, 0, sizeof ld);
    ld.copy_min = 70000;
    CHECK_EQ(hwp_cp_lvp_start(&x, &ld), HWP_EINVAL);
    CHECK_HAS(hwp_why(&x), "copy_min");
    free(m);
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_desc_validation);
    HWT_RUN(test_filter_class_region_mask);
    HWT_RUN(test_buffer_drops_exact);
    HWT_RUN(test_resources);
    HWT_RUN(test_lvp_slot_rules);
    HWT_RUN(test_lvp_reselect_off_saturate);
    HWT_RUN(test_lvp_properties);
    HWT_RUN(test_estimator);
    HWT_RUN(test_lvp_hashtable_drift);
    HWT_RUN(test_wrms);
    HWT_RUN(test_edge_profile);
    HWT_RUN(test_callstack);
    HWT_RUN(test_memdep);
    HWT_RUN(test_conflict);
    HWT_RUN(test_merge_and_reports);
    HWT_RUN(test_report_refusals);
    HWT_RUN(test_lvp_small_end_to_end);
    HWT_RUN(test_simple_sampler);
    HWT_RUN(test_simple_period_search);
    HWT_RUN(test_lvp_visit_bound);
    HWT_RUN(test_lvp_lowinfo_removed);
    HWT_RUN(test_lfsr_draws_decorrelated);
    HWT_RUN(test_wrms_default_threshold);
    HWT_RUN(test_lvp_estimates_intervals);
    HWT_RUN(test_lvp_reselected_not_characterised);
    HWT_RUN(test_lvp_one_visit_not_characterised);
    HWT_RUN(test_lvp_phase_resampled);
    HWT_RUN(test_lvp_crowded_phase);
    HWT_RUN(test_jit_api);
    HWT_RUN(test_lvp_bad_desc);
    HWT_RUN(test_lvp_load_table_full);
    HWT_RUN(test_lvp_quiet_is_not_complete);
    HWT_RUN(test_lvp_split_merged_when_quiet);
    HWT_RUN(test_lvp_split_merged_at_visit_bound);
    HWT_RUN(test_lvp_fine_parts_in_turn);
    return hwt_end();
}
