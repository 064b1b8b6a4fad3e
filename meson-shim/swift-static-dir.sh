#!/bin/sh
# Prints the toolchain's static Swift runtime directory (…/lib/swift_static/linux).
set -eu
swiftc=${1:-swiftc}
dir=$("$swiftc" -print-target-info | sed -n 's/.*"runtimeResourcePath": *"\([^"]*\)".*/\1/p' | head -n 1)
dir="${dir%/swift}/swift_static/linux"
[ -f "$dir/libswiftCore.a" ] || { echo "no static Swift runtime in $dir" >&2; exit 1; }
echo "$dir"
