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

# shellcheck source=board/cross/sdk.sh
. board/cross/sdk.sh
out=${out:-$cache/out}
mkdir -p "$out"
out=$(realpath "$out")

build() { # build ARCH
  local arch=$1 t0=$SECONDS args rc=0 bin_dir
  args=(-c release --static-swift-stdlib --product jukebox --scratch-path "/root/cross-build/$arch"
        -Xlinker --strip-all -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now)
  if [ "$arch" = amd64 ]; then
    # lld as for arm64: GNU ld drops the RELRO segment of this link (lintian: hardening-no-relro).
    args+=(-Xswiftc -use-ld=lld)
    say "$arch: swift build ${args[*]}"
    in_trixie swift build "${args[@]}" || rc=$?
    [ "$rc" -eq 0 ] || die "$arch: the build failed (status $rc, see above)"
    bin_dir=$(in_trixie swift build "${args[@]}" --show-bin-path 2>/dev/null | tail -n 1)
  else
    arm64_swift_build "${args[@]}" || rc=$?
    [ "$rc" -eq 0 ] || die "$arch: the build failed (status $rc, see above)"
    bin_dir=$(arm64_swift_build "${args[@]}" --show-bin-path)
  fi
  mkdir -p "$out/$arch"
  cp "$chroot_dir$bin_dir/jukebox" "$out/$arch/jukebox.new"
  mv "$out/$arch/jukebox.new" "$out/$arch/jukebox"
  say "$arch: $out/$arch/jukebox ($(du -h "$out/$arch/jukebox" | cut -f1)) in $((SECONDS - t0)) s: $(file -b "$out/$arch/jukebox" | cut -d, -f1-2)"
}

ensure_tool file file
t_all=$SECONDS
sync_sources
for a in "${arches[@]}"; do build "$a"; done
say "done in $((SECONDS - t_all)) s (repository: $repo)"
