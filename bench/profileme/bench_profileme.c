/* Benchmarks of hwprof/profileme.h.
 *
 * The hot path a host pays on every non-sampled instruction is a decrement
 * and a branch (hwp_pm_fetch). Its peer, measured in the same run over the
 * same instruction stream, is a bare loop that only counts instructions
 * (what an emulator's icount does). "sample_*" measure one sample end to
 * end: selection, tag, stage reports, retire, buffer, delivery, and the
 * per-PC table update of the profiling software. "selection_*" measure
 * the same per selection with 32 records per interrupt, as the bytecode
 * VM (stage reports) and an hwp_pm_insn host (QEMU, Valgrind) pay it.
 *
 *   bench_profileme [--budget 0.3]         ns/event, medians
 *   bench/callgrind.sh bench_profileme     instructions/event
 */
#include "bench.h" /* first: it sets _POSIX_C_SOURCE for clock_gettime */

#define HWPROF_IMPL
#include "hwprof/profileme.h"

#include "gen.h"

#define N_INSN 4096u
static hwp_insn stream[N_INSN];
static unsigned char pm_mem[HWP_PM_BYTES(2, 32)];
static unsigned char tab_mem[HWP_PM_TABLE_BYTES(4096)];

static hwp_pm pm;
static hwp_pm_table tab;

/* A stream like a program's: Zipf-hot PCs, 1 in 6 a conditional branch
 * taken half the time, the rest loads and ALU operations. */
static void make_stream(void) {
    hwp_rng r;
    hwg_zipf z;
    unsigned i;
    hwp_rng_seed(&r, 4);
    hwg_zipf_init(&z, 1024, 1.0);
    for (i = 0; i < N_INSN; i++) {
        uint32_t kind = hwp_rng_below(&r, 6);
        stream[i].pc = 0x400000u + 4u * hwg_zipf_next(&z, &r);
        stream[i].addr = hwp_rng_next(&r) & 0xFFFF8u;
        stream[i].cls = kind == 0 ? HWP_CLS_BR_COND
                        : kind < 3 ? HWP_CLS_LOAD : HWP_CLS_OTHER;
        stream[i].events = kind == 0 && hwp_rng_below(&r, 2) ? HWP_EV_TAKEN : 0;
    }
}

static void setup(uint32_t interval, uint32_t dist, uint32_t paired,
                  uint32_t buffer) {
    hwp_pm_desc d;
    hwp_pm_table_desc td;
    memset(&td, 0, sizeof td);
    td.capacity = 4096;
    td.interval = interval;
    td.window = paired ? 1 : 0;
    td.paired = paired;
    hwp_pm_table_init(&tab, tab_mem, sizeof tab_mem, &td, NULL);
    memset(&d, 0, sizeof d);
    d.seed = 1;
    d.interval = interval;
    d.dist = dist;
    d.paired = paired;
    d.window = paired ? 1 : 0;
    d.buffer = buffer;
    d.deliver = hwp_pm_table_deliver;
    d.user = &tab;
    if (hwp_pm_init(&pm, pm_mem, sizeof pm_mem, &d, NULL) != HWP_OK) {
        fprintf(stderr, "bench_profileme: %s\n", hwp_why(&pm));
        exit(1);
    }
}

/* One host loop for the three hot-path benchmarks; `mode` is a constant
 * at each call, so the compiler builds three specialised loops.
 *   BARE   the peer: read each instruction and count it (icount)
 *   FETCH  the same with ProfileMe's selection, never selecting
 *   INSN   the whole hwp_insn entry: selection plus the history register */
enum { BARE, FETCH, INSN };

#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline uint64_t host_loop(uint64_t iters, int mode) {
    uint64_t s = 0, icount = 0, it;
    unsigned i;
    for (it = 0; it < iters; it++)
        for (i = 0; i < N_INSN; i++) {
            s += stream[i].pc ^ stream[i].addr;
            if (mode == BARE) icount++;
            else if (mode == INSN) hwp_pm_insn(&pm, &stream[i], it);
            else if (hwp_pm_fetch(&pm))
                hwp_pm_retire(&pm, hwp_pm_tag(&pm, stream[i].pc, it), it);
        }
    return s + icount + hwp_pm_fetched(&pm);
}

static uint64_t run_bare(void *ctx, uint64_t iters) {
    (void)ctx;
    return host_loop(iters, BARE);
}

static uint64_t run_fetch(void *ctx, uint64_t iters) {
    (void)ctx;
    return host_loop(iters, FETCH);
}

static uint64_t run_insn(void *ctx, uint64_t iters) {
    (void)ctx;
    return host_loop(iters, INSN);
}

/* One sample end to end, every fetch selected: tag, stage reports, note,
 * retire, delivery and the table update. ctx NULL: a pipeline model's five
 * stages; else the stages an interpreter reports (examples/minivm/prof.c:
 * ISSUE, a load's LOAD_ISSUE and LOAD_DONE, RETIRE_READY). */
static uint64_t run_sample(void *ctx, uint64_t iters) {
    uint64_t it, c = 0;
    unsigned i;
    for (it = 0; it < iters; it++)
        for (i = 0; i < N_INSN; i++, c += 8) {
            uint32_t tag;
            if (!hwp_pm_fetch(&pm)) continue;
            tag = hwp_pm_tag(&pm, stream[i].pc, c);
            if (!ctx) {
                hwp_pm_stage(&pm, tag, HWP_PM_ST_MAP, c + 1);
                hwp_pm_stage(&pm, tag, HWP_PM_ST_DATA_READY, c + 3);
                hwp_pm_stage(&pm, tag, HWP_PM_ST_ISSUE, c + 4);
                hwp_pm_stage(&pm, tag, HWP_PM_ST_RETIRE_READY, c + 6);
            } else {
                hwp_pm_stage(&pm, tag, HWP_PM_ST_ISSUE, c);
                if (stream[i].cls == HWP_CLS_LOAD) {
                    hwp_pm_stage(&pm, tag, HWP_PM_ST_LOAD_ISSUE, c);
                    hwp_pm_stage(&pm, tag, HWP_PM_ST_LOAD_DONE, c + 3);
                }
                hwp_pm_stage(&pm, tag, HWP_PM_ST_RETIRE_READY, c + 3);
            }
            hwp_pm_note(&pm, tag, stream[i].cls, stream[i].addr,
                        stream[i].events);
            hwp_pm_retire(&pm, tag, c + 7);
        }
    hwp_pm_table_stats st;
    hwp_pm_table_get_stats(&tab, &st);
    return st.samples;
}

int main(int argc, char **argv) {
    hwb_begin(argc, argv);
    make_stream();
    hwb_run("profileme/bare_count_loop", run_bare, NULL, N_INSN);
    setup(HWP_PM_MAX_INTERVAL, HWP_PM_DIST_FIXED, 0, 0);
    hwb_run("profileme/fetch_not_sampled", run_fetch, NULL, N_INSN);
    setup(HWP_PM_MAX_INTERVAL, HWP_PM_DIST_FIXED, 0, 0);
    hwb_run("profileme/insn_not_sampled", run_insn, NULL, N_INSN);
    setup(10000, HWP_PM_DIST_UNIFORM, 0, 0);
    hwb_run("profileme/insn_S10000", run_insn, NULL, N_INSN);
    setup(1, HWP_PM_DIST_FIXED, 0, 0);
    hwb_run("profileme/sample_end_to_end", run_sample, NULL, N_INSN);
    setup(2, HWP_PM_DIST_FIXED, 1, 0);
    hwb_run("profileme/sample_end_to_end_paired", run_sample, NULL, N_INSN);
    setup(1, HWP_PM_DIST_FIXED, 0, 32);
    /* Per selection as an interpreter pays it: 32 records per interrupt. */
    hwb_run("profileme/selection_vm_buffer32", run_sample, &tab, N_INSN);
    setup(1, HWP_PM_DIST_FIXED, 0, 32);
    /* hwp_pm_insn with every instruction selected: the cold half a QEMU
     * or Valgrind host pays per selection. */
    hwb_run("profileme/selection_insn_buffer32", run_insn, NULL, N_INSN);
    return hwb_end();
}
