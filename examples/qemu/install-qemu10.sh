#!/usr/bin/env bash
# Installs QEMU 10 (qemu-system-x86 from Debian 12's bookworm-backports)
# beside Debian 12's qemu-user 7.2, which the API-v1 tests need: the
# backports qemu-user is static and cannot load plugins, so qemu-user is
# pinned to 7.2 and held. Idempotent; needs root.
set -euo pipefail
list=/etc/apt/sources.list.d/hwprof-backports.sources
need_update=0
if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    cat > "$list" <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    need_update=1
fi
if [ "$need_update" = 1 ] || ! apt-cache policy qemu-system-x86 | grep -q bookworm-backports; then
    apt-get -o DPkg::Lock::Timeout=600 update -qq
fi
if ! command -v qemu-system-x86_64 >/dev/null \
        || ! qemu-system-x86_64 --version | grep -Eq 'version (9|1[0-9])\.'; then
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq -t bookworm-backports \
        qemu-system-x86 'qemu-user=1:7.2*' 'qemu-user-binfmt=1:7.2*' >/dev/null
fi
apt-mark hold qemu-user qemu-user-binfmt >/dev/null 2>&1 || true
qemu-system-x86_64 --version | head -1
qemu-x86_64 --version | head -1
