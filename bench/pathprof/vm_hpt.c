/* bench/pathprof/vm_hpt.c: the VM layer's hot path table under each
 * policy (plain, aging, decay) against the perfect table of as many
 * entries, on the layer's own path stream (docs/vm.md, "Results").
 *
 *   vm_hpt [--entries=N] minivm PROGRAM.mvs [NAME=VALUE...]
 *       runs the minivm program through hwprof/vm.h (the path model, the
 *       layer's default bursts, seed 1, as minivm --layer) four times
 *   vm_hpt [--entries=N] reports NAME EXACT.json PLAIN.json AGING.json DECAY.json
 *       reads four layer reports of the same run (lua-hwprof's json=
 *       with layer=vm and ASLR off: bench/lua/vm_hpt.sh)
 *
 * The four runs see one path stream (the bursts depend on the seed
 * alone, and nothing the table holds changes what the program does):
 * one table of 2^20 entries and 256 ways, which must end with no
 * eviction, so that it holds the stream's exact path counts, and three
 * of the layer's 512 x 4 geometry (--entries=N: N x 4), one per policy. The streams are checked equal by their path count and
 * total. Prints one line: the name, paths, distinct paths, each policy's
 * overlap with the exact profile (hwp_path_overlap, Vaswani et al. sec.
 * 8.1), the perfect table's (the exact share of the hottest 512, or
 * N, paths), then each policy's overlap as a share of the perfect table's. */
/* the library's implementation: examples/minivm's prof.c */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwprof/vm.h"
#include "../../examples/minivm/mv.h" /* spelled out for check_handle_reads.py */

#define VMH_EXACT_ENTRIES (1u << 20)
#define VMH_EXACT_WAYS 256u
#define VMH_WAYS 4u /* the layer's table: hwp_hpt_desc's defaults */

static uint32_t vmh_entries = 512; /* --entries=N */

typedef struct vmh_run {
    hwp_vm vm;
    void *mem;
} vmh_run;

static void vmh_die(const char *what, const char *why) {
    fprintf(stderr, "vm_hpt: %s: %s\n", what, why);
    exit(1);
}

static char *vmh_slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    char *s = NULL;
    long len;
    if (!f) vmh_die(path, "cannot open");
    if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
        !(s = (char *)malloc((size_t)len + 1)) || fread(s, 1, (size_t)len, f) != (size_t)len)
        vmh_die(path, "cannot read");
    fclose(f);
    s[len] = '\0';
    *n = (size_t)len;
    return s;
}

static void vmh_init(vmh_run *r, const hwp_vm_desc *d) {
    size_t n = hwp_vm_bytes(d);
    r->mem = n ? malloc(n) : NULL;
    if (!r->mem || hwp_vm_init(&r->vm, r->mem, n, d, NULL) != HWP_OK)
        vmh_die("layer", r->mem ? hwp_why(&r->vm) : "no storage");
}

/* The table's rows, hottest first. */
static hwp_path_row *vmh_rows(hwp_vm *vm, size_t *n) {
    hwp_hpt *h = hwp_vm_hpt(vm);
    hwp_path_row *rows;
    if (!h) vmh_die("layer", "no hot path table (the path model is off)");
    *n = hwp_hpt_export(h, NULL, 0);
    rows = (hwp_path_row *)malloc((*n + 1) * sizeof *rows);
    if (!rows) vmh_die("rows", "out of memory");
    *n = hwp_hpt_export(h, rows, *n);
    return rows;
}

/* runs[0] the exact table, runs[1..3] plain, aging, decay. */
static void vmh_score(const char *name, vmh_run *runs) {
    hwp_hpt_stats st[4];
    hwp_path_row *x, *t, *top;
    size_t nx, nt, k, i, j;
    double ov[4];
    for (i = 0; i < 4; i++) hwp_hpt_get_stats(hwp_vm_hpt(&runs[i].vm), &st[i]);
    if (st[0].evicted || st[0].dropped)
        vmh_die(name, "the exact table evicted or saturated: not exact");
    for (i = 1; i < 4; i++)
        if (st[i].events != st[0].events || st[i].total != st[0].total)
            vmh_die(name, "the runs saw different path streams");
    x = vmh_rows(&runs[0].vm, &nx);
    k = nx < vmh_entries ? nx : vmh_entries;
    top = (hwp_path_row *)malloc((k + 1) * sizeof *top);
    if (!top) vmh_die("rows", "out of memory");
    memcpy(top, x, k * sizeof *top); /* hottest first */
    ov[0] = hwp_path_overlap(top, k, x, nx);
    for (i = 1; i < 4; i++) {
        t = vmh_rows(&runs[i].vm, &nt);
        /* a table counts a path since it last came in: never more than
         * the exact count, and never a path the stream did not have */
        for (j = 0; j < nt; j++)
            if (t[j].count > hwp_hpt_lookup(hwp_vm_hpt(&runs[0].vm), &t[j].pd))
                vmh_die(name, "a table holds more than the exact count: different streams");
        ov[i] = hwp_path_overlap(t, nt, x, nx);
        free(t);
    }
    printf("%s paths %llu distinct %zu plain %.2f aging %.2f decay %.2f perfect %.2f "
           "share plain %.3f aging %.3f decay %.3f\n",
           name, (unsigned long long)st[0].events, nx, ov[1], ov[2], ov[3], ov[0],
           ov[0] > 0 ? ov[1] / ov[0] : 0.0, ov[0] > 0 ? ov[2] / ov[0] : 0.0,
           ov[0] > 0 ? ov[3] / ov[0] : 0.0);
    free(top);
    free(x);
}

/* The four tables' descs: the exact one, then each policy. */
static void vmh_tables(hwp_hpt_desc *h) {
    uint32_t i;
    memset(h, 0, 4 * sizeof *h);
    h[0].entries = VMH_EXACT_ENTRIES;
    h[0].ways = VMH_EXACT_WAYS;
    for (i = 1; i < 4; i++) {
        h[i].entries = vmh_entries;
        h[i].ways = VMH_WAYS;
        h[i].policy = i == 1 ? HWP_HPT_PLAIN : i == 2 ? HWP_HPT_AGING : HWP_HPT_DECAY;
    }
}

static int vmh_minivm(int argc, char **argv) {
    hwp_hpt_desc h[4];
    vmh_run runs[4];
    mv_prog prog;
    char err[256];
    size_t n;
    char *src = vmh_slurp(argv[0], &n);
    const char *base = strrchr(argv[0], '/');
    FILE *devnull = fopen("/dev/null", "w");
    int i;
    if (!devnull) vmh_die("/dev/null", "cannot open");
    if (mv_assemble(&prog, argv[0], src, err, sizeof err)) vmh_die(argv[0], err);
    free(src);
    for (i = 1; i < argc; i++)
        if (mv_prog_define(&prog, argv[i], err, sizeof err)) vmh_die(argv[i], err);
    vmh_tables(h);
    for (i = 0; i < 4; i++) {
        hwp_vm_desc d;
        mv_vm vm;
        memset(&d, 0, sizeof d);
        d.models = HWP_VM_PATH;
        d.funcs = prog.nfuncs ? prog.nfuncs : 1u; /* as examples/minivm/layer.c */
        d.sites = prog.ncode;
        d.pc_step = 8;
        d.seed = 1;
        d.hpt = h[i];
        d.hpt_plain = 1; /* the table as h[i] says, plain included */
        vmh_init(&runs[i], &d);
        if (mv_vm_init(&vm, &prog, 1u << 22, devnull)) vmh_die(argv[0], "out of memory");
        if (mv_run_layer(&vm, &runs[i].vm)) vmh_die(argv[0], vm.err);
        hwp_vm_flush(&runs[i].vm);
        mv_vm_free(&vm);
    }
    vmh_score(base ? base + 1 : argv[0], runs);
    for (i = 0; i < 4; i++) free(runs[i].mem);
    mv_prog_free(&prog);
    fclose(devnull);
    return 0;
}

static int vmh_reports(char **argv) {
    vmh_run runs[4];
    hwp_hpt_desc h;
    int i;
    for (i = 0; i < 4; i++) {
        hwp_vm_desc d;
        hwp_json_err e = {0, NULL};
        size_t n;
        char *s = vmh_slurp(argv[1 + i], &n);
        if (hwp_vm_read_desc(&d, s, n, &e) != HWP_OK) vmh_die(argv[1 + i], e.why);
        vmh_init(&runs[i], &d);
        if (hwp_vm_read_json(&runs[i].vm, s, n, &e) != HWP_OK) vmh_die(argv[1 + i], e.why);
        free(s);
        if (!hwp_vm_hpt(&runs[i].vm) || hwp_hpt_get_desc(hwp_vm_hpt(&runs[i].vm), &h) != HWP_OK)
            vmh_die(argv[1 + i], "no hot path table (the path model is off)");
        if (i && (h.entries != vmh_entries || h.ways != VMH_WAYS || h.policy != (uint32_t)(i - 1)))
            vmh_die(argv[1 + i], "not an --entries x 4 table of its policy");
    }
    vmh_score(argv[0], runs);
    for (i = 0; i < 4; i++) free(runs[i].mem);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && !strncmp(argv[1], "--entries=", 10)) {
        vmh_entries = (uint32_t)strtoul(argv[1] + 10, NULL, 10);
        if (vmh_entries < VMH_WAYS || vmh_entries > VMH_EXACT_ENTRIES / 2 ||
            (vmh_entries & (vmh_entries - 1)))
            vmh_die("--entries", "a power of two in 4..2^19");
        argc--;
        argv++;
    }
    if (argc >= 3 && !strcmp(argv[1], "minivm")) return vmh_minivm(argc - 2, argv + 2);
    if (argc == 7 && !strcmp(argv[1], "reports")) return vmh_reports(argv + 2);
    fprintf(stderr, "usage: vm_hpt [--entries=N] minivm PROGRAM.mvs [NAME=VALUE...]\n"
                    "       vm_hpt [--entries=N] reports NAME EXACT.json PLAIN.json AGING.json "
                    "DECAY.json\n");
    return 1;
}
