/* examples/report/rp.h: hwprof-report's reader, merger and tables.
 *
 * A saved report is any JSON text the hosts write (the session object of
 * the QEMU plugin, the replayer and the Lua host, the Valgrind tool's
 * wrapper around it, the bytecode VM's named sections, or one model's
 * envelope alone). The reader walks it with the library's cursor
 * (hwp_json) and hands every object that begins with "model" to that
 * model's own reader (hwp_X_read_desc, init, hwp_X_read_json): model
 * state is never parsed here. Reports of the same configuration are
 * folded with the models' merge. Every model's profile then becomes one
 * or more tables of rows keyed by an address (a PC, a range, a path),
 * which every query and export reads the same way.
 *
 * Bad input is a one-line reason naming the file and byte offset
 * (rp_set.why); nothing here aborts or trusts a size it has not checked. */
#ifndef RP_H
#define RP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define RP_MAXCOL 16
#define RP_MAXCOMP 32
#define RP_MAXMOD 64
#define RP_TL_MAX 32 /* counters over time a report may carry */
#define RP_MAXTAB 16
/* A desc that asks for more storage than rp_max_bytes (1 GiB) is refused,
 * not allocated: a damaged or hostile report must not take the machine's
 * memory. The fuzz target lowers it. */
extern size_t rp_max_bytes;

struct rp_model;

/* One model instance: the merge of the same component of every file. */
typedef struct rp_comp {
    const struct rp_model *m;
    char path[96];     /* where it sits in the first file: "models.rap" */
    unsigned ordinal;  /* n-th report of this model in its file          */
    void *x;           /* handle (its storage follows in the same block)  */
} rp_comp;

/* An ELF image the host saw: where it was loaded. bias is what is added
 * to the file's virtual addresses (0 for a fixed-address executable). */
typedef struct rp_module {
    char path[256];
    uint64_t lo, hi;   /* guest addresses of its code (lo: the first
                          executable segment); hi 0: unknown             */
    uint64_t bias;
    int have_bias;
} rp_module;

/* A table row: a key (PC, range start, path start), a second key (range
 * end, path shape, value) and the columns. */
/* A hot path decoded to its blocks by the host ("hot_blocks", host facts
 * beside the path profiler's models): the block starts, or why not. */
typedef struct rp_hpath {
    uint64_t start, shape;
    uint64_t *blk;          /* n block starts (malloc'ed)                 */
    uint32_t n;
    char why[32];           /* "" when decoded                            */
} rp_hpath;

typedef struct rp_row {
    uint64_t key, key2;
    const char *label;      /* a name instead of the key (overhead rows) */
    const rp_hpath *path;   /* hot path rows: its blocks, when decoded   */
    double v[RP_MAXCOL];
} rp_row;

typedef struct rp_table {
    char name[48];          /* "pm_table.insns", "rap.ranges", ...       */
    const char *title;
    const char *key_name;   /* column header of key                      */
    const char *key2_name;  /* NULL: no second key                       */
    unsigned ncol;
    const char *col[RP_MAXCOL];
    unsigned dec[RP_MAXCOL]; /* decimals when printed                     */
    unsigned sort;          /* column ranked by (descending)             */
    unsigned pc_keyed;      /* key is an instruction address             */
    unsigned sums;          /* bit c: column c adds up over rows (a count,
                               not a bound, a ratio or a repeated figure) */
    rp_row *rows;
    size_t n;
} rp_table;

/* Call-stack profiles the hosts write beside the models (host data, not
 * model state; docs/report-format.md):
 * - "coproc_contexts": the host's dictionary of the co-processor's
 *   calling contexts, key -> call sites (innermost first) and the callee
 *   of the innermost call; the counts are the model's
 *   (hwp_cp_callstack_contexts).
 * - "call_stacks": sampled stacks of function names (the Lua host), each
 *   with its count. Files append; identical entries fold on export. */
#define RP_CTX_SITES 8
typedef struct rp_ctx {
    uint64_t key, callee;
    uint64_t site[RP_CTX_SITES];
    uint32_t n, deeper, stale;
} rp_ctx;

typedef struct rp_stack {
    char *frames; /* "outer;...;inner", ';' inside a name replaced by ':' */
    uint64_t count;
} rp_stack;

typedef struct rp_calls {
    rp_ctx *ctx;
    size_t nctx;
    uint64_t ctx_overflow, ctx_lost;
    unsigned have_ctx;
    rp_stack *stk;
    size_t nstk;
    uint64_t stk_dropped;
    unsigned have_stk;
} rp_calls;

typedef struct rp_set {
    rp_comp comp[RP_MAXCOMP];
    size_t ncomp;
    unsigned files;
    char first[256];        /* the first file's name                      */
    /* host figures, summed over files */
    uint64_t insns;
    double host_clock, total_cycles;
    char ov_name[12][16];
    double ov_cycles[12];
    unsigned nov;
    uint32_t *phase_ids, *bbv_ids; /* per interval, files appended       */
    size_t nphase, nbbv;
    size_t *phase_end, *bbv_end; /* per file: nphase, nbbv after it       */
    uint64_t phase_interval; /* instructions per interval of phase_ids and
                                bbv_ids (the first phase detector's desc);
                                0: no phase detector                     */
    /* The hosts' counters over time (timeline=N): per point the clock and
     * tl_cols cumulative counters named tl_names ("rap.splits"), files
     * appended; a file whose counters are not the first's adds none. */
    char tl_names[RP_TL_MAX][48];
    unsigned tl_cols;
    uint64_t *tl;           /* ntl points x (1 + tl_cols)                  */
    size_t ntl;
    size_t *tl_end;         /* per file: ntl after it                      */
    rp_module mod[RP_MAXMOD];
    unsigned nmod;
    rp_calls calls;
    rp_hpath *hp;           /* decoded hot paths, first file's first      */
    size_t nhp;
    uint64_t hp_overflow;   /* the hosts' block maps' overflow, summed    */
    char path_metric[8];    /* the hosts' path_metric= ("": counts)       */
    char why[512];          /* the last error, one line                  */
} rp_set;

void rp_set_init(rp_set *s);
void rp_set_free(rp_set *s);
/* Read one report (its text in memory) and fold it into s. 0 on success;
 * -1 with s->why ("FILE: byte N: reason") otherwise, s unchanged except
 * for files folded before. */
int rp_add_buf(rp_set *s, const char *file, const char *buf, size_t n);
int rp_add_file(rp_set *s, const char *file);

/* Every table of every component and of the host figures. Returns how
 * many (at most cap); free with rp_tables_free. */
size_t rp_tables(const rp_set *s, rp_table *out, size_t cap);
void rp_tables_free(rp_table *t, size_t n);
/* Rows ranked by the table's sort column, ties by key. */
void rp_table_sort(rp_table *t);

/* The detail of one address in every component that can say something
 * about it: estimates, bounds, samples, interval. */
void rp_detail(const rp_set *s, uint64_t key, FILE *f);
/* Each component written back as its model's JSON report, one object
 * keyed by its path: the merged profile, readable by this tool again. */
void rp_write_json(const rp_set *s, FILE *f);
/* str as a JSON string, quoted and escaped. */
void rp_json_str(FILE *f, const char *str);
/* The decoded blocks of (start, shape), NULL when no host wrote them. */
const rp_hpath *rp_hot_path(const rp_set *s, uint64_t start, uint64_t shape);
/* The RAP tree as SVG (the model's own writer), first RAP component;
 * false when there is none. */
int rp_rap_svg(const rp_set *s, FILE *f);
/* Per component: model name, path, the four common stats. */
typedef struct rp_stat4 {
    uint64_t events, dropped, evicted, cycles;
} rp_stat4;
void rp_comp_stats(const rp_comp *c, rp_stat4 *st);
const char *rp_comp_model(const rp_comp *c);
const char *rp_model_names(void); /* " core profileme ..." */

/* The co-processor's events per calling context (its call-stack
 * program), summed over the co-processor components that ran it: pairs
 * key, events in *kv (malloc'ed, the caller frees it); returns how many
 * pairs, 0 when no component ran the program (*kv NULL). */
size_t rp_cp_contexts(const rp_set *s, uint64_t **kv);

/* ---- names (rp_sym.c) ----
 * Symbols of the modules the report names and of --elf files, read with
 * binutils' nm; source lines with binutils' addr2line (a first
 * implementation: no ELF or DWARF reader of our own). */
typedef struct rp_syms rp_syms;
rp_syms *rp_syms_load(const rp_set *s, char **elf, unsigned nelf, FILE *warn);
/* Function and module of pc; false when no symbol covers it. */
int rp_sym(const rp_syms *y, uint64_t pc, const char **fn, const char **mod,
           uint64_t *off);
/* Without a symbol: the module whose code range holds pc, and pc's
 * address in the file (what addr2line -e and a debug package take). */
int rp_sym_module(const rp_syms *y, uint64_t pc, const char **mod, uint64_t *off);
/* Source file and line of each pc from its module's DWARF line table,
 * with binutils' addr2line; file[i] NULL (free the others) when unknown. */
void rp_lines(const rp_syms *y, const uint64_t *pc, size_t n, char **file, unsigned *line);
void rp_syms_free(rp_syms *y);
/* A decoded path as text, "f+0x10 > g > f+0x40" (names where known,
 * addresses otherwise), or the reason it did not decode. */
void rp_path_text(const rp_syms *y, const rp_hpath *p, char *buf, size_t cap);

#endif /* RP_H */
