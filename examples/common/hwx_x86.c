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

uint32_t hwx_x86_decode(const uint8_t *b, size_t len, uint64_t pc,
                        hwx_x86_info *info) {
    size_t i = 0, end;
    unsigned opsize16 = 0, addr32 = 0, rexw = 0, imm = 0, map = 0;
    unsigned relsize = 0, has_modrm = 0, vex = 0;
    uint8_t op = 0, reg = 0;
    int extra;
    hwx_x86_info r;

    hwp__zero(&r, sizeof r);
    r.cls = HWP_CLS_OTHER;
    if (info) *info = r;
    /* Legacy prefixes and REX, at most 15 bytes in all. */
    for (;; i++) {
        if (i >= len || i >= 14) return HWP_CLS_OTHER;
        op = b[i];
        if (op == 0x66) opsize16 = 1;
        else if (op == 0x67) addr32 = 1;
        else if (op == 0x26 || op == 0x2E || op == 0x36 || op == 0x3E ||
                 op == 0x64 || op == 0x65 || op == 0xF0 || op == 0xF2 ||
                 op == 0xF3) {
            rexw = 0; /* a REX before a legacy prefix is ignored */
        } else if ((op & 0xF0) == 0x40) rexw = (op >> 3) & 1u;
        else break;
    }
    i++; /* past the opcode */
    if (op == 0x0F) {
        if (i >= len) return HWP_CLS_OTHER;
        op = b[i++];
        if (op == 0x38 || op == 0x3A) {
            map = op == 0x38 ? 2 : 3;
            if (i >= len) return HWP_CLS_OTHER;
            op = b[i++];
            has_modrm = 1;
            imm = map == 3 ? 1 : 0;
        } else {
            map = 1;
            has_modrm = !hwx__map2_no_modrm(op);
            imm = hwx__map2_imm8(op) ? 1 : 0;
            if (op >= 0x80 && op <= 0x8F) relsize = 4, imm = 4;
        }
    } else if (op == 0xC4 || op == 0xC5 || op == 0x62) {
        /* VEX3 / VEX2 / EVEX: the payload bytes carry map and REX.W. */
        unsigned plen = op == 0xC5 ? 1u : op == 0xC4 ? 2u : 3u;
        if (i + plen >= len) return HWP_CLS_OTHER;
        map = op == 0xC5 ? 1u : (unsigned)(b[i] & (op == 0x62 ? 7u : 31u));
        if (op != 0xC5) rexw = (b[i + 1] >> 7) & 1u;
        i += plen;
        op = b[i++];
        vex = 1;
        if (map == 0 || map > 7) return HWP_CLS_OTHER;
        has_modrm = !(map == 1 && op == 0x77); /* vzeroupper/all */
        imm = (map == 3 || (map == 1 && hwx__map2_imm8(op))) ? 1 : 0;
    } else {
        uint8_t e = hwx__map1[op];
        if (e & X_BAD) return HWP_CLS_OTHER;
        has_modrm = e & X_M;
        switch (e & X_IMASK) {
        case X_I8: imm = 1; break;
        case X_IZ: imm = opsize16 ? 2 : 4; break;
        case X_I16: imm = 2; break;
        case X_ENTER: imm = 3; break;
        case X_MOFFS: imm = addr32 ? 4 : 8; break;
        case X_IV: imm = rexw ? 8 : opsize16 ? 2 : 4; break;
        default: break;
        }
        /* Near branches keep a 32-bit displacement whatever 66 says (Intel
         * behaviour, which QEMU follows in 64-bit mode). */
        if (op == 0xE8 || op == 0xE9) imm = 4, relsize = 4;
        if ((op >= 0x70 && op <= 0x7F) || (op >= 0xE0 && op <= 0xE3) ||
            op == 0xEB)
            relsize = 1;
    }
    if (has_modrm) {
        if (i >= len) return HWP_CLS_OTHER;
        reg = (uint8_t)((b[i] >> 3) & 7u);
        extra = hwx__modrm_extra(b, len, i);
        if (extra < 0) return HWP_CLS_OTHER;
        if (map == 0 && (op == 0xF6 || op == 0xF7) && reg <= 1)
            imm = op == 0xF6 ? 1 : opsize16 ? 2 : 4;
        i += 1 + (size_t)extra;
    }
    end = i + imm;
    if (end > len || end > 15) return HWP_CLS_OTHER;
    r.len = (uint32_t)end;

    if (map == 0 && !vex) {
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
    } else if (map == 1 && !vex && op >= 0x80 && op <= 0x8F) {
        r.cls = HWP_CLS_BR_COND;
    }
    if (relsize) {
        r.has_target = 1;
        r.target = pc + end + (uint64_t)(int64_t)hwx__rel(b + end - relsize,
                                                          relsize);
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
