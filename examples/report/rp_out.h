/* examples/report/rp_out.h: what hwprof-report prints and exports. */
#ifndef RP_OUT_H
#define RP_OUT_H

#include "rp.h"

typedef struct rp_opts {
    uint64_t top, key, interval;
    int have_key, list, quiet, functions;
    const char *table, *csv, *callgrind, *folded, *stacks, *bbv, *trace, *json, *html;
    char **elf;
    unsigned nelf;
} rp_opts;

/* Listing, queries and every export but --bbv; 0 or an exit status. */
int rp_out(const rp_set *s, const rp_opts *o);
/* --bbv FILE --trace TRACE (rp_bbv.c). */
int rp_out_bbv(const rp_opts *o);
/* --html FILE (rp_html.c): tables already ranked. */
int rp_out_html(const rp_set *s, rp_table *t, size_t nt, const rp_syms *y, FILE *f);
/* The text of a key: its symbol (function+offset) when known. */
void rp_key_name(const rp_syms *y, uint64_t pc, char *buf, size_t cap);
/* Open FILE for writing ('-': stdout); one line on failure. */
FILE *rp_open(const char *path);
int rp_close(FILE *f, const char *path);

#endif /* RP_OUT_H */
