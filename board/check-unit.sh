#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check-unit.sh - fails when systemd/jukebox.service or board/install.sh regress. Needs no running
# systemd and no root (board/test.sh runs it):
#   1. `systemd-analyze verify` of the unit, warnings included, in a throwaway root that holds the
#      unit's executables as stubs and the host's own units (so sysinit.target and the rest resolve):
#      the unit is checked exactly as written, not a copy with another ExecStart;
#   2. `systemd-analyze security --offline=true`: exposure at most 2.5 (score printed), for the unit
#      as installed and with the network drop-in board/mpd-network.sh writes for an MPD TCP
#      listener (on loopback, and on the LAN), each verified too; the drop-in and the avahi file
#      removed again when the config has no TCP listener;
#   3. board/install.sh and its --uninstall into a staging root (--root, --binary: no build, no
#      users, no systemctl), and shellcheck of board/*.sh when shellcheck is installed.
set -euo pipefail
cd "$(dirname "$0")/.."

unit=systemd/jukebox.service
max=2.5
fail() { printf 'check-unit: FAIL: %s\n' "$*" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. verify
vroot=$tmp/verify
mkdir -p "$vroot/etc/systemd/system" "$vroot/usr/lib/systemd"
cp -a /usr/lib/systemd/system "$vroot/usr/lib/systemd/"
sed -n 's/^Exec[A-Za-z]*=[-@:+!]*\([^ ]*\).*/\1/p' "$unit" | sort -u | while read -r exe; do
  mkdir -p "$vroot$(dirname "$exe")"
  printf '#!/bin/sh\n' > "$vroot$exe"
  chmod 755 "$vroot$exe"
done
cp "$unit" "$vroot/etc/systemd/system/"
# Exit status 0 still allows warnings (an unknown key is only "ignoring"): any output fails.
out=$(systemd-analyze verify --man=no --root="$vroot" jukebox.service 2>&1) || fail "systemd-analyze verify: $out"
[ -z "$out" ] || fail "systemd-analyze verify: $out"
echo "check-unit: systemd-analyze verify $unit: clean"

# 1b. The USB stick template (systemd/jukebox-usb@.service), as an instance, with its script stubbed.
usb_unit='systemd/jukebox-usb@.service'
sed -n 's/^Exec[A-Za-z]*=[-@:+!]*\([^ ]*\).*/\1/p' "$usb_unit" | sort -u | while read -r exe; do
  mkdir -p "$vroot$(dirname "$exe")"
  printf '#!/bin/sh\n' > "$vroot$exe"
  chmod 755 "$vroot$exe"
done
cp "$usb_unit" "$vroot/etc/systemd/system/"
out=$(systemd-analyze verify --man=no --root="$vroot" jukebox-usb@sdz1.service 2>&1) || fail "systemd-analyze verify $usb_unit: $out"
[ -z "$out" ] || fail "systemd-analyze verify $usb_unit: $out"
# The stick's label becomes one safe folder name under the root, or the UUID, or the device.
for t in "My Stick|x|My Stick" "../../etc|x|etc" "..|12-AB|12-AB" ".||sdz1"; do
  IFS='|' read -r label uuid want <<<"$t"
  got=$(ID_FS_LABEL=$label ID_FS_UUID=$uuid JUKEBOX_USB_DRYRUN=1 JUKEBOX_USB_ROOT=/nonexistent sh board/usb-mount.sh sdz1)
  [ "$got" = "systemd-mount --no-block --automount=yes --bind-device --collect --fsck=no --options=ro,nosuid,nodev,noexec /dev/sdz1 /nonexistent/$want" ] \
    || fail "usb-mount.sh for label '$label': $got"
done
echo "check-unit: systemd-analyze verify $usb_unit: clean; usb-mount.sh names: right"

# 1c. The web app's socket and service (systemd/jukebox-web.socket, .service), and their exposure.
for web_unit in systemd/jukebox-web.socket systemd/jukebox-web.service; do
  sed -n 's/^Exec[A-Za-z]*=[-@:+!]*\([^ ]*\).*/\1/p' "$web_unit" | sort -u | while read -r exe; do
    mkdir -p "$vroot$(dirname "$exe")"
    printf '#!/bin/sh\n' > "$vroot$exe"
    chmod 755 "$vroot$exe"
  done
  cp "$web_unit" "$vroot/etc/systemd/system/"
done
out=$(systemd-analyze verify --man=no --root="$vroot" jukebox-web.socket jukebox-web.service 2>&1) || fail "systemd-analyze verify the web units: $out"
[ -z "$out" ] || fail "systemd-analyze verify the web units: $out"
grep -qx 'ListenStream=80' systemd/jukebox-web.socket && grep -qx 'IPAddressDeny=any' systemd/jukebox-web.socket \
  || fail "jukebox-web.socket must listen on port 80 for local networks only"
grep -qx 'PrivateNetwork=yes' systemd/jukebox-web.service && grep -qx 'CapabilityBoundingSet=' systemd/jukebox-web.service \
  || fail "jukebox-web.service must have no network of its own and no capability"
# Uploads: the web face writes the default music folder and nothing else of the system.
[ "$(grep '^ReadWritePaths=' systemd/jukebox-web.service | sort | tr '\n' ' ')" = 'ReadWritePaths=-/etc/jukebox ReadWritePaths=-/srv/music ' ] && grep -qx 'ProtectSystem=strict' systemd/jukebox-web.service \
  || fail "jukebox-web.service may write only /srv/music (uploads) and /etc/jukebox (settings) besides its state, under ProtectSystem=strict"
web_report=$(systemd-analyze security --offline=true --root="$vroot" jukebox-web.service 2>&1) || true
web_score=$(printf '%s\n' "$web_report" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
[ -n "$web_score" ] || fail "no score from systemd-analyze security for jukebox-web.service: $web_report"
awk -v s="$web_score" -v m="$max" 'BEGIN { exit !(s <= m) }' || fail "jukebox-web.service exposure $web_score is over $max"
echo "check-unit: systemd-analyze verify the web units: clean; jukebox-web.service exposure $web_score (at most $max)"

# 1c. shairport-sync's drop-in (board/shairport-sync.service.conf, docs/SOURCES.md) on a stand-in
# for Debian 13's shairport-sync.service (4.3.7-1's unit, avahi left out, its binary a stub): it
# verifies clean, and orders shairport-sync after jukebox and restarts it with jukebox (board/hil
# airplay found both needed: the metadata pipe).
printf '%s\n' '[Unit]' 'Description=Shairport Sync - AirPlay Audio Receiver' 'After=sound.target' \
  '[Service]' 'Type=simple' 'Restart=on-failure' 'ExecStart=/usr/bin/shairport-sync' 'User=shairport-sync' \
  '[Install]' 'WantedBy=multi-user.target' > "$vroot/etc/systemd/system/shairport-sync.service"
install -D -m 0644 board/shairport-sync.service.conf "$vroot/etc/systemd/system/shairport-sync.service.d/jukebox.conf"
mkdir -p "$vroot/usr/bin" && printf '#!/bin/sh\n' > "$vroot/usr/bin/shairport-sync" && chmod 755 "$vroot/usr/bin/shairport-sync"
out=$(systemd-analyze verify --man=no --root="$vroot" shairport-sync.service 2>&1) || fail "systemd-analyze verify shairport-sync.service with the drop-in: $out"
[ -z "$out" ] || fail "systemd-analyze verify shairport-sync.service with the drop-in: $out"
for line in After=jukebox.service PartOf=jukebox.service After=dbus.service; do
  grep -qx "$line" board/shairport-sync.service.conf || fail "board/shairport-sync.service.conf lacks $line"
done
rm -r "$vroot/etc/systemd/system/shairport-sync.service" "$vroot/etc/systemd/system/shairport-sync.service.d"
echo "check-unit: systemd-analyze verify shairport-sync.service with board/shairport-sync.service.conf: clean"

# 2. security
report=$(systemd-analyze security --offline=true "$unit" 2>&1) || true
score=$(printf '%s\n' "$report" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
[ -n "$score" ] || fail "no score from systemd-analyze security: $report"
echo "check-unit: systemd-analyze security $unit: exposure $score (at most $max)"
awk -v s="$score" -v m="$max" 'BEGIN { exit !(s <= m) }' \
  || fail "exposure $score is over $max: $(printf '%s\n' "$report" | grep '✗')"

# 2b. The MPD network drop-in (board/mpd-network.sh), written from a stub `jukebox mpd-tcp`.
mkdir -p "$vroot/etc/jukebox" "$vroot/etc/avahi/services"
echo '{}' > "$vroot/etc/jukebox/config.json"
dropin=$vroot/etc/systemd/system/jukebox.service.d/mpd-network.conf
avahi=$vroot/etc/avahi/services/jukebox-mpd.service
exposure() {
  local r
  r=$(systemd-analyze security --offline=true --root="$vroot" jukebox.service 2>&1) || true
  printf '%s\n' "$r" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p'
}
for case in "loopback:127.0.0.1 6601" "lan:0.0.0.0 6602"; do
  name=${case%%:*} listener=${case#*:}
  # shellcheck disable=SC2016 # $1 is the stub's own argument
  printf '#!/bin/sh\n[ "$1" = mpd-tcp ] && [ "$2" = --config ] && echo "%s"\nexit 0\n' "$listener" > "$tmp/stub-jukebox"
  chmod 755 "$tmp/stub-jukebox"
  sh board/mpd-network.sh --root "$vroot" --jukebox "$tmp/stub-jukebox" > /dev/null || fail "mpd-network.sh ($name)"
  [ -f "$dropin" ] || fail "mpd-network.sh wrote no drop-in for a TCP listener ($name)"
  grep -qx "SocketBindAllow=tcp:${listener#* }" "$dropin" || fail "the drop-in does not allow binding port ${listener#* }: $(cat "$dropin")"
  out=$(systemd-analyze verify --man=no --root="$vroot" jukebox.service 2>&1) || fail "systemd-analyze verify with the drop-in ($name): $out"
  [ -z "$out" ] || fail "systemd-analyze verify with the drop-in ($name): $out"
  s=$(exposure)
  [ -n "$s" ] || fail "no score from systemd-analyze security with the drop-in ($name)"
  echo "check-unit: with the MPD network drop-in ($name, $listener): verify clean, exposure $s (at most $max; $score without)"
  awk -v s="$s" -v m="$max" 'BEGIN { exit !(s <= m) }' || fail "exposure with the drop-in ($name) $s is over $max"
  case $name in
    loopback)
      grep -qx 'IPAddressAllow=localhost' "$dropin" || fail "a loopback listener let in more than localhost: $(cat "$dropin")"
      [ ! -e "$avahi" ] || fail "a loopback listener was announced with avahi" ;;
    lan)
      grep -q '<port>6602</port>' "$avahi" 2>/dev/null || fail "no avahi _mpd._tcp service for a LAN listener" ;;
  esac
done
# An MQTT broker alone: the network, the broker's address (and localhost) only, no bind() at all.
# shellcheck disable=SC2016 # $1 is the stub's own argument
printf '#!/bin/sh\n[ "$1" = mpd-tcp ] && [ "$2" = --mqtt ] && echo "192.168.7.5 1883"\nexit 0\n' > "$tmp/stub-jukebox"
sh board/mpd-network.sh --root "$vroot" --jukebox "$tmp/stub-jukebox" > /dev/null || fail "mpd-network.sh (mqtt)"
grep -qx 'IPAddressAllow=localhost 192.168.7.5' "$dropin" 2>/dev/null || fail "an MQTT broker's drop-in: $(cat "$dropin" 2>&1)"
grep -qx 'SocketBindDeny=any' "$dropin" && ! grep -q '^SocketBindAllow' "$dropin" || fail "an MQTT client may bind: $(cat "$dropin")"
out=$(systemd-analyze verify --man=no --root="$vroot" jukebox.service 2>&1) || fail "systemd-analyze verify with the drop-in (mqtt): $out"
[ -z "$out" ] || fail "systemd-analyze verify with the drop-in (mqtt): $out"
s=$(exposure)
echo "check-unit: with the network drop-in for an MQTT broker (192.168.7.5 1883): verify clean, exposure $s (at most $max)"
awk -v s="$s" -v m="$max" 'BEGIN { exit !(s <= m) }' || fail "exposure with the MQTT drop-in $s is over $max"
# Internet radio: IP traffic with any address and netlink for the resolver, still no bind().
# shellcheck disable=SC2016 # $1 is the stub's own argument
printf '#!/bin/sh\n[ "$1" = mpd-tcp ] && [ "$2" = --radio ] && echo any\nexit 0\n' > "$tmp/stub-jukebox"
sh board/mpd-network.sh --root "$vroot" --jukebox "$tmp/stub-jukebox" > /dev/null || fail "mpd-network.sh (radio)"
grep -qx 'IPAddressAllow=any' "$dropin" 2>/dev/null && grep -qx 'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK' "$dropin" \
  || fail "the radio drop-in: $(cat "$dropin" 2>&1)"
grep -qx 'SocketBindDeny=any' "$dropin" && ! grep -q '^SocketBindAllow' "$dropin" || fail "radio may bind: $(cat "$dropin")"
out=$(systemd-analyze verify --man=no --root="$vroot" jukebox.service 2>&1) || fail "systemd-analyze verify with the drop-in (radio): $out"
[ -z "$out" ] || fail "systemd-analyze verify with the drop-in (radio): $out"
s=$(exposure)
echo "check-unit: with the network drop-in for internet radio: verify clean, exposure $s (at most $max)"
awk -v s="$s" -v m="$max" 'BEGIN { exit !(s <= m) }' || fail "exposure with the radio drop-in $s is over $max"
printf '#!/bin/sh\nexit 0\n' > "$tmp/stub-jukebox"
sh board/mpd-network.sh --root "$vroot" --jukebox "$tmp/stub-jukebox" > /dev/null || fail "mpd-network.sh (no listener)"
if [ -e "$dropin" ] || [ -e "$avahi" ]; then fail "mpd-network.sh kept the drop-in or the avahi file with no TCP listener"; fi
[ "$(exposure)" = "$score" ] || fail "exposure without the drop-in is not $score again"
echo "check-unit: mpd-network.sh removes the drop-in and the avahi file with no TCP listener: ok"

# 3. install.sh into a staging root
sroot=$tmp/stage
# shellcheck disable=SC2016 # $1 is the stub's own argument
printf '#!/bin/sh\n[ "$1" = mpd-tcp ] || echo jukebox\n' > "$tmp/jukebox"
chmod 755 "$tmp/jukebox"
bash board/install.sh --root "$sroot" --binary "$tmp/jukebox" --board pi4 > "$tmp/install.log" \
  || fail "install.sh: $(cat "$tmp/install.log")"
for f in usr/local/bin/jukebox etc/systemd/system/jukebox.service etc/jukebox/config.json \
  usr/local/share/jukebox/profiles/pi4.json usr/local/share/jukebox/mpd-network etc/udev/rules.d/99-jukebox.rules \
  etc/polkit-1/rules.d/50-jukebox-power.rules etc/udev/rules.d/98-jukebox-usb.rules \
  "etc/systemd/system/jukebox-usb@.service" usr/local/share/jukebox/usb-mount etc/systemd/system/jukebox-web.socket \
  etc/systemd/system/jukebox-web.service usr/local/share/jukebox/web/index.html usr/local/share/jukebox/web/app.js; do
  [ -e "$sroot/$f" ] || fail "install.sh did not install /$f"
done
grep -q '"board": "pi4"' "$sroot/etc/jukebox/config.json" || fail "install.sh --board pi4: not in the config"
echo '{"music": ["/mine"]}' > "$sroot/etc/jukebox/config.json"
bash board/install.sh --root "$sroot" --binary "$tmp/jukebox" > "$tmp/install.log" || fail "install.sh again"
grep -q /mine "$sroot/etc/jukebox/config.json" || fail "install.sh overwrote an existing config"
# shellcheck disable=SC2016 # $1 is the stub's own argument
printf '#!/bin/sh\n[ "$1" = mpd-tcp ] && [ "$2" = --config ] && echo "127.0.0.1 6600"\nexit 0\n' > "$tmp/jukebox-mpd"
chmod 755 "$tmp/jukebox-mpd"
bash board/install.sh --root "$sroot" --binary "$tmp/jukebox-mpd" > "$tmp/install.log" || fail "install.sh with an MPD listener"
grep -qx 'SocketBindAllow=tcp:6600' "$sroot/etc/systemd/system/jukebox.service.d/mpd-network.conf" 2>/dev/null \
  || fail "install.sh with an MPD TCP listener wrote no network drop-in: $(cat "$tmp/install.log")"
bash board/install.sh --root "$sroot" --uninstall > "$tmp/install.log" || fail "install.sh --uninstall"
left=$(cd "$sroot" && find . -type f | sort | tr '\n' ' ')
[ "$left" = "./etc/jukebox/config.json " ] || fail "after --uninstall, expected only the config, found: $left"
echo "check-unit: install.sh, again, --uninstall into a staging root: ok"
msg=$(JUKEBOX_ARCH=armhf bash board/install.sh --dry-run 2>&1) && fail "install.sh on armhf did not refuse"
printf '%s\n' "$msg" | grep -q 'not supported. Debian has no Swift' || fail "install.sh on armhf: $msg"
echo "check-unit: install.sh refuses 32-bit ARM: ok"
# A Snapcast server box: the controlscript link, snapserver's drop-in, the source line (once), a
# new config into the pipe; --uninstall takes the link and the drop-in back.
nroot=$tmp/stage-snapcast
mkdir -p "$nroot/etc"
printf '[stream]\nsource = pipe:///tmp/snapfifo?name=default\n' > "$nroot/etc/snapserver.conf"
for run in 1 2; do
  bash board/install.sh --root "$nroot" --binary "$tmp/jukebox" --snapcast-server > "$tmp/install.log" \
    || fail "install.sh --snapcast-server ($run): $(cat "$tmp/install.log")"
done
[ "$(readlink "$nroot/usr/local/lib/jukebox/snapcast-control")" = /usr/local/bin/jukebox ] || fail "no snapcast-control link"
grep -qx 'RuntimeDirectory=snapserver' "$nroot/etc/systemd/system/snapserver.service.d/jukebox.conf" || fail "no snapserver drop-in"
[ "$(grep -c '^source = pipe:///run/snapserver/jukebox?.*controlscript=/usr/local/lib/jukebox/snapcast-control' "$nroot/etc/snapserver.conf")" = 1 ] \
  && grep -qx '#source = pipe:///tmp/snapfifo?name=default' "$nroot/etc/snapserver.conf" || fail "snapserver.conf: $(cat "$nroot/etc/snapserver.conf")"
grep -q '"type": "snapcast"' "$nroot/etc/jukebox/config.json" || fail "the new config does not play into Snapcast"
bash board/install.sh --root "$nroot" --uninstall > "$tmp/install.log" || fail "install.sh --uninstall (snapcast)"
[ ! -e "$nroot/usr/local/lib/jukebox/snapcast-control" ] && [ ! -e "$nroot/etc/systemd/system/snapserver.service.d" ] \
  || fail "--uninstall left the snapcast link or drop-in"
echo "check-unit: install.sh --snapcast-server, again, --uninstall into a staging root: ok"

# The caches and build folders in /var/tmp are used only when they are ours alone.
. board/private-dir.sh
pd=$tmp/private-dir
mkdir "$pd"
private_dir "$pd/made" X 2>/dev/null && [ "$(stat -c %a "$pd/made")" = 755 ] || fail "private_dir did not make a 755 folder"
ln -s /etc "$pd/link"
! private_dir "$pd/link" X 2>/dev/null || fail "private_dir took a symbolic link"
mkdir -m 777 "$pd/open" && chmod 777 "$pd/open"
! private_dir "$pd/open" X 2>/dev/null || fail "private_dir took a folder others can write to"
private_dir "$pd/later" X --check && [ ! -e "$pd/later" ] || fail "private_dir --check made a missing folder"
if [ "$(id -u)" = 0 ]; then
  mkdir "$pd/theirs" && chown nobody "$pd/theirs"
  ! private_dir "$pd/theirs" X 2>/dev/null || fail "private_dir took another user's folder"
fi
echo "check-unit: private_dir refuses links, open and foreign folders: ok"

# Warnings and errors, not shellcheck's "info" notes: most of those are `A && B || fail`, which
# here means what it says (fail when either check fails), and single quotes around text that
# must not expand.
if command -v shellcheck >/dev/null 2>&1; then
  shellcheck -S warning -x board/*.sh board/hil/*.sh board/hil/guest/*.sh board/hil/arm64/*.sh board/hil/arm64/init || fail "shellcheck board/*.sh board/hil"
  shellcheck -S warning -s sh board/deb/postinst board/deb/prerm board/deb/postrm board/mpd-network.sh || fail "shellcheck board/deb maintainer scripts, board/mpd-network.sh"
  echo "check-unit: shellcheck board/*.sh board/hil board/deb: clean"
fi
