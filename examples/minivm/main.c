/* minivm command line.
 *
 *   minivm [options] PROGRAM.mvs
 *     -D NAME=VALUE      set a .param of the program
 *     --prof=LIST        off (default), all, or a comma list of
 *                        profileme, stratified, rap, pathprof, coproc
 *     --layer            run the models through hwprof/vm.h's layer
 *                        (burst-sampled, decisions streamed as "vm"
 *                        lines); with --prof=off the layer is compiled
 *                        in and off. Not with --exact or --report.
 *     --exact            also keep exact profiles; print the decisions
 *                        they give and the agreement with hwprof's
 *     --report=text|json print every model's report (to stderr, after
 *                        the decisions)
 *     --report-file=PATH write the report to PATH instead, alone: JSON
 *                        (the default with this option) that
 *                        hwprof-report and json.load read as it is
 *     --seed=N           seed of every model (default 1)
 *     --pm-interval=N    ProfileMe's mean bytecodes per sample (1000;
 *                        2..2^31-1)
 *     --interval=N       phase interval in bytecodes (100000)
 *     --heap=CELLS       heap size in 16-byte cells (4194304; 16..2^30)
 *     --stats            bytecodes, virtual cycles, profiling overhead
 *     --min-agree=F      exit 4 if precision or recall of any decision
 *                        kind is below F, in [0, 1] (with --exact)
 * A number of 0 keeps the default. A value is taken whole or refused with
 * the option's accepted range (examples/common/hwx_arg.h).
 * With profiling on, the tiering decisions and RAP's hot regions are
 * printed (lines starting "hwprof"); --exact adds "exact" lines and
 * "agreement" lines.
 *
 * The program's output goes to stdout; everything minivm says about it
 * (decisions, agreement, reports, errors) goes to stderr, but for a
 * report given a file of its own. An unwritable --report-file stops
 * before the program runs.
 * Exit status: 0 ok, 1 usage or assembler error, 2 run-time error,
 * 3 out of memory, 4 agreement below --min-agree (tests use this).
 */
#include <stdlib.h>
#include <string.h>

#include "hwx_arg.h" /* the option value rules every host follows */
#include "layer.h"
#include "prof.h"

static char *mv__slurp(const char *path, char *err, size_t cap) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, c = 0;
    if (!f) {
        snprintf(err, cap, "%s: cannot open", path);
        return NULL;
    }
    for (;;) {
        size_t got;
        if (c - n < 4096) {
            char *q = realloc(buf, c = c ? c * 2 : 65536);
            if (!q) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = q;
        }
        got = fread(buf + n, 1, c - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    fclose(f);
    if (!buf) {
        snprintf(err, cap, "%s: out of memory", path);
        return NULL;
    }
    buf[n] = '\0';
    if (strlen(buf) != n) { /* the assembler would stop at it: say where */
        size_t i, line = 1, col = 1;
        for (i = 0; buf[i]; i++, col++)
            if (buf[i] == '\n') {
                line++;
                col = 0;
            }
        snprintf(err, cap, "%s:%zu:%zu: error: unexpected character 0x00", path,
                 line, col);
        free(buf);
        return NULL;
    }
    return buf;
}

static int mv__models(const char *list, unsigned *out) {
    static const struct { const char *name; unsigned bit; } names[] = {
        {"profileme", MVP_PROFILEME}, {"stratified", MVP_STRAT},
        {"rap", MVP_RAP}, {"pathprof", MVP_PATH}, {"coproc", MVP_COPROC},
        {"all", MVP_ALL}, {"off", 0}};
    *out = 0;
    while (*list) {
        size_t n = strcspn(list, ","), i;
        for (i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i].name) == n && !strncmp(names[i].name, list, n)) break;
        if (i == sizeof names / sizeof names[0]) return -1;
        *out |= names[i].bit;
        list += n + (list[n] == ',');
    }
    return 0;
}

static void mv__usage(void) {
    fprintf(stderr,
            "usage: minivm [-D NAME=VALUE] [--prof=off|all|LIST] [--layer] [--exact]\n"
            "              [--report=text|json] [--report-file=PATH] [--seed=N]\n"
            "              [--pm-interval=N] [--interval=N] [--heap=CELLS]\n"
            "              [--stats] [--min-agree=F] PROGRAM.mvs\n");
}

/* --opt=N in lo..hi, 0 keeping *v (the default); exits 1 with the
 * option's range on anything else. */
static int mv__num(const char *arg, const char *opt, uint64_t lo, uint64_t hi, uint64_t *v) {
    size_t n = strlen(opt);
    const char *why = "";
    uint64_t x;
    if (strncmp(arg, opt, n) || arg[n] != '=') return 0;
    if (hwx_arg_u64(opt, arg + n + 1, 0, hi, &x, &why) != HWP_OK ||
        (x && x < lo && hwx_arg_u64(opt, arg + n + 1, lo, hi, &x, &why) != HWP_OK)) {
        fprintf(stderr, "minivm: %s\n", why);
        exit(1);
    }
    if (x) *v = x;
    return 1;
}

int main(int argc, char **argv) {
    const char *path = NULL, *report = NULL, *report_path = NULL;
    FILE *report_f = stderr;
    const char *defs[64];
    int ndefs = 0, exact = 0, stats = 0, layer = 0, i, rc = 0;
    double min_agree = -1;
    uint64_t seed = 1, pm_interval = 1000, interval = 100000, heap = 1u << 22;
    unsigned models = 0;
    char err[512], *src;
    const char *why = "";
    mv_prog prog;
    mv_vm vm;
    mvp prof;
    mvp_opts po;

    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-D") && i + 1 < argc) {
            if (ndefs == 64) { fprintf(stderr, "minivm: too many -D\n"); return 1; }
            defs[ndefs++] = argv[++i];
        } else if (!strncmp(a, "--prof=", 7)) {
            if (mv__models(a + 7, &models)) {
                fprintf(stderr, "minivm: unknown model in '%s'\n", a);
                return 1;
            }
        } else if (!strcmp(a, "--exact")) {
            exact = 1;
        } else if (!strcmp(a, "--layer")) {
            layer = 1;
        } else if (!strcmp(a, "--stats")) {
            stats = 1;
        } else if (!strncmp(a, "--report=", 9)) {
            static const char *const kinds[] = {"text", "json", NULL};
            uint32_t k;
            if (hwx_arg_enum("--report", a + 9, kinds, &k, &why) != HWP_OK) {
                fprintf(stderr, "minivm: %s\n", why);
                return 1;
            }
            report = kinds[k];
        } else if (!strncmp(a, "--report-file=", 14) && a[14]) {
            report_path = a + 14;
        } else if (!strncmp(a, "--min-agree=", 12)) {
            if (hwx_arg_f64("--min-agree", a + 12, 0, 0, 1, 0, &min_agree, &why) != HWP_OK) {
                fprintf(stderr, "minivm: %s\n", why);
                return 1;
            }
        } else if (mv__num(a, "--seed", 1, UINT64_MAX, &seed) ||
                   mv__num(a, "--pm-interval", 2, 0x7FFFFFFF, &pm_interval) ||
                   mv__num(a, "--interval", 1, UINT64_MAX, &interval) ||
                   mv__num(a, "--heap", 16, 1u << 30, &heap)) {
            continue;
        } else if (a[0] == '-' || path) {
            mv__usage();
            return 1;
        } else {
            path = a;
        }
    }
    if (!path) {
        mv__usage();
        return 1;
    }
    src = mv__slurp(path, err, sizeof err);
    if (!src) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    rc = mv_assemble(&prog, path, src, err, sizeof err);
    free(src);
    if (rc) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    for (i = 0; i < ndefs; i++)
        if (mv_prog_define(&prog, defs[i], err, sizeof err)) {
            fprintf(stderr, "minivm: %s\n", err);
            mv_prog_free(&prog);
            return 1;
        }
    if (report_path) {
        if (!report) report = "json";
        if (!(report_f = fopen(report_path, "w"))) {
            fprintf(stderr, "minivm: --report-file: cannot write %s\n", report_path);
            mv_prog_free(&prog);
            return 1;
        }
    }
    if (layer && (exact || report)) {
        fprintf(stderr, "minivm: --layer takes neither --exact nor --report\n");
        mv_prog_free(&prog);
        return 1;
    }
    if (mv_vm_init(&vm, &prog, (uint32_t)heap, stdout)) {
        fprintf(stderr, "minivm: out of memory\n");
        mv_prog_free(&prog);
        return 3;
    }
    if (layer) { /* minivm's MVP_* bits are the layer's HWP_VM_* bits */
        mvl l;
        if (mvl_init(&l, models, &prog, seed, (uint32_t)pm_interval, stderr, err, sizeof err)) {
            fprintf(stderr, "minivm: %s\n", err);
            return 3;
        }
        rc = mv_run_layer(&vm, &l.vm);
        fflush(stdout);
        if (rc) fprintf(stderr, "minivm: %s\n", vm.err);
        else mvl_finish(&l);
        if (stats) fprintf(stderr, "stats: %llu bytecodes\n", (unsigned long long)vm.steps);
        mvl_free(&l);
        mv_vm_free(&vm);
        mv_prog_free(&prog);
        return rc ? 2 : 0;
    }
    if (exact && !models) models = MVP_ALL; /* --exact compares with hwprof */
    memset(&po, 0, sizeof po);
    po.models = models;
    po.seed = seed;
    po.exact = exact;
    po.pm_interval = (uint32_t)pm_interval;
    po.heap_cells = (uint32_t)heap;
    po.interval = interval;
    po.phase_threshold = 0.6; /* pathprof's default: 6/10 of an interval */
    if (models || exact) {
        if (mvp_init(&prof, &po, &prog, err, sizeof err)) {
            fprintf(stderr, "minivm: %s\n", err);
            return 3;
        }
    }
    rc = mv_run(&vm, models || exact ? &prof : NULL);
    fflush(stdout);
    if (rc) {
        fprintf(stderr, "minivm: %s\n", vm.err);
        rc = 2;
    } else if (models || exact) {
        mvt_policy pol;
        mvt_profile mp;
        mvt_decisions md;
        mvp_finish(&prof);
        mvt_policy_default(&pol);
        mvp_summary(&prof, &mp);
        mvt_decide(&mp, &pol, &md);
        mvt_print(stderr, "hwprof", &prog, &md);
        mvp_print_regions(&prof, stderr);
        if (exact) {
            mvt_profile xp;
            mvt_decisions xd;
            mvt_agreement ag;
            unsigned k;
            mvx_summary(prof.exact, &prog, &xp);
            mvt_decide(&xp, &pol, &xd);
            mvt_print(stderr, "exact ", &prog, &xd);
            mvt_agree(&md, &xd, &pol, &ag);
            mvt_print_agreement(stderr, &ag);
            for (k = 0; k < MVT_KINDS; k++)
                if ((ag.have & (1u << k)) &&
                    (ag.precision[k] < min_agree || ag.recall[k] < min_agree))
                    rc = 4;
            mvt_decisions_free(&xd);
            mvt_profile_free(&xp);
        }
        if (report) mvp_report(&prof, report_f, !strcmp(report, "json"));
        if (stats)
            fprintf(stderr, "stats: %llu bytecodes, %llu virtual cycles, "
                            "modelled profiling overhead %.3f%%\n",
                    (unsigned long long)vm.steps, (unsigned long long)vm.cycles,
                    hwp_cost_overhead_pct(&prof.cost));
        mvt_decisions_free(&md);
        mvt_profile_free(&mp);
    } else if (stats) { /* no profiler: no cycle model either */
        fprintf(stderr, "stats: %llu bytecodes\n", (unsigned long long)vm.steps);
    }
    if (models || exact) mvp_free(&prof);
    mv_vm_free(&vm);
    mv_prog_free(&prog);
    if (report_path && fclose(report_f)) {
        fprintf(stderr, "minivm: --report-file: write to %s failed\n", report_path);
        if (!rc) rc = 1;
    }
    return rc;
}
