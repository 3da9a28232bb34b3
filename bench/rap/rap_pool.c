/* rap_pool BITS FILE...: what a full pool does on real key streams. Each
 * FILE (little-endian uint64 keys, from `hwprof-replay --dump`) runs
 * through the hosts' tree (a BITS-bit domain from 0, 8 KB, eps = 10%, the
 * 1k stage 0, flushed at the end) and prints the paper's percent error on
 * the hot ranges at 10% (sec. 4.3) against the exact profile of the same
 * stream, mean and worst, with the pool's counters: deferred splits, early
 * merge batches, peak nodes and the a-posteriori bound / n. The rows of
 * docs/rap.md's "A full pool" (bench/rap/real_keys.sh makes the files). */
#define HWPROF_IMPL
#include "hwprof/rap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rap/rap_util.h"

static int one(const char *path, unsigned bits) {
    FILE *f = fopen(path, "rb");
    hwx_event *ev;
    size_t n = 0, cap = 1u << 20, i, j;
    unsigned char b[8];
    hwp_rap_desc d;
    hwp_rap *r;
    hwp_rap_stats st;
    hwp_rap_acc a;
    hwx_exact x;
    ev = (hwx_event *)malloc(cap * sizeof *ev);
    if (!f || !ev) {
        fprintf(stderr, "rap_pool: cannot read %s\n", path);
        return 1;
    }
    memset(&d, 0, sizeof d);
    d.key_bits = bits;
    d.nodes = 512;
    d.eps = 0.10;
    r = hwx_rap_new(&d, NULL);
    while (fread(b, 1, 8, f) == 8) {
        if (n == cap) {
            cap *= 2;
            ev = (hwx_event *)realloc(ev, cap * sizeof *ev);
            if (!ev) return 1;
        }
        for (ev[n].key = 0, j = 0; j < 8; j++) ev[n].key |= (uint64_t)b[j] << (8 * j);
        ev[n].weight = 1;
        hwp_rap_add(r, ev[n].key, 1);
        n++;
    }
    fclose(f);
    hwp_rap_flush(r);
    for (i = j = 0; i < n; i++) /* the exact profile of what the tree saw */
        if (bits == 64 || ev[i].key >> bits == 0) ev[j++] = ev[i];
    hwx_exact_build(&x, ev, j);
    free(ev);
    hwp_rap_get_stats(r, &st);
    hwp_rap_accuracy(r, 0.10, hwx_exact_range, &x, &a);
    printf("| %s | %llu | %u | %.3f%% | %.3f%% | %llu | %llu | %u | %.4f | %llu |\n", path,
           (unsigned long long)st.n, a.hot, a.mean_pct, a.max_pct,
           (unsigned long long)st.deferred, (unsigned long long)st.early_merges,
           st.peak, (double)st.bound / (double)st.n, (unsigned long long)a.violations);
    hwx_exact_free(&x);
    free(r);
    return 0;
}

int main(int argc, char **argv) {
    int i, rc = 0;
    unsigned bits;
    if (argc < 3 || (bits = (unsigned)strtoul(argv[1], NULL, 0)) < 1 || bits > 64) {
        fprintf(stderr, "usage: rap_pool BITS FILE...\n");
        return 2;
    }
    printf("| keys | events | hot | mean error | worst | deferred | early merges | peak "
           "| bound/n | violations |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (i = 2; i < argc; i++) rc |= one(argv[i], bits);
    return rc;
}
