#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# cross-build.sh - release builds of jukebox for the boards, from any x86-64 Debian machine, with
# Debian 13's own Swift 6.0.3 (the trixie chroot of board/trixie-chroot.sh): the Swift standard
# library linked in (--static-swift-stdlib), stripped; only Debian's C libraries needed at run time.
#
#   sudo bash board/cross-build.sh [--arch arm64|amd64|all] [--out DIR]
#
#   arm64  cross-compiled: an arm64 sysroot made with `mmdebstrap --arch=arm64 --variant=extract`
#          (libc6-dev, the -dev packages jukebox uses and swiftlang for its aarch64 runtime, so the
#          Swift versions match) and a Swift SDK bundle assembled from board/cross/ (target
#          aarch64-unknown-linux-gnu, linked with lld).
#   amd64  built natively in the trixie chroot.
#
# Writes DIR/ARCH/jukebox (default DIR: $CROSS_CACHE/out). Everything it makes lives in
# CROSS_CACHE (default /var/tmp/jukebox-cross: the sysroot, ~2.6 GB, and the SDK bundle) and in
# the trixie chroot (/var/tmp/jukebox-trixie: the compiler, and the build folders under
# /root/cross-build), never in the checkout. Safe to run again: finished steps are reused.
# Needs root (mmdebstrap, chroot); installs mmdebstrap with apt-get when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

say() { printf 'cross-build: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

# shellcheck source=board/cross/arches.sh
. board/cross/arches.sh
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) [ $# -ge 2 ] || die "--arch needs arm64, amd64 or all"; choose_arches "$2"; shift ;;
    --out) [ $# -ge 2 ] || die "--out needs a folder"; out=$2; shift ;;
    -h|--help) sed -n '3,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (try --help)" ;;
  esac
  shift
done

[ "$(id -u)" -eq 0 ] || die "run as root (mmdebstrap and chroot need it)"
[ "$(uname -m)" = x86_64 ] || die "this builds from an x86-64 machine; this one is $(uname -m)"

cache=${CROSS_CACHE:-/var/tmp/jukebox-cross}
case "$cache" in /?*) ;; *) die "CROSS_CACHE must be an absolute path" ;; esac
out=${out:-$cache/out}
mkdir -p "$cache" "$out"
cache=$(realpath "$cache")
out=$(realpath "$out")
mirror=${TRIXIE_MIRROR:-http://deb.debian.org/debian}
security=${TRIXIE_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
sysroot=$cache/arm64-sysroot
# libc, the compiler's C/C++ runtime, the -dev packages, swiftlang (its aarch64 Swift runtime).
sysroot_packages=libc6-dev,libgcc-14-dev,libstdc++-14-dev,libasound2-dev,libsndfile1-dev,libtag-c-dev,libgpiod-dev,swiftlang
chroot_dir=/var/tmp/jukebox-trixie   # board/trixie-chroot.sh's default

ensure_tool() { # ensure_tool COMMAND PACKAGE
  command -v "$1" >/dev/null 2>&1 && return 0
  say "apt-get install $2"
  DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$2" >/dev/null
}
ensure_mmdebstrap() { ensure_tool mmdebstrap mmdebstrap; }

# The arm64 sysroot: made once into a .part folder, renamed when complete.
ensure_sysroot() {
  if [ "$(cat "$sysroot/.jukebox-sysroot-done" 2>/dev/null)" = "$sysroot_packages" ]; then
    say "reusing the arm64 sysroot $sysroot"
    return 0
  fi
  ensure_mmdebstrap
  rm -rf --one-file-system "$sysroot.part"
  say "mmdebstrap --arch=arm64 --variant=extract trixie $sysroot (~2.6 GB, a few minutes)"
  local t0=$SECONDS
  mmdebstrap --arch=arm64 --variant=extract --include="$sysroot_packages" \
    trixie "$sysroot.part" \
    "deb $mirror trixie main" "deb $mirror trixie-updates main" "deb $security trixie-security main" \
    || die "mmdebstrap of the arm64 sysroot failed (see above)"
  [ -e "$sysroot.part/usr/libexec/swift/lib/swift_static/linux/static-stdlib-args.lnk" ] \
    || die "the sysroot has no static Swift runtime (usr/libexec/swift/lib/swift_static)"
  # Extract mode runs no maintainer scripts: make the merged-/usr links (ld-linux-aarch64.so.1 is
  # looked up in /lib by the binary and by libc.so's linker script).
  local d
  for d in bin sbin lib; do
    [ -e "$sysroot.part/$d" ] || ln -s "usr/$d" "$sysroot.part/$d"
  done
  rm -rf --one-file-system "$sysroot"
  mv "$sysroot.part" "$sysroot"
  printf '%s\n' "$sysroot_packages" > "$sysroot/.jukebox-sysroot-done"
  say "arm64 sysroot ready in $((SECONDS - t0)) s ($(du -sh "$sysroot" | cut -f1))"
}

# The Swift SDK bundle: board/cross/ plus a link to the sysroot (its paths are relative to it).
make_sdk() {
  local bundle=$cache/sdk/jukebox-arm64.artifactbundle
  rm -rf "$cache/sdk"
  mkdir -p "$bundle/jukebox-arm64"
  cp board/cross/info.json "$bundle/"
  cp board/cross/swift-sdk.json board/cross/toolset.json "$bundle/jukebox-arm64/"
  ln -s "$sysroot" "$bundle/jukebox-arm64/sysroot"
  say "Swift SDK bundle: $bundle"
}

in_trixie() { bash board/trixie-chroot.sh --bind "$cache" "$@"; }

build() { # build ARCH
  local arch=$1 t0=$SECONDS scratch=/root/cross-build/$1 cmd
  cmd=(swift build -c release --static-swift-stdlib --product jukebox --scratch-path "$scratch"
       -Xlinker --strip-all -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now)
  if [ "$arch" = amd64 ]; then
    # lld as for arm64: GNU ld drops the RELRO segment of this link (lintian: hardening-no-relro).
    cmd+=(-Xswiftc -use-ld=lld)
  else
    ensure_sysroot
    make_sdk
    cmd=(env "PKG_CONFIG_SYSROOT_DIR=$sysroot"
         "PKG_CONFIG_PATH=$sysroot/usr/lib/aarch64-linux-gnu/pkgconfig:$sysroot/usr/share/pkgconfig"
         "${cmd[@]}" --swift-sdks-path "$cache/sdk" --swift-sdk jukebox-arm64)
  fi
  say "$arch: ${cmd[*]}"
  # "Could not read SDKSettings.json" is printed once per compile and is harmless: filtered.
  local rc=0
  in_trixie "${cmd[@]}" > >(grep -v 'Could not read SDKSettings.json' >&2) 2>&1 || rc=$?
  [ "$rc" -eq 0 ] || die "$arch: the build failed (status $rc, see above)"
  local bin_dir
  bin_dir=$(in_trixie "${cmd[@]}" --show-bin-path 2>/dev/null | tail -n 1)
  mkdir -p "$out/$arch"
  cp "$chroot_dir$bin_dir/jukebox" "$out/$arch/jukebox.new"
  mv "$out/$arch/jukebox.new" "$out/$arch/jukebox"
  say "$arch: $out/$arch/jukebox ($(du -h "$out/$arch/jukebox" | cut -f1)) in $((SECONDS - t0)) s: $(file -b "$out/$arch/jukebox" | cut -d, -f1-2)"
}

ensure_tool file file
t_all=$SECONDS
for a in "${arches[@]}"; do build "$a"; done
say "done in $((SECONDS - t_all)) s (repository: $repo)"
