# shellcheck shell=bash disable=SC2034  # the variables are read by the callers
# SPDX-License-Identifier: MIT
# Sourced by cross-build.sh and test-arm64.sh: the arm64 sysroot and the Swift SDK bundle with which
# the trixie chroot's swiftlang 6.0.3 cross-compiles for aarch64, and the one way to call that
# compiler. Needs the caller's `say` and `die`, and the repository as the working directory.
# Everything lives in CROSS_CACHE (default /var/tmp/jukebox-cross) and the trixie chroot.

# The trixie chroot's compiler and the SDK bundle are x86-64 programs.
[ "$(uname -m)" = x86_64 ] || die "this cross-builds from an x86-64 machine; this one is $(uname -m)"
cache=${CROSS_CACHE:-/var/tmp/jukebox-cross}
case "$cache" in /?*) ;; *) die "CROSS_CACHE must be an absolute path" ;; esac
. board/private-dir.sh
private_dir "$cache" CROSS_CACHE || exit 1
cache=$(realpath "$cache")
mirror=${TRIXIE_MIRROR:-http://deb.debian.org/debian}
security=${TRIXIE_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
sysroot=$cache/arm64-sysroot
# libc, the compiler's C/C++ runtime, the -dev packages, swiftlang (its aarch64 Swift runtime).
sysroot_packages=libc6-dev,libgcc-14-dev,libstdc++-14-dev,libasound2-dev,libsndfile1-dev,libcurl4-openssl-dev,libmpg123-dev,libogg-dev,libvorbis-dev,libopus-dev,libopusfile-dev,libfaad-dev,libflac-dev,libsoundtouch-dev,libebur128-dev,libexpat1-dev,libtag-c-dev,libgpiod-dev,libmosquitto-dev,libmicrohttpd-dev,swiftlang
chroot_dir=/var/tmp/jukebox-trixie   # board/trixie-chroot.sh's default
sdk_bundle=$cache/sdk/jukebox-arm64.artifactbundle

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
# Remade only when board/cross/ changed, so a build that is reading it is not pulled from under.
make_sdk() {
  local v=$sdk_bundle/jukebox-arm64 f
  if [ "$(readlink "$v/sysroot" 2>/dev/null)" = "$sysroot" ] && cmp -s board/cross/info.json "$sdk_bundle/info.json" \
     && cmp -s board/cross/swift-sdk.json "$v/swift-sdk.json" && cmp -s board/cross/toolset.json "$v/toolset.json"; then
    return 0
  fi
  rm -rf "$cache/sdk"
  mkdir -p "$v"
  cp board/cross/info.json "$sdk_bundle/"
  for f in swift-sdk.json toolset.json; do cp "board/cross/$f" "$v/"; done
  ln -s "$sysroot" "$v/sysroot"
  say "Swift SDK bundle: $sdk_bundle"
}

# The sources the chroot builds from: $cache/src, kept by sync_tree (board/sync-tree.sh): a file
# whose bytes did not change keeps its time stamp, so a clean clone (CI) compiles only what changed
# since the last build (the arm64 test build from nothing: 15 minutes).
# shellcheck source=board/sync-tree.sh
. board/sync-tree.sh
# One script at a time builds from it: another's sync would change the files a build is compiling
# (CI beside a developer's package.sh, two worktrees); the lock is held until the script ends
# (its tests read their fixtures from /src too).
src_locked=0
sync_sources() {
  if [ "$src_locked" = 0 ]; then
    exec 5>"$cache/src.lock"
    flock -n 5 || { say "another build holds $cache/src.lock: waiting for it"; flock 5; }
    src_locked=1
  fi
  say "sources for the chroot: $cache/src ($(sync_tree "$PWD" "$cache/src") file(s) changed since the last build)"
}

# Runs in the chroot with $cache/src at /src: call sync_sources first.
in_trixie() { (cd "$cache/src" && bash board/trixie-chroot.sh --bind "$cache" "$@"); }

# arm64_swift_build ARGS...: `swift build ARGS` in the trixie chroot for aarch64 (the sysroot and
# the SDK made first); "Could not read SDKSettings.json", printed once per compile and harmless,
# filtered out. With --show-bin-path among ARGS it prints the bin folder (inside the chroot).
arm64_swift_build() {
  ensure_sysroot
  make_sdk
  local cmd=(env "PKG_CONFIG_SYSROOT_DIR=$sysroot"
             "PKG_CONFIG_PATH=$sysroot/usr/lib/aarch64-linux-gnu/pkgconfig:$sysroot/usr/share/pkgconfig"
             swift build "$@" --swift-sdks-path "$cache/sdk" --swift-sdk jukebox-arm64)
  case " $* " in
    *" --show-bin-path "*) in_trixie "${cmd[@]}" 2>/dev/null | tail -n 1; return "${PIPESTATUS[0]}" ;;
  esac
  say "arm64: ${cmd[*]}"
  in_trixie "${cmd[@]}" > >(grep -v 'Could not read SDKSettings.json' >&2) 2>&1
}
