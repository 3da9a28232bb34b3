/* SPDX-License-Identifier: MIT */
/* examples/lua/hwlua.c: hwprof inside Lua 5.4's interpreter loop.
 *
 * The hooks of hwlua.h arrive here and become the shared event record
 * (hwp_insn) of the host registry (examples/common): the same adapters,
 * options, reports and exact-vs-model scoring as the QEMU plugin, the
 * Valgrind tool and the replayer. An "instruction" is a bytecode and its
 * address is the bytecode's address in the function's code array; a
 * call's target is the callee's code (a Lua function's bytecode array, a
 * C function's entry point), so both share one 64-bit domain.
 *
 * Feeding. Most bytecodes carry no event any model wants; the
 * interpreter counts them down in a register (hwlua_left) and the session
 * learns them in bulk (hwx_session_skip). A bytecode that carries an
 * event (a branch, a call, a table read, operands) becomes one record,
 * completed by every hook of that bytecode before it is handed on; the
 * countdown also stops at the bytecode a model must see whole (ProfileMe's
 * next selection: hwx_session_until).
 *
 * Beside the session the glue keeps the exact per-function, per-loop and
 * per-site counts of the run, from which the JIT decisions below are
 * taken twice: from the exact counts and from the models' profiles
 * (docs/lua.md, "Tiering decisions").
 *
 * Call profile. Every `stack_interval` bytecodes (10007 by default, 0:
 * off) the countdown also stops, and the glue walks the running thread's
 * CallInfo chain and counts the stack of function names it finds: the
 * call and return hooks do not pair across C functions (an error unwinds
 * many frames at once, a C function calls back into Lua), the chain is
 * what Lua itself unwinds. The counts go into the JSON report as
 * "call_stacks" (docs/report-format.md), which hwprof-report --folded
 * exports for flame graphs.
 *
 * Configuration: the HWPROF environment variable, a comma-separated
 * key=value list of the hosts' options plus this host's own (docs/lua.md):
 *   HWPROF=models=all,exact=on,report=lua.txt ./lua-hwprof script.lua
 * Without HWPROF every hook is off and lua-hwprof runs like lua.
 * The report is written when the process exits, however it exits: a
 * normal end, an error, os.exit, an out-of-memory error, or SIGTERM,
 * SIGHUP or SIGINT (Lua turns an interrupt into an error).
 */
#include "hwlua.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwx_host.h"
#include "hwx_int.h" /* the session's exact (pc, value) and path counts */
#include "hwprof/rap.h"
#include "ldebug.h"
#include "lopcodes.h"
#include "lstring.h"
#include "hwlua_map.h"

unsigned hwlua_on;
long hwlua_left = LONG_MAX;

/* ---- this host's options ------------------------------------------------- */

typedef struct hwlua_tier {
    double func_share; /* compile a function with this share of events   */
    double loop_share; /* a loop with this share of events               */
    uint64_t stack_interval; /* bytecodes between call-stack samples     */
    double spec_share; /* specialise a site with this share of values    */
    double spec_inv;   /* whose top type or value has this invariance    */
} hwlua_tier;

static const char *hwlua__opt(hwlua_tier *t, const char *k, const char *v,
                              int *mine) {
    const char *why = NULL;
    *mine = 1;
    if (!strcmp(k, "func_share"))
        hwx_arg_f64("func_share", v, 0, 1, 1, 0, &t->func_share, &why);
    else if (!strcmp(k, "loop_share"))
        hwx_arg_f64("loop_share", v, 0, 1, 1, 0, &t->loop_share, &why);
    else if (!strcmp(k, "spec_share"))
        hwx_arg_f64("spec_share", v, 0, 1, 1, 0, &t->spec_share, &why);
    else if (!strcmp(k, "spec_inv"))
        hwx_arg_f64("spec_inv", v, 0, 1, 1, 0, &t->spec_inv, &why);
    else if (!strcmp(k, "stack_interval"))
        hwx_arg_u64("stack_interval", v, 0, UINT32_MAX, &t->stack_interval, &why);
    else
        *mine = 0;
    return why;
}

/* ---- state ------------------------------------------------------------------ */

static struct {
    hwx_opts o;
    hwlua_tier tier;
    hwx_session *s;
    void *mem;
    long base;       /* hwlua_left right after the last sync            */
    hwp_insn cur;    /* the record of the last bytecode with an event   */
    int have_cur;
    hwlua_map funcs; /* function code -> [0] calls, [1] line, [2] source,
                        [3] 1 for a Lua function                        */
    hwlua_map loops; /* loop header -> [0] iterations, [1] line, [2] src */
    hwlua_map sites; /* value site -> [0] HWLUA_SITE_*                   */
    uint64_t ncalls, niters;
    uint64_t fetched;   /* bytecodes fetched, as of the last sync         */
    uint64_t stack_due; /* the fetch that takes the next stack sample     */
    hwx_out *bbv;       /* bbv=FILE                                        */
    int done;
} G;

/* Source names, copied: a Proto may be collected before the report. */
#define HWLUA_SOURCES 256
static struct {
    const void *key;
    char name[96];
} hwlua__src[HWLUA_SOURCES];
static unsigned hwlua__nsrc;

static unsigned hwlua__source(const Proto *p) {
    unsigned i;
    const char *s = p->source ? getstr(p->source) : "?";
    for (i = 0; i < hwlua__nsrc; i++)
        if (hwlua__src[i].key == p->source) return i;
    if (hwlua__nsrc == HWLUA_SOURCES) return 0;
    hwlua__src[hwlua__nsrc].key = p->source;
    if (*s == '@' || *s == '=') s++;
    snprintf(hwlua__src[hwlua__nsrc].name, sizeof hwlua__src[0].name, "%s", s);
    return hwlua__nsrc++;
}

/* ---- feeding the session ----------------------------------------------------- */

/* Everything fetched since the last sync up to, not including, the
 * bytecode at hand goes to the session: the pending record, then the
 * event-free bytecodes in bulk. Returns 1 if `at` is the bytecode of the
 * pending record (a second hook of the same bytecode); `at` NULL hands
 * over everything (the end of the run). */
static int hwlua__sync(const Instruction *at) {
    long k = G.base - hwlua_left; /* bytecodes fetched since the last sync */
    G.fetched += (uint64_t)k;
    if (G.have_cur && k == 0 && G.cur.pc == (uint64_t)(uintptr_t)at) return 1;
    if (G.have_cur) {
        hwx_session_insn(G.s, &G.cur);
        G.have_cur = 0;
    }
    if (!at) k++; /* the end of the run: no bytecode at hand */
    if (k > 1) hwx_session_skip(G.s, (uint64_t)(k - 1));
    return 0;
}

/* After a sync: count down to the next bytecode a model must see. The
 * pending record is one fetch the session has not seen yet. */
static long hwlua__rearm(void) {
    uint64_t u = hwx_session_until(G.s);
    uint64_t stk = G.stack_due > G.fetched ? G.stack_due - G.fetched : 1;
    long left = G.have_cur ? (long)(u > 1 ? u - 1 : 1) : (long)u;
    if (u > (uint64_t)LONG_MAX / 2) left = LONG_MAX / 2;
    /* bbv=: the bytecode after a branch starts a block, named by its pc;
     * the session learns of the pending branch only at the next sync. */
    if (G.bbv && G.have_cur && hwp_cls_is_branch(G.cur.cls)) left = 1;
    if (stk < (uint64_t)left) left = (long)stk;
    G.base = hwlua_left = left;
    return left;
}

static hwp_insn *hwlua__record(const Instruction *at, uint32_t cls) {
    if (!hwlua__sync(at)) {
        memset(&G.cur, 0, sizeof G.cur);
        G.cur.pc = (uint64_t)(uintptr_t)at;
        G.cur.next_pc = G.cur.pc + sizeof(Instruction);
        G.cur.cls = cls;
        G.have_cur = 1;
    } else if (cls != HWP_CLS_OTHER) {
        G.cur.cls = cls;
    }
    return &G.cur;
}

static void hwlua__stack_sample(lua_State *L);

long hwlua_select(lua_State *L, const Proto *p, const Instruction *at) {
    (void)p;
    hwlua__record(at, HWP_CLS_OTHER);
    if (G.fetched >= G.stack_due) {
        hwlua__stack_sample(L);
        /* on a fixed grid: a sample taken late (an event hook synced
         * past the due fetch) does not move the next one */
        while (G.stack_due <= G.fetched) G.stack_due += G.tier.stack_interval;
    }
    return hwlua__rearm();
}

/* ---- the hooks ----------------------------------------------------------------- */

/* A value as the models see it: the type tag in the top byte, and the
 * payload (an integer, a float's bits, an object's address) below. */
static uint64_t hwlua__bits(const TValue *v) {
    uint64_t payload;
    if (ttisinteger(v)) payload = (uint64_t)ivalue(v);
    else if (ttisfloat(v)) memcpy(&payload, &fltvalue(v), sizeof payload);
    else if (iscollectable(v)) payload = (uint64_t)(uintptr_t)gcvalue(v);
    else if (ttislcf(v)) payload = (uint64_t)(uintptr_t)fvalue(v);
    else payload = 0;
    return ((uint64_t)rawtt(v) << 56) ^ (payload & 0x00FFFFFFFFFFFFFFull);
}

void hwlua_cond(const Instruction *at, int taken) {
    /* A test is followed by the jump it takes (Lua 5.4's lvm.c). */
    const Instruction *target = at + 2 + GETARG_sJ(at[1]);
    hwp_insn *r = hwlua__record(at, HWP_CLS_BR_COND);
    r->addr = (uint64_t)(uintptr_t)target;
    r->next_pc = taken ? r->addr : (uint64_t)(uintptr_t)(at + 2);
    r->events |= taken ? HWP_EV_TAKEN : 0;
    hwlua__rearm();
}

/* A loop is named by the line of its loop statement, as LuaJIT names its
 * traces: a for loop's closing instruction carries the `for` line, a
 * while or repeat loop's back edge jumps to its test. */
static void hwlua__iteration(const Proto *p, const Instruction *at,
                             const Instruction *header) {
    hwlua_ent *e;
    if (!G.o.exact) return;
    G.niters++;
    e = hwlua_map_get(&G.loops, (uint64_t)(uintptr_t)header);
    if (e && e->v[0]++ == 0) {
        OpCode op = GET_OPCODE(*at);
        const Instruction *named = op == OP_FORLOOP || op == OP_TFORLOOP ? at : header;
        e->v[1] = (uint64_t)luaG_getfuncline(p, (int)(named - p->code));
        e->v[2] = hwlua__source(p);
    }
}

void hwlua_jump(const Proto *p, const Instruction *at, const Instruction *target) {
    hwp_insn *r = hwlua__record(at, HWP_CLS_JUMP);
    r->addr = r->next_pc = (uint64_t)(uintptr_t)target;
    r->events |= HWP_EV_TAKEN;
    if (target <= at) hwlua__iteration(p, at, target);
    hwlua__rearm();
}

void hwlua_loop(const Proto *p, const Instruction *at, int taken,
                const Instruction *target) {
    hwp_insn *r = hwlua__record(at, HWP_CLS_BR_COND);
    r->addr = (uint64_t)(uintptr_t)target;
    if (taken) {
        r->next_pc = r->addr;
        r->events |= HWP_EV_TAKEN;
        hwlua__iteration(p, at, target);
    }
    hwlua__rearm();
}

/* Where a function's code is: a Lua function's bytecode array, a C
 * function's entry point (1 for a call through __call). */
static uint64_t hwlua__fn_key(const TValue *fn, const Proto **lp) {
    *lp = NULL;
    if (ttisLclosure(fn)) {
        *lp = clLvalue(fn)->p;
        return (uint64_t)(uintptr_t)(*lp)->code;
    }
    if (ttislcf(fn)) return (uint64_t)(uintptr_t)fvalue(fn);
    if (ttisCclosure(fn)) return (uint64_t)(uintptr_t)clCvalue(fn)->f;
    return 1;
}

/* Calls and returns must pair for the path stacks (the model's and the
 * exact one), which push a path at a call and pop it at a return. A C
 * function returns without a bytecode, a tail call's frame is replaced
 * and returns once for two calls, and a Lua function called from C (a
 * sort comparator, a coroutine body) returns with no call seen: those
 * transfers are shown as indirect jumps, which end the current path and
 * start one at their target without touching the stack. */
void hwlua_call(const Instruction *at, const TValue *fn, int tail) {
    const Proto *lp;
    uint64_t key = hwlua__fn_key(fn, &lp);
    hwp_insn *r = hwlua__record(at, tail || (!lp && key != 1) ? HWP_CLS_INDIRECT : HWP_CLS_CALL);
    r->addr = r->next_pc = key;
    r->events |= HWP_EV_TAKEN;
    if (G.o.exact) {
        hwlua_ent *e = hwlua_map_get(&G.funcs, key);
        G.ncalls++;
        if (e && e->v[0]++ == 0 && lp) {
            e->v[1] = (uint64_t)lp->linedefined;
            e->v[2] = hwlua__source(lp);
            e->v[3] = 1;
        }
    }
    hwlua__rearm();
}

/* A return goes to the bytecode after its call (the caller's saved pc):
 * the path profiler checks that the next branch lies at or after it. A
 * return to C is an indirect jump to nowhere in the bytecode (0), and not
 * taken, so that RAP, which profiles taken transfers, does not count it
 * (the exact call counts see no return either). */
void hwlua_ret(const Instruction *at, const CallInfo *ci) {
    int fresh = (ci->callstatus & CIST_FRESH) != 0;
    hwp_insn *r = hwlua__record(at, fresh ? HWP_CLS_INDIRECT : HWP_CLS_RET);
    r->next_pc = fresh ? 0 : (uint64_t)(uintptr_t)ci->previous->u.l.savedpc;
    hwlua__rearm();
}

/* What a value site's value is: the operands' types, or a table read's
 * value (the two are different bytecodes in lvm.c). */
enum { HWLUA_SITE_TYPE = 1, HWLUA_SITE_VALUE = 2 };

static void hwlua__site(const Instruction *at, uint64_t kind) {
    hwlua_ent *e;
    if (G.o.exact && (e = hwlua_map_get(&G.sites, (uint64_t)(uintptr_t)at)) != NULL)
        e->v[0] = kind;
}

void hwlua_load(const Instruction *at, const TValue *v) {
    hwp_insn *r = hwlua__record(at, HWP_CLS_LOAD);
    hwlua__site(at, HWLUA_SITE_VALUE);
    r->value = hwlua__bits(v);
    hwlua__rearm();
}

/* Operands are shown to the value models as a load of their type pair:
 * the tags of both operands, which is what a JIT specialises on. A
 * comparison's record then also gets its branch from hwlua_cond. */
void hwlua_operands(const Instruction *at, const TValue *a, const TValue *b) {
    hwp_insn *r = hwlua__record(at, HWP_CLS_LOAD);
    hwlua__site(at, HWLUA_SITE_TYPE);
    r->value = ((uint64_t)rawtt(a) << 8) | (b ? rawtt(b) : 0xFFu);
    hwlua__rearm();
}

/* ---- the call profile ----------------------------------------------------------
 * Stacks as one string each, outermost frame first, frames joined by
 * ';'. A Lua function is "source:linedefined" ("source:main" for a
 * chunk), stable whatever name a call site gives it; a C function is the
 * name Lua knows for it at its call ("pcall", "sort"), else "[C]". At
 * most HWLUA_FRAMES innermost frames are kept ("[...]" stands for the
 * rest); a stack that finds the table full is counted as dropped. */
#define HWLUA_FRAMES 64
#define HWLUA_STACKS 4096

static struct {
    char *stack[HWLUA_STACKS];
    uint64_t count[HWLUA_STACKS];
    unsigned n;
    uint64_t samples, dropped;
} S;

static size_t hwlua__frame(lua_State *L, CallInfo *ci, char *buf, size_t cap) {
    if (isLua(ci)) {
        const Proto *p = ci_func(ci)->p;
        const char *src = p->source ? getstr(p->source) : "?";
        if (*src == '@' || *src == '=') src++;
        if (p->linedefined == 0) return (size_t)snprintf(buf, cap, "%s:main", src);
        return (size_t)snprintf(buf, cap, "%s:%d", src, p->linedefined);
    } else {
        lua_Debug ar;
        memset(&ar, 0, sizeof ar);
        ar.i_ci = ci;
        /* "n" reads the caller's saved pc, which a call always saves */
        if (lua_getinfo(L, "n", &ar) && ar.name) return (size_t)snprintf(buf, cap, "%s", ar.name);
        return (size_t)snprintf(buf, cap, "[C]");
    }
}

static void hwlua__stack_sample(lua_State *L) {
    CallInfo *ci, *chain[HWLUA_FRAMES];
    char buf[HWLUA_FRAMES * 100], *q;
    size_t len = 0, k;
    unsigned n = 0, i, h;
    int deeper = 0;
    S.samples++;
    for (ci = L->ci; ci && ci != &L->base_ci; ci = ci->previous) {
        if (n == HWLUA_FRAMES) {
            deeper = 1;
            break;
        }
        chain[n++] = ci;
    }
    if (deeper) len = (size_t)snprintf(buf, sizeof buf, "[...]");
    for (i = n; i-- > 0 && len < sizeof buf - 1;) {
        if (len) buf[len++] = ';';
        k = hwlua__frame(L, chain[i], buf + len, sizeof buf - len);
        len += k < sizeof buf - len ? k : sizeof buf - len - 1;
    }
    buf[len] = '\0';
    for (q = buf; *q; q++) /* the folded format's separators */
        if (*q == ' ') *q = '_';
    h = (unsigned)(hwlua_map_hash((uint64_t)len * 131u + (unsigned char)buf[len / 2]) &
                   (HWLUA_STACKS - 1u));
    for (i = 0; i < HWLUA_STACKS; i++, h = (h + 1u) & (HWLUA_STACKS - 1u)) {
        if (!S.stack[h]) {
            if (!(S.stack[h] = strdup(buf))) break;
            S.n++;
        }
        if (!strcmp(S.stack[h], buf)) {
            S.count[h]++;
            return;
        }
    }
    S.dropped++;
}

/* ,"call_stacks":{...} (docs/report-format.md) */
static void hwlua__stacks_json(const hwp_writer *w) {
    unsigned i;
    int first = 1;
    hwp_put_str_u64(w, ",\"call_stacks\":{\"interval\":", G.tier.stack_interval);
    hwp_put_json_u64(w, "samples", S.samples);
    hwp_put_json_u64(w, "dropped", S.dropped);
    hwp_put_str(w, ",\"stacks\":[");
    for (i = 0; i < HWLUA_STACKS; i++) {
        char *f, *semi;
        if (!S.stack[i]) continue;
        hwp_put_str(w, first ? "{\"frames\":[" : ",{\"frames\":[");
        first = 0;
        for (f = S.stack[i];; f = semi + 1) {
            semi = strchr(f, ';');
            if (semi) *semi = '\0';
            hwp_put_json_str(w, f);
            if (!semi) break;
            *semi = ';';
            hwp_put_str(w, ",");
        }
        hwp_put_str_u64(w, "],\"count\":", S.count[i]);
        hwp_put_str(w, "}");
    }
    hwp_put_str(w, "]}");
}

/* ---- the end: reports and tiering decisions -------------------------------- */

typedef struct hwlua_text {
    char *s;
    size_t n, cap;
} hwlua_text;

static void hwlua__text_write(void *ctx, const char *p, size_t n) {
    hwlua_text *t = (hwlua_text *)ctx;
    if (t->n + n + 1 > t->cap) {
        size_t cap = (t->n + n + 1) * 2;
        char *q = (char *)realloc(t->s, cap);
        if (!q) return; /* the reload below then fails and says so */
        t->s = q;
        t->cap = cap;
    }
    memcpy(t->s + t->n, p, n);
    t->n += n;
    t->s[t->n] = '\0';
}

/* The session's JSON report, where the models' decisions are read back
 * from, as a JIT would load a saved profile. */
static hwlua_text hwlua__json(void) {
    hwlua_text t = {NULL, 0, 0};
    hwp_writer w;
    w.write = hwlua__text_write;
    w.ctx = &t;
    hwx_session_report_json(G.s, &w);
    return t;
}

/* The span [*at, *end) of models.<model>, or of its member <sub> when sub
 * is not NULL; 0 when the report has none. */
static int hwlua__member(const hwlua_text *t, const char *model, const char *sub,
                         size_t *at, size_t *end) {
    const char *want[3] = {"models", model, sub};
    unsigned depth = 0, n = sub ? 3 : 2;
    hwp_json j;
    char key[32];
    if (!t->s) return 0;
    hwp_json_init(&j, t->s, t->n);
    if (!hwp_json_object(&j)) return 0;
    while (hwp_json_member(&j, key, sizeof key)) {
        if (!hwx_streq(key, want[depth])) {
            hwp_json_skip(&j);
            continue;
        }
        if (++depth == n) {
            *at = j.pos;
            hwp_json_skip(&j);
            *end = j.pos;
            return 1;
        }
        if (!hwp_json_object(&j)) return 0;
    }
    return 0;
}

/* A profile read back into freshly allocated storage: *mem holds its
 * table, the handle is returned (NULL: no such profile, or it did not
 * load; the model column is then empty). */
#define HWLUA__LOAD(T, bytes_fn, init_fn, read_desc_fn, read_fn, t, model, sub, mem) \
    do {                                                                         \
        size_t at_, end_;                                                        \
        T##_desc d_;                                                             \
        hwp_json_err e_;                                                         \
        *(mem) = NULL;                                                           \
        if (!hwlua__member(t, model, sub, &at_, &end_) ||                        \
            read_desc_fn(&d_, (t)->s + at_, end_ - at_, &e_) != HWP_OK)          \
            return NULL;                                                         \
        if ((h = (T *)malloc(sizeof *h)) == NULL ||                              \
            (*(mem) = malloc(bytes_fn(&d_))) == NULL ||                          \
            init_fn(h, *(mem), bytes_fn(&d_), &d_) != HWP_OK ||                  \
            read_fn(h, (t)->s + at_, end_ - at_, &e_) != HWP_OK) {               \
            free(h);                                                             \
            free(*(mem));                                                        \
            *(mem) = NULL;                                                       \
            return NULL;                                                         \
        }                                                                        \
    } while (0)

static hwp_status hwlua__rap_init(hwp_rap *r, void *m, size_t n, const hwp_rap_desc *d) {
    return hwp_rap_init(r, m, n, d, NULL);
}
static hwp_status hwlua__hpt_init(hwp_hpt *h, void *m, size_t n, const hwp_hpt_desc *d) {
    return hwp_hpt_init(h, m, n, d, NULL);
}

static hwp_rap *hwlua__rap_profile(const hwlua_text *t, void **mem) {
    hwp_rap *h = NULL;
    HWLUA__LOAD(hwp_rap, hwp_rap_bytes, hwlua__rap_init, hwp_rap_read_desc, hwp_rap_read_json,
                t, "rap", NULL, mem);
    return h;
}

static hwp_strat_acc *hwlua__strat_profile(const hwlua_text *t, void **mem) {
    hwp_strat_acc *h = NULL;
    HWLUA__LOAD(hwp_strat_acc, hwp_strat_acc_bytes, hwp_strat_acc_init, hwp_strat_acc_read_desc,
                hwp_strat_acc_read_json, t, "stratified", "profile", mem);
    return h;
}

static hwp_hpt *hwlua__hpt_profile(const hwlua_text *t, void **mem) {
    hwp_hpt *h = NULL;
    HWLUA__LOAD(hwp_hpt, hwp_hpt_bytes, hwlua__hpt_init, hwp_hpt_read_desc, hwp_hpt_read_json,
                t, "pathprof", "hpt", mem);
    return h;
}

/* One decision kind: the exact profile's choices against the model's. */
typedef struct hwlua_agree {
    unsigned exact, model, both;
} hwlua_agree;

static void hwlua__count(hwlua_agree *a, int ex, int mo, int same) {
    a->exact += ex;
    a->model += mo;
    a->both += ex && mo && same;
}

static void hwlua__decide(const hwlua_map *m, double share, uint64_t total,
                          const hwp_rap *rap, hwlua_agree *a, FILE *f,
                          const char *what) {
    size_t i;
    memset(a, 0, sizeof *a);
    for (i = 0; i < m->cap; i++) {
        hwlua_ent *e = &m->e[i];
        int ex, mo = 0;
        if (!e->key) continue;
        ex = (double)e->v[0] >= share * (double)total;
        if (rap) {
            hwp_rap_est est;
            /* The key's estimate, between RAP's two bounds. */
            if (hwp_rap_query(rap, e->key, e->key, &est) == HWP_OK)
                mo = est.estimate >= share * (double)total;
        }
        hwlua__count(a, ex, mo, 1);
        if (ex || mo)
            fprintf(f, "  %-4s %-5s %s:%llu  %llu\n", what,
                    ex && mo ? "both" : ex ? "exact" : "model",
                    e->v[3] || m == &G.loops ? hwlua__src[e->v[2]].name : "(C)",
                    (unsigned long long)e->v[1], (unsigned long long)e->v[0]);
    }
}

/* Specialisations. A site (a bytecode with operands or a table read) is
 * specialised on its most frequent type pair or value when it carries at
 * least spec_share of the run's value events and that type or value has
 * at least spec_inv of the site's events. The exact side counts every
 * event (the session's exact (pc, value) table); the model side asks the
 * stratified profile, which also needs min_samples samples at the site
 * before it calls it invariant (hwp_strat_acc_top_pcs). A decision is the
 * pair (site, value): the two agree when they pick the same value. */
static void hwlua__spec(FILE *f, const hwp_strat_acc *acc, hwlua_agree *ag) {
    const hwx_xtab *v = &G.s->exact->val;
    hwlua_map top = {NULL, 0, 0, 0}; /* site -> [0] n, [1] top count, [2] top value */
    hwp_strat_pc *rows = NULL;
    hwp_strat_acc_stats st;
    size_t nrows = 0, i, r;
    uint64_t total = 0;
    memset(ag, 0, 2 * sizeof *ag);
    for (i = 0; i <= v->mask; i++) {
        const hwx_xent *x = &v->e[i];
        hwlua_ent *e;
        if (!x->count || (e = hwlua_map_get(&top, x->k1)) == NULL) continue;
        e->v[0] += x->count;
        total += x->count;
        if (x->count > e->v[1] || (x->count == e->v[1] && x->k2 < e->v[2])) {
            e->v[1] = x->count;
            e->v[2] = x->k2;
        }
    }
    if (acc && hwp_strat_acc_get_stats(acc, &st) == HWP_OK) {
        nrows = hwp_strat_acc_top_pcs(acc, HWP_STRAT_KIND_VALUE, NULL, 0);
        rows = (hwp_strat_pc *)malloc((nrows ? nrows : 1) * sizeof *rows);
        if (!rows) nrows = 0;
        nrows = rows ? hwp_strat_acc_top_pcs(acc, HWP_STRAT_KIND_VALUE, rows, nrows) : 0;
    }
    for (i = 0; i < G.sites.cap; i++) {
        const hwlua_ent *s = &G.sites.e[i];
        const hwlua_ent *e;
        const hwp_strat_pc *m = NULL;
        uint64_t ew = 0;
        int ex = 0, mo = 0;
        if (!s->key) continue;
        if ((e = hwlua_map_get(&top, s->key)) != NULL && e->v[0]) {
            ex = (double)e->v[0] >= G.tier.spec_share * (double)total &&
                 (double)e->v[1] >= G.tier.spec_inv * (double)e->v[0];
            ew = e->v[2];
        }
        for (r = 0; r < nrows; r++)
            if (rows[r].pc == s->key) m = &rows[r];
        if (m)
            mo = (double)m->count >= G.tier.spec_share * (double)st.total &&
                 m->invariance >= G.tier.spec_inv;
        hwlua__count(&ag[s->v[0] == HWLUA_SITE_VALUE], ex, mo, m && m->top_w == ew);
        if (ex || mo) {
            fprintf(f, "  %-5s %-5s site %#llx  exact %#llx %llu of %llu", 
                     s->v[0] == HWLUA_SITE_VALUE ? "value" : "type",
                     ex && mo && m->top_w == ew ? "both" : ex && mo ? "diff" : ex ? "exact" : "model",
                     (unsigned long long)s->key, (unsigned long long)ew,
                     (unsigned long long)(e ? e->v[1] : 0), (unsigned long long)(e ? e->v[0] : 0));
            if (m)
                fprintf(f, "  model %#llx %.3f [%.3f, %.3f] of %llu samples",
                        (unsigned long long)m->top_w, m->invariance, m->lo, m->hi,
                        (unsigned long long)m->samples);
            fputc('\n', f);
        }
    }
    free(rows);
    free(top.e);
}

/* Hot paths. For each loop and Lua function the exact profile compiles
 * (paths start at a loop's header after its back edge and at a function's
 * code after a call), the path to lay out straight is the hottest one
 * starting there: from the exact path counts, and from the Hot Path
 * Table. They agree when they name the same path. */
static void hwlua__hottest(const hwlua_map *m, double share, uint64_t total,
                           const hwp_path_row *rows, size_t nrows, hwlua_agree *a, FILE *f,
                           const char *what) {
    const hwx_xtab *p = &G.s->exact->path;
    size_t i, k;
    for (i = 0; i < m->cap; i++) {
        const hwlua_ent *e = &m->e[i];
        uint64_t es = 0, ec = 0, ms = 0, mc = 0;
        if (!e->key || (m == &G.funcs && !e->v[3]) || (double)e->v[0] < share * (double)total)
            continue;
        for (k = 0; k <= p->mask; k++) {
            const hwx_xent *x = &p->e[k];
            if (x->count && x->k1 == e->key &&
                (x->count > ec || (x->count == ec && x->k2 < es))) {
                ec = x->count;
                es = x->k2;
            }
        }
        /* rows are hottest first, ties by shape */
        for (k = 0; k < nrows && !mc; k++)
            if (rows[k].pd.start == e->key) {
                mc = rows[k].count;
                ms = rows[k].pd.shape;
            }
        if (!ec && !mc) continue; /* entered only from C: no path starts there */
        hwlua__count(a, ec != 0, mc != 0, es == ms);
        fprintf(f, "  %-4s %-5s %s:%llu  exact len %u dirs %#llx (%llu)", what,
                ec && mc && es == ms ? "both" : ec && mc ? "diff" : ec ? "exact" : "model",
                hwlua__src[e->v[2]].name, (unsigned long long)e->v[1],
                hwp_path_pd_len(&(hwp_path_pd){e->key, es}),
                (unsigned long long)hwp_path_pd_dirs(&(hwp_path_pd){e->key, es}),
                (unsigned long long)ec);
        if (mc)
            fprintf(f, "  HPT len %u dirs %#llx (%llu)",
                    hwp_path_pd_len(&(hwp_path_pd){e->key, ms}),
                    (unsigned long long)hwp_path_pd_dirs(&(hwp_path_pd){e->key, ms}),
                    (unsigned long long)mc);
        fputc('\n', f);
    }
}

static void hwlua__agree_line(FILE *f, const char *what, const hwlua_agree *a) {
    double p = a->model ? (double)a->both / a->model : 1.0;
    double r = a->exact ? (double)a->both / a->exact : 1.0;
    fprintf(f, "  %-10s exact %u, model %u, both %u: precision %.3f recall %.3f\n",
            what, a->exact, a->model, a->both, p, r);
}

static void hwlua__tiering(FILE *f) {
    void *rmem = NULL, *smem = NULL, *hmem = NULL;
    hwlua_text t = hwlua__json();
    hwp_rap *rap = (G.o.models & HWX_M_RAP) ? hwlua__rap_profile(&t, &rmem) : NULL;
    hwp_strat_acc *acc = (G.o.models & HWX_M_STRAT) ? hwlua__strat_profile(&t, &smem) : NULL;
    hwp_hpt *hpt = (G.o.models & HWX_M_PATH) ? hwlua__hpt_profile(&t, &hmem) : NULL;
    hwp_path_row *rows = NULL;
    size_t nrows = hpt ? hwp_hpt_export(hpt, NULL, 0) : 0;
    uint64_t total = G.ncalls + G.niters;
    hwlua_agree fa, la, sa[2], pa;
    free(t.s);
    if (nrows && (rows = (hwp_path_row *)malloc(nrows * sizeof *rows)) != NULL)
        nrows = hwp_hpt_export(hpt, rows, nrows);
    else
        nrows = 0;
    fprintf(f, "\n-- tiering decisions (functions with >= %.2f%%, loops with >= %.2f%% "
               "of calls + back edges) --\n",
            100 * G.tier.func_share, 100 * G.tier.loop_share);
    if (!rap) fprintf(f, "  (no RAP profile: the model column is empty)\n");
    hwlua__decide(&G.funcs, G.tier.func_share, total, rap, &fa, f, "func");
    hwlua__decide(&G.loops, G.tier.loop_share, total, rap, &la, f, "loop");
    fprintf(f, "\n-- specialisations (sites with >= %.2f%% of value events whose type or "
               "value has >= %.2f invariance) --\n",
            100 * G.tier.spec_share, G.tier.spec_inv);
    if (!acc) fprintf(f, "  (no stratified profile: the model column is empty)\n");
    hwlua__spec(f, acc, sa);
    fprintf(f, "\n-- hot paths (the hottest path of each loop and function compiled) --\n");
    if (!hpt) fprintf(f, "  (no Hot Path Table: the model column is empty)\n");
    memset(&pa, 0, sizeof pa);
    hwlua__hottest(&G.funcs, G.tier.func_share, total, rows, nrows, &pa, f, "func");
    hwlua__hottest(&G.loops, G.tier.loop_share, total, rows, nrows, &pa, f, "loop");
    fprintf(f, "\n");
    hwlua__agree_line(f, "functions", &fa);
    hwlua__agree_line(f, "loops", &la);
    hwlua__agree_line(f, "types", &sa[0]);
    hwlua__agree_line(f, "values", &sa[1]);
    hwlua__agree_line(f, "paths", &pa);
    free(rows);
    free(rmem);
    free(smem);
    free(hmem);
    free(rap);
    free(acc);
    free(hpt);
}

static void hwlua__finish(void) {
    hwx_out out;
    const char *why = NULL;
    if (G.done || !G.s) return;
    G.done = 1;
    hwlua_on = 0;
    hwlua__sync(NULL); /* the pending record and the bytecodes after it */
    hwx_session_finish(G.s); /* the vectors' last line */
    if (G.bbv && hwx_out_close(G.bbv, &why) != HWP_OK) fprintf(stderr, "lua-hwprof: %s\n", why);
    if (G.o.exact) {
        size_t n = hwx_session_eval_bytes(G.s);
        void *scratch = malloc(n ? n : 1);
        if (scratch) hwx_session_evaluate(G.s, scratch, n);
        free(scratch);
    }
    if (hwx_out_open(&out, G.o.report, &why) == HWP_OK) {
        hwx_session_report_text(G.s, &out.w);
        if (G.o.exact) {
            FILE *f = (FILE *)out.f;
            fflush(f);
            hwlua__tiering(f);
        }
        if (hwx_out_close(&out, &why) != HWP_OK)
            fprintf(stderr, "lua-hwprof: %s\n", why);
    } else {
        fprintf(stderr, "lua-hwprof: %s\n", why);
    }
    if (G.o.json[0]) {
        if (hwx_out_open(&out, G.o.json, &why) == HWP_OK) {
            /* the session's object with the call profile as one more
             * member: its text up to the closing brace, then ours */
            hwlua_text t = {NULL, 0, 0};
            hwp_writer tw;
            tw.write = hwlua__text_write;
            tw.ctx = &t;
            hwx_session_report_json(G.s, &tw);
            while (t.n && t.s[t.n - 1] == '\n') t.n--;
            if (t.n && t.s[t.n - 1] == '}') {
                hwp_put(&out.w, t.s, t.n - 1);
                if (G.tier.stack_interval) hwlua__stacks_json(&out.w);
                hwp_put_str(&out.w, "}\n");
            } else { /* out of memory for the copy: the session alone */
                hwx_session_report_json(G.s, &out.w);
            }
            free(t.s);
            if (hwx_out_close(&out, &why) != HWP_OK)
                fprintf(stderr, "lua-hwprof: %s\n", why);
        } else {
            fprintf(stderr, "lua-hwprof: %s\n", why);
        }
    }
}

/* A signal that would end the process: write the report, then let the
 * signal do what it would have done. */
static void hwlua__on_signal(int sig) {
    hwlua__finish();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void hwlua__fail(const char *why) {
    fprintf(stderr, "lua-hwprof: HWPROF: %s\n", why);
    _exit(2);
}

__attribute__((constructor)) static void hwlua__start(void) {
    const char *env = getenv("HWPROF"), *why = NULL;
    char buf[4096], *save = NULL, *kv;
    size_t n;
    int user_key = 0, user_eps = 0;
    G.tier.func_share = 0.01;
    G.tier.loop_share = 0.01;
    G.tier.stack_interval = 10007; /* prime: no loop's period divides it */
    G.tier.spec_share = 0.01;
    G.tier.spec_inv = 0.95;
    if (!env || !*env) return;
    hwx_opts_default(&G.o);
    if (strlen(env) >= sizeof buf) hwlua__fail("longer than 4095 bytes");
    strcpy(buf, env);
    for (kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        int mine;
        if (!eq) hwlua__fail("expected key=value items separated by commas");
        *eq = '\0';
        if ((why = hwlua__opt(&G.tier, kv, eq + 1, &mine)) != NULL) hwlua__fail(why);
        if (!mine && hwx_opts_set(&G.o, kv, eq + 1, &why) != HWP_OK) hwlua__fail(why);
        user_key |= hwx_streq(kv, "key") || hwx_streq(kv, "rap_key");
        user_eps |= hwx_streq(kv, "rap_eps");
    }
    /* A VM's RAP profiles where control goes: call targets and loop
     * headers, unless the user chose another key. */
    if (!user_key && hwx_opts_set(&G.o, "rap_key", "target", &why) != HWP_OK)
        hwlua__fail(why);
    /* RAP's counts are within eps * n: a decision at a share s of the
     * events needs eps <= s, so the smaller share sets the default. */
    if (!user_eps) {
        char eps[32];
        snprintf(eps, sizeof eps, "%g",
                 G.tier.func_share < G.tier.loop_share ? G.tier.func_share
                                                       : G.tier.loop_share);
        if (hwx_opts_set(&G.o, "rap_eps", eps, &why) != HWP_OK) hwlua__fail(why);
    }
    if (hwx_host_check(&G.o, &why) != HWP_OK) hwlua__fail(why);
    n = hwx_session_bytes(&G.o);
    G.s = (hwx_session *)malloc(sizeof *G.s);
    G.mem = malloc(n);
    if (!G.s || !G.mem || hwx_session_init(G.s, G.mem, n, &G.o) != HWP_OK)
        hwlua__fail(G.s && G.mem ? hwp_why(G.s) : "out of memory");
    /* Each model's natural events (docs/lua.md): */
    if (G.o.models & HWX_M_RAP) /* calls and back edges */
        hwlua_on |= HWLUA_EV_CALL | HWLUA_EV_JUMP;
    if (G.o.models & HWX_M_PATH) /* paths within and across functions */
        hwlua_on |= HWLUA_EV_COND | HWLUA_EV_JUMP | HWLUA_EV_CALL | HWLUA_EV_RET;
    if (G.o.models & HWX_M_STRAT) /* operand types and table values */
        hwlua_on |= HWLUA_EV_OPND | HWLUA_EV_LOAD;
    if (G.o.models & HWX_M_COPROC) /* table reads */
        hwlua_on |= HWLUA_EV_LOAD;
    if (G.o.bbv[0]) { /* block boundaries: every control transfer */
        G.bbv = (hwx_out *)malloc(sizeof *G.bbv);
        if (!G.bbv || hwx_out_open(G.bbv, G.o.bbv, &why) != HWP_OK)
            hwlua__fail(G.bbv ? why : "out of memory");
        hwx_session_bbv_out(G.s, &G.bbv->w);
        hwlua_on |= HWLUA_EV_COND | HWLUA_EV_JUMP | HWLUA_EV_CALL | HWLUA_EV_RET;
    }
    if (G.o.exact) /* the exact profiles see everything */
        hwlua_on |= HWLUA_EV_COND | HWLUA_EV_JUMP | HWLUA_EV_CALL | HWLUA_EV_RET |
                    HWLUA_EV_LOAD | HWLUA_EV_OPND;
    G.stack_due = G.tier.stack_interval ? G.tier.stack_interval : UINT64_MAX;
    hwlua__rearm();
    atexit(hwlua__finish);
    signal(SIGTERM, hwlua__on_signal);
    signal(SIGHUP, hwlua__on_signal);
}
