/* examples/report/tests/make_reports.c DIR [PCBASE]: saved reports for
 * check_report.py, written by the models themselves; their PCs are
 * PCBASE + 4 k (default 0x401000).
 *
 * For the models whose merge is exact (ProfileMe's table: every count
 * adds; the stratified accumulator with room for every tuple), one
 * stream is cut in two: DIR/half_a.json and DIR/half_b.json hold the
 * halves, DIR/whole.json the whole stream, each a session-like object
 * {"models":{"pm_table":..., "strat_acc":...}} as the hosts nest them.
 * DIR/other.json has a table of another capacity (a merge it must
 * refuse, naming the field). */
#define HWPROF_IMPL
#define HWPROF_STDIO
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwprof/hwprof.h"

#define N 6000u

typedef struct inst {
    hwp_pm_table t;
    hwp_strat_acc a;
    void *tm, *am;
} inst;

static int mk(inst *x, uint32_t capacity) {
    hwp_pm_table_desc td;
    hwp_strat_acc_desc ad;
    memset(&td, 0, sizeof td);
    memset(&ad, 0, sizeof ad);
    td.capacity = capacity;
    td.interval = 1000;
    ad.tuples = 4096;
    ad.pcs = 1024;
    ad.min_samples = 5;
    x->tm = malloc(hwp_pm_table_bytes(&td));
    x->am = malloc(hwp_strat_acc_bytes(&ad));
    if (!x->tm || !x->am) return -1;
    if (hwp_pm_table_init(&x->t, x->tm, hwp_pm_table_bytes(&td), &td) != HWP_OK ||
        hwp_strat_acc_init(&x->a, x->am, hwp_strat_acc_bytes(&ad), &ad) != HWP_OK) {
        fprintf(stderr, "make_reports: %s / %s\n", hwp_why(&x->t), hwp_why(&x->a));
        return -1;
    }
    return 0;
}

static uint64_t pcbase = 0x401000u;

static void feed(inst *x, uint32_t i) {
    hwp_pm_record r;
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
}

static int save(const inst *x, const char *dir, const char *name) {
    char path[1024];
    FILE *f;
    hwp_writer w;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "w");
    if (!f) return -1;
    w = hwp_writer_stdio(f);
    fputs("{\"schema\":\"hwprof-session-1\",\"instructions\":3000,\"models\":{\"pm_table\":", f);
    hwp_pm_table_write_json(&x->t, &w);
    fputs(",\"strat_acc\":", f);
    hwp_strat_acc_write_json(&x->a, &w);
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
    free(a.tm), free(a.am), free(b.tm), free(b.am);
    free(whole.tm), free(whole.am), free(other.tm), free(other.am);
    return 0;
}
