/* bench/core/cg_core.c: core.h configured like Valgrind's cachegrind,
 * fed a recorded trace (docs/trace-format.md), with cachegrind's event
 * names per PC. bench/core/cg_compare.sh compares the output with
 * cachegrind's and callgrind's on the same program.
 *
 *   cg_core TRACE [--I1=size,assoc,line] [--D1=...] [--LL=...]
 *
 * Cachegrind's model as its manual documents it: I1, D1 and LL caches,
 * LRU, write-allocate, a straddling reference counted once (missed if
 * either line missed), the LL looked up by L1 misses only; no TLB;
 * conditional branches through 16384 2-bit counters indexed by 7 bits of
 * global history above 7 bits of the pc (core.h's gselect), indirect
 * jumps and indirect calls through 512 last-target entries indexed by
 * the pc's low 9 bits; returns are not counted (cachegrind assumes a
 * perfect return predictor). VEX turns a rep-prefixed string instruction
 * into a loop with a conditional exit that cachegrind counts as a
 * conditional branch on every execution, taken while the loop goes on;
 * the trace records every execution as a plain instruction, so a record
 * whose pc repeats (next_pc == pc, or pc == the previous record's pc)
 * also gives core.h that branch.
 *
 * Output: "totals: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw Bc Bcm Bi Bim"
 * then one "0xPC" line with the same 13 counts per instruction address
 * that has any event beyond Ir. */
#define _POSIX_C_SOURCE 200809L
#define HWPROF_IMPL
#include "hwprof/hwprof.h"
#include "hwx.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { IR, I1MR, ILMR, DR, D1MR, DLMR, DW, D1MW, DLMW, BC, BCM, BI, BIM, NEV };

typedef struct pcrow {
    uint64_t pc;
    uint64_t ev[NEV];
} pcrow;

static pcrow *tab;
static size_t tab_cap = (size_t)1 << 21, tab_n;

static pcrow *row(uint64_t pc) {
    size_t i = (size_t)(hwp_mix64(pc) & (tab_cap - 1));
    while (tab[i].pc != pc && tab[i].pc != ~(uint64_t)0) i = (i + 1) & (tab_cap - 1);
    if (tab[i].pc == ~(uint64_t)0) {
        if (++tab_n > tab_cap / 2) {
            fprintf(stderr, "cg_core: too many pcs\n");
            exit(1);
        }
        tab[i].pc = pc;
    }
    return &tab[i];
}

static int parse_cache(const char *arg, const char *name, hwp_core_cache_desc *k) {
    unsigned long size, assoc, line;
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0) return 0;
    if (sscanf(arg + n, "%lu,%lu,%lu", &size, &assoc, &line) != 3 || !assoc || !line) {
        fprintf(stderr, "cg_core: bad %s\n", arg);
        exit(2);
    }
    k->ways = (uint32_t)assoc;
    k->line = (uint32_t)line;
    k->sets = (uint32_t)(size / assoc / line);
    return 1;
}

int main(int argc, char **argv) {
    hwp_core_desc d;
    hwp_core c;
    hwp_core_stats st;
    hwx_trace_reader r;
    hwp_insn in;
    hwp_core_out o;
    struct stat sb;
    void *mem, *map;
    size_t n, i;
    int fd, a, rc;
    uint64_t tot[NEV] = {0}, prev_pc = ~(uint64_t)0;
    if (argc < 2) {
        fprintf(stderr, "usage: cg_core TRACE [--I1=s,a,l] [--D1=s,a,l] [--LL=s,a,l]\n");
        return 2;
    }
    memset(&d, 0, sizeof d);
    d.mode = HWP_CORE_CACHES;
    d.flags = HWP_CORE_NO_RAS | HWP_CORE_NO_TLB;
    /* cachegrind's fallback configuration (its manual: an Athlon's) is
     * not what it uses on this machine; pass the caches it reports. */
    d.l1i.sets = 512; d.l1i.ways = 2; d.l1i.line = 64;
    d.l1d.sets = 512; d.l1d.ways = 2; d.l1d.line = 64;
    d.l2.sets = 1024; d.l2.ways = 8; d.l2.line = 64;
    for (a = 2; a < argc; a++)
        if (!parse_cache(argv[a], "--I1=", &d.l1i) && !parse_cache(argv[a], "--D1=", &d.l1d) &&
            !parse_cache(argv[a], "--LL=", &d.l2)) {
            fprintf(stderr, "cg_core: unknown option %s\n", argv[a]);
            return 2;
        }
    d.bp = HWP_CORE_GSELECT;
    d.bp_global = 16384;
    d.bp_hist = 7;
    d.btb = 512;
    n = hwp_core_bytes(&d);
    mem = malloc(n);
    if (!mem || hwp_core_init(&c, mem, n, &d, NULL) != HWP_OK) {
        fprintf(stderr, "cg_core: %s\n", mem ? hwp_why(&c) : "out of memory");
        return 1;
    }
    fd = open(argv[1], O_RDONLY);
    if (fd < 0 || fstat(fd, &sb) != 0) {
        perror(argv[1]);
        return 1;
    }
    map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED || hwx_trace_open(&r, map, (size_t)sb.st_size) != HWP_OK) {
        fprintf(stderr, "cg_core: cannot read %s\n", argv[1]);
        return 1;
    }
    tab = (pcrow *)malloc(tab_cap * sizeof *tab);
    if (!tab) return 1;
    for (i = 0; i < tab_cap; i++) tab[i].pc = ~(uint64_t)0;
    while ((rc = hwx_trace_next(&r, &in)) == 1) {
        pcrow *p;
        uint64_t e[NEV] = {0};
        unsigned k;
        if (!hwp_cls_is_branch(in.cls) && (in.next_pc == in.pc || in.pc == prev_pc)) {
            /* A rep string execution: its loop exit first, as a branch at
             * the same pc (the second fetch of the line changes nothing),
             * then the instruction with its data access. */
            hwp_insn br = in;
            br.cls = HWP_CLS_BR_COND;
            br.events = in.next_pc == in.pc ? HWP_EV_TAKEN : 0;
            hwp_core_insn(&c, &br, &o);
            e[BC] = 1;
            e[BCM] = (o.events & HWP_EV_MISPRED) != 0;
        }
        prev_pc = in.pc;
        hwp_core_insn(&c, &in, &o);
        e[IR] = 1;
        e[I1MR] = o.ilevel > 1;
        e[ILMR] = o.ilevel > 2;
        if (in.cls == HWP_CLS_LOAD) {
            e[DR] = 1;
            e[D1MR] = o.dlevel > 1;
            e[DLMR] = o.dlevel > 2;
        } else if (in.cls == HWP_CLS_STORE) {
            e[DW] = 1;
            e[D1MW] = o.dlevel > 1;
            e[DLMW] = o.dlevel > 2;
        } else if (in.cls == HWP_CLS_BR_COND) {
            e[BC] = 1;
            e[BCM] = (o.events & HWP_EV_MISPRED) != 0;
        } else if (in.cls == HWP_CLS_INDIRECT ||
                   (in.cls == HWP_CLS_CALL && (in.events & HWP_EV_INDIRECT))) {
            e[BI] = 1;
            e[BIM] = (o.events & HWP_EV_MISPRED) != 0;
        }
        for (k = 0; k < NEV; k++) tot[k] += e[k];
        if (e[I1MR] | e[D1MR] | e[D1MW] | e[BCM] | e[BIM] | e[DR] | e[DW] | e[BC] | e[BI]) {
            p = row(in.pc);
            for (k = 0; k < NEV; k++) p->ev[k] += e[k];
        }
    }
    if (rc < 0) {
        fprintf(stderr, "cg_core: %s at offset %zu\n", r.why, r.err_off);
        return 1;
    }
    hwp_core_get_stats(&c, &st);
    printf("totals:");
    for (a = 0; a < NEV; a++) printf(" %llu", (unsigned long long)tot[a]);
    printf("\n");
    for (i = 0; i < tab_cap; i++)
        if (tab[i].pc != ~(uint64_t)0) {
            printf("0x%llx", (unsigned long long)tab[i].pc);
            for (a = 0; a < NEV; a++) printf(" %llu", (unsigned long long)tab[i].ev[a]);
            printf("\n");
        }
    free(tab);
    free(mem);
    return 0;
}
