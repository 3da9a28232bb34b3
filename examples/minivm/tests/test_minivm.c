/* Unit tests for minivm (suite 'unit': fast, also under valgrind and
 * ASan/UBSan): the assembler's errors, the interpreter's semantics, the
 * event accounting that feeds hwprof, the exact profile's paths, and the
 * tiering policy's arithmetic. Whole programs and agreement with hwprof
 * run in run_programs.sh (suite 'host'). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "prof.h"

#ifndef MINIVM_SRC
#error "MINIVM_SRC (examples/minivm) must be defined by the build"
#endif

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf) buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Assemble and run src with `models` (MVP_* bits, 0 = no profiler) and
 * optionally exact profiles; returns the run's status (-2 when it did not
 * assemble) with what it printed, or the error, in out. Optional results:
 * the VM's counters, hwprof's and the exact summaries, the JSON report. */
typedef struct run_opts {
    unsigned models;
    int exact;
    uint64_t seed;
    uint32_t pm_interval;
    uint64_t interval; /* the profiler's interval; 0: 1000 */
    mv_vm *vm;
    mvt_profile *prof, *exact_prof;
    char *report;
    size_t report_cap;
    uint64_t *pm_digest; /* ProfileMe's delivered records, digested */
} run_opts;

/* A digest of every record ProfileMe delivers (pc, address, history,
 * event bits, class: the fields both of the interpreter's ProfileMe paths
 * fill; timestamps differ by design), taken on the way to minivm's own
 * deliver callback. `pm_histories` counts records with a non-zero history,
 * so a test can tell that the history register was fed at all. */
static hwp_pm_deliver_fn pm_inner;
static void *pm_inner_user;
static uint64_t pm_digest, pm_histories;

static void pm_digest_deliver(void *user, const hwp_pm_record *r, uint32_t n) {
    uint32_t i;
    for (i = 0; i < n; i++) {
        uint64_t f[5];
        size_t j;
        f[0] = r[i].pc;
        f[1] = r[i].addr;
        f[2] = r[i].history;
        f[3] = r[i].events;
        f[4] = r[i].cls;
        for (j = 0; j < 5; j++) pm_digest = (pm_digest ^ f[j]) * 0x100000001b3ull;
        pm_histories += r[i].history != 0;
    }
    (void)user; /* the same as pm_inner_user */
    pm_inner(pm_inner_user, r, n);
}

static int run_with(const char *src, char *out, size_t cap, const run_opts *r) {
    mv_prog p;
    mv_vm vm;
    mvp prof;
    mvp_opts o;
    char err[256];
    FILE *f = tmpfile();
    int rc, profiled = r->models || r->exact;
    size_t n;
    if (!f) return -3;
    if (mv_assemble(&p, "t.mvs", src, err, sizeof err)) {
        snprintf(out, cap, "%s", err);
        fclose(f);
        return -2;
    }
    memset(&o, 0, sizeof o);
    o.models = r->models;
    o.exact = r->exact;
    o.seed = r->seed;
    o.pm_interval = r->pm_interval;
    o.heap_cells = 1u << 16;
    o.interval = r->interval ? r->interval : 1000;
    o.phase_threshold = 0.6;
    if (mv_vm_init(&vm, &p, 1u << 16, f)) return -3;
    if (profiled && mvp_init(&prof, &o, &p, err, sizeof err)) return -3;
    if (profiled && r->pm_digest) {
        hwp_pm_desc d;
        hwp_pm_get_desc(&prof.pm, &d);
        pm_inner = d.deliver;
        pm_inner_user = d.user;
        hwp_pm_set_deliver(&prof.pm, pm_digest_deliver, d.user);
        pm_digest = 0xcbf29ce484222325ull;
    }
    rc = mv_run(&vm, profiled ? &prof : NULL);
    fflush(f);
    rewind(f);
    n = fread(out, 1, cap - 1, f);
    out[n] = '\0';
    if (rc) snprintf(out, cap, "%s", vm.err);
    if (profiled) {
        mvp_finish(&prof);
        if (r->pm_digest) *r->pm_digest = pm_digest;
        if (r->prof) mvp_summary(&prof, r->prof);
        if (r->exact_prof && prof.exact) mvx_summary(prof.exact, &p, r->exact_prof);
        if (r->report) {
            rewind(f);
            mvp_report(&prof, f, 1);
            fflush(f);
            rewind(f);
            n = fread(r->report, 1, r->report_cap - 1, f);
            r->report[n] = '\0';
        }
        mvp_free(&prof);
    }
    fclose(f);
    if (r->vm) *r->vm = vm;
    mv_vm_free(&vm);
    mv_prog_free(&p);
    return rc;
}

static run_opts opts(unsigned models, int exact, uint64_t seed,
                     uint32_t pm_interval) {
    run_opts r;
    memset(&r, 0, sizeof r);
    r.models = models;
    r.exact = exact;
    r.seed = seed;
    r.pm_interval = pm_interval;
    return r;
}

static int run(const char *src, char *out, size_t cap, unsigned models,
               int exact, mv_vm *vm_out, mvt_profile *prof_out,
               mvt_profile *exact_out) {
    run_opts r = opts(models, exact, 1, 100);
    r.vm = vm_out;
    r.prof = prof_out;
    r.exact_prof = exact_out;
    return run_with(src, out, cap, &r);
}

/* ---- the assembler ------------------------------------------------------ */

/* Every file in tests/broken/ says on its first line which error it must
 * produce; the assembler must produce exactly that (and free everything:
 * valgrind and ASan watch). */
static void test_broken_corpus(void) {
    DIR *d = opendir(MINIVM_SRC "/tests/broken");
    struct dirent *e;
    int files = 0;
    if (!CHECK(d != NULL)) return;
    while ((e = readdir(d)) != NULL) {
        char path[512], err[256], want[256], *src, *nl;
        mv_prog p;
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".mvs")) continue;
        snprintf(path, sizeof path, MINIVM_SRC "/tests/broken/%s", e->d_name);
        src = slurp(path);
        if (!CHECK(src != NULL)) continue;
        nl = strchr(src, '\n');
        snprintf(want, sizeof want, "%.*s", nl ? (int)(nl - src) - 10 : 0, src + 10);
        CHECK(!strncmp(src, "; expect: ", 10));
        CHECK(mv_assemble(&p, e->d_name, src, err, sizeof err) == -1);
        CHECK_HAS(err, want);
        free(src);
        files++;
    }
    closedir(d);
    CHECK(files >= 20);
}

static void test_programs_assemble(void) {
    static const char *const names[] = {"fib", "sieve", "nbody", "shapes",
                                        "hashtable", "phases"};
    unsigned i;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[512], err[256], *src;
        mv_prog p;
        snprintf(path, sizeof path, MINIVM_SRC "/programs/%s.mvs", names[i]);
        src = slurp(path);
        if (!CHECK(src != NULL)) continue;
        if (CHECK_EQ(mv_assemble(&p, path, src, err, sizeof err), 0)) {
            CHECK(p.main_fn >= 0);
            mv_prog_free(&p);
        } else {
            printf("    %s\n", err);
        }
        free(src);
    }
}

/* Deterministic mutations of a real program: the assembler either accepts
 * the result or rejects it with a located error; it never crashes, reads
 * out of bounds or leaks (the sanitizer and valgrind passes check that). */
static void test_assembler_fuzz(void) {
    char *src = slurp(MINIVM_SRC "/programs/shapes.mvs");
    size_t n, i;
    hwp_rng r;
    unsigned accepted = 0, rejected = 0, located = 0;
    if (!CHECK(src != NULL)) return;
    n = strlen(src);
    hwp_rng_seed(&r, 7);
    for (i = 0; i < 300; i++) {
        char *m = malloc(n + 2), err[256];
        size_t k, edits = 1 + hwp_rng_below(&r, 4);
        mv_prog p;
        memcpy(m, src, n + 1);
        for (k = 0; k < edits; k++) {
            size_t at = hwp_rng_below(&r, n);
            static const char alphabet[] = " \n:;.-0123456789xjzaclpushret\t,#";
            m[at] = alphabet[hwp_rng_below(&r, sizeof alphabet - 1)];
        }
        if (mv_assemble(&p, "fuzz", m, err, sizeof err) == 0) {
            accepted++;
            mv_prog_free(&p);
        } else {
            rejected++;
            located += !strncmp(err, "fuzz:", 5) && strstr(err, ": error: ") != NULL;
        }
        free(m);
    }
    free(src);
    CHECK(accepted + rejected == 300);
    CHECK(rejected > 100);
    CHECK_EQ(located, rejected);
}

static void test_define(void) {
    mv_prog p;
    char err[256];
    CHECK_EQ(mv_assemble(&p, "t", ".param N 5\n.func main 0 0\n gload N\n print\n push 0\n ret\n.end\n",
                         err, sizeof err), 0);
    CHECK_EQ(mv_prog_define(&p, "N=7", err, sizeof err), 0);
    CHECK(p.globals[0].init.tag == MV_INT && p.globals[0].init.as.i == 7);
    CHECK_EQ(mv_prog_define(&p, "N=2.5", err, sizeof err), 0);
    CHECK(p.globals[0].init.tag == MV_FLT && p.globals[0].init.as.f == 2.5);
    CHECK(mv_prog_define(&p, "M=1", err, sizeof err) == -1);
    CHECK_HAS(err, "no .param 'M'");
    CHECK(mv_prog_define(&p, "N=abc", err, sizeof err) == -1);
    mv_prog_free(&p);
}

/* ---- the interpreter ---------------------------------------------------- */

static void test_semantics(void) {
    char out[512];
    /* int/float mixing, integer edge cases, comparisons, logic */
    CHECK_EQ(run(".func main 0 0\n"
                 " push 7\n push 2\n div\n print\n"          /* 3 */
                 " push -7\n push 2\n mod\n print\n"         /* -1 (C) */
                 " push 7\n pushf 2\n div\n print\n"         /* 3.5 */
                 " push 1\n push 62\n shl\n push 2\n mul\n print\n" /* wraps */
                 " push 3\n push 5\n lt\n print\n"
                 " pushnil\n not\n print\n"
                 " pushf 2.0\n push 2\n eq\n print\n"
                 " pushf 9\n sqrt\n f2i\n print\n"
                 " push 1\n push 63\n shl\n push -1\n div\n print\n" /* no trap */
                 " push 0\n ret\n.end\n",
                 out, sizeof out, 0, 0, NULL, NULL, NULL), 0);
    CHECK_STR(out, "3\n-1\n3.500000000\n-9223372036854775808\n1\n1\n1\n3\n"
                   "-9223372036854775808\n");
}

static void test_objects_and_dispatch(void) {
    char out[512];
    /* two classes answer `get` differently; a function value through callc;
     * arrays and typeof (int 1, float 2, object 8 + class, array 7) */
    static const char src[] =
        ".class A 1\n.class B 1\n"
        ".method A get a_get\n.method B get b_get\n"
        ".func a_get 1 1\n lload 0\n getf 0\n ret\n.end\n"
        ".func b_get 1 1\n lload 0\n getf 0\n push 100\n add\n ret\n.end\n"
        ".func twice 1 1\n lload 0\n push 2\n mul\n ret\n.end\n"
        ".func main 0 2\n"
        " new A\n dup\n push 1\n setf 0\n lstore 0\n"
        " new B\n dup\n push 2\n setf 0\n lstore 1\n"
        " lload 0\n callm get 1\n print\n"
        " lload 1\n callm get 1\n print\n"
        " push 21\n pushfn twice\n callc 1\n print\n"
        " push 3\n newarr\n dup\n push 2\n push 9\n astore\n dup\n push 2\n aload\n print\n"
        " alen\n print\n"
        " lload 1\n typeof\n print\n push 3\n newarr\n typeof\n print\n"
        " pushf 1\n typeof\n print\n"
        " push 0\n ret\n.end\n";
    CHECK_EQ(run(src, out, sizeof out, 0, 0, NULL, NULL, NULL), 0);
    CHECK_STR(out, "1\n102\n42\n9\n3\n9\n7\n2\n");
}

static void test_runtime_errors(void) {
    char out[512];
    CHECK_EQ(run(".func main 0 0\n push 1\n push 0\n mod\n ret\n.end\n", out,
                 sizeof out, 0, 0, NULL, NULL, NULL), -1);
    CHECK_HAS(out, "division by zero");
    CHECK_EQ(run(".func main 0 0\n pushnil\n push 1\n lt\n ret\n.end\n", out,
                 sizeof out, 0, 0, NULL, NULL, NULL), -1);
    CHECK_HAS(out, "cannot compare nil and int");
    CHECK_EQ(run(".func main 0 0\n push 1\n callc 0\n ret\n.end\n", out,
                 sizeof out, 0, 0, NULL, NULL, NULL), -1);
    CHECK_HAS(out, "callc of int");
    CHECK_EQ(run(".func main 0 0\n pushf 1e300\n f2i\n ret\n.end\n", out,
                 sizeof out, MVP_ALL, 0, NULL, NULL, NULL), -1);
    CHECK_HAS(out, "out of range");
}

/* ---- the events that feed hwprof ---------------------------------------- */

/* A 10-trip countdown loop. Bytecodes: 2 before the loop, 7 per trip
 * taken through the body (lload jz lload push sub lstore jmp), then
 * lload jz push ret on the way out: 2 + 70 + 4 = 76. */
static const char loop_src[] =
    ".func main 0 1\n"
    "    push 10\n"
    "    lstore 0\n"
    "top:\n"
    "    lload 0\n"
    "    jz done\n"
    "    lload 0\n"
    "    push 1\n"
    "    sub\n"
    "    lstore 0\n"
    "    jmp top\n"
    "done:\n"
    "    push 0\n"
    "    ret\n"
    ".end\n";

/* A number from the JSON report: `key` in the section named `section`. */
static uint64_t report_u64(const char *report, const char *section,
                           const char *key) {
    const char *p = strstr(report, section);
    p = p ? strstr(p, key) : NULL;
    return p ? strtoull(p + strlen(key), NULL, 10) : UINT64_MAX;
}

static void test_event_accounting(void) {
    static char report[1 << 16];
    char out[64];
    mv_vm off, on;
    run_opts r = opts(MVP_ALL, 0, 1, 100);
    memset(&on, 0, sizeof on);
    CHECK_EQ(run(loop_src, out, sizeof out, 0, 0, &off, NULL, NULL), 0);
    CHECK_EQ(off.steps, 76);
    /* With profiling the count comes from the events' PCs instead. */
    CHECK_EQ(run(loop_src, out, sizeof out, MVP_ALL, 1, &on, NULL, NULL), 0);
    CHECK_EQ(on.steps, 76);
    /* ProfileMe alone: the sampling loop's countdown gives the count. */
    CHECK_EQ(run(loop_src, out, sizeof out, MVP_PROFILEME, 0, &on, NULL, NULL), 0);
    CHECK_EQ(on.steps, 76);
    CHECK_EQ(run(loop_src, out, sizeof out, MVP_ALL, 1, &on, NULL, NULL), 0);
    /* Cycles: push 1 + lstore 1, trips of lload 1 + jz 1 + lload 1 +
     * push 1 + sub 1 + lstore 1 + jmp 1 = 7, exit lload jz push 1 each and
     * ret 5; no model here charges anything on so short a run except
     * what the cost shim reports, which --stats shows separately. */
    CHECK(on.cycles >= 2 + 70 + 8);
    /* The models' totals, from the report: RAP's code tree counted every
     * bytecode once (one weighted event per basic block), and the cost
     * shim's clock, moved only at syncs, holds the VM's own 80 cycles and
     * none of the stalls. */
    r.report = report;
    r.report_cap = sizeof report;
    CHECK_EQ(run_with(loop_src, out, sizeof out, &r), 0);
    CHECK_EQ(report_u64(report, "\"rap_code\"", "\"n\":"), 76);
    CHECK_EQ(report_u64(report, "\"cost\"", "\"host_clock\":"), 80);
}

/* The exact profile's BL paths for the loop, by hand (Vaswani et al.,
 * Table 1): the first trip starts at main's entry; the back edge ends a
 * path (jz not taken = 0, jmp taken = 1: shape 0b101) and starts the next
 * at `top`; the last trip leaves through jz taken (forward, 1) and ends at
 * ret: shape 0b11. So (entry, 101) x1, (top, 101) x9, (top, 11) x1; the
 * path profiler's Hot Path Table must hold the same. */
static void test_paths_by_hand(void) {
    char out[64];
    mvt_profile mp, xp;
    size_t i, hits = 0;
    uint64_t entry = MV_PC(0), top = MV_PC(2);
    CHECK_EQ(run(loop_src, out, sizeof out, MVP_ALL, 1, NULL, &mp, &xp), 0);
    CHECK_EQ(xp.npaths, 3);
    CHECK_EQ(xp.path_total, 11);
    for (i = 0; i < xp.npaths; i++) {
        const mvt_path *p = &xp.paths[i];
        if (p->start == entry && p->id == 5) hits += CHECK_EQ(p->count, 1);
        if (p->start == top && p->id == 5) hits += CHECK_EQ(p->count, 9);
        if (p->start == top && p->id == 3) hits += CHECK_EQ(p->count, 1);
    }
    CHECK_EQ(hits, 3);
    if (mp.have & (1u << MVT_TRACE)) { /* built with pathprof */
        CHECK_EQ(mp.npaths, 3);
        CHECK_EQ(mp.path_total, 11);
        for (i = 0; i < mp.npaths; i++)
            CHECK_EQ(mp.paths[i].count,
                     mp.paths[i].start == top && mp.paths[i].id == 5 ? 9 : 1);
    }
    mvt_profile_free(&mp);
    mvt_profile_free(&xp);
}

/* ProfileMe alone runs the interpreter's sampling mode (countdown and
 * branch history in the loop, one record per selection); with --exact the
 * same model runs from mvp_event at every event. Same seed, same
 * selections: the per-PC sample tables must be identical, byte for byte,
 * and so must every record's PC, address, event bits and history (the
 * tables do not hold the history), and the bytecode count. */
static void report_of(const char *src, int exact, uint32_t interval,
                      char *report, size_t cap, uint64_t *digest,
                      uint64_t *steps) {
    char out[256];
    mv_vm vm;
    run_opts r = opts(MVP_PROFILEME, exact, 5, interval);
    r.report = report;
    r.report_cap = cap;
    r.pm_digest = digest;
    r.vm = &vm;
    report[0] = '\0';
    CHECK_EQ(run_with(src, out, sizeof out, &r), 0);
    *steps = vm.steps;
}

static void test_sampling_mode_matches_events(void) {
    static char a[1 << 17], b[1 << 17];
    /* S = 37, and S = 3, where most runs hold several selections */
    static const uint32_t intervals[] = {37, 3};
    char *src = slurp(MINIVM_SRC "/programs/hashtable.mvs");
    size_t i;
    if (!CHECK(src != NULL)) return;
    for (i = 0; i < sizeof intervals / sizeof intervals[0]; i++) {
        const char *ta, *tb;
        uint64_t da, db, sa, sb, ha;
        pm_histories = 0;
        report_of(src, 0, intervals[i], a, sizeof a, &da, &sa);
        ha = pm_histories;
        report_of(src, 1, intervals[i], b, sizeof b, &db, &sb);
        ta = strstr(a, "\"profileme_table\"");
        tb = strstr(b, "\"profileme_table\"");
        if (!CHECK(ta != NULL && tb != NULL)) break;
        CHECK_HAS(ta, "\"samples\"");
        CHECK(strcmp(ta, tb) == 0);
        CHECK_EQ(da, db);
        CHECK(ha > 0); /* histories were recorded, not all zero */
        CHECK_EQ(sa, sb);
    }
    free(src);
}

/* The largest interval main.c accepts: countdowns reach 2^32 - 3, past
 * int32. A review found the countdown wrapping negative (with seed 386 on
 * this program: every later event counted again, then a read outside the
 * run); ProfileMe must fetch each bytecode exactly once. */
static void test_large_interval(void) {
    static const uint64_t seeds[] = {386, 1, 2};
    static char rep[1 << 17];
    char out[256];
    mv_vm vm;
    size_t i;
    char *src = slurp(MINIVM_SRC "/programs/hashtable.mvs");
    if (!CHECK(src != NULL)) return;
    for (i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        run_opts r = opts(MVP_PROFILEME, 0, seeds[i], 0x7FFFFFFFu);
        const char *f;
        r.interval = 100000; /* main.c's default, as in the review's run */
        r.report = rep;
        r.report_cap = sizeof rep;
        r.vm = &vm;
        if (!CHECK_EQ(run_with(src, out, sizeof out, &r), 0)) break;
        /* The sampler's stats.events: the fetches it counted. */
        f = strstr(rep, "\"model\":\"profileme\"");
        if (f) f = strstr(f, "\"events\":");
        if (!CHECK(f != NULL)) break;
        CHECK_EQ(strtoull(f + 9, NULL, 10), vm.steps);
    }
    free(src);
}

/* ---- exact-profile map and the policy ----------------------------------- */

static void test_map(void) {
    mvx_map m;
    uint64_t ref[64] = {0}, i;
    hwp_rng r;
    memset(&m, 0, sizeof m);
    hwp_rng_seed(&r, 3);
    for (i = 0; i < 20000; i++) { /* grows through several rehashes */
        uint64_t k = hwp_rng_below(&r, 64);
        mvx_map_add(&m, k * 0x1000, k ^ 5, 1);
        ref[k]++;
    }
    for (i = 0; i < 64; i++) CHECK_EQ(mvx_map_get(&m, i * 0x1000, i ^ 5), ref[i]);
    CHECK_EQ(mvx_map_get(&m, 0x1000, 0), 0);
    mvx_map_free(&m);
}

static void test_policy(void) {
    mvt_policy pol;
    mvt_profile a, b;
    mvt_decisions da, db;
    mvt_agreement ag;
    mvt_load la[3] = {{MV_PC(1), 5000, 7, 4900},   /* hot, 98%: yes */
                      {MV_PC(2), 5000, 7, 4000},   /* hot, 80%: no  */
                      {MV_PC(3), 500, 7, 500}};    /* too cold: no  */
    mvt_load lb[3] = {{MV_PC(1), 5000, 7, 4950},
                      {MV_PC(2), 5000, 7, 4600},   /* 92%: yes here */
                      {MV_PC(3), 500, 7, 500}};
    mvt_path pa[2] = {{MV_PC(0), 5, 90}, {MV_PC(4), 3, 10}};
    uint64_t pha[3] = {5, 6, 20}, phb[2] = {6, 40};
    mvt_policy_default(&pol);
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.loads = la; a.nloads = 3; a.load_total = 10500;
    b.loads = lb; b.nloads = 3; b.load_total = 10500;
    a.paths = b.paths = pa; a.npaths = b.npaths = 2; a.path_total = b.path_total = 100;
    a.phases = pha; a.nphases = 3;
    b.phases = phb; b.nphases = 2;
    a.have = b.have = (1u << MVT_KINDS) - 1u;
    mvt_decide(&a, &pol, &da);
    mvt_decide(&b, &pol, &db);
    CHECK_EQ(da.n[MVT_LOAD], 1);
    CHECK_EQ(db.n[MVT_LOAD], 2);
    CHECK_EQ(da.n[MVT_TRACE], 2); /* 90% and 10% are both >= 5% */
    CHECK_EQ(da.n[MVT_PHASE], 2); /* 5 and 6 are one change */
    CHECK_EQ(db.n[MVT_PHASE], 2);
    CHECK_EQ(da.n[MVT_INLINE], 0);
    mvt_agree(&da, &db, &pol, &ag); /* da judged against db */
    CHECK_NEAR(ag.precision[MVT_LOAD], 1.0, 1e-12);
    CHECK_NEAR(ag.recall[MVT_LOAD], 0.5, 1e-12);
    /* phases: 5 matches 6 within one interval, 20 matches nothing, 40 is
     * missed */
    CHECK_NEAR(ag.precision[MVT_PHASE], 0.5, 1e-12);
    CHECK_NEAR(ag.recall[MVT_PHASE], 0.5, 1e-12);
    CHECK_NEAR(ag.precision[MVT_INLINE], 1.0, 1e-12); /* vacuous */
    CHECK_EQ(ag.tp[MVT_TRACE], 2);
    mvt_decisions_free(&da);
    mvt_decisions_free(&db);
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_broken_corpus);
    HWT_RUN(test_programs_assemble);
    HWT_RUN(test_assembler_fuzz);
    HWT_RUN(test_define);
    HWT_RUN(test_semantics);
    HWT_RUN(test_objects_and_dispatch);
    HWT_RUN(test_runtime_errors);
    HWT_RUN(test_event_accounting);
    HWT_RUN(test_paths_by_hand);
    HWT_RUN(test_sampling_mode_matches_events);
    HWT_RUN(test_large_interval);
    HWT_RUN(test_map);
    HWT_RUN(test_policy);
    return hwt_end();
}
