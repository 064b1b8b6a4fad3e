#!/bin/sh
# make bench: the audio-session module against stock PipeWire 0.3.65 + WirePlumber 0.4.13,
# on PipeWire 1.4 + WirePlumber 0.5.8 (a private tree, scripts/pipewire-tree.sh) against its
# stock policy, and on PipeWire 1.6 + WirePlumber 0.5.18 (a Debian sid root filesystem,
# scripts/pipewire-rootfs.sh) against the peer as users run it today, with its MPRIS pause;
# measured in private headless sandboxes, plus the policy core's decision cost.
# Writes bench-out/results.json, bench-out/policy.json, docs/bench/*.png, BENCHMARKS.md and
# the Benchmarks section of README.md. Arguments are passed to audio-session-bench
# (e.g. --quick, --hl-trials 20); see Sources/audio-session-bench/main.swift.
#
# Installs what it needs on Debian 12 when run as root (the build's packages through
# scripts/ensure-deps.sh, and python3-matplotlib for the plots); otherwise says what is missing.
set -eu
cd "$(dirname "$0")/.."
start=$(date +%s)
out=bench-out
mkdir -p "$out" docs/bench

./scripts/ensure-deps.sh

# The plotting tool (Debian's matplotlib for Debian's python3, not a pyenv/venv python),
# the profiler for the profile section (perf, from linux-perf) and the cache simulator
# that counts what one decision fetches (valgrind).
missing=""
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || missing="$missing python3-matplotlib"
command -v perf >/dev/null 2>&1 || missing="$missing linux-perf"
command -v valgrind >/dev/null 2>&1 || missing="$missing valgrind"
if [ -n "$missing" ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "bench: installing$missing (plots, profile, cache simulation)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends $missing >&2 ||
      { apt-get update -q >&2 && apt-get install -y -q --no-install-recommends $missing >&2; }
  else
    echo "bench: missing Debian packages:$missing; install them with: sudo apt-get install -y$missing" >&2
    exit 1
  fi
fi

# The module, built against each PipeWire (make bench depends on make module module-pw1.4 module-pw1.6).
for m in build/meson build/meson-pw1.4 build/meson-pw1.6; do
  if [ ! -f $m/libpipewire-module-audio-session.so ]; then
    echo "bench: $m/libpipewire-module-audio-session.so is missing (run make module module-pw1.4 module-pw1.6)" >&2
    exit 1
  fi
done
pw14=$(./scripts/pipewire-tree.sh build/pipewire-1.4)
pw16=$(./scripts/pipewire-rootfs.sh build/pipewire-1.6)

echo "bench: building audio-session-bench and session-policy-bench (release)" >&2
./scripts/swiftpm.sh swift build -c release --product audio-session-bench >&2
./scripts/swiftpm.sh swift build -c release --product session-policy-bench >&2
bin=$(./scripts/swiftpm.sh swift build -c release --show-bin-path)

echo "bench: policy core decision cost (session-policy-bench --json)" >&2
if "$bin/session-policy-bench" --json > "$out/policy.json.tmp"; then
  mv "$out/policy.json.tmp" "$out/policy.json"
else
  echo "bench: session-policy-bench failed; the report says so" >&2
  rm -f "$out/policy.json.tmp" "$out/policy.json"
fi

echo "bench: what one decision fetches into cold caches (scripts/footprint.py, cachegrind)" >&2
if ! /usr/bin/python3 scripts/footprint.py --bench "$bin/session-policy-bench" --json "$out/footprint.json" >&2; then
  echo "bench: footprint.py failed; the report goes without it" >&2
  rm -f "$out/footprint.json"
fi

echo "bench: audio-session-bench (module vs stock WirePlumber, in sandboxes)" >&2
AUDIO_SESSION_MODULE_DIR="$PWD/build/meson" "$bin/audio-session-bench" --out "$out" --command "make bench" \
  --pw14-prefix "$pw14" --pw14-module-dir "$PWD/build/meson-pw1.4" \
  --pw16-prefix "$pw16" --pw16-module-dir "$PWD/build/meson-pw1.6" "$@"

end=$(date +%s)
echo "bench: plots and BENCHMARKS.md" >&2
/usr/bin/python3 scripts/plot.py --results "$out/results.json" --policy "$out/policy.json" --footprint "$out/footprint.json" \
  --out docs/bench --markdown BENCHMARKS.md --readme README.md --wall $((end - start))
echo "bench: done in $(( $(date +%s) - start )) s (BENCHMARKS.md, docs/bench/*.png)" >&2
