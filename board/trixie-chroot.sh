#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# trixie-chroot.sh - build and test this Swift package inside a Debian 13 (trixie)
# chroot with Debian's own `swiftlang` (Swift 6.0.3), standing in for a
# Raspberry Pi OS trixie board.
#
# What it does (each step prints what it is doing; safe to run again and again):
#   1. installs debootstrap on the host with apt-get if it is missing;
#   2. creates a trixie chroot at DIR with `debootstrap --variant=minbase`, from
#      the same Debian mirror this machine's apt already uses (read at run time
#      from /etc/apt/sources.list and /etc/apt/sources.list.d/*; override with
#      TRIXIE_MIRROR=URL). An existing, finished chroot is reused;
#   3. installs (only what is missing) swiftlang, build-essential, pkg-config,
#      libasound2-dev, libsndfile1-dev, libcurl4-openssl-dev, libmpg123-dev,
#      libogg-dev, libvorbis-dev, libopus-dev, libopusfile-dev, libfaad-dev, libflac-dev, libsoundtouch-dev,
#      libebur128-dev,
#      libexpat1-dev,
#      libtag-c-dev, libgpiod-dev (2.x),
#      alsa-utils, git and ca-certificates into it;
#   4. mounts /proc, /sys and /dev into the chroot and bind-mounts the repository
#      (the folder that holds board/) at /src; a trap unmounts all of it on exit;
#   5. runs COMMAND inside the chroot in /src, and exits with its status.
#
# Usage (as root):
#   bash board/trixie-chroot.sh [--dir DIR] [--] [COMMAND...]
#
#   --dir DIR   where the chroot lives (default /var/tmp/jukebox-trixie)
#   --bind DIR  also bind-mount the host folder DIR at the same path inside (repeatable;
#               board/cross-build.sh uses it for its sysroot and SDK cache)
#   COMMAND     run in /src inside the chroot; default:
#                 swift build --build-tests --scratch-path /root/trixie-build
#
# Examples:
#   bash board/trixie-chroot.sh                       # create/reuse, then build + build tests
#   bash board/trixie-chroot.sh swift test --scratch-path /root/trixie-build
#   bash board/trixie-chroot.sh bash                  # interactive shell in /src
#   bash board/trixie-chroot.sh bash -c 'pkg-config --modversion alsa sndfile'
#
# Build products stay inside the chroot (/root/trixie-build), not in the repo.
# Runs on one chroot are serialised with a lock file (DIR.lock). To start from
# scratch: make sure no run is active, then `rm -rf DIR` (nothing is mounted
# there once the script has exited).
set -euo pipefail

DEFAULT_DIR=/var/tmp/jukebox-trixie
SUITE=trixie
PACKAGES=(
  swiftlang
  build-essential
  pkg-config
  libasound2-dev
  libsndfile1-dev
  libcurl4-openssl-dev
  libmpg123-dev
  libogg-dev
  libvorbis-dev
  libopus-dev
  libopusfile-dev
  libfaad-dev
  libflac-dev
  libsoundtouch-dev
  libebur128-dev
  libexpat1-dev
  libtag-c-dev
  libgpiod-dev
  libmosquitto-dev
  libmicrohttpd-dev
  alsa-utils
  git
  ca-certificates
)

log() { printf '[trixie-chroot] %s\n' "$*" >&2 || true; }
die() { printf '[trixie-chroot] error: %s\n' "$*" >&2; exit 1; }

usage() {
  sed -n '/^# Usage/,/^# Build products/p' "$0" | sed -e 's/^# \{0,1\}//' -e '$d'
}

# ---------------------------------------------------------------- arguments
CHROOT_DIR=$DEFAULT_DIR
BINDS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) [ $# -ge 2 ] || die "--dir needs a value"; CHROOT_DIR=$2; shift 2 ;;
    --dir=*) CHROOT_DIR=${1#--dir=}; shift ;;
    --bind) [ $# -ge 2 ] || die "--bind needs a folder"; BINDS+=("$2"); shift 2 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
if [ $# -eq 0 ]; then
  set -- swift build --build-tests --scratch-path /root/trixie-build
fi
COMMAND=("$@")

[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, chroot and mount need it)"
if [ -z "$CHROOT_DIR" ] || [ "$CHROOT_DIR" = / ]; then
  die "refusing to use '$CHROOT_DIR' as the chroot"
fi
mkdir -p "$(dirname "$CHROOT_DIR")"
# It holds the compiler that builds the packages: a folder someone else made first is refused.
# shellcheck source=board/private-dir.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)/private-dir.sh"
private_dir "$CHROOT_DIR" --dir --check || exit 1
CHROOT_DIR=$(realpath -m "$CHROOT_DIR")

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO_DIR=$(dirname "$SCRIPT_DIR")
MARKER_DIR=$CHROOT_DIR/var/lib/jukebox-trixie-chroot
BASE_MARKER=$MARKER_DIR/debootstrap-done

# ---------------------------------------------------------------- mirror
# Print the URIs of the host's apt sources (one-line and deb822 formats),
# "deb" entries only, in file order.
host_apt_uris() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -r "$f" ] || continue
    sed -n -E 's/^[[:space:]]*deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+).*/\2/p' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    # deb822: stanzas separated by blank lines; take URIs of stanzas whose Types has "deb".
    awk '
      function flush() { if (is_deb && uris != "") print uris; is_deb = 0; uris = "" }
      /^[[:space:]]*$/ { flush(); next }
      /^[[:space:]]*#/ { next }
      tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") is_deb = 1 }
      tolower($1) == "uris:" { for (i = 2; i <= NF; i++) uris = uris (uris == "" ? "" : "\n") $i }
      END { flush() }
    ' "$f"
  done
}

pick_mirrors() {
  local uris
  uris=$(host_apt_uris)
  if [ -n "${TRIXIE_MIRROR:-}" ]; then
    MIRROR=${TRIXIE_MIRROR%/}
  else
    MIRROR=$(printf '%s\n' "$uris" | grep -E '^https?://[^[:space:]]+/debian/?$' | head -n1 || true)
    MIRROR=${MIRROR%/}
    [ -n "$MIRROR" ] || die "no Debian mirror (…/debian) found in the host's apt sources; set TRIXIE_MIRROR=URL"
  fi
  if [ -n "${TRIXIE_SECURITY_MIRROR:-}" ]; then
    SECURITY_MIRROR=${TRIXIE_SECURITY_MIRROR%/}
  else
    SECURITY_MIRROR=$(printf '%s\n' "$uris" | grep -E '^https?://[^[:space:]]+/debian-security/?$' | head -n1 || true)
    SECURITY_MIRROR=${SECURITY_MIRROR%/}
  fi
}

# ---------------------------------------------------------------- mounts
MOUNTED=()   # mount points we made, in mount order

is_mounted() { mountpoint -q "$1" 2>/dev/null; }

do_mount() { # do_mount TARGET MOUNT-ARGS...
  local target=$1; shift
  mkdir -p "$target"
  log "mount $* $target"
  mount "$@" "$target"
  MOUNTED+=("$target")
}

# shellcheck disable=SC2317,SC2329  # unmount_tree and cleanup run from the EXIT trap
unmount_tree() { # unmount TARGET and everything below it
  local target=$1
  is_mounted "$target" || return 0
  log "umount -R $target"
  umount -R "$target" 2>/dev/null || { log "umount -R failed, lazy unmount of $target"; umount -R -l "$target"; }
}

# shellcheck disable=SC2317,SC2329
cleanup() {
  local rc=$? i
  trap '' PIPE INT TERM   # finish unmounting even if our output pipe is gone
  for (( i=${#MOUNTED[@]}-1; i>=0; i-- )); do
    unmount_tree "${MOUNTED[i]}" || true
  done
  MOUNTED=()
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 141' PIPE

# Mounts left behind by a run that was killed (we hold the lock, so nobody else uses them).
unmount_stale() {
  local m
  findmnt -rn -o TARGET | awk -v d="$CHROOT_DIR" 'index($0, d "/") == 1' | sort -r | while read -r m; do
    m=$(printf '%b' "$m")   # findmnt -r escapes spaces as \x20
    log "stale mount from an earlier run: $m"
    umount -R "$m" 2>/dev/null || umount -R -l "$m" || true
  done
}

mount_system() {
  is_mounted "$CHROOT_DIR/proc" || do_mount "$CHROOT_DIR/proc" -t proc proc
  if ! is_mounted "$CHROOT_DIR/sys"; then
    do_mount "$CHROOT_DIR/sys" --rbind /sys
    mount --make-rslave "$CHROOT_DIR/sys"
  fi
  if ! is_mounted "$CHROOT_DIR/dev"; then
    do_mount "$CHROOT_DIR/dev" --rbind /dev
    mount --make-rslave "$CHROOT_DIR/dev"
  fi
}

in_chroot() { # run a command inside the chroot with a clean environment
  chroot "$CHROOT_DIR" /usr/bin/env -i \
    HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    DEBIAN_FRONTEND=noninteractive \
    "$@"
}

# ---------------------------------------------------------------- steps
ensure_debootstrap() {
  if command -v debootstrap >/dev/null 2>&1; then
    return 0
  fi
  log "debootstrap is missing: apt-get install debootstrap on the host"
  DEBIAN_FRONTEND=noninteractive apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap
}

ensure_base() {
  if [ -e "$BASE_MARKER" ]; then
    log "reusing the trixie chroot at $CHROOT_DIR"
    return 0
  fi
  if [ -d "$CHROOT_DIR" ] && [ -n "$(ls -A "$CHROOT_DIR")" ]; then
    # Only wipe what is clearly an unfinished debootstrap of ours, never an arbitrary folder.
    if [ -d "$CHROOT_DIR/debootstrap" ] || [ -d "$MARKER_DIR" ]; then
      log "found an unfinished chroot at $CHROOT_DIR: removing it and starting again"
      unmount_stale
      rm -rf --one-file-system "$CHROOT_DIR"
    else
      die "$CHROOT_DIR exists, is not empty and is not a chroot made by this script; pick another --dir"
    fi
  fi
  ensure_debootstrap
  local keyring=/usr/share/keyrings/debian-archive-keyring.gpg keyopt=()
  [ -r "$keyring" ] && keyopt=(--keyring="$keyring")
  log "debootstrap --variant=minbase $SUITE $CHROOT_DIR $MIRROR (takes a few minutes)"
  local t0=$SECONDS
  debootstrap --variant=minbase --include=ca-certificates "${keyopt[@]}" \
    "$SUITE" "$CHROOT_DIR" "$MIRROR"
  mkdir -p "$MARKER_DIR"
  touch "$BASE_MARKER"
  log "debootstrap finished in $((SECONDS - t0)) s"
}

configure_chroot() {
  # apt sources: rewritten each run so a changed host mirror is picked up.
  local sources=$CHROOT_DIR/etc/apt/sources.list.d/debian.sources new
  new=$(
    printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$MIRROR" "$SUITE" "$SUITE"
    if [ -n "$SECURITY_MIRROR" ]; then
      printf '\nTypes: deb\nURIs: %s\nSuites: %s-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        "$SECURITY_MIRROR" "$SUITE"
    fi
  )
  if [ ! -f "$sources" ] || [ "$(cat "$sources")" != "$new" ]; then
    log "writing $sources"
    printf '%s\n' "$new" >"$sources"
    : >"$CHROOT_DIR/etc/apt/sources.list"
    rm -f "$MARKER_DIR/apt-updated"
  fi
  # DNS for apt inside the chroot.
  if [ -e /etc/resolv.conf ]; then
    rm -f "$CHROOT_DIR/etc/resolv.conf"
    cp -L /etc/resolv.conf "$CHROOT_DIR/etc/resolv.conf"
  fi
  # Never start services from package scripts inside the chroot.
  if [ ! -x "$CHROOT_DIR/usr/sbin/policy-rc.d" ]; then
    log "installing usr/sbin/policy-rc.d (no service starts in the chroot)"
    printf '#!/bin/sh\nexit 101\n' >"$CHROOT_DIR/usr/sbin/policy-rc.d"
    chmod 755 "$CHROOT_DIR/usr/sbin/policy-rc.d"
  fi
}

ensure_packages() {
  local missing=() p status
  for p in "${PACKAGES[@]}"; do
    # shellcheck disable=SC2016  # ${db:Status-Abbrev} is dpkg-query's format, not ours
    status=$(in_chroot dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
    [ "${status:0:2}" = ii ] || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    log "all packages present: ${PACKAGES[*]}"
    return 0
  fi
  log "installing into the chroot: ${missing[*]}"
  local t0=$SECONDS
  in_chroot apt-get update
  in_chroot apt-get install -y --no-install-recommends "${missing[@]}"
  in_chroot apt-get clean
  log "packages installed in $((SECONDS - t0)) s"
}

# ---------------------------------------------------------------- main
LOCK_FILE=$CHROOT_DIR.lock
# Beside the chroot in a shared folder: only a plain file of ours (a link planted there would have
# this open truncate whatever it names).
if [ -L "$LOCK_FILE" ] || { [ -e "$LOCK_FILE" ] && { [ ! -f "$LOCK_FILE" ] || [ "$(stat -c %u "$LOCK_FILE")" != "$(id -u)" ]; }; }; then
  die "$LOCK_FILE is not a plain file of this user: refusing it (--dir picks another chroot)"
fi
exec 9>>"$LOCK_FILE"
if ! flock -n 9; then
  log "another run holds $LOCK_FILE: waiting for it"
  flock 9
fi

pick_mirrors
log "repository: $REPO_DIR -> /src"
log "chroot: $CHROOT_DIR (Debian $SUITE, mirror $MIRROR${SECURITY_MIRROR:+, security $SECURITY_MIRROR})"
T_START=$SECONDS

[ -d "$CHROOT_DIR" ] && unmount_stale
ensure_base
configure_chroot
mount_system
ensure_packages
if [ $((SECONDS - T_START)) -gt 5 ]; then
  log "chroot ready after $((SECONDS - T_START)) s"
fi

do_mount "$CHROOT_DIR/src" --bind "$REPO_DIR"
for b in "${BINDS[@]}"; do
  [ -d "$b" ] || die "--bind $b: not a folder"
  case "$b" in /*) ;; *) die "--bind $b: give an absolute path" ;; esac
  do_mount "$CHROOT_DIR$b" --bind "$b"
done

log "running in $CHROOT_DIR:/src: ${COMMAND[*]}"
set +e
in_chroot /bin/sh -c 'cd /src && exec "$@"' sh "${COMMAND[@]}"
rc=$?
set -e
log "command exited with status $rc"
exit "$rc"
