/* SPDX-License-Identifier: MIT */
/* tests/doc_fields.c: every component's desc fields, one line each
 * (component, header, dotted name, type, default), for
 * tests/doc_fields.py, which checks each against its page's options
 * tables. The defaults are the tables' (hwp_<c>_desc_fields), F64 ones
 * in billionths. */
#define HWPROF_IMPL
#include "hwprof/hwprof.h"

#include <stdio.h>
#include <string.h>

static void rows(const char *c, const char *header, const char *prefix,
                 const hwp_field *f, size_t n) {
    static const char *const types[] = {"uint", "hex", "f64", "enum", "bytes", "sub"};
    size_t i;
    for (i = 0; i < n; i++, f++) {
        char name[128];
        snprintf(name, sizeof name, "%s%s", prefix, f->key);
        if (f->type == HWP_FIELD_SUB) {
            strcat(name, ".");
            rows(c, header, name, f->sub, (size_t)f->hi + 1);
        } else if (f->type == HWP_FIELD_ENUM) {
            printf("%s %s %s enum %s\n", c, header, name, f->names[f->def]);
        } else {
            printf("%s %s %s %s %llu\n", c, header, name, types[f->type],
                   (unsigned long long)f->def);
        }
    }
}

int main(void) {
    size_t n;
    const hwp_field *f;
#define DF_ROWS(c, header, envelope, kind, model) \
    f = hwp_##c##_desc_fields(&n);   \
    rows(#c, #header, "", f, n);
    HWP_COMPONENTS(DF_ROWS)
#undef DF_ROWS
    return 0;
}
