/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_model.h: the engine every model's fuzz target shares.
 *
 * A target names one conformance row (tests/conformance/<model>.c) and
 * may add model-specific operations and checks (a fuzz_hooks). The input
 * decides the desc (the row's small desc, the zero desc, a few bytes of
 * either overwritten, or one of the row's known-bad fields), the cost
 * shim, and then a sequence of operations on two instances A and B of
 * the same desc: the row's event feeder, flush, merge both ways, reset,
 * a JSON round trip through a third instance, and the hooks' own
 * operations. After every step: the guard bytes around each instance's
 * storage are intact (memory stays inside what bytes() returned), stats
 * never decrease except across reset, flush is idempotent, reset gives
 * the fresh instance's JSON, and write(read(write(x))) == write(x).
 * A violated property traps (__builtin_trap), which libFuzzer reports and
 * tests/fuzz/replay.c turns into a failing test. */
#ifndef HWP_FUZZ_MODEL_H
#define HWP_FUZZ_MODEL_H

#include "../conformance/conformance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FZ_GUARD 64u
#define FZ_FILL 0xA5u
#define FZ_MAX_BYTES ((size_t)4 << 20) /* descs needing more are skipped */

#define FZ_CHECK(c)                                                           \
    do {                                                                      \
        if (!(c)) __builtin_trap();                                           \
    } while (0)

/* ---- the input as a stream of choices (zeros once it runs out) -------- */
typedef struct fz_in {
    const uint8_t *p;
    size_t n;
} fz_in;

HWP_UNUSED static uint8_t fz_u8(fz_in *f) {
    uint8_t v;
    if (!f->n) return 0;
    v = *f->p++;
    f->n--;
    return v;
}
HWP_UNUSED static uint32_t fz_u32(fz_in *f) {
    uint32_t v = 0;
    unsigned i;
    for (i = 0; i < 4; i++) v |= (uint32_t)fz_u8(f) << (8 * i);
    return v;
}
HWP_UNUSED static uint64_t fz_u64(fz_in *f) {
    uint64_t lo = fz_u32(f);
    return lo | (uint64_t)fz_u32(f) << 32;
}

/* ---- a growing JSON writer ---------------------------------------------- */
typedef struct fz_text {
    char *s;
    size_t n, cap;
} fz_text;

HWP_UNUSED static void fz_text_write(void *ctx, const char *s, size_t n) {
    fz_text *t = (fz_text *)ctx;
    if (t->n + n + 1 > t->cap) {
        t->cap = (t->n + n + 1) * 2;
        t->s = (char *)realloc(t->s, t->cap);
        FZ_CHECK(t->s);
    }
    memcpy(t->s + t->n, s, n);
    t->n += n;
    t->s[t->n] = '\0';
}

/* ---- an instance on guarded storage, at a skew the input picks -------- */
typedef struct fz_inst {
    const hwp_conf_row *row;
    unsigned char *raw, *mem;
    size_t n, skew;
    void *x;
    hwp_cost cost;
    hwp_conf_stats prev; /* stats after the last step */
} fz_inst;

HWP_UNUSED static char *fz_json(const fz_inst *in, size_t *len) {
    fz_text t = {NULL, 0, 0};
    hwp_writer w;
    w.write = fz_text_write;
    w.ctx = &t;
    in->row->write_json(in->x, &w);
    fz_text_write(&t, "", 0);
    *len = t.n;
    return t.s;
}

HWP_UNUSED static void fz_guards(const fz_inst *in) {
    size_t i;
    for (i = 0; i < FZ_GUARD + in->skew; i++) FZ_CHECK(in->raw[i] == FZ_FILL);
    for (i = 0; i < FZ_GUARD; i++)
        FZ_CHECK(in->mem[in->n + i] == FZ_FILL);
}

/* Opens an instance; returns the init status (the instance is usable only
 * on HWP_OK; its storage is freed by fz_close either way). */
HWP_UNUSED static hwp_status fz_open(fz_inst *in, const hwp_conf_row *r, const void *desc,
                          size_t skew, bool cost) {
    hwp_status st;
    memset(in, 0, sizeof *in);
    in->row = r;
    in->skew = skew;
    in->n = r->bytes(desc);
    in->x = calloc(1, r->handle_size);
    in->raw = (unsigned char *)malloc(2 * FZ_GUARD + skew + in->n);
    FZ_CHECK(in->x && in->raw);
    memset(in->raw, FZ_FILL, 2 * FZ_GUARD + skew + in->n);
    in->mem = in->raw + FZ_GUARD + skew;
    if (cost) FZ_CHECK(hwp_cost_init(&in->cost, NULL) == HWP_OK);
    st = r->init(in->x, in->mem, in->n, desc, cost ? &in->cost : NULL);
    fz_guards(in);
    return st;
}

HWP_UNUSED static void fz_close(fz_inst *in) {
    free(in->raw);
    free(in->x);
}

/* Stats never decrease (the caller zeroes prev across reset). */
HWP_UNUSED static void fz_stats(fz_inst *in) {
    hwp_conf_stats s;
    FZ_CHECK(in->row->stats(in->x, &s) == HWP_OK);
    FZ_CHECK(s.events >= in->prev.events);
    FZ_CHECK(s.dropped >= in->prev.dropped);
    FZ_CHECK(s.evicted >= in->prev.evicted);
    FZ_CHECK(s.cycles >= in->prev.cycles);
    in->prev = s;
}

/* ---- model-specific additions ---------------------------------------- */
typedef struct fz_ctx fz_ctx;
typedef struct fz_hooks {
    /* Adjusts a decoded desc before init (NULL: none): restores fields
     * that are no input (host pointers) from `orig`, the row's small desc
     * before the input changed it, or sets the target's own callbacks
     * (their context is c), taking any choice it needs from f; see
     * fuzz_pm.c, fuzz_rap.c, fuzz_path.c. */
    void (*desc)(fz_ctx *c, void *desc, const void *orig, fz_in *f);
    /* Called once both instances are open. */
    void (*start)(fz_ctx *c);
    /* A model-specific operation on instance which (0 = A, 1 = B). */
    void (*op)(fz_ctx *c, int which, fz_in *f);
    /* What the model states, checked after every step. */
    void (*check)(fz_ctx *c);
    /* Sets the target's host pointers (callbacks) in a desc read back
     * from a report, which cannot carry them (NULL: none). */
    void (*host)(fz_ctx *c, void *desc);
    /* Events: the row's feeder ran on `which`; merge(dst, src); reset. */
    void (*fed)(fz_ctx *c, int which);
    void (*merged)(fz_ctx *c, int dst);
    void (*reset)(fz_ctx *c, int which);
} fz_hooks;

struct fz_ctx {
    const hwp_conf_row *row;
    const fz_hooks *hooks;
    fz_inst in[2];
    void *desc;
    char *fresh; /* JSON right after init */
    size_t fresh_n;
    void *state; /* the hooks' own */
    int cur;     /* the instance the current step acts on: a model's
                  * callbacks (one desc, so one context for both) use it
                  * to tell which instance called */
};

HWP_UNUSED static const hwp_conf_row *fz_row(const hwp_conf_row *rows, const char *name) {
    for (; rows->name; rows++)
        if (!strcmp(rows->name, name)) return rows;
    __builtin_trap();
}

/* Before a trap on a report: what was refused, and why (stderr), so a
 * finding explains itself when replayed. */
HWP_UNUSED static void fz_why(const char *what, const char *json, const hwp_json_err *err) {
    fprintf(stderr, "fuzz: %s: %s at offset %lu\n%s\n", what, err->why ? err->why : "?",
            (unsigned long)err->offset, json);
}

/* write -> read_desc -> init -> read_json -> write, byte-identical. */
HWP_UNUSED static void fz_roundtrip(fz_ctx *c, const fz_inst *src, size_t skew) {
    const hwp_conf_row *r = c->row;
    size_t n1, n2;
    char *j1 = fz_json(src, &n1), *j2;
    void *d = calloc(1, r->desc_size);
    hwp_json_err err;
    fz_inst t;
    FZ_CHECK(d);
    if (r->read_desc(d, j1, n1, &err) != HWP_OK) {
        fz_why("read_desc refused the instance's own report", j1, &err);
        __builtin_trap();
    }
    if (c->hooks && c->hooks->host) c->hooks->host(c, d);
    FZ_CHECK(fz_open(&t, r, d, skew, false) == HWP_OK);
    if (r->read_json(t.x, j1, n1, &err) != HWP_OK) {
        fz_why("read_json refused the instance's own report", j1, &err);
        __builtin_trap();
    }
    fz_guards(&t);
    j2 = fz_json(&t, &n2);
    FZ_CHECK(n1 == n2 && !memcmp(j1, j2, n1));
    /* The read instance has the same desc: merging must be accepted. */
    FZ_CHECK(r->merge(t.x, src->x) == HWP_OK);
    fz_guards(&t);
    fz_close(&t);
    free(j1);
    free(j2);
    free(d);
}

HWP_UNUSED static void fz_step_checks(fz_ctx *c, const fz_hooks *h) {
    int i;
    for (i = 0; i < 2; i++) {
        fz_guards(&c->in[i]);
        fz_stats(&c->in[i]);
    }
    if (h && h->check) h->check(c);
}

/* The whole target: returns 0 (libFuzzer's convention). */
HWP_UNUSED static int fz_run(const hwp_conf_row *r, const fz_hooks *h, const uint8_t *data,
                  size_t size) {
    fz_in f = {data, size};
    fz_ctx c;
    uint8_t mode = fz_u8(&f);
    size_t skew = fz_u8(&f) % 16u, steps = 0;
    bool cost = (mode & 0x80) != 0;
    uint64_t first[2] = {0, 0};
    hwp_status st;
    int i;

    memset(&c, 0, sizeof c);
    c.row = r;
    c.hooks = h;
    c.desc = calloc(1, r->desc_size);
    FZ_CHECK(c.desc);
    switch (mode & 3u) {
    case 0: r->small(c.desc); break;
    case 1: break; /* zero: the paper's defaults */
    case 2: {      /* a few bytes of the small desc overwritten */
        unsigned k, nk = 1u + fz_u8(&f) % 4u;
        r->small(c.desc);
        for (k = 0; k < nk; k++) {
            size_t at = fz_u8(&f) % r->desc_size;
            ((unsigned char *)c.desc)[at] = fz_u8(&f);
        }
        break;
    }
    default: /* a field the row knows to be bad: init must refuse it */
        r->small(c.desc);
        if (r->nbad) {
            size_t b = fz_u8(&f) % r->nbad;
            r->bad(c.desc, b);
            FZ_CHECK(r->bytes(c.desc) == 0);
        }
        break;
    }
    if (h && h->desc) {
        void *orig = calloc(1, r->desc_size);
        FZ_CHECK(orig);
        r->small(orig);
        h->desc(&c, c.desc, orig, &f);
        free(orig);
    }
    if (r->bytes(c.desc) == 0 || r->bytes(c.desc) > FZ_MAX_BYTES) {
        /* Refused (or too large to fuzz quickly): init on a token buffer
         * must refuse or succeed without touching memory it was not given. */
        fz_inst t;
        size_t n = r->bytes(c.desc);
        if (n == 0) {
            st = fz_open(&t, r, c.desc, skew, cost);
            FZ_CHECK(st != HWP_OK);
            fz_close(&t);
        }
        free(c.desc);
        return 0;
    }
    st = fz_open(&c.in[0], r, c.desc, skew, cost);
    if (st != HWP_OK) {
        fz_close(&c.in[0]);
        free(c.desc);
        return 0;
    }
    FZ_CHECK(fz_open(&c.in[1], r, c.desc, (skew + 7u) % 16u, cost) == HWP_OK);
    c.fresh = fz_json(&c.in[0], &c.fresh_n);
    if (h && h->start) h->start(&c);
    fz_step_checks(&c, h);

    while (f.n && steps++ < 256) {
        uint8_t op = fz_u8(&f);
        int w = (op >> 7) & 1;
        fz_inst *a = &c.in[w], *b = &c.in[!w];
        c.cur = w;
        switch (op & 7u) {
        case 0:
        case 1: { /* the row's own stream: a seed and a length */
            uint64_t seed = fz_u8(&f), n = fz_u8(&f);
            r->feed(a->x, seed, first[w], n);
            first[w] += n;
            if (h && h->fed) h->fed(&c, w);
            break;
        }
        case 2: { /* flush, twice: idempotent */
            size_t n1, n2;
            char *j1, *j2;
            FZ_CHECK(r->flush(a->x) == HWP_OK);
            j1 = fz_json(a, &n1);
            FZ_CHECK(r->flush(a->x) == HWP_OK);
            j2 = fz_json(a, &n2);
            FZ_CHECK(n1 == n2 && !memcmp(j1, j2, n1));
            free(j1);
            free(j2);
            break;
        }
        case 3: { /* merge: same descs; a model may still refuse a state
                   * it cannot fold (the co-processor: different running
                   * programs), and then dst must be untouched */
            size_t n1, n2;
            char *j1 = fz_json(a, &n1), *j2;
            hwp_status ms = r->merge(a->x, b->x);
            if (ms == HWP_OK) {
                if (h && h->merged) h->merged(&c, w);
            } else {
                FZ_CHECK(ms == HWP_EMISMATCH);
                j2 = fz_json(a, &n2);
                FZ_CHECK(n1 == n2 && !memcmp(j1, j2, n1));
                free(j2);
            }
            free(j1);
            break;
        }
        case 4: { /* reset: the fresh instance's report */
            size_t n;
            char *j;
            FZ_CHECK(r->reset(a->x) == HWP_OK);
            if (cost) hwp_cost_reset(&a->cost);
            j = fz_json(a, &n);
            FZ_CHECK(n == c.fresh_n && !memcmp(j, c.fresh, n));
            free(j);
            memset(&a->prev, 0, sizeof a->prev);
            first[w] = 0;
            if (h && h->reset) h->reset(&c, w);
            break;
        }
        case 5:
            fz_roundtrip(&c, a, fz_u8(&f) % 16u);
            break;
        default:
            if (h && h->op) h->op(&c, w, &f);
            break;
        }
        fz_step_checks(&c, h);
    }
    for (i = 0; i < 2; i++) {
        c.cur = i;
        FZ_CHECK(r->flush(c.in[i].x) == HWP_OK);
        fz_step_checks(&c, h);
        fz_roundtrip(&c, &c.in[i], 3);
    }
    fz_close(&c.in[0]);
    fz_close(&c.in[1]);
    free(c.fresh);
    free(c.state);
    free(c.desc);
    return 0;
}

#endif
