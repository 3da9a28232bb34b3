/* examples/report/tests/make_reports.c DIR [PCBASE]: saved reports for
 * check_report.py, written by the models themselves; their PCs are
 * PCBASE + 4 k (default 0x401000).
 *
 * One stream is cut in two: DIR/half_a.json and DIR/half_b.json hold
 * the halves, DIR/whole.json the whole stream, each a session-like
 * object {"models":{"pm_table":..., "strat_acc":..., "hpt":...,
 * "coproc_simple":...}} as the hosts nest them. The merge is exact for
 * ProfileMe's table (every count adds), the stratified accumulator with
 * room for every tuple and the hot path table with room for every path
 * (HWX__PATHS paths over 128 sets of 4 ways). The co-processor's
 * buffered value sampler picks its loads at random (a countdown drawn in
 * [period/2, 3 period/2)), so two runs never sample as one does: its
 * merge adds the samples each run took, and the loads it saw add up to
 * the whole stream's.
 * DIR/other.json has a table of another capacity (a merge it must
 * refuse, naming the field). */
#define HWPROF_IMPL
#define HWPROF_STDIO
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwprof/hwprof.h"

#define N 6000u

#define HWX__PATHS 20u

typedef struct inst {
    hwp_pm_table t;
    hwp_strat_acc a;
    hwp_hpt h;
    hwp_cp_simple c;
    void *tm, *am, *hm, *cm;
} inst;

static int mk(inst *x, uint32_t capacity) {
    hwp_pm_table_desc td;
    hwp_strat_acc_desc ad;
    hwp_hpt_desc hd;
    hwp_cp_simple_desc cd;
    memset(&td, 0, sizeof td);
    memset(&ad, 0, sizeof ad);
    memset(&hd, 0, sizeof hd);
    memset(&cd, 0, sizeof cd);
    hd.entries = 512;
    hd.ways = 4;
    cd.period = 50;
    cd.buffer = 16;
    cd.entries = 1024;
    cd.seed = 1;
    td.capacity = capacity;
    td.interval = 1000;
    ad.tuples = 4096;
    ad.pcs = 1024;
    ad.min_samples = 5;
    x->tm = malloc(hwp_pm_table_bytes(&td));
    x->am = malloc(hwp_strat_acc_bytes(&ad));
    x->hm = malloc(hwp_hpt_bytes(&hd));
    x->cm = malloc(hwp_cp_simple_bytes(&cd));
    if (!x->tm || !x->am || !x->hm || !x->cm) return -1;
    if (hwp_pm_table_init(&x->t, x->tm, hwp_pm_table_bytes(&td), &td, NULL) != HWP_OK ||
        hwp_strat_acc_init(&x->a, x->am, hwp_strat_acc_bytes(&ad), &ad, NULL) != HWP_OK ||
        hwp_hpt_init(&x->h, x->hm, hwp_hpt_bytes(&hd), &hd, NULL) != HWP_OK ||
        hwp_cp_simple_init(&x->c, x->cm, hwp_cp_simple_bytes(&cd), &cd, NULL) != HWP_OK) {
        fprintf(stderr, "make_reports: %s / %s / %s / %s\n", hwp_why(&x->t), hwp_why(&x->a),
                hwp_why(&x->h), hwp_why(&x->c));
        return -1;
    }
    return 0;
}

static uint64_t pcbase = 0x401000u;

static void feed(inst *x, uint32_t i) {
    hwp_pm_record r;
    hwp_path_pd pd;
    uint32_t k;
    uint64_t pc = pcbase + 4u * ((i * 2654435761u) % 97u);
    memset(&r, 0, sizeof r);
    r.pc = pc;
    r.flags = HWP_PM_F_RETIRED;
    r.cls = HWP_CLS_LOAD;
    for (k = 0; k < HWP_PM_LAT_COUNT; k++) r.lat[k] = (i * (k + 3)) % 17u;
    if (i % 7 == 0) r.events = HWP_EV_DCMISS;
    hwp_pm_table_add(&x->t, &r, 1);
    /* a load whose value is 7 two times in three */
    hwp_strat_acc_add(&x->a, HWP_STRAT_KIND_VALUE, pc, i % 3 ? 7u : i, 1 + i % 4);
    /* path p (of HWX__PATHS): p + 1 branches from a start of its own */
    k = (i * 7u) % HWX__PATHS;
    pd.start = pcbase + 0x1000u + 64u * k;
    pd.shape = (2ull << (k % 8u)) | (k & ((1u << (k % 8u)) - 1u));
    hwp_hpt_add(&x->h, &pd, 1 + i % 3);
    hwp_cp_simple_load(&x->c, pc, i % 3 ? 7u : i);
}

static int save(inst *x, const char *dir, const char *name) {
    char path[1024];
    FILE *f;
    hwp_writer w;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "w");
    if (!f) return -1;
    w = hwp_writer_stdio(f);
    hwp_cp_simple_flush(&x->c); /* its buffer's samples into its table */
    fputs("{\"schema\":\"hwprof-session-1\",\"instructions\":3000,\"models\":{\"pm_table\":", f);
    hwp_pm_table_write_json(&x->t, &w);
    fputs(",\"strat_acc\":", f);
    hwp_strat_acc_write_json(&x->a, &w);
    fputs(",\"hpt\":", f);
    hwp_hpt_write_json(&x->h, &w);
    fputs(",\"coproc_simple\":", f);
    hwp_cp_simple_write_json(&x->c, &w);
    fputs("}}\n", f);
    return fclose(f) ? -1 : 0;
}

int main(int argc, char **argv) {
    inst a, b, whole, other;
    uint32_t i;
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: make_reports DIR [PCBASE]\n");
        return 2;
    }
    if (argc == 3) pcbase = strtoull(argv[2], NULL, 0);
    if (mk(&a, 256) || mk(&b, 256) || mk(&whole, 256) || mk(&other, 512)) return 1;
    for (i = 0; i < N; i++) {
        feed(i < N / 2 ? &a : &b, i);
        feed(&whole, i);
        feed(&other, i);
    }
    if (save(&a, argv[1], "half_a.json") || save(&b, argv[1], "half_b.json") ||
        save(&whole, argv[1], "whole.json") || save(&other, argv[1], "other.json")) {
        fprintf(stderr, "make_reports: cannot write in %s\n", argv[1]);
        return 1;
    }
    free(a.tm), free(a.am), free(a.hm), free(a.cm), free(b.tm), free(b.am), free(b.hm);
    free(b.cm), free(whole.tm), free(whole.am), free(whole.hm), free(whole.cm);
    free(other.tm), free(other.am), free(other.hm), free(other.cm);
    return 0;
}
