#!/bin/sh
# make bench: the benchmarks. For now the policy core's decision cost
# (BENCHMARKS.md, "Policy core decision cost"); the daemon-level comparison
# with stock WirePlumber comes with the benchmark issue.
set -eu
cd "$(dirname "$0")/.."
echo "policy core decision cost (release build):" >&2
swift run -c release session-policy-bench "$@"
