#!/bin/sh
# The module must load on a machine without a Swift toolchain: no libswift*
# and no path into the toolchain among its dependencies. And the policy's code in it
# must not be merged through the runtime's generic witnesses (below).
set -eu
module=$1
deps=$(ldd "$module")
echo "$deps"
if echo "$deps" | grep -Eq 'libswift|/swift/|not found'; then
  echo "FAIL: $module depends on the Swift runtime or a missing library" >&2
  exit 1
fi
nm -D --defined-only "$module" | grep -q ' pipewire__module_init$' || { echo "FAIL: pipewire__module_init not exported" >&2; exit 1; }
# The daemon's Swift code is compiled without Swift's function merging (Package.swift): a
# merged function of the project's own (a mangled name ending in Tm) takes a type's
# metadata and copies or destroys through the runtime's generic witnesses, on every decision.
merged=$(nm "$module" | awk '$3 ~ /^\$s(13SessionPolicy|13PipeWireFacts|13PipeWirePorts|22AudioSessionModuleCore|22AudioSessionVocabulary).*Tm$/ { print $3 }')
if [ -n "$merged" ]; then
  echo "$merged" | head -n 5
  echo "FAIL: $module holds $(echo "$merged" | wc -l) merged functions of the policy's code (compiled with Swift's function merging)" >&2
  exit 1
fi
echo "ok: $module is self-contained"
