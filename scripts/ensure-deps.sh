#!/bin/sh
# Installs the Debian packages the build, the demo and the tests need, when run
# as root; otherwise says exactly what is missing and how to install it.
set -eu
packages="pipewire pipewire-bin wireplumber pipewire-pulse pipewire-alsa pulseaudio-utils alsa-utils
libpipewire-0.3-dev libspa-0.2-dev meson ninja-build pkg-config gcc g++ binutils libc6-dev dbus sox procps jq coreutils
debian-archive-keyring mmdebstrap patchelf mpv gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-pipewire espeak-ng
libglib2.0-bin libglib2.0-dev gsettings-desktop-schemas python3-dbusmock python3-dbus python3-gi libspa-0.2-bluetooth mpv-mpris playerctl firefox-esr chromium
bolt-19"
missing=""
for p in $packages; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  case "$status" in
    *"install ok installed"*) ;;
    *) missing="$missing $p" ;;
  esac
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "missing Debian packages:$missing" >&2
  echo "install them with: sudo apt-get update && sudo apt-get install -y$missing" >&2
  exit 1
fi
echo "installing Debian packages:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >&2
