/* examples/valgrind/hw_main.c: hwprof as a Valgrind tool.
 *
 *   VALGRIND_LIB=<build>/examples/valgrind/lib valgrind --tool=hwprof \
 *       [--hwprof-deterministic=yes|no] [--hwprof-random-seed=N] \
 *       [--<key>=<value> ...] prog args
 *
 * Every --<key>=<value> the tool does not own itself goes to
 * hwx_opts_set() (examples/common/hwx.h), so model options, exact=on and
 * record=FILE read the same here as in the QEMU plugin.
 *
 * How the event stream is made (docs/valgrind.md has the long version):
 *   - Guest chasing and loop unrolling are forced off, so every superblock
 *     ends in exactly one control transfer and a record's taken bit is
 *     never hidden inside a superblock that jumped over it.
 *   - At every instruction mark a dirty call hands the tool the
 *     instruction's static facts (pc, length, class, direct target). The
 *     record of the instruction before it is completed then: its next_pc
 *     is this pc, so "taken" is exact whatever path left the superblock
 *     (side exit, signal, syscall restart, rep iteration).
 *   - After every load a dirty call passes the address and the low 64 bits
 *     of the IR temporary the load produced: the loaded value.
 *   - Branch class comes from the instruction bytes (hwx_x86_decode) and
 *     is cross-checked against the superblock's VEX jump kind and side
 *     exit; disagreements are counted and reported.
 *   - Determinism (on unless --hwprof-deterministic=no): before the first
 *     guest instruction the 16 AT_RANDOM bytes on the client's initial
 *     stack are overwritten with bytes drawn from a fixed seed (glibc's
 *     stack canary and pointer guard), and the vDSO is hidden from the
 *     client (AT_SYSINFO_EHDR -> AT_IGNORE: its address moves with the
 *     kernel's ASLR and its clock code loops on timing). getrandom(2)
 *     returns bytes from the same seed, the clock syscalls a virtual
 *     clock (hw_post_syscall). rdtsc reads a virtual counter, the
 *     thread's retired instructions, instead of the host's TSC (ld.so
 *     times itself with it). With these the event stream repeats from run
 *     to run but for the pid, which glibc caches and loads (run under a
 *     PID namespace to pin it; docs/valgrind.md).
 *
 * The tool runs with no libc: Valgrind's VG_(...) functions only, memory
 * from VG_(malloc), reports through an hwp_writer over VG_(write).
 */
#include "pub_tool_basics.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_machine.h"
#include "pub_tool_options.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_vkiscnums.h"
#include "libvex_guest_amd64.h"

#include "hw_host.h"

/* The client's auxiliary vector, set up by the core when it built the
 * initial stack (coregrind/m_clientstate.c). Not in the pub_tool headers,
 * but exported by libcoregrind; we only read the vector and rewrite the
 * 16 bytes its AT_RANDOM entry points at. */
extern UWord *VG_(client_auxv);

#define HW_AT_NULL 0
#define HW_AT_IGNORE 1
#define HW_AT_SYSINFO_EHDR 33
#define HW_AT_RANDOM 25

/* ---- options ------------------------------------------------------------ */

static Bool hw_deterministic = True;
static ULong hw_random_seed = 0x6877707266ULL; /* "hwprf" */
static Bool hw_auxv_done;
/* Instrument loads and stores at all? Not when no enabled part reads
 * them (control-flow models only): the records then carry no LOAD or
 * STORE classes, and the tool runs with a third of the calls. */
static Bool hw_need_memory = True;
static hw_host hw_host_state;
/* core=on: hand the core each instruction's registers from VEX IR; no
 * times the same stream without dependences, for comparison. */
static Bool hw_regs_on = True;
static hwp_rng hw_getrandom_rng;
static hw_thread **hw_threads; /* VG_N_THREADS slots (a run-time figure) */

/* ---- determinism ------------------------------------------------------- */

static void hw_fix_auxv(void) {
    UWord *av = VG_(client_auxv);
    hwp_rng r;
    if (!hw_deterministic || !av) return;
    hwp_rng_seed(&r, hw_random_seed);
    hwp_rng_seed(&hw_getrandom_rng, hw_random_seed ^ 0x67657472616e64ULL);
    for (; av[0] != HW_AT_NULL; av += 2) {
        if (av[0] == HW_AT_RANDOM && av[1]) {
            ULong a = hwp_rng_next(&r), b = hwp_rng_next(&r);
            VG_(memcpy)((void *)av[1], &a, 8);
            VG_(memcpy)((void *)(av[1] + 8), &b, 8);
            hw_host_state.auxv_fixed = 1;
        } else if (av[0] == HW_AT_SYSINFO_EHDR || av[0] == HW_AT_IGNORE) {
            /* Valgrind already turns some entries into AT_IGNORE but keeps
             * their values (its own vDSO address); ld.so loads every
             * value, so zero those too. */
            av[0] = HW_AT_IGNORE;
            av[1] = 0;
        }
    }
}

/* Syscall results a program's control flow may depend on, replaced
 * after the kernel produced them (all under --hwprof-deterministic):
 *   getrandom(2): bytes from the seeded stream hw_getrandom_rng, not the
 *     kernel's (glibc's malloc tcache key, Python's and OpenSSL's seeds);
 *     one stream per process, so the n-th call gets the same bytes in
 *     every run;
 *   clock_gettime, gettimeofday, time: a virtual clock that advances
 *     1 ns per instruction retired by the process (all threads), from a
 *     fixed epoch. Python, for one, formats times into strings whose
 *     length changes its control flow;
 *   sysinfo: uptime from the virtual clock, load averages 0, free memory
 *     half the total, one process (glibc's sysconf(_SC_AVPHYS_PAGES) and
 *     Python's start-up read it).
 * The pid is the one input left: glibc caches it and loads it (values
 * differ between runs; control flow does not). */
#define HW_EPOCH_S 1767225600ULL /* 2026-01-01 00:00:00 UTC */

static ULong hw_virtual_ns(void) {
    ULong n = 0;
    UInt t;
    for (t = 0; t < VG_N_THREADS; t++)
        if (hw_threads[t]) n += hw_threads[t]->st.insns;
    return n;
}

/* clock ids 0 (REALTIME), 5 (REALTIME_COARSE), 8 (REALTIME_ALARM) and
 * 11 (TAI) carry the epoch; the rest count from boot/process start. */
static ULong hw_virtual_clock_ns(UWord clock_id) {
    Bool wall = clock_id == 0 || clock_id == 5 || clock_id == 8 || clock_id == 11;
    return hw_virtual_ns() + (wall ? HW_EPOCH_S * 1000000000ULL : 0);
}

static void hw_pre_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nargs) {
    (void)tid; (void)sysno; (void)args; (void)nargs;
}

static void hw_post_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nargs,
                            SysRes res) {
    (void)nargs;
    if (!hw_deterministic || sr_isError(res)) return;
    if (sysno == __NR_getrandom) {
        UChar *buf = (UChar *)args[0];
        SizeT n = (SizeT)sr_Res(res), i;
        for (i = 0; i < n; i += 8) {
            ULong v = hwp_rng_next(&hw_getrandom_rng);
            VG_(memcpy)(buf + i, &v, n - i < 8 ? n - i : 8);
        }
        hw_host_state.getrandom_calls++;
    } else if (sysno == __NR_clock_gettime && args[1]) {
        ULong ns = hw_virtual_clock_ns(args[0]);
        ULong ts[2];
        ts[0] = ns / 1000000000ULL;
        ts[1] = ns % 1000000000ULL;
        VG_(memcpy)((void *)args[1], ts, sizeof ts);
        hw_host_state.clock_calls++;
    } else if (sysno == __NR_gettimeofday && args[0]) {
        ULong ns = hw_virtual_clock_ns(0);
        ULong tv[2];
        tv[0] = ns / 1000000000ULL;
        tv[1] = ns % 1000000000ULL / 1000ULL;
        VG_(memcpy)((void *)args[0], tv, sizeof tv);
        hw_host_state.clock_calls++;
    } else if (sysno == __NR_sysinfo && args[0]) {
        /* struct sysinfo on amd64: uptime@0, loads[3]@8, totalram@32,
         * freeram@40, sharedram@48, bufferram@56, totalswap@64,
         * freeswap@72, procs@80 (u16), totalhigh@88, freehigh@96. */
        UChar *si = (UChar *)args[0];
        ULong v[3] = {0, 0, 0}, total, half;
        UShort procs = 1;
        v[0] = hw_virtual_clock_ns(1) / 1000000000ULL;
        VG_(memcpy)(si, &v[0], 8);
        v[0] = 0;
        VG_(memcpy)(si + 8, v, 24);
        VG_(memcpy)(&total, si + 32, 8);
        half = total / 2;
        VG_(memcpy)(si + 40, &half, 8);
        VG_(memcpy)(si + 48, v, 16);
        VG_(memcpy)(&total, si + 64, 8);
        half = total / 2;
        VG_(memcpy)(si + 72, &half, 8);
        VG_(memcpy)(si + 80, &procs, 2);
        VG_(memcpy)(si + 96, v, 8);
        hw_host_state.clock_calls++;
    } else if (sysno == __NR_time) {
        ULong sec = hw_virtual_clock_ns(0) / 1000000000ULL;
        if (args[0]) VG_(memcpy)((void *)args[0], &sec, sizeof sec);
        VG_(set_shadow_regs_area)(tid, 0, offsetof(VexGuestAMD64State, guest_RAX),
                                  sizeof sec, (const UChar *)&sec);
        hw_host_state.clock_calls++;
    }
}

/* ---- per-thread state --------------------------------------------------- */

static hw_thread *hw_cur; /* the thread running client code right now */
static void hw_bbv_open(ThreadId tid, hw_thread *t);

static hw_thread *hw_thread_get(ThreadId tid) {
    if (!hw_threads[tid]) {
        const char *why;
        hw_threads[tid] = hw_thread_new(&hw_host_state, (UInt)tid, &why);
        if (!hw_threads[tid]) VG_(tool_panic)("hwprof: out of memory");
        if (why[0]) VG_(umsg)("hwprof: thread %u: %s\n", (UInt)tid, why);
        hw_bbv_open(tid, hw_threads[tid]);
    }
    return hw_threads[tid];
}

/* Valgrind runs one thread at a time; this says which, so the hot helpers
 * need no VG_(get_running_tid)() call. */
static void hw_start_client_code(ThreadId tid, ULong blocks_done) {
    (void)blocks_done;
    if (!hw_auxv_done) { /* before the client's very first instruction */
        hw_auxv_done = True;
        hw_fix_auxv();
    }
    hw_cur = hw_thread_get(tid);
}

/* The client unmapped memory: code there is gone (a JIT's freed pages, a
 * library dlclose'd), and every thread's models let go of it. Valgrind
 * runs one thread at a time, so the other threads' sessions are idle. */
static void hw_die_munmap(Addr a, SizeT len) {
    if (len) hw_host_retire(&hw_host_state, hw_threads, VG_N_THREADS, a, a + len - 1);
}

/* ---- hot helpers, called from the instrumented code --------------------- */

/* Instruction mark: complete the previous record, start this one.
 * meta packs length, class and the indirect-call bit (hw_host.h,
 * HW_META_*) so the call takes three immediates only. */
static VG_REGPARM(3) void hw_on_insn(ULong pc, ULong meta, ULong target) {
    hw_thread_insn(hw_cur, pc, meta, target);
}

static VG_REGPARM(2) void hw_on_load(ULong addr, ULong value) {
    hw_thread_load(hw_cur, addr, value);
}

static VG_REGPARM(1) void hw_on_store(ULong addr) {
    hw_thread_store(hw_cur, addr);
}

/* The virtual TSC: instructions this thread has retired, in place of
 * VEX's amd64g_dirtyhelper_RDTSC. */
static ULong hw_rdtsc(void) { return hw_cur->st.insns; }

/* ---- instrumentation ----------------------------------------------------- */

/* The low 64 bits of a loaded value, as an I64 atom in sbOut; NULL when
 * the type carries no integer view we want (I1, I128 halves come first). */
static IRExpr *hw_widen(IRSB *sb, IRType ty, IRExpr *e) {
    IROp op;
    IRTemp t;
    switch (ty) {
    case Ity_I8: op = Iop_8Uto64; break;
    case Ity_I16: op = Iop_16Uto64; break;
    case Ity_I32: op = Iop_32Uto64; break;
    case Ity_I64: return e;
    case Ity_F64: op = Iop_ReinterpF64asI64; break;
    case Ity_V128: op = Iop_V128to64; break;
    case Ity_V256: op = Iop_V256to64_0; break;
    case Ity_I128: op = Iop_128to64; break;
    case Ity_F32: {
        IRTemp t32 = newIRTemp(sb->tyenv, Ity_I32);
        addStmtToIRSB(sb, IRStmt_WrTmp(t32, IRExpr_Unop(Iop_ReinterpF32asI32, e)));
        e = IRExpr_RdTmp(t32);
        op = Iop_32Uto64;
        break;
    }
    default: return NULL;
    }
    t = newIRTemp(sb->tyenv, Ity_I64);
    addStmtToIRSB(sb, IRStmt_WrTmp(t, IRExpr_Unop(op, e)));
    return IRExpr_RdTmp(t);
}

static void hw_call(IRSB *sb, const HChar *name, void *fn, Int regparms,
                    IRExpr **args) {
    IRDirty *d = unsafeIRDirty_0_N(regparms, name, VG_(fnptr_to_fnentry)(fn), args);
    addStmtToIRSB(sb, IRStmt_Dirty(d));
}

static void hw_call_load(IRSB *sb, IRExpr *addr, IRType ty, IRExpr *value) {
    IRExpr *v = hw_widen(sb, ty, value);
    if (!v) {
        hw_host_state.unseen_loads++;
        return;
    }
    hw_call(sb, "hw_on_load", hw_on_load, 2, mkIRExprVec_2(addr, v));
}

/* The class VEX's IR implies for the superblock's last instruction:
 * its jump kind, whether it has a side exit, and where `next` points. */
static void hw_vex_class(const IRSB *sb, Addr pc, UInt len, Bool has_exit,
                         Addr exit_dst, hw_vex_view *v) {
    Bool next_const = sb->next->tag == Iex_Const;
    Addr next = next_const ? (Addr)sb->next->Iex.Const.con->Ico.U64 : 0;
    v->indirect = 0;
    v->target = 0;
    v->cls = HWP_CLS_OTHER; /* syscalls, client requests, traps */
    switch (sb->jumpkind) {
    case Ijk_Call:
        v->cls = HWP_CLS_CALL;
        v->indirect = !next_const;
        v->target = next;
        break;
    case Ijk_Ret:
        v->cls = HWP_CLS_RET;
        break;
    case Ijk_Boring:
        if (has_exit && next_const) {
            /* jcc: one side is the fall-through, the other the target. */
            v->target = exit_dst == pc + len ? next : exit_dst;
            v->cls = HWP_CLS_BR_COND;
        } else if (!next_const) {
            v->cls = HWP_CLS_INDIRECT;
        } else if (next != pc + len) {
            v->cls = HWP_CLS_JUMP;
            v->target = next;
        } /* else: the superblock ended at its size limit */
        /* A rep-prefixed string op runs one iteration per superblock and
         * then jumps to itself: that is no branch. */
        if (v->target == pc) v->cls = HWP_CLS_OTHER;
        break;
    default:
        break;
    }
    if (v->cls == HWP_CLS_OTHER) v->target = 0;
}

/* ---- registers (core=on) --------------------------------------------------
 * Each guest instruction's IR reads guest registers with Get/GetI and
 * writes them with Put/PutI at offsets into VexGuestAMD64State
 * (libvex_guest_amd64.h); dirty helpers (cpuid, xsave) declare theirs in
 * fxState. hw_reg_of maps every byte of the state to a register number
 * for the core: 1..16 RAX..R15 (in the state's order), 17 the flags (the
 * four-word thunk CC_OP/CC_DEP1/CC_DEP2/CC_NDEP, written together by
 * every flag-setting instruction), 18..33 YMM0..YMM15, 34 the x87 stack
 * (registers, top, tags and condition codes as one). 0 for the rest: RIP
 * and IP_AT_SYSCALL (every instruction "writes" RIP), the direction and
 * ID flags, rounding modes, segment bases, emulation notes. */
enum { HW_REG_FLAGS = 17, HW_REG_YMM0 = 18, HW_REG_X87 = 34 };
static UChar hw_reg_of[sizeof(VexGuestAMD64State)];

static void hw_reg_range(Int off, Int size, UInt reg) {
    VG_(memset)(hw_reg_of + off, (Int)reg, (SizeT)size);
}

static void hw_regs_init(void) {
    UInt r;
    hw_reg_range(offsetof(VexGuestAMD64State, guest_RAX), 16 * 8, 0);
    for (r = 0; r < 16; r++)
        hw_reg_range(offsetof(VexGuestAMD64State, guest_RAX) + 8 * (Int)r, 8, 1 + r);
    hw_reg_range(offsetof(VexGuestAMD64State, guest_CC_OP), 4 * 8, HW_REG_FLAGS);
    for (r = 0; r < 16; r++)
        hw_reg_range(offsetof(VexGuestAMD64State, guest_YMM0) + 32 * (Int)r, 32,
                     HW_REG_YMM0 + r);
    hw_reg_range(offsetof(VexGuestAMD64State, guest_FTOP), 4, HW_REG_X87);
    hw_reg_range(offsetof(VexGuestAMD64State, guest_FPREG), 8 * 8, HW_REG_X87);
    hw_reg_range(offsetof(VexGuestAMD64State, guest_FPTAG), 8, HW_REG_X87);
    hw_reg_range(offsetof(VexGuestAMD64State, guest_FC3210), 8, HW_REG_X87);
}

static UInt hw_reg(Int off) {
    return off >= 0 && (SizeT)off < sizeof hw_reg_of ? hw_reg_of[off] : 0;
}

/* The core's op class of an IR operation: integer multiply and divide,
 * floating-point divide and square root, other floating-point arithmetic;
 * AUTO (the class's own latency) for the rest. */
static UInt hw_op_class(IROp op) {
    switch (op) {
    case Iop_Mul8: case Iop_Mul16: case Iop_Mul32: case Iop_Mul64:
    case Iop_MullS8: case Iop_MullS16: case Iop_MullS32: case Iop_MullS64:
    case Iop_MullU8: case Iop_MullU16: case Iop_MullU32: case Iop_MullU64:
        return HWP_CORE_OP_MUL;
    case Iop_DivU32: case Iop_DivS32: case Iop_DivU64: case Iop_DivS64:
    case Iop_DivModU64to32: case Iop_DivModS64to32:
    case Iop_DivModU128to64: case Iop_DivModS128to64:
        return HWP_CORE_OP_DIV;
    case Iop_DivF64: case Iop_DivF32: case Iop_SqrtF64: case Iop_SqrtF32:
    case Iop_Div64F0x2: case Iop_Div32F0x4: case Iop_Div64Fx2: case Iop_Div32Fx4:
    case Iop_Sqrt64F0x2: case Iop_Sqrt32F0x4:
        return HWP_CORE_OP_FDIV;
    case Iop_AddF64: case Iop_SubF64: case Iop_MulF64:
    case Iop_AddF32: case Iop_SubF32: case Iop_MulF32:
    case Iop_Add64F0x2: case Iop_Sub64F0x2: case Iop_Mul64F0x2:
    case Iop_Add32F0x4: case Iop_Sub32F0x4: case Iop_Mul32F0x4:
    case Iop_Add64Fx2: case Iop_Sub64Fx2: case Iop_Mul64Fx2:
    case Iop_Add32Fx4: case Iop_Sub32Fx4: case Iop_Mul32Fx4:
    case Iop_F64toI32S: case Iop_F64toI64S: case Iop_I64StoF64:
    case Iop_F32toF64: case Iop_F64toF32:
        return HWP_CORE_OP_FP;
    default:
        return HWP_CORE_OP_AUTO;
    }
}

/* Which op classes win when an instruction has several: the longest
 * latency in the 21264's table (divides, then multiply, then fp). */
static const UChar hw_op_rank[HWP_CORE_OP_COUNT] = {0, 0, 2, 4, 1, 3};

static void hw_op_note(hwp_core_ops *r, const IRExpr *e) {
    UInt c;
    switch (e->tag) {
    case Iex_Binop: c = hw_op_class(e->Iex.Binop.op); break;
    case Iex_Triop: c = hw_op_class(e->Iex.Triop.details->op); break;
    case Iex_Unop: c = hw_op_class(e->Iex.Unop.op); break;
    default: return;
    }
    if (hw_op_rank[c] > hw_op_rank[r->op]) r->op = (uint8_t)c;
}

/* Temps holding loaded data, or values computed from it, within one
 * instruction: a register Put from one of them gets the load's latency,
 * any other register the instruction writes is an address update (pop's
 * RSP, a string op's RSI/RDI/RCX) ready after an integer op. Beyond
 * HW_LOADED_MAX temps, every destination counts as loaded data. */
#define HW_LOADED_MAX 16
typedef struct hw_loaded {
    IRTemp t[HW_LOADED_MAX];
    UInt n;
    Bool over;
} hw_loaded;

static Bool hw_loaded_atom(const hw_loaded *l, const IRExpr *e) {
    UInt i;
    if (!e || e->tag != Iex_RdTmp) return False;
    for (i = 0; i < l->n; i++)
        if (l->t[i] == e->Iex.RdTmp.tmp) return True;
    return False;
}

/* The atoms (temps and constants) a flat expression or statement reads,
 * handed to `f` until it answers True; the answer is whether one did.
 * One walker serves both the loaded-data marking and the block's
 * register uses, so the two cannot disagree on what a statement reads. */
typedef Bool (*hw_atom_fn)(void *ctx, const IRExpr *atom);

static Bool hw_atoms_expr(const IRExpr *e, hw_atom_fn f, void *ctx) {
    Int k;
    if (!e) return False;
    switch (e->tag) {
    case Iex_RdTmp: return f(ctx, e);
    case Iex_GetI: return f(ctx, e->Iex.GetI.ix);
    case Iex_Load: return f(ctx, e->Iex.Load.addr);
    case Iex_Unop: return f(ctx, e->Iex.Unop.arg);
    case Iex_Binop: return f(ctx, e->Iex.Binop.arg1) || f(ctx, e->Iex.Binop.arg2);
    case Iex_Triop:
        return f(ctx, e->Iex.Triop.details->arg1) || f(ctx, e->Iex.Triop.details->arg2) ||
               f(ctx, e->Iex.Triop.details->arg3);
    case Iex_Qop:
        return f(ctx, e->Iex.Qop.details->arg1) || f(ctx, e->Iex.Qop.details->arg2) ||
               f(ctx, e->Iex.Qop.details->arg3) || f(ctx, e->Iex.Qop.details->arg4);
    case Iex_ITE:
        return f(ctx, e->Iex.ITE.cond) || f(ctx, e->Iex.ITE.iftrue) ||
               f(ctx, e->Iex.ITE.iffalse);
    case Iex_CCall:
        for (k = 0; e->Iex.CCall.args[k]; k++)
            if (f(ctx, e->Iex.CCall.args[k])) return True;
        return False;
    default: return False;
    }
}

static Bool hw_atoms_stmt(const IRStmt *st, hw_atom_fn f, void *ctx) {
    Int k;
    switch (st->tag) {
    case Ist_WrTmp: return hw_atoms_expr(st->Ist.WrTmp.data, f, ctx);
    case Ist_Put: return f(ctx, st->Ist.Put.data);
    case Ist_PutI: return f(ctx, st->Ist.PutI.details->ix) || f(ctx, st->Ist.PutI.details->data);
    case Ist_Store: return f(ctx, st->Ist.Store.addr) || f(ctx, st->Ist.Store.data);
    case Ist_StoreG:
        return f(ctx, st->Ist.StoreG.details->addr) || f(ctx, st->Ist.StoreG.details->data) ||
               f(ctx, st->Ist.StoreG.details->guard);
    case Ist_LoadG:
        return f(ctx, st->Ist.LoadG.details->addr) || f(ctx, st->Ist.LoadG.details->alt) ||
               f(ctx, st->Ist.LoadG.details->guard);
    case Ist_CAS: {
        const IRCAS *c = st->Ist.CAS.details;
        return f(ctx, c->addr) || (c->expdHi && f(ctx, c->expdHi)) || f(ctx, c->expdLo) ||
               (c->dataHi && f(ctx, c->dataHi)) || f(ctx, c->dataLo);
    }
    case Ist_LLSC:
        return f(ctx, st->Ist.LLSC.addr) ||
               (st->Ist.LLSC.storedata && f(ctx, st->Ist.LLSC.storedata));
    case Ist_Dirty: {
        const IRDirty *d = st->Ist.Dirty.details;
        if (f(ctx, d->guard)) return True;
        for (k = 0; d->args[k]; k++)
            if (f(ctx, d->args[k])) return True;
        return False;
    }
    case Ist_Exit: return f(ctx, st->Ist.Exit.guard);
    default: return False;
    }
}

static Bool hw_loaded_pred(void *ctx, const IRExpr *atom) {
    return hw_loaded_atom((const hw_loaded *)ctx, atom);
}

/* Does the (flat) expression read a loaded temp? */
static Bool hw_loaded_uses(const hw_loaded *l, const IRExpr *e) {
    return hw_atoms_expr(e, hw_loaded_pred, (void *)l);
}

static void hw_loaded_add(hw_loaded *l, IRTemp t) {
    if (l->n < HW_LOADED_MAX) l->t[l->n++] = t;
    else l->over = True;
}

/* A Put of `data` to `reg`: mark the destination as loaded data. */
static void hw_regs_put(hwp_core_ops *r, UInt *data, const hw_loaded *l, UInt reg,
                        const IRExpr *e) {
    UInt i;
    hw_regs_write(&hw_host_state, r, reg);
    if (l->over || hw_loaded_atom(l, e))
        for (i = 0; i < r->ndst; i++)
            if (r->dst[i] == reg) *data |= 1u << i;
}

/* ---- registers across the instructions of a superblock --------------------
 * VEX optimises a superblock before the tool sees it. Its redundant-Get
 * removal replaces a Get of a guest register at an offset and type the
 * block already wrote (Put) or read (Get) by the temp holding that value,
 * and copy propagation then writes the temp straight into the reading
 * instruction's statements. So an instruction reading a register that an
 * earlier instruction of the block wrote shows no Get: it uses that
 * instruction's temp. IR temps are assigned once (SSA), so a temp names
 * one value; hw_block follows which register holds which temp: a Get of
 * register R or a Put of temp t to R binds t to R, and the first write
 * of R by an instruction unbinds every temp R held (a Put of a constant,
 * a PutI, a helper's fxState write included). A temp still held by its
 * register and used by a later instruction than the one that bound it is
 * a read of that register (the value is the register's content at that
 * point; the register has not changed since). A temp that holds no
 * register (an address computed twice and shared by common-subexpression
 * elimination) is not followed: nothing says which register the second
 * instruction read. */
/* Temps one register holds at a time: the flag thunk's four words, a
 * YMM's halves, the x87 stack's eight registers; a ninth goes unbound. */
#define HW_HOLD_MAX 8
#define HW_NREGS (HW_REG_X87 + 1)
typedef struct hw_block {
    UInt ins;                          /* the instruction being scanned, from 1 */
    UChar *tmp_reg;                    /* per temp: the register last bound to  */
    UInt *tmp_ins;                     /* per temp: the instruction binding it  */
    Int cap;                           /* temps the two arrays have room for    */
    IRTemp held[HW_NREGS][HW_HOLD_MAX];
    UChar nheld[HW_NREGS];
    UInt wrote[HW_NREGS];              /* the last instruction writing each     */
} hw_block;
static hw_block hw_blk;

static void hw_block_start(hw_block *b, const IRSB *sb) {
    Int n = sb->tyenv->types_used;
    if (n > b->cap) {
        b->tmp_reg = VG_(realloc)("hwprof.block", b->tmp_reg, (SizeT)n);
        b->tmp_ins = VG_(realloc)("hwprof.block", b->tmp_ins, (SizeT)n * sizeof(UInt));
        b->cap = n;
    }
    if (n > 0) VG_(memset)(b->tmp_reg, 0, (SizeT)n);
    VG_(memset)(b->nheld, 0, sizeof b->nheld);
    VG_(memset)(b->wrote, 0, sizeof b->wrote);
    b->ins = 0;
}

static void hw_block_bind(hw_block *b, IRTemp t, UInt reg) {
    if (!reg || t >= (IRTemp)b->cap || b->nheld[reg] == HW_HOLD_MAX) return;
    b->held[reg][b->nheld[reg]++] = t;
    b->tmp_reg[t] = (UChar)reg;
    b->tmp_ins[t] = b->ins;
}

/* Register `reg` written with `data` (NULL: by a helper). */
static void hw_block_write(hw_block *b, UInt reg, const IRExpr *data) {
    if (!reg) return;
    if (b->wrote[reg] != b->ins) {
        b->nheld[reg] = 0;
        b->wrote[reg] = b->ins;
    }
    if (data && data->tag == Iex_RdTmp) hw_block_bind(b, data->Iex.RdTmp.tmp, reg);
}

typedef struct hw_use_ctx {
    hw_block *b;
    hwp_core_ops *r;
} hw_use_ctx;

/* An atom of the instruction being scanned: a temp an earlier
 * instruction bound to a register that still holds it reads that
 * register. Always False, so every atom is visited. */
static Bool hw_block_use(void *ctx, const IRExpr *atom) {
    const hw_use_ctx *u = (const hw_use_ctx *)ctx;
    const hw_block *b = u->b;
    IRTemp t;
    UInt reg, k;
    if (atom->tag != Iex_RdTmp) return False;
    t = atom->Iex.RdTmp.tmp;
    if (t >= (IRTemp)b->cap || !(reg = b->tmp_reg[t]) || b->tmp_ins[t] >= b->ins) return False;
    for (k = 0; k < b->nheld[reg]; k++)
        if (b->held[reg][k] == t) {
            hw_regs_read(&hw_host_state, u->r, reg);
            break;
        }
    return False;
}

/* The registers and op class of the instruction whose IMark is
 * stmts[mark], as meta bits (hw_host.h). Called for the block's
 * instructions in order, after hw_block_start: b follows the registers
 * across them. */
static ULong hw_regs_scan(hw_block *b, const IRSB *sb, Int mark) {
    hwp_core_ops r;
    hw_loaded l;
    hw_use_ctx u;
    UInt data = 0;
    Bool load = False;
    Int i, k;
    VG_(memset)(&r, 0, sizeof r);
    l.n = 0;
    l.over = False;
    b->ins++;
    u.b = b;
    u.r = &r;
    for (i = mark + 1; i < sb->stmts_used; i++) {
        const IRStmt *st = sb->stmts[i];
        if (!st) continue;
        if (st->tag == Ist_IMark) break;
        /* uses first: a Put of an earlier instruction's temp reads it
         * before this statement's write unbinds anything */
        hw_atoms_stmt(st, hw_block_use, &u);
        switch (st->tag) {
        case Ist_WrTmp: {
            const IRExpr *e = st->Ist.WrTmp.data;
            if (e->tag == Iex_Get) {
                UInt reg = hw_reg(e->Iex.Get.offset);
                hw_regs_read(&hw_host_state, &r, reg);
                hw_block_bind(b, st->Ist.WrTmp.tmp, reg);
            } else if (e->tag == Iex_GetI) {
                UInt reg = hw_reg(e->Iex.GetI.descr->base);
                hw_regs_read(&hw_host_state, &r, reg);
                hw_block_bind(b, st->Ist.WrTmp.tmp, reg);
            } else if (e->tag == Iex_Load) {
                load = True;
                hw_loaded_add(&l, st->Ist.WrTmp.tmp);
            } else {
                hw_op_note(&r, e);
                if (hw_loaded_uses(&l, e)) hw_loaded_add(&l, st->Ist.WrTmp.tmp);
            }
            break;
        }
        case Ist_LoadG:
            load = True;
            hw_loaded_add(&l, st->Ist.LoadG.details->dst);
            break;
        case Ist_CAS:
            load = True;
            hw_loaded_add(&l, st->Ist.CAS.details->oldLo);
            break;
        case Ist_Put: {
            UInt reg = hw_reg(st->Ist.Put.offset);
            hw_regs_put(&r, &data, &l, reg, st->Ist.Put.data);
            hw_block_write(b, reg, st->Ist.Put.data);
            break;
        }
        case Ist_PutI: {
            /* the element written depends on ix at run time: unbind the
             * whole array (the x87 stack is one register anyway) */
            UInt reg = hw_reg(st->Ist.PutI.details->descr->base);
            hw_regs_put(&r, &data, &l, reg, st->Ist.PutI.details->data);
            hw_block_write(b, reg, st->Ist.PutI.details->data);
            break;
        }
        case Ist_Dirty: {
            const IRDirty *d = st->Ist.Dirty.details;
            for (k = 0; k < d->nFxState; k++) {
                IREffect fx = d->fxState[k].fx;
                UInt reg = hw_reg(d->fxState[k].offset);
                if (fx == Ifx_Read || fx == Ifx_Modify) hw_regs_read(&hw_host_state, &r, reg);
                if (fx == Ifx_Write || fx == Ifx_Modify) {
                    hw_regs_write(&hw_host_state, &r, reg);
                    hw_block_write(b, reg, NULL);
                }
            }
            /* a helper's results count as data, like a load's */
            data = 3u;
            break;
        }
        default:
            break;
        }
    }
    /* the last instruction's jump target (ret, jmp *%rax) */
    if (i == sb->stmts_used) hw_block_use(&u, sb->next);
    if (load) r.upd = (uint8_t)(~data & ((1u << r.ndst) - 1u));
    return hw_regs_meta(&r);
}

static IRSB *hw_instrument(VgCallbackClosure *closure, IRSB *sbIn,
                           const VexGuestLayout *layout,
                           const VexGuestExtents *vge,
                           const VexArchInfo *archinfo_host, IRType gWordTy,
                           IRType hWordTy) {
    IRSB *sbOut;
    Int i, last_mark = -1;
    Bool has_exit = False;
    Addr exit_dst = 0;
    (void)closure; (void)layout; (void)vge; (void)archinfo_host;
    (void)hWordTy;

    if (gWordTy != Ity_I64) VG_(tool_panic)("hwprof: amd64 guests only");

    /* Pass 1: where the last instruction starts and whether it has a
     * side exit (a conditional branch; chasing is off, so there is at
     * most one control transfer and it is the last instruction). */
    for (i = 0; i < sbIn->stmts_used; i++) {
        IRStmt *st = sbIn->stmts[i];
        if (st->tag == Ist_IMark) {
            last_mark = i;
            has_exit = False;
        } else if (st->tag == Ist_Exit && st->Ist.Exit.jk == Ijk_Boring &&
                   st->Ist.Exit.dst->tag == Ico_U64) {
            has_exit = True;
            exit_dst = (Addr)st->Ist.Exit.dst->Ico.U64;
        }
    }

    sbOut = deepCopyIRSBExceptStmts(sbIn);
    if (hw_host_state.regs) hw_block_start(&hw_blk, sbIn);
    for (i = 0; i < sbIn->stmts_used; i++) {
        IRStmt *st = sbIn->stmts[i];
        if (!st || st->tag == Ist_NoOp) continue;
        switch (st->tag) {
        case Ist_IMark: {
            Addr pc = (Addr)st->Ist.IMark.addr;
            UInt len = st->Ist.IMark.len;
            hw_vex_view v = {HWP_CLS_OTHER, 0, 0};
            ULong meta;
            uint64_t target;
            if (i == last_mark) hw_vex_class(sbIn, pc, len, has_exit, exit_dst, &v);
            meta = hw_meta(&hw_host_state, (const uint8_t *)pc, len, pc, &v,
                           &target);
            if (hw_host_state.regs) meta |= hw_regs_scan(&hw_blk, sbIn, i);
            addStmtToIRSB(sbOut, st);
            hw_call(sbOut, "hw_on_insn", hw_on_insn, 3,
                    mkIRExprVec_3(mkIRExpr_HWord(pc), mkIRExpr_HWord(meta),
                                  mkIRExpr_HWord(target)));
            break;
        }
        case Ist_WrTmp:
            addStmtToIRSB(sbOut, st);
            if (hw_need_memory && st->Ist.WrTmp.data->tag == Iex_Load) {
                IRExpr *ld = st->Ist.WrTmp.data;
                hw_call_load(sbOut, ld->Iex.Load.addr, ld->Iex.Load.ty,
                             IRExpr_RdTmp(st->Ist.WrTmp.tmp));
            }
            break;
        case Ist_Store:
            addStmtToIRSB(sbOut, st);
            if (hw_need_memory)
                hw_call(sbOut, "hw_on_store", hw_on_store, 1,
                        mkIRExprVec_1(st->Ist.Store.addr));
            break;
        case Ist_CAS: {
            /* lock cmpxchg & co: the old value read is the loaded value. */
            IRCAS *cas = st->Ist.CAS.details;
            addStmtToIRSB(sbOut, st);
            if (hw_need_memory)
                hw_call_load(sbOut, cas->addr, typeOfIRTemp(sbIn->tyenv, cas->oldLo),
                             IRExpr_RdTmp(cas->oldLo));
            break;
        }
        case Ist_Dirty: {
            IRDirty *d = st->Ist.Dirty.details;
            if (hw_deterministic && d->tmp != IRTemp_INVALID &&
                VG_(strcmp)(d->cee->name, "amd64g_dirtyhelper_RDTSC") == 0) {
                IRDirty *v = unsafeIRDirty_1_N(d->tmp, 0, "hw_rdtsc",
                                               VG_(fnptr_to_fnentry)(hw_rdtsc),
                                               mkIRExprVec_0());
                addStmtToIRSB(sbOut, IRStmt_Dirty(v));
            } else {
                addStmtToIRSB(sbOut, st);
            }
            break;
        }
        case Ist_LoadG: {
            /* Guarded loads (masked AVX moves): the address is known only
             * when the guard holds; count them as unseen. */
            addStmtToIRSB(sbOut, st);
            hw_host_state.unseen_loads++;
            break;
        }
        default:
            addStmtToIRSB(sbOut, st);
            break;
        }
    }
    return sbOut;
}

/* ---- output --------------------------------------------------------------- */

/* A buffered file behind an hwp_writer; fd -1 writes to the Valgrind log.
 * The same protocol as the C-library hosts (examples/common/hwx_host.h):
 * a file is written to a temporary beside its target, every write is
 * checked, and only a complete file is renamed over the target; a target
 * that is not a regular file (a device such as /dev/full, a pipe) is
 * written in place, checked the same way. */
typedef struct hw_fileout {
    Int fd;
    UInt len;
    Int err;              /* first failed write or close, 0: none        */
    Bool direct;          /* writing the target itself                   */
    HChar path[HWX_PATH_MAX];
    HChar tmp[HWX_PATH_MAX + 32];
    HChar buf[65536 + 1]; /* + the NUL VG_(printf) needs */
} hw_fileout;

static void hw_fileout_flush(hw_fileout *f) {
    UInt off = 0;
    if (f->len && f->fd < 0) {
        f->buf[f->len] = '\0';
        VG_(printf)("%s", f->buf);
    }
    while (f->fd >= 0 && off < f->len && !f->err) {
        Int k = VG_(write)(f->fd, f->buf + off, (Int)(f->len - off));
        if (k <= 0) f->err = k < 0 ? -k : VKI_ENOSPC;
        else off += (UInt)k;
    }
    f->len = 0;
}

static void hw_fileout_write(void *ctx, const char *s, size_t n) {
    hw_fileout *f = (hw_fileout *)ctx;
    while (n) {
        size_t k = sizeof f->buf - 1 - f->len;
        if (k > n) k = n;
        VG_(memcpy)(f->buf + f->len, s, k);
        f->len += (UInt)k;
        s += k;
        n -= k;
        if (f->len == sizeof f->buf - 1) hw_fileout_flush(f);
    }
}

/* Is `path` an existing directory (1), another non-regular file (2), a
 * regular file or absent (0)? */
static Int hw_path_kind(const HChar *path) {
    struct vg_stat st;
    if (sr_isError(VG_(stat)(path, &st))) return 0;
    if (VKI_S_ISDIR(st.mode)) return 1;
    return VKI_S_ISREG(st.mode) ? 0 : 2;
}

/* A writer to `path` ("" means the Valgrind log); NULL with the reason
 * printed if it cannot be opened. */
static hw_fileout *hw_fileout_open(const HChar *opt, const HChar *path, hwp_writer *w) {
    hw_fileout *f = VG_(malloc)("hwprof.out", sizeof *f);
    SysRes r;
    Int kind = path[0] ? hw_path_kind(path) : 0;
    VG_(memset)(f, 0, sizeof *f - sizeof f->buf);
    f->fd = -1;
    w->write = hw_fileout_write;
    w->ctx = f;
    if (!path[0]) return f;
    if (kind == 1 || VG_(strlen)(path) >= sizeof f->path) {
        VG_(umsg)("hwprof: %s=%s: %s\n", opt, path,
                  kind == 1 ? "is a directory" : "path too long");
        VG_(free)(f);
        return NULL;
    }
    VG_(strcpy)(f->path, path);
    f->direct = kind == 2;
    if (!f->direct)
        VG_(sprintf)(f->tmp, "%s.tmp.%d", path, VG_(getpid)());
    r = VG_(open)(f->direct ? path : f->tmp, VKI_O_CREAT | VKI_O_WRONLY | VKI_O_TRUNC, 0644);
    if (sr_isError(r)) {
        VG_(umsg)("hwprof: %s=%s: cannot open for writing (errno %lu)\n", opt, path,
                  (unsigned long)sr_Err(r));
        VG_(free)(f);
        return NULL;
    }
    f->fd = (Int)sr_Res(r);
    return f;
}

/* Complete the file; False (reason printed, no partial file left) if any
 * write, the close or the rename failed. */
static Bool hw_fileout_close(const HChar *opt, hw_fileout *f) {
    Bool ok;
    hw_fileout_flush(f);
    if (f->fd >= 0) VG_(close)(f->fd);
    if (!f->err && f->tmp[0] && VG_(rename)(f->tmp, f->path) != 0) f->err = -1;
    ok = f->err == 0;
    if (!ok) {
        if (f->tmp[0]) VG_(unlink)(f->tmp);
        if (f->err > 0)
            VG_(umsg)("hwprof: %s=%s: write failed (errno %d), no report written\n", opt,
                      f->path, f->err);
        else
            VG_(umsg)("hwprof: %s=%s: cannot rename %s into place, no report written\n", opt,
                      f->path, f->tmp);
    }
    VG_(free)(f);
    return ok;
}

/* At start: can `path` be written? Opens (and, for a file, removes) the
 * temporary the report will use. */
static Bool hw_path_check(const HChar *opt, const HChar *path) {
    hwp_writer w;
    hw_fileout *f;
    if (!path[0]) return True;
    f = hw_fileout_open(opt, path, &w);
    if (!f) return False;
    if (f->fd >= 0) VG_(close)(f->fd);
    if (f->tmp[0]) VG_(unlink)(f->tmp);
    VG_(free)(f);
    return True;
}

/* bbv=FILE: each thread's vectors, the first thread's in FILE, thread
 * tid's in FILE.<tid> (one exp-bbv stream per thread). */
static hw_fileout **hw_bbv_files;

static void hw_bbv_open(ThreadId tid, hw_thread *t) {
    const HChar *path = hw_host_state.opts->bbv;
    HChar name[HWX_PATH_MAX + 16];
    hwp_writer w;
    Bool first = True;
    UInt i;
    if (!path[0] || !t->s) return;
    for (i = 0; i < VG_N_THREADS; i++) first = first && !hw_bbv_files[i];
    if (first) VG_(strcpy)(name, path);
    else VG_(sprintf)(name, "%s.%u", path, (UInt)tid);
    hw_bbv_files[tid] = hw_fileout_open("bbv", name, &w);
    if (hw_bbv_files[tid]) hwx_session_bbv_out(t->s, &w);
}

/* After the threads' last lines (hw_thread_flush); False if a write failed. */
static Bool hw_bbv_close(void) {
    Bool ok = True;
    UInt i;
    for (i = 0; hw_bbv_files && i < VG_N_THREADS; i++)
        if (hw_bbv_files[i]) ok = hw_fileout_close("bbv", hw_bbv_files[i]) && ok;
    return ok;
}

/* The ELF images Valgrind read debug info for (the executable, ld.so,
 * the shared libraries): path, text range and load bias, so hwprof-report
 * can name the functions of every PC in the report. */
#define HW_MAX_MODULES 256
static hwx_module hw_modules[HW_MAX_MODULES];

static size_t hw_collect_modules(void) {
    const DebugInfo *di;
    size_t n = 0;
    for (di = VG_(next_DebugInfo)(NULL); di && n < HW_MAX_MODULES;
         di = VG_(next_DebugInfo)(di)) {
        const HChar *path = VG_(DebugInfo_get_filename)(di);
        SizeT size = VG_(DebugInfo_get_text_size)(di);
        if (!path || !size) continue;
        VG_(memset)(&hw_modules[n], 0, sizeof hw_modules[n]);
        hw_modules[n].path = path;
        hw_modules[n].lo = VG_(DebugInfo_get_text_avma)(di);
        hw_modules[n].hi = hw_modules[n].lo + size - 1;
        hw_modules[n].bias = (uint64_t)VG_(DebugInfo_get_text_bias)(di);
        hw_modules[n].have_bias = 1;
        n++;
    }
    return n;
}

static Bool hw_report(const HChar *opt, const HChar *path, Bool json) {
    hwp_writer w;
    hw_fileout *f = hw_fileout_open(opt, path, &w);
    if (!f) return False;
    if (json) hw_host_report_json(&hw_host_state, &w, hw_modules, hw_collect_modules());
    else hw_host_report_text(&hw_host_state, &w);
    return hw_fileout_close(opt, f);
}

static hw_fileout *hw_record_file;
static hwp_writer hw_record_writer;

/* ---- tool plumbing ---------------------------------------------------------- */

static void *hw_alloc(void *ctx, size_t n) {
    (void)ctx;
    return VG_(malloc)("hwprof.host", n);
}

static void hw_free(void *ctx, void *p) {
    (void)ctx;
    VG_(free)(p);
}

static Bool hw_process_cmd_line_option(const HChar *arg) {
    const HChar *s;
    if VG_BOOL_CLO(arg, "--hwprof-deterministic", hw_deterministic) {}
    else if VG_BOOL_CLO(arg, "--hwprof-regs", hw_regs_on) {}
    else if VG_STR_CLO(arg, "--hwprof-random-seed", s) {
        const char *why = "";
        uint64_t v;
        if (hwx_arg_u64("--hwprof-random-seed", s, 0, ~(uint64_t)0, &v, &why) != HWP_OK)
            VG_(fmsg_bad_option)(arg, "%s\n", why);
        hw_random_seed = v;
    } else if (arg[0] == '-' && arg[1] == '-') {
        const char *why = "";
        if (hw_host_option(&hw_host_state, arg + 2, &why) != HWP_OK) {
            VG_(fmsg_bad_option)(arg, "%s\n", why);
        }
    } else {
        return False;
    }
    return True;
}

static void hw_print_usage(void) {
    VG_(printf)(
        "    --KEY=VALUE               an hwprof option, the same as the QEMU\n"
        "                              plugin's KEY=VALUE (examples/common/hwx.h):\n"
        "                              models=all, rap=on, exact=on,\n"
        "                              report=FILE, json=FILE, record=FILE,\n"
        "                              bbv=FILE, ...\n"
        "    --hwprof-deterministic=yes|no  fixed AT_RANDOM, no vDSO, rdtsc =\n"
        "                              retired instructions [yes]\n"
        "    --hwprof-random-seed=N    seed of the AT_RANDOM bytes [fixed]\n"
        "    --hwprof-regs=yes|no      core=on: registers from VEX IR, so the\n"
        "                              timing has dependences [yes]\n");
}

static void hw_print_debug_usage(void) { VG_(printf)("    (none)\n"); }

/* MemTotal of /proc/meminfo in bytes, 0 if unknown. */
static ULong hw_mem_total(void) {
    HChar buf[512];
    const HChar *p;
    ULong kb = 0;
    Int n;
    SysRes r = VG_(open)("/proc/meminfo", VKI_O_RDONLY, 0);
    if (sr_isError(r)) return 0;
    n = VG_(read)((Int)sr_Res(r), buf, sizeof buf - 1);
    VG_(close)((Int)sr_Res(r));
    if (n <= 0) return 0;
    buf[n] = 0;
    p = VG_(strstr)(buf, "MemTotal:");
    if (!p) return 0;
    for (p += 9; *p == ' '; p++) {}
    for (; *p >= '0' && *p <= '9'; p++) kb = kb * 10 + (ULong)(*p - '0');
    return kb * 1024;
}

/* Before the guest starts, as the C-library hosts do (hwx_host_check):
 * the options and every model desc, the models built once in scratch,
 * one session's memory against physical memory, the output paths. A
 * refusal ends the run with exit status 1, the reason on stderr. */
static void hw_check_start(const hwx_opts *o) {
    const char *why = "";
    SizeT n = hwx_opts_scratch_bytes(o);
    ULong total = hw_mem_total();
    void *scratch;
    if (hwx_opts_validate(o, NULL, 0, &why) == HWP_OK && n) {
        scratch = VG_(malloc)("hwprof.check", n);
        hwx_opts_validate(o, scratch, n, &why);
        VG_(free)(scratch);
    }
    if (!why[0] && total && hwx_session_bytes(o) > total)
        why = o->exact ? "exact_mb: one session's exact tables exceed physical memory"
                       : "hwprof: one session exceeds physical memory";
    if (why[0]) {
        VG_(fmsg)("hwprof: %s\n", why);
        VG_(exit)(1);
    }
    if (!hw_path_check("report", o->report) || !hw_path_check("json", o->json) ||
        !hw_path_check("bbv", o->bbv))
        VG_(exit)(1);
}

static void hw_post_clo_init(void) {
    const hwx_opts *o = hw_host_state.opts;
    hw_check_start(o);
    /* One control transfer per superblock (see the top comment). */
    VG_(clo_vex_control).guest_chase = False;
    VG_(clo_vex_control).iropt_unroll_thresh = 0;
    hw_threads = VG_(calloc)("hwprof.threads", VG_N_THREADS, sizeof *hw_threads);
    if (o->bbv[0])
        hw_bbv_files = VG_(calloc)("hwprof.bbv", VG_N_THREADS, sizeof *hw_bbv_files);
    hw_need_memory = hwx_opts_need_memory(o);
    if ((o->models & HWX_M_CORE) && hw_regs_on) {
        hw_regs_init();
        hw_host_state.regs = 1;
        /* VEX drops a Put that a later Put of the same register in the
         * superblock overwrites (by default the guest state only has to
         * be exact where a memory access may fault, and then only RSP,
         * RBP and RIP): the instruction would show no write of that
         * register, and the next one's read of it (its Get removed too,
         * see hw_block) nothing to wait for. Registers up to date at
         * every instruction keep each instruction's Puts; the price is
         * the stores to the guest state they cost at run time. */
        VG_(clo_vex_control).iropt_register_updates_default = VexRegUpdAllregsAtEachInsn;
        VG_(clo_px_file_backed) = VexRegUpdAllregsAtEachInsn;
    }
    if (o->record[0]) {
        hw_record_file = hw_fileout_open("record", o->record, &hw_record_writer);
        if (!hw_record_file) VG_(exit)(1);
        hwx_trace_write_header(&hw_record_writer);
        hw_host_state.record = &hw_record_writer;
    }
}

/* A report or recording that could not be written completely ends the
 * run with exit status 3 (the client's own status otherwise). */
static void hw_fini(Int exitcode) {
    const hwx_opts *o = hw_host_state.opts;
    Bool ok = True;
    UInt t;
    (void)exitcode;
    for (t = 0; t < VG_N_THREADS; t++)
        if (hw_threads[t]) hw_thread_flush(hw_threads[t]);
    ok = hw_bbv_close();
    if (hw_record_file) {
        hw_host_record_end(&hw_host_state, hw_threads, VG_N_THREADS);
        ok = hw_fileout_close("record", hw_record_file) && ok;
    }
    hw_host_finish(&hw_host_state, hw_threads, VG_N_THREADS);
    ok = hw_report("report", o->report, False) && ok;
    if (o->json[0]) ok = hw_report("json", o->json, True) && ok;
    if (!ok) VG_(exit)(3);
}

static void hw_pre_clo_init(void) {
    VG_(details_name)("hwprof");
    VG_(details_version)("0.1");
    VG_(details_description)("hardware profiler models (hwprof)");
    VG_(details_copyright_author)("hwprof authors; MIT licence");
    VG_(details_bug_reports_to)("the hwprof issue tracker");
    VG_(details_avg_translation_sizeB)(400);
    VG_(basic_tool_funcs)(hw_post_clo_init, hw_instrument, hw_fini);
    VG_(needs_command_line_options)(hw_process_cmd_line_option, hw_print_usage,
                                    hw_print_debug_usage);
    VG_(track_start_client_code)(hw_start_client_code);
    VG_(track_die_mem_munmap)(hw_die_munmap);
    VG_(needs_syscall_wrapper)(hw_pre_syscall, hw_post_syscall);
    if (!hw_host_setup(&hw_host_state, hw_alloc, hw_free, NULL))
        VG_(tool_panic)("hwprof: out of memory");
}

VG_DETERMINE_INTERFACE_VERSION(hw_pre_clo_init)
