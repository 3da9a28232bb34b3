/* minivm text assembler.
 *
 * A program is a sequence of lines; ';' or '#' starts a comment.
 *
 *   .param NAME VALUE        global with a default, overridable: -D NAME=V
 *   .global NAME [VALUE]     global (nil unless a value is given)
 *   .class NAME NFIELDS      class whose objects have NFIELDS fields
 *   .method CLASS SEL FUNC   CLASS answers selector SEL with FUNC
 *   .func NAME NARGS NLOCALS function; arguments are locals 0..NARGS-1
 *   label:                   a jump target inside the current function
 *   OPCODE [OPERANDS]        see MV_OPS in mv.h
 *   .end                     closes the function
 *
 * Names may be used before they are defined; they are resolved at the end.
 * Every error names the file, line and column of the offending token.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "hwprof/base.h"
#include "mv.h"

static const struct {
    const char *name;
    int kind;
} mv__ops[] = {
#define MV__OP_INFO(name, kind, cyc, cls) {#name, kind},
    MV_OPS(MV__OP_INFO)
#undef MV__OP_INFO
};

const char *mv_op_name(unsigned op) {
    return op < MV_OP_COUNT ? mv__ops[op].name : "?";
}

const mv_func *mv_func_at(const mv_prog *p, uint32_t i) {
    const mv_func *best = NULL;
    uint32_t f;
    for (f = 0; f < p->nfuncs; f++)
        if (p->funcs[f].entry <= i && (!best || p->funcs[f].entry > best->entry))
            best = &p->funcs[f];
    return best;
}

/* ---- growable arrays ---------------------------------------------------- */

static int mv__grow(void **arr, uint32_t *cap, uint32_t n, size_t elem) {
    void *q;
    uint32_t nc;
    if (n < *cap) return 0;
    nc = *cap ? *cap : 16;
    while (nc <= n) nc *= 2;
    q = realloc(*arr, (size_t)nc * elem);
    if (!q) return -1;
    *arr = q;
    *cap = nc;
    return 0;
}
#define MV__PUSH(p, arr, n, cap) \
    mv__grow((void **)&(p)->arr, &(p)->cap, (p)->n, sizeof *(p)->arr)

/* ---- the assembler's state ---------------------------------------------- */

#define MV__MAXTOK 8

typedef struct mv__tok {
    const char *s;
    size_t n;
    unsigned col;
} mv__tok;

/* A name used before its definition: resolved when the file ends. */
typedef struct mv__fix {
    char name[32];
    unsigned line, col;
    int kind;      /* MV_A_LABEL / MV_A_FUNC / MV_A_CLASS / MV_A_GLOBAL */
    int32_t *slot; /* where the resolved index goes (NULL: code[at].a) */
    uint32_t at;   /* code index, or class*nsels+sel for methods       */
    int nargs;     /* call: expected argument count, else -1           */
} mv__fix;

typedef struct mv__labels {
    char name[32];
    uint32_t at;
    unsigned line, col;
} mv__label;

typedef struct mv__asm {
    mv_prog *p;
    const char *file;
    char *err;
    size_t errcap;
    unsigned line;
    int cur_fn; /* -1 outside .func */
    mv__fix *fix;
    uint32_t nfix, capfix;
    mv__label *lab;
    uint32_t nlab, caplab;
    mv__fix *mfix; /* .method lines: class, selector, function */
    uint32_t nmfix, capmfix;
    uint32_t *where; /* per instruction: line << 12 | column */
    uint32_t capwhere;
    int32_t *depth;  /* verifier scratch, per instruction */
    uint32_t capdepth;
} mv__asm;

static int mv__error(mv__asm *A, unsigned line, unsigned col,
                     const char *fmt, ...) {
    va_list ap;
    int n = snprintf(A->err, A->errcap, "%s:%u:%u: error: ", A->file, line, col);
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < A->errcap)
        vsnprintf(A->err + n, A->errcap - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static int mv__is_ident(const mv__tok *t) {
    size_t i;
    if (!t->n || !((t->s[0] >= 'a' && t->s[0] <= 'z') ||
                   (t->s[0] >= 'A' && t->s[0] <= 'Z') || t->s[0] == '_'))
        return 0;
    for (i = 1; i < t->n; i++) {
        char c = t->s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.'))
            return 0;
    }
    return 1;
}

static int mv__name(mv__asm *A, const mv__tok *t, char out[32]) {
    if (!mv__is_ident(t))
        return mv__error(A, A->line, t->col, "expected a name, got '%.*s'",
                         (int)t->n, t->s);
    if (t->n >= 32)
        return mv__error(A, A->line, t->col, "name longer than 31 characters");
    memcpy(out, t->s, t->n);
    out[t->n] = '\0';
    return 0;
}

static int mv__int(mv__asm *A, const mv__tok *t, int64_t lo, int64_t hi,
                   int64_t *out) {
    char buf[40], *end;
    long long v;
    if (t->n == 0 || t->n >= sizeof buf)
        return mv__error(A, A->line, t->col, "expected an integer, got '%.*s'",
                         (int)t->n, t->s);
    memcpy(buf, t->s, t->n);
    buf[t->n] = '\0';
    errno = 0;
    v = strtoll(buf, &end, 0);
    if (*end || end == buf)
        return mv__error(A, A->line, t->col, "expected an integer, got '%s'",
                         buf);
    if (errno == ERANGE || v < lo || v > hi)
        return mv__error(A, A->line, t->col,
                         "integer %s out of range [%lld, %lld]", buf,
                         (long long)lo, (long long)hi);
    *out = v;
    return 0;
}

/* An int or float literal as a value (for .param / .global / -D). */
static int mv__literal(const char *s, size_t n, mv_val *v) {
    char buf[64], *end;
    if (n == 0 || n >= sizeof buf) return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    memset(v, 0, sizeof *v);
    errno = 0;
    v->as.i = strtoll(buf, &end, 0);
    v->tag = MV_INT;
    if (*end == '\0' && errno == 0) return 0;
    errno = 0;
    v->as.f = strtod(buf, &end);
    v->tag = MV_FLT;
    return *end == '\0' && errno == 0 ? 0 : -1;
}

static int mv__find(const void *arr, uint32_t n, size_t stride,
                    const char *name) {
    uint32_t i;
    for (i = 0; i < n; i++)
        if (!strcmp((const char *)arr + (size_t)i * stride, name)) return (int)i;
    return -1;
}
#define MV__FIND(p, arr, n, name) \
    mv__find((p)->arr, (p)->n, sizeof *(p)->arr, name)

/* Append a zeroed entry named by `tok` to one of the program's tables (the
 * name is each entry's first member) and return it, or NULL after
 * reporting a duplicate or bad name. The caller counts it in. */
static void *mv__define(mv__asm *A, void **arr, uint32_t n, uint32_t *cap,
                        size_t elem, const mv__tok *tok, const char *what) {
    char *e;
    if (mv__grow(arr, cap, n, elem)) {
        mv__error(A, A->line, tok->col, "out of memory");
        return NULL;
    }
    e = (char *)*arr + (size_t)n * elem;
    memset(e, 0, elem);
    if (mv__name(A, tok, e)) return NULL;
    if (mv__find(*arr, n, elem, e) >= 0) {
        mv__error(A, A->line, tok->col, "%s '%s' defined twice", what, e);
        return NULL;
    }
    return e;
}
#define MV__DEFINE(A, arr, n, cap, tok, what)                              \
    mv__define(A, (void **)&(A)->p->arr, (A)->p->n, &(A)->p->cap,          \
               sizeof *(A)->p->arr, tok, what)

static int mv__add_fix(mv__asm *A, const mv__tok *t, int kind, uint32_t at,
                       int nargs) {
    mv__fix *f;
    if (mv__grow((void **)&A->fix, &A->capfix, A->nfix, sizeof *A->fix))
        return mv__error(A, A->line, t->col, "out of memory");
    f = &A->fix[A->nfix];
    if (mv__name(A, t, f->name)) return -1;
    f->line = A->line;
    f->col = t->col;
    f->kind = kind;
    f->slot = NULL;
    f->at = at;
    f->nargs = nargs;
    A->nfix++;
    return 0;
}

static int mv__selector(mv__asm *A, const mv__tok *t) {
    char name[32];
    int s;
    if (mv__name(A, t, name)) return -1;
    s = MV__FIND(A->p, sels, nsels, name);
    if (s >= 0) return s;
    if (MV__PUSH(A->p, sels, nsels, capsels))
        return mv__error(A, A->line, t->col, "out of memory");
    memcpy(A->p->sels[A->p->nsels], name, 32);
    return (int)A->p->nsels++;
}

/* ---- one instruction ---------------------------------------------------- */

static int mv__instruction(mv__asm *A, const mv__tok *tk, int ntok) {
    mv_prog *p = A->p;
    const mv_func *fn;
    mv_ins *in;
    int op, kind, want;
    int64_t v;
    for (op = 0; op < MV_OP_COUNT; op++)
        if (strlen(mv__ops[op].name) == tk[0].n &&
            !memcmp(mv__ops[op].name, tk[0].s, tk[0].n))
            break;
    if (op == MV_OP_COUNT)
        return mv__error(A, A->line, tk[0].col, "unknown opcode '%.*s'",
                         (int)tk[0].n, tk[0].s);
    if (A->cur_fn < 0)
        return mv__error(A, A->line, tk[0].col,
                         "instruction '%s' outside a .func", mv__ops[op].name);
    fn = &p->funcs[A->cur_fn];
    kind = mv__ops[op].kind;
    want = kind == MV_A_NONE ? 0 : (kind == MV_A_FUNCN || kind == MV_A_SELN) ? 2 : 1;
    if (ntok - 1 != want)
        return mv__error(A, A->line, ntok > want + 1 ? tk[want + 1].col : tk[0].col,
                         "'%s' takes %d operand%s, got %d", mv__ops[op].name,
                         want, want == 1 ? "" : "s", ntok - 1);
    if (MV__PUSH(p, code, ncode, capcode))
        return mv__error(A, A->line, tk[0].col, "out of memory");
    if (mv__grow((void **)&A->where, &A->capwhere, p->ncode, sizeof *A->where))
        return mv__error(A, A->line, tk[0].col, "out of memory");
    A->where[p->ncode] = A->line << 12 | (tk[0].col < 4096 ? tk[0].col : 4095);
    in = &p->code[p->ncode];
    memset(in, 0, sizeof *in);
    in->op = (uint16_t)op;
    switch (kind) {
    case MV_A_NONE: break;
    case MV_A_INT:
        if (mv__int(A, &tk[1], op == MV_OP_callc ? 0 : INT32_MIN,
                    op == MV_OP_callc ? 255 : INT32_MAX, &v))
            return -1;
        in->a = (int32_t)v;
        if (op == MV_OP_callc) in->b = (uint16_t)v;
        break;
    case MV_A_FLT: {
        mv_val f;
        if (mv__literal(tk[1].s, tk[1].n, &f))
            return mv__error(A, A->line, tk[1].col, "expected a number, got '%.*s'",
                             (int)tk[1].n, tk[1].s);
        if (MV__PUSH(p, consts, nconsts, capconsts))
            return mv__error(A, A->line, tk[1].col, "out of memory");
        p->consts[p->nconsts] = f.tag == MV_FLT ? f.as.f : (double)f.as.i;
        in->a = (int32_t)p->nconsts++;
        break;
    }
    case MV_A_LOCAL:
        if (mv__int(A, &tk[1], 0, (int64_t)fn->nlocals - 1, &v)) {
            if (fn->nlocals == 0)
                return mv__error(A, A->line, tk[1].col,
                                 "function '%s' has no locals", fn->name);
            return -1;
        }
        in->a = (int32_t)v;
        break;
    case MV_A_FIELD:
        if (mv__int(A, &tk[1], 0, 65535, &v)) return -1;
        in->a = (int32_t)v;
        break;
    case MV_A_LABEL:
    case MV_A_FUNC:
    case MV_A_CLASS:
    case MV_A_GLOBAL:
        if (mv__add_fix(A, &tk[1], kind, p->ncode, -1)) return -1;
        break;
    case MV_A_FUNCN:
    case MV_A_SELN:
        if (mv__int(A, &tk[2], kind == MV_A_SELN ? 1 : 0, 255, &v)) return -1;
        in->b = (uint16_t)v;
        if (kind == MV_A_FUNCN) {
            if (mv__add_fix(A, &tk[1], MV_A_FUNC, p->ncode, (int)v)) return -1;
        } else {
            int s = mv__selector(A, &tk[1]);
            if (s < 0) return -1;
            in->a = s;
        }
        break;
    default:
        return mv__error(A, A->line, tk[0].col, "internal: bad operand kind");
    }
    p->ncode++;
    return 0;
}

/* ---- the stack verifier -------------------------------------------------
 * Like the JVM's: every instruction must see the same operand-stack depth
 * on every path that reaches it and never pop below the function's locals.
 * The interpreter then checks stack room once per call (maxstack) instead
 * of on every push and pop. */

static void mv__effect(const mv_ins *in, int *need, int *delta) {
    switch (in->op) {
    case MV_OP_push: case MV_OP_pushf: case MV_OP_pushnil: case MV_OP_pushfn:
    case MV_OP_lload: case MV_OP_gload: case MV_OP_new:
        *need = 0; *delta = 1; return;
    case MV_OP_nop: case MV_OP_jmp: case MV_OP_halt:
        *need = 0; *delta = 0; return;
    case MV_OP_dup: *need = 1; *delta = 1; return;
    case MV_OP_over: *need = 2; *delta = 1; return;
    case MV_OP_swap: *need = 2; *delta = 0; return;
    case MV_OP_neg: case MV_OP_i2f: case MV_OP_f2i: case MV_OP_sqrt:
    case MV_OP_not: case MV_OP_typeof: case MV_OP_getf: case MV_OP_newarr:
    case MV_OP_alen:
        *need = 1; *delta = 0; return;
    case MV_OP_pop: case MV_OP_lstore: case MV_OP_gstore: case MV_OP_jz:
    case MV_OP_jnz: case MV_OP_print: case MV_OP_ret:
        *need = 1; *delta = -1; return;
    case MV_OP_setf: *need = 2; *delta = -2; return;
    case MV_OP_astore: *need = 3; *delta = -3; return;
    case MV_OP_call: case MV_OP_callm:
        *need = in->b; *delta = 1 - (int)in->b; return;
    case MV_OP_callc: *need = in->b + 1; *delta = -(int)in->b; return;
    default: /* binary arithmetic, compares, aload */
        *need = 2; *delta = -1; return;
    }
}

static int mv__verify(mv__asm *A, mv_func *fn) {
    mv_prog *p = A->p;
    uint32_t n = p->ncode - fn->entry, i, *work, nwork = 0;
    int32_t *d, maxd = 0;
    if (mv__grow((void **)&A->depth, &A->capdepth, p->ncode * 2 + 1,
                 sizeof *A->depth))
        return mv__error(A, A->line, 1, "out of memory");
    d = A->depth;
    work = (uint32_t *)(d + n); /* second half: the worklist */
    for (i = 0; i < n; i++) d[i] = -1;
    d[0] = 0;
    work[nwork++] = 0;
    while (nwork) {
        uint32_t at = work[--nwork], succ[2];
        const mv_ins *in = &p->code[fn->entry + at];
        int need, delta, ns = 0, k;
        mv__effect(in, &need, &delta);
        if (d[at] < need)
            return mv__error(A, A->where[fn->entry + at] >> 12,
                             A->where[fn->entry + at] & 4095,
                             "'%s' needs %d value%s on the stack, has %d",
                             mv__ops[in->op].name, need, need == 1 ? "" : "s",
                             (int)d[at]);
        if (d[at] + delta > maxd) maxd = d[at] + delta;
        if (in->op == MV_OP_jmp || in->op == MV_OP_jz || in->op == MV_OP_jnz)
            succ[ns++] = (uint32_t)in->a - fn->entry;
        if (in->op != MV_OP_jmp && in->op != MV_OP_ret && in->op != MV_OP_halt)
            succ[ns++] = at + 1;
        for (k = 0; k < ns; k++) {
            uint32_t s = succ[k];
            if (s >= n) /* a label at .end, or falling through into it */
                return mv__error(A, A->where[fn->entry + at] >> 12,
                                 A->where[fn->entry + at] & 4095,
                                 "control reaches the end of '%s'", fn->name);
            if (d[s] < 0) {
                d[s] = d[at] + delta;
                work[nwork++] = s;
            } else if (d[s] != d[at] + delta) {
                return mv__error(A, A->where[fn->entry + s] >> 12,
                                 A->where[fn->entry + s] & 4095,
                                 "stack depth here is %d on one path and %d "
                                 "on another", (int)d[s], (int)(d[at] + delta));
            }
        }
    }
    fn->maxstack = (uint32_t)maxd;
    return 0;
}

/* ---- directives --------------------------------------------------------- */

static int mv__need(mv__asm *A, const mv__tok *tk, int ntok, int lo, int hi) {
    if (ntok - 1 < lo || ntok - 1 > hi)
        return mv__error(A, A->line, ntok - 1 > hi ? tk[hi + 1].col : tk[0].col,
                         "'%.*s' takes %d%s operand%s, got %d", (int)tk[0].n,
                         tk[0].s, lo, hi > lo ? " or more" : "",
                         hi == 1 ? "" : "s", ntok - 1);
    return 0;
}

static int mv__end_func(mv__asm *A, unsigned col) {
    mv_prog *p = A->p;
    mv_func *fn = &p->funcs[A->cur_fn];
    uint32_t i, last;
    if (p->ncode == fn->entry)
        return mv__error(A, A->line, col, "function '%s' is empty", fn->name);
    last = p->code[p->ncode - 1].op;
    if (last != MV_OP_ret && last != MV_OP_jmp && last != MV_OP_halt)
        return mv__error(A, A->line, col,
                         "function '%s' can fall off its end: the last "
                         "instruction must be ret, jmp or halt", fn->name);
    /* Resolve this function's labels; they are local to it. */
    for (i = 0; i < A->nfix; i++) {
        mv__fix *f = &A->fix[i];
        int l;
        if (f->kind != MV_A_LABEL || f->at < fn->entry) continue;
        l = MV__FIND(A, lab, nlab, f->name);
        if (l < 0)
            return mv__error(A, f->line, f->col, "undefined label '%s'", f->name);
        p->code[f->at].a = (int32_t)A->lab[l].at;
        f->kind = -1; /* done */
    }
    A->nlab = 0;
    A->cur_fn = -1;
    return mv__verify(A, fn);
}

static int mv__global(mv__asm *A, const mv__tok *tk, int ntok, int is_param) {
    mv_prog *p = A->p;
    mv_global *g;
    if (mv__need(A, tk, ntok, is_param ? 2 : 1, 2)) return -1;
    g = MV__DEFINE(A, globals, nglobals, capglobals, &tk[1], "global");
    if (!g) return -1;
    if (ntok == 3 && mv__literal(tk[2].s, tk[2].n, &g->init))
        return mv__error(A, A->line, tk[2].col, "expected a number, got '%.*s'",
                         (int)tk[2].n, tk[2].s);
    g->is_param = is_param;
    p->nglobals++;
    return 0;
}

static int mv__directive(mv__asm *A, const mv__tok *tk, int ntok) {
    mv_prog *p = A->p;
    int64_t v;
    if (tk[0].n == 4 && !memcmp(tk[0].s, ".end", 4)) {
        if (mv__need(A, tk, ntok, 0, 0)) return -1;
        if (A->cur_fn < 0)
            return mv__error(A, A->line, tk[0].col, ".end without .func");
        return mv__end_func(A, tk[0].col);
    }
    if (A->cur_fn >= 0)
        return mv__error(A, A->line, tk[0].col,
                         "'%.*s' inside function '%s' (missing .end?)",
                         (int)tk[0].n, tk[0].s, p->funcs[A->cur_fn].name);
    if (tk[0].n == 5 && !memcmp(tk[0].s, ".func", 5)) {
        mv_func *fn;
        int64_t nl;
        if (mv__need(A, tk, ntok, 3, 3)) return -1;
        fn = MV__DEFINE(A, funcs, nfuncs, capfuncs, &tk[1], "function");
        if (!fn) return -1;
        if (mv__int(A, &tk[2], 0, 255, &v)) return -1;
        if (mv__int(A, &tk[3], v, 1024, &nl)) return -1;
        fn->nargs = (uint32_t)v;
        fn->nlocals = (uint32_t)nl;
        fn->entry = p->ncode;
        A->cur_fn = (int)p->nfuncs++;
        return 0;
    }
    if (tk[0].n == 6 && !memcmp(tk[0].s, ".param", 6))
        return mv__global(A, tk, ntok, 1);
    if (tk[0].n == 7 && !memcmp(tk[0].s, ".global", 7))
        return mv__global(A, tk, ntok, 0);
    if (tk[0].n == 6 && !memcmp(tk[0].s, ".class", 6)) {
        mv_class *c;
        if (mv__need(A, tk, ntok, 2, 2)) return -1;
        c = MV__DEFINE(A, classes, nclasses, capclasses, &tk[1], "class");
        if (!c) return -1;
        if (mv__int(A, &tk[2], 0, 1024, &v)) return -1;
        c->nfields = (uint32_t)v;
        p->nclasses++;
        return 0;
    }
    if (tk[0].n == 7 && !memcmp(tk[0].s, ".method", 7)) {
        mv__fix *f;
        int s;
        if (mv__need(A, tk, ntok, 3, 3)) return -1;
        s = mv__selector(A, &tk[2]);
        if (s < 0) return -1;
        if (mv__grow((void **)&A->mfix, &A->capmfix, A->nmfix, sizeof *A->mfix))
            return mv__error(A, A->line, tk[0].col, "out of memory");
        f = &A->mfix[A->nmfix];
        memset(f, 0, sizeof *f);
        if (mv__name(A, &tk[1], f->name)) return -1; /* class, resolved later */
        f->line = A->line;
        f->col = tk[1].col;
        f->at = (uint32_t)s;
        /* the function name rides in a second fix entry */
        if (mv__add_fix(A, &tk[3], MV_A_FUNC, UINT32_MAX, -2)) return -1;
        f->nargs = (int)A->nfix - 1;
        A->nmfix++;
        return 0;
    }
    return mv__error(A, A->line, tk[0].col, "unknown directive '%.*s'",
                     (int)tk[0].n, tk[0].s);
}

/* ---- end of file: resolve names, build method tables ------------------- */

static int mv__finish(mv__asm *A) {
    mv_prog *p = A->p;
    uint32_t i;
    for (i = 0; i < A->nfix; i++) {
        mv__fix *f = &A->fix[i];
        int ix;
        if (f->kind == MV_A_FUNC) {
            ix = MV__FIND(p, funcs, nfuncs, f->name);
            if (ix < 0)
                return mv__error(A, f->line, f->col, "undefined function '%s'",
                                 f->name);
            if (f->nargs >= 0 && (uint32_t)f->nargs != p->funcs[ix].nargs)
                return mv__error(A, f->line, f->col,
                                 "'%s' takes %u argument%s, called with %d",
                                 f->name, p->funcs[ix].nargs,
                                 p->funcs[ix].nargs == 1 ? "" : "s", f->nargs);
        } else if (f->kind == MV_A_CLASS) {
            ix = MV__FIND(p, classes, nclasses, f->name);
            if (ix < 0)
                return mv__error(A, f->line, f->col, "undefined class '%s'",
                                 f->name);
        } else if (f->kind == MV_A_GLOBAL) {
            ix = MV__FIND(p, globals, nglobals, f->name);
            if (ix < 0)
                return mv__error(A, f->line, f->col, "undefined global '%s'",
                                 f->name);
        } else {
            continue;
        }
        if (f->at != UINT32_MAX) p->code[f->at].a = ix;
        f->at = (uint32_t)ix; /* .method reads the resolved function here */
    }
    for (i = 0; i < p->nclasses; i++) {
        uint32_t s;
        p->classes[i].methods = malloc(sizeof(int32_t) * (p->nsels ? p->nsels : 1));
        if (!p->classes[i].methods) return mv__error(A, A->line, 1, "out of memory");
        for (s = 0; s < p->nsels; s++) p->classes[i].methods[s] = -1;
    }
    for (i = 0; i < A->nmfix; i++) {
        mv__fix *m = &A->mfix[i];
        const mv__fix *fnf = &A->fix[m->nargs];
        int c = MV__FIND(p, classes, nclasses, m->name);
        if (c < 0)
            return mv__error(A, m->line, m->col, "undefined class '%s'", m->name);
        if (p->funcs[fnf->at].nargs < 1)
            return mv__error(A, fnf->line, fnf->col,
                             "method '%s' must take the receiver as argument 0",
                             fnf->name);
        if (p->classes[c].methods[m->at] >= 0)
            return mv__error(A, m->line, m->col,
                             "class '%s' already has a method '%s'", m->name,
                             p->sels[m->at]);
        p->classes[c].methods[m->at] = (int32_t)fnf->at;
    }
    p->main_fn = MV__FIND(p, funcs, nfuncs, "main");
    if (p->main_fn < 0) return mv__error(A, A->line, 1, "no function 'main'");
    if (p->funcs[p->main_fn].nargs != 0)
        return mv__error(A, A->line, 1, "'main' must take no arguments");
    return 0;
}

/* ---- lines -------------------------------------------------------------- */

static int mv__line(mv__asm *A, const char *s, size_t n) {
    mv__tok tk[MV__MAXTOK + 1];
    int ntok = 0;
    size_t i;
    for (i = 0; i < n; i++) /* comments included: the file must be text */
        if (((unsigned char)s[i] < 0x20 && s[i] != '\t' && s[i] != '\r') ||
            (unsigned char)s[i] >= 0x7f)
            return mv__error(A, A->line, (unsigned)i + 1,
                             "unexpected character 0x%02x",
                             (unsigned)(unsigned char)s[i]);
    i = 0;
    while (i < n) {
        size_t st;
        char c = s[i];
        if (c == ';' || c == '#') break;
        if (c == ' ' || c == '\t' || c == ',' || c == '\r') {
            i++;
            continue;
        }
        if (ntok == MV__MAXTOK)
            return mv__error(A, A->line, (unsigned)i + 1, "too many operands");
        st = i;
        while (i < n && s[i] != ' ' && s[i] != '\t' && s[i] != ',' &&
               s[i] != ';' && s[i] != '#' && s[i] != '\r')
            i++;
        tk[ntok].s = s + st;
        tk[ntok].n = i - st;
        tk[ntok].col = (unsigned)st + 1;
        ntok++;
    }
    if (!ntok) return 0;
    if (tk[0].s[tk[0].n - 1] == ':') { /* a label, maybe with an insn after */
        mv__tok name = tk[0];
        mv__label *l;
        int k;
        name.n--;
        if (A->cur_fn < 0)
            return mv__error(A, A->line, tk[0].col, "label outside a .func");
        if (MV__PUSH(A, lab, nlab, caplab))
            return mv__error(A, A->line, tk[0].col, "out of memory");
        l = &A->lab[A->nlab];
        if (mv__name(A, &name, l->name)) return -1;
        if ((k = MV__FIND(A, lab, nlab, l->name)) >= 0)
            return mv__error(A, A->line, tk[0].col,
                             "label '%s' already defined at line %u", l->name,
                             A->lab[k].line);
        l->at = A->p->ncode;
        l->line = A->line;
        l->col = tk[0].col;
        A->nlab++;
        if (ntok == 1) return 0;
        memmove(tk, tk + 1, sizeof tk[0] * (size_t)(ntok - 1));
        ntok--;
    }
    if (tk[0].s[0] == '.') return mv__directive(A, tk, ntok);
    return mv__instruction(A, tk, ntok);
}

int mv_assemble(mv_prog *p, const char *file, const char *src, char *err,
                size_t errcap) {
    mv__asm A;
    const char *s = src;
    int rc = 0;
    memset(p, 0, sizeof *p);
    memset(&A, 0, sizeof A);
    A.p = p;
    A.file = file;
    A.err = err;
    A.errcap = errcap;
    A.cur_fn = -1;
    err[0] = '\0';
    while (*s && !rc) {
        const char *e = strchr(s, '\n');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        A.line++;
        rc = mv__line(&A, s, n);
        s += n + (e ? 1 : 0);
    }
    if (!rc && A.cur_fn >= 0)
        rc = mv__error(&A, A.line, 1, "end of file inside function '%s' "
                       "(missing .end)", p->funcs[A.cur_fn].name);
    if (!rc) rc = mv__finish(&A);
    free(A.fix);
    free(A.lab);
    free(A.mfix);
    free(A.where);
    free(A.depth);
    if (rc) mv_prog_free(p);
    return rc;
}

int mv_prog_define(mv_prog *p, const char *asg, char *err, size_t errcap) {
    const char *eq = strchr(asg, '=');
    char name[32];
    int g;
    size_t n = eq ? (size_t)(eq - asg) : 0;
    if (!eq || n == 0 || n >= sizeof name) {
        snprintf(err, errcap, "-D expects NAME=VALUE, got '%s'", asg);
        return -1;
    }
    memcpy(name, asg, n);
    name[n] = '\0';
    g = MV__FIND(p, globals, nglobals, name);
    if (g < 0 || !p->globals[g].is_param) {
        snprintf(err, errcap, "the program has no .param '%s'", name);
        return -1;
    }
    if (mv__literal(eq + 1, strlen(eq + 1), &p->globals[g].init)) {
        snprintf(err, errcap, "-D %s: '%s' is not a number", name, eq + 1);
        return -1;
    }
    return 0;
}

void mv_prog_free(mv_prog *p) {
    uint32_t i;
    for (i = 0; i < p->nclasses; i++) free(p->classes[i].methods);
    free(p->code);
    free(p->consts);
    free(p->funcs);
    free(p->classes);
    free(p->sels);
    free(p->globals);
    memset(p, 0, sizeof *p);
}
