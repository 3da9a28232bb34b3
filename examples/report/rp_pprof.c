/* examples/report/rp_pprof.c: --pprof FILE, the per-PC costs as a pprof
 * profile (github.com/google/pprof, proto/profile.proto), gzipped as
 * `go tool pprof`, Pyroscope and other profile stores take it.
 *
 * The encoder is the least of protobuf's wire format the profile needs
 * (protobuf.dev, "Encoding"): varints, length-delimited fields (strings
 * and nested messages) and packed repeated varints. The gzip member
 * (RFC 1952) carries the profile in stored deflate blocks (RFC 1951,
 * sec. 3.2.4: BTYPE 00, at most 65535 bytes each) with the CRC-32 of
 * ISO 3309: a valid gzip file without a compressor of our own. */
#define _GNU_SOURCE
#include "rp_out.h"

#include <stdlib.h>
#include <string.h>

/* ---- a growing byte buffer --------------------------------------------------- */

typedef struct rp__buf {
    unsigned char *b;
    size_t n, cap;
    int oom;
} rp__buf;

static void rp__put(rp__buf *o, const void *p, size_t k) {
    if (o->oom) return;
    if (o->n + k > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        unsigned char *q;
        while (cap < o->n + k) cap *= 2;
        q = (unsigned char *)realloc(o->b, cap);
        if (!q) {
            o->oom = 1;
            return;
        }
        o->b = q;
        o->cap = cap;
    }
    memcpy(o->b + o->n, p, k);
    o->n += k;
}

/* ---- protobuf ------------------------------------------------------------------ */

static void rp__varint(rp__buf *o, uint64_t v) {
    unsigned char b[10];
    size_t k = 0;
    do {
        b[k] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v) b[k] |= 0x80;
        k++;
    } while (v);
    rp__put(o, b, k);
}

/* Wire types: 0 varint, 2 length-delimited. */
static void rp__tag(rp__buf *o, unsigned field, unsigned wire) {
    rp__varint(o, (uint64_t)field << 3 | wire);
}

/* A varint field; proto3 leaves zero out. */
static void rp__u64f(rp__buf *o, unsigned field, uint64_t v) {
    if (!v) return;
    rp__tag(o, field, 0);
    rp__varint(o, v);
}

static void rp__bytesf(rp__buf *o, unsigned field, const void *p, size_t k) {
    rp__tag(o, field, 2);
    rp__varint(o, k);
    rp__put(o, p, k);
}

/* A nested message: built in m, then written with its length. */
static void rp__msgf(rp__buf *o, unsigned field, rp__buf *m) {
    if (m->oom) o->oom = 1;
    rp__bytesf(o, field, m->b, m->n);
    m->n = 0;
}

/* Packed repeated varints: one length-delimited field. */
static void rp__packedf(rp__buf *o, unsigned field, const uint64_t *v, size_t k, rp__buf *tmp) {
    size_t i;
    for (i = 0; i < k; i++) rp__varint(tmp, v[i]);
    rp__msgf(o, field, tmp);
}

/* ---- the string table ------------------------------------------------------------
 * Index 0 is "" (profile.proto); a string is stored once, found again by
 * a linear scan: quadratic in the distinct names (functions, files,
 * modules), which a program's sampled code keeps to thousands at most. */
typedef struct rp__strs {
    const char **s;
    size_t n, cap;
    int oom;
} rp__strs;

static uint64_t rp__str(rp__strs *t, const char *s) {
    size_t i;
    if (!s || !*s) return 0;
    for (i = 1; i < t->n; i++)
        if (!strcmp(t->s[i], s)) return i;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        const char **q = (const char **)realloc((void *)t->s, cap * sizeof *q);
        if (!q) {
            t->oom = 1;
            return 0;
        }
        t->s = q;
        t->cap = cap;
        if (!t->n) t->s[t->n++] = "";
    }
    t->s[t->n] = s;
    return t->n++;
}

/* ---- gzip --------------------------------------------------------------------- */

static uint32_t rp__crc32(uint32_t crc, const unsigned char *p, size_t n) {
    static uint32_t tab[256];
    size_t i;
    if (!tab[1]) {
        uint32_t k, c;
        for (k = 0; k < 256; k++) {
            c = k;
            for (i = 0; i < 8; i++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            tab[k] = c;
        }
    }
    crc = ~crc;
    for (i = 0; i < n; i++) crc = tab[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

static void rp__le32(rp__buf *o, uint32_t v) {
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    rp__put(o, b, 4);
}

/* p as one gzip member: header (no name, no time, OS unknown), stored
 * blocks, CRC-32 and the length modulo 2^32. */
static void rp__gzip(rp__buf *o, const unsigned char *p, size_t n) {
    static const unsigned char head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255};
    size_t at = 0;
    rp__put(o, head, sizeof head);
    do {
        size_t k = n - at > 65535 ? 65535 : n - at;
        unsigned char b[5];
        b[0] = at + k == n; /* BFINAL; BTYPE 00: stored */
        b[1] = (unsigned char)k;
        b[2] = (unsigned char)(k >> 8);
        b[3] = (unsigned char)~k;
        b[4] = (unsigned char)(~k >> 8);
        rp__put(o, b, 5);
        rp__put(o, p + at, k);
        at += k;
    } while (at < n);
    rp__le32(o, rp__crc32(0, p, n));
    rp__le32(o, (uint32_t)n);
}

/* ---- the profile --------------------------------------------------------------- */

/* profile.proto's field numbers */
enum {
    RP__P_SAMPLE_TYPE = 1, RP__P_SAMPLE, RP__P_MAPPING, RP__P_LOCATION, RP__P_FUNCTION,
    RP__P_STRINGS, RP__P_PERIOD_TYPE = 11, RP__P_PERIOD, RP__P_COMMENT,
    RP__P_DEFAULT_TYPE
};

/* The mapping of a module: its code range from the report's modules
 * when it names the file, else the span of the PCs found in it; the
 * offset is the file's address of the range's start (rp_sym_module),
 * which is its offset in the file for the usual ELF layout. */
static void rp__mapping(const rp_set *s, const rp_syms *y, const rp_pcs *p, const char *mod,
                        uint64_t *lo, uint64_t *hi, uint64_t *off) {
    const char *m;
    size_t i;
    *lo = UINT64_MAX;
    *hi = *off = 0;
    for (i = 0; i < p->n; i++)
        if (p->r[i].mod == mod) {
            if (p->r[i].pc < *lo) *lo = p->r[i].pc;
            if (p->r[i].pc >= *hi) *hi = p->r[i].pc + 1;
        }
    for (i = 0; i < s->nmod; i++)
        if (!strcmp(s->mod[i].path, mod)) {
            *lo = s->mod[i].lo < *lo ? s->mod[i].lo : *lo;
            if (s->mod[i].hi >= *hi) *hi = s->mod[i].hi + 1;
        }
    if (!rp_sym_module(y, *lo, &m, off)) *off = 0;
}

int rp_out_pprof(const rp_set *s, const rp_table *t, size_t nt, const rp_syms *y,
                 const char *path) {
    rp_pcs p;
    rp__buf o = {0}, m = {0}, tmp = {0}, gz = {0};
    rp__strs st = {0};
    const char **mods = NULL;
    size_t nmods = 0, i, k, deflt = 0;
    uint64_t *fid = NULL, nfn = 0, v[RP_MAXEV];
    char comment[600];
    unsigned e;
    int rc = 1;
    if (rp_pcs_get(t, nt, y, &p)) {
        fprintf(stderr, "hwprof-report: out of memory\n");
        return 1;
    }
    if (!p.nev || !p.n) {
        fprintf(stderr, "hwprof-report: --pprof: the report has no per-PC table (ProfileMe's, "
                        "RAP's, stratified sampling's or the co-processor's); %s not written\n",
                path);
        rp_pcs_free(&p);
        return 1;
    }
    mods = (const char **)calloc(p.n, sizeof *mods);
    fid = (uint64_t *)calloc(p.n, sizeof *fid);
    if (!mods || !fid) goto out;
    for (e = 0; e < p.nev; e++) {
        rp__u64f(&m, 1, rp__str(&st, p.ev[e]->type));
        rp__u64f(&m, 2, rp__str(&st, p.ev[e]->unit));
        rp__msgf(&o, RP__P_SAMPLE_TYPE, &m);
        /* the default view: estimated fetches, else the first event */
        if (!strcmp(p.ev[e]->type, "pm_fetches")) deflt = e;
    }
    /* mappings: one per module with PCs, ids from 1: the report's modules
     * in its order first (a host lists the program first, and pprof takes
     * mapping 1 for the main binary), then --elf files in PC order */
    for (k = 0; k <= s->nmod; k++)
        for (i = 0; i < p.n; i++) {
            const char *mod = p.r[i].mod;
            size_t j;
            if (!mod || (k < s->nmod && strcmp(mod, s->mod[k].path))) continue;
            for (j = 0; j < nmods && mods[j] != mod; j++) continue;
            if (j == nmods) mods[nmods++] = mod;
            if (k < s->nmod) break;
        }
    for (k = 0; k < nmods; k++) {
        uint64_t lo, hi, off;
        int fns = 0, lines = 0;
        for (i = 0; i < p.n; i++)
            if (p.r[i].mod == mods[k]) fns |= p.r[i].fn != NULL, lines |= p.r[i].line != 0;
        rp__mapping(s, y, &p, mods[k], &lo, &hi, &off);
        rp__u64f(&m, 1, k + 1);
        rp__u64f(&m, 2, lo);
        rp__u64f(&m, 3, hi);
        rp__u64f(&m, 4, off);
        rp__u64f(&m, 5, rp__str(&st, mods[k]));
        rp__u64f(&m, 7, (uint64_t)fns);
        rp__u64f(&m, 8, (uint64_t)lines);
        rp__u64f(&m, 9, (uint64_t)lines);
        rp__msgf(&o, RP__P_MAPPING, &m);
    }
    /* functions: one per (name, file); PCs of a function are adjacent */
    for (i = 0; i < p.n; i++) {
        if (!p.r[i].fn) continue;
        if (i && fid[i - 1] && !strcmp(p.r[i - 1].fn, p.r[i].fn) &&
            p.r[i - 1].mod == p.r[i].mod) {
            fid[i] = fid[i - 1];
            continue;
        }
        fid[i] = ++nfn;
        rp__u64f(&m, 1, nfn);
        rp__u64f(&m, 2, rp__str(&st, p.r[i].fn));
        rp__u64f(&m, 3, rp__str(&st, p.r[i].fn));
        rp__u64f(&m, 4, rp__str(&st, p.r[i].file));
        rp__msgf(&o, RP__P_FUNCTION, &m);
    }
    /* a location and a sample per PC: location i + 1 */
    for (i = 0; i < p.n; i++) {
        uint64_t loc = i + 1;
        for (k = 0; k < nmods && mods[k] != p.r[i].mod; k++) continue;
        rp__u64f(&m, 1, loc);
        rp__u64f(&m, 2, p.r[i].mod ? k + 1 : 0);
        rp__u64f(&m, 3, p.r[i].pc);
        if (fid[i]) {
            rp__u64f(&tmp, 1, fid[i]);
            rp__u64f(&tmp, 2, p.r[i].line);
            rp__msgf(&m, 4, &tmp);
        }
        rp__msgf(&o, RP__P_LOCATION, &m);
        for (e = 0; e < p.nev; e++) v[e] = (uint64_t)p.r[i].c[e];
        rp__packedf(&m, 1, &loc, 1, &tmp);
        rp__packedf(&m, 2, v, p.nev, &tmp);
        rp__msgf(&o, RP__P_SAMPLE, &m);
    }
    snprintf(comment, sizeof comment, "hwprof report of %s (%u file%s merged)", s->first,
             s->files, s->files == 1 ? "" : "s");
    rp__u64f(&o, RP__P_COMMENT, rp__str(&st, comment));
    rp__u64f(&o, RP__P_COMMENT,
             rp__str(&st, "values are the models' per-PC estimates, rounded per PC"));
    rp__u64f(&o, RP__P_DEFAULT_TYPE, rp__str(&st, p.ev[deflt]->type));
    for (i = 0; i < st.n; i++) rp__bytesf(&o, RP__P_STRINGS, st.s[i], strlen(st.s[i]));
    if (o.oom || m.oom || tmp.oom || st.oom) goto out;
    rp__gzip(&gz, o.b, o.n);
    if (gz.oom) goto out;
    rc = rp_save(path, gz.b, gz.n);
out:
    if (rc && (o.oom || m.oom || tmp.oom || st.oom || gz.oom || !mods || !fid))
        fprintf(stderr, "hwprof-report: out of memory\n");
    free(o.b);
    free(m.b);
    free(tmp.b);
    free(gz.b);
    free((void *)st.s);
    free((void *)mods);
    free(fid);
    rp_pcs_free(&p);
    return rc;
}
