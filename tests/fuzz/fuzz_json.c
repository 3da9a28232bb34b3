/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_json.c: one model's JSON readers on raw input, for the
 * conformance row FZ_NAME of list FZ_LIST (set by tests/fuzz/build.sh).
 * read_desc either refuses with an offset inside the text and a reason,
 * or gives a desc; when init accepts that desc (on guarded storage),
 * read_json either refuses, leaving the instance's report unchanged, or
 * accepts, and then the report written back reads into a fresh instance
 * and writes back byte-identical. Follows the pattern of RAP's own
 * reader target (tests/rap/fuzz_rap_json.c) for every other model. */
#include "fuzz_model.h"

#define FZ_STR2(x) #x
#define FZ_STR(x) FZ_STR2(x)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const hwp_conf_row *r = fz_row(FZ_LIST, FZ_STR(FZ_NAME));
    const char *s = (const char *)data;
    void *d = calloc(1, r->desc_size);
    hwp_json_err err;
    fz_inst in;
    size_t n0, n1;
    char *j0, *j1;
    hwp_status st;
    FZ_CHECK(d);
    if (r->read_desc(d, s, size, &err) != HWP_OK) {
        FZ_CHECK(err.why && err.why[0] && err.offset <= size);
        free(d);
        return 0;
    }
    if (r->bytes(d) == 0 || r->bytes(d) > FZ_MAX_BYTES) {
        free(d);
        return 0;
    }
    if (fz_open(&in, r, d, size % 16u, false) != HWP_OK) {
        fz_close(&in);
        free(d);
        return 0;
    }
    j0 = fz_json(&in, &n0);
    err.why = NULL;
    st = r->read_json(in.x, s, size, &err);
    if (st != HWP_OK) {
        /* Malformed: the offset and reason in err; a report of another
         * desc: HWP_EMISMATCH, the field named by the instance. */
        FZ_CHECK(st == HWP_EFORMAT || st == HWP_EMISMATCH || st == HWP_EINVAL);
        if (st == HWP_EFORMAT) FZ_CHECK(err.why && err.why[0] && err.offset <= size);
        fz_guards(&in);
        j1 = fz_json(&in, &n1);
        FZ_CHECK(n0 == n1 && !memcmp(j0, j1, n0));
        free(j1);
    } else {
        fz_ctx c;
        fz_guards(&in);
        memset(&c, 0, sizeof c);
        c.row = r;
        fz_roundtrip(&c, &in, 5);
    }
    free(j0);
    fz_close(&in);
    free(d);
    return 0;
}
