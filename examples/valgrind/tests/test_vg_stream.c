/* examples/valgrind/tests/test_vg_stream.c: the tool's event stream on a
 * program whose records are known (probe.c), read back from record=FILE;
 * AT_RANDOM determinism on the same program.
 *
 * The expected records of probe_loop are generated here from N and the
 * array formula alone, not from anything the tool computes. */
#include "vgrun.h"

#include "harness.h"
#include "hwx.h"

#define N_ITERS 1000u

typedef struct probe_out {
    unsigned long long lo, hi, arr;
    char random[40];
} probe_out;

static int parse_probe(const char *path, probe_out *p) {
    char *s = vgr_slurp(path, NULL);
    int ok = s && sscanf(s, "range %llx %llx\narr %llx\nrandom %32s", &p->lo,
                         &p->hi, &p->arr, p->random) == 4;
    free(s);
    return ok;
}

static uint64_t mix(uint64_t x) { return hwp_mix64(x); }

static const char *probe_args[] = {NULL, "1000", NULL};

static int run_probe(const char *tag, const char *seed_opt, probe_out *p) {
    char rec[64], rep[64], json[64], out[64];
    static char o_rec[600], o_rep[600], o_json[600];
    const char *args[5];
    int st;
    snprintf(rec, sizeof rec, "probe-%s.trace", tag);
    snprintf(rep, sizeof rep, "probe-%s.txt", tag);
    snprintf(json, sizeof json, "probe-%s.json", tag);
    snprintf(out, sizeof out, "probe-%s.out", tag);
    snprintf(o_rec, sizeof o_rec, "--record=%s", vgr_tmp(rec));
    snprintf(o_rep, sizeof o_rep, "--report=%s", vgr_tmp(rep));
    snprintf(o_json, sizeof o_json, "--json=%s", vgr_tmp(json));
    args[0] = o_rec;
    args[1] = o_rep;
    args[2] = o_json;
    args[3] = seed_opt;
    args[4] = NULL;
    probe_args[0] = vgr_env("HWVG_PROBE");
    st = vgr_run(args, probe_args, NULL, vgr_tmp(out), NULL);
    return st == 0 && parse_probe(vgr_tmp(out), p);
}

/* One expected record of probe_loop, in program order. */
typedef struct want {
    uint32_t cls;
    uint32_t taken;
    uint64_t addr, value; /* loads only */
} want;

static size_t expected(want *w, uint64_t arr) {
    size_t k = 0;
    uint64_t i;
    w[k++] = (want){HWP_CLS_OTHER, 0, 0, 0};
    w[k++] = (want){HWP_CLS_OTHER, 0, 0, 0};
    for (i = 0; i < N_ITERS; i++) {
        uint64_t v = mix(i + 1);
        w[k++] = (want){HWP_CLS_LOAD, 0, arr + 8 * i, v};
        w[k++] = (want){HWP_CLS_STORE, 0, 0, 0};
        w[k++] = (want){HWP_CLS_OTHER, 0, 0, 0};
        w[k++] = (want){HWP_CLS_BR_COND, (v & 1) == 0, 0, 0};
        if (v & 1) w[k++] = (want){HWP_CLS_OTHER, 0, 0, 0};
        w[k++] = (want){HWP_CLS_OTHER, 0, 0, 0};
        w[k++] = (want){HWP_CLS_OTHER, 0, 0, 0};
        w[k++] = (want){HWP_CLS_BR_COND, i + 1 < N_ITERS, 0, 0};
    }
    w[k++] = (want){HWP_CLS_OTHER, 0, 0, 0};    /* lea      */
    w[k++] = (want){HWP_CLS_INDIRECT, 1, 0, 0}; /* jmp *r8  */
    w[k++] = (want){HWP_CLS_CALL, 1, 0, 0};
    w[k++] = (want){HWP_CLS_RET, 1, 0, 0};
    w[k++] = (want){HWP_CLS_JUMP, 1, 0, 0};
    w[k++] = (want){HWP_CLS_RET, 1, 0, 0};
    return k;
}

static probe_out g_fixed1;
static int g_fixed1_ok;

static void test_probe_records(void) {
    static want w[12 * N_ITERS + 16];
    size_t nw, len, k = 0, bad_chain = 0, mism = 0, first_mism = (size_t)-1;
    hwx_trace_reader r;
    hwp_insn in, prev;
    char *buf;
    int got, have_prev = 0, in_range = 0;
    uint64_t total = 0, store_addr = 0;
    g_fixed1_ok = run_probe("fixed1", NULL, &g_fixed1);
    if (!CHECK(g_fixed1_ok)) return;
    CHECK(g_fixed1.hi > g_fixed1.lo);
    nw = expected(w, g_fixed1.arr);
    buf = vgr_slurp(vgr_tmp("probe-fixed1.trace"), &len);
    if (!CHECK(buf != NULL)) return;
    if (!CHECK_EQ(hwx_trace_open(&r, buf, len), HWP_OK)) return;
    while ((got = hwx_trace_next(&r, &in)) == 1) {
        total++;
        /* Program order: each record's next_pc is the next record's pc. */
        if (have_prev && prev.next_pc != in.pc) bad_chain++;
        prev = in;
        have_prev = 1;
        in_range = in.pc >= g_fixed1.lo && in.pc < g_fixed1.hi;
        if (!in_range) continue;
        if (k < nw) {
            const want *x = &w[k];
            int ok = in.cls == x->cls &&
                     !!(in.events & HWP_EV_TAKEN) == x->taken;
            if (x->cls == HWP_CLS_LOAD)
                ok = ok && in.addr == x->addr && in.value == x->value;
            if (x->cls == HWP_CLS_STORE) {
                if (!store_addr) store_addr = in.addr;
                ok = ok && in.addr == store_addr && in.addr != 0;
            }
            /* A taken branch's addr is where it went; a conditional
             * branch's is its target either way, inside the routine. */
            if (hwp_cls_is_branch(x->cls) && x->taken)
                ok = ok && in.addr == in.next_pc;
            if (x->cls == HWP_CLS_BR_COND)
                ok = ok && in.addr >= g_fixed1.lo && in.addr < g_fixed1.hi;
            if (!ok && first_mism == (size_t)-1) first_mism = k;
            mism += !ok;
        }
        k++;
    }
    CHECK_EQ(got, 0);
    CHECK_EQ(k, nw);
    CHECK_EQ(mism, 0);
    if (mism) fprintf(stderr, "first mismatch at expected record %zu\n", first_mism);
    CHECK_EQ(bad_chain, 0);
    CHECK_EQ(r.records, total);
    CHECK(total > 100000); /* startup of a dynamically linked program */
    free(buf);
}

/* Compare two traces record by record: -1 if they differ in anything but
 * loaded values (or cannot be read), else how many loaded values differ.
 * The pid (glibc caches it; it is a loaded value) is the one input the
 * tool cannot pin. */
static long trace_value_diffs(const char *a, const char *b) {
    size_t la, lb;
    char *x = vgr_slurp(a, &la), *y = vgr_slurp(b, &lb);
    hwx_trace_reader ra, rb;
    hwp_insn ia, ib;
    long diffs = 0;
    int ga = -1, gb = -1;
    if (x && y && hwx_trace_open(&ra, x, la) == HWP_OK &&
        hwx_trace_open(&rb, y, lb) == HWP_OK) {
        for (;;) {
            ga = hwx_trace_next(&ra, &ia);
            gb = hwx_trace_next(&rb, &ib);
            if (ga != 1 || gb != 1) break;
            if (ia.pc != ib.pc || ia.next_pc != ib.next_pc || ia.addr != ib.addr ||
                ia.cls != ib.cls || ia.events != ib.events) {
                diffs = -1;
                break;
            }
            diffs += ia.value != ib.value;
        }
    }
    if (ga != 0 || gb != 0) diffs = -1;
    free(x);
    free(y);
    return diffs;
}

/* Same program, same options: the same AT_RANDOM bytes, byte-identical
 * reports, and traces equal but for a handful of pid-derived loaded
 * values; with --hwprof-deterministic=no the kernel's AT_RANDOM bytes,
 * different on every run. */
static void test_probe_determinism(void) {
    probe_out b, k1, k2;
    long diffs;
    if (!CHECK(g_fixed1_ok)) return;
    if (!CHECK(run_probe("fixed2", NULL, &b))) return;
    CHECK_STR(b.random, g_fixed1.random);
    CHECK(vgr_same_file(vgr_tmp("probe-fixed1.txt"), vgr_tmp("probe-fixed2.txt")));
    CHECK(vgr_same_file(vgr_tmp("probe-fixed1.json"), vgr_tmp("probe-fixed2.json")));
    diffs = trace_value_diffs(vgr_tmp("probe-fixed1.trace"), vgr_tmp("probe-fixed2.trace"));
    CHECK(diffs >= 0 && diffs <= 8);
    printf("loaded values that differ between two runs: %ld\n", diffs);
    if (!CHECK(run_probe("kernel1", "--hwprof-deterministic=no", &k1))) return;
    if (!CHECK(run_probe("kernel2", "--hwprof-deterministic=no", &k2))) return;
    CHECK(strcmp(k1.random, k2.random) != 0);
    CHECK(strcmp(k1.random, g_fixed1.random) != 0);
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_probe_records);
    HWT_RUN(test_probe_determinism);
    return hwt_end();
}
