#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test-deb-chroot.sh - the amd64 .deb's life cycle in a fresh Debian 13 root (mmdebstrap, no
# systemd running: like an image build), with apt, as a user would:
#   1. `apt-get install ./jukebox_V_amd64.deb`: binary runs, user jukebox in audio gpio i2c spi input
#      dialout, /var/lib/jukebox 0750 jukebox, the service enabled (deb-systemd-helper), conffile;
#   2. upgrade to V+citest1 (package.sh --no-build): the changed config and the state file kept;
#   3. `apt-get remove`: binary and unit gone, the service masked (cannot start), state kept;
#   4. `apt-get purge`: config, state, user and group jukebox and the enablement all gone.
#
#   sudo bash board/test-deb-chroot.sh [DEB]   (default: the newest $CROSS_CACHE/debs/jukebox_*_amd64.deb)
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'test-deb-chroot: %s\n' "$*" >&2; }
fail() { say "FAIL: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "run as root (mmdebstrap, chroot)"
cache=${CROSS_CACHE:-/var/tmp/jukebox-cross}
. board/private-dir.sh
private_dir "$cache" CROSS_CACHE || exit 1
deb=${1:-$(find "$cache/debs" -maxdepth 1 -name 'jukebox_*_amd64.deb' -printf '%T@ %p\n' 2>/dev/null | sort -n | tail -n 1 | cut -d' ' -f2-)}
[ -f "${deb:-}" ] || fail "no amd64 .deb: run board/package.sh --arch amd64"
version=$(dpkg-deb -f "$deb" Version)
mirror=${TRIXIE_MIRROR:-http://deb.debian.org/debian}
command -v mmdebstrap >/dev/null 2>&1 || fail "mmdebstrap is missing (board/cross-build.sh installs it)"

work=$(mktemp -d /var/tmp/jukebox-debtest.XXXXXX)
root=$work/root
# shellcheck disable=SC2317  # runs from the EXIT trap
cleanup() {
  mountpoint -q "$root/proc" && umount "$root/proc"
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT
t0=$SECONDS

mmdebstrap --quiet --variant=apt trixie "$root" "deb $mirror trixie main" \
  || fail "mmdebstrap of a trixie root failed"
mount -t proc proc "$root/proc"
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 "$@"; }
apt_in_root() { in_root apt-get -q -y --no-install-recommends "$@" > "$work/apt.log" 2>&1 || fail "apt-get $*: $(tail -n 20 "$work/apt.log")"; }
in_root apt-get -q update > "$work/apt.log" 2>&1 || fail "apt-get update: $(tail -n 5 "$work/apt.log")"

# 1. install
cp "$deb" "$root/tmp/"
apt_in_root install "/tmp/$(basename "$deb")"
[ "$(in_root jukebox --version)" = "jukebox ${version%%[+~]*}" ] || fail "jukebox --version: $(in_root jukebox --version 2>&1)"
groups=$(in_root id -nG jukebox) || fail "no user jukebox"
for g in audio gpio i2c spi input dialout; do
  case " $groups " in *" $g "*) ;; *) fail "user jukebox is not in group $g ($groups)" ;; esac
done
owner=$(in_root stat -c '%U %a' /var/lib/jukebox) || fail "no /var/lib/jukebox"
[ "$owner" = "jukebox 750" ] || fail "/var/lib/jukebox: owner and mode $owner"
[ -L "$root/etc/systemd/system/multi-user.target.wants/jukebox.service" ] || fail "the service is not enabled"
grep -qx /etc/jukebox/config.json "$root/var/lib/dpkg/info/jukebox.conffiles" || fail "config.json is not a conffile"
say "installed $(basename "$deb"): user jukebox ($groups), service enabled, conffile /etc/jukebox/config.json"

# 2. upgrade: changed config and state kept
echo '{"music": ["/srv/mine"]}' > "$root/etc/jukebox/config.json"
echo '{"kept": true}' > "$root/var/lib/jukebox/state.json"
bash board/package.sh --no-build --arch amd64 --version "$version+citest1" --out "$work" 2>"$work/package.log" \
  || fail "package.sh --version $version+citest1: $(cat "$work/package.log")"
cp "$work/jukebox_${version}+citest1_amd64.deb" "$root/tmp/"
apt_in_root install "/tmp/jukebox_${version}+citest1_amd64.deb"
[ "$(in_root dpkg-query -W -f="\${Version}" jukebox)" = "$version+citest1" ] || fail "upgrade: version not $version+citest1"
grep -q /srv/mine "$root/etc/jukebox/config.json" || fail "upgrade replaced the changed config"
grep -q kept "$root/var/lib/jukebox/state.json" || fail "upgrade lost the state file"
say "upgraded to $version+citest1: changed config and state kept"

# 3. remove
apt_in_root remove jukebox
if [ -e "$root/usr/bin/jukebox" ] || [ -e "$root/usr/lib/systemd/system/jukebox.service" ]; then
  fail "remove left the binary or unit"
fi
[ "$(readlink "$root/etc/systemd/system/jukebox.service")" = /dev/null ] || fail "remove did not mask (disable) the service"
[ -f "$root/var/lib/jukebox/state.json" ] || fail "remove deleted the state"
say "removed: binary and unit gone, service masked, config and state kept"

# 4. purge
apt_in_root purge jukebox
for f in /etc/jukebox /var/lib/jukebox /etc/systemd/system/jukebox.service \
  /etc/systemd/system/multi-user.target.wants/jukebox.service; do
  if [ -e "$root$f" ] || [ -L "$root$f" ]; then fail "purge left $f"; fi
done
! in_root getent passwd jukebox >/dev/null || fail "purge left the user jukebox"
! in_root getent group jukebox >/dev/null || fail "purge left the group jukebox"
say "purged: config, state, user, group and enablement gone"
say "all passed in $((SECONDS - t0)) s"
