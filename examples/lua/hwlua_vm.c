/* SPDX-License-Identifier: MIT */
/* examples/lua/hwlua_vm.c: lua-hwprof's layer=vm event path: the hooks of
 * hwlua.h straight into hwprof/vm.h, no hwp_insn record and no session
 * (docs/lua.md, "The VM layer path").
 *
 * Clock. The interpreter's countdown local (hwl_left, written back to
 * hwlua_left wherever lvm.c saves its pc) is the layer's countdown in its
 * local-register form: HWLUA_FETCH decrements it and, when it runs out,
 * calls hwlua_select, which lands here as hwp_vm_expire with the local's
 * value and returns the layer's next countdown. The other hooks do not
 * touch the countdown, so no hwp_vm_set_left is needed around them.
 *
 * Flag. The annotation hooks stay behind hwlua.h's one test of
 * hwlua_on, which this file keeps equal to the layer's own flag
 * (vm->watch: a burst, or a ProfileMe sample waiting for its class):
 * only hwp_vm_expire and hwp_vm_flush change it, and both are called
 * from here. Outside bursts a hook costs that one test, as the layer's
 * inline events do.
 *
 * Ids. The layer wants dense function and site ids below desc.funcs and
 * desc.sites: a function (a Lua function's code array, a C function's
 * entry point) gets the next id on first sight, a load or operand site
 * (a bytecode address) likewise. Both are looked up only when the flag
 * is up (in bursts), so the maps cost nothing between bursts. Ids past the
 * range are not handed out: the event is dropped and counted. A Proto
 * that is collected and whose code array's address is reused by another
 * keeps the first one's id and name.
 *
 * Scoring (exact=on with layer=vm). The call, jump and test hooks then
 * fire on every call, jump and test, count calls and back edges (a
 * test's too: repeat ... until) exactly by function and loop header, and
 * hand them on to the layer only when its flag is up:
 * the layer is fed as without exact=on. At the end the report scores the
 * layer's hot decisions against the exact counts under the layer's own
 * rule (hot at desc.hot_calls calls, desc.hot_loops back edges). The load
 * and operand hooks then fire on every load too, and count each site's
 * executions and each (site, value) and (site, type) pair exactly; each
 * value and type verdict the layer streams is scored against the exact
 * shares of the run so far under its own rule (specialise at
 * desc.spec_inv), and again against the whole run's at the end (a site
 * whose values change after a verdict is what a JIT deoptimises).
 */
#include "hwlua_int.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hwx_host.h"
#include "hwprof/vm.h"
#include "ldebug.h"
#include "lopcodes.h"
#include "hwlua_map.h"

#define HWLUA_VM_NONE UINT32_MAX

static struct {
    hwp_vm vm;       /* zeroed with floor=on: every event returns at once */
    void *mem;
    FILE *decisions;
    int done;        /* finished: decisions after this are not written  */
    const Proto *p;  /* the function of the last bytecode the layer saw  */
    hwlua_map funcs; /* code -> [0] id + 1, [1] line, [2] source, [3] Lua */
    hwlua_map sites; /* bytecode -> [0] id + 1, [1] line, [2] source     */
    hwlua_map loops; /* header -> [1] line, [2] source                    */
    uint64_t *fkey, *skey; /* id -> its map key, to name decisions     */
    uint32_t maxf, maxs, nf, ns;
    uint64_t f_over, s_over; /* events dropped: no id left               */
    int exact;       /* count calls and back edges exactly (scoring)    */
    hwlua_map xcalls; /* code -> [0] calls, [1] 1: the layer said hot,
                         [2] line, [3] source (a Lua function)          */
    hwlua_map xloops; /* header -> [0] back edges, [1] said hot, [2] [3] */
    hwlua_map xsites; /* bytecode -> [0] executions, [1] verdicts as
                         streamed (value's in bits 0-1, type's in 2-3;
                         bit 4 + kind: it held on the run so far),
                         [2] the value, [3] the type they name           */
    hwlua_map xpairs; /* hash of (bytecode, kind, value) -> [0] count,
                         [1] bytecode, [2] kind, [3] value               */
    uint64_t xclash;  /* pairs whose hash another pair holds: not counted */
} V;

/* The flag the hooks test: the layer's, and the exact counts' streams. */
static void hwlua__flag(void) {
    hwlua_on = (hwp_vm_watched(&V.vm) || V.exact ? HWLUA_EV_ALL & ~(unsigned)HWLUA_EV_RET : 0u) |
               (hwp_vm_watched(&V.vm) ? (unsigned)HWLUA_EV_RET : 0u);
}

/* An exact count of `key` (exact=on): its entry while it has no name
 * ([2] 0), for the caller to name; NULL otherwise. */
static hwlua_ent *hwlua__count(hwlua_map *m, uint64_t key) {
    hwlua_ent *e;
    if (!V.exact || (e = hwlua_map_get(m, key)) == NULL) return NULL;
    e->v[0]++;
    return e->v[2] ? NULL : e;
}

static uint64_t hwlua__pc(const Instruction *at) { return (uint64_t)(uintptr_t)at; }

/* The line of bytecode `at` when it is in the function the layer last saw
 * (always, for a hook: its bytecode was fetched through hwlua_vm_select
 * while the flag was up); 0 when not. */
static void hwlua__where(hwlua_ent *e, const Proto *p, const Instruction *at) {
    if (!p || at < p->code || at >= p->code + p->sizecode) return;
    e->v[1] = (uint64_t)luaG_getfuncline(p, (int)(at - p->code));
    e->v[2] = hwlua_source(p);
}

/* The id of `key` in m, handed out on first sight (NONE: the range is
 * used up, or no memory for the map). */
static uint32_t hwlua__id(hwlua_map *m, uint64_t key, uint64_t *keys, uint32_t max,
                          uint32_t *n, uint64_t *over, hwlua_ent **out) {
    hwlua_ent *e = hwlua_map_find(m, key);
    *out = NULL;
    if (e) return (uint32_t)e->v[0] - 1u;
    if (*n == max || (e = hwlua_map_get(m, key)) == NULL) {
        (*over)++;
        return HWLUA_VM_NONE;
    }
    keys[*n] = key;
    e->v[0] = ++*n;
    *out = e;
    return *n - 1u;
}

long hwlua_vm_select(const Proto *p, const Instruction *at) {
    long left = (long)hwp_vm_expire(&V.vm, hwlua__pc(at), hwlua_left);
    V.p = p;
    hwlua__flag();
    return hwlua_left = left;
}

static void hwlua__back_edge(const Proto *p, const Instruction *at,
                             const Instruction *header);

/* A test's taken jump may go back (repeat ... until): a back edge to the
 * layer, so to the exact count too. A test is followed by the jump it
 * takes (Lua 5.4's lvm.c). Its function is the one last fetched only in
 * a burst (every bytecode is fetched through hwlua_vm_select there). */
void hwlua_vm_cond(const Instruction *at, int taken) {
    const Instruction *target = at + 2 + GETARG_sJ(at[1]);
    if (taken && target <= at) hwlua__back_edge(hwp_vm_watched(&V.vm) ? V.p : NULL, at, target);
    hwp_vm_branch(&V.vm, hwlua__pc(at), taken != 0);
}

/* A back edge names its loop (for the decisions file) the first time the
 * glue sees it. */
static void hwlua__loop_name(const Proto *p, const Instruction *at, const Instruction *header) {
    hwlua_ent *e;
    if (hwlua_map_find(&V.loops, hwlua__pc(header))) return;
    if ((e = hwlua_map_get(&V.loops, hwlua__pc(header))) == NULL) return;
    e->v[1] = (uint64_t)hwlua_loop_line(p, at, header);
    e->v[2] = hwlua_source(p);
}

/* A back edge: counted (exact=on), and named for the score and, if the
 * layer sees it, for the decisions file; p NULL: its function is not
 * known here, the name waits for another of its back edges. */
static void hwlua__back_edge(const Proto *p, const Instruction *at,
                             const Instruction *header) {
    hwlua_ent *e = hwlua__count(&V.xloops, hwlua__pc(header));
    if (!p) return;
    if (e) {
        e->v[2] = (uint64_t)hwlua_loop_line(p, at, header);
        e->v[3] = hwlua_source(p);
    }
    if (hwp_vm_watched(&V.vm)) hwlua__loop_name(p, at, header);
}

void hwlua_vm_jump(const Proto *p, const Instruction *at, const Instruction *target) {
    if (target <= at) hwlua__back_edge(p, at, target);
    hwp_vm_jump(&V.vm, hwlua__pc(at));
}

void hwlua_vm_loop(const Proto *p, const Instruction *at, int taken,
                   const Instruction *target) {
    if (taken) hwlua__back_edge(p, at, target);
    hwp_vm_branch(&V.vm, hwlua__pc(at), taken != 0);
}

/* Every call is the layer's call, a C function's and a tail call's too,
 * so that their counts (and hot decisions) are had; neither returns
 * through a bytecode, so the path stack sees a push without its pop
 * (docs/lua.md says what that costs the paths). */
void hwlua_vm_call(const Instruction *at, const TValue *fn) {
    const Proto *lp;
    hwlua_ent *e;
    uint64_t key = hwlua_fn_key(fn, &lp);
    uint32_t id;
    if ((e = hwlua__count(&V.xcalls, key)) != NULL && lp) {
        e->v[2] = (uint64_t)lp->linedefined;
        e->v[3] = hwlua_source(lp);
    }
    if (!hwp_vm_watched(&V.vm)) return; /* exact=on: a call only the count wanted */
    id = hwlua__id(&V.funcs, key, V.fkey, V.maxf, &V.nf, &V.f_over, &e);
    if (id == HWLUA_VM_NONE) return;
    if (e && lp) {
        e->v[1] = (uint64_t)lp->linedefined;
        e->v[2] = hwlua_source(lp);
        e->v[3] = 1;
    }
    hwp_vm_call(&V.vm, hwlua__pc(at), id);
}

void hwlua_vm_ret(const Instruction *at) { hwp_vm_ret(&V.vm, hwlua__pc(at)); }

static uint32_t hwlua__site(const Instruction *at) {
    hwlua_ent *e;
    uint32_t id = hwlua__id(&V.sites, hwlua__pc(at), V.skey, V.maxs, &V.ns, &V.s_over, &e);
    if (e) hwlua__where(e, V.p, at);
    return id;
}

/* The exact count of (site, kind, value): one 64-bit hash per pair; a
 * pair whose hash another pair holds is counted apart (xclash), not
 * mixed into the other's count. kind: HWP_VM_VALUE or HWP_VM_TYPE. */
static hwlua_ent *hwlua__pair(uint64_t pc, uint64_t kind, uint64_t value, int add) {
    uint64_t h = hwlua_map_hash(pc ^ hwlua_map_hash(value + kind)) | 1u;
    hwlua_ent *e = add ? hwlua_map_get(&V.xpairs, h) : hwlua_map_find(&V.xpairs, h);
    if (!e) return NULL;
    if (add && !e->v[1]) {
        e->v[1] = pc;
        e->v[2] = kind;
        e->v[3] = value;
    }
    if (e->v[1] != pc || e->v[2] != kind || e->v[3] != value) {
        V.xclash += (uint64_t)add;
        return NULL;
    }
    return e;
}

/* exact=on: one execution of a site, with its value and type. */
static void hwlua__count_site(const Instruction *at, uint64_t value, uint64_t type) {
    hwlua_ent *e;
    if (!V.exact) return;
    if ((e = hwlua_map_get(&V.xsites, hwlua__pc(at))) != NULL) e->v[0]++;
    if ((e = hwlua__pair(hwlua__pc(at), HWP_VM_VALUE, value, 1)) != NULL) e->v[0]++;
    if ((e = hwlua__pair(hwlua__pc(at), HWP_VM_TYPE, type, 1)) != NULL) e->v[0]++;
}

static void hwlua__site_event(const Instruction *at, uint64_t value, uint64_t type) {
    uint32_t id;
    hwlua__count_site(at, value, type);
    if (!hwp_vm_watched(&V.vm)) return; /* exact=on: a load only the count wanted */
    if ((id = hwlua__site(at)) != HWLUA_VM_NONE) hwp_vm_load(&V.vm, id, value, type);
}

/* A table read: the value read, and its type tag. */
void hwlua_vm_load(const Instruction *at, const TValue *v) {
    hwlua__site_event(at, hwlua_bits(v), rawtt(v));
}

/* Arithmetic and comparison operands: their two type tags (0xFF for an
 * immediate), as value and as type, which is what a JIT specialises on.
 * A comparison's bytecode then also carries its branch. */
void hwlua_vm_operands(const Instruction *at, const TValue *a, const TValue *b) {
    uint64_t pair = ((uint64_t)rawtt(a) << 8) | (b ? rawtt(b) : 0xFFu);
    hwlua__site_event(at, pair, pair);
}

/* ---- decisions ------------------------------------------------------------ */

/* "source:line" of a decision's function, loop, path start or site; "-"
 * when the glue has no name for it (a phase, an unseen pc). */
static void hwlua__name(const hwp_vm_decision *d, char *buf, size_t cap) {
    const hwlua_ent *e = NULL;
    switch (d->kind) {
    case HWP_VM_FUNC:
        if (d->id < V.nf) e = hwlua_map_find(&V.funcs, V.fkey[d->id]);
        if (e && !e->v[3]) {
            snprintf(buf, cap, "(C):%#llx", (unsigned long long)e->key);
            return;
        }
        break;
    case HWP_VM_LOOP: e = hwlua_map_find(&V.loops, d->id); break;
    case HWP_VM_HOTPATH: /* a path starts at a loop header or a function's code */
        if ((e = hwlua_map_find(&V.loops, d->id)) == NULL) e = hwlua_map_find(&V.funcs, d->id);
        break;
    case HWP_VM_VALUE:
    case HWP_VM_TYPE:
        if (d->id < V.ns) e = hwlua_map_find(&V.sites, V.skey[d->id]);
        break;
    default: break;
    }
    if (e && e->v[1]) snprintf(buf, cap, "%s:%u", hwlua_source_name((unsigned)e->v[2]),
                               (unsigned)e->v[1]);
    else snprintf(buf, cap, "-");
}

/* One line per decision, flushed as written (tail -f follows a run):
 * "kind verdict id what name estimate [lo,hi] samples n clock c". An id is
 * a function or site id, a loop header's or a path start's bytecode
 * address, or a phase interval's index; what is a value or type tag
 * (hex), a path shape or a phase id. A count's estimate is whole
 * bytecodes' worth, an invariance a share. */
static void hwlua__decision_line(FILE *f, const hwp_vm_decision *d) {
    int share = d->kind == HWP_VM_VALUE || d->kind == HWP_VM_TYPE;
    int addr = d->kind == HWP_VM_LOOP || d->kind == HWP_VM_HOTPATH;
    char name[160];
    hwlua__name(d, name, sizeof name);
    fprintf(f, addr ? "%s %s %#llx %#llx %s" : "%s %s %llu %#llx %s", hwp_vm_kind_str(d->kind),
            hwp_vm_verdict_str(d->verdict), (unsigned long long)d->id,
            (unsigned long long)d->what, name);
    fprintf(f, share ? " %.3f [%.3f,%.3f]" : " %.0f [%.0f,%.0f]", d->est, d->lo, d->hi);
    fprintf(f, " samples %llu clock %llu\n", (unsigned long long)d->samples,
            (unsigned long long)d->clock);
    fflush(f);
}

/* The exact share of (site, kind, what) among the site's executions so
 * far, and the largest share of any one value or type. */
static double hwlua__share(const hwlua_ent *site, uint64_t kind, uint64_t what, double *top) {
    const hwlua_ent *p = hwlua__pair(site->key, kind, what, 0);
    double n = site->v[0] ? (double)site->v[0] : 1.0;
    size_t i;
    uint64_t most = 0;
    for (i = 0; top && i < V.xpairs.cap; i++) {
        const hwlua_ent *q = &V.xpairs.e[i];
        if (q->key && q->v[1] == site->key && q->v[2] == kind && q->v[0] > most) most = q->v[0];
    }
    if (top) *top = (double)most / n;
    return p ? (double)p->v[0] / n : 0.0;
}

/* Does the exact profile of the run so far say the same: a YES's value
 * (type) holds at least spec_inv of the site's executions, a NO's site
 * has none that does. */
static int hwlua__site_right(const hwlua_ent *site, uint64_t kind, uint32_t verdict,
                             uint64_t what, double spec_inv) {
    double top;
    if (verdict == HWP_VM_YES) return hwlua__share(site, kind, what, NULL) >= spec_inv;
    hwlua__share(site, kind, what, &top);
    return top < spec_inv;
}

/* A decision as the layer takes it: marked for the score (exact=on),
 * written (decisions=FILE). */
static void hwlua__on_decision(void *user, const hwp_vm_decision *d) {
    hwlua_ent *e = NULL;
    (void)user;
    if (V.done) return; /* the files are closed */
    /* a unit the exact count never saw (a bug) is scored as the layer's
     * alone, with a count of 0 */
    if (!V.exact || d->verdict != HWP_VM_YES) e = NULL;
    else if (d->kind == HWP_VM_FUNC && d->id < V.nf) e = hwlua_map_get(&V.xcalls, V.fkey[d->id]);
    else if (d->kind == HWP_VM_LOOP) e = hwlua_map_get(&V.xloops, d->id);
    if (e) e->v[1] = 1;
    if (V.exact && (d->kind == HWP_VM_VALUE || d->kind == HWP_VM_TYPE) && d->id < V.ns &&
        (e = hwlua_map_get(&V.xsites, V.skey[d->id])) != NULL) {
        unsigned at = d->kind == HWP_VM_TYPE ? 2u : 0u;
        hwp_vm_desc vd;
        hwp_vm_get_desc(&V.vm, &vd);
        e->v[1] |= (uint64_t)d->verdict << at;
        e->v[1] |= (uint64_t)hwlua__site_right(e, d->kind, d->verdict, d->what, vd.spec_inv)
                   << (4 + at / 2);
        e->v[2 + at / 2] = d->what;
    }
    if (V.decisions) hwlua__decision_line(V.decisions, d);
}

/* ---- start and end ---------------------------------------------------------- */

const char *hwlua_vm_start(const hwlua_vm_opts *o) {
    static const struct { uint32_t hwx, vm; } bits[] = {
        {HWX_M_PM, HWP_VM_PM}, {HWX_M_STRAT, HWP_VM_STRAT}, {HWX_M_RAP, HWP_VM_RAP},
        {HWX_M_PATH, HWP_VM_PATH}, {HWX_M_COPROC, HWP_VM_CP}};
    hwp_vm_desc d = o->d;
    size_t n, i;
    d.models = 0;
    for (i = 0; i < sizeof bits / sizeof bits[0]; i++)
        if (o->models & bits[i].hwx) d.models |= bits[i].vm;
    d.on_decision = o->decisions || o->exact ? hwlua__on_decision : NULL;
    V.decisions = o->decisions;
    V.exact = o->exact;
    V.maxf = d.funcs;
    V.maxs = d.sites;
    V.fkey = (uint64_t *)calloc(d.funcs ? d.funcs : 1, sizeof *V.fkey);
    V.skey = (uint64_t *)calloc(d.sites ? d.sites : 1, sizeof *V.skey);
    if (!V.fkey || !V.skey) return "layer=vm: out of memory for the id tables";
    /* floor=on: the hooks as they are, in front of a zeroed hwp_vm (the
     * layer's "off"): its first op arms a countdown that never runs out,
     * and the flag never goes up */
    if (o->floor) {
        V.exact = 0;
        hwlua_left = 1;
        return NULL;
    }
    n = hwp_vm_bytes(&d);
    if ((V.mem = malloc(n ? n : 1)) == NULL) return "layer=vm: out of memory";
    if (hwp_vm_init(&V.vm, V.mem, n, &d, NULL) != HWP_OK) return hwp_why(&V.vm);
    hwlua_left = (long)hwp_vm_left(&V.vm);
    hwlua__flag();
    return NULL;
}

static void hwlua__put_ids(const hwp_writer *w, const char *what, uint32_t n, uint32_t max,
                           uint64_t over) {
    hwp_put_str_u64(w, what, n);
    hwp_put_str_u64(w, " of ", max);
    hwp_put_str_u64(w, " ids, ", over);
    hwp_put_str(w, " events past them dropped");
}

/* One kind's score: the layer's hot decisions against the exact counts at
 * the end, under the layer's rule (hot at `hot`). Lists each function or
 * loop on which the two differ. A unit just past `hot` is decided only
 * once the interval's lower end clears it, which a sample of the run may
 * not reach by the end; recall is also given over the units at least
 * HWLUA_CLEAR times past it, which a sampled profile should not miss. */
#define HWLUA_CLEAR 4u
static void hwlua__score(FILE *f, const char *what, const hwlua_map *m, uint64_t hot,
                         const char *unnamed) {
    unsigned exact = 0, layer = 0, both = 0, clear = 0, clear_both = 0;
    size_t i;
    for (i = 0; i < m->cap; i++) {
        const hwlua_ent *e = &m->e[i];
        int ex = e->key && e->v[0] >= hot, ly = e->key && e->v[1];
        exact += ex;
        layer += ly;
        both += ex && ly;
        if (e->key && e->v[0] >= HWLUA_CLEAR * hot) {
            clear++;
            clear_both += ly;
        }
        if (ex == ly) continue;
        fprintf(f, "  %-9s %-5s %#llx %s:%u exact %llu\n", what, ex ? "exact" : "layer",
                (unsigned long long)e->key, e->v[2] ? hwlua_source_name((unsigned)e->v[3]) : unnamed,
                (unsigned)e->v[2], (unsigned long long)e->v[0]);
    }
    fprintf(f, "  %-9s exact %u, layer %u, both %u: precision %.3f recall %.3f; at >= %ux: %u "
               "of %u, recall %.3f\n", what, exact, layer, both,
            layer ? (double)both / layer : 1.0, exact ? (double)both / exact : 1.0, HWLUA_CLEAR,
            clear_both, clear, clear ? (double)clear_both / clear : 1.0);
}

/* One kind's site score. Precision: the verdicts that held on the exact
 * profile of the run so far when streamed (a YES's value holds at least
 * spec_inv of the site's executions, a NO's site has no value that does);
 * "later wrong" counts those the whole run no longer bears out (the site
 * changed: a JIT's deoptimisation), listed with the site. Recall is over
 * the sites whose whole-run answer is clear and whose executions give the
 * models, at the rate they sampled this run (rate: samples behind the
 * site verdicts per execution), four times the samples a verdict needs:
 * those at least (1 + spec_inv) / 2 invariant should get a YES, those at
 * most 2 spec_inv - 1 a NO. */
static void hwlua__score_sites(FILE *f, const char *what, uint64_t kind, double spec_inv,
                               double rate, double need) {
    unsigned at = kind == HWP_VM_TYPE ? 2u : 0u, said = 0, right = 0, later = 0;
    unsigned inv = 0, inv_yes = 0, var = 0, var_no = 0, any = 0, any_yes = 0;
    size_t i;
    for (i = 0; i < V.xsites.cap; i++) {
        const hwlua_ent *e = &V.xsites.e[i];
        uint32_t verdict = (uint32_t)(e->v[1] >> at & 3u);
        double n = (double)e->v[0], top, share;
        int clear = n * rate >= 4.0 * need;
        if (!e->key || !e->v[0]) continue;
        share = hwlua__share(e, kind, e->v[2 + at / 2], &top);
        if (verdict) {
            int now = (int)(e->v[1] >> (4 + at / 2) & 1u);
            said++;
            right += now;
            if (!now)
                fprintf(f, "  %-9s wrong %#llx said %s %#llx: not so on the run so far\n", what,
                        (unsigned long long)e->key, hwp_vm_verdict_str(verdict),
                        (unsigned long long)e->v[2 + at / 2]);
            else if (!hwlua__site_right(e, kind, verdict, e->v[2 + at / 2], spec_inv)) {
                later++;
                fprintf(f, "  %-9s later %#llx said %s %#llx: whole run's share %.3f, top %.3f "
                           "of %llu executions\n", what, (unsigned long long)e->key,
                        hwp_vm_verdict_str(verdict), (unsigned long long)e->v[2 + at / 2], share,
                        top, (unsigned long long)e->v[0]);
            }
        }
        if (top >= spec_inv) {
            any++;
            any_yes += verdict == HWP_VM_YES;
        }
        if (clear && top >= (1.0 + spec_inv) / 2) {
            inv++;
            inv_yes += verdict == HWP_VM_YES;
        } else if (clear && top <= 2 * spec_inv - 1) {
            var++;
            var_no += verdict == HWP_VM_NO;
        }
    }
    fprintf(f, "  %-9s said %u, right %u: precision %.3f, later wrong %u; clear invariant %u, "
               "said yes %u, recall %.3f; clear variant %u, said no %u, recall %.3f; invariant "
               "at any count %u, said yes %u\n",
            what, said, right, said ? (double)right / said : 1.0, later, inv, inv_yes,
            inv ? (double)inv_yes / inv : 1.0, var, var_no, var ? (double)var_no / var : 1.0, any,
            any_yes);
}

/* The sites' part of the exact score: the models' sampling rate this run
 * (samples behind the verdicts per execution) and the samples a verdict
 * needs (a Wilson floor that clears spec_inv from samples that all agree:
 * n / (n + 1.96^2) >= spec_inv, and min_samples). */
static void hwlua__score_all_sites(FILE *f, const hwp_vm_desc *d) {
    double samples = 0, runs = 0, s = d->spec_inv;
    double need = 1.96 * 1.96 * s / (1 - s);
    uint32_t id;
    size_t i;
    if (need < d->min_samples) need = d->min_samples;
    for (id = 0; id < V.ns; id++) {
        hwp_vm_decision q;
        if (hwp_vm_site(&V.vm, id, HWP_VM_VALUE, &q) == HWP_OK) samples += (double)q.samples;
    }
    for (i = 0; i < V.xsites.cap; i++) runs += (double)V.xsites.e[i].v[0];
    fprintf(f, "-- value and type verdicts against the exact shares (specialise at %.3f; %.0f "
               "samples for a verdict; the models sampled %.5f of %.0f site executions; %llu "
               "pairs not counted) --\n",
            s, ceil(need), runs ? samples / runs : 0.0, runs, (unsigned long long)V.xclash);
    hwlua__score_sites(f, "values", HWP_VM_VALUE, s, runs ? samples / runs : 0.0, ceil(need));
    hwlua__score_sites(f, "types", HWP_VM_TYPE, s, runs ? samples / runs : 0.0, ceil(need));
}

void hwlua_vm_finish(const char *report, const char *json) {
    hwx_out out;
    const char *why = NULL;
    hwlua_on = 0;
    hwp_vm_set_left(&V.vm, hwlua_left);
    hwp_vm_flush(&V.vm); /* refused by a zeroed handle (floor=on) */
    V.done = 1;
    if (hwx_out_open(&out, report, &why) == HWP_OK) {
        hwp_vm_write_text(&V.vm, &out.w);
        hwlua__put_ids(&out.w, "lua: functions ", V.nf, V.maxf, V.f_over);
        hwlua__put_ids(&out.w, "; sites ", V.ns, V.maxs, V.s_over);
        hwp_put_str(&out.w, "\n");
        if (V.exact) {
            hwp_vm_desc d;
            FILE *f = (FILE *)out.f;
            hwp_vm_get_desc(&V.vm, &d);
            fflush(f);
            fprintf(f, "-- hot decisions against the exact counts at the end (functions hot at "
                       ">= %llu calls, loops at >= %llu back edges) --\n",
                    (unsigned long long)d.hot_calls, (unsigned long long)d.hot_loops);
            hwlua__score(f, "functions", &V.xcalls, d.hot_calls, "(C)");
            hwlua__score(f, "loops", &V.xloops, d.hot_loops, "-");
            hwlua__score_all_sites(f, &d);
        }
        if (hwx_out_close(&out, &why) != HWP_OK) fprintf(stderr, "lua-hwprof: %s\n", why);
    } else {
        fprintf(stderr, "lua-hwprof: %s\n", why);
    }
    if (!json[0]) return;
    if (hwx_out_open(&out, json, &why) == HWP_OK) {
        hwp_vm_write_json(&V.vm, &out.w);
        hwp_put_str(&out.w, "\n");
        if (hwx_out_close(&out, &why) != HWP_OK) fprintf(stderr, "lua-hwprof: %s\n", why);
    } else {
        fprintf(stderr, "lua-hwprof: %s\n", why);
    }
}
