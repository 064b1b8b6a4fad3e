#!/bin/sh
# The module must load on a machine without a Swift toolchain: no libswift*
# and no path into the toolchain among its dependencies.
set -eu
module=$1
deps=$(ldd "$module")
echo "$deps"
if echo "$deps" | grep -Eq 'libswift|/swift/|not found'; then
  echo "FAIL: $module depends on the Swift runtime or a missing library" >&2
  exit 1
fi
nm -D --defined-only "$module" | grep -q ' pipewire__module_init$' || { echo "FAIL: pipewire__module_init not exported" >&2; exit 1; }
echo "ok: $module is self-contained"
