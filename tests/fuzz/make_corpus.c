/* SPDX-License-Identifier: MIT */
/* tests/fuzz/make_corpus.c: writes the JSON readers' seeds: for every
 * conformance row, the report of a fresh instance of its small desc and
 * of one fed a short stream by the row's own feeder (halving the stream
 * until the report fits in 4 KB), as DIR/json_<row>/{fresh,fed}.json.
 * Run by tests/fuzz/make_corpus.sh. */
#define HWPROF_IMPL
#include "fuzz_model.h"

#include <stdio.h>

static void put(const char *dir, const char *row, const char *name,
                const char *s, size_t n) {
    char path[1024];
    FILE *f;
    snprintf(path, sizeof path, "%s/json_%s/%s", dir, row, name);
    f = fopen(path, "wb");
    if (!f || fwrite(s, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "make_corpus: cannot write %s\n", path);
        exit(1);
    }
}

static void one(const char *dir, const hwp_conf_row *r) {
    void *d = calloc(1, r->desc_size);
    uint64_t events = 256;
    size_t n;
    char *j;
    fz_inst in;
    r->small(d);
    FZ_CHECK(fz_open(&in, r, d, 0, false) == HWP_OK);
    j = fz_json(&in, &n);
    put(dir, r->name, "fresh.json", j, n);
    free(j);
    fz_close(&in);
    for (;; events /= 2) {
        FZ_CHECK(fz_open(&in, r, d, 0, false) == HWP_OK);
        r->feed(in.x, 1, 0, events);
        FZ_CHECK(r->flush(in.x) == HWP_OK);
        j = fz_json(&in, &n);
        fz_close(&in);
        if (n <= 4096 || events <= 1) break;
        free(j);
    }
    if (n <= 4096) put(dir, r->name, "fed.json", j, n);
    free(j);
    free(d);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: make_corpus DIR\n");
        return 2;
    }
    /* every component's row (the VM layer has none: fz_row skips it) */
#define MC_ONE(c, header, envelope, kind, model) \
    if (strcmp(#c, "vm")) one(argv[1], fz_row(hwp_conf_##header, #c));
    HWP_COMPONENTS(MC_ONE)
#undef MC_ONE
    return 0;
}
