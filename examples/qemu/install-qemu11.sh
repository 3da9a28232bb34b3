#!/usr/bin/env bash
# Installs QEMU 11.1's system emulator (qemu-system-x86 from Debian 13's
# trixie-backports: plugin API 7) on a Debian 12 host, without touching
# the host's packages: Debian 13's libraries are newer than Debian 12's,
# so it goes into a Debian 13 root of its own (debootstrap, minbase)
# under the cache, and a wrapper runs it there through that root's
# dynamic loader, with the host's files (kernel, plugin, reports)
# reachable as they are. Prints the wrapper's path.
#
#   bash examples/qemu/install-qemu11.sh
#   HWPROF_QEMU11_CACHE   default $HOME/.cache/hwprof/qemu-11.1: root/
#                         (about 500 MB) and bin/qemu-system-x86_64
#
# This is the QEMU 11 that loads the API 7 plugins here: Debian's
# qemu-user of 11.1 is static and cannot load plugins, and a user-mode
# build from source (build-qemu.sh 11.1) needs the source package, which
# not every mirror serves. Needs root (debootstrap, chroot). About half
# a minute on a fast mirror.
set -euo pipefail
cache=${HWPROF_QEMU11_CACHE:-$HOME/.cache/hwprof/qemu-11.1}
root=$cache/root
bin=$cache/bin/qemu-system-x86_64
mirror=http://deb.debian.org/debian
apt_i() { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 "$@"; }

if [ ! -x "$root/usr/bin/qemu-system-x86_64" ]; then
    command -v debootstrap >/dev/null || apt_i install -y -qq debootstrap >/dev/null
    rm -rf "$root.tmp"
    mkdir -p "$cache"
    debootstrap --variant=minbase trixie "$root.tmp" "$mirror" >&2
    echo "deb $mirror trixie-backports main" > "$root.tmp/etc/apt/sources.list.d/backports.list"
    chroot "$root.tmp" apt-get update -qq >&2
    # Without recommends: no GUI, spice or OpenGL modules, no extra block
    # drivers; the serial console and TCG need none of them.
    DEBIAN_FRONTEND=noninteractive chroot "$root.tmp" apt-get install -y -qq \
        --no-install-recommends -t trixie-backports qemu-system-x86 >&2
    chroot "$root.tmp" apt-get clean
    rm -rf "$root"
    mv "$root.tmp" "$root"
fi

# The root's loader with the root's libraries, not the host's cache of
# them (a plugin the wrapper loads then links against them too: built on
# Debian 12, it needs no newer symbol), the root's firmware (-L) and
# modules.
mkdir -p "$cache/bin"
cat > "$bin.tmp" <<EOF
#!/bin/sh
# QEMU 11.1 (Debian 13 trixie-backports) in $root: written by install-qemu11.sh
r=$(printf %q "$root")
QEMU_MODULE_DIR="\$r/usr/lib/x86_64-linux-gnu/qemu" exec "\$r/lib64/ld-linux-x86-64.so.2" \\
    --inhibit-cache --library-path "\$r/lib/x86_64-linux-gnu:\$r/usr/lib/x86_64-linux-gnu" \\
    "\$r/usr/bin/qemu-system-x86_64" -L "\$r/usr/share/qemu" -L "\$r/usr/share/seabios" "\$@"
EOF
chmod +x "$bin.tmp"
mv "$bin.tmp" "$bin"
"$bin" --version | head -1 >&2
echo "$bin"
