/* examples/quickstart.c: the smallest complete hwprof host.
 *
 * A synthetic program (synth.h: loops, a call, an indirect jump table,
 * invariant and varying loads, two phases) emits one hwp_insn per retired
 * instruction. The host hands each record to every model, advances the
 * cost shim's clock, and at the end prints what each model reports and
 * what the modelled hardware would have cost.
 *
 *   build/examples/quickstart [iterations]      (default 200000; 0 keeps
 *                                               it; at most 10^9)
 */
#define HWPROF_IMPL
#define HWPROF_STDIO
#include "hwprof/hwprof.h"

#include <stdio.h>
#include <stdlib.h>

#include "hwx_arg.h" /* the option value rules every host follows */
#include "synth.h"

/* Models never allocate: the host hands them storage. A static arena
 * with a bump pointer is all this host needs. */
static unsigned char arena[1u << 22] __attribute__((aligned(16)));
static size_t arena_used;

static void *take(size_t n) {
    void *p = arena + arena_used;
    if (n == 0) { /* *_bytes() said the desc is invalid; init says why */
        return p;
    }
    arena_used += n; /* any alignment will do: n counts the padding */
    if (arena_used > sizeof arena) {
        fprintf(stderr, "quickstart: arena too small\n");
        exit(1);
    }
    return p;
}

/* Run `call` (an init), then, only after it returned, read the reason
 * it left in `x`: a function's arguments are evaluated in no fixed
 * order, so hwp_why(x) beside the call could read it before the init. */
#define CHECK(call, what, x)                                                   \
    do {                                                                       \
        hwp_status st_ = (call);                                               \
        if (st_ != HWP_OK) {                                                   \
            fprintf(stderr, "quickstart: %s: %s (%s)\n", what, hwp_status_str(st_), \
                    hwp_why(x));                                               \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

typedef struct host {
    uint64_t cycle; /* the host's clock: one cycle per instruction */
    hwp_cost cost;
    hwp_pm pm;
    hwp_pm_table pm_table;
    hwp_path path;
    hwp_hpt hpt;
    hwp_phase phase;
    hwp_cp cp;
    hwp_strat strat;
    hwp_strat_acc strat_acc;
    hwp_rap rap;
} host;

/* The per-instruction hot path: one inline call per model. */
static void on_insn(void *ctx, const hwp_insn *in) {
    host *h = (host *)ctx;
    hwp_cost_tick(&h->cost, 1); /* the host's clock: one cycle per insn */
    hwp_pm_insn(&h->pm, in, ++h->cycle);
    hwp_path_insn(&h->path, in);
    hwp_cp_insn(&h->cp, in);
    hwp_strat_insn(&h->strat, in);
    hwp_rap_insn(&h->rap, in);
}

static void setup(host *h) {
    hwp_pm_desc pmd = {0};
    hwp_pm_table_desc pmt = {0};
    hwp_phase_desc phd = {0};
    hwp_strat_desc sd = {0};
    hwp_strat_acc_desc sad = {0};
    hwp_rap_desc rd = {0};
    CHECK(hwp_cost_init(&h->cost, NULL), "cost", &h->cost);

    /* ProfileMe: one sample every 1000 instructions on average; delivered
     * records are aggregated per PC by the software side (section 5). */
    pmd.interval = 1000;
    pmd.seed = 1;
    pmd.buffer = 64; /* amortise one interrupt over 64 records (4.3) */
    pmd.deliver = hwp_pm_table_deliver;
    pmd.user = &h->pm_table;
    CHECK(hwp_pm_init(&h->pm, take(hwp_pm_bytes(&pmd)), hwp_pm_bytes(&pmd), &pmd,
                      &h->cost), "profileme", &h->pm);
    hwp_pm_table_desc_for(&h->pm, &pmt); /* the sampler's S, W and pairing */
    CHECK(hwp_pm_table_init(&h->pm_table, take(hwp_pm_table_bytes(&pmt)),
                            hwp_pm_table_bytes(&pmt), &pmt, NULL), "profileme table", &h->pm_table);

    /* Path profiler: Ball-Larus paths (zero desc), a 512 x 4 hot path
     * table, and a phase detector with 20000-instruction intervals. */
    phd.interval = 20000;
    CHECK(hwp_hpt_init(&h->hpt, take(hwp_hpt_bytes(NULL)), hwp_hpt_bytes(NULL),
                       NULL, &h->cost), "hpt", &h->hpt);
    CHECK(hwp_phase_init(&h->phase, take(hwp_phase_bytes(&phd)),
                         hwp_phase_bytes(&phd), &phd, &h->cost), "phase", &h->phase);
    CHECK(hwp_path_init(&h->path, take(hwp_path_bytes(NULL)), hwp_path_bytes(NULL),
                        NULL, &h->cost), "path", &h->path);
    CHECK(hwp_path_attach(&h->path, &h->hpt, &h->phase), "path attach", &h->path);

    /* Co-processor running the paper's load-value profiling program. */
    CHECK(hwp_cp_init(&h->cp, take(hwp_cp_bytes(NULL)), hwp_cp_bytes(NULL), NULL,
                      &h->cost), "coproc", &h->cp);
    CHECK(hwp_cp_lvp_start(&h->cp, NULL), "coproc lvp", &h->cp);

    /* Stratified sampling, the paper's H[P_256]_2048 (zero desc), fed
     * <load pc, value> and <call pc, callee> tuples; the messages are
     * folded into a profile by the software accumulator. */
    sad.tuples = 4096;
    sd.select = HWP_STRAT_SEL(HWP_STRAT_KIND_VALUE) | HWP_STRAT_SEL(HWP_STRAT_KIND_CALL);
    sd.on_interrupt = hwp_strat_acc_handler;
    sd.ctx = &h->strat_acc;
    CHECK(hwp_strat_acc_init(&h->strat_acc, take(hwp_strat_acc_bytes(&sad)),
                             hwp_strat_acc_bytes(&sad), &sad, NULL), "stratified accumulator", &h->strat_acc);
    CHECK(hwp_strat_init(&h->strat, take(hwp_strat_bytes(&sd)), hwp_strat_bytes(&sd),
                         &sd, &h->cost), "stratified", &h->strat);

    /* RAP over PCs, the zero desc: the paper's 8 KB with eps = 10% and
     * its 1K stage-0 buffer; hot code ranges with an error bound. */
    CHECK(hwp_rap_init(&h->rap, take(hwp_rap_bytes(&rd)), hwp_rap_bytes(&rd), &rd,
                       &h->cost), "rap", &h->rap);
}

static void section(const char *title) { printf("\n== %s\n", title); }

int main(int argc, char **argv) {
    static host h;
    hwp_cp_est est[16];
    hwp_rap_range hot[16];
    size_t i, n;
    hwp_writer out = hwp_writer_stdio(stdout);
    synth prog;
    uint64_t iters = 200000;
    const char *why = "";

    if (argc > 2 || (argc == 2 && hwx_arg_u64("iterations", argv[1], 0, 1000000000, &iters,
                                               &why) != HWP_OK)) {
        fprintf(stderr, "quickstart: %s\nusage: quickstart [iterations]\n",
                argc > 2 ? "one argument at most" : why);
        return 1;
    }
    if (!iters) iters = 200000;
    setup(&h);
    prog.sink = on_insn;
    prog.ctx = &h;
    prog.insns = prog.loads = prog.branches = 0;
    synth_run(&prog, iters, 7);
    hwp_pm_flush(&h.pm);
    hwp_path_flush(&h.path);
    hwp_cp_flush(&h.cp);
    hwp_strat_flush(&h.strat);
    hwp_rap_flush(&h.rap);

    printf("hwprof quickstart: %llu instructions, %llu loads, %llu branches\n",
           (unsigned long long)prog.insns, (unsigned long long)prog.loads,
           (unsigned long long)prog.branches);

    section("ProfileMe: costliest instructions (by estimated total cost)");
    hwp_pm_table_write_top(&h.pm_table, &out, 6);
    section("Path profiler: hot path table");
    hwp_hpt_write_text(&h.hpt, &out);
    section("Phase detector");
    hwp_phase_write_text(&h.phase, &out);
    section("RAP: hot code ranges (>= 10% of instructions, eps = 10%)");
    n = hwp_rap_hot(&h.rap, 0.10, hot, 16);
    for (i = 0; i < n && i < 16; i++)
        printf("  [%#llx, %#llx] %5.2f%% of instructions (at least %llu)\n",
               (unsigned long long)hot[i].lo, (unsigned long long)hot[i].hi,
               100.0 * (double)hot[i].excl / (double)prog.insns,
               (unsigned long long)hot[i].sum);
    section("Stratified sampling: value and call-target profile");
    hwp_strat_acc_write_text(&h.strat_acc, &out);
    section("Co-processor: load-value invariance");
    /* Queries return how many there are and write at most the cap. */
    n = hwp_cp_lvp_estimates(&h.cp, est, 16);
    for (i = 0; i < n && i < 16; i++)
        printf("  load %#llx value %llu invariance %.3f\n",
               (unsigned long long)est[i].pc, (unsigned long long)est[i].value,
               est[i].inv);
    section("Modelled hardware cost");
    hwp_cost_write_text(&h.cost, &out);
    return 0;
}
