#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# setup.sh - install what jukebox needs to build, test and run, on Debian 12 (bookworm),
# Debian 13 (trixie) and Raspberry Pi OS of the same releases.
#
# Installs only what is missing (safe to run again), as root or through sudo:
#   - pkg-config and the C libraries' -dev packages: libasound2-dev (ALSA), libsndfile1-dev,
#     libcurl4-openssl-dev and libmpg123-dev (internet radio: HTTP(S) and MP3 streams),
#     libogg-dev, libvorbis-dev and libopus-dev (Ogg Vorbis and Opus streams), libopusfile-dev
#     (Opus files; the same name on Debian 12 and 13),
#     libfaad-dev (AAC and HE-AAC radio streams), libflac-dev (native FLAC radio streams),
#     libsoundtouch-dev (playback speed with the pitch kept), libebur128-dev (measuring untagged
#     files' loudness, EBU R128), libexpat1-dev (podcast feeds: RSS, Atom),
#     TagLib's C binding (libtagc0-dev on Debian 12, libtag-c-dev on Debian 13), libgpiod-dev;
#   - alsa-utils (aplay, arecord: handy to check a sound card);
#   - mpc and python3-mpd (python-mpd2): the MPD clients the tests drive jukebox's MPD listener
#     with (Debian 12 and 13 both ship them); mpd itself, the reference MPDConformanceTests compare
#     jukebox with (started by the test on 127.0.0.1 with a private config: the package's own
#     mpd.service and mpd.socket, which listen on every address, are kept from starting);
#   - snapclient, which SnapcastTests run against jukebox's Snapcast output (with snapserver, on
#     127.0.0.1, playing into an ALSA file PCM; its own service is kept from starting too);
#   - snapserver (for its MPD stream plugin meta_mpd.py, which SnapcastMetaMPDTests run against
#     jukebox; its own service is kept from starting too) and the plugin's modules python3-gi,
#     python3-dbus, python3-musicbrainzngs;
#   - libmosquitto-dev (the MQTT face, JukeboxMQTT) and, for MQTTBridgeTests, the broker mosquitto
#     (started by the test on 127.0.0.1 with a private config; its own mosquitto.service is kept
#     from starting too) and mosquitto-clients (mosquitto_sub, mosquitto_pub), and openssl (the TLS test makes its CA,
#     the AES-128 HLS test encrypts segments);
#   - ffmpeg, which makes the HLS stations (segments and playlists) and transport streams the HLS
#     tests serve and demux (HLSStreamTests, TSDemuxerTests); the player never uses it;
#   - flac, for metaflac, which writes the ReplayGain comments the loudness tests read back
#     (FileLoudnessTests, LoudnessWiringTests, LoudnessBinaryTests); the player never uses it;
#   - icecast2, the real Icecast server IcecastTests play a mount of (started by the test as its own
#     user on 127.0.0.1 and a free port, config in a mkdtemp folder; its SysV service is kept from
#     starting too; its postinst works without systemd);
#   - libmicrohttpd-dev (the web face, JukeboxWeb: `jukebox web`; its PIN hash uses libcrypt, which comes
#     with libc6-dev) and, for the web app's browser test, Debian's chromium, chromium-driver and
#     python3-selenium (headless, on 127.0.0.1, started by the test), and python3-pip to fetch
#     axe-core for its accessibility check (below);
#   - shairport-sync, the AirPlay receiver whose session hooks OtherSourceScenarioTests check
#     and AirPlayTests stream to (its own shairport-sync.service is kept from starting too), with
#     avahi-daemon, which shairport-sync 3.3.8 needs to start at all (AirPlayTests runs a private
#     one on loopback beside a private dbus-daemon; Debian's avahi-daemon.service is kept from
#     starting too), and python3-venv for the venv of pyatv, the test's AirPlay sender (below);
#     the player never uses any of them;
#   - systemd when `systemd-analyze` is missing (board/test.sh checks the unit with it), and
#     the linter ShellCheck, with which board/check-unit.sh checks the board's scripts (warnings, errors);
#   - rauc and squashfs-tools, with which board/bundle-test.sh makes and checks an update bundle
#     (the appliance image's A/B updates, docs/IMAGE.md; a box that is not the image never uses them);
#   - Swift: on Debian 13 `swiftlang` from apt when no `swift` is on PATH. Debian 12 has no
#     Swift package: install a Swift 6 toolchain from swift.org first (see README.md).
set -euo pipefail

say() { printf 'setup: %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    say "need root for: $*  (run as root, or install sudo)" >&2
    exit 1
  fi
}

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

if ! command -v apt-get >/dev/null 2>&1; then
  say "this script knows Debian's apt only; install the equivalents of: pkg-config, ALSA, libsndfile, libcurl, libmpg123, libogg, libvorbis, libopus, libopusfile, libfaad2, libFLAC, libSoundTouch, libexpat, TagLib C, libgpiod, libmosquitto development files" >&2
  exit 1
fi

codename=unknown
if [ -r /etc/os-release ]; then
  # shellcheck disable=SC1091
  . /etc/os-release
  codename=${VERSION_CODENAME:-unknown}
fi

wanted=(pkg-config libc6-dev libasound2-dev libsndfile1-dev libcurl4-openssl-dev libmpg123-dev libogg-dev libvorbis-dev libopus-dev libopusfile-dev libfaad-dev libflac-dev libsoundtouch-dev libebur128-dev libexpat1-dev libgpiod-dev
  alsa-utils mpc python3-mpd mpd snapserver snapclient python3-gi python3-dbus python3-musicbrainzngs libmosquitto-dev
  mosquitto mosquitto-clients openssl icecast2 ffmpeg flac
  libmicrohttpd-dev chromium chromium-driver python3-selenium python3-pip shairport-sync avahi-daemon python3-venv shellcheck rauc squashfs-tools)
command -v systemd-analyze >/dev/null 2>&1 || wanted+=(systemd)

# TagLib's C binding changed its package name between Debian 12 and 13.
if installed libtagc0-dev || installed libtag-c-dev; then
  :
elif [ "$codename" = bookworm ] || [ "$codename" = bullseye ]; then
  wanted+=(libtagc0-dev)
else
  wanted+=(libtag-c-dev)
fi

need_swift=0
if ! command -v swift >/dev/null 2>&1; then
  need_swift=1
fi

missing=()
for p in "${wanted[@]}"; do
  installed "$p" || missing+=("$p")
done

updated=0
apt_update() {
  if [ "$updated" -eq 0 ]; then
    say "apt-get update"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
    updated=1
  fi
}

if [ "${#missing[@]}" -gt 0 ]; then
  apt_update
  # On a release newer than we know, fall back to the other TagLib name if ours is absent.
  for i in "${!missing[@]}"; do
    if [ "${missing[$i]}" = libtag-c-dev ] && ! apt-cache show libtag-c-dev >/dev/null 2>&1; then
      missing[i]=libtagc0-dev
    fi
  done
  say "installing: ${missing[*]}"
  # Debian's mpd enables and starts mpd.service and mpd.socket (port 6600 on all addresses) on
  # install, snapserver its snapserver.service, mosquitto its mosquitto.service (port 1883), icecast2 its
  # SysV icecast2 service (port 8000) when debconf's icecast2/icecast-setup is true, snapclient its
  # snapclient.service (which would play whatever a snapserver sends), shairport-sync its
  # shairport-sync.service (an AirPlay receiver on port 5000), avahi-daemon its avahi-daemon.service
  # (mDNS on every interface; with its socket unit): a temporary policy-rc.d (honoured by
  # deb-systemd-invoke) forbids the starts, unless one exists already, and the units are
  # disabled afterwards.
  daemons=()
  for d in mpd snapserver mosquitto snapclient icecast2 shairport-sync avahi-daemon; do
    if [[ " ${missing[*]} " == *" $d "* ]]; then daemons+=("$d"); fi
  done
  guard=0
  if [ "${#daemons[@]}" -gt 0 ] && [ ! -e /usr/sbin/policy-rc.d ]; then
    as_root sh -c 'printf "#!/bin/sh\nexit 101\n" > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d'
    guard=1
  fi
  status=0
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null || status=$?
  if [ "$guard" -eq 1 ]; then as_root rm -f /usr/sbin/policy-rc.d; fi
  [ "$status" -eq 0 ] || exit "$status"
  if [ "${#daemons[@]}" -gt 0 ] && command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    for d in "${daemons[@]}"; do
      case $d in
        mpd) as_root systemctl disable --now mpd.socket mpd.service >/dev/null 2>&1 || true ;;
        avahi-daemon) as_root systemctl disable --now avahi-daemon.socket avahi-daemon.service >/dev/null 2>&1 || true ;;
        *) as_root systemctl disable --now "$d.service" >/dev/null 2>&1 || true ;;
      esac
    done
  fi
else
  say "C libraries and tools already installed"
fi

if [ "$need_swift" -eq 1 ]; then
  apt_update
  if apt-cache show swiftlang >/dev/null 2>&1; then
    say "installing swiftlang (Swift from Debian)"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q swiftlang >/dev/null
  else
    say "no 'swift' on PATH and this release ($codename) has no swiftlang package:" >&2
    say "install a Swift 6 toolchain from swift.org and put its usr/bin on PATH, then run this again" >&2
    exit 1
  fi
fi

# axe-core for the browser test's accessibility check (WebBrowserTests): the PyPI wheel
# axe-core-python 0.1.0 (MIT; it bundles axe-core 4.4.3's axe.min.js, MPL-2.0), pinned by its
# sha256, unpacked into a cache outside the repository. Nothing is installed by pip.
axe_dir="${JUKEBOX_AXE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/jukebox/axe-core-4.4.3}"
axe_wheel=axe_core_python-0.1.0-py3-none-any.whl
axe_sha=f99f6bd674726c631c5e20b876983b44dff2b8f452a0ccf08f3c23ee45d0aac3
if [ ! -s "$axe_dir/axe.min.js" ]; then
  say "fetching axe-core (axe-core-python 0.1.0 from PyPI) into $axe_dir"
  axe_tmp=$(mktemp -d)
  if python3 -m pip download -q --no-deps --only-binary=:all: --dest "$axe_tmp" axe-core-python==0.1.0 \
      && echo "$axe_sha  $axe_tmp/$axe_wheel" | sha256sum -c --quiet -; then
    mkdir -p "$axe_dir"
    python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); open(sys.argv[2] + "/axe.min.js.tmp", "wb").write(z.read("axe_core_python/axe.min.js")); open(sys.argv[2] + "/LICENSE-wrapper.txt", "wb").write(z.read("axe_core_python-0.1.0.dist-info/LICENSE"))' "$axe_tmp/$axe_wheel" "$axe_dir"
    mv "$axe_dir/axe.min.js.tmp" "$axe_dir/axe.min.js"
  else
    say "could not fetch axe-core (pip, PyPI or the checksum): the browser test's accessibility check will be missing" >&2
  fi
  rm -rf "$axe_tmp"
fi

# pyatv, the simulated AirPlay sender of AirPlayTests: a venv of Debian's python3 in a cache outside
# the repository, every package pinned by version and sha256 (board/pyatv-requirements.txt),
# wheels only. Nothing is installed into the system's Python. Unreachable PyPI (or a machine with
# no wheel, aarch64): a warning, and the test skips saying why (fails under JUKEBOX_REQUIRE_PEERS=1).
pyatv_dir="${JUKEBOX_PYATV_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/jukebox/pyatv-0.18.0}"
pyatv_req="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/pyatv-requirements.txt"
pyatv_sum=$(sha256sum "$pyatv_req" | cut -d ' ' -f 1)
if [ "$(cat "$pyatv_dir/.requirements.sha256" 2>/dev/null)" != "$pyatv_sum" ]; then
  say "installing pyatv 0.18.0 (PyPI, pinned) into a venv in $pyatv_dir"
  rm -rf "$pyatv_dir"
  if /usr/bin/python3 -m venv "$pyatv_dir" \
      && "$pyatv_dir/bin/python" -m pip install -q --disable-pip-version-check --require-hashes --only-binary=:all: --no-deps -r "$pyatv_req" \
      && "$pyatv_dir/bin/python" -c 'import pyatv.protocols.raop'; then
    echo "$pyatv_sum" > "$pyatv_dir/.requirements.sha256"
  else
    say "could not install pyatv (venv, pip, PyPI, a wheel or a checksum): AirPlayTests will have no sender" >&2
    rm -rf "$pyatv_dir"
  fi
fi

say "ready: $(swift --version 2>/dev/null | head -n 1)"
