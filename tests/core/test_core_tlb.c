/* tests/core/test_core_tlb.c: the TLBs are true LRU, exactly.
 *
 * core.h's TLBs find a page through an index and keep each set's
 * recency in a ring (hwp__core_tlb_ref); this test runs random page
 * streams through them and through a plain LRU written here (each set an
 * array kept most recent first, moved up on every reference) and wants
 * the same hit or miss at every reference and the same victim count, for
 * several geometries: fully associative (1 x 128, the default; 1 x 64;
 * 1 x 1024, the largest set), set-associative (4 x 16, 2 x 2, 64 x 8),
 * direct-mapped (8 x 1) and a single entry (1 x 1). The streams mix a hot
 * set of pages a little larger or smaller than the TLB, pages that all
 * map to one set, re-references at distances around the associativity
 * (where an LRU that kept the wrong order would miss or hit) and random
 * pages anywhere in the address space. Then the same through the public
 * path (loads and fetches: the DTLB and ITLB miss bits and counters, the
 * last-page filter in front), and after hwp_core_reset. */
#define HWPROF_IMPL
#include "hwprof/hwprof.h"
#include "harness.h"

enum { NREF = 60000, RECENT = 4096 };

/* The reference: each set's pages most recent first, NONE when empty. */
typedef struct lru {
    uint32_t sets, ways;
    uint64_t *page;
    uint64_t evicted;
} lru;

static void lru_open(lru *l, uint32_t sets, uint32_t ways) {
    uint32_t i;
    l->sets = sets;
    l->ways = ways;
    l->page = (uint64_t *)malloc((size_t)sets * ways * sizeof *l->page);
    for (i = 0; i < sets * ways; i++) l->page[i] = HWP__CORE_NONE;
    l->evicted = 0;
}

/* True on a hit. The page ends up first in its set; a miss pushes the
 * last one out (a victim when it was a page). */
static int lru_ref(lru *l, uint64_t page) {
    uint64_t *s = l->page + (size_t)(page % l->sets) * l->ways;
    uint32_t at = 0, i;
    int hit;
    while (at < l->ways && s[at] != page) at++;
    hit = at < l->ways;
    if (!hit) {
        at = l->ways - 1u;
        if (s[at] != HWP__CORE_NONE) l->evicted++;
    }
    for (i = at; i > 0; i--) s[i] = s[i - 1];
    s[0] = page;
    return hit;
}

static void lru_close(lru *l) { free(l->page); }

/* A page stream for a sets x ways TLB. */
typedef struct gen {
    hwp_rng r;
    uint32_t sets, ways, nhot, one_set;
    uint64_t hot[2048];
    uint64_t recent[RECENT];
    uint32_t n;
} gen;

static void gen_open(gen *g, uint32_t sets, uint32_t ways, uint64_t seed) {
    uint32_t i, entries = sets * ways;
    hwp_rng_seed(&g->r, seed);
    g->sets = sets;
    g->ways = ways;
    /* a working set from half the TLB to one and a half times it */
    g->nhot = entries / 2u + 1u + hwp_rng_below(&g->r, entries + 1u);
    if (g->nhot > 2048u) g->nhot = 2048u;
    for (i = 0; i < g->nhot; i++)
        g->hot[i] = 0x1000u + hwp_rng_below(&g->r, 4u * entries + 8u);
    g->one_set = hwp_rng_below(&g->r, sets);
    g->n = 0;
}

static uint64_t gen_page(gen *g) {
    uint32_t k = hwp_rng_below(&g->r, 100);
    uint64_t p;
    if (k < 40) {
        p = g->hot[hwp_rng_below(&g->r, g->nhot)];
    } else if (k < 70 && g->n > 0) {
        /* a page seen about `ways` distinct references ago, give or take */
        uint32_t back = 1u + hwp_rng_below(&g->r, 3u * g->ways + 2u);
        if (back > g->n) back = g->n;
        if (back > RECENT) back = RECENT;
        p = g->recent[(g->n - back) % RECENT];
    } else if (k < 85) {
        /* a hot set: pages that all map to one set */
        p = ((uint64_t)hwp_rng_below(&g->r, 3u * g->ways + 1u) * g->sets) + g->one_set +
            ((uint64_t)1 << 30);
    } else {
        p = hwp_rng_next(&g->r) >> 14; /* anywhere (a page number of 8 KB pages) */
    }
    g->recent[g->n % RECENT] = p;
    g->n++;
    return p;
}

static const uint32_t geom[][2] = {{1, 128}, {1, 64}, {1, 1024}, {4, 16},
                                   {2, 2},   {64, 8}, {8, 1},    {1, 1}};

static hwp_core_desc tlb_desc(uint32_t sets, uint32_t ways) {
    hwp_core_desc d;
    memset(&d, 0, sizeof d);
    d.mode = HWP_CORE_CACHES;
    d.itlb.sets = sets; d.itlb.ways = ways; d.itlb.line = 8192;
    d.dtlb.sets = sets; d.dtlb.ways = ways; d.dtlb.line = 8192;
    return d;
}

static hwp_core *core_open(const hwp_core_desc *d, void **mem) {
    size_t n = hwp_core_bytes(d);
    hwp_core *c = (hwp_core *)malloc(sizeof *c);
    *mem = malloc(n);
    CHECK_EQ(hwp_core_init(c, *mem, n, d, NULL), HWP_OK);
    return c;
}

/* Every reference straight into the DTLB (no last-page filter): the
 * first reference where core and reference differ, -1 when none. */
static long run_direct(hwp_core *c, lru *l, gen *g) {
    long i, first = -1;
    for (i = 0; i < NREF; i++) {
        uint64_t page = gen_page(g);
        int want = lru_ref(l, page);
        int got = hwp__core_tlb_ref(&c->dtlb, page, &c->st.evicted) ? 1 : 0;
        if (got != want && first < 0) first = i;
    }
    return first;
}

static void test_tlb_is_lru(void) {
    size_t i;
    for (i = 0; i < HWP__N(geom); i++) {
        uint32_t seed;
        for (seed = 1; seed <= 3; seed++) {
            hwp_core_desc d = tlb_desc(geom[i][0], geom[i][1]);
            void *mem;
            hwp_core *c = core_open(&d, &mem);
            lru l;
            gen g;
            long first;
            lru_open(&l, geom[i][0], geom[i][1]);
            gen_open(&g, geom[i][0], geom[i][1], seed * 1000u + i);
            first = run_direct(c, &l, &g);
            if (first >= 0)
                printf("  %ux%u seed %u: differs first at reference %ld\n", geom[i][0],
                       geom[i][1], seed, first);
            CHECK_EQ(first, -1);
            CHECK_EQ(c->st.evicted, l.evicted);
            CHECK(l.evicted > 0);
            /* after a reset the TLB is empty again: the same stream anew */
            CHECK_EQ(hwp_core_reset(c), HWP_OK);
            lru_close(&l);
            lru_open(&l, geom[i][0], geom[i][1]);
            gen_open(&g, geom[i][0], geom[i][1], seed * 1000u + i);
            CHECK_EQ(run_direct(c, &l, &g), -1);
            CHECK_EQ(c->st.evicted, l.evicted);
            lru_close(&l);
            free(mem);
            free(c);
        }
    }
}

/* The public path: loads at the stream's pages, each fetched from a
 * page of a second stream; the miss bits and counters against two
 * references behind the same last-page filters. */
static void test_tlb_events(void) {
    size_t i;
    for (i = 0; i < HWP__N(geom); i++) {
        hwp_core_desc d = tlb_desc(geom[i][0], geom[i][1]);
        void *mem;
        hwp_core *c = core_open(&d, &mem);
        hwp_core_stats st;
        lru li, ld;
        gen gi, gd;
        uint64_t lasti = HWP__CORE_NONE, lastd = HWP__CORE_NONE;
        uint64_t imiss = 0, dmiss = 0;
        long n, bad = -1;
        memset(&st, 0, sizeof st);
        lru_open(&li, geom[i][0], geom[i][1]);
        lru_open(&ld, geom[i][0], geom[i][1]);
        gen_open(&gi, geom[i][0], geom[i][1], 77u + i);
        gen_open(&gd, geom[i][0], geom[i][1], 99u + i);
        for (n = 0; n < NREF; n++) {
            hwp_insn in;
            hwp_core_out o;
            uint64_t ip = hwp_rng_below(&gi.r, 4) ? lasti : gen_page(&gi);
            uint64_t dp = gen_page(&gd);
            uint32_t want = 0;
            if (ip == HWP__CORE_NONE) ip = gen_page(&gi);
            memset(&in, 0, sizeof in);
            in.pc = (ip << 13) + 64u * hwp_rng_below(&gi.r, 100);
            in.next_pc = in.pc + 4u;
            in.cls = HWP_CLS_LOAD;
            in.addr = (dp << 13) + hwp_rng_below(&gd.r, 8000);
            if (ip != lasti && !lru_ref(&li, ip)) { want |= HWP_EV_ITLBMISS; imiss++; }
            if (dp != lastd && !lru_ref(&ld, dp)) { want |= HWP_EV_DTLBMISS; dmiss++; }
            lasti = ip;
            lastd = dp;
            hwp_core_insn(c, &in, &o);
            if ((o.events & (HWP_EV_ITLBMISS | HWP_EV_DTLBMISS)) != want && bad < 0) bad = n;
        }
        CHECK_EQ(bad, -1);
        CHECK_EQ(hwp_core_get_stats(c, &st), HWP_OK);
        CHECK_EQ(st.itlb_misses, imiss);
        CHECK_EQ(st.dtlb_misses, dmiss);
        lru_close(&li);
        lru_close(&ld);
        free(mem);
        free(c);
    }
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_tlb_is_lru);
    HWT_RUN(test_tlb_events);
    return hwt_end();
}
