#!/bin/sh
# Makes a private PipeWire 1.4 + WirePlumber 0.5 + pipewire-pulse tree from
# Debian's bookworm-backports packages: downloaded with apt-get and unpacked with
# dpkg -x into DIR/root. Nothing is installed over the system's PipeWire and the
# system's apt configuration is not changed (apt runs with a private source list,
# package lists and cache under DIR).
#
#   scripts/pipewire-tree.sh [DIR]      (default: build/pipewire-1.4)
#
# Prints the tree's root (the prefix to give `pw-session sandbox --pipewire`) on
# standard output; progress goes to standard error. A finished tree is reused.
# DIR/env.sh sets the variables that make a program use the tree's libraries
# (`. DIR/env.sh` before running a client such as the test binary).
set -eu

dir=${1:-build/pipewire-1.4}
pw_version=1.4.2-1~bpo12+1
wp_version=0.5.8-1~bpo12+1
mirror=${AUDIO_SESSION_DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
root=$dir/root
stamp=$root/.complete-$pw_version-$wp_version-bluetooth

if [ -f "$stamp" ] && [ -f "$dir/env.sh" ]; then
  echo "$root"
  exit 0
fi

say() { echo "pipewire-tree: $*" >&2; }

if [ ! -r "$keyring" ]; then
  say "Debian's archive keyring ($keyring) is missing: install the debian-archive-keyring package."
  exit 1
fi

apt_dir=$dir/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$dir/debs"
cat > "$apt_dir/sources.list" <<EOF
deb [signed-by=$keyring] $mirror bookworm-backports main
deb [signed-by=$keyring] $mirror bookworm main
EOF
set -- -o Dir::Etc::SourceList="$apt_dir/sources.list" -o Dir::Etc::SourceParts=/nonexistent \
  -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache" \
  -o Debug::NoLocking=1 -o APT::Sandbox::User=root -q

say "reading the package lists of bookworm-backports (private apt state in $apt_dir)"
apt-get "$@" update >&2

packages="pipewire=$pw_version pipewire-bin=$pw_version libpipewire-0.3-0=$pw_version
libpipewire-0.3-modules=$pw_version libpipewire-0.3-common=$pw_version libspa-0.2-modules=$pw_version
libspa-0.2-bluetooth=$pw_version
pipewire-pulse=$pw_version libpipewire-0.3-dev=$pw_version libspa-0.2-dev=$pw_version
wireplumber=$wp_version libwireplumber-0.5-0=$wp_version liblua5.4-0 libebur128-1 libmysofa1"
say "downloading PipeWire $pw_version and WirePlumber $wp_version"
rm -f "$dir"/debs/*.deb
# shellcheck disable=SC2086
(cd "$dir/debs" && apt-get "$@" download $packages >&2)

say "unpacking into $root"
rm -rf "$root"
mkdir -p "$root"
for deb in "$dir"/debs/*.deb; do
  dpkg -x "$deb" "$root"
done

# pkg-config files: point prefix= at the tree.
for pc in "$root"/usr/lib/*/pkgconfig/*.pc; do
  sed -i "s|^prefix=.*|prefix=$root/usr|" "$pc"
done

# Every library the daemons load must resolve (against the tree, then the system).
libdir=$(dirname "$(ls -d "$root"/usr/lib/*/pipewire-0.3)")
missing=$(LD_LIBRARY_PATH=$libdir ldd "$root/usr/bin/pipewire" "$root/usr/bin/wireplumber" \
  "$root/usr/bin/pipewire-pulse" "$libdir"/pipewire-0.3/libpipewire-module-protocol-pulse.so \
  "$libdir"/spa-0.2/audioconvert/*.so "$libdir"/spa-0.2/support/*.so "$libdir"/wireplumber-0.5/*.so \
  "$libdir"/spa-0.2/bluez5/libspa-bluez5.so \
  2>/dev/null | grep 'not found' | sort -u || true)
if [ -n "$missing" ]; then
  say "libraries the tree needs are missing from this system:"
  echo "$missing" >&2
  exit 1
fi

cat > "$dir/env.sh" <<ENV
# Written by scripts/pipewire-tree.sh: programs started after '. $dir/env.sh' use
# the PipeWire in $root, and the audio-session sandbox runs it.
export LD_LIBRARY_PATH=$libdir\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
export SPA_PLUGIN_DIR=$libdir/spa-0.2
export PIPEWIRE_MODULE_DIR=$libdir/pipewire-0.3
export AUDIO_SESSION_PIPEWIRE_PREFIX=$root
ENV
touch "$stamp"
say "ready: PipeWire $(LD_LIBRARY_PATH=$libdir "$root/usr/bin/pipewire" --version 2>/dev/null | sed -n 's/.*libpipewire \(.*\)/\1/p' | head -1)"
echo "$root"
