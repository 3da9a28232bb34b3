/* Unit tests for hwprof/cost.h, the cycle-cost shim. */
#define HWPROF_IMPL
#include "hwprof/cost.h"

#include "harness.h"

/* The figures the papers give, written here from the papers (not read
 * back from cost.h): Sastry et al. sec. 5.5, Mysore et al. sec. 3.3, Vaswani et al. sec. 8.2. */
static void test_paper_defaults(void) {
    hwp_cost c;
    CHECK_EQ(hwp_cost_init(&c, NULL), HWP_OK);
    CHECK_EQ(hwp_cost_cycles(&c, HWP_COST_STRAT_INTERRUPT), 214);
    CHECK_EQ(hwp_cost_cycles(&c, HWP_COST_STRAT_MESSAGE), 30);
    CHECK_EQ(hwp_cost_cycles(&c, HWP_COST_RAP_EVENT), 4);
    CHECK_EQ(hwp_cost_cycles(&c, HWP_COST_PATH_PUSH), 1);
    CHECK_EQ(hwp_cost_cycles(&c, HWP_COST_PATH_POP), 1);
    CHECK_EQ(hwp_cost_cycles(&c, HWP_COST_PATH_BR_BACKWARD), 5);
    CHECK_EQ(hwp_cost_cycles(&c, HWP_COST_PATH_BR_INDIRECT), 5);
    CHECK_EQ(hwp_cost_cycles(&c, HWP_COST_PATH_BR_CALL), 2);
    CHECK(hwp_cost_cycles(&c, HWP_COST_COPROC_SAMPLE) >= 10 &&
          hwp_cost_cycles(&c, HWP_COST_COPROC_SAMPLE) <= 30);
    /* A NULL cost still answers with the defaults: models time their
     * hardware with them even when the host charges nothing. */
    CHECK_EQ(hwp_cost_cycles(NULL, HWP_COST_STRAT_INTERRUPT), 214);
}

static void test_desc_and_set(void) {
    hwp_cost_desc d;
    hwp_cost c;
    memset(&d, 0, sizeof d);
    d.cycles[HWP_COST_STRAT_MESSAGE] = 45;
    CHECK_EQ(hwp_cost_init(&c, &d), HWP_OK);
    CHECK_EQ(hwp_cost_cycles(&c, HWP_COST_STRAT_MESSAGE), 45);
    CHECK_EQ(hwp_cost_cycles(&c, HWP_COST_STRAT_INTERRUPT), 214);
    CHECK_EQ(hwp_cost_set(&c, HWP_COST_STRAT_INTERRUPT, 0), HWP_OK);
    CHECK_EQ(hwp_cost_cycles(&c, HWP_COST_STRAT_INTERRUPT), 0);
    CHECK_EQ(hwp_cost_set(&c, (hwp_cost_op)1000, 1), HWP_EINVAL);
    CHECK(strlen(hwp_why(&c)) > 0);
    CHECK_EQ(hwp_cost_init(NULL, NULL), HWP_EINVAL);
}

static void test_charge_take_overhead(void) {
    hwp_cost c;
    hwp_cost_init(&c, NULL);
    hwp_cost_charge(&c, HWP_COST_STRAT_INTERRUPT, 2);
    hwp_cost_charge(&c, HWP_COST_STRAT_MESSAGE, 200);
    CHECK_EQ(c.count[HWP_COST_STRAT_MESSAGE], 200);
    CHECK_EQ(c.total, 2 * 214 + 200 * 30);
    CHECK_EQ(hwp_cost_take(&c), 2 * 214 + 200 * 30);
    CHECK_EQ(hwp_cost_take(&c), 0);
    hwp_cost_stall(&c, HWP_COST_PATH_STALL, 17);
    CHECK_EQ(hwp_cost_take(&c), 17);
    CHECK_EQ(c.count[HWP_COST_PATH_STALL], 1);
    CHECK_NEAR(hwp_cost_overhead_pct(&c), 0.0, 0.0); /* no clock yet */
    hwp_cost_tick(&c, 1000000);
    CHECK_NEAR(hwp_cost_overhead_pct(&c), 100.0 * (428 + 6000 + 17) / 1e6, 1e-12);
    CHECK_EQ(hwp_cost_model_cycles(&c, HWP_MODEL_STRAT), 428 + 6000);
    CHECK_EQ(hwp_cost_model_cycles(&c, HWP_MODEL_PATH), 17);
    CHECK_EQ(hwp_cost_model_cycles(&c, HWP_MODEL_RAP), 0);
    /* NULL-safe: a model with no cost pays nothing, and nothing breaks */
    hwp_cost_charge(NULL, HWP_COST_RAP_EVENT, 5);
    hwp_cost_tick(NULL, 5);
    CHECK_EQ(hwp_cost_take(NULL), 0);
    CHECK_EQ(hwp_cost_reset(&c), HWP_OK);
    CHECK_EQ(c.total, 0);
    CHECK_EQ(hwp_cost_cycles(&c, HWP_COST_STRAT_INTERRUPT), 214);
}

static void test_merge(void) {
    hwp_cost a, b, bad;
    hwp_cost_init(&a, NULL);
    hwp_cost_init(&b, NULL);
    hwp_cost_charge(&a, HWP_COST_RAP_EVENT, 10);
    hwp_cost_charge(&b, HWP_COST_RAP_EVENT, 5);
    hwp_cost_charge(&b, HWP_COST_RAP_SPLIT, 1);
    hwp_cost_tick(&a, 100);
    hwp_cost_tick(&b, 50);
    CHECK_EQ(hwp_cost_merge(&a, &b), HWP_OK);
    CHECK_EQ(a.count[HWP_COST_RAP_EVENT], 15);
    CHECK_EQ(a.total, 15 * 4 + 5);
    CHECK_EQ(a.clock, 150);
    memset(&bad, 0, sizeof bad);
    CHECK_EQ(hwp_cost_merge(&a, &bad), HWP_EINVAL); /* uninitialised */
}

static void test_op_metadata(void) {
    unsigned i, j;
    for (i = 0; i < HWP_COST_OP_COUNT; i++) {
        CHECK(strlen(hwp_cost_op_name((hwp_cost_op)i)) > 0);
        CHECK(strlen(hwp_cost_op_source((hwp_cost_op)i)) > 0);
        CHECK(hwp_cost_op_model((hwp_cost_op)i) < HWP_MODEL_COUNT);
        for (j = 0; j < i; j++)
            CHECK(strcmp(hwp_cost_op_name((hwp_cost_op)i),
                         hwp_cost_op_name((hwp_cost_op)j)) != 0);
    }
    /* every profiler owns at least one charged operation; the core owns
     * none: its cycles are the host's clock (hwp_cost_tick), and charging
     * them as overhead would count the machine as its own overhead */
    for (j = 0; j < HWP_MODEL_COUNT; j++) {
        int owned = 0;
        for (i = 0; i < HWP_COST_OP_COUNT; i++)
            owned += hwp_cost_op_model((hwp_cost_op)i) == (hwp_model)j &&
                     hwp_cost_op_charged((hwp_cost_op)i);
        if (j == HWP_MODEL_CORE) CHECK_EQ(owned, 0);
        else CHECK(owned > 0);
    }
    CHECK(strcmp(hwp_model_name(HWP_MODEL_RAP), "rap") == 0);
}

static void test_reports(void) {
    char buf[4096];
    hwp_bufwriter b;
    hwp_writer w;
    hwp_cost c;
    int depth = 0, min_depth = 0;
    const char *p;
    hwp_cost_init(&c, NULL);
    hwp_cost_charge(&c, HWP_COST_STRAT_INTERRUPT, 3);
    hwp_cost_tick(&c, 64200);
    w = hwp_writer_buf(&b, buf, sizeof buf);
    hwp_cost_write_json(&c, &w);
    for (p = buf; *p; p++) {
        depth += *p == '{';
        depth -= *p == '}';
        if (depth < min_depth) min_depth = depth;
    }
    CHECK_EQ(depth, 0);
    CHECK_EQ(min_depth, 0);
    CHECK_HAS(buf, "\"total_cycles\":642");
    CHECK_HAS(buf, "\"overhead_pct\":1.0000");
    CHECK_HAS(buf, "\"STRAT_INTERRUPT\":{\"count\":3,\"cycles\":642}");
    w = hwp_writer_buf(&b, buf, sizeof buf);
    hwp_cost_write_text(&c, &w);
    CHECK_HAS(buf, "stratified: 642 cycles, 3 x STRAT_INTERRUPT");
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_paper_defaults);
    HWT_RUN(test_desc_and_set);
    HWT_RUN(test_charge_take_overhead);
    HWT_RUN(test_merge);
    HWT_RUN(test_op_metadata);
    HWT_RUN(test_reports);
    return hwt_end();
}
