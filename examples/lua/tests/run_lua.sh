#!/usr/bin/env bash
# examples/lua/tests/run_lua.sh OUT: builds Lua 5.4 and lua-hwprof into OUT
# (examples/lua/build.sh) and checks the host end to end:
#   - every benchmark prints the same with lua, lua-hwprof without HWPROF
#     and lua-hwprof with every model on;
#   - each model sees every bytecode exactly once (the instruction count
#     of a model alone equals the exact count);
#   - the tiering decisions from the models agree with those from the
#     exact profile (precision and recall >= 0.95 per kind: functions,
#     loops, hot paths, type and value specialisations, each script, with
#     the stratified sampler at rate 1: docs/lua.md says why); the
#     decisions streamed to decisions=FILE as they are taken are the
#     report's model decisions, each taken no later than the exact
#     profile's margin (the checkpoint at which the exact rule holds by
#     more than the model's error), and no specialisation on fewer samples
#     than the report's minimum;
#   - the call profile: on a script whose call structure is known
#     (recursion, tail calls, C functions calling back into Lua, a
#     coroutine), sampling every bytecode gives exactly the script's
#     possible stacks, one sample per bytecode the session counted; every
#     997 bytecodes beside ProfileMe's countdown, one sample per 997
#     bytecodes, and hwprof-report --folded writes the same stacks;
#   - bbv=: the basic-block vectors from the fast path equal those from
#     every bytecode whole;
#   - layer=vm (the hooks into hwprof/vm.h): each model alone counts
#     every bytecode; the layer's hot functions and loops against the
#     exact counts of the same run (precision >= 0.95, recall >= 0.9 over
#     those at least 4 times past the threshold); the decisions file well
#     formed and agreeing with the report; the session's bbv= refused;
#   - a script that errors, calls os.exit or is killed by SIGTERM still
#     leaves a complete report; a bad option or an unwritable report path
#     stops before the script runs, with a one-line reason.
# Exits 77 (meson: skipped) when Lua's source cannot be fetched, and says so.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:?usage: run_lua.sh OUT [HWPROF_REPORT]}
report_tool=${2:-}
bench=$root/bench/lua
pass=0 fail=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

if ! log=$(bash "$here/build.sh" "$out" 2>&1); then
  case $log in
    *"apt-get source"*|*"deb-src"*|*"apt-get not found"*) echo "SKIP: $log"; exit 77 ;;
  esac
  echo "$log"; exit 1
fi
lua=$out/lua hw=$out/lua-hwprof
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

declare -A arg=([binary_trees]=8 [fannkuch]=7 [json]=300 [nbody]=5000 [sort]=5000
                [spectral_norm]=60 [strings]=3000)
for s in "${!arg[@]}"; do
  a=${arg[$s]}
  (cd "$bench" && "$lua" "$s.lua" "$a") > "$tmp/ref" 2>&1
  (cd "$bench" && "$hw" "$s.lua" "$a") > "$tmp/off" 2>&1
  # strat_rate=1: the default one in 256 gives a site its 73 samples
  # after ~19,000 executions, which the small inputs' sites do not reach
  (cd "$bench" && HWPROF="layer=session,models=all,exact=on,strat_rate=1,report=$tmp/$s.txt,decisions=$tmp/$s.dec" \
     "$hw" "$s.lua" "$a") > "$tmp/on" 2>&1
  if cmp -s "$tmp/ref" "$tmp/off" && cmp -s "$tmp/ref" "$tmp/on"; then
    ok "$s: same output with and without hwprof"
  else
    bad "$s: output differs"
  fi
  exact=$(awk '/^instructions/{print $2; exit}' "$tmp/$s.txt")
  for m in pm rap path strat coproc; do
    (cd "$bench" && HWPROF="layer=session,models=$m,report=$tmp/$s.$m.txt" "$hw" "$s.lua" "$a") >/dev/null 2>&1
    n=$(awk '/^instructions/{print $2; exit}' "$tmp/$s.$m.txt" 2>/dev/null)
    [ -n "$exact" ] && [ "$n" = "$exact" ] && ok "$s: $m sees $n bytecodes" ||
      bad "$s: $m saw ${n:-nothing}, exact $exact"
  done
  for kind in functions loops paths types values; do
    line=$(grep -E "^  $kind +exact" "$tmp/$s.txt")
    p=$(sed -E 's/.*precision ([0-9.]+).*/\1/' <<< "$line")
    r=$(sed -E 's/.*recall ([0-9.]+).*/\1/' <<< "$line")
    if [ -n "$line" ] && awk -v p="$p" -v r="$r" 'BEGIN { exit !(p >= 0.95 && r >= 0.95) }'; then
      ok "$s: $kind precision $p recall $r"
    else
      bad "$s: $kind: ${line:-no tiering line}"
    fi
  done
  # The streamed decisions against the report's; python3 prints one
  # "ok|bad what" line per check
  verdicts=$(python3 - "$s" "$tmp/$s.txt" "$tmp/$s.dec" 2>&1 <<'PY'
import re, sys
name, report, stream = sys.argv[1:]
text = open(report).read()
nmin = int(re.search(r"from >= (\d+) samples", text).group(1))
rows = re.findall(r"^  (func|loop|type|value|path) +(?:both|diff|exact|model) +(0x[0-9a-f]+) \S+"
                  r"  exact (\S+)  model (\S+)  margin (\S+)", text, re.M)
def at(x):  # "what@when" -> (what, when); "-" -> None
    return None if x == "-" else (int(x.split("@")[0], 16), int(x.split("@")[1]))
model = {(k, int(site, 16)): at(m) for k, site, e, m, g in rows if m != "-"}
lines = [l.split() for l in open(stream).read().splitlines()]
got = {}
samples_low = []
for l in lines:
    got[(l[1], int(l[2], 16))] = (int(l[3], 16), int(l[0]))
    if l[1] in ("type", "value") and int(l[l.index("samples") + 1]) < nmin:
        samples_low.append(" ".join(l))
ok = got == model and len(lines) == len(got) and len(got) > 0
print("ok" if ok else "bad", f"{name}: the {len(lines)} decisions streamed are the report's model "
      f"decisions" if ok else f"{name}: streamed {len(lines)} ({len(got)} distinct) against the "
      f"report's {len(model)}: only streamed {sorted(set(got.items()) - set(model.items()))[:3]}, "
      f"only reported {sorted(set(model.items()) - set(got.items()))[:3]}")
late = [(k, site, m, g) for k, site, e, m, g in rows
        if g != "-" and (m == "-" or at(m)[1] > at(g)[1])]
n = sum(1 for r in rows if r[4] != "-")
print("ok" if not late else "bad", f"{name}: each of {n} decisions came no later than the exact "
      f"profile's margin" if not late else f"{name}: late: {late[:4]}")
print("ok" if not samples_low else "bad", f"{name}: no specialisation on fewer than {nmin} samples"
      if not samples_low else f"{name}: {samples_low[:3]}")
PY
) || bad "$s: the decisions' check failed: $verdicts"
  while read -r verdict line; do
    case $verdict in ok) ok "$line" ;; bad) bad "$line" ;; esac
  done <<< "$verdicts"
done

# At the default rate (one in 256) the small inputs' sites have few
# samples: json's busiest has 30-40. The model must then not specialise
# (docs/lua.md): no decision on fewer samples than the report's minimum,
# and precision >= 0.95 on what it does take.
(cd "$bench" && HWPROF="layer=session,models=all,exact=on,report=$tmp/p256.txt,decisions=$tmp/p256.dec" \
   "$hw" json.lua 300) >/dev/null 2>&1
nmin=$(sed -nE 's/.*from >= ([0-9]+) samples.*/\1/p' "$tmp/p256.txt")
few=$(awk -v m="${nmin:-0}" '($2 == "type" || $2 == "value") && $NF < m' "$tmp/p256.dec" 2>/dev/null)
if [ -n "$nmin" ] && [ -s "$tmp/p256.dec" ] && [ -z "$few" ]; then
  ok "json at one in 256: no specialisation on fewer than $nmin samples"
else
  bad "json at one in 256: min ${nmin:-?} samples, taken on fewer: ${few:-no decisions file}"
fi
for kind in types values; do
  line=$(grep -E "^  $kind +exact" "$tmp/p256.txt")
  p=$(sed -E 's/.*precision ([0-9.]+).*/\1/' <<< "$line")
  [ -n "$line" ] && awk -v p="$p" 'BEGIN { exit !(p >= 0.95) }' &&
    ok "json at one in 256: $kind precision $p" || bad "json at one in 256: $kind: ${line:-no line}"
done

# The call profile. stacks.lua's functions by line: 1 leaf, 2 rec, 3 cmp,
# 4 body (a coroutine), 5 main. Stacks hold only Lua functions at the top
# (samples are taken at bytecodes); a C function appears under the name
# Lua knows it by at its call (pcall, sort) or as [C] (lua.c's pmain,
# which runs the chunk). `return leaf(n)` is a tail call: leaf replaces
# rec(0)'s frame. The coroutine's stacks are its own thread's.
cat > "$tmp/stacks.lua" <<'LUA'
local function leaf(x) return x + 1 end
local function rec(n) if n == 0 then return leaf(n) end return rec(n - 1) + 1 end
local function cmp(a, b) return a < b end
local function body() for j = 1, 3 do coroutine.yield(leaf(j)) end end
local function main()
  for i = 1, 300 do
    rec(3)
    pcall(rec, 2)
    local t = {5, 3, 1, 4, 2}
    table.sort(t, cmp)
  end
  local co = coroutine.wrap(body)
  co() co() co()
end
main()
LUA
(cd "$tmp" && HWPROF="layer=session,models=rap,stack_interval=1,json=$tmp/st1.json,report=$tmp/st1.txt" "$hw" stacks.lua) ||
  bad "stacks.lua failed"
(cd "$tmp" && HWPROF="layer=session,models=pm,stack_interval=997,json=$tmp/st.json,report=$tmp/st.txt" "$hw" stacks.lua) ||
  bad "stacks.lua failed"
if [ -n "$report_tool" ]; then
  "$report_tool" --quiet --folded "$tmp/st.folded" "$tmp/st.json" || bad "hwprof-report --folded failed"
fi
# python3 prints one "ok|bad what" line per check; a crash (a report
# without call_stacks) is a failure too
verdicts=$(python3 - "$tmp" "$report_tool" 2>&1 <<'PY'
import json, os, sys
tmp, tool = sys.argv[1], sys.argv[2]
S = "stacks.lua"
R = ["[C]", f"{S}:main"]
M = R + [f"{S}:5"]
want = {";".join(R), ";".join(M), f"{S}:4", f"{S}:4;{S}:1"}
for top in (M, M + ["pcall"]):
    for d in range(1, 5 if top == M else 4):
        want.add(";".join(top + [f"{S}:2"] * d))
    want.add(";".join(top + [f"{S}:2"] * (3 if top == M else 2) + [f"{S}:1"]))
want.add(";".join(M + ["sort", f"{S}:3"]))
def load(name):
    r = json.load(open(os.path.join(tmp, name)))
    cs = r["call_stacks"]
    got = {";".join(s["frames"]): s["count"] for s in cs["stacks"]}
    return r, cs, got
r, cs, got = load("st1.json")
n = sum(got.values())
ok = set(got) == want
print("ok" if ok else "bad", "every bytecode sampled: the stacks are stacks.lua's" if ok else
      f"stacks: extra {sorted(set(got) - want)}, missing {sorted(want - set(got))}")
ok = n == cs["samples"] == r["instructions"] and cs["dropped"] == 0
print("ok" if ok else "bad", f"one sample per bytecode: {n} summed, {cs['samples']} samples, "
      f"{r['instructions']} bytecodes, {cs['dropped']} dropped")
r, cs, got = load("st.json")
n = sum(got.values())
ok = set(got) <= want and n == cs["samples"] == r["instructions"] // cs["interval"] and n > 0
print("ok" if ok else "bad", f"every {cs['interval']} bytecodes: {n} samples of "
      f"{r['instructions']} bytecodes, stacks within stacks.lua's")
if tool:
    lines = open(os.path.join(tmp, "st.folded")).read().splitlines()
    folded = {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1]) for l in lines}
    ok = folded == got
    print("ok" if ok else "bad", "hwprof-report --folded writes the host's stacks" if ok else
          f"--folded {folded} against {got}")
PY
) || bad "the call profile's check failed: $verdicts"
while read -r verdict line; do
  case $verdict in ok) ok "$line" ;; bad) bad "$line" ;; esac
done <<< "$verdicts"

complete() { grep -q "modelled hardware overhead" "$1" 2>/dev/null && grep -q "tiering decisions" "$1"; }
cat > "$tmp/err.lua" <<'LUA'
local s = 0
for i = 1, 100000 do s = s + i end
error("boom " .. s)
LUA
cat > "$tmp/exit.lua" <<'LUA'
local s = 0
for i = 1, 100000 do s = s + i end
os.exit(3)
LUA
cat > "$tmp/loop.lua" <<'LUA'
io.write("running\n"); io.flush()
local s = 0
while true do s = s + 1 end
LUA
HWPROF="layer=session,models=all,exact=on,report=$tmp/err.txt" "$hw" "$tmp/err.lua" >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] && complete "$tmp/err.txt" && ok "an error leaves a complete report" || bad "error: rc $rc, report incomplete"
HWPROF="layer=session,models=all,exact=on,report=$tmp/exit.txt" "$hw" "$tmp/exit.lua" >/dev/null 2>&1; rc=$?
[ $rc -eq 3 ] && complete "$tmp/exit.txt" && ok "os.exit(3) keeps its status and leaves a report" || bad "os.exit: rc $rc"
# The signal is sent once the script runs (the handler is installed
# before it): a fixed sleep raced the start-up on a loaded machine.
HWPROF="layer=session,models=all,exact=on,report=$tmp/term.txt" "$hw" "$tmp/loop.lua" >"$tmp/term.out" 2>&1 &
pid=$!
for _ in $(seq 600); do grep -q running "$tmp/term.out" 2>/dev/null && break; sleep 0.1; done
sleep 0.2; kill -TERM $pid; wait $pid; rc=$?
[ $rc -eq 143 ] && complete "$tmp/term.txt" && ok "SIGTERM leaves a complete report" || bad "SIGTERM: rc $rc"
msg=$(HWPROF="layer=session,models=all,rap_eps=2" "$hw" "$tmp/exit.lua" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "eps" <<< "$msg" && [ "$(wc -l <<< "$msg")" -eq 1 ] &&
  ok "a bad option is refused before the script: $msg" || bad "bad option: rc $rc, '$msg'"
msg=$(HWPROF="layer=session,models=all,report=/nonexistent/dir/r.txt" "$hw" "$tmp/exit.lua" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "report" <<< "$msg" && ok "an unwritable report is refused before the script: $msg" ||
  bad "unwritable report: rc $rc, '$msg'"
# bbv=: the vectors from the VM's fast path (no model: event-free
# bytecodes in bulk, a block's first one whole) equal those from every
# bytecode whole (exact=on) and beside ProfileMe's countdown
for s in json spectral_norm; do
  i=0
  for v in "" ",exact=on" ",models=pm+path"; do
    i=$((i + 1))
    (cd "$bench" && HWPROF="layer=session,bbv=$tmp/$s.$i.bbv,bbv_interval=997,report=$tmp/bbv.txt$v" "$hw" "$s.lua" 100) >/dev/null 2>&1
  done
  n=$(wc -l < "$tmp/$s.1.bbv" 2>/dev/null || echo 0)
  [ "$n" -gt 100 ] && cmp -s "$tmp/$s.1.bbv" "$tmp/$s.2.bbv" && cmp -s "$tmp/$s.1.bbv" "$tmp/$s.3.bbv" &&
    ok "$s: bbv= the same from bulk bytecodes, every bytecode and the countdown ($n intervals)" ||
    bad "$s: bbv= differs between the VM's fast path and every bytecode whole"
done
msg=$(HWPROF="nonsense" "$hw" "$tmp/exit.lua" 2>&1); rc=$?
[ $rc -eq 2 ] && ok "HWPROF without key=value is refused: $msg" || bad "HWPROF=nonsense: rc $rc"

# layer=vm: the hooks straight into hwprof/vm.h (docs/lua.md, "The VM
# layer path"), on the wall-time inputs (the small ones give json's
# functions 17 bursts). Each model alone counts every bytecode (its
# clock against the session's exact count); with exact=on the layer's hot
# functions and loops are scored against the exact counts of the same
# run, under the layer's own rule: every one it calls hot is hot
# (precision >= 0.95), and it misses none of those at least 4 times past
# the threshold (recall >= 0.9); a unit just past it may never get an
# interval that clears it in a sample. The decisions file is well formed:
# one line per decision, kind and verdict known, the estimate within its
# interval, clocks in order, and as many hot functions as the report's.
# Its value and type verdicts are scored against the exact shares of the
# run so far (precision >= 0.95), and it decides at least 0.9 of the sites
# whose whole-run answer is clear with four times the samples a verdict
# needs at the rate the models sampled.
declare -A wall=([binary_trees]=10 [fannkuch]=8 [json]=1000 [nbody]=15000 [sort]=10000
                 [spectral_norm]=100 [strings]=30000)
for s in json spectral_norm; do
  exact=$(awk '/^instructions/{print $2; exit}' "$tmp/$s.txt")
  for m in pm rap path strat coproc; do
    (cd "$bench" && HWPROF="layer=vm,models=$m,report=$tmp/$s.vm.$m.txt" "$hw" "$s.lua" "${arg[$s]}") >/dev/null 2>&1
    n=$(sed -nE 's/^vm: bytecodes ([0-9]+),.*/\1/p' "$tmp/$s.vm.$m.txt" 2>/dev/null)
    [ -n "$exact" ] && [ "$n" = "$exact" ] && ok "$s: layer=vm $m's clock is $n bytecodes" ||
      bad "$s: layer=vm $m's clock ${n:-missing}, exact $exact"
  done
done
for s in "${!wall[@]}"; do
  a=${wall[$s]}
  (cd "$bench" && "$lua" "$s.lua" "$a") > "$tmp/ref" 2>&1
  (cd "$bench" && HWPROF="layer=vm,models=all,exact=on,report=$tmp/$s.vm.txt,json=$tmp/$s.vm.json,decisions=$tmp/$s.vm.dec" \
     "$hw" "$s.lua" "$a") > "$tmp/on" 2>&1
  cmp -s "$tmp/ref" "$tmp/on" && ok "$s $a: same output under layer=vm" || bad "$s $a: output differs under layer=vm"
  verdicts=$(python3 - "$s" "$tmp/$s.vm.txt" "$tmp/$s.vm.dec" "$tmp/$s.vm.json" 2>&1 <<'PY'
import json, re, sys
name, report, stream, js = sys.argv[1:]
text = open(report).read()
for kind in ("functions", "loops"):
    m = re.search(r"^  %s +exact (\d+), layer (\d+), both (\d+): precision ([\d.]+) recall ([\d.]+); "
                  r"at >= \d+x: (\d+) of (\d+), recall ([\d.]+)$" % kind, text, re.M)
    if not m:
        print("bad", f"{name}: layer=vm: no {kind} score in the report"); continue
    p, rc = float(m.group(4)), float(m.group(8))
    ok = p >= 0.95 and rc >= 0.9
    print("ok" if ok else "bad", f"{name}: layer=vm {kind}: exact {m.group(1)}, layer {m.group(2)}, "
          f"precision {p:.3f}, recall {m.group(5)}, of those >= 4x: {m.group(6)}/{m.group(7)}")
for kind in ("values", "types"):
    m = re.search(r"^  %s +said (\d+), right (\d+): precision ([\d.]+), later wrong \d+; clear invariant "
                  r"(\d+), said yes (\d+), recall [\d.]+; clear variant (\d+), said no (\d+)" % kind,
                  text, re.M)
    if not m:
        print("bad", f"{name}: layer=vm: no {kind} score in the report"); continue
    said, right, inv, iyes, var, vno = (int(m.group(i)) for i in (1, 2, 4, 5, 6, 7))
    clear, hit = inv + var, iyes + vno
    ok = (not said or right / said >= 0.95) and (not clear or hit / clear >= 0.9)
    print("ok" if ok else "bad", f"{name}: layer=vm {kind}: {right} of {said} verdicts held on the run "
          f"so far; {hit} of {clear} clear sites decided")
line_re = re.compile(r"^(func|loop|path|value|type|phase) (yes|no) (?:\d+|0x[0-9a-f]+) (?:0x[0-9a-f]+|0) "
                     r"\S+ ([\d.]+) \[([\d.]+),([\d.]+)\] samples (\d+) clock (\d+)$")
lines = open(stream).read().splitlines()
bad, clocks, funcs = [], [], 0
for l in lines:
    m = line_re.match(l)
    if not m or not float(m.group(4)) <= float(m.group(3)) <= float(m.group(5)):
        bad.append(l); continue
    clocks.append(int(m.group(7)))
    funcs += m.group(1) == "func" and m.group(2) == "yes"
said = int(re.search(r"^  functions +exact \d+, layer (\d+)", text, re.M).group(1))
bytecodes = json.load(open(js))["stats"]["events"]
ok = lines and not bad and clocks == sorted(clocks) and clocks[-1] <= bytecodes and funcs == said
print("ok" if ok else "bad", f"{name}: layer=vm: {len(lines)} decisions well formed, in clock order, "
      f"{funcs} hot functions as the report's" if ok else
      f"{name}: layer=vm decisions: malformed {bad[:3]}, {funcs} hot functions against {said}, "
      f"clocks in order {clocks == sorted(clocks)}")
PY
) || bad "$s: the layer=vm check failed: $verdicts"
  while read -r verdict line; do
    case $verdict in ok) ok "$line" ;; bad) bad "$line" ;; esac
  done <<< "$verdicts"
done
# A repeat ... until loop's back edge is a test's taken jump (no OP_JMP
# of its own): the layer sees it through the conditional-branch hook, and
# the exact count must too, or its hot decision goes unscored.
cat > "$tmp/repeat.lua" <<'LUA'
local s, i = 0, 0
repeat i = i + 1; s = s + i until i >= 300000
print(s)
LUA
HWPROF="layer=vm,models=rap,exact=on,report=$tmp/repeat.txt" "$hw" "$tmp/repeat.lua" >/dev/null 2>&1
line=$(grep -E "^  loops +exact" "$tmp/repeat.txt" 2>/dev/null)
grep -q "exact 1, layer 1, both 1:" <<< "$line" && ok "layer=vm: a repeat loop's back edges, scored: $line" ||
  bad "layer=vm: repeat loop: ${line:-no score}"
msg=$(HWPROF="layer=vm,models=all,bbv=$tmp/x.bbv" "$hw" "$tmp/exit.lua" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "layer=vm" <<< "$msg" && ok "layer=vm refuses the session's bbv=: $msg" ||
  bad "layer=vm with bbv=: rc $rc, '$msg'"
# The layer is the default path; an option only the session has is
# refused, naming layer=session, rather than ignored.
HWPROF="models=all,report=$tmp/default.txt" "$hw" "$tmp/exit.lua" >/dev/null 2>&1
grep -q "^vm: bytecodes" "$tmp/default.txt" 2>/dev/null && ok "without layer=, the VM layer runs" ||
  bad "without layer=: $(head -1 "$tmp/default.txt" 2>/dev/null)"
for o in stack_interval=5 rap_kb=8 models=core; do
  msg=$(HWPROF="models=all,$o" "$hw" "$tmp/exit.lua" 2>&1); rc=$?
  [ $rc -eq 2 ] && grep -q "layer=session" <<< "$msg" && ok "$o without layer=session is refused: $msg" ||
    bad "$o without layer=session: rc $rc, '$msg'"
done

# The layer takes each model's desc members (rap_eps=) and its own
# (vm_pc_step=) by their report names, and its report says so.
HWPROF="models=all,rap_eps=0.05,strat_rate=64,vm_pc_step=4,json=$tmp/fields.json" "$hw" "$tmp/exit.lua" >/dev/null 2>&1
got=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
m = d["models"]
print(m["rap"]["desc"]["eps"], m["stratified"]["desc"]["rate"], d["desc"]["pc_step"])' "$tmp/fields.json" 2>&1)
[ "$got" = "0.05 64 4" ] && ok "layer=vm: rap_eps, strat_rate and vm_pc_step reach the layer's descs" ||
  bad "layer=vm: desc members by name: '$got'"
msg=$(HWPROF="models=all,vm_bogus=1" "$hw" "$tmp/exit.lua" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "vm_bogus" <<< "$msg" && ok "an unknown layer member is refused: $msg" ||
  bad "vm_bogus=1: rc $rc, '$msg'"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
