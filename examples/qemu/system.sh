#!/usr/bin/env bash
# Profiles a whole machine: boots Debian 12's kernel (linux-image-amd64,
# extracted from the package) with a small initramfs (busybox, a workload
# and the libraries it loads) under qemu-system-x86_64 (TCG: QEMU 10 with
# the API 4 plugin, or QEMU 11.1 with the API 7 one), runs the workload,
# powers off. Leaves one report per vCPU
# (report.txt.vcpuN) and the merged one (report.txt, report.json) in OUT.
#
#   bash examples/qemu/system.sh [OUT [PLUGIN_OPTIONS]]
#     OUT             default: ./hwprof-system
#     PLUGIN_OPTIONS  default: models=all
#   HWPROF_SYSTEM_CACHE  kernel and initramfs cache (default
#                        $HOME/.cache/hwprof/system)
#   HWPROF_SMP           vCPUs (default 2)
#   HWPROF_PLUGIN        the plugin (default: build/examples/qemu/libhwprof-tcg-v4.so);
#                        none: the same boot without a plugin (what
#                        bench/qemu/system.sh times the plugin against)
#   HWPROF_QEMU_SYSTEM   the emulator (default: bookworm-backports' QEMU
#                        10, installed); QEMU 11.1's is what
#                        install-qemu11.sh prints, with libhwprof-tcg-v7.so
#
# Installs what it needs (bookworm-backports QEMU beside qemu-user 7.2,
# cpio) through apt; needs root for that. Takes one to a few minutes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-./hwprof-system}
opts=${2:-models=all}
cache=${HWPROF_SYSTEM_CACHE:-$HOME/.cache/hwprof/system}
smp=${HWPROF_SMP:-2}
plugin=${HWPROF_PLUGIN:-$root/build/examples/qemu/libhwprof-tcg-v4.so}

qemu=${HWPROF_QEMU_SYSTEM:-}
if [ -z "$qemu" ]; then
    bash "$here/install-qemu10.sh" >/dev/null
    qemu=$(command -v qemu-system-x86_64)
fi
command -v cpio >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cpio >/dev/null
[ "$plugin" = none ] || [ -f "$plugin" ] || { echo "system.sh: no plugin at $plugin (ninja -C build examples/qemu/libhwprof-tcg-v4.so)" >&2; exit 1; }
mkdir -p "$cache" "$out"

# The kernel: the package linux-image-amd64 depends on, unpacked.
kernel=$cache/vmlinuz
if [ ! -f "$kernel" ]; then
    pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/{print $2; exit}')
    tmp=$(mktemp -d)
    (cd "$tmp" && apt-get download -qq "$pkg" 2>/dev/null && dpkg -x ./*.deb x)
    cp "$tmp"/x/boot/vmlinuz-* "$kernel.tmp" && mv "$kernel.tmp" "$kernel"
    echo "$pkg" > "$cache/kernel-package"
    rm -rf "$tmp"
fi

# The initramfs: busybox (static) as /init's shell, the workload (gzip of a
# generated file, on each vCPU) and every library ldd names for it.
initrd=$cache/initramfs.cpio.gz
if [ ! -f "$initrd" ]; then
    tmp=$(mktemp -d)
    (cd "$tmp" && apt-get download -qq busybox-static 2>/dev/null && dpkg -x ./*.deb bb)
    r=$tmp/root
    mkdir -p "$r"/{bin,sbin,proc,sys,dev,tmp,lib64,usr/bin}
    cp "$tmp/bb/bin/busybox" "$r/bin/busybox"
    for a in sh mount poweroff seq cat head wc echo sync nproc; do ln -s busybox "$r/bin/$a"; done
    cp "$(command -v gzip)" "$r/usr/bin/gzip"
    for lib in $(ldd "$(command -v gzip)" | grep -o '/[^ ]*'); do
        mkdir -p "$r$(dirname "$lib")"
        cp -L "$lib" "$r$lib"
    done
    cat > "$r/init" <<'INIT'
#!/bin/sh
mount -t proc proc /proc
mount -t devtmpfs dev /dev 2>/dev/null
seq 1 20000 > /tmp/input
n=$(nproc)
echo "hwprof-system: running gzip on $n vCPU(s)"
i=0
while [ $i -lt $n ]; do gzip -c -6 /tmp/input > /tmp/out.$i & i=$((i + 1)); done
wait
echo "hwprof-system: workload done: $(cat /tmp/out.0 | wc -c) bytes"
sync
poweroff -f
INIT
    chmod +x "$r/init"
    (cd "$r" && find . | cpio -o -H newc --quiet | gzip -1) > "$initrd.tmp"
    mv "$initrd.tmp" "$initrd"
    rm -rf "$tmp"
fi

echo "system.sh: $qemu: $("$qemu" --version | head -1)"
echo "system.sh: kernel $(cat "$cache/kernel-package" 2>/dev/null), $smp vCPU(s), plugin $plugin"
rm -f "$out"/report.txt* "$out"/report.json*
args=(-plugin "$plugin,$opts,report=$out/report.txt,json=$out/report.json")
[ "$plugin" != none ] || args=()
"$qemu" -machine q35 -cpu max -smp "$smp" -m 512M -accel tcg -nographic -no-reboot \
    -kernel "$kernel" -initrd "$initrd" \
    -append "console=ttyS0 quiet panic=-1 norandmaps rdinit=/init" \
    "${args[@]}" > "$out/console.log" 2>&1 || { tail -20 "$out/console.log" >&2; exit 1; }
grep 'hwprof-system' "$out/console.log" || true
[ "$plugin" != none ] || exit 0
ls "$out"/report.txt* >/dev/null
echo "system.sh: reports in $out:" $(cd "$out" && ls report.*)
sed -n '1,6p' "$out/report.txt"
grep '^plugin:' "$out/report.txt"
