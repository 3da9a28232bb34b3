/* tests/core/test_core_block.c: a translated block run with hwp_core_run
 * gives exactly what its instructions give one by one.
 *
 * Two cores of the same desc take the same stream: one block by block
 * (hwp_core_block_init once per block, hwp_core_run per execution), the
 * other instruction by instruction (hwp_core_insn_ex with the block's
 * ops, the window opened before the same instruction). After every
 * block the clocks (the core's and the host's it ticks) must agree, and
 * every 64 blocks and at the end the stats, the finished records and,
 * where the run asked for them, every instruction's hwp_core_out. The
 * stream is a program's: functions of
 * consecutive basic blocks (random lengths 1..15, so instructions
 * straddle lines, and functions laid across page boundaries) with loops,
 * calls and returns, indirect jumps, loads and stores that straddle
 * lines, and, in sampled mode, windows opening mid-block. The machines
 * have tiny caches that miss, pages smaller than a line, lines shorter
 * than 15 bytes (no fast path), an LLC line shorter than the L1I's. */
#define HWPROF_IMPL
#include "hwprof/hwprof.h"
#include "harness.h"

enum { NFUNC = 12, PERFUNC = 24, NBLOCK = NFUNC * PERFUNC, MAXN = 20 };

typedef struct tblock {
    uint64_t pc, end;
    uint32_t n, nmem;
    uint8_t cls[MAXN];
    hwp_core_ops ops[MAXN];
    uint32_t target; /* taken branch, jump, call: a block */
    uint32_t taken;  /* a conditional's chance of being taken, of 8 */
    hwp_core_block *b;
    void *mem;
} tblock;

typedef struct tprog {
    tblock blk[NBLOCK];
    uint64_t arr; /* an array the loads and stores walk */
} tprog;

/* Functions at random places, every third across a page boundary (of
 * the 8 KB default pages and of the small ones), of consecutive blocks;
 * the last block of a function returns. */
static void make_prog(tprog *p, hwp_rng *r) {
    uint32_t f, j, i;
    for (f = 0; f < NFUNC; f++) {
        uint64_t pc = 0x400000 + ((uint64_t)f << 16) + hwp_rng_below(r, 4096);
        if (f % 3 == 0) pc = 0x400000 + ((uint64_t)(f + 1) << 16) - 40 - hwp_rng_below(r, 40);
        if (f == NFUNC - 1) pc = 0x7f0000001000ull - 30; /* far away: the ITLB */
        for (j = 0; j < PERFUNC; j++) {
            tblock *b = &p->blk[f * PERFUNC + j];
            uint32_t k = hwp_rng_below(r, 100);
            memset(b, 0, sizeof *b);
            b->pc = pc;
            b->n = 1 + hwp_rng_below(r, hwp_rng_below(r, 4) ? 8 : MAXN);
            for (i = 0; i < b->n; i++) {
                hwp_core_ops *o = &b->ops[i];
                o->len = (uint8_t)(hwp_rng_below(r, 4) ? 1 + hwp_rng_below(r, 7)
                                                       : 1 + hwp_rng_below(r, 15));
                o->size = (uint8_t)(1u << hwp_rng_below(r, 5));
                o->op = (uint8_t)(hwp_rng_below(r, 6) ? 0 : hwp_rng_below(r, HWP_CORE_OP_COUNT));
                if (hwp_rng_below(r, 4)) {
                    o->regs = 1;
                    o->nsrc = (uint8_t)hwp_rng_below(r, 4);
                    o->ndst = (uint8_t)hwp_rng_below(r, 3);
                    o->src[0] = (uint8_t)(1 + hwp_rng_below(r, 16));
                    o->src[1] = (uint8_t)(1 + hwp_rng_below(r, 16));
                    o->src[2] = (uint8_t)(1 + hwp_rng_below(r, 16));
                    o->dst[0] = (uint8_t)(1 + hwp_rng_below(r, 16));
                    o->dst[1] = (uint8_t)(1 + hwp_rng_below(r, 16));
                    o->upd = (uint8_t)hwp_rng_below(r, 4);
                }
                k = hwp_rng_below(r, 100);
                b->cls[i] = k < 25 ? HWP_CLS_LOAD : k < 37 ? HWP_CLS_STORE : HWP_CLS_OTHER;
                pc += o->len;
            }
            b->end = pc;
            /* the last instruction: mostly a branch */
            k = hwp_rng_below(r, 100);
            b->cls[b->n - 1] = (uint8_t)(k < 40   ? HWP_CLS_BR_COND
                                         : k < 48 ? HWP_CLS_JUMP
                                         : k < 60 ? HWP_CLS_CALL
                                         : k < 70 ? HWP_CLS_RET
                                         : k < 76 ? HWP_CLS_INDIRECT
                                         : k < 88 ? HWP_CLS_OTHER
                                                  : HWP_CLS_LOAD);
            if (j == PERFUNC - 1) b->cls[b->n - 1] = HWP_CLS_RET;
            for (i = 0; i < b->n; i++)
                b->nmem += b->cls[i] == HWP_CLS_LOAD || b->cls[i] == HWP_CLS_STORE;
            /* conditionals anywhere in the function (loops that end),
             * jumps forward, calls to a function's first block */
            b->target = b->cls[b->n - 1] == HWP_CLS_CALL ? hwp_rng_below(r, NFUNC) * PERFUNC
                        : b->cls[b->n - 1] == HWP_CLS_JUMP
                            ? f * PERFUNC + j + 1 + hwp_rng_below(r, PERFUNC - 1 - j)
                            : f * PERFUNC + hwp_rng_below(r, PERFUNC);
            b->taken = hwp_rng_below(r, 8); /* every loop ends */
        }
    }
}

/* A data address: the array walk, a stack, random over 4 MB, or the end
 * of a line (straddling with the larger sizes). */
static uint64_t data_addr(tprog *p, hwp_rng *r) {
    uint32_t k = hwp_rng_below(r, 8);
    if (k < 3) return p->arr += 8;
    if (k < 5) return 0x7ffff000 + 8 * hwp_rng_below(r, 32);
    if (k < 7) return 0x20000000 + hwp_rng_below(r, 1u << 22);
    return 0x30000000 + 64 * hwp_rng_below(r, 4096) - hwp_rng_below(r, 8);
}

/* The machines, as cache geometries {sets, ways, line, latency 0: the
 * level's default} and the fields that differ from the 21264's. */
static const hwp_core_desc machines[] = {
    {.mode = HWP_CORE_CACHES}, /* the 21264 */
    {.mode = HWP_CORE_SAMPLED},
    /* tiny: pages of 16 bytes inside 32-byte lines, an LLC line shorter
     * than the L1I's, gshare */
    {.mode = HWP_CORE_CACHES, .bp = HWP_CORE_GSHARE, .ras = 4,
     .l1i = {4, 2, 32, 0}, .l1d = {8, 2, 32, 0}, .l2 = {16, 2, 64, 0},
     .llc = {64, 2, 16, 0}, .itlb = {2, 2, 16, 0}, .dtlb = {2, 1, 64, 0}},
    /* 8-byte lines (no fast path), one way, gselect, no RAS, in-order
     * issue: sampled */
    {.mode = HWP_CORE_SAMPLED, .order = HWP_CORE_INORDER, .bp = HWP_CORE_GSELECT,
     .flags = HWP_CORE_NO_RAS, .l1i = {16, 1, 8, 0}, .l1d = {16, 1, 8, 0},
     .l2 = {32, 1, 16, 0}, .itlb = {1, 2, 4096, 0}, .dtlb = {2, 2, 4096, 0},
     .rob = 16, .window = 4, .fetch_width = 2, .issue_width = 3},
    /* no TLB, an LLC, a small tournament: sampled */
    {.mode = HWP_CORE_SAMPLED, .flags = HWP_CORE_NO_TLB, .l1i = {8, 2, 64, 0},
     .l1d = {8, 4, 64, 0}, .l2 = {64, 4, 128, 0}, .llc = {256, 8, 64, 0},
     .bp_global = 256, .bp_local = 64, .btb = 16, .ras = 8},
    {.mode = HWP_CORE_TIMING}, /* every block one by one */
    /* cachegrind's machine: no TLB, no RAS, gselect */
    {.mode = HWP_CORE_CACHES, .flags = HWP_CORE_NO_TLB | HWP_CORE_NO_RAS,
     .bp = HWP_CORE_GSELECT, .bp_global = 16384, .bp_hist = 7,
     .l1i = {64, 8, 64, 0}, .l1d = {64, 8, 64, 0}, .l2 = {1024, 16, 64, 0}}};
#define NMACHINES (sizeof machines / sizeof machines[0])

/* A core and the host clock it ticks (hwp_cost_tick). */
typedef struct tcore {
    hwp_core c;
    hwp_cost cost;
    void *mem;
} tcore;

static int open_core(tcore *t, const hwp_core_desc *d) {
    size_t n = hwp_core_bytes(d);
    t->mem = malloc(n);
    return t->mem && hwp_cost_init(&t->cost, NULL) == HWP_OK &&
           hwp_core_init(&t->c, t->mem, n, d, &t->cost) == HWP_OK;
}

/* The stats and the finished records of both cores agree. */
static int same_state(hwp_core *blk, hwp_core *one) {
    hwp_core_stats sb, so;
    hwp_core_rec rb[32], ro[32];
    size_t nb, no;
    hwp_core_get_stats(blk, &sb);
    hwp_core_get_stats(one, &so);
    if (memcmp(&sb, &so, sizeof sb) != 0) {
        const uint64_t *pb = (const uint64_t *)&sb, *po = (const uint64_t *)&so;
        size_t i;
        for (i = 0; i < sizeof sb / 8; i++)
            if (pb[i] != po[i])
                printf("      stats word %u: block %" PRIu64 ", one by one %" PRIu64 "\n",
                       (unsigned)i, pb[i], po[i]);
        return 0;
    }
    do {
        nb = hwp_core_done(blk, rb, 32);
        no = hwp_core_done(one, ro, 32);
        if (nb != no || memcmp(rb, ro, (nb < 32 ? nb : 32) * sizeof rb[0]) != 0) return 0;
    } while (nb);
    return 1;
}

/* One stream of `blocks` block executions on machine m; 0 on the first
 * difference (said where). */
static int run_stream(unsigned m, uint32_t seed, uint32_t blocks) {
    const hwp_core_desc *d = &machines[m];
    tcore tb, to;
    tprog *p = (tprog *)calloc(1, sizeof *p);
    hwp_rng r;
    uint64_t stack[64], addr[MAXN];
    uint32_t sp = 0, cur = 0, e, i;
    int ok = 1;
    if (!p || !open_core(&tb, d) || !open_core(&to, d)) {
        printf("      machine %u: cannot open\n", m);
        return 0;
    }
    hwp_rng_seed(&r, seed);
    make_prog(p, &r);
    p->arr = 0x10000000;
    for (i = 0; i < NBLOCK; i++) { /* translate every block once */
        tblock *b = &p->blk[i];
        size_t n = hwp_core_block_bytes(b->n);
        b->mem = malloc(n);
        b->b = b->mem ? hwp_core_block_init(&tb.c, b->mem, n, b->pc, b->cls, b->ops, b->n)
                      : NULL;
        if (!b->b) {
            printf("      machine %u: block %u refused\n", m, i);
            ok = 0;
            goto out;
        }
    }
    for (e = 0; e < blocks && ok; e++) {
        tblock *b = &p->blk[cur];
        hwp_core_exec x;
        hwp_core_out ob[MAXN], oo[MAXN];
        uint32_t last = b->cls[b->n - 1], next = cur + 1, want_out, ev_b, ev_o = 0;
        uint64_t pc = b->pc;
        uint32_t j = 0;
        memset(&x, 0, sizeof x);
        for (i = 0; i < b->nmem; i++) addr[i] = data_addr(p, &r);
        x.addr = addr;
        /* where the block goes */
        if (last == HWP_CLS_BR_COND) {
            if (hwp_rng_below(&r, 8) < b->taken) {
                x.events = HWP_EV_TAKEN;
                next = b->target;
            }
        } else if (last == HWP_CLS_JUMP) {
            x.events = HWP_EV_TAKEN;
            next = b->target;
        } else if (last == HWP_CLS_CALL) {
            x.events = HWP_EV_TAKEN;
            if (hwp_rng_below(&r, 3) == 0) { /* through a register */
                x.events |= HWP_EV_INDIRECT;
                next = hwp_rng_below(&r, 3) * PERFUNC;
            } else {
                next = b->target;
            }
            stack[sp++ & 63] = cur + 1;
        } else if (last == HWP_CLS_RET) {
            x.events = HWP_EV_TAKEN;
            next = sp && hwp_rng_below(&r, 10) ? (uint32_t)stack[--sp & 63]
                                               : hwp_rng_below(&r, NBLOCK);
        } else if (last == HWP_CLS_INDIRECT) { /* an interpreter's dispatch */
            x.events = HWP_EV_TAKEN;
            next = hwp_rng_below(&r, 4) ? hwp_rng_below(&r, NBLOCK)
                                        : (cur / PERFUNC) * PERFUNC + hwp_rng_below(&r, 4);
        }
        if (hwp_rng_below(&r, 50) == 0) x.events |= HWP_EV_TRAP;
        x.next_pc = x.events & HWP_EV_TAKEN ? p->blk[next].pc : b->end;
        /* windows: now and then, mid-block; also right before a block */
        if (hwp_rng_below(&r, 40) == 0) {
            x.win_at = hwp_rng_below(&r, b->n);
            x.win_n = 1 + hwp_rng_below(&r, 200);
        } else if (hwp_rng_below(&r, 200) == 0) {
            uint64_t n = 1 + hwp_rng_below(&r, 50);
            hwp_core_window(&tb.c, n);
            hwp_core_window(&to.c, n);
        }
        want_out = hwp_rng_below(&r, 16) == 0;
        memset(ob, 0, sizeof ob);
        memset(oo, 0, sizeof oo);
        ev_b = hwp_core_run(&tb.c, b->b, &x, want_out ? ob : NULL);
        for (i = 0; i < b->n; i++) { /* the same block one by one */
            hwp_insn in;
            memset(&in, 0, sizeof in);
            in.pc = pc;
            in.cls = b->cls[i];
            pc += b->ops[i].len;
            in.next_pc = i + 1 < b->n ? pc : x.next_pc;
            in.addr = in.cls == HWP_CLS_LOAD || in.cls == HWP_CLS_STORE ? addr[j++]
                                                                        : in.next_pc;
            if (i + 1 == b->n) in.events = x.events;
            if (x.win_n && i == x.win_at) hwp_core_window(&to.c, x.win_n);
            hwp_core_insn_ex(&to.c, &in, &b->ops[i], &oo[i]);
            ev_o |= oo[i].events;
        }
        if (hwp_core_cycle(&tb.c) != hwp_core_cycle(&to.c) || ev_b != ev_o ||
            hwp_cost_clock(&tb.cost) != hwp_cost_clock(&to.cost) ||
            (want_out && memcmp(ob, oo, b->n * sizeof ob[0]) != 0) ||
            ((e % 64 == 63 || e + 1 == blocks) && !same_state(&tb.c, &to.c))) {
            printf("      machine %u seed %u: block %u (execution %u) differs: cycle %" PRIu64
                   " against %" PRIu64 ", events %#x against %#x\n",
                   m, seed, cur, e, hwp_core_cycle(&tb.c), hwp_core_cycle(&to.c), ev_b, ev_o);
            ok = 0;
        }
        cur = next;
    }
    if (ok) { /* the pending records too */
        hwp_core_flush(&tb.c);
        hwp_core_flush(&to.c);
        ok = same_state(&tb.c, &to.c);
    }
out:
    for (i = 0; i < NBLOCK; i++) free(p->blk[i].mem);
    free(p);
    free(tb.mem);
    free(to.mem);
    return ok;
}

static void test_block_equals_one_by_one(void) {
    unsigned m;
    uint32_t s;
    for (m = 0; m < NMACHINES; m++)
        for (s = 1; s <= 3; s++) CHECK(run_stream(m, s * 7919u + m, 6000));
}

/* What hwp_core_block_init refuses: no instructions, a length the fast
 * path cannot take (0, > 15), a branch before the last instruction, an
 * unknown class, too little storage, no core. */
static void test_block_refused(void) {
    tcore t;
    hwp_core_ops ops[3];
    uint8_t cls[3] = {HWP_CLS_OTHER, HWP_CLS_LOAD, HWP_CLS_BR_COND};
    static unsigned char mem[4096];
    size_t n = hwp_core_block_bytes(3);
    memset(ops, 0, sizeof ops);
    ops[0].len = ops[1].len = ops[2].len = 4;
    CHECK(open_core(&t, &machines[0]));
    CHECK(n > 0 && n <= sizeof mem);
    CHECK(hwp_core_block_init(&t.c, mem, n, 0x1000, cls, ops, 3) != NULL);
    CHECK(hwp_core_block_init(&t.c, mem + 1, n, 0x1000, cls, ops, 3) != NULL); /* any alignment */
    CHECK(hwp_core_block_bytes(0) == 0);
    CHECK(hwp_core_block_init(&t.c, mem, n, 0x1000, cls, ops, 0) == NULL);
    CHECK(hwp_core_block_init(&t.c, mem, n - 1, 0x1000, cls, ops, 3) == NULL);
    CHECK(hwp_core_block_init(NULL, mem, n, 0x1000, cls, ops, 3) == NULL);
    ops[1].len = 16;
    CHECK(hwp_core_block_init(&t.c, mem, n, 0x1000, cls, ops, 3) == NULL);
    ops[1].len = 0;
    CHECK(hwp_core_block_init(&t.c, mem, n, 0x1000, cls, ops, 3) == NULL);
    ops[1].len = 4;
    cls[1] = HWP_CLS_JUMP;
    CHECK(hwp_core_block_init(&t.c, mem, n, 0x1000, cls, ops, 3) == NULL);
    cls[1] = HWP_CLS_OTHER;
    cls[2] = HWP_CLS_COUNT;
    CHECK(hwp_core_block_init(&t.c, mem, n, 0x1000, cls, ops, 3) == NULL);
    free(t.mem);
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_block_equals_one_by_one);
    HWT_RUN(test_block_refused);
    return hwt_end();
}
