#!/usr/bin/env bash
# Builds qemu-x86_64 (user mode) with TCG plugins from the Debian source
# package of bookworm-backports' QEMU, so the plugin's current-API build can
# profile user-mode programs: Debian's own qemu-user on that version is
# static and cannot load plugins. Only the x86_64-linux-user target is built.
# The result is cached outside the repository:
#   ${HWPROF_QEMU_CACHE:-$HOME/.cache/hwprof/qemu}/bin/qemu-x86_64
# Usage: bash examples/qemu/build-qemu.sh      (prints the binary's path)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${HWPROF_QEMU_CACHE:-$HOME/.cache/hwprof/qemu}
bin=$cache/bin/qemu-x86_64
if [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; then
    echo "$bin"; exit 0
fi
bash "$here/install-qemu10.sh" --src >&2
# Build dependencies of the x86_64-linux-user target with plugins (not the
# whole package's list: no system emulators, firmware or docs).
DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq dpkg-dev ninja-build \
    meson python3-venv pkg-config libglib2.0-dev flex bison >/dev/null
mkdir -p "$cache/src"
cd "$cache/src"
if ! ls qemu-*/configure >/dev/null 2>&1; then
    # bookworm-backports' version, the one qemu-system-x86 was installed from
    ver=$(dpkg-query -W -f='${Version}' qemu-system-x86)
    apt-get source -qq --download-only "qemu=$ver" >&2 || true
    if ls qemu_*.dsc >/dev/null 2>&1; then
        dpkg-source -x --skip-debianization qemu_*.dsc >&2
    else
        # Some mirrors carry the upstream tarball but not the backport's
        # .dsc/.debian.tar.xz; the user-mode build needs only upstream
        # source, checked here against the checksum in apt's source index.
        orig=$(ls qemu_*.orig.tar.xz | head -1)
        sum=$(apt-cache showsrc qemu | awk -v f="$orig" '$3 == f && length($1) == 64 {print $1; exit}')
        [ -n "$sum" ] || { echo "build-qemu: no checksum for $orig in apt's index" >&2; exit 1; }
        echo "$sum  $orig" | sha256sum -c --quiet >&2
        tar -xf "$orig"
    fi
fi
# QEMU 10's configure needs meson >= 1.5 (Debian 12 has 1.0) and pycotap.
# The backports packages are unpacked into the cache rather than installed, so the system's meson (what
# hwprof itself builds with) stays as it is.
if [ ! -d "$cache/meson/usr/lib/python3/dist-packages/mesonbuild" ]; then
    mkdir -p "$cache/meson"
    (cd "$cache/meson" && apt-get download -qq meson/bookworm-backports \
        python3-pycotap/bookworm-backports >&2 \
        && for d in *.deb; do dpkg -x "$d" .; done)
fi
export PYTHONPATH=$cache/meson/usr/lib/python3/dist-packages${PYTHONPATH:+:$PYTHONPATH}
srcdir=$(dirname "$(ls "$cache"/src/qemu-*/configure | head -1)")
mkdir -p "$cache/build"
cd "$cache/build"
if [ ! -f build.ninja ]; then
    "$srcdir/configure" --python=/usr/bin/python3 --target-list=x86_64-linux-user --enable-plugins \
        --disable-docs --disable-install-blobs --disable-werror --disable-tools --disable-guest-agent \
        --without-default-features --prefix="$cache" >&2
fi
nice ninja -j"$(nproc)" qemu-x86_64 >&2
mkdir -p "$cache/bin"
cp qemu-x86_64 "$bin.tmp" && mv "$bin.tmp" "$bin"
"$bin" --version >&2
echo "$bin"
