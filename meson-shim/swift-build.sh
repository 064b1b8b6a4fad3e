#!/bin/sh
# Builds the Swift side with SwiftPM (release) and copies what meson links and
# installs into meson's build directory.
set -eu
swift=$1 repo=$2
out=$(cd "$3" && pwd)
cd "$repo"
"$swift" build -c release --product AudioSessionModuleCore
"$swift" build -c release --product pw-session
bin=$("$swift" build -c release --show-bin-path)
cp -f "$bin/libAudioSessionModuleCore.a" "$out/libAudioSessionModuleCore.a"
cp -f "$bin/pw-session" "$out/pw-session"
