/* SPDX-License-Identifier: MIT */
/* tests/base/test_cost_edges.c: cost.h at its edges: a NULL cost pays
 * nothing and reads the paper defaults, calls on a cost that was never
 * initialised are refused, out-of-range operations and models get the
 * documented fallbacks, and the reports of an idle cost. */
#define HWPROF_IMPL
#include "hwprof/hwprof.h"

#include "harness.h"

/* "A model given a NULL cost pays nothing": every inline entry is
 * NULL-safe and the figure read is the paper default. */
static void test_null_cost(void) {
    char buf[64];
    hwp_bufwriter b;
    hwp_writer w = hwp_writer_buf(&b, buf, sizeof buf);
    hwp_cost_charge(NULL, HWP_COST_PM_INTERRUPT, 3);
    hwp_cost_stall(NULL, HWP_COST_RAP_STALL, 9);
    hwp_cost_tick(NULL, 100);
    CHECK_EQ(hwp_cost_take(NULL), 0);
    CHECK_EQ(hwp_cost_clock(NULL), 0);
    CHECK(hwp_cost_overhead_pct(NULL) == 0.0);
    CHECK_EQ(hwp_cost_model_cycles(NULL, HWP_MODEL_RAP), 0);
    CHECK_EQ(hwp_cost_cycles(NULL, HWP_COST_STRAT_MESSAGE), 30); /* Sastry et al. */
    CHECK_EQ(hwp_cost_init(NULL, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_cost_set(NULL, HWP_COST_RAP_STALL, 1), HWP_EINVAL);
    CHECK_EQ(hwp_cost_merge(NULL, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_cost_reset(NULL), HWP_EINVAL);
    hwp_cost_write_text(NULL, &w);
    CHECK_EQ(b.len, 0);
    hwp_cost_write_json(NULL, &w);
    CHECK_STR(buf, "null");
}

/* A cost that was never initialised (no magic) is refused, not written. */
static void test_uninitialised_refused(void) {
    hwp_cost c, ok;
    memset(&c, 0, sizeof c);
    c.count[0] = 5;
    CHECK_EQ(hwp_cost_init(&ok, NULL), HWP_OK);
    CHECK_EQ(hwp_cost_set(&c, HWP_COST_RAP_STALL, 2), HWP_EINVAL);
    CHECK_EQ(c.cycles[HWP_COST_RAP_STALL], 0);
    CHECK_EQ(hwp_cost_merge(&c, &ok), HWP_EINVAL);
    CHECK_EQ(hwp_cost_merge(&ok, &c), HWP_EINVAL);
    CHECK_EQ(ok.count[0], 0);
    CHECK_EQ(hwp_cost_reset(&c), HWP_EINVAL);
    CHECK_EQ(c.count[0], 5);
    CHECK_EQ(hwp_cost_reset(&ok), HWP_OK);
}

/* hwp_cost_set: any figure of the table, 0 included; an operation past
 * the table is EINVAL with its reason, the figures untouched. */
static void test_set_range(void) {
    hwp_cost c;
    unsigned i;
    CHECK_EQ(hwp_cost_init(&c, NULL), HWP_OK);
    CHECK_EQ(hwp_cost_set(&c, HWP_COST_PM_SAMPLE, 0), HWP_OK);
    hwp_cost_charge(&c, HWP_COST_PM_SAMPLE, 7);
    CHECK_EQ(c.count[HWP_COST_PM_SAMPLE], 7);
    CHECK_EQ(hwp_cost_take(&c), 0); /* a true zero costs nothing */
    CHECK_EQ(hwp_cost_set(&c, HWP_COST_OP_COUNT, 5), HWP_EINVAL);
    CHECK_STR(hwp_why(&c), "cost: no such operation");
    CHECK_EQ(hwp_cost_set(&c, (hwp_cost_op)-1, 5), HWP_EINVAL);
    for (i = 0; i < HWP_COST_OP_COUNT; i++)
        if (i != HWP_COST_PM_SAMPLE)
            CHECK_EQ(c.cycles[i], hwp_cost_default((hwp_cost_op)i));
    CHECK_EQ(hwp_cost_set(&c, HWP_COST_PM_SAMPLE, 20), HWP_OK);
    CHECK_STR(hwp_why(&c), "");
}

/* Out-of-range operations and models: "?", 0, HWP_MODEL_COUNT, false. */
static void test_out_of_range_names(void) {
    hwp_cost_op bad = HWP_COST_OP_COUNT;
    CHECK_STR(hwp_cost_op_name(bad), "?");
    CHECK_STR(hwp_cost_op_source(bad), "?");
    CHECK_EQ(hwp_cost_op_model(bad), HWP_MODEL_COUNT);
    CHECK(!hwp_cost_op_charged(bad));
    CHECK_EQ(hwp_cost_default(bad), 0);
    CHECK_STR(hwp_model_name(HWP_MODEL_COUNT), "?");
    CHECK_STR(hwp_model_name(HWP_MODEL_CORE), "core");
    CHECK(hwp_cost_op_charged(HWP_COST_RAP_STALL));
    CHECK(!hwp_cost_op_charged(HWP_COST_RAP_EVENT)); /* a latency */
}

/* Latencies the model times itself with are counted per model but not
 * listed in the text report's charged operations; an idle cost reports
 * zero overhead and an empty operation list. */
static void test_reports(void) {
    char buf[1024];
    hwp_bufwriter b;
    hwp_writer w = hwp_writer_buf(&b, buf, sizeof buf);
    hwp_cost c;
    hwp_cost_init(&c, NULL);
    hwp_cost_write_json(&c, &w);
    CHECK_STR(buf, "{\"total_cycles\":0,\"host_clock\":0,\"overhead_pct\":0.0000,"
                   "\"models\":{\"core\":0,\"profileme\":0,\"stratified\":0,"
                   "\"rap\":0,\"pathprof\":0,\"coproc\":0},\"ops\":{}}");
    w = hwp_writer_buf(&b, buf, sizeof buf);
    hwp_cost_write_text(&c, &w);
    CHECK_STR(buf, "modelled overhead: 0 cycles over 0 host cycles (0.000%)\n");

    hwp_cost_charge(&c, HWP_COST_RAP_EVENT, 2);  /* latency: 4 each */
    hwp_cost_charge(&c, HWP_COST_RAP_STALL, 3);  /* charged: 1 each */
    hwp_cost_stall(&c, HWP_COST_PATH_STALL, 10); /* raw stall cycles */
    hwp_cost_tick(&c, 1000);
    w = hwp_writer_buf(&b, buf, sizeof buf);
    hwp_cost_write_text(&c, &w);
    CHECK_STR(buf, "modelled overhead: 21 cycles over 1000 host cycles (2.100%)\n"
                   "  rap: 11 cycles, 3 x RAP_STALL\n"
                   "  pathprof: 10 cycles, 1 x PATH_STALL\n");
    w = hwp_writer_buf(&b, buf, sizeof buf);
    hwp_cost_write_json(&c, &w);
    CHECK_HAS(buf, "\"ops\":{\"RAP_EVENT\":{\"count\":2,\"cycles\":8},"
                   "\"RAP_STALL\":{\"count\":3,\"cycles\":3},"
                   "\"PATH_STALL\":{\"count\":1,\"cycles\":10}}}");
    CHECK_HAS(buf, "\"overhead_pct\":2.1000");
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_null_cost);
    HWT_RUN(test_uninitialised_refused);
    HWT_RUN(test_set_range);
    HWT_RUN(test_out_of_range_names);
    HWT_RUN(test_reports);
    return hwt_end();
}
