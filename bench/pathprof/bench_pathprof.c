/* Benchmarks of hwprof/pathprof.h on one recorded branch stream (the
 * synthetic program of tests/pathprof/prog.h: loops, if/else, calls,
 * recursion, an indirect jump table), in the same run:
 *   pathprof/stack+hpt         path stack (BL paths) + 512x4 LFU HPT
 *   pathprof/stack+hpt+cost    the same with a cost attached: the
 *                              branch-queue model of section 8.2 (what
 *                              every host that reports overhead runs)
 *   pathprof/stack+hpt+phase   + the path-based phase detector
 *   pathprof/full+queue        + the branch-queue cost model (section 8.2)
 *   pathprof/insn+cost         stack+hpt+cost fed one hwp_insn record per
 *                              instruction (hwp_path_insn, as the hosts'
 *                              instruction-by-instruction mode does); its
 *                              events are instructions, not branches
 *   pathprof/bbv               the BBV phase detector alone
 *   peer/sw_exact              a software path profiler: the same BL path
 *                              detection written plainly, and every
 *                              completed path hashed into an exact table
 *                              (the hash-and-update the paper replaces)
 * Events are branches. */
#include "bench.h" /* first: it sets _POSIX_C_SOURCE for clock_gettime */

#define HWPROF_IMPL
#include "hwprof/pathprof.h"

#include "pathprof/prog.h"

#define A16 __attribute__((aligned(16)))

/* One recorded branch, laid out as a host would hold it when it calls
 * hwp_path_branch: taken is already a bool, so the replay loop only
 * loads the arguments (its cost is part of every figure, peers' too). */
typedef struct br {
    uint64_t pc, next;
    uint32_t cls, insns;
    bool taken;
} br;

static br *trace;
static size_t ntrace, captrace;

static void record(void *ctx, uint64_t pc, uint64_t next, uint32_t cls,
                   int taken, uint32_t insns) {
    br *b;
    (void)ctx;
    if (ntrace == captrace) {
        captrace = captrace ? captrace * 2 : 1 << 16;
        trace = (br *)realloc(trace, captrace * sizeof *trace);
    }
    b = &trace[ntrace++];
    b->pc = pc;
    b->next = next;
    b->cls = cls;
    b->insns = insns;
    b->taken = taken != 0;
}

static unsigned char st_bbv[1 << 14] A16;

/* Each benchmark owns its storage: a table another benchmark filled
 * would turn this one's misses into hits. */
typedef struct model_ctx {
    hwp_path p;
    hwp_hpt h;
    hwp_phase ph;
    hwp_cost c;
    unsigned char st_path[1 << 12] A16, st_hpt[HWP_HPT_BYTES(512)] A16, st_phase[1 << 14] A16;
} model_ctx;

/* The cost is initialised first: hwp_path_init reads the operation
 * latencies from it. */
static void model_setup(model_ctx *m, int phase, int cost, uint32_t policy) {
    hwp_hpt_desc hd;
    memset(&hd, 0, sizeof hd);
    hd.policy = policy;
    hwp_cost_init(&m->c, NULL);
    hwp_path_init(&m->p, m->st_path, sizeof m->st_path, NULL, cost ? &m->c : NULL);
    hwp_hpt_init(&m->h, m->st_hpt, sizeof m->st_hpt, &hd, NULL);
    hwp_phase_init(&m->ph, m->st_phase, sizeof m->st_phase, NULL, NULL);
    hwp_path_attach(&m->p, &m->h, phase ? &m->ph : NULL);
    hwp_path_begin(&m->p, 0x1000);
}

/* The replay loops walk the trace with a pointer held in a local: the
 * globals trace and ntrace would otherwise be reloaded after every call
 * (the model's stores may alias them). */
/* What a run leaves behind, read through the stats (keeps the work
 * alive). */
static uint64_t model_result(const model_ctx *m) {
    hwp_path_stats ps = {0};
    hwp_hpt_stats hs = {0};
    hwp_path_get_stats(&m->p, &ps);
    hwp_hpt_get_stats(&m->h, &hs);
    return ps.paths + hs.hits + hs.misses;
}

static uint64_t run_model(void *ctx, uint64_t iters) {
    model_ctx *m = (model_ctx *)ctx;
    const br *end = trace + ntrace, *b;
    uint64_t it;
    for (it = 0; it < iters; it++)
        for (b = trace; b != end; b++)
            hwp_path_branch(&m->p, b->pc, b->next, b->cls, b->taken, b->insns, 0);
    return model_result(m);
}

/* The same stream as instruction records: insns - 1 plain instructions
 * (one record in memory, as a host's decoder would leave it: its fields
 * are loaded, not known to the compiler), then the branch. */
static hwp_insn other_rec;

static uint64_t run_insn(void *ctx, uint64_t iters) {
    model_ctx *m = (model_ctx *)ctx;
    const br *end = trace + ntrace, *b;
    hwp_insn in;
    uint64_t it;
    uint32_t k;
    memset(&in, 0, sizeof in);
    for (it = 0; it < iters; it++)
        for (b = trace; b != end; b++) {
            for (k = 1; k < b->insns; k++) hwp_path_insn(&m->p, &other_rec);
            in.pc = b->pc;
            in.next_pc = b->next;
            in.cls = b->cls;
            in.events = b->taken ? HWP_EV_TAKEN : 0;
            hwp_path_insn(&m->p, &in);
        }
    return model_result(m);
}

/* The table's miss path: hwp_hpt_add alone on MISS_N completions
 * spread over 4096 paths (8 x the entries), so most adds miss the
 * 512 x 4 table (the synthetic program's paths nearly all hit). */
#define MISS_N 65536u
static hwp_path_pd miss_pd[MISS_N];

static uint64_t run_hpt_miss(void *ctx, uint64_t iters) {
    model_ctx *m = (model_ctx *)ctx;
    const hwp_path_pd *end = miss_pd + MISS_N, *d;
    uint64_t it;
    hwp_hpt_stats hs = {0};
    for (it = 0; it < iters; it++)
        for (d = miss_pd; d != end; d++) hwp_hpt_add(&m->h, d, 1);
    hwp_hpt_get_stats(&m->h, &hs);
    return hs.misses;
}

static uint64_t run_bbv(void *ctx, uint64_t iters) {
    hwp_phase *ph = (hwp_phase *)ctx;
    const br *end = trace + ntrace, *b;
    uint64_t it;
    for (it = 0; it < iters; it++)
        for (b = trace; b != end; b++) hwp_phase_add_branch(ph, b->pc, b->insns);
    {
        hwp_phase_stats st = {0};
        hwp_phase_get_stats(ph, &st);
        return st.intervals + st.insns;
    }
}

/* ---- the software peer -------------------------------------------------- */

#define SW_DEPTH 256
#define SW_BITS 16

typedef struct sw_slot {
    uint64_t start, shape, count;
} sw_slot;

typedef struct sw_prof {
    struct {
        uint64_t start, shape;
    } stk[SW_DEPTH];
    unsigned n;
    sw_slot *tab;
    uint64_t dropped;
} sw_prof;

/* hash-and-update into an exact open-addressing table */
static void sw_count(sw_prof *s, uint64_t start, uint64_t shape) {
    uint64_t i = hwp_mix64(start ^ (shape << 40)) >> (64 - SW_BITS);
    for (;;) {
        sw_slot *t = &s->tab[i];
        if (t->count && t->start == start && t->shape == shape) {
            t->count++;
            return;
        }
        if (!t->count) {
            t->start = start;
            t->shape = shape;
            t->count = 1;
            return;
        }
        i = (i + 1) & ((1u << SW_BITS) - 1);
    }
}

static uint64_t run_sw(void *ctx, uint64_t iters) {
    sw_prof *s = (sw_prof *)ctx;
    const br *end = trace + ntrace, *b;
    uint64_t it;
    for (it = 0; it < iters; it++)
        for (b = trace; b != end; b++) {
            unsigned t = s->n - 1;
            switch (b->cls) {
            case HWP_CLS_CALL:
                if (s->n < SW_DEPTH) s->n++;
                else s->dropped++;
                s->stk[s->n - 1].start = b->next;
                s->stk[s->n - 1].shape = 1;
                break;
            case HWP_CLS_RET:
                sw_count(s, s->stk[t].start, s->stk[t].shape);
                if (s->n > 1) s->n--;
                break;
            case HWP_CLS_INDIRECT:
                s->stk[t].shape = s->stk[t].shape << 1 | 1;
                sw_count(s, s->stk[t].start, s->stk[t].shape);
                s->stk[t].start = b->next;
                s->stk[t].shape = 1;
                break;
            default:
                s->stk[t].shape = s->stk[t].shape << 1 | b->taken;
                if ((b->taken && b->next <= b->pc) || s->stk[t].shape >> 32) {
                    sw_count(s, s->stk[t].start, s->stk[t].shape);
                    s->stk[t].start = b->next;
                    s->stk[t].shape = 1;
                }
            }
        }
    return s->tab[0].count + s->dropped;
}

int main(int argc, char **argv) {
    static model_ctx m1, m2, m3, m4, m5, m6, m7, mm[3];
    uint64_t ninsn = 0;
    size_t i;
    static sw_prof sw;
    static hwp_phase bbv;
    pp_prog g;
    pp_frame mf;
    hwb_begin(argc, argv);
    pp_init(&g, record, NULL, 5);
    pp_main(&g, &mf, 20000);
    model_setup(&m1, 0, 0, HWP_HPT_PLAIN);
    model_setup(&m2, 1, 0, HWP_HPT_PLAIN);
    model_setup(&m3, 1, 1, HWP_HPT_PLAIN);
    model_setup(&m4, 0, 1, HWP_HPT_PLAIN);
    model_setup(&m5, 0, 1, HWP_HPT_PLAIN);
    model_setup(&m6, 0, 0, HWP_HPT_AGING);
    model_setup(&m7, 0, 0, HWP_HPT_DECAY);
    model_setup(&mm[0], 0, 0, HWP_HPT_PLAIN);
    model_setup(&mm[1], 0, 0, HWP_HPT_AGING);
    model_setup(&mm[2], 0, 0, HWP_HPT_DECAY);
    for (i = 0; i < MISS_N; i++) { /* a fixed pseudo-random order (Knuth's multiplier) */
        uint32_t k = (uint32_t)(i * 2654435761u) >> 20; /* 4096 paths */
        miss_pd[i].start = 0x400000u + (uint64_t)(k >> 2) * 64u;
        miss_pd[i].shape = 4u | (k & 3u);
    }
    other_rec.cls = HWP_CLS_OTHER;
    for (i = 0; i < ntrace; i++) ninsn += trace[i].insns;
    hwp_phase_init(&bbv, st_bbv, sizeof st_bbv, NULL, NULL);
    sw.tab = (sw_slot *)calloc((size_t)1 << SW_BITS, sizeof *sw.tab);
    sw.n = 1;
    sw.stk[0].start = 0x1000;
    sw.stk[0].shape = 1;
    hwb_run("pathprof/stack+hpt", run_model, &m1, ntrace);
    hwb_run("pathprof/stack+hpt+cost", run_model, &m4, ntrace);
    hwb_run("pathprof/stack+hpt_aging", run_model, &m6, ntrace);
    hwb_run("pathprof/stack+hpt_decay", run_model, &m7, ntrace);
    hwb_run("pathprof/stack+hpt+phase", run_model, &m2, ntrace);
    hwb_run("pathprof/full+queue", run_model, &m3, ntrace);
    hwb_run("pathprof/insn+cost", run_insn, &m5, ninsn);
    hwb_run("pathprof/bbv", run_bbv, &bbv, ntrace);
    hwb_run("pathprof/hpt_miss_lfu", run_hpt_miss, &mm[0], MISS_N);
    hwb_run("pathprof/hpt_miss_aging", run_hpt_miss, &mm[1], MISS_N);
    hwb_run("pathprof/hpt_miss_decay", run_hpt_miss, &mm[2], MISS_N);
    hwb_run("peer/sw_exact", run_sw, &sw, ntrace);
    free(sw.tab);
    free(trace);
    return hwb_end();
}
