/* bench/rap/rap_bound.c: the stage-0 buffer's effect on the bound on
 * short and long runs (docs/rap.md, "The bound").
 *
 * rap_bound [KEYS]: for a loop over 37 and over 300 PCs 4 bytes apart,
 * and the first n keys of KEYS (little-endian uint64, e.g. real_keys.sh's
 * gzip.pc.keys) if given, at n = 100K, 1M and 10M (and all of KEYS), eps = 1%
 * and 10%, the default 8 KB tree without and with a 1K-entry buffer:
 * hwp_rap_bound() / n after the flush and the buffer's combining factor
 * (events / tree updates). */
#define HWPROF_IMPL
#include "hwprof/rap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rap/rap_util.h"

static uint64_t *keys;
static size_t nkeys;

static uint64_t key_at(unsigned loop, uint64_t i) {
    return loop ? 0x401000u + 4u * (i % loop) : keys[i];
}

static void row(const char *name, unsigned loop, uint64_t n, double eps) {
    double bound[2];
    uint64_t updates = 0, i;
    unsigned b;
    for (b = 0; b < 2; b++) {
        hwp_rap_desc d;
        hwp_rap_stats st;
        hwp_rap *r;
        memset(&d, 0, sizeof d);
        d.eps = eps;
        d.buffer = b ? 1024u : HWP_RAP_BUFFER_NONE;
        r = hwx_rap_new(&d, NULL);
        for (i = 0; i < n; i++) hwp_rap_add(r, key_at(loop, i), 1);
        hwp_rap_flush(r);
        hwp_rap_get_stats(r, &st);
        bound[b] = (double)st.bound / (double)st.n;
        updates = st.updates;
        free(r);
    }
    printf("| %s, %llu | %.2f | %.4f | %.4f | %.1f |\n", name,
           (unsigned long long)n, eps, bound[0], bound[1],
           (double)n / (double)updates);
}

int main(int argc, char **argv) {
    static const uint64_t ns[] = {100000, 1000000, 10000000};
    static const double eps[] = {0.01, 0.10};
    unsigned e, k;
    if (argc > 1) {
        FILE *f = fopen(argv[1], "rb");
        size_t cap = 1u << 20;
        if (!f) {
            fprintf(stderr, "rap_bound: cannot open %s\n", argv[1]);
            return 1;
        }
        keys = (uint64_t *)malloc(cap * sizeof *keys);
        while (keys && (nkeys += fread(keys + nkeys, sizeof *keys,
                                       cap - nkeys, f)) == cap)
            keys = (uint64_t *)realloc(keys, (cap *= 2) * sizeof *keys);
        fclose(f);
        if (!keys) return 1;
    }
    printf("| stream, n | eps | bound/n no buffer | buffer 1K | factor |\n"
           "|---|---|---|---|---|\n");
    for (e = 0; e < 2; e++) {
        for (k = 0; k < 3; k++) {
            row("37 PCs", 37, ns[k], eps[e]);
            row("300 PCs", 300, ns[k], eps[e]);
            if (nkeys >= ns[k]) row("keys", 0, ns[k], eps[e]);
        }
        if (nkeys) row("keys (all)", 0, nkeys, eps[e]);
    }
    free(keys);
    return 0;
}
