#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# package.sh - the Debian packages jukebox_<version>_arm64.deb and jukebox_<version>_amd64.deb,
# for Debian 13 and Raspberry Pi OS trixie (64-bit), from any x86-64 Debian machine, as root.
#
#   sudo bash board/package.sh [--arch arm64|amd64|all] [--out DIR] [--version V] [--no-build]
#
#   --out DIR     where the .debs go (default: $CROSS_CACHE/debs, /var/tmp/jukebox-cross/debs)
#   --version V   package version (default: the one `jukebox --version` prints, from
#                 Sources/jukebox/Help.swift); a different V must start with it (0.1.0+rebuild1)
#   --no-build    package the binaries board/cross-build.sh made last instead of building
#
# Builds the release binaries with board/cross-build.sh, then lays out each package the way Debian
# policy wants (/usr/bin, the unit in /usr/lib/systemd/system, the config a conffile in
# /etc/jukebox, profiles in /usr/share/jukebox, udev and polkit rules under /usr), computes
# Depends from the binary's NEEDED libraries and those its shims dlopen (versions as built
# against), and runs lintian.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'package: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

# shellcheck source=board/cross/arches.sh
. board/cross/arches.sh
cache=${CROSS_CACHE:-/var/tmp/jukebox-cross}
. board/private-dir.sh
private_dir "$cache" CROSS_CACHE || exit 1
out=""
version=""
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) [ $# -ge 2 ] || die "--arch needs arm64, amd64 or all"; choose_arches "$2"; shift ;;
    --out) [ $# -ge 2 ] || die "--out needs a folder"; out=$2; shift ;;
    --version) [ $# -ge 2 ] || die "--version needs a version"; version=$2; shift ;;
    --no-build) build=0 ;;
    -h|--help) sed -n '3,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (try --help)" ;;
  esac
  shift
done
[ "$(id -u)" -eq 0 ] || die "run as root (the build uses a chroot)"

# The one place the version lives.
source_version=$(sed -n 's/^let jukeboxVersion = "\([^"]*\)"$/\1/p' Sources/jukebox/Help.swift)
[ -n "$source_version" ] || die "no 'let jukeboxVersion = \"…\"' in Sources/jukebox/Help.swift"
version=${version:-$source_version}
case "$version" in
  "$source_version"|"$source_version"[+~.]*) ;;
  *) die "--version $version does not start with the source version $source_version" ;;
esac

out=${out:-$cache/debs}
mkdir -p "$out"
out=$(realpath "$out")
sysroot=$cache/arm64-sysroot
trixie=/var/tmp/jukebox-trixie

need=()
command -v readelf >/dev/null 2>&1 || need+=(binutils)
command -v lintian >/dev/null 2>&1 || need+=(lintian)
if [ ${#need[@]} -gt 0 ]; then
  say "apt-get install ${need[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
fi

if [ "$build" -eq 1 ]; then
  for a in "${arches[@]}"; do bash board/cross-build.sh --arch "$a"; done
fi

# soname -> Debian 13 package
package_of() {
  case "$1" in
    libc.so.6|libm.so.6|libpthread.so.0|libdl.so.2|librt.so.1|ld-linux-*) echo libc6 ;;
    libasound.so.2) echo libasound2t64 ;;
    libsndfile.so.1) echo libsndfile1 ;;
    libcurl.so.4) echo libcurl4t64 ;;
    libcrypto.so.3) echo libssl3t64 ;;
    libmpg123.so.0) echo libmpg123-0t64 ;;
    libogg.so.0) echo libogg0 ;;
    libvorbis.so.0) echo libvorbis0a ;;
    libopus.so.0) echo libopus0 ;;
    libopusfile.so.0) echo libopusfile0 ;;
    libfaad.so.2) echo libfaad2 ;;
    libFLAC.so.14) echo libflac14 ;;
    libSoundTouch.so.1) echo libsoundtouch1 ;;
    libebur128.so.1) echo libebur128-1 ;;
    libexpat.so.1) echo libexpat1 ;;
    libtag_c.so.2) echo libtag-c2 ;;
    libtag.so.2) echo libtag2 ;;
    libmosquitto.so.1) echo libmosquitto1 ;;
    libmicrohttpd.so.12) echo libmicrohttpd12t64 ;;
    libcrypt.so.1) echo libcrypt1 ;;
    libgpiod.so.3) echo libgpiod3 ;;
    libstdc++.so.6) echo libstdc++6 ;;
    libgcc_s.so.1) echo libgcc-s1 ;;
    libz.so.1) echo zlib1g ;;
    *) return 1 ;;
  esac
}

# The upstream version of PACKAGE in the root the binary was built against (from its changelog:
# the sysroot made with --variant=extract has no dpkg database).
built_version() { # built_version ROOT PACKAGE
  local log=$1/usr/share/doc/$2/changelog.Debian.gz v
  [ -r "$log" ] || die "cannot tell which $2 the build used: no $log"
  v=$(zcat "$log" | sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p')
  printf '%s\n' "${v%-*}"
}

# The libraries the C shims load with dlopen on first use (CLibraryLoader: libcurl for radio,
# libcrypto for AES-128 HLS segments, libmosquitto for MQTT, libmicrohttpd and libcrypt for the web face): not NEEDED, so readelf does
# not see them, but the package promises those features, so they are Depends all the same. Read
# from the shims' sources (each names its SONAME once, as a string), and checked against the binary.
dlopened_of() { # dlopened_of BINARY
  local so
  for so in $(grep -ho '"lib[A-Za-z0-9_+-]*\.so\.[0-9]*"' Sources/C*/*.c | tr -d '"' | sort -u); do
    grep -aqF "$so" "$1" || die "$1 does not name $so, which a shim in Sources loads: a stale build?"
    printf '%s\n' "$so"
  done
}

depends_of() { # depends_of BINARY ROOT
  local bin=$1 root=$2 so pkg glibc deps=() seen=" " dlopened
  dlopened=$(dlopened_of "$bin") || exit 1
  for so in $(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p') $dlopened; do
    pkg=$(package_of "$so") || die "$bin needs $so, which package.sh does not know: add it to package_of"
    case "$seen" in *" $pkg "*) continue ;; esac
    seen="$seen$pkg "
    if [ "$pkg" = libc6 ]; then
      # libc: the newest GLIBC_x.y symbol version the binary uses is the real minimum.
      glibc=$(readelf -V "$bin" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1)
      deps+=("libc6 (>= $glibc)")
    else
      deps+=("$pkg (>= $(built_version "$root" "$pkg"))")
    fi
  done
  printf '%s\n' "${deps[@]}" | sort | paste -sd, - | sed 's/,/, /g'
}

maintainer="jukebox maintainers <maintainers@users.noreply.a-seed-9f67bc50.example>"
when=$(git log -1 --format=%cD 2>/dev/null || date -R)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)

stages=()
# shellcheck disable=SC2317  # runs from the EXIT trap
cleanup() { local d; for d in "${stages[@]}"; do rm -rf "$d"; done; }
trap cleanup EXIT

make_deb() { # make_deb ARCH
  local arch=$1 bin=$cache/out/$1/jukebox root stage deb depends glibc size
  [ -x "$bin" ] || die "no $bin: run board/cross-build.sh --arch $arch (or drop --no-build)"
  case "$arch" in arm64) root=$sysroot ;; amd64) root=$trixie ;; esac
  stage=$(mktemp -d)
  stages+=("$stage")
  chmod 0755 "$stage"

  install -D -m 0755 "$bin" "$stage/usr/bin/jukebox"
  install -d -m 0755 "$stage/usr/lib/systemd/system"
  sed 's|/usr/local/bin/jukebox|/usr/bin/jukebox|g; s|Installed by board/install.sh|Installed by the jukebox package (or board/install.sh)|' \
    systemd/jukebox.service > "$stage/usr/lib/systemd/system/jukebox.service"
  # The web app (docs/WEB.md): port 80 by socket activation, its page under /usr/share/jukebox/web.
  for u in jukebox-web.socket jukebox-web.service; do
    sed 's|/usr/local/bin/jukebox|/usr/bin/jukebox|g; s|/usr/local/share/jukebox|/usr/share/jukebox|g; s|Installed by board/install.sh|Installed by the jukebox package (or board/install.sh)|' \
      "systemd/$u" > "$stage/usr/lib/systemd/system/$u"
  done
  install -d -m 0755 "$stage/usr/share/jukebox/web"
  install -m 0644 Sources/JukeboxWeb/Assets/* "$stage/usr/share/jukebox/web/"
  install -D -m 0644 board/deb/config.json "$stage/etc/jukebox/config.json"
  install -d -m 0755 "$stage/usr/share/jukebox/profiles"
  install -m 0644 board/profiles/*.json "$stage/usr/share/jukebox/profiles/"
  install -m 0755 board/mpd-network.sh "$stage/usr/share/jukebox/mpd-network"
  install -D -m 0644 board/99-jukebox.rules "$stage/usr/lib/udev/rules.d/99-jukebox.rules"
  # USB sticks: the rule starts the unit, the unit runs usb-mount (under /usr/share here).
  install -m 0755 board/usb-mount.sh "$stage/usr/share/jukebox/usb-mount"
  # shairport-sync's session hooks (docs/SOURCES.md): AirPlay takes the device and gives it back.
  install -m 0644 board/shairport-sync.conf "$stage/usr/share/jukebox/shairport-sync.conf"
  # and its unit's drop-in: started after jukebox, restarted with it (the metadata pipe).
  install -m 0644 board/shairport-sync.service.conf "$stage/usr/share/jukebox/shairport-sync.service.conf"
  # bluealsa-aplay's drop-in (docs/SOURCES.md): a phone plays through the card jukebox lets go.
  install -m 0644 board/bluealsa-aplay.conf "$stage/usr/share/jukebox/bluealsa-aplay.conf"
  install -D -m 0644 board/98-jukebox-usb.rules "$stage/usr/lib/udev/rules.d/98-jukebox-usb.rules"
  sed 's|/usr/local/share/jukebox/usb-mount|/usr/share/jukebox/usb-mount|g' \
    'systemd/jukebox-usb@.service' > "$stage/usr/lib/systemd/system/jukebox-usb@.service"
  install -D -m 0644 board/50-jukebox-power.rules "$stage/usr/share/polkit-1/rules.d/50-jukebox-power.rules"
  # snapserver's controlscript for a jukebox pipe stream (docs/REMOTE.md "Several rooms: Snapcast").
  install -d -m 0755 "$stage/usr/lib/jukebox"
  ln -s ../../bin/jukebox "$stage/usr/lib/jukebox/snapcast-control"
  install -d -m 0755 "$stage/usr/share/man/man1" "$stage/usr/share/doc/jukebox"
  gzip -9n < board/deb/jukebox.1 > "$stage/usr/share/man/man1/jukebox.1.gz"
  install -m 0644 board/deb/copyright "$stage/usr/share/doc/jukebox/copyright"
  printf 'jukebox (%s) trixie; urgency=medium\n\n  * Built by board/package.sh from commit %s.\n\n -- %s  %s\n' \
    "$version" "$commit" "$maintainer" "$when" | gzip -9n > "$stage/usr/share/doc/jukebox/changelog.gz"
  chmod 0644 "$stage/usr/share/doc/jukebox/changelog.gz" "$stage/usr/share/man/man1/jukebox.1.gz"

  install -d -m 0755 "$stage/DEBIAN"
  install -m 0755 board/deb/postinst board/deb/prerm board/deb/postrm "$stage/DEBIAN/"
  echo /etc/jukebox/config.json > "$stage/DEBIAN/conffiles"
  (cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) \
    > "$stage/DEBIAN/md5sums"
  depends=$(depends_of "$bin" "$root")
  size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
  cat > "$stage/DEBIAN/control" <<EOF
Package: jukebox
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: adduser, passwd, $depends
Recommends: alsa-utils, polkitd
Suggests: snapserver, snapclient, bluez-alsa-utils
Section: sound
Priority: optional
Description: small headless music player for Raspberry-Pi-class boards
 jukebox plays a queue of local files (WAV, AIFF, FLAC, Ogg Vorbis, Opus, MP3)
 through ALSA as a systemd service, resumes where it stopped after a restart
 or a power cut, and is driven by buttons, a rotary encoder, media keys, a
 small display, a serial console or its control socket.
 .
 The package installs and starts jukebox.service (user jukebox, config
 /etc/jukebox/config.json, music in /srv/music, state in /var/lib/jukebox).
 Built for Debian 13 and Raspberry Pi OS trixie (64-bit); needs glibc 2.38.
EOF
  deb=$out/jukebox_${version}_${arch}.deb
  dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
  glibc=$(readelf -V "$bin" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1)
  say "$deb: $(du -h "$deb" | cut -f1) (binary $(du -h "$bin" | cut -f1), needs GLIBC_$glibc)"
  say "  Depends: adduser, passwd, $depends"
}

for a in "${arches[@]}"; do make_deb "$a"; done

# lintian: errors fail; warnings are printed (there are none today: docs/BUILDING.md "Cross-building and packages").
for a in "${arches[@]}"; do
  deb=$out/jukebox_${version}_${a}.deb
  report=$(lintian --tag-display-limit 0 "$deb" 2>&1 | grep -v 'running with root privileges' || true)
  [ -z "$report" ] || printf '%s\n' "$report" | sed 's/^/  lintian: /' >&2
  if printf '%s\n' "$report" | grep -q '^E: '; then die "lintian reports errors for $deb"; fi
done
for a in "${arches[@]}"; do say "made $out/jukebox_${version}_${a}.deb"; done
