# shellcheck shell=bash
# examples/qemu/qemu-source.sh: sourced by build-qemu.sh and
# bench/qemu/build-contrib.sh, which both unpack a Debian source package
# of QEMU into a cache. Needs root for apt.
#
#   hwq_apt ARG...                   apt-get, waiting up to 10 minutes for
#                                    another install's lock
#   hwq_src_line SUITE... -- HAVE    a deb-src line for the SUITEs
#                                    (/etc/apt/sources.list.d/hwprof-src-SUITE.sources,
#                                    apt-get update) unless apt already
#                                    knows a qemu source whose version
#                                    matches the regex HAVE (another
#                                    suite's deb-src line is not enough)
#   hwq_src_unpack DIR WANT [OPT...] apt-get source WANT (qemu=VERSION or
#                                    qemu/SUITE) into DIR and unpack it
#                                    there with dpkg-source -x OPT...,
#                                    unless DIR already holds a
#                                    qemu-*/configure; prints that tree's
#                                    path

hwq_apt() { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 "$@"; }

hwq_src_line() {
    local suites=() have
    while [ "$1" != -- ]; do suites+=("$1"); shift; done
    have=$2
    # grep reads all of the index (no -q): an early exit would end apt-cache
    # with SIGPIPE, which pipefail turns into "not known".
    if ! apt-cache showsrc qemu 2>/dev/null | grep "^Version: .*$have" >/dev/null; then
        cat > "/etc/apt/sources.list.d/hwprof-src-${suites[0]}.sources" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: ${suites[*]}
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
        hwq_apt update -qq
    fi
}

hwq_src_unpack() {
    local dir=$1 want=$2 orig='' f sum cfg
    shift 2
    # Each step's failure returns by hand: errexit does not reach into the
    # command substitution the callers run this in.
    mkdir -p "$dir" || return 1
    if ! ls "$dir"/qemu-*/configure >/dev/null 2>&1; then
        (cd "$dir" && apt-get source -qq --download-only "$want") >&2 || true
        if ls "$dir"/qemu_*.dsc >/dev/null 2>&1; then
            (cd "$dir" && dpkg-source -x "$@" qemu_*.dsc) >&2 || return 1
        else
            # Some mirrors carry the upstream tarball but not the package's
            # .dsc/.debian.tar.xz; upstream source is enough for what the
            # callers build, checked here against the checksum in apt's
            # source index.
            for f in "$dir"/qemu_*.orig.tar.xz; do [ -f "$f" ] && orig=${f##*/} && break; done
            if [ -z "$orig" ]; then
                echo "qemu-source: the mirror serves neither the source package nor the upstream" \
                     "tarball of $want (apt-get source failed above)" >&2
                return 1
            fi
            # All of the index is read (no early exit): an early exit would
            # end apt-cache with SIGPIPE, which pipefail turns into a failure.
            sum=$(apt-cache showsrc qemu | awk -v f="$orig" '$3 == f && length($1) == 64 && !s {s = $1} END {print s}')
            [ -n "$sum" ] || { echo "qemu-source: no checksum for $orig in apt's index" >&2; return 1; }
            (cd "$dir" && echo "$sum  $orig" | sha256sum -c --quiet && tar -xf "$orig") >&2 || return 1
        fi
    fi
    cfg=$(ls "$dir"/qemu-*/configure 2>/dev/null | sed -n 1p)
    [ -n "$cfg" ] || { echo "qemu-source: no qemu-*/configure in $dir after unpacking" >&2; return 1; }
    dirname "$cfg"
}
