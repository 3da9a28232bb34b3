/* tests/core/test_core.c: core.h against hand-computed expectations.
 * Small caches with known access sequences, the predictors on known
 * patterns, the pipeline on small dependency chains, bad descs. */
#define HWPROF_IMPL
#include "hwprof/hwprof.h"
#include "harness.h"

/* A core on the heap, storage deliberately misaligned by one byte. */
typedef struct tcore {
    hwp_core c;
    unsigned char *raw;
} tcore;

static hwp_status topen(tcore *t, const hwp_core_desc *d) {
    size_t n = hwp_core_bytes(d);
    t->raw = (unsigned char *)malloc(n + 1);
    return hwp_core_init(&t->c, t->raw + 1, n, d, NULL);
}

static void tclose(tcore *t) { free(t->raw); }

static hwp_core_stats tstats(const hwp_core *c) {
    hwp_core_stats st;
    memset(&st, 0, sizeof st);
    CHECK_EQ(hwp_core_get_stats(c, &st), HWP_OK);
    return st;
}

/* Caches only, no TLB: 2 sets x 2 ways x 16 B L1s, a 4 x 2 x 16 B L2. */
static hwp_core_desc small_desc(void) {
    hwp_core_desc d;
    memset(&d, 0, sizeof d);
    d.mode = HWP_CORE_CACHES;
    d.flags = HWP_CORE_NO_TLB;
    d.l1i.sets = 2; d.l1i.ways = 2; d.l1i.line = 16;
    d.l1d.sets = 2; d.l1d.ways = 2; d.l1d.line = 16;
    d.l2.sets = 4; d.l2.ways = 2; d.l2.line = 16;
    return d;
}

static void mem_op(hwp_core *c, uint32_t cls, uint64_t addr, uint8_t size,
                   hwp_core_out *o) {
    hwp_insn in;
    hwp_core_ops ops;
    memset(&in, 0, sizeof in);
    memset(&ops, 0, sizeof ops);
    in.pc = 0x1010; /* L1I/L2 block 0x101: set 1, clear of the data */
    in.next_pc = 0x1014;
    in.cls = cls;
    in.addr = addr;
    ops.len = 4;
    ops.size = size;
    hwp_core_insn_ex(c, &in, &ops, o);
}

static void test_lru_not_fifo(void) {
    /* Blocks 0, 2, 4 all map to set 0. A B A C B: A and B miss cold, A
     * hits and becomes MRU, C evicts B (LRU; FIFO would evict A), B
     * misses: 4 misses, 1 hit, 2 valid victims. */
    tcore t;
    hwp_core_desc d = small_desc();
    hwp_core_stats st;
    hwp_core_out o;
    const uint64_t seq[] = {0x00, 0x20, 0x00, 0x40, 0x20};
    const uint8_t level[] = {4, 4, 1, 4, 2}; /* B is still in the L2 */
    unsigned i;
    CHECK_EQ(topen(&t, &d), HWP_OK);
    for (i = 0; i < 5; i++) {
        mem_op(&t.c, HWP_CLS_LOAD, seq[i], 8, &o);
        CHECK_EQ(o.dlevel, level[i]);
        CHECK_EQ(!!(o.events & HWP_EV_DCMISS), level[i] > 1);
    }
    st = tstats(&t.c);
    CHECK_EQ(st.l1d_reads, 5);
    CHECK_EQ(st.l1d_read_misses, 4);
    /* L2 (4 sets): blocks 0 and 4 share set 0, block 2 is in set 2; all
     * four L1 misses reach it, B's second miss hits there. */
    CHECK_EQ(st.l2_rrefs, 4);
    CHECK_EQ(st.l2_rmisses, 3);
    /* one I-fetch line, cold: 1 L1I miss, 1 L2 miss */
    CHECK_EQ(st.l1i_refs, 5);
    CHECK_EQ(st.l1i_misses, 1);
    CHECK_EQ(st.l2_imisses, 1);
    /* valid victims: C evicts B, then B evicts A (L1D); none in L2 */
    CHECK_EQ(st.evicted, 2);
    tclose(&t);
}

static void test_cyclic_thrash(void) {
    /* A B C A B C B in a 2-way set: every access misses until the last B,
     * which hits (C B are the two resident). */
    tcore t;
    hwp_core_desc d = small_desc();
    hwp_core_stats st;
    hwp_core_out o;
    const uint64_t seq[] = {0x00, 0x20, 0x40, 0x00, 0x20, 0x40, 0x20};
    unsigned i;
    CHECK_EQ(topen(&t, &d), HWP_OK);
    for (i = 0; i < 7; i++) mem_op(&t.c, HWP_CLS_LOAD, seq[i], 4, &o);
    st = tstats(&t.c);
    CHECK_EQ(st.l1d_read_misses, 6);
    CHECK_EQ(o.dlevel, 1);
    tclose(&t);
}

static void test_straddle_and_write_allocate(void) {
    tcore t;
    hwp_core_desc d = small_desc();
    hwp_core_stats st;
    hwp_core_out o;
    CHECK_EQ(topen(&t, &d), HWP_OK);
    /* 4 bytes at 0x0e touch lines 0 and 1: one reference, one miss, and
     * both lines go to the L2 */
    mem_op(&t.c, HWP_CLS_LOAD, 0x0e, 4, &o);
    CHECK_EQ(o.dlevel, 4);
    st = tstats(&t.c);
    CHECK_EQ(st.l1d_reads, 1);
    CHECK_EQ(st.l1d_read_misses, 1);
    CHECK_EQ(st.l2_rrefs, 2);
    /* both lines are resident now */
    mem_op(&t.c, HWP_CLS_LOAD, 0x10, 1, &o);
    CHECK_EQ(o.dlevel, 1);
    mem_op(&t.c, HWP_CLS_LOAD, 0x0c, 4, &o);
    CHECK_EQ(o.dlevel, 1);
    /* a store miss allocates: the load after it hits */
    mem_op(&t.c, HWP_CLS_STORE, 0x100, 8, &o);
    CHECK(o.events & HWP_EV_DCMISS);
    mem_op(&t.c, HWP_CLS_LOAD, 0x104, 4, &o);
    CHECK_EQ(o.dlevel, 1);
    st = tstats(&t.c);
    CHECK_EQ(st.l1d_writes, 1);
    CHECK_EQ(st.l1d_write_misses, 1);
    CHECK_EQ(st.l2_wrefs, 1);
    CHECK_EQ(st.l1d_read_misses, 1);
    tclose(&t);
}

static void test_tlb(void) {
    /* A 2-entry fully associative DTLB of 4 KB pages: pages 0 1 0 2 1:
     * misses on 0, 1, 2 and on 1 again (2 evicted it), walk 30 each. */
    tcore t;
    hwp_core_desc d = small_desc();
    hwp_core_stats st;
    hwp_core_out o;
    const uint64_t seq[] = {0x0000, 0x1000, 0x0008, 0x2000, 0x1008};
    const int miss[] = {1, 1, 0, 1, 1};
    unsigned i;
    d.flags = 0;
    d.dtlb.sets = 1; d.dtlb.ways = 2; d.dtlb.line = 4096;
    CHECK_EQ(topen(&t, &d), HWP_OK);
    for (i = 0; i < 5; i++) {
        mem_op(&t.c, HWP_CLS_LOAD, seq[i], 4, &o);
        CHECK_EQ(!!(o.events & HWP_EV_DTLBMISS), miss[i]);
    }
    st = tstats(&t.c);
    CHECK_EQ(st.dtlb_misses, 4);
    CHECK_EQ(st.itlb_misses, 1);
    tclose(&t);
}

static void branch(hwp_core *c, uint32_t cls, uint64_t pc, uint64_t next,
                   int taken, hwp_core_out *o) {
    hwp_insn in;
    memset(&in, 0, sizeof in);
    in.pc = pc;
    in.cls = cls;
    in.next_pc = taken ? next : pc + 2;
    in.addr = next;
    in.events = taken ? HWP_EV_TAKEN : 0;
    hwp_core_insn(c, &in, o);
}

static uint64_t cond_run(const hwp_core_desc *d, const int *pat, size_t np,
                         size_t n) {
    tcore t;
    hwp_core_stats st;
    hwp_core_out o;
    size_t i;
    memset(&st, 0, sizeof st);
    if (topen(&t, d) != HWP_OK) return ~(uint64_t)0;
    for (i = 0; i < n; i++) branch(&t.c, HWP_CLS_BR_COND, 0x4000, 0x3000, pat[i % np], &o);
    st = tstats(&t.c);
    tclose(&t);
    return st.cond == n ? st.cond_mispredicts : ~(uint64_t)0;
}

static void test_predictors(void) {
    hwp_core_desc d = small_desc();
    const int always[] = {1}, alt[] = {1, 0};
    /* gselect with one history bit; counters start at 0 (strongly not
     * taken). Always taken: history 0 once (a miss), then history 1,
     * whose counter needs two updates: 3. Alternating T N: the bit tells
     * T (after N) from N (after T); the T counter needs two updates, the
     * N counter is right from the start: 2. */
    d.bp = HWP_CORE_GSELECT;
    d.bp_global = 1024;
    d.bp_hist = 1;
    CHECK_EQ(cond_run(&d, always, 1, 100), 3);
    CHECK_EQ(cond_run(&d, alt, 2, 100), 2);
    /* gshare, 4 history bits, pc index 0: an always-taken branch sees
     * histories 0, 1, 3, 7 once each (fresh counters: 4 misses), then 15
     * for ever, whose counter needs 2 more: 6. */
    d.bp = HWP_CORE_GSHARE;
    d.bp_hist = 4;
    CHECK_EQ(cond_run(&d, always, 1, 100), 6);
    /* Tournament with the 21264's tables: an always-taken branch sees a
     * fresh local counter for 10 branches (local histories 0, 1, 3, ...,
     * 511), then counter[1023] climbs from 0 to the 3-bit threshold 4 in
     * 4 more; the global side agrees with it throughout (fresh counters
     * up to history 4095 at the 13th, taken from the 15th), so the
     * chooser never moves: 14 mispredicts. */
    d = small_desc();
    CHECK_EQ(cond_run(&d, always, 1, 100), 14);
}

static void test_indirect_and_ras(void) {
    tcore t;
    hwp_core_desc d = small_desc();
    hwp_core_stats st;
    hwp_core_out o;
    hwp_insn in;
    hwp_core_ops ops;
    unsigned i;
    d.ras = 2;
    CHECK_EQ(topen(&t, &d), HWP_OK);
    /* one indirect jump, same target: mispredicts once (table starts 0) */
    for (i = 0; i < 4; i++) branch(&t.c, HWP_CLS_INDIRECT, 0x5000, 0x6000, 1, &o);
    /* alternating targets: every one mispredicts */
    for (i = 0; i < 4; i++)
        branch(&t.c, HWP_CLS_INDIRECT, 0x5100, i & 1 ? 0x6000 : 0x7000, 1, &o);
    /* aliasing: pcs 512 apart share the 512-entry table */
    branch(&t.c, HWP_CLS_INDIRECT, 0x5000 + 512, 0x9000, 1, &o);
    branch(&t.c, HWP_CLS_INDIRECT, 0x5000, 0x6000, 1, &o);
    st = tstats(&t.c);
    CHECK_EQ(st.indirect, 10);
    CHECK_EQ(st.indirect_mispredicts, 1 + 4 + 2);
    /* RAS of 2: calls A, B, C (lengths given), returns C, B, A: the first
     * two are predicted, A's was overwritten */
    memset(&ops, 0, sizeof ops);
    ops.len = 5;
    for (i = 0; i < 3; i++) {
        memset(&in, 0, sizeof in);
        in.pc = 0x8000 + 0x100 * i;
        in.cls = HWP_CLS_CALL;
        in.next_pc = in.addr = 0x8000 + 0x100 * (i + 1);
        in.events = HWP_EV_TAKEN;
        hwp_core_insn_ex(&t.c, &in, &ops, &o);
    }
    for (i = 3; i-- > 0;) {
        branch(&t.c, HWP_CLS_RET, 0x9900, 0x8000 + 0x100 * i + 5, 1, &o);
        CHECK_EQ(!!(o.events & HWP_EV_MISPRED), i == 0);
    }
    /* a call without its length: the return within 15 bytes counts */
    branch(&t.c, HWP_CLS_CALL, 0xa000, 0xb000, 1, &o);
    branch(&t.c, HWP_CLS_RET, 0xb010, 0xa005, 1, &o);
    CHECK(!(o.events & HWP_EV_MISPRED));
    st = tstats(&t.c);
    CHECK_EQ(st.returns, 4);
    CHECK_EQ(st.return_mispredicts, 1);
    tclose(&t);
}

/* The pipeline: memory latency 10, L2 5; the first fetch misses both. */
static hwp_core_desc timing_desc(uint32_t order) {
    hwp_core_desc d = small_desc();
    d.mode = HWP_CORE_TIMING;
    d.order = order;
    d.l1i.line = 64;
    d.l1d.line = 64;
    d.l2.line = 64;
    d.l2.latency = 5;
    d.memory = 10;
    return d;
}

static void alu(hwp_core *c, uint64_t pc, uint8_t src, uint8_t dst,
                hwp_core_out *o) {
    hwp_insn in;
    hwp_core_ops ops;
    memset(&in, 0, sizeof in);
    memset(&ops, 0, sizeof ops);
    in.pc = pc;
    in.next_pc = pc + 4;
    ops.len = 4;
    ops.regs = 1;
    ops.nsrc = src ? 1 : 0;
    ops.src[0] = src;
    ops.ndst = 1;
    ops.dst[0] = dst;
    hwp_core_insn_ex(c, &in, &ops, o);
}

static void test_chain_ooo(void) {
    /* i0: r1 =, i1: r2 = r1, i2: r3 = r2, i3: r4 = (independent).
     * fetch 10 (the line comes from memory) for all four (one group);
     * map 12; issue i0 13, i1 14, i2 15, i3 13; ready +1; retire 14 15
     * 16 16; the clock ends at 16. Wasted slots (4 x (ready - fetch)
     * minus issues in [fetch, ready)): i0 16 - 2, i1 20 - 3, i2 24 - 4,
     * i3 16 - 2: 65. */
    tcore t;
    hwp_core_desc d = timing_desc(HWP_CORE_OOO);
    hwp_core_out o[4];
    hwp_core_rec r[8];
    hwp_core_stats st;
    const uint64_t iss[] = {13, 14, 15, 13}, rt[] = {14, 15, 16, 16},
                   wasted[] = {14, 17, 20, 14};
    unsigned i;
    CHECK_EQ(topen(&t, &d), HWP_OK);
    alu(&t.c, 0x1000, 0, 1, &o[0]);
    alu(&t.c, 0x1004, 1, 2, &o[1]);
    alu(&t.c, 0x1008, 2, 3, &o[2]);
    alu(&t.c, 0x100c, 0, 4, &o[3]);
    for (i = 0; i < 4; i++) {
        CHECK_EQ(o[i].timed, 1);
        CHECK_EQ(o[i].fetch, 10);
        CHECK_EQ(o[i].map, 12);
        CHECK_EQ(o[i].issue, iss[i]);
        CHECK_EQ(o[i].ready, iss[i] + 1);
        CHECK_EQ(o[i].retire, rt[i]);
    }
    CHECK_EQ(o[3].cycle, 16);
    CHECK_EQ(hwp_core_flush(&t.c), HWP_OK);
    CHECK_EQ(hwp_core_done(&t.c, r, 8), 4);
    for (i = 0; i < 4; i++) {
        CHECK_EQ(r[i].pc, 0x1000 + 4 * i);
        CHECK_EQ(r[i].wasted, wasted[i]);
    }
    st = tstats(&t.c);
    CHECK_EQ(st.wasted_slots, 65);
    CHECK_EQ(st.cycles, 16);
    CHECK_EQ(st.timed, 4);
    CHECK_EQ(st.no_regs, 0);
    tclose(&t);
}

/* ProfileMe's data-ready stage (map -> data ready): a multiply, an add
 * reading its result and an add reading nothing, fetched and mapped in
 * one group (map 12, as in test_chain_ooo). The multiply issues at 13
 * and completes at 13 + lat_mul 7 = 20: the dependent add's data is
 * ready then (and it issues then); the independent add's is ready at
 * its map (12), and it issues the cycle after. */
static void test_data_ready(void) {
    tcore t;
    hwp_core_desc d = timing_desc(HWP_CORE_OOO);
    hwp_core_out o[3];
    hwp_insn in;
    hwp_core_ops ops;
    CHECK_EQ(topen(&t, &d), HWP_OK);
    memset(&in, 0, sizeof in);
    memset(&ops, 0, sizeof ops);
    in.pc = 0x1000;
    in.next_pc = 0x1004;
    ops.len = 4;
    ops.regs = 1;
    ops.op = HWP_CORE_OP_MUL;
    ops.ndst = 1;
    ops.dst[0] = 1;
    hwp_core_insn_ex(&t.c, &in, &ops, &o[0]);
    alu(&t.c, 0x1004, 1, 2, &o[1]);
    alu(&t.c, 0x1008, 0, 3, &o[2]);
    CHECK_EQ(o[0].map, 12);
    CHECK_EQ(o[0].data_ready, 12);
    CHECK_EQ(o[0].issue, 13);
    CHECK_EQ(o[0].ready, 20);
    CHECK_EQ(o[1].map, 12);
    CHECK_EQ(o[1].data_ready, 20);
    CHECK_EQ(o[1].issue, 20);
    CHECK_EQ(o[2].map, 12);
    CHECK_EQ(o[2].data_ready, 12);
    CHECK_EQ(o[2].issue, 13);
    tclose(&t);
}

static void test_chain_inorder(void) {
    /* The same chain in order: i3 may not issue before i2 (15). */
    tcore t;
    hwp_core_desc d = timing_desc(HWP_CORE_INORDER);
    hwp_core_out o[4];
    CHECK_EQ(topen(&t, &d), HWP_OK);
    alu(&t.c, 0x1000, 0, 1, &o[0]);
    alu(&t.c, 0x1004, 1, 2, &o[1]);
    alu(&t.c, 0x1008, 2, 3, &o[2]);
    alu(&t.c, 0x100c, 0, 4, &o[3]);
    CHECK_EQ(o[2].issue, 15);
    CHECK_EQ(o[3].issue, 15);
    CHECK_EQ(o[3].retire, 16);
    tclose(&t);
}

/* N long-latency ops, either a chain (op i reads what op i-1 wrote) or
 * independent (each writes its own register, reads none). All N are
 * fetched, mapped and issued in one group (issue width 4), so the only
 * difference the chain makes is that op i waits for op i-1's result:
 * the last one is ready (N - 1) x the op's latency later. mul: the
 * desc's lat_mul; load: a load that misses to memory, pointer chasing
 * (each load's address register is the previous load's destination). */
static uint64_t long_ops(uint32_t order, int load, int chain, uint64_t *lat) {
    tcore t;
    hwp_core_desc d = timing_desc(order);
    hwp_core_out o;
    hwp_core_stats st;
    hwp_insn in;
    hwp_core_ops ops;
    unsigned i;
    d.issue_width = 4;
    d.lat_mul = 9; /* not the default 7: the desc's own value counts */
    CHECK_EQ(topen(&t, &d), HWP_OK);
    for (i = 0; i < 4; i++) {
        memset(&in, 0, sizeof in);
        memset(&ops, 0, sizeof ops);
        in.pc = 0x1000 + 4 * i;
        in.next_pc = in.pc + 4;
        ops.len = 4;
        ops.regs = 1;
        if (load) {
            in.cls = HWP_CLS_LOAD;
            in.addr = 0x80000 + 0x1000 * i; /* a new line, a miss each */
            ops.size = 8;
        } else {
            ops.op = HWP_CORE_OP_MUL;
        }
        ops.ndst = 1;
        ops.dst[0] = (uint8_t)(chain ? 1 : 1 + i);
        if (chain && i) {
            ops.nsrc = 1;
            ops.src[0] = 1;
        }
        hwp_core_insn_ex(&t.c, &in, &ops, &o);
        if (i == 0) *lat = o.ready - o.issue;
        CHECK_EQ(o.dlevel, load ? 4 : 0);
    }
    st = tstats(&t.c);
    CHECK_EQ(st.no_regs, 0);
    CHECK_EQ(st.cycles, o.retire);
    tclose(&t);
    return o.ready;
}

static void test_long_latency_chains(void) {
    static const uint32_t orders[] = {HWP_CORE_OOO, HWP_CORE_INORDER};
    uint64_t lat, lat2, dep, ind;
    unsigned k, load;
    for (k = 0; k < 2; k++)
        for (load = 0; load < 2; load++) {
            dep = long_ops(orders[k], (int)load, 1, &lat);
            ind = long_ops(orders[k], (int)load, 0, &lat2);
            /* the latency the desc gives: lat_mul, or the miss to memory
             * (timing_desc: memory 10, as test_load_latency_... shows) */
            CHECK_EQ(lat, load ? 10 : 9);
            CHECK_EQ(lat2, lat);
            CHECK_EQ(dep - ind, 3 * lat);
        }
}

/* A load of 8 bytes at addr into ops's registers (the caller sets them). */
static void load_regs(hwp_core *c, uint64_t pc, uint64_t addr, hwp_core_ops *ops,
                      hwp_core_out *o) {
    hwp_insn in;
    memset(&in, 0, sizeof in);
    in.pc = pc;
    in.next_pc = pc + 4;
    in.cls = HWP_CLS_LOAD;
    in.addr = addr;
    ops->len = 4;
    ops->size = 8;
    ops->regs = 1;
    hwp_core_insn_ex(c, &in, ops, o);
}

static void test_address_update(void) {
    /* pop r1 (r2 the stack pointer): a load from memory (latency 10)
     * that writes r1 with the data and r2 with an address update (upd
     * bit 1). fetch 10, map 12, issue 13: r1 ready 23, r2 13 + lat_int
     * = 14. An add reading r2 issues at 14, one reading r1 at 23. */
    tcore t;
    hwp_core_desc d = timing_desc(HWP_CORE_OOO);
    hwp_core_out o;
    hwp_core_ops ops;
    CHECK_EQ(topen(&t, &d), HWP_OK);
    memset(&ops, 0, sizeof ops);
    ops.nsrc = 1;
    ops.src[0] = 2;
    ops.ndst = 2;
    ops.dst[0] = 1;
    ops.dst[1] = 2;
    ops.upd = 2;
    load_regs(&t.c, 0x1000, 0x80000, &ops, &o);
    CHECK_EQ(o.issue, 13);
    CHECK_EQ(o.ready, 23);
    alu(&t.c, 0x1004, 2, 3, &o);
    CHECK_EQ(o.issue, 14);
    alu(&t.c, 0x1008, 1, 4, &o);
    CHECK_EQ(o.issue, 23);
    tclose(&t);
}

static void test_load_latency_and_mispredict(void) {
    /* i0 loads r1 from memory (L1D and L2 miss: latency 10), i1 uses r1.
     * fetch 10, map 12, i0 issues 13, ready 23; i1 issues 23, ready 24.
     * i2 is a conditional branch (fresh counter: predicted not taken) that
     * is taken: mispredicted; it issues at 13, ready 14; the next fetch is
     * max(10 + 7, 14 + 1) = 17. */
    tcore t;
    hwp_core_desc d = timing_desc(HWP_CORE_OOO);
    hwp_core_out o;
    hwp_insn in;
    hwp_core_ops ops;
    CHECK_EQ(topen(&t, &d), HWP_OK);
    memset(&ops, 0, sizeof ops);
    ops.ndst = 1;
    ops.dst[0] = 1;
    load_regs(&t.c, 0x1000, 0x80000, &ops, &o);
    CHECK_EQ(o.issue, 13);
    CHECK_EQ(o.ready, 23);
    CHECK_EQ(o.dlevel, 4);
    alu(&t.c, 0x1004, 1, 2, &o);
    CHECK_EQ(o.issue, 23);
    memset(&in, 0, sizeof in);
    in.pc = 0x1008;
    in.next_pc = 0x2000;
    in.addr = 0x2000;
    in.cls = HWP_CLS_BR_COND;
    in.events = HWP_EV_TAKEN;
    hwp_core_insn(&t.c, &in, &o);
    CHECK(o.events & HWP_EV_MISPRED);
    CHECK_EQ(o.issue, 13);
    /* the next instruction is on a new line: fetch 17 + 10 (memory) */
    alu(&t.c, 0x2000, 0, 5, &o);
    CHECK_EQ(o.fetch, 27);
    CHECK(o.events & HWP_EV_ICMISS);
    tclose(&t);
}

static void test_modes(void) {
    /* The additive clock: 1/4 cycle an instruction plus stalls. 8 ALU
     * instructions on one line (cold: + memory 10): 2 + 10 = 12. */
    tcore t;
    hwp_core_desc d = timing_desc(HWP_CORE_OOO);
    hwp_core_out o;
    hwp_core_stats st;
    unsigned i;
    d.mode = HWP_CORE_CACHES;
    CHECK_EQ(topen(&t, &d), HWP_OK);
    for (i = 0; i < 8; i++) alu(&t.c, 0x1000 + 4 * i, 0, 1, &o);
    CHECK_EQ(o.timed, 0);
    CHECK_EQ(hwp_core_cycle(&t.c), 12);
    tclose(&t);
    /* Sampled: only the instructions of a window are timed. */
    d.mode = HWP_CORE_SAMPLED;
    CHECK_EQ(topen(&t, &d), HWP_OK);
    for (i = 0; i < 8; i++) alu(&t.c, 0x1000 + 4 * i, 0, 1, &o);
    hwp_core_window(&t.c, 4);
    for (i = 0; i < 8; i++) {
        alu(&t.c, 0x1000 + 4 * i, 0, 1, &o);
        CHECK_EQ(o.timed, i < 4);
        CHECK(o.cycle >= 12);
    }
    st = tstats(&t.c);
    CHECK_EQ(st.timed, 4);
    CHECK_EQ(st.events, 16);
    tclose(&t);
}

static void test_bad_descs(void) {
    static const struct {
        const char *field;
        int which;
    } bad[] = {{"l1d.sets", 0}, {"l2.ways", 1}, {"l1i.line", 2},
               {"window", 3},   {"lat_mul", 4}, {"horizon", 5},
               {"bp_global", 6}, {"mode", 7},   {"llc.ways", 8},
               {"itlb.line", 9}, {"ras", 10},   {"bp_local", 11}};
    unsigned i;
    for (i = 0; i < sizeof bad / sizeof *bad; i++) {
        hwp_core_desc d;
        hwp_core c;
        char mem[64];
        hwp_status s;
        memset(&d, 0, sizeof d);
        switch (bad[i].which) {
        case 0: d.l1d.sets = 3; d.l1d.ways = 2; d.l1d.line = 64; break;
        case 1: d.l2.sets = 64; d.l2.line = 64; break; /* ways 0 */
        case 2: d.l1i.sets = 64; d.l1i.ways = 2; d.l1i.line = 48; break;
        case 3: d.rob = 16; d.window = 32; break;
        case 4: d.lat_mul = 70000; break;
        case 5: d.horizon = 1024; break;
        case 6: d.bp_global = 1000; break;
        case 7: d.mode = 9; break;
        case 8: d.llc.sets = 1024; d.llc.line = 64; break;
        case 9: d.itlb.sets = 1; d.itlb.ways = 4; d.itlb.line = 3000; break;
        case 10: d.flags = HWP_CORE_NO_RAS; d.ras = 4; break;
        case 11: d.bp = HWP_CORE_GSHARE; d.bp_local = 64; break;
        }
        CHECK_EQ(hwp_core_bytes(&d), 0);
        s = hwp_core_init(&c, mem, sizeof mem, &d, NULL);
        CHECK_EQ(s, HWP_EINVAL);
        CHECK_HAS(hwp_why(&c), bad[i].field);
    }
}

static void test_storage(void) {
    hwp_core_desc d;
    hwp_core c;
    size_t n = hwp_core_bytes(NULL);
    unsigned char *m = (unsigned char *)malloc(n + 16);
    unsigned off;
    memset(&d, 0, sizeof d);
    CHECK_EQ(n, HWP_CORE_BYTES_DEFAULT);
    CHECK_EQ(hwp_core_bytes(&d), n);
    for (off = 0; off < 16; off++)
        CHECK_EQ(hwp_core_init(&c, m + off, n, NULL, NULL), HWP_OK);
    /* one byte short at the worst alignment */
    CHECK_EQ(hwp_core_init(&c, m + 1, n - 1, NULL, NULL), HWP_ENOSPC);
    free(m);
}

static void feed_mix(hwp_core *c, unsigned seed, unsigned n) {
    hwp_rng r;
    unsigned i;
    hwp_rng_seed(&r, seed);
    for (i = 0; i < n; i++) {
        hwp_insn in;
        uint32_t k = hwp_rng_below(&r, 8);
        memset(&in, 0, sizeof in);
        in.pc = 0x400000 + 4 * hwp_rng_below(&r, 4096);
        in.next_pc = in.pc + 4;
        in.cls = k < 3 ? HWP_CLS_OTHER : k < 5 ? HWP_CLS_LOAD : k < 6 ? HWP_CLS_STORE
                                                            : HWP_CLS_BR_COND;
        if (in.cls == HWP_CLS_LOAD || in.cls == HWP_CLS_STORE)
            in.addr = 0x10000000 + 8 * hwp_rng_below(&r, 1u << 18);
        if (in.cls == HWP_CLS_BR_COND && hwp_rng_below(&r, 3)) {
            in.events = HWP_EV_TAKEN;
            in.next_pc = in.pc - 64;
        }
        hwp_core_insn(c, &in, NULL);
    }
}

static void test_json_roundtrip_and_merge(void) {
    tcore a, b, x;
    hwp_core_desc d;
    hwp_json_err err;
    hwp_bufwriter bw;
    hwp_writer w;
    hwp_core_stats sa, sb;
    static char j1[8192], j2[8192];
    memset(&d, 0, sizeof d);
    d.l2.sets = 1024; d.l2.ways = 4; d.l2.line = 64;
    CHECK_EQ(topen(&a, &d), HWP_OK);
    feed_mix(&a.c, 1, 20000);
    hwp_core_flush(&a.c);
    w = hwp_writer_buf(&bw, j1, sizeof j1);
    hwp_core_write_json(&a.c, &w);
    CHECK_EQ(bw.dropped, 0);
    CHECK_HAS(j1, "{\"model\":\"core\",\"version\":1,\"desc\":{\"mode\":1,");
    CHECK_EQ(hwp_core_read_desc(&d, j1, strlen(j1), &err), HWP_OK);
    CHECK_EQ(d.l2.ways, 4);
    CHECK_EQ(d.l1d.sets, 512);
    CHECK_EQ(topen(&x, &d), HWP_OK);
    CHECK_EQ(hwp_core_read_json(&x.c, j1, strlen(j1), &err), HWP_OK);
    w = hwp_writer_buf(&bw, j2, sizeof j2);
    hwp_core_write_json(&x.c, &w);
    CHECK_STR(j2, j1);
    /* a malformed report: the offset of the damage */
    {
        size_t at = (size_t)(strstr(j2, "\"desc\":") - j2) + 6;
        j2[at] = '#';
        CHECK_EQ(hwp_core_read_json(&x.c, j2, strlen(j2), &err), HWP_EFORMAT);
        CHECK_EQ(err.offset, at);
    }
    /* merge: counters add */
    CHECK_EQ(topen(&b, &d), HWP_OK);
    feed_mix(&b.c, 2, 5000);
    {
        hwp_core_stats m;
        sa = tstats(&a.c);
        sb = tstats(&b.c);
        CHECK_EQ(hwp_core_merge(&a.c, &b.c), HWP_OK);
        m = tstats(&a.c);
        CHECK_EQ(m.events, 25000);
        CHECK_EQ(m.l1d_read_misses, sa.l1d_read_misses + sb.l1d_read_misses);
        CHECK_EQ(m.cond_mispredicts, sa.cond_mispredicts + sb.cond_mispredicts);
        CHECK_EQ(m.cycles, sa.cycles + sb.cycles);
        CHECK_EQ(m.wasted_slots, sa.wasted_slots + sb.wasted_slots);
    }
    /* different descs: the first differing field */
    tclose(&b);
    d.l1d.ways = 4; d.l1d.sets = 256; d.l1d.line = 64;
    CHECK_EQ(topen(&b, &d), HWP_OK);
    CHECK_EQ(hwp_core_merge(&a.c, &b.c), HWP_EMISMATCH);
    CHECK_HAS(hwp_why(&a.c), "l1d.sets");
    /* reset gives the JSON of a fresh instance */
    CHECK_EQ(hwp_core_reset(&x.c), HWP_OK);
    tclose(&b);
    d.l1d.ways = 0; d.l1d.sets = 0; d.l1d.line = 0;
    CHECK_EQ(topen(&b, &d), HWP_OK);
    w = hwp_writer_buf(&bw, j1, sizeof j1);
    hwp_core_write_json(&x.c, &w);
    w = hwp_writer_buf(&bw, j2, sizeof j2);
    hwp_core_write_json(&b.c, &w);
    CHECK_STR(j1, j2);
    tclose(&a);
    tclose(&b);
    tclose(&x);
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_lru_not_fifo);
    HWT_RUN(test_cyclic_thrash);
    HWT_RUN(test_straddle_and_write_allocate);
    HWT_RUN(test_tlb);
    HWT_RUN(test_predictors);
    HWT_RUN(test_indirect_and_ras);
    HWT_RUN(test_chain_ooo);
    HWT_RUN(test_chain_inorder);
    HWT_RUN(test_data_ready);
    HWT_RUN(test_long_latency_chains);
    HWT_RUN(test_address_update);
    HWT_RUN(test_load_latency_and_mispredict);
    HWT_RUN(test_modes);
    HWT_RUN(test_bad_descs);
    HWT_RUN(test_storage);
    HWT_RUN(test_json_roundtrip_and_merge);
    return hwt_end();
}
