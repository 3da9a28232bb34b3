/* SPDX-License-Identifier: MIT */
/* examples/lua/hwlua.c: hwprof inside Lua 5.4's interpreter loop.
 *
 * Two paths. By default (layer=vm) the hooks go to hwlua_vm.c, straight
 * into hwprof/vm.h's events: no record, no session, the models fed in
 * bursts (docs/lua.md, "The VM layer path"); every hook below hands over
 * at its top. layer=session is the path this file implements: every
 * event a model wants, whole, through the hosts' session, with what only
 * it has (the call profile, the checkpointed tiering decisions, BBVs,
 * traces, the core model, model parameters).
 *
 * Session path. The hooks of hwlua.h arrive here and become the shared event record
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
 * taken twice, at checkpoints during the run: from the exact counts and
 * from the models' profiles (docs/lua.md, "Tiering decisions"). The
 * model's go to a callback as they are taken (hwlua_on_decision;
 * decisions=FILE writes one line each).
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
#include "hwlua_int.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwx_host.h"
#include "hwprof/pathprof.h"
#include "hwprof/rap.h"
#include "hwprof/stratified.h"
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
    uint64_t decide_interval; /* bytecodes between decision checkpoints */
    uint64_t floor;    /* 1: the models' hooks fire and return at once   */
    uint32_t layer;    /* 1: layer=vm (the default), the hooks into
                          hwprof/vm.h; 0: layer=session                  */
    const char *session_opt; /* the last option only the session takes */
    hwlua_vm_opts vm;  /* layer=vm's own settings                        */
    char decisions[HWX_PATH_MAX]; /* stream the model's decisions here  */
} hwlua_tier;

static const char *hwlua__opt(hwlua_tier *t, const char *k, const char *v,
                              int *mine) {
    static const char *const session_only[] = {"func_share", "loop_share", "spec_share",
                                               "stack_interval", "decide_interval", NULL};
    const char *why = NULL;
    size_t i;
    *mine = 1;
    for (i = 0; session_only[i]; i++)
        if (!strcmp(k, session_only[i])) t->session_opt = session_only[i];
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
    else if (!strcmp(k, "decide_interval"))
        hwx_arg_u64("decide_interval", v, 1, UINT32_MAX, &t->decide_interval, &why);
    else if (!strcmp(k, "floor")) {
        static const char *const names[] = {"off", "on", NULL};
        uint32_t x = 0;
        hwx_arg_enum("floor", v, names, &x, &why);
        t->floor = x;
    } else if (!strcmp(k, "layer")) {
        static const char *const names[] = {"session", "vm", NULL};
        hwx_arg_enum("layer", v, names, &t->layer, &why);
    } else if (!strcmp(k, "burst_period") || !strcmp(k, "burst") ||
               !strcmp(k, "hot_calls") || !strcmp(k, "hot_loops") ||
               !strncmp(k, "vm_", 3)) { /* the layer's desc, by member name */
        size_t n;
        const hwp_field *f = hwp_vm_desc_fields(&n);
        const char *name = !strcmp(k, "burst_period") ? "period" : k + 3 * !strncmp(k, "vm_", 3);
        if (!strcmp(k, "vm_tuples"))
            hwx_arg_u32(k, v, 0, 1u << 28, &t->vm.d.strat_acc.tuples, &why);
        else if (hwx_arg_field(k, &t->vm.d, f, n, name, v, &why) != HWP_OK && !why)
            hwx_arg_fail(k, "not a member of the layer's desc (docs/vm.md, Options)", &why);
    } else if (!strcmp(k, "decisions")) {
        if (strlen(v) >= sizeof t->decisions) why = "decisions: path longer than 255 bytes";
        else if (hwx_out_check("decisions", v, &why) == HWP_OK) strcpy(t->decisions, v);
    } else
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
    hwlua_map sites; /* value site -> [0] HWLUA_SITE_*, [1] events, [2]
                        the most frequent value, [3] its count (exact) */
    int track;       /* keep the three maps: exact=on or decisions=   */
    uint64_t ncalls, niters, nvals;
    uint64_t fetched;   /* bytecodes fetched, as of the last sync         */
    uint64_t stack_due; /* the fetch that takes the next stack sample     */
    uint64_t decide_due; /* the fetch of the next decision checkpoint     */
    hwx_decision_fn on_decision;
    void *on_decision_ctx;
    FILE *decisions;    /* decisions=FILE, one line per model decision   */
    hwx_out *bbv;       /* bbv=FILE                                        */
    int done;
    int vm;             /* layer=vm: every hook goes to hwlua_vm.c       */
} G;

/* Source names, copied: a Proto may be collected before the report. */
#define HWLUA_SOURCES 256
static struct {
    const void *key;
    char name[96];
} hwlua__src[HWLUA_SOURCES];
static unsigned hwlua__nsrc;

unsigned hwlua_source(const Proto *p) {
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

const char *hwlua_source_name(unsigned i) { return i < hwlua__nsrc ? hwlua__src[i].name : "?"; }

/* ---- feeding the session ----------------------------------------------------- */

static void hwlua__site_value(const hwp_insn *in);

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
        if (G.cur.cls == HWP_CLS_LOAD && G.o.exact) hwlua__site_value(&G.cur);
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
    uint64_t due = G.stack_due < G.decide_due ? G.stack_due : G.decide_due;
    uint64_t stk = due > G.fetched ? due - G.fetched : 1;
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
static void hwlua__checkpoint(int final);

long hwlua_select(lua_State *L, const Proto *p, const Instruction *at) {
    if (G.vm) return hwlua_vm_select(p, at);
    hwlua__record(at, HWP_CLS_OTHER);
    /* both on a fixed grid: a sample or checkpoint taken late (an event
     * hook synced past the due fetch) does not move the next one */
    if (G.fetched >= G.stack_due) {
        hwlua__stack_sample(L);
        while (G.stack_due <= G.fetched) G.stack_due += G.tier.stack_interval;
    }
    if (G.fetched >= G.decide_due) {
        hwlua__checkpoint(0);
        while (G.decide_due <= G.fetched) G.decide_due += G.tier.decide_interval;
    }
    return hwlua__rearm();
}

/* ---- the hooks ----------------------------------------------------------------- */

/* A value as the models see it: the type tag in the top byte, and the
 * payload (an integer, a float's bits, an object's address) below. */
uint64_t hwlua_bits(const TValue *v) {
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
    hwp_insn *r;
    if (G.vm) {
        hwlua_vm_cond(at, taken);
        return;
    }
    if (G.tier.floor) return;
    r = hwlua__record(at, HWP_CLS_BR_COND);
    r->addr = (uint64_t)(uintptr_t)target;
    r->next_pc = taken ? r->addr : (uint64_t)(uintptr_t)(at + 2);
    r->events |= taken ? HWP_EV_TAKEN : 0;
    hwlua__rearm();
}

/* A loop is named by the line of its loop statement, as LuaJIT names its
 * traces: a for loop's closing instruction carries the `for` line, a
 * while or repeat loop's back edge jumps to its test. */
int hwlua_loop_line(const Proto *p, const Instruction *at, const Instruction *header) {
    OpCode op = GET_OPCODE(*at);
    const Instruction *named = op == OP_FORLOOP || op == OP_TFORLOOP ? at : header;
    return luaG_getfuncline(p, (int)(named - p->code));
}

static void hwlua__iteration(const Proto *p, const Instruction *at,
                             const Instruction *header) {
    hwlua_ent *e;
    G.niters++;
    if (!G.track) return;
    e = hwlua_map_get(&G.loops, (uint64_t)(uintptr_t)header);
    if (e && e->v[0]++ == 0) {
        e->v[1] = (uint64_t)hwlua_loop_line(p, at, header);
        e->v[2] = hwlua_source(p);
    }
}

void hwlua_jump(const Proto *p, const Instruction *at, const Instruction *target) {
    hwp_insn *r;
    if (G.vm) {
        hwlua_vm_jump(p, at, target);
        return;
    }
    if (G.tier.floor) return;
    r = hwlua__record(at, HWP_CLS_JUMP);
    r->addr = r->next_pc = (uint64_t)(uintptr_t)target;
    r->events |= HWP_EV_TAKEN;
    if (target <= at) hwlua__iteration(p, at, target);
    hwlua__rearm();
}

void hwlua_loop(const Proto *p, const Instruction *at, int taken,
                const Instruction *target) {
    hwp_insn *r;
    if (G.vm) {
        hwlua_vm_loop(p, at, taken, target);
        return;
    }
    if (G.tier.floor) return;
    r = hwlua__record(at, HWP_CLS_BR_COND);
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
uint64_t hwlua_fn_key(const TValue *fn, const Proto **lp) {
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
    uint64_t key;
    hwp_insn *r;
    if (G.vm) {
        hwlua_vm_call(at, fn);
        return;
    }
    if (G.tier.floor) return;
    key = hwlua_fn_key(fn, &lp);
    r = hwlua__record(at, tail || (!lp && key != 1) ? HWP_CLS_INDIRECT : HWP_CLS_CALL);
    r->addr = r->next_pc = key;
    r->events |= HWP_EV_TAKEN;
    G.ncalls++;
    if (G.track) {
        hwlua_ent *e = hwlua_map_get(&G.funcs, key);
        if (e && e->v[0]++ == 0 && lp) {
            e->v[1] = (uint64_t)lp->linedefined;
            e->v[2] = hwlua_source(lp);
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
    hwp_insn *r;
    if (G.vm) {
        hwlua_vm_ret(at);
        return;
    }
    if (G.tier.floor) return;
    r = hwlua__record(at, fresh ? HWP_CLS_INDIRECT : HWP_CLS_RET);
    r->next_pc = fresh ? 0 : (uint64_t)(uintptr_t)ci->previous->u.l.savedpc;
    hwlua__rearm();
}

/* What a value site's value is: the operands' types, or a table read's
 * value (the two are different bytecodes in lvm.c). */
enum { HWLUA_SITE_TYPE = 1, HWLUA_SITE_VALUE = 2 };

static void hwlua__site(const Instruction *at, uint64_t kind) {
    hwlua_ent *e;
    if (G.track && (e = hwlua_map_get(&G.sites, (uint64_t)(uintptr_t)at)) != NULL)
        e->v[0] = kind;
}

/* A value event the session has counted (exact=on): the site's count,
 * and its most frequent value so far (the session's exact count of the
 * value against the site's top; a tie keeps the older top). */
static void hwlua__site_value(const hwp_insn *in) {
    hwlua_ent *e = hwlua_map_find(&G.sites, in->pc);
    uint64_t c = hwx_exact_count(G.s, HWX_EXACT_VALUE, in->pc, in->value);
    G.nvals++;
    if (!e) return;
    e->v[1]++;
    if (c > e->v[3]) {
        e->v[2] = in->value;
        e->v[3] = c;
    }
}

void hwlua_load(const Instruction *at, const TValue *v) {
    hwp_insn *r;
    if (G.vm) {
        hwlua_vm_load(at, v);
        return;
    }
    if (G.tier.floor) return;
    r = hwlua__record(at, HWP_CLS_LOAD);
    hwlua__site(at, HWLUA_SITE_VALUE);
    r->value = hwlua_bits(v);
    hwlua__rearm();
}

/* Operands are shown to the value models as a load of their type pair:
 * the tags of both operands, which is what a JIT specialises on. A
 * comparison's record then also gets its branch from hwlua_cond. */
void hwlua_operands(const Instruction *at, const TValue *a, const TValue *b) {
    hwp_insn *r;
    if (G.vm) {
        hwlua_vm_operands(at, a, b);
        return;
    }
    if (G.tier.floor) return;
    r = hwlua__record(at, HWP_CLS_LOAD);
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

/* The models' profiles as the session writes them, where the decisions
 * read them from at each checkpoint, as a JIT would load a saved
 * profile. */
static hwlua_text hwlua__json(void) {
    hwlua_text t = {NULL, 0, 0};
    hwp_writer w;
    w.write = hwlua__text_write;
    w.ctx = &t;
    hwx_session_profiles_json(G.s, &w);
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
#define HWLUA__LOAD(X, t, model, sub, mem)                                       \
    do {                                                                         \
        size_t at_, end_;                                                        \
        hwp_##X##_desc d_;                                                       \
        hwp_json_err e_;                                                         \
        *(mem) = NULL;                                                           \
        if (!hwlua__member(t, model, sub, &at_, &end_) ||                        \
            hwp_##X##_read_desc(&d_, (t)->s + at_, end_ - at_, &e_) != HWP_OK)   \
            return NULL;                                                         \
        if ((h = (hwp_##X *)malloc(sizeof *h)) == NULL ||                        \
            (*(mem) = malloc(hwp_##X##_bytes(&d_))) == NULL ||                   \
            hwp_##X##_init(h, *(mem), hwp_##X##_bytes(&d_), &d_, NULL) != HWP_OK || \
            hwp_##X##_read_json(h, (t)->s + at_, end_ - at_, &e_) != HWP_OK) {   \
            free(h);                                                             \
            free(*(mem));                                                        \
            *(mem) = NULL;                                                       \
            return NULL;                                                         \
        }                                                                        \
    } while (0)

static hwp_rap *hwlua__rap_profile(const hwlua_text *t, void **mem) {
    hwp_rap *h = NULL;
    HWLUA__LOAD(rap, t, "rap", NULL, mem);
    return h;
}

static hwp_strat_acc *hwlua__strat_profile(const hwlua_text *t, void **mem) {
    hwp_strat_acc *h = NULL;
    HWLUA__LOAD(strat_acc, t, "stratified", "profile", mem);
    return h;
}

static hwp_hpt *hwlua__hpt_profile(const hwlua_text *t, void **mem) {
    hwp_hpt *h = NULL;
    HWLUA__LOAD(hpt, t, "pathprof", "hpt", mem);
    return h;
}

/* ---- decisions ---------------------------------------------------------------
 * A JIT's decisions, taken twice at every checkpoint (each
 * `decide_interval` bytecodes and at the end): from the exact profile of
 * the run so far and from the models' profiles, read as a JIT would
 * read them (the session's JSON report, above). A decision is taken the
 * first time its rule holds and never taken back, as a compiled trace is
 * not; the model's go to the embedding VM's callback at once
 * (hwlua_on_decision, decisions=FILE). The rules (docs/lua.md, "Tiering
 * decisions"):
 *   function, loop: its calls or iterations are at least func_share or
 *       loop_share of the calls and back edges so far (the model: RAP's
 *       estimate of its code address or header);
 *   type, value: the site carries spec_share of the value events so far
 *       and its most frequent type pair or value spec_inv of the site's
 *       (the model: the stratified profile's estimates, from at least
 *       hwlua__min_samples() samples at the site);
 *   path: for a function or loop compiled, the hottest path starting at
 *       its code or header (the model: the Hot Path Table's). */
typedef struct hwlua_side {
    int taken;
    hwx_decision d; /* what was decided, when, on what evidence */
} hwlua_side;

typedef struct hwlua_dec {
    uint32_t kind;
    uint64_t site;
    /* [0] the exact profile's, [1] the model's, [2] the exact profile's
     * with the model's error: when the exact rule holds by more than the
     * model's estimate can miss it (hwlua__hot, hwlua__spec_exact), the
     * latest the model's decision may come (docs/lua.md) */
    hwlua_side s[3];
} hwlua_dec;

static struct {
    hwlua_dec *d;
    size_t n, cap;
    hwlua_map idx;       /* kind << 56 | site -> index + 1              */
    hwp_strat_pc *rows;  /* the stratified profile at the last checkpoint */
    size_t nrows;
    hwp_strat_acc_stats st;
} D;

void hwlua_on_decision(hwx_decision_fn fn, void *ctx) {
    G.on_decision = fn;
    G.on_decision_ctx = ctx;
}

static const char *const hwlua__kind_name[] = {"?", "func", "loop", "type", "value", "path"};

/* A function or loop's source line and name; a path is named by the
 * loop or function it starts. */
static void hwlua__name(hwx_decision *d) {
    hwlua_map *m = d->kind == HWX_DEC_FUNCTION ? &G.funcs : &G.loops;
    hwlua_ent *e;
    if (d->kind == HWX_DEC_TYPE || d->kind == HWX_DEC_VALUE) return;
    if (d->kind == HWX_DEC_PATH)
        m = hwlua_map_find(&G.loops, d->site) ? &G.loops : &G.funcs;
    if ((e = hwlua_map_find(m, d->site)) == NULL) return;
    if (m == &G.funcs && !e->v[3]) {
        d->source = "(C)";
        return;
    }
    d->line = (uint32_t)e->v[1];
    d->source = hwlua__src[e->v[2]].name;
}

/* One line per decision (decisions=FILE): "when kind site what
 * source:line count [of total] [inv x [lo,hi] samples n]", numbers as
 * in hwx_decision; a type pair is the two operands' Lua type tags
 * (lobject.h), a value the tag in the top byte over the payload. */
static void hwlua__decision_line(void *ctx, const hwx_decision *d) {
    FILE *f = (FILE *)ctx;
    fprintf(f, "%llu %s %#llx %#llx %s:%u %llu", (unsigned long long)d->when,
            hwlua__kind_name[d->kind], (unsigned long long)d->site, (unsigned long long)d->what,
            d->source ? d->source : "-", d->line, (unsigned long long)d->count);
    if (d->total) fprintf(f, " of %llu", (unsigned long long)d->total);
    if (d->samples)
        fprintf(f, " inv %.3f [%.3f,%.3f] samples %llu", d->invariance, d->lo, d->hi,
                (unsigned long long)d->samples);
    fputc('\n', f);
    fflush(f);
}

/* Take a decision for one side (0 exact, 1 model) unless that side took
 * it already; returns 1 if taken now. */
static int hwlua__take(int side, hwx_decision *d) {
    uint64_t key = (uint64_t)d->kind << 56 | d->site;
    hwlua_ent *e = hwlua_map_get(&D.idx, key);
    hwlua_dec *x;
    if (!e) return 0;
    if (!e->v[0]) {
        if (D.n == D.cap) {
            size_t cap = D.cap ? 2 * D.cap : 64;
            hwlua_dec *nd = (hwlua_dec *)realloc(D.d, cap * sizeof *nd);
            if (!nd) return 0;
            D.d = nd;
            D.cap = cap;
        }
        memset(&D.d[D.n], 0, sizeof D.d[0]);
        D.d[D.n].kind = d->kind;
        D.d[D.n].site = d->site;
        e->v[0] = ++D.n;
    }
    x = &D.d[e->v[0] - 1];
    if (x->s[side].taken) return 0;
    d->when = G.fetched;
    hwlua__name(d);
    x->s[side].taken = 1;
    x->s[side].d = *d;
    if (side == 2) return 0;
    if (side == 1 && G.on_decision) G.on_decision(G.on_decision_ctx, d);
    return 1;
}

static const hwlua_dec *hwlua__find(uint32_t kind, uint64_t site) {
    hwlua_ent *e = hwlua_map_find(&D.idx, (uint64_t)kind << 56 | site);
    return e && e->v[0] ? &D.d[e->v[0] - 1] : NULL;
}

static int hwlua__taken(uint32_t kind, uint64_t site, int side) {
    const hwlua_dec *x = hwlua__find(kind, site);
    return x && x->s[side].taken;
}

/* Functions or loops: the exact count (rap NULL) or RAP's estimate of
 * the key (between its two bounds) against share of the total. */
static int hwlua__hot(const hwlua_map *m, uint32_t kind, double share, const hwp_rap *rap,
                      int side) {
    uint64_t total = G.ncalls + G.niters;
    double need = share * (double)total;
    size_t i;
    int fresh = 0;
    for (i = 0; i < m->cap; i++) {
        const hwlua_ent *e = &m->e[i];
        hwx_decision d;
        hwp_rap_est est;
        int have;
        if (!e->key) continue;
        have = rap && hwp_rap_query(rap, e->key, e->key, &est) == HWP_OK;
        memset(&d, 0, sizeof d);
        d.kind = kind;
        d.site = e->key;
        d.total = total;
        d.count = side == 0 ? e->v[0] : have ? (uint64_t)(est.estimate + 0.5) : 0;
        if (!total || (double)d.count < need) continue;
        fresh |= hwlua__take(side, &d);
        /* RAP's estimate lies between its bounds, which hold the exact
         * count: an exact count above the share by more than their width
         * puts the estimate above it too */
        if (side == 0 && have && (double)d.count >= need + (double)(est.upper - est.lower))
            hwlua__take(2, &d);
    }
    return fresh;
}

/* A site's 95% interval of invariance (Wilson's, z = 1.96) cannot clear
 * spec_inv from fewer samples than n with n / (n + z^2) >= spec_inv,
 * what a sample where every value agrees gives: with fewer, even such a
 * sample does not tell an invariance of spec_inv from a lower one, and
 * the model does not call the site invariant (73 at spec_inv 0.95). */
static uint64_t hwlua__min_samples(void) {
    double z2 = 1.96 * 1.96;
    if (G.tier.spec_inv >= 1.0) return UINT64_MAX;
    return (uint64_t)(z2 * G.tier.spec_inv / (1.0 - G.tier.spec_inv)) + 1;
}

static uint32_t hwlua__site_kind(uint64_t site) {
    hwlua_ent *e = hwlua_map_find(&G.sites, site);
    return e && e->v[0] == HWLUA_SITE_VALUE ? HWX_DEC_VALUE : HWX_DEC_TYPE;
}

/* The stratified sampler's rate (strat_rate=, 256 by default). */
static uint64_t hwlua__strat_rate(void) {
    uint64_t r = 0;
    uint32_t i;
    for (i = 0; i < G.o.nparam; i++)
        if (G.o.param[i].model == HWP_MODEL_STRAT && hwx_streq(G.o.param[i].key, "rate"))
            hwx_parse_u64(G.o.param[i].val, &r);
    return r ? r : 256;
}

/* Specialisations, exact: the sites' running counts (hwlua__site_value).
 * The model's margin: the site has executed often enough to give its
 * samples the minimum at the sampler's mean rate (at rate 1 exactly). */
static void hwlua__spec_exact(void) {
    uint64_t enough = hwlua__min_samples(), rate = hwlua__strat_rate();
    size_t i;
    enough = enough > UINT64_MAX / rate ? UINT64_MAX : enough * rate;
    for (i = 0; i < G.sites.cap; i++) {
        const hwlua_ent *e = &G.sites.e[i];
        hwx_decision d;
        if (!e->key || !e->v[1]) continue;
        if ((double)e->v[1] < G.tier.spec_share * (double)G.nvals ||
            (double)e->v[3] < G.tier.spec_inv * (double)e->v[1])
            continue;
        memset(&d, 0, sizeof d);
        d.kind = e->v[0] == HWLUA_SITE_VALUE ? HWX_DEC_VALUE : HWX_DEC_TYPE;
        d.site = e->key;
        d.what = e->v[2];
        d.count = e->v[1];
        d.total = G.nvals;
        d.samples = e->v[1];
        d.invariance = d.lo = d.hi = (double)e->v[3] / (double)e->v[1];
        hwlua__take(0, &d);
        if (e->v[1] >= enough) hwlua__take(2, &d);
    }
}

/* Specialisations, model: the stratified profile's most invariant sites
 * (hwp_strat_acc_top_pcs), kept in D.rows for the final report. */
static void hwlua__spec_model(const hwp_strat_acc *acc) {
    uint64_t nmin = hwlua__min_samples();
    size_t i;
    free(D.rows);
    D.rows = NULL;
    D.nrows = 0;
    if (!acc || hwp_strat_acc_get_stats(acc, &D.st) != HWP_OK) return;
    D.nrows = hwp_strat_acc_top_pcs(acc, HWP_STRAT_KIND_VALUE, NULL, 0);
    if (!D.nrows || (D.rows = (hwp_strat_pc *)malloc(D.nrows * sizeof *D.rows)) == NULL) {
        D.nrows = 0;
        return;
    }
    D.nrows = hwp_strat_acc_top_pcs(acc, HWP_STRAT_KIND_VALUE, D.rows, D.nrows);
    for (i = 0; i < D.nrows; i++) {
        const hwp_strat_pc *m = &D.rows[i];
        hwx_decision d;
        if (m->samples < nmin || (double)m->count < G.tier.spec_share * (double)D.st.total ||
            m->invariance < G.tier.spec_inv)
            continue;
        memset(&d, 0, sizeof d);
        d.kind = hwlua__site_kind(m->pc);
        d.site = m->pc;
        d.what = m->top_w;
        d.count = m->count;
        d.total = D.st.total;
        d.samples = m->samples;
        d.invariance = m->invariance;
        d.lo = m->lo;
        d.hi = m->hi;
        hwlua__take(1, &d);
    }
}

/* Hot paths: for each Lua function and loop this side compiled, the
 * hottest path starting at its code or header, once one has completed
 * there (a function entered only from C starts none). The exact side
 * scans the session's exact path table, so it looks only when it
 * compiled something new, and at the end. */
static void hwlua__paths(int side, const hwp_path_row *rows, size_t nrows) {
    hwlua_map best = {NULL, 0, 0, 0}; /* start -> [0] count + 1, [1] shape */
    size_t i, k;
    const hwlua_map *maps[2] = {&G.funcs, &G.loops};
    uint32_t kinds[2] = {HWX_DEC_FUNCTION, HWX_DEC_LOOP};
    int pending = 0;
    for (k = 0; k < 2; k++)
        for (i = 0; i < maps[k]->cap; i++) {
            const hwlua_ent *e = &maps[k]->e[i];
            hwlua_ent *b;
            if (!e->key || (k == 0 && !e->v[3]) || !hwlua__taken(kinds[k], e->key, side) ||
                hwlua__taken(HWX_DEC_PATH, e->key, side))
                continue;
            if ((b = hwlua_map_get(&best, e->key)) != NULL) b->v[0] = 1;
            pending = 1;
        }
    if (!pending) return;
    if (side == 0) {
        hwx_exact_row r;
        uint64_t it = 0;
        hwlua_ent *b;
        while (hwx_exact_next(G.s, HWX_EXACT_PATH, &it, &r))
            if ((b = hwlua_map_find(&best, r.k1)) != NULL &&
                (r.count + 1 > b->v[0] || (r.count + 1 == b->v[0] && r.k2 < b->v[1]))) {
                b->v[0] = r.count + 1;
                b->v[1] = r.k2;
            }
    } else {
        /* rows are hottest first, ties by shape */
        for (k = nrows; k-- > 0;) {
            hwlua_ent *b = hwlua_map_find(&best, rows[k].pd.start);
            if (b) {
                b->v[0] = rows[k].count + 1;
                b->v[1] = rows[k].pd.shape;
            }
        }
    }
    for (i = 0; i < best.cap; i++) {
        hwx_decision d;
        if (!best.e[i].key || best.e[i].v[0] < 2) continue;
        memset(&d, 0, sizeof d);
        d.kind = HWX_DEC_PATH;
        d.site = best.e[i].key;
        d.what = best.e[i].v[1];
        d.count = best.e[i].v[0] - 1;
        hwlua__take(side, &d);
    }
    free(best.e);
}

/* A path's margin: its start's (the path is laid out when its start is
 * compiled, and the Hot Path Table holds it by then). */
static void hwlua__path_margins(void) {
    size_t i;
    for (i = 0; i < D.n; i++) {
        hwlua_dec *x = &D.d[i];
        const hwlua_dec *f, *l;
        if (x->kind != HWX_DEC_PATH || !x->s[0].taken || x->s[2].taken) continue;
        f = hwlua__find(HWX_DEC_FUNCTION, x->site);
        l = hwlua__find(HWX_DEC_LOOP, x->site);
        if ((f && f->s[2].taken) || (l && l->s[2].taken)) {
            hwx_decision d = x->s[0].d;
            hwlua__take(2, &d);
        }
    }
}

/* One checkpoint: every rule on both sides. */
static void hwlua__checkpoint(int final) {
    void *rmem = NULL, *smem = NULL, *hmem = NULL;
    hwlua_text t = hwlua__json();
    hwp_rap *rap = (G.o.models & HWX_M_RAP) ? hwlua__rap_profile(&t, &rmem) : NULL;
    hwp_strat_acc *acc = (G.o.models & HWX_M_STRAT) ? hwlua__strat_profile(&t, &smem) : NULL;
    hwp_hpt *hpt = (G.o.models & HWX_M_PATH) ? hwlua__hpt_profile(&t, &hmem) : NULL;
    hwp_path_row *rows = NULL;
    size_t nrows = hpt ? hwp_hpt_export(hpt, NULL, 0) : 0;
    free(t.s);
    if (nrows && (rows = (hwp_path_row *)malloc(nrows * sizeof *rows)) != NULL)
        nrows = hwp_hpt_export(hpt, rows, nrows);
    else
        nrows = 0;
    if (G.o.exact) {
        int fresh = hwlua__hot(&G.funcs, HWX_DEC_FUNCTION, G.tier.func_share, rap, 0);
        fresh |= hwlua__hot(&G.loops, HWX_DEC_LOOP, G.tier.loop_share, rap, 0);
        hwlua__spec_exact();
        if (fresh || final) hwlua__paths(0, NULL, 0);
        hwlua__path_margins();
    }
    if (rap) {
        hwlua__hot(&G.funcs, HWX_DEC_FUNCTION, G.tier.func_share, rap, 1);
        hwlua__hot(&G.loops, HWX_DEC_LOOP, G.tier.loop_share, rap, 1);
    }
    if (acc) hwlua__spec_model(acc);
    if (hpt) hwlua__paths(1, rows, nrows);
    free(rows);
    free(rmem);
    free(smem);
    free(hmem);
    free(rap);
    free(acc);
    free(hpt);
}

/* ---- the final report's decisions ----------------------------------------- */

/* One decision kind: the exact profile's choices against the model's. */
typedef struct hwlua_agree {
    unsigned exact, model, both;
} hwlua_agree;

static const hwp_strat_pc *hwlua__row(uint64_t site) {
    size_t r;
    for (r = 0; r < D.nrows; r++)
        if (D.rows[r].pc == site) return &D.rows[r];
    return NULL;
}

/* "  kind verdict site name  exact what@when  model what@when  evidence":
 * a side's what@when is "-" when it did not take the decision. The
 * evidence is the run's end: exact counts, and for a specialisation the
 * site's exact top count of its events and the model's estimate of the
 * site. */
static void hwlua__report_kind(FILE *f, uint32_t kind, hwlua_agree *a) {
    size_t i;
    int j;
    memset(a, 0, sizeof *a);
    for (i = 0; i < D.n; i++) {
        const hwlua_dec *x = &D.d[i];
        const hwx_decision *n = x->s[0].taken ? &x->s[0].d : &x->s[1].d;
        int ex = x->s[0].taken, mo = x->s[1].taken;
        int same = ex && mo && x->s[0].d.what == x->s[1].d.what;
        if (x->kind != kind) continue;
        a->exact += ex;
        a->model += mo;
        a->both += same;
        fprintf(f, "  %-5s %-5s %#llx %s:%u", hwlua__kind_name[kind],
                same ? "both" : ex && mo ? "diff" : ex ? "exact" : "model",
                (unsigned long long)x->site, n->source ? n->source : "-", n->line);
        for (j = 0; j < 3; j++) {
            fprintf(f, "  %s ", j == 2 ? "margin" : j ? "model" : "exact");
            if (x->s[j].taken)
                fprintf(f, "%#llx@%llu", (unsigned long long)x->s[j].d.what,
                        (unsigned long long)x->s[j].d.when);
            else
                fprintf(f, "-");
        }
        if (kind == HWX_DEC_TYPE || kind == HWX_DEC_VALUE) {
            hwlua_ent *e = hwlua_map_find(&G.sites, x->site);
            const hwp_strat_pc *m = hwlua__row(x->site);
            fprintf(f, "  end: exact %llu of %llu",
                    (unsigned long long)(e ? e->v[3] : 0), (unsigned long long)(e ? e->v[1] : 0));
            if (m)
                fprintf(f, "  model %#llx %.3f [%.3f,%.3f] of %llu samples",
                        (unsigned long long)m->top_w, m->invariance, m->lo, m->hi,
                        (unsigned long long)m->samples);
        } else if (kind == HWX_DEC_PATH) {
            for (j = 0; j < 2; j++)
                if (x->s[j].taken)
                    fprintf(f, "  %s len %u dirs %#llx (%llu)", j ? "HPT" : "exact",
                            hwp_path_pd_len(&(hwp_path_pd){x->site, x->s[j].d.what}),
                            (unsigned long long)hwp_path_pd_dirs(
                                &(hwp_path_pd){x->site, x->s[j].d.what}),
                            (unsigned long long)x->s[j].d.count);
        } else {
            hwlua_ent *e = hwlua_map_find(kind == HWX_DEC_FUNCTION ? &G.funcs : &G.loops, x->site);
            fprintf(f, "  end: %llu", (unsigned long long)(e ? e->v[0] : 0));
        }
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
    static const char *const kinds[] = {"", "functions", "loops", "types", "values", "paths"};
    hwlua_agree a[6];
    uint32_t k;
    fprintf(f, "\n-- tiering decisions, taken at checkpoints every %llu bytecodes and at the end "
               "(functions with >= %.2f%%, loops with >= %.2f%% of calls + back edges; sites "
               "with >= %.2f%% of value events whose type or value has >= %.2f invariance, "
               "from >= %llu samples; the hottest path of each function and loop compiled) --\n",
            (unsigned long long)G.tier.decide_interval, 100 * G.tier.func_share,
            100 * G.tier.loop_share, 100 * G.tier.spec_share, G.tier.spec_inv,
            (unsigned long long)hwlua__min_samples());
    if (!(G.o.models & HWX_M_RAP)) fprintf(f, "  (no RAP: no model decisions on functions, loops)\n");
    if (!(G.o.models & HWX_M_STRAT)) fprintf(f, "  (no stratified profile: no model specialisations)\n");
    if (!(G.o.models & HWX_M_PATH)) fprintf(f, "  (no Hot Path Table: no model hot paths)\n");
    for (k = HWX_DEC_FUNCTION; k <= HWX_DEC_PATH; k++) hwlua__report_kind(f, k, &a[k]);
    fprintf(f, "\n");
    for (k = HWX_DEC_FUNCTION; k <= HWX_DEC_PATH; k++) hwlua__agree_line(f, kinds[k], &a[k]);
}
static void hwlua__finish(void) {
    hwx_out out;
    const char *why = NULL;
    if (G.done || (!G.s && !G.vm)) return;
    G.done = 1;
    hwlua_on = 0;
    if (G.vm) {
        hwlua_vm_finish(G.o.report, G.o.json);
        if (G.decisions && fclose(G.decisions) != 0)
            fprintf(stderr, "lua-hwprof: decisions: %s\n", strerror(errno));
        G.decisions = NULL;
        return;
    }
    hwlua__sync(NULL); /* the pending record and the bytecodes after it */
    hwx_session_finish(G.s); /* the vectors' last line */
    if (G.bbv && hwx_out_close(G.bbv, &why) != HWP_OK) fprintf(stderr, "lua-hwprof: %s\n", why);
    /* the last checkpoint: what the models' flushed profiles decide */
    if (G.track) hwlua__checkpoint(1);
    if (G.decisions && fclose(G.decisions) != 0)
        fprintf(stderr, "lua-hwprof: decisions: %s\n", strerror(errno));
    G.decisions = NULL;
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

/* The model parameters (rap_eps=, strat_rate=...) into the layer's
 * model descs, each member by the name its report gives it; the
 * session's shorthands (rap_kb, hpt=...) are the session's. */
static void hwlua__vm_params(hwp_vm_desc *d) {
    static const struct {
        uint32_t model;
        const char *name; /* the option prefix */
        size_t off;
        const hwp_field *(*fields)(size_t *n);
    } parts[] = {
        {HWP_MODEL_PROFILEME, "pm", offsetof(hwp_vm_desc, pm), hwp_pm_desc_fields},
        {HWP_MODEL_STRAT, "strat", offsetof(hwp_vm_desc, strat), hwp_strat_desc_fields},
        {HWP_MODEL_STRAT, "strat", offsetof(hwp_vm_desc, strat_acc), hwp_strat_acc_desc_fields},
        {HWP_MODEL_RAP, "rap", offsetof(hwp_vm_desc, rap), hwp_rap_desc_fields},
        {HWP_MODEL_PATH, "path", offsetof(hwp_vm_desc, path), hwp_path_desc_fields},
        {HWP_MODEL_PATH, "path", offsetof(hwp_vm_desc, hpt), hwp_hpt_desc_fields},
        {HWP_MODEL_PATH, "path", offsetof(hwp_vm_desc, phase), hwp_phase_desc_fields},
        {HWP_MODEL_COPROC, "coproc", offsetof(hwp_vm_desc, cp), hwp_cp_desc_fields}};
    static char opt[96];
    uint32_t i;
    size_t k, n;
    for (i = 0; i < G.o.nparam; i++) {
        const char *why = NULL, *key = G.o.param[i].key;
        for (k = 0; k < sizeof parts / sizeof parts[0]; k++) {
            const hwp_field *f = parts[k].fields(&n);
            if (parts[k].model != G.o.param[i].model) continue;
            snprintf(opt, sizeof opt, "%s_%s", parts[k].name, key);
            if (hwx_arg_field(opt, (char *)d + parts[k].off, f, n, key, G.o.param[i].val,
                              &why) == HWP_OK)
                break;
            if (why) hwlua__fail(why);
        }
        if (k == sizeof parts / sizeof parts[0]) {
            hwx_arg_fail2(opt, "layer=vm: not a member of the layer's model descs",
                          " (a session shorthand: add layer=session)", &why);
            hwlua__fail(why);
        }
    }
}

/* layer=vm (docs/lua.md, "The VM layer path"): the hooks feed
 * hwprof/vm.h at its default burst settings; the session's options that
 * need records (vectors, traces, model parameters) have no meaning there
 * and are refused rather than ignored. exact=on counts calls and back
 * edges exactly beside the layer, to score its hot decisions. */
static void hwlua__start_vm(void) {
    static char msg[96];
    const char *why;
    if (G.tier.session_opt) {
        snprintf(msg, sizeof msg, "layer=vm: %s= is the session's (add layer=session)",
                 G.tier.session_opt);
        hwlua__fail(msg);
    }
    if (G.o.bbv[0] || G.o.record[0])
        hwlua__fail("layer=vm: bbv= and record= need the session (layer=session)");
    if (G.o.models & HWX_M_CORE)
        hwlua__fail("layer=vm: the layer has no core model (layer=session has)");
    if (!G.o.models) hwlua__fail("layer=vm: models= names no model");
    hwlua__vm_params(&G.tier.vm.d);
    G.tier.vm.models = G.o.models;
    /* generous: lua-hwprof's benchmarks use at most 16 functions and 110
     * sites; an id that does not fit is counted in the report. Not more:
     * the layer zeroes its tables per id at start (1.4 MB at 2^14 and
     * 2^16, 2% of the small fannkuch run's instructions). */
    if (!G.tier.vm.d.funcs) G.tier.vm.d.funcs = 1u << 12;
    if (!G.tier.vm.d.sites) G.tier.vm.d.sites = 1u << 14;
    if (!G.tier.vm.d.spec_inv) G.tier.vm.d.spec_inv = G.tier.spec_inv;
    if (!G.tier.vm.d.seed) G.tier.vm.d.seed = G.o.seed;
    G.tier.vm.floor = (int)G.tier.floor;
    if (G.tier.floor && G.o.exact) hwlua__fail("floor: the empty hooks feed nothing, exact=on cannot be had");
    G.tier.vm.exact = (int)G.o.exact;
    if (G.tier.decisions[0]) {
        if ((G.decisions = fopen(G.tier.decisions, "w")) == NULL)
            hwlua__fail("decisions: cannot open the file");
        G.tier.vm.decisions = G.decisions;
    }
    if ((why = hwlua_vm_start(&G.tier.vm)) != NULL) hwlua__fail(why);
    G.vm = 1;
    atexit(hwlua__finish);
    signal(SIGTERM, hwlua__on_signal);
    signal(SIGHUP, hwlua__on_signal);
}

__attribute__((constructor)) static void hwlua__start(void) {
    const char *env = getenv("HWPROF"), *why = NULL;
    char buf[4096], *save = NULL, *kv;
    size_t n;
    int user_key = 0, user_eps = 0, user_sampler = 0;
    uint32_t hooked;
    G.tier.func_share = 0.01;
    G.tier.loop_share = 0.01;
    G.tier.stack_interval = 10007; /* prime: no loop's period divides it */
    G.tier.spec_share = 0.01;
    G.tier.spec_inv = 0.95;
    G.tier.decide_interval = 16384;
    G.tier.layer = 1; /* the VM layer, unless layer=session */
    /* The stratified accumulator's tuple table: the layer's default,
     * 65536 tuples (3 MiB), is zeroed at start-up, a cost short scripts
     * feel; a site's verdict is a lookup of its own entry, and a scan of
     * the table only once an eviction made that entry stale (docs/lua.md,
     * "The VM layer path"). With 2048 a full table evicts its smallest
     * counts, which widens the evicted sites' intervals rather than
     * biasing them. vm_tuples=0: the layer's default. */
    G.tier.vm.d.strat_acc.tuples = 2048;
    G.decide_due = UINT64_MAX;
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
        user_sampler |= hwx_streq(kv, "strat_sampler");
    }
    if (G.tier.layer) { /* layer=vm: no session, none of its defaults */
        hwlua__start_vm();
        return;
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
    /* A value site often alternates with a period that divides the
     * periodic sampler's (a loop over two kinds of node): every sample
     * then sees the same value. The countdown sampler's random intervals
     * (the paper's Rcd_r, same mean rate) do not lock onto a period. */
    if (!user_sampler && hwx_opts_set(&G.o, "strat_sampler", "countdown", &why) != HWP_OK)
        hwlua__fail(why);
    /* floor=on: the hooks of the models asked for fire and return at
     * once, the session gets no model: what the hook sites cost alone */
    hooked = G.o.models;
    if (G.tier.floor) {
        if (G.o.exact) hwlua__fail("floor: the empty hooks feed nothing, exact=on cannot be had");
        G.o.models = 0;
    }
    if (hwx_host_check(&G.o, &why) != HWP_OK) hwlua__fail(why);
    n = hwx_session_bytes(&G.o);
    G.s = (hwx_session *)malloc(sizeof *G.s);
    G.mem = malloc(n);
    if (!G.s || !G.mem || hwx_session_init(G.s, G.mem, n, &G.o) != HWP_OK)
        hwlua__fail(G.s && G.mem ? hwp_why(G.s) : "out of memory");
    /* Each model's natural events (docs/lua.md): */
    if (hooked & HWX_M_RAP) /* calls and back edges */
        hwlua_on |= HWLUA_EV_CALL | HWLUA_EV_JUMP;
    if (hooked & HWX_M_PATH) /* paths within and across functions */
        hwlua_on |= HWLUA_EV_COND | HWLUA_EV_JUMP | HWLUA_EV_CALL | HWLUA_EV_RET;
    if (hooked & HWX_M_STRAT) /* operand types and table values */
        hwlua_on |= HWLUA_EV_OPND | HWLUA_EV_LOAD;
    if (hooked & HWX_M_COPROC) /* table reads */
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
    /* decisions need the functions, loops and sites the run has seen,
     * to ask the profiles about them and to name them */
    G.track = G.o.exact || G.tier.decisions[0];
    if (G.track) G.decide_due = G.tier.decide_interval;
    if (G.tier.decisions[0]) {
        if ((G.decisions = fopen(G.tier.decisions, "w")) == NULL)
            hwlua__fail("decisions: cannot open the file");
        hwlua_on_decision(hwlua__decision_line, G.decisions);
    }
    G.stack_due = G.tier.stack_interval ? G.tier.stack_interval : UINT64_MAX;
    hwlua__rearm();
    atexit(hwlua__finish);
    signal(SIGTERM, hwlua__on_signal);
    signal(SIGHUP, hwlua__on_signal);
}
