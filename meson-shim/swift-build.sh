#!/bin/sh
# Builds the Swift side with SwiftPM (release) and copies what meson links and
# installs into meson's build directory.
set -eu
swift=$1 repo=$2  # $3: meson's output directory; $4: module-only or nothing
out=$(cd "$3" && pwd)
cd "$repo"
# SwiftPM with a deadline (it can hang on exit): scripts/swiftpm.sh.
spm() { "$repo/scripts/swiftpm.sh" "$swift" "$@"; }
bin=$(spm build -c release --show-bin-path)
# SwiftPM adds to an existing archive: objects of renamed or deleted sources would
# stay in it and be linked. A new archive each build holds only today's objects.
rm -f "$bin/libAudioSessionModuleCore.a" "$bin/libAudioSessionC.a"
spm build -c release --product AudioSessionModuleCore
cp -f "$bin/libAudioSessionModuleCore.a" "$out/libAudioSessionModuleCore.a"
# The policy's benchmark, built from the same objects: the module's layout is learnt from
# its decisions (lay-out-module.sh).
spm build -c release --product session-policy-bench
cp -f "$bin/session-policy-bench" "$out/session-policy-bench"
# module-only: the core archive is all meson links (see meson.build).
[ "${4:-}" = module-only ] && exit 0
spm build -c release --product AudioSessionC
spm build -c release --product pw-session
cp -f "$bin/libAudioSessionC.a" "$out/libAudioSessionC.a"
cp -f "$bin/pw-session" "$out/pw-session"
