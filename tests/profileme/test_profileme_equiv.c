/* tests/profileme/test_profileme_equiv.c: the per-selection work of
 * profileme.h (record start, latency registers, the per-PC table's
 * per-record update) against a test-only reference written from the
 * paper's definitions (4.1.3, Table 1, section 5) and docs/profileme.md.
 *
 * A randomised host drives seeded samplers (single and paired, several
 * ways and buffer sizes, fetch slots with empty opportunities) with up to
 * `ways` instructions in flight, reporting random subsets of stages at
 * random (also out-of-order) cycles, random events (bits above the nine
 * the table counts too), aborts and conditional branches. The host keeps
 * its own history register and, for every fetch, the record the profile
 * registers must hold; every delivered record must equal it byte for byte,
 * and every table entry must equal the sums of a plain reference table.
 * The record stream's digest is printed so two builds (before / after a
 * change of formulation) can be compared on the same streams. */
#define HWPROF_IMPL
#include "hwprof/profileme.h"

#include "harness.h"
#include "pm_storage.h"

#define NFETCH 6000u
#define NPCS 97u
STORAGE(mem, 1 << 14);
STORAGE(tmem, 1024 * sizeof(hwp_pm_entry));

/* The record each fetch's profile registers must deliver (context = the
 * fetch's index, so a delivered record names its expectation). */
static hwp_pm_record want[NFETCH];
static uint64_t stage_t[NFETCH][HWP_PM_ST_COUNT];
static uint32_t stage_known[NFETCH];

/* Reference per-PC table: samples, retired, one count per event bit and
 * latency sums, in the order PCs first appear. */
typedef struct ref_entry {
    uint64_t pc, samples, retired;
    uint64_t events[HWP_PM_NEVENTS], lat[HWP_PM_LAT_COUNT];
} ref_entry;
static ref_entry ref[NPCS + 1];
static uint32_t nref;

static struct {
    uint32_t records, mismatched, unknown;
    uint64_t digest; /* FNV-1a over every delivered record */
} got;

static hwp_pm_table tab;

/* Table 1's chain with the documented rule for missing stages: register
 * MAP..RETIRE counts from the latest of the fetch and every reported
 * earlier stage, zero when that is not before this stage's cycle. */
static void ref_latencies(uint32_t i) {
    hwp_pm_record *w = &want[i];
    unsigned st, j;
    for (st = HWP_PM_ST_MAP; st <= HWP_PM_ST_RETIRE; st++) {
        uint64_t from = stage_t[i][HWP_PM_ST_FETCH], d;
        if (!(stage_known[i] >> st & 1u)) continue;
        for (j = HWP_PM_ST_MAP; j < st; j++)
            if ((stage_known[i] >> j & 1u) && stage_t[i][j] > from)
                from = stage_t[i][j];
        d = stage_t[i][st] > from ? stage_t[i][st] - from : 0;
        w->lat[st - 1] = d > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)d;
    }
    if ((stage_known[i] >> HWP_PM_ST_LOAD_ISSUE & 1u) &&
        (stage_known[i] >> HWP_PM_ST_LOAD_DONE & 1u) &&
        stage_t[i][HWP_PM_ST_LOAD_DONE] > stage_t[i][HWP_PM_ST_LOAD_ISSUE])
        w->lat[HWP_PM_LAT_LOAD] = (uint32_t)(stage_t[i][HWP_PM_ST_LOAD_DONE] -
                                             stage_t[i][HWP_PM_ST_LOAD_ISSUE]);
}

static void ref_add(const hwp_pm_record *w) {
    uint32_t k, b;
    if ((w->flags & HWP_PM_F_EMPTY) || w->pc == 0) return;
    for (k = 0; k < nref && ref[k].pc != w->pc; k++) continue;
    if (k == nref) ref[nref++].pc = w->pc;
    ref[k].samples++;
    ref[k].retired += (w->flags & HWP_PM_F_RETIRED) != 0;
    for (b = 0; b < HWP_PM_NEVENTS; b++)
        if (w->events & (1u << b)) ref[k].events[b]++;
    for (b = 0; b < HWP_PM_LAT_COUNT; b++) ref[k].lat[b] += w->lat[b];
}

static void deliver(void *user, const hwp_pm_record *r, uint32_t n) {
    uint32_t i;
    size_t j;
    for (i = 0; i < n; i++) {
        const unsigned char *b = (const unsigned char *)&r[i];
        for (j = 0; j < sizeof r[i]; j++)
            got.digest = (got.digest ^ b[j]) * 0x100000001b3ull;
        got.records++;
        if (r[i].context >= NFETCH) {
            got.unknown++;
            continue;
        }
        ref_latencies((uint32_t)r[i].context);
        got.mismatched += memcmp(&r[i], &want[r[i].context], sizeof r[i]) != 0;
        ref_add(&want[r[i].context]);
    }
    hwp_pm_table_deliver(user, r, n);
}

typedef struct flight { uint32_t tag, fetch, left; } flight;

/* Report the instruction's remaining life: stages, note, retire/abort. */
static void finish(hwp_pm *p, hwp_rng *r, const flight *f, uint64_t now) {
    uint32_t i = f->fetch, pick = hwp_rng_u32(r), k;
    hwp_pm_record *w = &want[i];
    uint32_t cls = hwp_rng_below(r, 4), ev = hwp_rng_u32(r) & 0x1BFFu;
    uint64_t addr = (pick & 1u) ? 0x1000u + 8u * hwp_rng_below(r, 64) : 0;
    for (k = HWP_PM_ST_MAP; k < HWP_PM_ST_COUNT; k++) {
        if (!((pick >> (k + 1)) & 1u)) continue;
        /* Mostly after fetch and in order; now and then before either. */
        stage_t[i][k] = stage_t[i][HWP_PM_ST_FETCH] + 3u * k +
                        hwp_rng_below(r, 9) - 4u;
        stage_known[i] |= 1u << k;
        CHECK_EQ(hwp_pm_stage(p, f->tag, (hwp_pm_stage_id)k, stage_t[i][k]),
                 HWP_OK);
    }
    CHECK_EQ(hwp_pm_note(p, f->tag, cls, addr, ev), HWP_OK);
    w->cls = cls;
    w->addr = addr;
    w->events |= ev & ~(uint32_t)HWP_EV_ABORTED;
    if ((pick >> 12) % 7u == 0) {
        uint32_t why = pick >> 24;
        w->events |= HWP_EV_ABORTED;
        w->trap = why;
        CHECK_EQ(hwp_pm_abort(p, f->tag, why), HWP_OK);
    } else {
        stage_t[i][HWP_PM_ST_RETIRE] = now + hwp_rng_below(r, 3);
        stage_known[i] |= 1u << HWP_PM_ST_RETIRE;
        w->flags |= HWP_PM_F_RETIRED;
        CHECK_EQ(hwp_pm_retire(p, f->tag, stage_t[i][HWP_PM_ST_RETIRE]), HWP_OK);
    }
}

/* One seeded run; returns the records' digest. */
static uint64_t run(uint64_t seed, uint32_t paired, uint32_t ways,
                    uint32_t buffer, uint32_t unit) {
    hwp_pm p;
    hwp_pm_desc d;
    hwp_pm_table_desc td;
    hwp_rng r;
    flight fly[HWP_PM_MAX_WAYS];
    uint32_t nfly = 0, i, k, open = 0, first = 0, tagged = 0, dropped = 0;
    uint64_t hist = 0, cycle = 100, first_cycle = 0;
    memset(&got, 0, sizeof got);
    memset(want, 0, sizeof want);
    memset(stage_known, 0, sizeof stage_known);
    memset(ref, 0, sizeof ref);
    nref = 0;
    memset(&td, 0, sizeof td);
    td.capacity = 1024;
    td.paired = paired;
    td.interval = paired ? 16 : 5; /* the sampler's, below: a table */
    td.window = paired ? 12 : 0;     /* refuses another's records    */
    CHECK_EQ(hwp_pm_table_init(&tab, tmem, 1024 * sizeof(hwp_pm_entry), &td, NULL),
             HWP_OK);
    memset(&d, 0, sizeof d);
    d.seed = seed;
    d.interval = paired ? 16 : 5;
    d.window = paired ? 12 : 0;
    d.paired = paired;
    d.ways = ways;
    d.buffer = buffer;
    d.unit = unit;
    d.history = 9;
    d.deliver = deliver;
    d.user = &tab;
    if (!CHECK_EQ(hwp_pm_init(&p, mem, 1 << 14, &d, NULL), HWP_OK)) return 0;
    hwp_rng_seed(&r, seed * 7919u + 1u);
    for (i = 0; i < NFETCH; i++) {
        uint64_t pc = 0x400000u + 4u * hwp_rng_below(&r, NPCS);
        uint32_t is_empty = unit == HWP_PM_UNIT_SLOT && hwp_rng_below(&r, 5) == 0;
        cycle += hwp_rng_below(&r, 3);
        for (k = 0; k < nfly;) /* complete what is due */
            if (fly[k].left-- == 0) {
                finish(&p, &r, &fly[k], cycle);
                fly[k] = fly[--nfly];
            } else {
                k++;
            }
        hwp_pm_set_context(&p, i);
        if (hwp_pm_fetch(&p)) {
            hwp_pm_record *w = &want[i];
            uint32_t tag;
            w->context = i;
            w->history = hist & 0x1FFu;
            w->interval = d.interval; /* the sampler's settings ride along */
            w->window = paired ? d.window : 0;
            stage_t[i][HWP_PM_ST_FETCH] = cycle;
            if (paired && open) { /* the second of a pair */
                w->flags = HWP_PM_F_SECOND;
                w->pair_distance = want[first].pair_distance = i - first;
                w->pair_latency = want[first].pair_latency =
                    (uint32_t)(cycle - first_cycle);
            }
            if (is_empty) { /* a lost empty selection still says OK */
                uint64_t lost = p.st.dropped;
                w->flags |= HWP_PM_F_EMPTY;
                w->events = HWP_EV_ABORTED;
                CHECK_EQ(hwp_pm_tag_empty(&p, cycle), HWP_OK);
                tag = p.st.dropped == lost;
            } else {
                w->pc = pc;
                tag = hwp_pm_tag(&p, pc, cycle);
                if (tag) {
                    fly[nfly].tag = tag;
                    fly[nfly].fetch = i;
                    fly[nfly++].left = hwp_rng_below(&r, 4);
                }
            }
            if (!tag) { /* every register set busy: lost (never a second) */
                CHECK(!open);
                dropped++;
            } else if (paired && !open) {
                w->flags |= HWP_PM_F_FIRST;
                first = i;
                first_cycle = cycle;
            }
            if (tag) tagged++;
            if (paired && tag) open = !open;
        }
        if (hwp_rng_below(&r, 5) == 0) {
            uint32_t taken = hwp_rng_below(&r, 2);
            hwp_pm_branch(&p, taken != 0);
            hist = hist << 1 | taken;
        }
    }
    while (nfly) finish(&p, &r, &fly[--nfly], cycle + 50);
    CHECK_EQ(hwp_pm_flush(&p), HWP_OK);
    CHECK(got.records > 700);
    /* A first whose second never came waits for it (pairs go together). */
    CHECK_EQ(got.records, tagged - (paired && open ? 1u : 0u));
    CHECK_EQ(got.unknown, 0);
    CHECK_EQ(got.mismatched, 0);
    CHECK_EQ(p.st.tagged, tagged);
    CHECK_EQ(p.st.dropped, dropped);
    CHECK_EQ(p.st.selected, tagged + dropped);
    CHECK_EQ(tab.dropped, 0);
    CHECK_EQ(tab.used, nref);
    for (k = 0; k < nref; k++) {
        const hwp_pm_entry *e = hwp_pm_table_find(&tab, ref[k].pc);
        if (!CHECK(e != NULL)) continue;
        CHECK_EQ(e->samples, ref[k].samples);
        CHECK_EQ(e->retired, ref[k].retired);
        CHECK(memcmp(e->events, ref[k].events, sizeof ref[k].events) == 0);
        CHECK(memcmp(e->lat_sum, ref[k].lat, sizeof ref[k].lat) == 0);
    }
    return got.digest;
}

static void test_records_and_table_match_reference(void) {
    static const struct { uint32_t paired, ways, buffer, unit; } cfg[] = {
        {0, 1, 1, HWP_PM_UNIT_INSN},  {0, 3, 32, HWP_PM_UNIT_INSN},
        {0, 2, 5, HWP_PM_UNIT_SLOT},  {1, 2, 2, HWP_PM_UNIT_INSN},
        {1, 4, 32, HWP_PM_UNIT_INSN}, {1, 4, 6, HWP_PM_UNIT_SLOT}};
    uint64_t all = 0;
    unsigned c, seed;
    for (c = 0; c < sizeof cfg / sizeof cfg[0]; c++)
        for (seed = 1; seed <= 2; seed++)
            all = all * 31u ^ run(seed, cfg[c].paired, cfg[c].ways,
                                  cfg[c].buffer, cfg[c].unit);
    printf("  record digest over all runs: %016llx\n", (unsigned long long)all);
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_records_and_table_match_reference);
    return hwt_end();
}
