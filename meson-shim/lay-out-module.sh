#!/bin/sh
# Lays out the linked module by the paths its decisions take (LLVM's post-link
# optimizer, llvm-bolt): the blocks of a function that a decision runs are laid
# together and the rest moved away, and the functions a decision runs follow one
# another. The daemon decides on cold caches, so the fewer lines and pages of code one
# decision touches, the less it costs.
#
# Which paths those are is learnt here, at build time: session-policy-bench (the same
# Swift objects as the module's core, linked with their relocations) is instrumented and
# makes the decisions of its workloads through the module core's C entry points, with the
# property sets the daemon hands them (--entry-points); the profile names each function
# and the offsets of its branches, so it applies to the module, whose Swift code is the
# same.
#
# Usage: lay-out-module.sh LLVM_BOLT BENCH LINKED_MODULE OUTPUT PROFILE
# Writes OUTPUT (the laid-out module) and PROFILE (one line per branch the profile saw:
# its function and how often it ran, for meson-shim/check-layout.py --laid-out); the
# optimizer's report goes to OUTPUT.log. LINKED_MODULE may be BENCH itself
# (scripts/footprint.py measures the bench laid out the same way).
set -eu
bolt=$1 bench=$2 linked=$3 out=$4 listing=$5
log=$out.log
work=$out.d
rm -rf "$work"
mkdir -p "$work"

# llvm-bolt finds its instrumentation runtime next to its real location (Debian's
# /usr/bin/llvm-bolt-19 is a link into /usr/lib/llvm-19/bin).
bolt=$(readlink -f "$bolt")

fail() {
    echo "lay-out-module: $1 (the optimizer's report: $log)" >&2
    exit 1
}

"$bolt" "$bench" -instrument -o "$work/bench-instrumented" \
    --instrumentation-file="$work/profile.fdata" >"$log" 2>&1 ||
    fail "could not instrument $bench"
# The same decisions in every build, whatever the machine's speed or load: the module
# core runs on the benchmark's simulated clock (--untimed: 5 ms between two events, so its
# publishing interval holds and writes the same publications at the same decisions), and
# the hash seed is fixed, so that a set's order, and with it the branches taken, does not
# change from one run to the next. Only the module core's own timing of each decision
# (for its warning about a decision that held the loop) reads the real clock. Every
# workload runs, in the benchmark's order.
SWIFT_DETERMINISTIC_HASHING=1 "$work/bench-instrumented" --entry-points --untimed \
    --sessions 10 --rounds 300 >>"$log" 2>&1 ||
    fail "the instrumented decisions did not run"
[ -s "$work/profile.fdata" ] || fail "the instrumented decisions wrote no profile"

# A function the benchmark exports (its core's public functions) is local to the module,
# whose version script exports only the module's entry point; the profile names a local
# function with a /N suffix, so these names get the module's.
nm --defined-only "$linked" | awk '$2 == "t" { print $3 }' >"$work/local-names"
awk 'NR == FNR { local[$1] = 1; next }
     $1 == 1 && ($2 in local) { $2 = $2 "/1" }
     $1 == 1 && ($5 in local) { $5 = $5 "/1" }
     { print }' "$work/local-names" "$work/profile.fdata" >"$work/module.fdata"

# Only the functions the profile saw are rewritten (-lite); the rest of the module stays
# where the link put it, so that the code that runs once, as the module loads, is not
# spread over a second copy of the module's text.
"$bolt" "$linked" -data="$work/module.fdata" -o "$work/module.so" -lite=1 \
    -reorder-blocks=ext-tsp -reorder-functions=cdsort \
    -split-functions -split-all-cold -split-eh >>"$log" 2>&1 ||
    fail "could not lay out $linked"

# The branches that ran, by function (a local function's name without BOLT's /N suffix).
awk '$1 == 1 { sub(/\/[0-9]+$/, "", $2); print $2, $NF }' "$work/module.fdata" >"$listing"
profiled=$(grep -o '[0-9]* out of [0-9]* functions in the binary ([0-9.]*%) have non-empty execution profile' "$log" | tail -n 1)
chmod 755 "$work/module.so"
mv -f "$work/module.so" "$out"
rm -rf "$work"
echo "lay-out-module: ${profiled:-laid out}"
