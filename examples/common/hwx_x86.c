/* examples/common/hwx_x86.c: x86-64 branch classification and length
 * decoding from instruction bytes.
 *
 * Why: QEMU's qemu_plugin_insn_disas costs ~8 us a call and Valgrind's IR
 * does not say "conditional branch" in so many words, so both hosts look
 * at the bytes. Only 64-bit mode is decoded. The opcode facts come from
 * the Intel SDM vol. 2 opcode maps (appendix A) and the AMD APM vol. 3;
 * the tables below are ours.
 *
 * Length decoding covers the legacy one-byte map, the 0F, 0F38 and 0F3A
 * maps, VEX (C4/C5) and EVEX (62). Anything it cannot decode gives len 0
 * and HWP_CLS_OTHER; hosts take the length from the emulator anyway.
 */
#include "hwx.h"
#include "hwprof/core.h"

/* One-byte map: bit 0 = has ModRM; bits 1..3 = immediate kind. */
enum {
    X_M = 1,          /* ModRM                                   */
    X_I8 = 1 << 1,    /* imm8 / rel8                             */
    X_IZ = 2 << 1,    /* imm16 with 66, else imm32               */
    X_I16 = 3 << 1,   /* imm16 (ret n, retf n)                   */
    X_ENTER = 4 << 1, /* imm16 + imm8                            */
    X_MOFFS = 5 << 1, /* 8-byte offset (4 with 67)               */
    X_IV = 6 << 1,    /* imm32, imm64 with REX.W (mov r, imm)    */
    X_GRP3 = 7 << 1,  /* F6/F7: immediate only for /0 and /1     */
    X_IMASK = 7 << 1,
    X_BAD = 1 << 4    /* invalid in 64-bit mode / escape         */
};

/* Rows of 16; written out by the opcode-map row. */
static const uint8_t hwx__map1[256] = {
    /* 0x00 */ X_M, X_M, X_M, X_M, X_I8, X_IZ, X_BAD, X_BAD,
               X_M, X_M, X_M, X_M, X_I8, X_IZ, X_BAD, X_BAD,
    /* 0x10 */ X_M, X_M, X_M, X_M, X_I8, X_IZ, X_BAD, X_BAD,
               X_M, X_M, X_M, X_M, X_I8, X_IZ, X_BAD, X_BAD,
    /* 0x20 */ X_M, X_M, X_M, X_M, X_I8, X_IZ, X_BAD, X_BAD,
               X_M, X_M, X_M, X_M, X_I8, X_IZ, X_BAD, X_BAD,
    /* 0x30 */ X_M, X_M, X_M, X_M, X_I8, X_IZ, X_BAD, X_BAD,
               X_M, X_M, X_M, X_M, X_I8, X_IZ, X_BAD, X_BAD,
    /* 0x40 REX (handled as prefixes) */
               0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 0x50 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 0x60 */ X_BAD, X_BAD, X_BAD, X_M, X_BAD, X_BAD, X_BAD, X_BAD,
               X_IZ, X_M | X_IZ, X_I8, X_M | X_I8, 0, 0, 0, 0,
    /* 0x70 */ X_I8, X_I8, X_I8, X_I8, X_I8, X_I8, X_I8, X_I8,
               X_I8, X_I8, X_I8, X_I8, X_I8, X_I8, X_I8, X_I8,
    /* 0x80 */ X_M | X_I8, X_M | X_IZ, X_BAD, X_M | X_I8, X_M, X_M, X_M, X_M,
               X_M, X_M, X_M, X_M, X_M, X_M, X_M, X_M,
    /* 0x90 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, X_BAD, 0, 0, 0, 0, 0,
    /* 0xA0 */ X_MOFFS, X_MOFFS, X_MOFFS, X_MOFFS, 0, 0, 0, 0,
               X_I8, X_IZ, 0, 0, 0, 0, 0, 0,
    /* 0xB0 */ X_I8, X_I8, X_I8, X_I8, X_I8, X_I8, X_I8, X_I8,
               X_IV, X_IV, X_IV, X_IV, X_IV, X_IV, X_IV, X_IV,
    /* 0xC0 */ X_M | X_I8, X_M | X_I8, X_I16, 0, X_BAD, X_BAD, X_M | X_I8,
               X_M | X_IZ, X_ENTER, 0, X_I16, 0, 0, X_I8, X_BAD, 0,
    /* 0xD0 */ X_M, X_M, X_M, X_M, X_BAD, X_BAD, X_BAD, 0,
               X_M, X_M, X_M, X_M, X_M, X_M, X_M, X_M,
    /* 0xE0 */ X_I8, X_I8, X_I8, X_I8, X_I8, X_I8, X_I8, X_I8,
               X_IZ, X_IZ, X_BAD, X_I8, 0, 0, 0, 0,
    /* 0xF0 */ 0, 0, 0, 0, 0, 0, X_M | X_GRP3, X_M | X_GRP3,
               0, 0, 0, 0, 0, 0, X_M, X_M,
};

/* 0F map entries WITHOUT a ModRM byte (everything else has one). */
static bool hwx__map2_no_modrm(uint8_t op) {
    switch (op) {
    case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0B:
    case 0x0E: case 0x30: case 0x31: case 0x32: case 0x33: case 0x34:
    case 0x35: case 0x37: case 0x77: case 0xA0: case 0xA1: case 0xA2:
    case 0xA8: case 0xA9: case 0xAA:
        return true;
    default:
        return (op >= 0x80 && op <= 0x8F) || (op >= 0xC8 && op <= 0xCF);
    }
}

/* 0F map entries with an imm8 after the ModRM (also VEX/EVEX map 1). */
static bool hwx__map2_imm8(uint8_t op) {
    return (op >= 0x70 && op <= 0x73) || op == 0xA4 || op == 0xAC ||
           op == 0xBA || op == 0xC2 || (op >= 0xC4 && op <= 0xC6) ||
           op == 0x0F /* 3DNow! suffix byte */;
}

/* Bytes of SIB + displacement after a ModRM byte at b[i]; -1 if cut off. */
static int hwx__modrm_extra(const uint8_t *b, size_t len, size_t i) {
    uint8_t m, mod, rm;
    int n = 0;
    if (i >= len) return -1;
    m = b[i];
    mod = (uint8_t)(m >> 6);
    rm = (uint8_t)(m & 7u);
    if (mod == 3) return 0;
    if (rm == 4) { /* SIB */
        if (i + 1 >= len) return -1;
        n = 1;
        if (mod == 0 && (b[i + 1] & 7u) == 5) n += 4;
    } else if (mod == 0 && rm == 5) {
        n = 4; /* RIP-relative disp32 */
    }
    if (mod == 1) n += 1;
    if (mod == 2) n += 4;
    return n;
}

static int32_t hwx__rel(const uint8_t *p, unsigned size) {
    if (size == 1) return (int8_t)p[0];
    return (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) |
                     ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24));
}

/* One instruction's encoding as far as the length needs it, and the
 * fields the operand decoder reads. */
typedef struct hwx__enc {
    size_t modrm;      /* index of the ModRM byte (has_modrm)             */
    uint32_t end;      /* length                                          */
    uint8_t op, map;   /* map 0: one byte, 1: 0F, 2: 0F38, 3: 0F3A         */
    uint8_t has_modrm;
    uint8_t vex;       /* 1: VEX (C4/C5), 2: EVEX (62)                    */
    uint8_t rex;       /* 0x40 | WRXB when a REX (or VEX/EVEX) gave them  */
    uint8_t sse;       /* mandatory prefix: 0 none, 1 66, 2 F3, 3 F2      */
    uint8_t opsize16, addr32;
    uint8_t vvvv;      /* VEX.vvvv, un-inverted (0..15)                   */
    uint8_t relsize;   /* bytes of a branch displacement at the end       */
} hwx__enc;

/* Prefixes, opcode, ModRM and immediate: false if cut off or not valid
 * in 64-bit mode. */
static bool hwx__parse(const uint8_t *b, size_t len, hwx__enc *x) {
    size_t i = 0, end;
    unsigned rep = 0, imm = 0;
    uint8_t op = 0, reg = 0;
    int extra;

    hwp_zero(x, sizeof *x);
    /* Legacy prefixes and REX, at most 15 bytes in all. */
    for (;; i++) {
        if (i >= len || i >= 14) return false;
        op = b[i];
        if (op == 0x66) x->opsize16 = 1;
        else if (op == 0x67) x->addr32 = 1;
        else if (op == 0xF2 || op == 0xF3) {
            rep = op == 0xF3 ? 2u : 3u; /* the last of the two counts */
            x->rex = 0;
        } else if (op == 0x26 || op == 0x2E || op == 0x36 || op == 0x3E ||
                   op == 0x64 || op == 0x65 || op == 0xF0) {
            x->rex = 0; /* a REX before a legacy prefix is ignored */
        } else if ((op & 0xF0) == 0x40) x->rex = op;
        else break;
    }
    x->sse = (uint8_t)(rep ? rep : x->opsize16);
    i++; /* past the opcode */
    if (op == 0x0F) {
        if (i >= len) return false;
        op = b[i++];
        if (op == 0x38 || op == 0x3A) {
            x->map = op == 0x38 ? 2 : 3;
            if (i >= len) return false;
            op = b[i++];
            x->has_modrm = 1;
            imm = x->map == 3 ? 1 : 0;
        } else {
            x->map = 1;
            x->has_modrm = !hwx__map2_no_modrm(op);
            imm = hwx__map2_imm8(op) ? 1 : 0;
            if (op >= 0x80 && op <= 0x8F) x->relsize = 4, imm = 4;
        }
    } else if (op == 0xC4 || op == 0xC5 || op == 0x62) {
        /* VEX3 / VEX2 / EVEX: the payload bytes carry the map, the
         * inverted R, X, B and vvvv, W and the implied prefix pp. */
        unsigned plen = op == 0xC5 ? 1u : op == 0xC4 ? 2u : 3u;
        uint8_t p1;
        if (i + plen >= len) return false;
        p1 = b[i + (plen > 1)]; /* W vvvv L pp (VEX2: R vvvv L pp) */
        x->map = op == 0xC5 ? 1u : (uint8_t)(b[i] & (op == 0x62 ? 7u : 31u));
        x->rex = (uint8_t)(0x40 | (op == 0xC5 ? 0u : (p1 >> 4) & 8u) |
                           (((unsigned)~b[i] >> 5) & (op == 0xC5 ? 4u : 7u)));
        x->vvvv = (uint8_t)(((unsigned)~p1 >> 3) & 15u);
        x->sse = (uint8_t)(p1 & 3u);
        x->vex = op == 0x62 ? 2 : 1;
        i += plen;
        op = b[i++];
        if (x->map == 0 || x->map > 7) return false;
        x->has_modrm = !(x->map == 1 && op == 0x77); /* vzeroupper/all */
        imm = (x->map == 3 || (x->map == 1 && hwx__map2_imm8(op))) ? 1 : 0;
    } else {
        uint8_t e = hwx__map1[op];
        if (e & X_BAD) return false;
        x->has_modrm = e & X_M;
        switch (e & X_IMASK) {
        case X_I8: imm = 1; break;
        case X_IZ: imm = x->opsize16 ? 2 : 4; break;
        case X_I16: imm = 2; break;
        case X_ENTER: imm = 3; break;
        case X_MOFFS: imm = x->addr32 ? 4 : 8; break;
        case X_IV: imm = (x->rex & 8) ? 8 : x->opsize16 ? 2 : 4; break;
        default: break;
        }
        /* Near branches keep a 32-bit displacement whatever 66 says (Intel
         * behaviour, which QEMU follows in 64-bit mode). */
        if (op == 0xE8 || op == 0xE9) imm = 4, x->relsize = 4;
        if ((op >= 0x70 && op <= 0x7F) || (op >= 0xE0 && op <= 0xE3) ||
            op == 0xEB)
            x->relsize = 1;
    }
    x->op = op;
    if (x->has_modrm) {
        if (i >= len) return false;
        x->modrm = i;
        reg = (uint8_t)((b[i] >> 3) & 7u);
        extra = hwx__modrm_extra(b, len, i);
        if (extra < 0) return false;
        if (x->map == 0 && (op == 0xF6 || op == 0xF7) && reg <= 1)
            imm = op == 0xF6 ? 1 : x->opsize16 ? 2 : 4;
        i += 1 + (size_t)extra;
    }
    end = i + imm;
    if (end > len || end > 15) return false;
    x->end = (uint32_t)end;
    return true;
}

uint32_t hwx_x86_decode(const uint8_t *b, size_t len, uint64_t pc,
                        hwx_x86_info *info) {
    hwx__enc x;
    hwx_x86_info r;
    uint8_t op, reg;

    hwp_zero(&r, sizeof r);
    r.cls = HWP_CLS_OTHER;
    if (info) *info = r;
    if (!hwx__parse(b, len, &x)) return HWP_CLS_OTHER;
    r.len = x.end;
    op = x.op;
    reg = x.has_modrm ? (uint8_t)((b[x.modrm] >> 3) & 7u) : 0;
    if (x.map == 0 && !x.vex) {
        if ((op >= 0x70 && op <= 0x7F) || (op >= 0xE0 && op <= 0xE3))
            r.cls = HWP_CLS_BR_COND;
        else if (op == 0xEB || op == 0xE9) r.cls = HWP_CLS_JUMP;
        else if (op == 0xE8) r.cls = HWP_CLS_CALL;
        else if (op == 0xC3 || op == 0xC2 || op == 0xCB || op == 0xCA ||
                 op == 0xCF)
            r.cls = HWP_CLS_RET;
        else if (op == 0xFF && (reg == 2 || reg == 3))
            r.cls = HWP_CLS_CALL, r.indirect = 1;
        else if (op == 0xFF && (reg == 4 || reg == 5))
            r.cls = HWP_CLS_INDIRECT, r.indirect = 1;
    } else if (x.map == 1 && !x.vex && op >= 0x80 && op <= 0x8F) {
        r.cls = HWP_CLS_BR_COND;
    }
    if (x.relsize) {
        r.has_target = 1;
        r.target = pc + x.end +
                   (uint64_t)(int64_t)hwx__rel(b + x.end - x.relsize, x.relsize);
    }
    if (info) *info = r;
    return r.cls;
}

uint32_t hwx_x86_classify(const uint8_t *bytes, size_t len,
                          uint32_t *insn_len) {
    hwx_x86_info info;
    uint32_t cls = hwx_x86_decode(bytes, len, 0, &info);
    if (insn_len) *insn_len = info.len;
    return cls;
}

/* ---- operands: registers for hwprof/core.h ------------------------------ */
/* The register numbers the Valgrind tool gives (docs/core.md, Registers):
 * 1..16 RAX..R15 in encoding order, 17 the flags, 18..33 XMM/YMM0..15,
 * 34 the x87 stack, which the MMX registers alias. */
enum { HWX__FLAGS = 17, HWX__VEC0 = 18, HWX__X87 = 34 };
enum { HWX__RAX = 1, HWX__RCX, HWX__RDX, HWX__RBX, HWX__RSP, HWX__RBP,
       HWX__RSI, HWX__RDI };
/* Register files of an operand field. */
enum { HWX__GPR, HWX__BYTE, HWX__VEC, HWX__MMX };

typedef struct hwx__opd {
    const uint8_t *b;
    hwx__enc x;
    hwp_core_ops *o;
    uint32_t over;      /* HWX_X86_SRC_OVER | HWX_X86_DST_OVER           */
    uint8_t mod, reg, rm; /* ModRM fields, reg and rm with REX.R / REX.B  */
} hwx__opd;

static uint8_t hwx__num(const hwx__opd *d, unsigned file, unsigned n) {
    switch (file) {
    case HWX__BYTE: /* without REX, 4..7 are AH, CH, DH, BH */
        return (uint8_t)(1u + (!d->x.rex && n >= 4 && n < 8 ? n - 4 : n));
    case HWX__VEC: return (uint8_t)(HWX__VEC0 + (n & 15u));
    case HWX__MMX: return HWX__X87;
    default: return (uint8_t)(1u + n);
    }
}

static void hwx__src(hwx__opd *d, uint8_t r) {
    hwp_core_ops *o = d->o;
    unsigned i, n = o->nsrc;
    for (i = 0; i < n; i++)
        if (o->src[i] == r) return;
    if (n < 3u) {
        o->src[n] = r;
        o->nsrc = (uint8_t)(n + 1u);
    } else {
        d->over |= HWX_X86_SRC_OVER;
    }
}

/* upd: an address update (a stack or string pointer), hwp_core_ops.upd */
static void hwx__dst(hwx__opd *d, uint8_t r, unsigned upd) {
    hwp_core_ops *o = d->o;
    unsigned i, n = o->ndst;
    for (i = 0; i < n; i++)
        if (o->dst[i] == r) return;
    if (n < 2u) {
        o->dst[n] = r;
        o->ndst = (uint8_t)(n + 1u);
        if (upd) o->upd = (uint8_t)(o->upd | 1u << n);
    } else {
        d->over |= HWX_X86_DST_OVER;
    }
}

/* The registers that form a memory operand's address: SIB base and
 * index or the ModRM base; none for RIP-relative or absolute. */
static void hwx__addr(hwx__opd *d) {
    const uint8_t *m = d->b + d->x.modrm;
    unsigned rex = d->x.rex;
    if ((m[0] & 7u) == 4) {
        unsigned base = m[1] & 7u, index = (m[1] >> 3) & 7u;
        if (!(d->mod == 0 && base == 5)) hwx__src(d, (uint8_t)(1u + (base | (rex & 1u) << 3)));
        index |= (rex & 2u) << 2;
        if (index != 4) hwx__src(d, (uint8_t)(1u + index));
    } else if (!(d->mod == 0 && (m[0] & 7u) == 5)) {
        hwx__src(d, (uint8_t)(1u + d->rm));
    }
}

/* ModRM's r/m operand in register file `file`: read and/or written when
 * a register; a memory operand reads its address registers. */
static void hwx__rm(hwx__opd *d, unsigned file, int rd, int wr) {
    if (d->mod != 3) {
        hwx__addr(d);
        return;
    }
    if (rd) hwx__src(d, hwx__num(d, file, d->rm));
    if (wr) hwx__dst(d, hwx__num(d, file, d->rm), 0);
}

static void hwx__reg(hwx__opd *d, unsigned file, int rd, int wr) {
    if (rd) hwx__src(d, hwx__num(d, file, d->reg));
    if (wr) hwx__dst(d, hwx__num(d, file, d->reg), 0);
}

/* The first source of a vector operation that also names its
 * destination in legacy encoding (addps xmm1, xmm2: xmm1 = xmm1 + xmm2)
 * and has its own operand, VEX.vvvv, in VEX encoding. */
static void hwx__nds(hwx__opd *d, unsigned file) {
    if (d->x.vex) hwx__src(d, hwx__num(d, HWX__VEC, d->x.vvvv));
    else hwx__reg(d, file, 1, 0);
}

/* Shapes of the vector instructions, by operand roles. */
enum {
    HWX__V_NONE,  /* not decoded                                   */
    HWX__V_2OP,   /* reg = op(nds, rm)                             */
    HWX__V_LOAD,  /* reg = rm (moves, conversions, shuffles by imm) */
    HWX__V_MERGE, /* reg = rm merged into nds (scalar forms)        */
    HWX__V_STORE, /* rm = reg                                       */
    HWX__V_CMPF,  /* flags = cmp(reg, rm)                           */
    HWX__V_FMA,   /* reg = reg * vvvv + rm, in some order           */
    HWX__V_SHIFTI,/* rm = rm shifted by imm (VEX: vvvv = rm ...)     */
    HWX__V_NOP    /* no registers (hints, vzeroupper)               */
};

static unsigned hwx__vec_shape(hwx__opd *d, unsigned *file) {
    unsigned op = d->x.op, p = d->x.sse, vex = d->x.vex;
    /* No mandatory prefix: the MMX forms of the integer ops. */
    *file = !vex && p == 0 &&
                    ((op >= 0x60 && op <= 0x7F) || op >= 0xD0 ||
                     (d->x.map == 2 && op <= 0x1E) || (d->x.map == 3 && op == 0x0F))
                ? HWX__MMX : HWX__VEC;
    if (d->x.map == 1) {
        switch (op) {
        case 0x10: return p >= 2 && d->mod == 3 ? HWX__V_MERGE : HWX__V_LOAD;
        case 0x11: case 0x29: case 0x2B: case 0x7F: case 0xE7:
        case 0x13: case 0x17:
            return HWX__V_STORE;
        case 0x12: case 0x16:
            return p >= 2 ? HWX__V_LOAD : HWX__V_MERGE; /* movs/dup vs movlps */
        case 0x28: case 0x6F: case 0x70: case 0xE6: case 0x5B:
            return HWX__V_LOAD;
        case 0x71: case 0x72: case 0x73: /* shifts by imm: /2 /4 /6, 73: /3 /7 */
            return HWX__V_SHIFTI;
        case 0xF0: return p == 3 ? HWX__V_LOAD : HWX__V_NONE; /* lddqu */
        case 0x51: case 0x52: case 0x53: case 0x5A:
            return p >= 2 ? HWX__V_MERGE : HWX__V_LOAD;
        case 0x2E: case 0x2F: return HWX__V_CMPF;
        case 0x77: return vex ? HWX__V_NOP : HWX__V_NONE;
        case 0xD6: return p == 1 ? HWX__V_STORE : HWX__V_NONE;
        case 0xF7: case 0xFF: return HWX__V_NONE;
        default: break;
        }
        if ((op >= 0x14 && op <= 0x15) || (op >= 0x54 && op <= 0x5F) ||
            (op >= 0x60 && op <= 0x6D) || (op >= 0x74 && op <= 0x76) ||
            op == 0x7C || op == 0x7D || op == 0xC2 || op == 0xC6 || op >= 0xD0)
            return HWX__V_2OP;
        return HWX__V_NONE;
    }
    if (d->x.map == 2) {
        if (op == 0x17 || op == 0x0E || op == 0x0F) return HWX__V_CMPF;
        if ((op >= 0x1C && op <= 0x1E) || (op >= 0x20 && op <= 0x25) ||
            (op >= 0x30 && op <= 0x35) || op == 0x2A || op == 0x41 ||
            (vex && (op == 0x13 || (op >= 0x18 && op <= 0x1A) ||
                     (op >= 0x58 && op <= 0x5A) || op == 0x78 || op == 0x79)))
            return HWX__V_LOAD;
        if (op <= 0x0D || op == 0x10 || op == 0x14 || op == 0x15 || op == 0x16 ||
            op == 0x28 || op == 0x29 || op == 0x2B || (op >= 0x36 && op <= 0x40) ||
            (vex && op >= 0x45 && op <= 0x47))
            return HWX__V_2OP;
        if (vex && op >= 0x96 && op <= 0xBF && (op & 15u) >= 6) return HWX__V_FMA;
        return HWX__V_NONE;
    }
    /* map 3 */
    if (op == 0x14 || op == 0x15 || op == 0x16 || op == 0x17 ||
        (vex && (op == 0x19 || op == 0x39 || op == 0x1D)))
        return HWX__V_STORE;
    if (vex && (op <= 0x01 || op == 0x04 || op == 0x05 || op == 0x08 || op == 0x09))
        return HWX__V_LOAD;
    if ((op >= 0x08 && op <= 0x0F) || (op >= 0x40 && op <= 0x42) || op == 0x44 ||
        op == 0x21 || (vex && (op == 0x02 || op == 0x06 || op == 0x18 || op == 0x38 ||
                               op == 0x46 || (op >= 0x4A && op <= 0x4C))))
        return HWX__V_2OP;
    return HWX__V_NONE;
}

/* The op class of a vector instruction: floating-point divide and square
 * root, other floating-point arithmetic and conversions (SDM vol. 2's
 * SSE/AVX opcode tables); the integer ones take the default latency. */
static uint8_t hwx__vec_class(const hwx__opd *d) {
    unsigned op = d->x.op;
    if (d->x.map == 1) {
        if (op == 0x51 || op == 0x5E) return HWP_CORE_OP_FDIV;
        if (op == 0x2A || op == 0x2C || op == 0x2D || op == 0x2E || op == 0x2F ||
            op == 0x52 || op == 0x53 || (op >= 0x58 && op <= 0x5F) || op == 0x7C ||
            op == 0x7D || op == 0xC2 || (op == 0xD0 && d->x.sse) || op == 0xE6)
            return HWP_CORE_OP_FP;
    } else if (d->x.map == 2 && d->x.vex && op >= 0x96 && op <= 0xBF) {
        return HWP_CORE_OP_FP; /* FMA */
    } else if (d->x.map == 3 && op >= 0x08 && op <= 0x0B) {
        return HWP_CORE_OP_FP; /* round */
    }
    return HWP_CORE_OP_AUTO;
}

/* SSE/AVX (0F, 0F38, 0F3A maps with VEX or a mandatory prefix): false
 * if not decoded. */
static bool hwx__vector(hwx__opd *d) {
    unsigned file, op = d->x.op;
    switch (hwx__vec_shape(d, &file)) {
    case HWX__V_2OP:
        if ((op == 0x57 || op == 0xEF) && d->x.map == 1 && d->mod == 3 &&
            d->rm == (d->x.vex ? d->x.vvvv : d->reg)) {
            hwx__reg(d, file, 0, 1); /* xorps / pxor x, x: the zeroing idiom */
            break;
        }
        hwx__nds(d, file);
        hwx__rm(d, file, 1, 0);
        hwx__reg(d, file, 0, 1);
        /* blendv reads XMM0 (legacy) */
        if (d->x.map == 2 && !d->x.vex && (op == 0x10 || op == 0x14 || op == 0x15))
            hwx__src(d, HWX__VEC0);
        break;
    case HWX__V_LOAD:
        hwx__rm(d, file, 1, 0);
        hwx__reg(d, file, 0, 1);
        break;
    case HWX__V_MERGE:
        hwx__rm(d, file, 1, 0);
        hwx__nds(d, file);
        hwx__reg(d, file, 0, 1);
        break;
    case HWX__V_STORE:
        hwx__reg(d, file, 1, 0);
        /* pextr*, extractps: to a general register */
        hwx__rm(d, d->x.map == 3 && op >= 0x14 && op <= 0x17 ? HWX__GPR : file, 0, 1);
        break;
    case HWX__V_CMPF:
        hwx__reg(d, file, 1, 0);
        hwx__rm(d, file, 1, 0);
        hwx__dst(d, HWX__FLAGS, 0);
        break;
    case HWX__V_FMA:
        hwx__reg(d, file, 1, 1);
        hwx__nds(d, file);
        hwx__rm(d, file, 1, 0);
        break;
    case HWX__V_SHIFTI:
        if (d->mod != 3) return false;
        hwx__rm(d, file, 1, !d->x.vex);
        if (d->x.vex) hwx__dst(d, hwx__num(d, HWX__VEC, d->x.vvvv), 0);
        break;
    case HWX__V_NOP:
        break;
    default:
        return false;
    }
    d->o->op = hwx__vec_class(d);
    return true;
}

/* The eight ALU operations of 00..3F, 80..83 (add or adc sbb and sub xor
 * cmp): adc and sbb read the carry, cmp writes only the flags. */
static void hwx__alu(hwx__opd *d, unsigned kind, int reg_dst, unsigned file) {
    int writes = kind != 7;
    if ((kind == 5 || kind == 6) && d->mod == 3 && d->reg == d->rm) {
        /* sub r, r and xor r, r: zero whatever r held (the zeroing
         * idiom), so r is no source */
        hwx__reg(d, file, 0, 1);
        hwx__dst(d, HWX__FLAGS, 0);
        return;
    }
    if (kind == 2 || kind == 3) hwx__src(d, HWX__FLAGS);
    if (reg_dst) {
        hwx__rm(d, file, 1, 0);
        hwx__reg(d, file, 1, writes);
    } else {
        hwx__reg(d, file, 1, 0);
        hwx__rm(d, file, 1, writes);
    }
    hwx__dst(d, HWX__FLAGS, 0);
}

/* String instructions A4..AF: the pointers they read and step (address
 * updates), RCX with a rep prefix, RAX for stos/lods/scas, the flags for
 * cmps/scas. */
static void hwx__string(hwx__opd *d) {
    unsigned op = d->x.op & ~1u;
    int si = op == 0xA4 || op == 0xA6 || op == 0xAC;
    int di = op != 0xAC;
    int rep = d->x.sse >= 2;
    if (rep) hwx__src(d, HWX__RCX);
    if (si) hwx__src(d, HWX__RSI);
    if (di) hwx__src(d, HWX__RDI);
    if (op == 0xAA || op == 0xAE) hwx__src(d, HWX__RAX);
    if (op == 0xAC) hwx__dst(d, HWX__RAX, 0);
    if (op == 0xA6 || op == 0xAE) hwx__dst(d, HWX__FLAGS, 0);
    if (si) hwx__dst(d, HWX__RSI, 1);
    if (di) hwx__dst(d, HWX__RDI, 1);
    if (rep) hwx__dst(d, HWX__RCX, 1);
}

/* x87 (D8..DF): the register stack as one register, read and written;
 * a memory operand adds its address. fdiv/fdivr and fsqrt are divides. */
static void hwx__x87(hwx__opd *d) {
    unsigned op = d->x.op, r = d->reg & 7u;
    hwx__rm(d, HWX__GPR, 0, 0); /* memory: the address; else nothing */
    if (op == 0xDF && d->mod == 3 && r == 4) { /* fnstsw ax */
        hwx__src(d, HWX__X87);
        hwx__dst(d, HWX__RAX, 0);
        return;
    }
    hwx__src(d, HWX__X87);
    hwx__dst(d, HWX__X87, 0);
    if ((op == 0xD8 || op == 0xDA || op == 0xDC || op == 0xDE) && r >= 6)
        d->o->op = HWP_CORE_OP_FDIV;
    else if (op == 0xD9 && d->mod == 3 && (d->b[d->x.modrm] & 0x3F) == 0x3A) /* fsqrt */
        d->o->op = HWP_CORE_OP_FDIV;
    else
        d->o->op = HWP_CORE_OP_FP;
}

/* The one-byte map. */
static bool hwx__map0(hwx__opd *d) {
    unsigned op = d->x.op, r = d->reg & 7u, n = (op & 7u) | (d->x.rex & 1u) << 3;
    unsigned file = op & 1u ? HWX__GPR : HWX__BYTE;
    if (op < 0x40 && (op & 7u) < 6) {
        if ((op & 7u) < 4) hwx__alu(d, op >> 3, op & 2u, file);
        else { /* AL / rAX, imm */
            unsigned kind = op >> 3;
            if (kind == 2 || kind == 3) hwx__src(d, HWX__FLAGS);
            hwx__src(d, HWX__RAX);
            if (kind != 7) hwx__dst(d, HWX__RAX, 0);
            hwx__dst(d, HWX__FLAGS, 0);
        }
        return true;
    }
    if (op >= 0x50 && op <= 0x57) { /* push r */
        hwx__src(d, (uint8_t)(1u + n));
        hwx__src(d, HWX__RSP);
        hwx__dst(d, HWX__RSP, 1);
        return true;
    }
    if (op >= 0x58 && op <= 0x5F) { /* pop r */
        hwx__src(d, HWX__RSP);
        hwx__dst(d, (uint8_t)(1u + n), 0);
        hwx__dst(d, HWX__RSP, 1);
        return true;
    }
    if (op >= 0x70 && op <= 0x7F) { /* jcc */
        hwx__src(d, HWX__FLAGS);
        return true;
    }
    if (op >= 0x91 && op <= 0x97) { /* xchg rAX, r */
        hwx__src(d, HWX__RAX);
        hwx__src(d, (uint8_t)(1u + n));
        hwx__dst(d, HWX__RAX, 0);
        hwx__dst(d, (uint8_t)(1u + n), 0);
        return true;
    }
    if (op >= 0xB0 && op <= 0xBF) { /* mov r, imm */
        hwx__dst(d, hwx__num(d, op < 0xB8 ? HWX__BYTE : HWX__GPR, n), 0);
        return true;
    }
    if (op >= 0xA4 && op <= 0xAF && op != 0xA8 && op != 0xA9) {
        hwx__string(d);
        return true;
    }
    if (op >= 0xD8 && op <= 0xDF) {
        hwx__x87(d);
        return true;
    }
    switch (op) {
    case 0x63: /* movsxd */
    case 0x8A: case 0x8B: /* mov G, E */
        hwx__rm(d, op == 0x8A ? HWX__BYTE : HWX__GPR, 1, 0);
        hwx__reg(d, op == 0x8A ? HWX__BYTE : HWX__GPR, 0, 1);
        return true;
    case 0x88: case 0x89: /* mov E, G */
        hwx__reg(d, file, 1, 0);
        hwx__rm(d, file, 0, 1);
        return true;
    case 0x8D: /* lea: the address, no access */
        hwx__addr(d);
        hwx__reg(d, HWX__GPR, 0, 1);
        return true;
    case 0x68: case 0x6A: /* push imm */
    case 0xE8: /* call rel */
        hwx__src(d, HWX__RSP);
        hwx__dst(d, HWX__RSP, 1);
        return true;
    case 0x69: case 0x6B: /* imul G, E, imm */
        hwx__rm(d, HWX__GPR, 1, 0);
        hwx__reg(d, HWX__GPR, 0, 1);
        hwx__dst(d, HWX__FLAGS, 0);
        d->o->op = HWP_CORE_OP_MUL;
        return true;
    case 0x80: case 0x81: case 0x83: /* group 1: ALU E, imm */
        if (r == 2 || r == 3) hwx__src(d, HWX__FLAGS);
        hwx__rm(d, file, 1, r != 7);
        hwx__dst(d, HWX__FLAGS, 0);
        return true;
    case 0x84: case 0x85: /* test */
        hwx__rm(d, file, 1, 0);
        hwx__reg(d, file, 1, 0);
        hwx__dst(d, HWX__FLAGS, 0);
        return true;
    case 0x86: case 0x87: /* xchg E, G */
        hwx__rm(d, file, 1, 1);
        hwx__reg(d, file, 1, 1);
        return true;
    case 0x8F: /* pop E */
        if (r) return false;
        hwx__src(d, HWX__RSP);
        hwx__rm(d, HWX__GPR, 0, 1);
        hwx__dst(d, HWX__RSP, 1);
        return true;
    case 0x90: /* nop (pause with F3); xchg rAX, r8 with REX.B */
        if (d->x.rex & 1u) {
            hwx__src(d, HWX__RAX);
            hwx__src(d, 9);
            hwx__dst(d, HWX__RAX, 0);
            hwx__dst(d, 9, 0);
        }
        return true;
    case 0x98: /* cbw, cwde, cdqe */
        hwx__src(d, HWX__RAX);
        hwx__dst(d, HWX__RAX, 0);
        return true;
    case 0x99: /* cwd, cdq, cqo */
        hwx__src(d, HWX__RAX);
        hwx__dst(d, HWX__RDX, 0);
        return true;
    case 0x9C: /* pushf */
        hwx__src(d, HWX__FLAGS);
        hwx__src(d, HWX__RSP);
        hwx__dst(d, HWX__RSP, 1);
        return true;
    case 0x9D: /* popf */
        hwx__src(d, HWX__RSP);
        hwx__dst(d, HWX__FLAGS, 0);
        hwx__dst(d, HWX__RSP, 1);
        return true;
    case 0x9E: /* sahf */
        hwx__src(d, HWX__RAX);
        hwx__dst(d, HWX__FLAGS, 0);
        return true;
    case 0x9F: /* lahf */
        hwx__src(d, HWX__FLAGS);
        hwx__dst(d, HWX__RAX, 0);
        return true;
    case 0xA0: case 0xA1: /* mov rAX, moffs */
        hwx__dst(d, HWX__RAX, 0);
        return true;
    case 0xA2: case 0xA3: /* mov moffs, rAX */
        hwx__src(d, HWX__RAX);
        return true;
    case 0xA8: case 0xA9: /* test rAX, imm */
        hwx__src(d, HWX__RAX);
        hwx__dst(d, HWX__FLAGS, 0);
        return true;
    case 0xC0: case 0xC1: case 0xD0: case 0xD1: case 0xD2: case 0xD3:
        /* group 2 shifts and rotates; rcl/rcr read the carry; by CL */
        if (r == 2 || r == 3) hwx__src(d, HWX__FLAGS);
        if (op >= 0xD2) hwx__src(d, HWX__RCX);
        hwx__rm(d, file, 1, 1);
        hwx__dst(d, HWX__FLAGS, 0);
        return true;
    case 0xC2: case 0xC3: /* ret */
        hwx__src(d, HWX__RSP);
        hwx__dst(d, HWX__RSP, 1);
        return true;
    case 0xC6: case 0xC7: /* mov E, imm */
        if (r) return false;
        hwx__rm(d, file, 0, 1);
        return true;
    case 0xC9: /* leave: rsp = rbp, pop rbp */
        hwx__src(d, HWX__RBP);
        hwx__dst(d, HWX__RBP, 0);
        hwx__dst(d, HWX__RSP, 1);
        return true;
    case 0xE0: case 0xE1: case 0xE2: /* loopne, loope, loop */
        hwx__src(d, HWX__RCX);
        if (op != 0xE2) hwx__src(d, HWX__FLAGS);
        hwx__dst(d, HWX__RCX, 0);
        return true;
    case 0xE3: /* jrcxz */
        hwx__src(d, HWX__RCX);
        return true;
    case 0xE9: case 0xEB: /* jmp rel */
        return true;
    case 0xF5: /* cmc */
        hwx__src(d, HWX__FLAGS);
        hwx__dst(d, HWX__FLAGS, 0);
        return true;
    case 0xF8: case 0xF9: /* clc, stc */
        hwx__dst(d, HWX__FLAGS, 0);
        return true;
    case 0xFC: case 0xFD: /* cld, std: the direction flag is not tracked */
        return true;
    case 0xF6: case 0xF7: /* group 3 */
        switch (r) {
        case 0: case 1: /* test E, imm */
            hwx__rm(d, file, 1, 0);
            hwx__dst(d, HWX__FLAGS, 0);
            return true;
        case 2: /* not */
            hwx__rm(d, file, 1, 1);
            return true;
        case 3: /* neg */
            hwx__rm(d, file, 1, 1);
            hwx__dst(d, HWX__FLAGS, 0);
            return true;
        case 4: case 5: /* mul, imul: rDX:rAX = rAX * E (AX = AL * E) */
            hwx__src(d, HWX__RAX);
            hwx__rm(d, file, 1, 0);
            hwx__dst(d, HWX__RAX, 0);
            if (op == 0xF7) hwx__dst(d, HWX__RDX, 0);
            hwx__dst(d, HWX__FLAGS, 0);
            d->o->op = HWP_CORE_OP_MUL;
            return true;
        default: /* div, idiv: rAX, rDX = rDX:rAX / E (AX / E) */
            hwx__src(d, HWX__RAX);
            if (op == 0xF7) hwx__src(d, HWX__RDX);
            hwx__rm(d, file, 1, 0);
            hwx__dst(d, HWX__RAX, 0);
            if (op == 0xF7) hwx__dst(d, HWX__RDX, 0);
            d->o->op = HWP_CORE_OP_DIV;
            return true;
        }
    case 0xFE: case 0xFF:
        switch (r) {
        case 0: case 1: /* inc, dec: the carry is kept, so read */
            hwx__src(d, HWX__FLAGS);
            hwx__rm(d, file, 1, 1);
            hwx__dst(d, HWX__FLAGS, 0);
            return true;
        case 2: /* call E */
            if (op == 0xFE) return false;
            hwx__rm(d, HWX__GPR, 1, 0);
            hwx__src(d, HWX__RSP);
            hwx__dst(d, HWX__RSP, 1);
            return true;
        case 4: /* jmp E */
            if (op == 0xFE) return false;
            hwx__rm(d, HWX__GPR, 1, 0);
            return true;
        case 6: /* push E */
            if (op == 0xFE) return false;
            hwx__rm(d, HWX__GPR, 1, 0);
            hwx__src(d, HWX__RSP);
            hwx__dst(d, HWX__RSP, 1);
            return true;
        default:
            return false;
        }
    default:
        return false;
    }
}

/* The 0F map's general-purpose instructions. */
static bool hwx__map1_int(hwx__opd *d) {
    unsigned op = d->x.op, r = d->reg & 7u;
    /* VEX in this map: only the vector <-> general register forms */
    if (d->x.vex && op != 0x2A && op != 0x2C && op != 0x2D && op != 0x50 &&
        op != 0xD7 && op != 0x6E && op != 0x7E && op != 0xC4 && op != 0xC5)
        return false;
    if (op >= 0x40 && op <= 0x4F) { /* cmovcc: the old value stays if false */
        hwx__rm(d, HWX__GPR, 1, 0);
        hwx__reg(d, HWX__GPR, 1, 1);
        hwx__src(d, HWX__FLAGS);
        return true;
    }
    if (op >= 0x80 && op <= 0x8F) { /* jcc rel32 */
        hwx__src(d, HWX__FLAGS);
        return true;
    }
    if (op >= 0x90 && op <= 0x9F) { /* setcc */
        hwx__src(d, HWX__FLAGS);
        hwx__rm(d, HWX__BYTE, 0, 1);
        return true;
    }
    if (op >= 0xC8 && op <= 0xCF) { /* bswap */
        uint8_t n = (uint8_t)(1u + ((op & 7u) | (d->x.rex & 1u) << 3));
        hwx__src(d, n);
        hwx__dst(d, n, 0);
        return true;
    }
    switch (op) {
    case 0x0D: case 0x18: case 0x19: case 0x1A: case 0x1B: case 0x1C:
    case 0x1D: case 0x1E: case 0x1F: /* prefetch, hint nops, endbr64 */
        return true;
    case 0xA3: /* bt E, G */
        hwx__rm(d, HWX__GPR, 1, 0);
        hwx__reg(d, HWX__GPR, 1, 0);
        hwx__dst(d, HWX__FLAGS, 0);
        return true;
    case 0xAB: case 0xB3: case 0xBB: /* bts, btr, btc E, G */
        hwx__rm(d, HWX__GPR, 1, 1);
        hwx__reg(d, HWX__GPR, 1, 0);
        hwx__dst(d, HWX__FLAGS, 0);
        return true;
    case 0xBA: /* bt, bts, btr, btc E, imm */
        if (r < 4) return false;
        hwx__rm(d, HWX__GPR, 1, r != 4);
        hwx__dst(d, HWX__FLAGS, 0);
        return true;
    case 0xA4: case 0xA5: case 0xAC: case 0xAD: /* shld, shrd (by CL) */
        if (op & 1u) hwx__src(d, HWX__RCX);
        hwx__rm(d, HWX__GPR, 1, 1);
        hwx__reg(d, HWX__GPR, 1, 0);
        hwx__dst(d, HWX__FLAGS, 0);
        return true;
    case 0xAF: /* imul G, E */
        hwx__rm(d, HWX__GPR, 1, 0);
        hwx__reg(d, HWX__GPR, 1, 1);
        hwx__dst(d, HWX__FLAGS, 0);
        d->o->op = HWP_CORE_OP_MUL;
        return true;
    case 0xB0: case 0xB1: /* cmpxchg E, G: compares with rAX */
        hwx__rm(d, op & 1u ? HWX__GPR : HWX__BYTE, 1, 1);
        hwx__reg(d, op & 1u ? HWX__GPR : HWX__BYTE, 1, 0);
        hwx__src(d, HWX__RAX);
        hwx__dst(d, HWX__RAX, 0);
        hwx__dst(d, HWX__FLAGS, 0);
        return true;
    case 0xB6: case 0xB7: case 0xBE: case 0xBF: /* movzx, movsx */
        hwx__rm(d, op & 1u ? HWX__GPR : HWX__BYTE, 1, 0);
        hwx__reg(d, HWX__GPR, 0, 1);
        return true;
    case 0xB8: /* popcnt */
        if (d->x.sse != 2) return false;
        hwx__rm(d, HWX__GPR, 1, 0);
        hwx__reg(d, HWX__GPR, 0, 1);
        hwx__dst(d, HWX__FLAGS, 0);
        return true;
    case 0xBC: case 0xBD: /* bsf, bsr (a zero source keeps the old value);
                             tzcnt, lzcnt with F3 */
        hwx__rm(d, HWX__GPR, 1, 0);
        hwx__reg(d, HWX__GPR, d->x.sse != 2, 1);
        hwx__dst(d, HWX__FLAGS, 0);
        return true;
    case 0xC0: case 0xC1: /* xadd */
        hwx__rm(d, op & 1u ? HWX__GPR : HWX__BYTE, 1, 1);
        hwx__reg(d, op & 1u ? HWX__GPR : HWX__BYTE, 1, 1);
        hwx__dst(d, HWX__FLAGS, 0);
        return true;
    case 0xC3: /* movnti */
        hwx__reg(d, HWX__GPR, 1, 0);
        hwx__rm(d, HWX__GPR, 0, 0);
        return true;
    case 0x2A: /* cvtsi2ss/sd (F3/F2): a general register in */
        if (d->x.sse < 2) return false;
        hwx__rm(d, HWX__GPR, 1, 0);
        hwx__nds(d, HWX__VEC);
        hwx__reg(d, HWX__VEC, 0, 1);
        d->o->op = HWP_CORE_OP_FP;
        return true;
    case 0x2C: case 0x2D: /* cvt(t)ss/sd2si: to a general register */
        if (d->x.sse < 2) return false;
        hwx__rm(d, HWX__VEC, 1, 0);
        hwx__reg(d, HWX__GPR, 0, 1);
        d->o->op = HWP_CORE_OP_FP;
        return true;
    case 0x50: case 0xD7: /* movmskps/pd, pmovmskb: to a general register */
        hwx__rm(d, d->x.sse || d->x.vex || op == 0x50 ? HWX__VEC : HWX__MMX, 1, 0);
        hwx__reg(d, HWX__GPR, 0, 1);
        return true;
    case 0xC4: /* pinsrw: a general register in */
        if (d->x.sse > 1) return false;
        hwx__rm(d, HWX__GPR, 1, 0);
        hwx__nds(d, d->x.sse ? HWX__VEC : HWX__MMX);
        hwx__reg(d, d->x.sse ? HWX__VEC : HWX__MMX, 0, 1);
        return true;
    case 0xC5: /* pextrw: to a general register */
        if (d->x.sse > 1 || d->mod != 3) return false;
        hwx__rm(d, d->x.sse ? HWX__VEC : HWX__MMX, 1, 0);
        hwx__reg(d, HWX__GPR, 0, 1);
        return true;
    case 0x6E: /* movd/movq from a general register */
        if (d->x.sse > 1) return false;
        hwx__rm(d, HWX__GPR, 1, 0);
        hwx__reg(d, d->x.sse == 1 ? HWX__VEC : HWX__MMX, 0, 1);
        return true;
    case 0x7E: /* 66: movd/movq to a general register; F3: movq xmm */
        if (d->x.sse == 2) {
            hwx__rm(d, HWX__VEC, 1, 0);
            hwx__reg(d, HWX__VEC, 0, 1);
            return true;
        }
        if (d->x.sse == 3) return false;
        hwx__reg(d, d->x.sse == 1 ? HWX__VEC : HWX__MMX, 1, 0);
        hwx__rm(d, HWX__GPR, 0, 1);
        return true;
    default:
        return false;
    }
}

/* The 0F38 and VEX map 2 general-purpose instructions: movbe, crc32 and
 * BMI1/BMI2 (VEX). */
static bool hwx__map2_int(hwx__opd *d) {
    unsigned op = d->x.op, p = d->x.sse, r = d->reg & 7u;
    uint8_t vvvv = (uint8_t)(1u + d->x.vvvv);
    if (!d->x.vex) {
        if (op == 0xF0 || op == 0xF1) {
            if (p == 3) { /* crc32 */
                hwx__rm(d, op & 1u ? HWX__GPR : HWX__BYTE, 1, 0);
                hwx__reg(d, HWX__GPR, 1, 1);
            } else if (op == 0xF0) { /* movbe G, m */
                hwx__rm(d, HWX__GPR, 1, 0);
                hwx__reg(d, HWX__GPR, 0, 1);
            } else { /* movbe m, G */
                hwx__reg(d, HWX__GPR, 1, 0);
                hwx__rm(d, HWX__GPR, 0, 1);
            }
            return true;
        }
        return false;
    }
    switch (op) {
    case 0xF2: /* andn */
        if (p) return false;
        hwx__src(d, vvvv);
        hwx__rm(d, HWX__GPR, 1, 0);
        hwx__reg(d, HWX__GPR, 0, 1);
        hwx__dst(d, HWX__FLAGS, 0);
        return true;
    case 0xF3: /* blsr, blsmsk, blsi: the destination is vvvv */
        if (p || r < 1 || r > 3) return false;
        hwx__rm(d, HWX__GPR, 1, 0);
        hwx__dst(d, vvvv, 0);
        hwx__dst(d, HWX__FLAGS, 0);
        return true;
    case 0xF5: /* bzhi; pext (F3), pdep (F2) */
        if (p == 1) return false;
        hwx__rm(d, HWX__GPR, 1, 0);
        hwx__src(d, vvvv);
        hwx__reg(d, HWX__GPR, 0, 1);
        if (p == 0) hwx__dst(d, HWX__FLAGS, 0);
        return true;
    case 0xF6: /* mulx: vvvv:reg = rDX * E, no flags */
        if (p != 3) return false;
        hwx__src(d, HWX__RDX);
        hwx__rm(d, HWX__GPR, 1, 0);
        hwx__reg(d, HWX__GPR, 0, 1);
        hwx__dst(d, vvvv, 0);
        d->o->op = HWP_CORE_OP_MUL;
        return true;
    case 0xF7: /* bextr; shlx (66), sarx (F3), shrx (F2) */
        hwx__rm(d, HWX__GPR, 1, 0);
        hwx__src(d, vvvv);
        hwx__reg(d, HWX__GPR, 0, 1);
        if (p == 0) hwx__dst(d, HWX__FLAGS, 0);
        return true;
    default:
        return false;
    }
}

/* The 0F3A general-register forms: pinsr*, pcmp*str*, rorx. */
static bool hwx__map3_int(hwx__opd *d) {
    unsigned op = d->x.op;
    if (op == 0x20 || op == 0x22) { /* pinsrb/d/q: a general register in */
        hwx__rm(d, HWX__GPR, 1, 0);
        hwx__nds(d, HWX__VEC);
        hwx__reg(d, HWX__VEC, 0, 1);
        return true;
    }
    if (op >= 0x60 && op <= 0x63) { /* pcmpestrm/i, pcmpistrm/i */
        hwx__reg(d, HWX__VEC, 1, 0);
        hwx__rm(d, HWX__VEC, 1, 0);
        if (op <= 0x61) { /* explicit lengths in rAX and rDX */
            hwx__src(d, HWX__RAX);
            hwx__src(d, HWX__RDX);
        }
        hwx__dst(d, op & 1u ? HWX__RCX : HWX__VEC0, 0);
        hwx__dst(d, HWX__FLAGS, 0);
        return true;
    }
    if (op == 0xF0 && d->x.vex && d->x.sse == 3) { /* rorx */
        hwx__rm(d, HWX__GPR, 1, 0);
        hwx__reg(d, HWX__GPR, 0, 1);
        return true;
    }
    return false;
}

uint32_t hwx_x86_ops(const uint8_t *b, size_t len, hwp_core_ops *ops) {
    hwx__opd d;
    bool ok;
    hwp_zero(ops, sizeof *ops);
    ops->regs = 1;
    if (!hwx__parse(b, len, &d.x) || d.x.vex == 2) return 0; /* no EVEX */
    d.b = b;
    d.o = ops;
    d.over = 0;
    d.mod = d.reg = d.rm = 0;
    if (d.x.has_modrm) {
        uint8_t m = b[d.x.modrm];
        d.mod = (uint8_t)(m >> 6);
        d.reg = (uint8_t)(((m >> 3) & 7u) | (d.x.rex & 4u) << 1);
        d.rm = (uint8_t)((m & 7u) | (d.x.rex & 1u) << 3);
    }
    switch (d.x.map) {
    case 0: ok = hwx__map0(&d); break;
    case 1: ok = hwx__map1_int(&d) || hwx__vector(&d); break;
    case 2: ok = hwx__map2_int(&d) || hwx__vector(&d); break;
    case 3: ok = hwx__map3_int(&d) || hwx__vector(&d); break;
    default: ok = false; break;
    }
    if (!ok) {
        hwp_zero(ops, sizeof *ops);
        ops->regs = 1;
        return 0;
    }
    return HWX_X86_OPS_OK | d.over;
}
