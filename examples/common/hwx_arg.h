/* examples/common/hwx_arg.h: option values, parsed the same way by every
 * host (the QEMU plugin, the Valgrind tool, the replayer, minivm,
 * quickstart). A value is taken whole or refused: no trailing garbage,
 * no sign on an unsigned number, no silent wrap, and the refusal names
 * the option and the accepted range:
 *     "--min-agree: expected a number in [0, 1], got \"abc\""
 * Freestanding; the messages live in one static buffer (options are
 * parsed once, at start, on one thread), valid until the next refusal.
 * Needs base.h's cold paths (HWPROF_IMPL) in the program. */
#ifndef HWX_ARG_H
#define HWX_ARG_H

#include "hwprof/base.h"

#ifdef __cplusplus
extern "C" {
#endif

size_t hwx_strlen(const char *s);
bool hwx_streq(const char *a, const char *b);
/* Decimal or 0x-hex u64 with optional k/m/g suffix (x1024). */
bool hwx_parse_u64(const char *s, uint64_t *v);
/* Decimal double: [-]digits[.digits][e[-]digits] or a trailing %. */
bool hwx_parse_f64(const char *s, double *v);

/* `opt` is the option as the user spells it ("rap_kb", "--seed"). */
hwp_status hwx_arg_u64(const char *opt, const char *v, uint64_t lo, uint64_t hi,
                       uint64_t *out, const char **why);
hwp_status hwx_arg_u32(const char *opt, const char *v, uint32_t lo, uint32_t hi,
                       uint32_t *out, const char **why);
/* [lo, hi]; a bound is open (excluded) when its *_open flag is set. */
hwp_status hwx_arg_f64(const char *opt, const char *v, double lo, int lo_open, double hi,
                       int hi_open, double *out, const char **why);
/* One of names[] (NULL-terminated); *out = its index. */
hwp_status hwx_arg_enum(const char *opt, const char *v, const char *const *names,
                        uint32_t *out, const char **why);
/* Member `name` of a struct described by field table f (n rows; a
 * nested member as "l1d.sets") from v: a number as above (a fraction for
 * an F64 member), or one of the member's names where it has them. What
 * v may be is the model's to check, at init, with its reason; here only
 * that it is a number that fits the member or one of its names. An
 * unknown name returns HWP_EINVAL with *why NULL: the caller says what
 * the struct takes. */
hwp_status hwx_arg_field(const char *opt, void *base, const hwp_field *f, size_t n,
                         const char *name, const char *v, const char **why);
/* "opt: reason" (reason as given) in the message buffer; fail2 appends
 * a second part. */
hwp_status hwx_arg_fail(const char *opt, const char *reason, const char **why);
hwp_status hwx_arg_fail2(const char *opt, const char *reason, const char *more,
                         const char **why);

#ifdef __cplusplus
}
#endif

#endif /* HWX_ARG_H */
