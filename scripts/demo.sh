#!/bin/sh
# make demo: a private headless PipeWire with the module loaded, a tone on the
# headphones, and what the policy sees of it.
set -eu
cd "$(dirname "$0")/.."
exec ./build/meson/pw-session sandbox --devices speaker,headphones -- sh ./scripts/demo-scenario.sh
