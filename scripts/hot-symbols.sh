#!/bin/sh
# Writes meson-shim/hot-symbols.txt: the functions of the module's Swift code (and of the
# Swift runtime it links) that the policy's decisions run, hottest first. The module's link
# lays them side by side (meson-shim/meson.build): the daemon runs a decision every few
# milliseconds at most, on cold caches, and the fewer pages of code it touches the less
# the decision costs it.
#
# Profiles session-policy-bench (release) with perf while it drives the module's core
# (--module-core) through the workloads of the daemon's benchmarks. Run it again after a
# change to the policy's hot paths: a stale list costs only locality (the linker skips
# names it lists that no longer exist). Needs perf (Debian: linux-perf).
set -eu
cd "$(dirname "$0")/.."
command -v perf >/dev/null 2>&1 || { echo "hot-symbols: perf is missing (apt-get install linux-perf)" >&2; exit 1; }
./scripts/swiftpm.sh swift build -c release --product session-policy-bench >&2
bin=$(./scripts/swiftpm.sh swift build -c release --show-bin-path)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: > "$tmp/counts"
for w in toggle churn declared idle; do
  echo "hot-symbols: profiling the $w workload" >&2
  perf record -q -F 15000 -o "$tmp/$w.data" "$bin/session-policy-bench" --workload "$w" \
    --sessions 10 --module-core > /dev/null
  # "  12.34%  123  [.] symbol": samples and the (mangled) name of each function.
  perf report -i "$tmp/$w.data" --no-children --no-demangle --sort sym -n --stdio 2>/dev/null |
    awk '$3 == "[.]" { print $2, $4 }' >> "$tmp/counts"
done
# The linker moves sections, not functions. The static Swift libraries compile most of
# their code into one .text section per object (the standard library's is 1.6 MB): a
# name listed from one of those would move that whole section to its place in the list,
# and every function listed after it would land a megabyte and more away. Such names
# are left out; their section stays where it was.
static=$(meson-shim/swift-static-dir.sh "$(command -v swiftc)")
: > "$tmp/unmovable"
for lib in libswiftCore.a libswift_StringProcessing.a libswift_RegexParser.a; do
  rm -rf "$tmp/ar" && mkdir "$tmp/ar"
  (cd "$tmp/ar" && ar x "$static/$lib")
  for o in "$tmp/ar"/*.o; do
    size=$(objdump -h "$o" | awk '$2 == ".text" { print $3 }')
    [ -n "$size" ] && [ $((0x$size)) -gt 65536 ] || continue
    objdump -t "$o" | awk '{ for (i = 1; i < NF; i++) if ($i == ".text") { print $NF; break } }' >> "$tmp/unmovable"
  done
done
awk '{ c[$2] += $1 } END { for (s in c) print c[s], s }' "$tmp/counts" | sort -k1,1nr -k2,2 |
  awk '{ print $2 }' | grep -vxF -f "$tmp/unmovable" > meson-shim/hot-symbols.txt
echo "hot-symbols: $(wc -l < meson-shim/hot-symbols.txt) functions in meson-shim/hot-symbols.txt" >&2
