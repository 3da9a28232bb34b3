/* SPDX-License-Identifier: MIT */
/* tests/conformance/conformance.h: the model contract as a table.
 *
 * Every component (a struct with its own storage) supplies one row; the
 * driver (tests/conformance/conformance.c) checks each row mechanically:
 * bytes/init agree at odd alignments, a zero desc equals the documented
 * defaults, every bad desc field gives HWP_EINVAL with a reason naming it,
 * reset equals a fresh init, merge of two halves equals the whole stream
 * (or the row's stated bound), the JSON report round-trips through the
 * reader, stats never decrease, and a handle never initialised is
 * refused by every call with a reason. Adding a component = adding a row in
 * tests/conformance/<model>.c and listing it in conformance.c.
 *
 * Rows use void * wrappers (calling a function through a pointer of
 * another type is undefined in C), written once per component. */
#ifndef HWP_CONFORMANCE_H
#define HWP_CONFORMANCE_H

#include <string.h>

#include "hwprof/hwprof.h"

/* The first four fields every component's stats struct begins with. */
typedef struct hwp_conf_stats {
    uint64_t events, dropped, evicted, cycles;
} hwp_conf_stats;

/* Reasons that a component's own merge may not equal the whole stream:
 * compare(whole, merged) returns NULL when merged is within the bound the
 * component documents, else a static reason. */
typedef const char *(*hwp_conf_merge_check)(const void *whole,
                                            const void *merged);

typedef struct hwp_conf_row {
    const char *name;   /* "rap", "pm_table", ...                         */
    size_t desc_size;   /* sizeof(hwp_X_desc)                             */
    size_t handle_size; /* sizeof(hwp_X)                                  */
    /* A desc small enough for a quick test (zero is fine). */
    void (*small)(void *desc);
    /* The defaults as the docs state them, field by field, written out
     * by hand: a zero desc must give the same instance (same JSON). */
    void (*documented)(void *desc);
    /* Bad descs: bad(desc, i) spoils field bad_fields[i] of a valid desc. */
    const char *const *bad_fields;
    size_t nbad;
    void (*bad)(void *desc, size_t i);

    size_t (*bytes)(const void *desc);
    hwp_status (*init)(void *x, void *mem, size_t n, const void *desc,
                       hwp_cost *cost);
    hwp_status (*reset)(void *x);
    hwp_status (*flush)(void *x);
    hwp_status (*merge)(void *dst, const void *src);
    hwp_status (*stats)(const void *x, hwp_conf_stats *out);
    void (*write_json)(const void *x, const hwp_writer *w);
    hwp_status (*read_desc)(void *desc, const char *s, size_t n,
                            hwp_json_err *err);
    hwp_status (*read_json)(void *x, const char *s, size_t n,
                            hwp_json_err *err);
    /* Feed events [first, first + n) of a stream fixed by seed. */
    void (*feed)(void *x, uint64_t seed, uint64_t first, uint64_t n);
    /* NULL: merge of the two halves must give byte-identical JSON to the
     * whole stream; else the check of the documented bound. */
    hwp_conf_merge_check merge_check;
    /* Calls every query and cold call of the component's own (beyond the
     * ones above) on x, a zeroed handle never initialised: NULL when each
     * refused it (an error status, or the empty answer a query documents
     * for a bad handle: 0, NULL, false, NaN), else the first that took it. */
    const char *(*unset)(void *x);
    /* NULL when a zero desc is valid (every field has a default); else
     * sets the fields that have none: a zero desc must be refused with a
     * reason, and zero plus these gives the documented defaults. */
    void (*required)(void *desc);
} hwp_conf_row;

/* In a row's unset(): return the call (as text) if it took the handle. */
#define HWP_CONF_TOOK(accepted) \
    do {                        \
        if (accepted) return #accepted; \
    } while (0)

/* Is this what a text report of a zeroed handle may say: nothing, or a
 * line saying it is not initialised? (Inline: the fuzz drivers link the
 * rows without conformance.c.) */
static inline bool hwp_conf_text_refuses(const char *text) {
    return text[0] == '\0' || strstr(text, "not initialised") != NULL;
}

/* In a row's unset(): run a text writer `call` that writes to `&w`, and
 * return it (as text) if it said more than that. */
#define HWP_CONF_TOOK_TEXT(call)                               \
    do {                                                       \
        char buf_[256];                                        \
        hwp_bufwriter b_;                                      \
        hwp_writer w = hwp_writer_buf(&b_, buf_, sizeof buf_); \
        call;                                                  \
        if (!hwp_conf_text_refuses(buf_)) return #call;        \
    } while (0)

/* Rows, one list per header (tests/conformance/<header>.c), a row for
 * each of its components in HWP_COMPONENTS (cost.h). */
#define HWP_CONF_LIST(c, header, envelope, kind, model) extern const hwp_conf_row hwp_conf_##header[];
HWP_COMPONENTS(HWP_CONF_LIST)
#undef HWP_CONF_LIST

#endif
