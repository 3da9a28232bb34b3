"""The issue-8 accuracy thresholds on an hwx JSON report, shared by the
hosts' real-program tests (examples/qemu/tests/check_accuracy.py; the
Valgrind tool's tests can import it too: put examples/common on
PYTHONPATH).

check_report(rep, check) calls check(label, ok, value) once per threshold:
  RAP 8 KB, eps = 10%: average error on hot ranges <= 3%
  HPT 512 x 4: overlap percentage >= 80%
  stratified H[P_256]_2048: weighted invariance error <= 5%
  ProfileMe: fraction inside the 1/sqrt(k) envelope in [0.55, 0.80]
  co-processor: weighted RMS invariance error below the simple sampler's
                at equal modelled overhead
  exact tables complete (nothing dropped)"""


def check_report(rep, check):
    acc = rep.get("accuracy", {})

    def metric(key):
        return acc[key]["value"] if key in acc else None

    v = metric("rap_hot_err_pct")
    check("RAP avg hot-range error <= 3%", v is not None and v <= 3.0, v)
    v = metric("hpt_overlap_pct")
    check("HPT 512x4 overlap >= 80%", v is not None and v >= 80.0, v)
    v = metric("strat_inv_err_pct")
    check("stratified weighted invariance error <= 5%", v is not None and v <= 5.0, v)
    v = metric("pm_envelope_frac")
    check("ProfileMe envelope fraction in [0.55, 0.80]",
          v is not None and 0.55 <= v <= 0.80, v)
    c, s = metric("coproc_inv_err"), metric("coproc_simple_err")
    check("co-processor error below the simple sampler's at equal overhead",
          c is not None and s is not None and c < s, (c, s))
    exact = rep.get("exact", {})
    check("exact tables complete",
          bool(exact) and all(exact[t]["dropped"] == 0 for t in exact),
          {t: exact[t]["dropped"] for t in exact})
