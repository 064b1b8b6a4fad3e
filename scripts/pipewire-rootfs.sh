#!/bin/sh
# Makes a Debian sid root filesystem with PipeWire 1.6 + WirePlumber 0.5.18 +
# pipewire-pulse and the Bluetooth plugin, for the third generation of the tests.
#
#   scripts/pipewire-rootfs.sh [DIR]      (default: build/pipewire-1.6)
#
# Why a whole root filesystem: sid's binaries need a newer C library than Debian 12's,
# so unpacking the packages next to the system's libraries (as scripts/pipewire-tree.sh
# does for 1.4) is not enough. mmdebstrap makes DIR/root with sid's own C library, and
# copies of PipeWire's programs in DIR/root/host/bin whose interpreter is that root's
# dynamic loader (patchelf): they run on the host with sid's libraries while seeing the
# host's files, so the sandbox's sockets, the module built here and the fake BlueZ need
# no bind mount, no chroot and no privilege. Clients (the tests, paplay, players,
# browsers) stay the host's and talk to the 1.6 daemons over PipeWire's and
# PulseAudio's protocols, as an older Flatpak runtime does; pw-dump, pw-play, wpctl and
# the other PipeWire tools are 1.6's.
#
# Nothing is installed over the system's PipeWire and the system's apt configuration is
# not changed. Prints the root's path on standard output; progress goes to standard
# error. A finished root is reused. DIR/versions names what it runs, DIR/pkgconfig holds the root's libpipewire-0.3.pc and
# libspa-0.2.pc pointing into it (to build the module against 1.6's headers), and
# DIR/env.sh names the root for the sandbox (`. DIR/env.sh` before the test binary).
#
# The versions are pinned (AUDIO_SESSION_SID_PIPEWIRE, AUDIO_SESSION_SID_WIREPLUMBER
# override them; an empty value takes sid's current one).
set -eu

dir=${1:-build/pipewire-1.6}
pw_version=${AUDIO_SESSION_SID_PIPEWIRE-1.6.9-2}
wp_version=${AUDIO_SESSION_SID_WIREPLUMBER-0.5.18-1}
mirror=${AUDIO_SESSION_DEBIAN_MIRROR:-http://deb.debian.org/debian}

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
root=$dir/root
stamp=$dir/.complete-${pw_version:-sid}-${wp_version:-sid}-host-bin

if [ -f "$stamp" ] && [ -f "$dir/env.sh" ] && [ -x "$root/usr/bin/pipewire" ]; then
  echo "$root"
  exit 0
fi

say() { echo "pipewire-rootfs: $*" >&2; }

for tool in mmdebstrap patchelf; do
  if ! command -v $tool >/dev/null 2>&1; then
    say "$tool is missing: install the $tool package (make deps does, as root)."
    exit 1
  fi
done

pin() { if [ -n "$2" ]; then echo "$1=$2"; else echo "$1"; fi; }
packages=$(printf '%s,' \
  "$(pin pipewire "$pw_version")" "$(pin pipewire-bin "$pw_version")" \
  "$(pin pipewire-pulse "$pw_version")" "$(pin libspa-0.2-bluetooth "$pw_version")" \
  "$(pin libpipewire-0.3-dev "$pw_version")" "$(pin libspa-0.2-dev "$pw_version")" \
  "$(pin wireplumber "$wp_version")")
packages=${packages%,}

say "making a Debian sid root filesystem in $root with PipeWire ${pw_version:-(sid's)} and WirePlumber ${wp_version:-(sid's)}"
say "(about 250 MB; half a minute on a fast mirror)"
rm -rf "$root" "$stamp"
start=$(date +%s)
# The archive's Release file may be older than its Valid-Until on a mirror that is a
# snapshot; the packages are still checked against Debian's keys. Documentation, manual
# pages and translations are left out: nothing here reads them.
mmdebstrap --variant=essential --include="$packages" \
  --aptopt='Acquire::Check-Valid-Until "false"' \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
  sid "$root" "$mirror" >&2

loader=
for l in "$root"/lib64/ld-linux-x86-64.so.2 "$root"/usr/lib64/ld-linux-x86-64.so.2 \
         "$root"/lib/ld-linux-aarch64.so.1 "$root"/usr/lib/ld-linux-aarch64.so.1; do
  if [ -e "$l" ]; then loader=$l; break; fi
done
libdir=$(dirname "$(ls -d "$root"/usr/lib/*/pipewire-0.3 | head -1)")
if [ -z "$loader" ] || [ ! -d "$libdir/spa-0.2/bluez5" ]; then
  say "the root filesystem has no dynamic loader or no Bluetooth plugin; see the output above."
  exit 1
fi
# The programs the sandbox runs (the daemons, pw-* and wpctl), as copies in root/host/bin
# that the host can start directly: their interpreter is the root's own loader and their
# library path the root's. Started that way (not as `ld.so program`), a program is what
# /proc/self/exe says, so PipeWire names its clients as on a real system (pipewire-pulse
# and pw-play stay links to pipewire and pw-cat, as in Debian).
mkdir -p "$root/host/bin"
arch=$(basename "$libdir")
for p in "$root"/usr/bin/pipewire* "$root"/usr/bin/wireplumber "$root"/usr/bin/pw-* "$root"/usr/bin/wpctl; do
  [ -e "$p" ] || continue
  name=$(basename "$p")
  if [ -L "$p" ]; then
    cp -P "$p" "$root/host/bin/$name"
  else
    cp "$p" "$root/host/bin/$name"
    patchelf --set-interpreter "$loader" --force-rpath --set-rpath "$libdir:$root/lib/$arch" "$root/host/bin/$name"
  fi
done
pw=$("$root/host/bin/pipewire" --version | sed -n 's/^Linked with libpipewire \(.*\)/\1/p')
wp=$("$root/host/bin/wireplumber" --version | sed -n 's/^Linked with libwireplumber \(.*\)/\1/p')
if [ -z "$pw" ] || [ -z "$wp" ]; then
  say "sid's pipewire or wireplumber does not start from $root/host/bin."
  exit 1
fi

mkdir -p "$dir/pkgconfig"
for pc in "$libdir"/pkgconfig/libpipewire-0.3.pc "$libdir"/pkgconfig/libspa-0.2.pc; do
  sed "s|^prefix=.*|prefix=$root/usr|" "$pc" > "$dir/pkgconfig/$(basename "$pc")"
done

# The versions the tests run with, as Debian's package database has them.
pkg_version() {
  awk -v p="$1" '$1 == "Package:" { cur = $2 } cur == p && $1 == "Version:" { print $2; exit }' \
    "$root/var/lib/dpkg/status"
}
echo "PipeWire $pw ($(pkg_version pipewire)) + WirePlumber $wp ($(pkg_version wireplumber)), Debian sid" > "$dir/versions"

cat > "$dir/env.sh" <<ENV
# Written by scripts/pipewire-rootfs.sh: the audio-session sandbox started after
# '. $dir/env.sh' runs PipeWire $pw and WirePlumber $wp from $root
# (its programs in host/bin). Clients stay the host's.
export AUDIO_SESSION_PIPEWIRE_PREFIX=$root
ENV
touch "$stamp"
say "ready in $(( $(date +%s) - start )) s, $(du -sh "$root" | cut -f1): PipeWire $pw, WirePlumber $wp"
echo "$root"
