/* examples/report/rp_out.h: what hwprof-report prints and exports. */
#ifndef RP_OUT_H
#define RP_OUT_H

#include "rp.h"

typedef struct rp_opts {
    uint64_t top, key, interval;
    int have_key, list, quiet, functions;
    const char *table, *csv, *callgrind, *folded, *stacks, *bbv, *trace, *json, *html, *pprof, *chrome;
    char **elf;
    unsigned nelf;
} rp_opts;

/* The per-PC events every export of costs writes (callgrind, pprof):
 * one column of one model's per-PC table, under callgrind's event name
 * and pprof's sample type and unit. */
typedef struct rp_event {
    const char *table; /* table-name suffix after the model            */
    const char *model;
    unsigned col;
    const char *name;  /* callgrind's event                            */
    const char *type;  /* pprof's sample type                          */
    const char *unit;
    int max;           /* several rows per PC: keep the largest        */
} rp_event;

#define RP_MAXEV 16
/* One PC's events, rounded to integers as both formats hold them, with
 * its function, module, source file and line where known. */
typedef struct rp_pc {
    uint64_t pc;
    const char *fn, *mod; /* the syms' strings; NULL: unknown           */
    char *file;           /* malloc'ed; NULL: unknown                   */
    unsigned line;
    double c[RP_MAXEV];
} rp_pc;

typedef struct rp_pcs {
    const rp_event *ev[RP_MAXEV]; /* the events the report has           */
    unsigned nev;
    rp_pc *r;                     /* by module, function, PC              */
    size_t n;
} rp_pcs;

/* Every PC of the first instance of each model's per-PC table; -1 out of
 * memory. An empty result (nev 0) means the report has no per-PC table. */
int rp_pcs_get(const rp_table *t, size_t nt, const rp_syms *y, rp_pcs *p);
void rp_pcs_free(rp_pcs *p);

/* Listing, queries and every export but --bbv; 0 or an exit status. */
int rp_out(const rp_set *s, const rp_opts *o);
/* --bbv FILE --trace TRACE (rp_bbv.c). */
int rp_out_bbv(const rp_opts *o);
/* --html FILE (rp_html.c): tables already ranked. */
int rp_out_html(const rp_set *s, rp_table *t, size_t nt, const rp_syms *y, FILE *f);
/* The text of a key: its symbol (function+offset) when known. */
void rp_key_name(const rp_syms *y, uint64_t pc, char *buf, size_t cap);
/* --pprof FILE (rp_pprof.c): the per-PC costs as a gzipped pprof profile. */
int rp_out_pprof(const rp_set *s, const rp_table *t, size_t nt, const rp_syms *y,
                 const char *path);
/* --chrome-trace FILE (rp_trace.c): the phase timelines as Trace Event
 * Format JSON, the guest's instructions as its clock. */
int rp_out_chrome_trace(const rp_set *s, const char *path);
/* FILE ('-': stdout) holds b and nothing else, or is left as it was: the
 * bytes go to a file beside it, renamed over it when all are written. */
int rp_save(const char *path, const void *b, size_t n);
/* Open FILE for writing ('-': stdout); one line on failure. */
FILE *rp_open(const char *path);
int rp_close(FILE *f, const char *path);

#endif /* RP_OUT_H */
