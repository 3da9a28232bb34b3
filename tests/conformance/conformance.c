/* SPDX-License-Identifier: MIT */
/* tests/conformance/conformance.c: checks every component against the
 * model contract (docs/ARCHITECTURE.md), one row at a time. The rows live
 * in tests/conformance/<model>.c; see conformance.h.
 *
 *   test_conformance [NAME]     all rows, or the cases whose name has NAME
 */
#define HWPROF_IMPL
#include "conformance.h"

#include "harness.h"

/* ---- a growing writer (tests are hosted) ------------------------------ */

typedef struct text {
    char *s;
    size_t n, cap;
} text;

static void text_write(void *ctx, const char *s, size_t n) {
    text *t = (text *)ctx;
    if (t->n + n + 1 > t->cap) {
        t->cap = (t->n + n + 1) * 2;
        t->s = (char *)realloc(t->s, t->cap);
        if (!t->s) abort();
    }
    memcpy(t->s + t->n, s, n);
    t->n += n;
    t->s[t->n] = '\0';
}

/* The JSON report of x, as a NUL-terminated string the caller frees. */
static char *json_of(const hwp_conf_row *r, const void *x, size_t *len) {
    text t = {NULL, 0, 0};
    hwp_writer w;
    w.write = text_write;
    w.ctx = &t;
    r->write_json(x, &w);
    text_write(&t, "", 0);
    if (len) *len = t.n;
    return t.s;
}

/* ---- instances on guarded storage -------------------------------------
 * Storage starts `skew` bytes past a 64-byte boundary, so every alignment
 * a host could hand over is tried, and is fenced by guard bytes that must
 * survive everything the model does. */

#define GUARD 64u
#define FILL 0xA5u

typedef struct inst {
    const hwp_conf_row *row;
    unsigned char *raw, *mem;
    size_t n;
    void *x;
    void *desc;
} inst;

static hwp_status inst_open(inst *in, const hwp_conf_row *r, const void *desc,
                            size_t skew, size_t n, hwp_cost *cost) {
    in->row = r;
    in->n = n;
    in->raw = (unsigned char *)malloc(n + skew + 2 * GUARD + 64);
    in->x = calloc(1, r->handle_size);
    in->desc = malloc(r->desc_size);
    if (!in->raw || !in->x || !in->desc) abort();
    memcpy(in->desc, desc, r->desc_size);
    memset(in->raw, FILL, n + skew + 2 * GUARD + 64);
    in->mem = (unsigned char *)(((uintptr_t)in->raw + GUARD + 63u) & ~(uintptr_t)63u) + skew;
    return r->init(in->x, in->mem, n, in->desc, cost);
}

static int guards_intact(const inst *in) {
    size_t i;
    for (i = 1; i <= GUARD; i++)
        if (in->mem[-(ptrdiff_t)i] != FILL) return 0;
    for (i = 0; i < GUARD; i++)
        if (in->mem[in->n + i] != FILL) return 0;
    return 1;
}

static void inst_close(inst *in) {
    free(in->raw);
    free(in->x);
    free(in->desc);
}

static const char *why_of(const void *x) {
    /* Every handle begins with its hwp_head (the contract). */
    const char *w = ((const hwp_head *)x)->why;
    return w ? w : "";
}

static void *desc_small(const hwp_conf_row *r) {
    void *d = calloc(1, r->desc_size);
    if (!d) abort();
    if (r->small) r->small(d);
    return d;
}

static uint64_t cost_total(const hwp_cost *c) {
    uint64_t t = 0;
    int m;
    for (m = 0; m < HWP_MODEL_COUNT; m++) t += hwp_cost_model_cycles(c, (hwp_model)m);
    return t;
}

#define EVENTS 20000u
#define SEED 12345u

/* ---- the checks --------------------------------------------------------- */

/* bytes() is positive and init accepts exactly that much at every
 * alignment, one byte less fails at the worst alignment, and nothing is
 * written outside the storage by feeding, flushing and reporting. */
static void check_storage(const hwp_conf_row *r) {
    void *d = desc_small(r);
    size_t n = r->bytes(d), skew;
    if (!CHECK(n > 0)) {
        free(d);
        return;
    }
    for (skew = 0; skew < 16; skew++) {
        inst in;
        hwp_status st = inst_open(&in, r, d, skew, n, NULL);
        if (!CHECK_EQ(st, HWP_OK)) printf("      %s at skew %zu: %s\n", r->name, skew, why_of(in.x));
        if (st == HWP_OK) {
            char *j;
            r->feed(in.x, SEED, 0, EVENTS / 4);
            CHECK_EQ(r->flush(in.x), HWP_OK);
            j = json_of(r, in.x, NULL);
            free(j);
            r->reset(in.x);
            CHECK(guards_intact(&in));
        }
        inst_close(&in);
    }
    { /* address 1 mod 16 needs all 15 bytes of padding */
        inst in;
        CHECK_EQ(inst_open(&in, r, d, 1, n - 1, NULL), HWP_ENOSPC);
        inst_close(&in);
    }
    free(d);
}

/* A zero desc is the defaults the docs state, field by field (given the
 * fields that have no default, which it must otherwise refuse). */
static void check_defaults(const hwp_conf_row *r) {
    void *zero = calloc(1, r->desc_size), *doc = calloc(1, r->desc_size);
    inst a, b;
    if (!zero || !doc) abort();
    if (r->required) {
        CHECK_EQ(r->bytes(zero), 0);
        CHECK_EQ(inst_open(&a, r, zero, 0, 1u << 20, NULL), HWP_EINVAL);
        CHECK(why_of(a.x)[0] != '\0');
        inst_close(&a);
        r->required(zero);
    }
    r->documented(doc);
    if (CHECK_EQ(inst_open(&a, r, zero, 0, r->bytes(zero), NULL), HWP_OK) &
        CHECK_EQ(inst_open(&b, r, doc, 0, r->bytes(doc), NULL), HWP_OK)) {
        char *ja = json_of(r, a.x, NULL), *jb = json_of(r, b.x, NULL);
        CHECK_STR(ja, jb);
        free(ja);
        free(jb);
    }
    inst_close(&a);
    inst_close(&b);
    free(zero);
    free(doc);
}

/* Every bad field: bytes() says 0 and init says HWP_EINVAL naming it. */
static void check_bad(const hwp_conf_row *r) {
    size_t i;
    CHECK(r->nbad > 0);
    for (i = 0; i < r->nbad; i++) {
        void *d = desc_small(r);
        inst in;
        r->bad(d, i);
        CHECK_EQ(r->bytes(d), 0);
        CHECK_EQ(inst_open(&in, r, d, 0, 1u << 20, NULL), HWP_EINVAL);
        if (!CHECK_HAS(why_of(in.x), r->bad_fields[i]))
            printf("      %s: bad field %s\n", r->name, r->bad_fields[i]);
        inst_close(&in);
        free(d);
    }
}

/* reset gives back a freshly initialised instance, and stats never fall
 * while a stream is fed. */
static void check_reset_and_stats(const hwp_conf_row *r) {
    void *d = desc_small(r);
    inst a, b;
    hwp_cost ca;
    hwp_cost_init(&ca, NULL);
    if (CHECK_EQ(inst_open(&a, r, d, 3, r->bytes(d), &ca), HWP_OK) &
        CHECK_EQ(inst_open(&b, r, d, 5, r->bytes(d), NULL), HWP_OK)) {
        hwp_conf_stats prev = {0, 0, 0, 0}, s;
        uint64_t k, step = EVENTS / 8;
        char *ja, *jb;
        int mono = 1;
        for (k = 0; k < EVENTS; k += step) {
            r->feed(a.x, SEED, k, step);
            if (!CHECK_EQ(r->stats(a.x, &s), HWP_OK)) break;
            if (s.events < prev.events || s.dropped < prev.dropped ||
                s.evicted < prev.evicted || s.cycles < prev.cycles)
                mono = 0;
            prev = s;
        }
        CHECK(mono);
        CHECK(prev.events > 0);
        CHECK_EQ(r->reset(a.x), HWP_OK);
        CHECK_EQ(r->stats(a.x, &s), HWP_OK);
        CHECK_EQ(s.events, 0);
        ja = json_of(r, a.x, NULL);
        jb = json_of(r, b.x, NULL);
        CHECK_STR(ja, jb);
        free(ja);
        free(jb);
    }
    inst_close(&a);
    inst_close(&b);
    free(d);
}

/* Two halves merged equal the whole stream (or the row's bound), the
 * merge charges no modelled cycles, flush is idempotent, and instances of
 * different descs refuse to merge. */
static void check_merge(const hwp_conf_row *r) {
    void *d = desc_small(r);
    inst whole, h1, h2, other;
    hwp_cost c1, c2;
    hwp_cost_init(&c1, NULL);
    hwp_cost_init(&c2, NULL);
    if (CHECK_EQ(inst_open(&whole, r, d, 0, r->bytes(d), NULL), HWP_OK) &
        CHECK_EQ(inst_open(&h1, r, d, 7, r->bytes(d), &c1), HWP_OK) &
        CHECK_EQ(inst_open(&h2, r, d, 9, r->bytes(d), &c2), HWP_OK)) {
        uint64_t before;
        char *jw, *jm, *jf;
        r->feed(whole.x, SEED, 0, EVENTS);
        r->flush(whole.x);
        jw = json_of(r, whole.x, NULL);
        CHECK_EQ(r->flush(whole.x), HWP_OK);
        jf = json_of(r, whole.x, NULL);
        CHECK_STR(jf, jw); /* flush is idempotent */
        free(jf);
        r->feed(h1.x, SEED, 0, EVENTS / 2);
        r->flush(h1.x);
        r->feed(h2.x, SEED, EVENTS / 2, EVENTS - EVENTS / 2);
        r->flush(h2.x);
        before = cost_total(&c1) + cost_total(&c2);
        CHECK_EQ(r->merge(h1.x, h2.x), HWP_OK);
        CHECK_EQ(cost_total(&c1) + cost_total(&c2), before);
        if (r->merge_check) {
            const char *why = r->merge_check(whole.x, h1.x);
            if (!CHECK(why == NULL)) printf("      %s merge: %s\n", r->name, why);
        } else {
            jm = json_of(r, h1.x, NULL);
            CHECK_STR(jm, jw);
            free(jm);
        }
        free(jw);
    }
    /* A differently configured instance is refused with a reason. */
    if (r->documented) {
        void *doc = calloc(1, r->desc_size);
        if (!doc) abort();
        r->documented(doc);
        if (memcmp(doc, d, r->desc_size) != 0 &&
            CHECK_EQ(inst_open(&other, r, doc, 0, r->bytes(doc), NULL), HWP_OK)) {
            CHECK_EQ(r->merge(other.x, h2.x), HWP_EMISMATCH);
            CHECK(why_of(other.x)[0] != '\0');
            inst_close(&other);
        }
        free(doc);
    }
    inst_close(&whole);
    inst_close(&h1);
    inst_close(&h2);
    free(d);
}

/* The JSON report reads back to the same report, and a cut or damaged
 * report is refused with an offset inside the text. */
static void check_json(const hwp_conf_row *r) {
    void *d = desc_small(r), *d2 = calloc(1, r->desc_size);
    inst a;
    if (!d2) abort();
    if (CHECK_EQ(inst_open(&a, r, d, 0, r->bytes(d), NULL), HWP_OK)) {
        size_t len, cut;
        hwp_json_err err;
        char *j1;
        r->feed(a.x, SEED, 0, EVENTS);
        r->flush(a.x);
        j1 = json_of(r, a.x, &len);
        if (CHECK_EQ(r->read_desc(d2, j1, len, &err), HWP_OK)) {
            inst b;
            if (CHECK_EQ(inst_open(&b, r, d2, 11, r->bytes(d2), NULL), HWP_OK)) {
                char *j2;
                hwp_status st = r->read_json(b.x, j1, len, &err);
                if (!CHECK_EQ(st, HWP_OK))
                    printf("      %s: %s at %zu\n", r->name, err.why ? err.why : why_of(b.x), err.offset);
                j2 = json_of(r, b.x, NULL);
                CHECK_STR(j2, j1);
                free(j2);
                /* Cut reports: refused, with the offset inside the text. */
                for (cut = 1; cut < 8; cut++) {
                    size_t at = len * cut / 8;
                    r->reset(b.x);
                    err.offset = (size_t)-1;
                    CHECK_EQ(r->read_json(b.x, j1, at, &err), HWP_EFORMAT);
                    CHECK(err.offset <= at);
                }
                CHECK(guards_intact(&b));
            }
            inst_close(&b);
        } else {
            printf("      %s: read_desc: %s at %zu\n", r->name, err.why, err.offset);
        }
        /* A report of another configuration: refused with
         * HWP_EMISMATCH, a reason in err (at an offset inside the text)
         * and in the handle, and the instance left as it was. */
        if (r->documented) {
            void *doc = calloc(1, r->desc_size);
            inst c;
            if (!doc) abort();
            r->documented(doc);
            if (memcmp(doc, d, r->desc_size) != 0 &&
                CHECK_EQ(inst_open(&c, r, doc, 5, r->bytes(doc), NULL), HWP_OK)) {
                char *fresh = json_of(r, c.x, NULL), *after;
                err.offset = (size_t)-1;
                err.why = NULL;
                CHECK_EQ(r->read_json(c.x, j1, len, &err), HWP_EMISMATCH);
                if (!CHECK(err.why != NULL && err.offset < len))
                    printf("      %s: a mismatched report leaves err unset\n", r->name);
                CHECK(why_of(c.x)[0] != '\0');
                after = json_of(r, c.x, NULL);
                if (!CHECK_STR(after, fresh))
                    printf("      %s: a mismatched report changed the instance\n", r->name);
                CHECK(guards_intact(&c));
                free(fresh);
                free(after);
                inst_close(&c);
            }
            free(doc);
        }
        /* Every model's desc reader: a cut report and an envelope with
         * no desc are refused, the offset inside the text. */
        {
            const char *v = strstr(j1, "\"version\":");
            size_t cut, env = v ? (size_t)(strchr(v, ',') - j1) : 0;
            for (cut = 1; cut < 8; cut++) {
                size_t at = len * cut / 8;
                err.offset = (size_t)-1;
                CHECK_EQ(r->read_desc(d2, j1, at, &err), HWP_EFORMAT);
                CHECK(err.offset <= at);
            }
            if (CHECK(v != NULL && env < len)) {
                char *bare = malloc(env + 2);
                if (!bare) abort();
                memcpy(bare, j1, env);
                bare[env] = '}';
                bare[env + 1] = '\0';
                CHECK_EQ(r->read_desc(d2, bare, env + 1, &err), HWP_EFORMAT);
                free(bare);
            }
        }
        /* A report of another model is refused by the envelope check. */
        {
            static const char alien[] = "{\"model\":\"no-such-model\",\"version\":1}";
            CHECK(r->read_desc(d2, alien, sizeof alien - 1, &err) != HWP_OK);
        }
        free(j1);
    }
    inst_close(&a);
    free(d);
    free(d2);
}

/* Every handle begins with its hwp_head (the contract), so hwp_why reads
 * any component's reason through this. */
typedef struct any_handle {
    hwp_head head;
} any_handle;

/* A handle that was never initialised (zeroed, as a static or `= {0}`
 * one is): every cold call and query refuses it with an error status,
 * its report is `null`, a merge with it changes neither side, and
 * hwp_why gives a reason, never NULL (docs print it with %s). */
static void check_uninitialised(const hwp_conf_row *r) {
    any_handle *x = (any_handle *)calloc(1, r->handle_size);
    void *d = desc_small(r);
    inst ok;
    hwp_conf_stats s;
    hwp_json_err err;
    char *j;
    if (!x) abort();
    if (CHECK(hwp_why(x) != NULL)) CHECK(hwp_why(x)[0] != '\0');
    CHECK(r->reset(x) != HWP_OK);
    CHECK(r->flush(x) != HWP_OK);
    CHECK(r->stats(x, &s) != HWP_OK);
    j = json_of(r, x, NULL);
    CHECK_STR(j, "null");
    free(j);
    if (CHECK_EQ(inst_open(&ok, r, d, 0, r->bytes(d), NULL), HWP_OK)) {
        size_t len;
        char *before, *after;
        r->feed(ok.x, SEED, 0, EVENTS / 4);
        r->flush(ok.x);
        before = json_of(r, ok.x, &len);
        CHECK(r->read_json(x, before, len, &err) != HWP_OK);
        CHECK(r->merge(x, ok.x) != HWP_OK);
        CHECK(r->merge(ok.x, x) != HWP_OK);
        after = json_of(r, ok.x, NULL);
        CHECK_STR(after, before);
        free(before);
        free(after);
    }
    if (r->unset) {
        const char *took = r->unset(x);
        if (!CHECK(took == NULL)) printf("      %s: %s took a zeroed handle\n", r->name, took);
    }
    if (CHECK(hwp_why(x) != NULL)) CHECK(hwp_why(x)[0] != '\0');
    inst_close(&ok);
    free(x);
    free(d);
}

/* ---- driver --------------------------------------------------------------- */

/* Every component of HWP_COMPONENTS with its header's rows (a component
 * without a row of its own there fails its "row" case) and its
 * hwp_<c>_get_desc, which the contract gives every component alike. */
typedef hwp_status (*get_desc_fn)(const void *x, void *desc);
typedef struct list {
    const char *component;
    const hwp_conf_row *rows;
    get_desc_fn get_desc;
} list;

#define HWP_CONF_GET_DESC(c, header, envelope, kind, model)                         \
    static hwp_status get_desc_##c(const void *x, void *d) {                 \
        return hwp_##c##_get_desc((const hwp_##c *)x, (hwp_##c##_desc *)d); \
    }
HWP_COMPONENTS(HWP_CONF_GET_DESC)
#undef HWP_CONF_GET_DESC
#define HWP_CONF_ENTRY(c, header, envelope, kind, model) {#c, hwp_conf_##header, get_desc_##c},
static const list lists[] = {HWP_COMPONENTS(HWP_CONF_ENTRY){NULL, NULL, NULL}};
#undef HWP_CONF_ENTRY

/* get_desc refuses a zeroed handle, and gives the desc an instance runs:
 * a fresh instance on it writes the same report. */
static void check_get_desc(const hwp_conf_row *r, get_desc_fn get_desc) {
    void *d = desc_small(r), *got = calloc(1, r->desc_size), *x = calloc(1, r->handle_size);
    inst a, b;
    char *ja, *jb;
    if (!got || !x) abort();
    CHECK(get_desc(x, got) != HWP_OK);
    CHECK(get_desc(NULL, got) != HWP_OK);
    if (r->required) r->required(d);
    if (CHECK_EQ(inst_open(&a, r, d, 0, r->bytes(d), NULL), HWP_OK) &&
        CHECK_EQ(get_desc(a.x, got), HWP_OK)) {
        CHECK(get_desc(a.x, NULL) != HWP_OK);
        if (CHECK_EQ(inst_open(&b, r, got, 0, r->bytes(got), NULL), HWP_OK)) {
            ja = json_of(r, a.x, NULL);
            jb = json_of(r, b.x, NULL);
            CHECK_STR(ja, jb);
            free(ja);
            free(jb);
        }
        inst_close(&b);
    }
    inst_close(&a);
    free(d);
    free(got);
    free(x);
}

static const hwp_conf_row *row_of(const list *l) {
    const hwp_conf_row *r;
    for (r = l->rows; r->name; r++)
        if (!strcmp(r->name, l->component)) return r;
    return NULL;
}

static const list *cur_list;
static void rows(void) {
    if (!CHECK(row_of(cur_list) != NULL))
        printf("    %s: no row in its header's conformance list\n", cur_list->component);
}

static const hwp_conf_row *cur;

static void storage(void) { check_storage(cur); }
static void defaults(void) { check_defaults(cur); }
static void bad_descs(void) { check_bad(cur); }
static void reset_stats(void) { check_reset_and_stats(cur); }
static void merge(void) { check_merge(cur); }
static void json(void) { check_json(cur); }
static void uninitialised(void) { check_uninitialised(cur); }
static void get_desc(void) { check_get_desc(cur, cur_list->get_desc); }

int main(int argc, char **argv) {
    const list *l;
    static const struct {
        const char *name;
        void (*fn)(void);
    } cases[] = {{"storage", storage},   {"defaults", defaults},
                 {"bad_descs", bad_descs}, {"reset_stats", reset_stats},
                 {"merge", merge},       {"json", json},
                 {"uninitialised", uninitialised}, {"get_desc", get_desc}};
    char name[96];
    size_t i;
    hwt_begin(argc, argv);
    for (l = lists; l->component; l++) {
        cur_list = l;
        snprintf(name, sizeof name, "%s/row", l->component);
        hwt__run(name, rows);
        if (!(cur = row_of(l))) continue;
        for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            snprintf(name, sizeof name, "%s/%s", cur->name, cases[i].name);
            hwt__run(name, cases[i].fn);
        }
    }
    return hwt_end();
}
