#!/bin/bash
# SPDX-License-Identifier: MIT
# The systemd guest's driver (started by hil-guest.service with the checkout at /mnt/repo and the
# run folder at /mnt/out). What it does depends on /mnt/out/phase (see board/hil/systemd.sh):
#   install  install-sh: board/install.sh --binary, the service starts, --uninstall;
#            deb-install: apt install ./jukebox_V_amd64.deb, conffile edited, plays, clean poweroff
#   boot     checks the service as booted; says HIL-SERIAL-GO for the host to use the UART, then
#            waits for the power cut
#   resume   checks the position after the power cut; deb-upgrade to V+hil1; deb-purge; powers off
# Prints `HIL-RESULT PASS|FAIL name` lines (with what was expected and seen) on the console.
set -uo pipefail
OUT=/mnt/out
PHASE=$(cat "$OUT/phase")
VERSION=$(cat "$OUT/deb-version")
SOCK=/run/jukebox/control
CONFIG=/etc/jukebox/config.json
# shellcheck source=board/hil/guest/service-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/service-lib.sh"
status_json() { jukebox ctl --socket "$SOCK" status --json 2>&1; }
repeat_is() { [ "$(field repeat "$(status_json)")" = "$1" ]; }
refused_in_journal() { journalctl -b "_PID=$1" -o cat 2>/dev/null | grep -q 'mpd: cannot listen on 127.0.0.1:6600'; }
mpc_playing() { mpc -h 127.0.0.1 -p 6600 status > /tmp/mpc.log 2>/dev/null && grep -q '^\[playing\]' /tmp/mpc.log; }
resumed_by() { journalctl -b "_PID=$1" -o cat 2>/dev/null | grep -q 'resuming .* from /var/lib/jukebox/state.json'; }
# apt as a user types it, in the folder holding the .deb (a copy: the share is 9p).
apt_do() { (cd /root && DEBIAN_FRONTEND=noninteractive apt "$@" -y) > /tmp/apt.log 2>&1; }

case "$PHASE" in
install)
  # install.sh, kept tested where systemd runs (check-unit.sh covers it in a staging root): the
  # package's release binary, since the host's debug build links Debian 12's libgpiod2.
  begin install-sh
  t=$(uptime_s)
  if ! bash /mnt/repo/board/install.sh --binary "$OUT/jukebox" > /tmp/install.log 2>&1; then
    note "board/install.sh --binary exited non-zero: $(tail -n 10 /tmp/install.log)"
  fi
  grep -q "install: done" /tmp/install.log || note "install.sh did not say done"
  [ -x /usr/local/bin/jukebox ] || note "no /usr/local/bin/jukebox after install.sh"
  [ "$(systemctl is-enabled jukebox.service 2>&1)" = enabled ] || note "jukebox.service not enabled by install.sh"
  wait_for 60 active || note "expected jukebox.service active (READY=1) after install.sh; seen $(prop ActiveState)/$(prop SubState)"
  user=$(ps -o user= -p "$(prop MainPID)" 2>/dev/null | tr -d ' ')
  [ "$user" = jukebox ] || note "expected the service to run as user jukebox, seen '$user'"
  if ! bash /mnt/repo/board/install.sh --uninstall > /tmp/uninstall.log 2>&1; then
    note "board/install.sh --uninstall exited non-zero: $(tail -n 10 /tmp/uninstall.log)"
  fi
  if [ -e /usr/local/bin/jukebox ] || [ -e /etc/systemd/system/jukebox.service ]; then note "--uninstall left the binary or the unit"; fi
  pgrep -x jukebox >/dev/null && note "--uninstall left jukebox running (pid $(pgrep -x jukebox))"
  # What --uninstall keeps and says to remove by hand: the package starts from a clean box.
  rm -r /etc/jukebox /var/lib/jukebox || note "removing the kept config and state failed"
  userdel jukebox || note "userdel jukebox failed"
  finish "install.sh: $(grep -c '^  +' /tmp/install.log) steps, service active as $user; --uninstall: binary and unit gone ($(since "$t") s)"

  begin deb-install
  deb=jukebox_${VERSION}_amd64.deb
  t=$(uptime_s)
  cp "$OUT/$deb" /root/
  apt_do install "./$deb" || note "apt install ./$deb failed: $(tail -n 10 /tmp/apt.log)"
  inst=$(dpkg-query -W -f='${Status} ${Version}' jukebox 2>&1)
  [ "$inst" = "install ok installed $VERSION" ] || note "expected jukebox $VERSION installed, dpkg says: $inst"
  if [ ! -x /usr/bin/jukebox ] || [ ! -f /usr/lib/systemd/system/jukebox.service ]; then note "expected /usr/bin/jukebox and /usr/lib/systemd/system/jukebox.service"; fi
  [ "$(systemctl is-enabled jukebox.service 2>&1)" = enabled ] || note "jukebox.service not enabled by the package"
  wait_for 60 active || note "expected the package to start jukebox.service; seen $(prop ActiveState)/$(prop SubState)"
  grep -qx "$CONFIG" /var/lib/dpkg/info/jukebox.conffiles || note "$CONFIG is not a conffile"
  took=$(since "$t")
  # This box, as its user would edit the conffile: the loopback card (the default PCM would be
  # whichever card came first), the console on the second UART.
  sed -i 's|"device": "default"|"device": "hw:Loopback,0,0"|; s|"logLevel": "info",|"logLevel": "info",\n  "console": "/dev/ttyS1",|' "$CONFIG"
  grep -q '"console": "/dev/ttyS1"' "$CONFIG" || note "the conffile did not take the edit: $(cat "$CONFIG")"
  cp "$OUT/music"/*.wav /srv/music/
  systemctl restart jukebox.service
  wait_for 60 playing || note "expected StatusText 'playing: …' after the config edit; seen '$(prop StatusText)'"
  sleep 3   # some seconds heard, so the saved position is not 0
  finish "apt install ./$deb: $VERSION, enabled and started (${took} s); conffile edited; $(prop StatusText)"

  # An MPD TCP listener: refused by the unit's sandbox as installed (one journal line, the player
  # plays on); answered once /usr/share/jukebox/mpd-network has written the network drop-in.
  # It stays on for the later phases: the upgrade keeps the drop-in, the purge removes it.
  begin deb-mpd
  t=$(uptime_s)
  dropin=/etc/systemd/system/jukebox.service.d/mpd-network.conf
  [ ! -e "$dropin" ] || note "a network drop-in exists with no mpd in the config: $(cat "$dropin")"
  sed -i 's|"device": "hw:Loopback,0,0",|&\n  "mpd": {"bind": "127.0.0.1", "port": 6600},|' "$CONFIG"
  grep -q '"mpd": {"bind": "127.0.0.1"' "$CONFIG" || note "the mpd edit did not take: $(cat "$CONFIG")"
  systemctl restart jukebox.service
  pid=$(prop MainPID)
  wait_for 60 playing || note "expected it to play with the listener refused; seen '$(prop StatusText)'"
  wait_for 10 refused_in_journal "$pid" || note "expected 'mpd: cannot listen on 127.0.0.1:6600' in the journal without the drop-in"
  mpc -h 127.0.0.1 -p 6600 status > /tmp/mpc.log 2>&1 && note "mpc status answered without the drop-in: $(cat /tmp/mpc.log)"
  /usr/share/jukebox/mpd-network --jukebox /usr/bin/jukebox > /tmp/mpd-network.log 2>&1 || note "mpd-network failed: $(cat /tmp/mpd-network.log)"
  grep -qx 'SocketBindAllow=tcp:6600' "$dropin" 2>/dev/null || note "expected $dropin allowing tcp:6600, seen: $(cat "$dropin" 2>&1)"
  systemctl restart jukebox.service
  wait_for 60 playing || note "expected it to play with the drop-in; seen '$(prop StatusText)'"
  [[ "$(prop RestrictAddressFamilies)" == *AF_INET* ]] || note "the drop-in is not in force: RestrictAddressFamilies=$(prop RestrictAddressFamilies)"
  wait_for 10 mpc_playing || note "expected mpc status on 127.0.0.1:6600 to say [playing], seen: $(cat /tmp/mpc.log)"
  finish "without the drop-in refused (journal), with it: $(sed -n 2p /tmp/mpc.log) ($(since "$t") s)"
  done_phase
  systemctl poweroff
  ;;
boot)
  begin service-boot
  wait_for 120 active || note "expected jukebox.service active (READY=1) after boot; seen $(prop ActiveState)/$(prop SubState)"
  [ "$(prop Type)" = notify ] || note "expected Type=notify, seen $(prop Type)"
  [ "$(prop UnitFileState)" = enabled ] || note "expected enabled, seen $(prop UnitFileState)"
  pid=$(prop MainPID)
  user=$(ps -o user= -p "$pid" 2>/dev/null | tr -d ' ')
  [ "$user" = jukebox ] || note "expected the service to run as user jukebox, seen '$user' (pid $pid)"
  wait_for 30 playing || note "expected autoplay from the state file: StatusText 'playing: …', seen '$(prop StatusText)'"
  json=$(status_json)
  [ "$(field phase "$json")" = playing ] || note "control socket $SOCK: expected phase playing, seen: $json"
  pos=$(field position "$json")
  awk -v p="${pos:-0}" 'BEGIN { exit !(p >= 2) }' || note "expected to resume past the ~3 s heard before the clean poweroff, seen position $pos"
  finish "user $user, $(prop StatusText), socket: phase $(field phase "$json") at $(field position "$json") s, boot to READY $(systemd-analyze 2>/dev/null | head -n 1 | sed 's/.*= //')"
  echo "HIL-SERIAL-GO"
  echo resume > "$OUT/phase"
  sync
  # The host talks to the UART now and then cuts the power.
  sleep 600
  ;;
resume)
  begin power-cut
  check_power_cut 30
  resumed=$spos
  finish "cut at $cut s, resumed at $resumed s (lost $(awk -v c="$cut" -v r="$resumed" 'BEGIN { printf "%.1f", c - r }') s, save interval $interval s), playing at $pos s"

  # The same package rebuilt as a higher version, installed over the running service. Repeat all
  # first: a mode only the state file carries over a restart (the config says nothing of it), and
  # the queue never runs out however long the upgrade takes under TCG.
  begin deb-upgrade
  deb=jukebox_${VERSION}+hil1_amd64.deb
  t=$(uptime_s)
  jukebox ctl --socket "$SOCK" repeat all >/dev/null 2>&1 || note "jukebox ctl repeat all failed"
  wait_for 10 repeat_is all || note "expected repeat all before the upgrade, seen: $(status_json)"
  pid0=$(prop MainPID)
  index0=$(field index "$(status_json)")
  cp "$OUT/$deb" /root/
  apt_do install "./$deb" || note "apt install ./$deb failed: $(tail -n 10 /tmp/apt.log)"
  inst=$(dpkg-query -W -f='${Status} ${Version}' jukebox 2>&1)
  [ "$inst" = "install ok installed $VERSION+hil1" ] || note "expected jukebox $VERSION+hil1 installed, dpkg says: $inst"
  wait_for 60 active || note "expected jukebox.service active after the upgrade; seen $(prop ActiveState)/$(prop SubState)"
  pid1=$(prop MainPID)
  if [ "$pid1" = "$pid0" ] || [ "$pid1" = 0 ]; then note "expected the upgrade to restart the service: MainPID $pid0 before, $pid1 after"; fi
  wait_for 30 playing || note "expected it to play on after the upgrade; seen '$(prop StatusText)'"
  # The new process read the state the old one saved at SIGTERM and went on from there: its first
  # track is the one playing before (or a later one, if that ended during the upgrade).
  wait_for 10 resumed_by "$pid1" || note "expected the new jukebox (pid $pid1) to log 'resuming … from /var/lib/jukebox/state.json'"
  index1=$(journalctl -b "_PID=$pid1" -o cat 2>/dev/null | grep -m1 -o 'playing: .*\[[0-9]*/' | grep -o '[0-9]*/$' | tr -d /)
  [ "${index1:-0}" -ge "${index0:-1}" ] || note "expected the new jukebox to resume at track $index0 or later, its journal says track '${index1}'"
  repeat_is all || note "expected repeat all kept through the upgrade (only the state file has it), seen: $(status_json)"
  grep -q '"device": "hw:Loopback,0,0"' "$CONFIG" || note "the upgrade replaced the edited conffile: $(cat "$CONFIG")"
  ls /etc/jukebox/*.dpkg-* >/dev/null 2>&1 && note "the upgrade left $(ls /etc/jukebox/*.dpkg-*)"
  finish "$VERSION -> $VERSION+hil1 in $(since "$t") s: MainPID $pid0 -> $pid1, resumed at track $index1 (was $index0), repeat all kept, conffile kept; $(prop StatusText)"

  begin deb-purge
  t=$(uptime_s)
  apt_do purge jukebox || note "apt purge jukebox failed: $(tail -n 10 /tmp/apt.log)"
  left=()
  for f in /usr/bin/jukebox /usr/lib/systemd/system/jukebox.service /etc/jukebox /var/lib/jukebox \
    /var/lib/private/jukebox /run/jukebox /etc/systemd/system/jukebox.service \
    /etc/systemd/system/multi-user.target.wants/jukebox.service /usr/share/jukebox \
    /etc/systemd/system/jukebox.service.d; do
    if [ -e "$f" ] || [ -L "$f" ]; then left+=("$f"); fi
  done
  [ ${#left[@]} -eq 0 ] || note "purge left ${left[*]}"
  dpkg-query -W -f='${Status}' jukebox >/dev/null 2>&1 && note "dpkg still knows jukebox: $(dpkg-query -W -f='${Status}' jukebox)"
  getent passwd jukebox >/dev/null && note "purge left the user jukebox"
  getent group jukebox >/dev/null && note "purge left the group jukebox"
  pgrep -x jukebox >/dev/null && note "jukebox still runs after purge (pid $(pgrep -x jukebox))"
  [ "$(prop LoadState)" = not-found ] || note "expected systemd to know no jukebox.service, seen LoadState $(prop LoadState)"
  [ -n "$(ls /srv/music)" ] || note "purge touched the music in /srv/music"
  finish "binary, unit, config, state, user and group gone, music kept ($(since "$t") s)"
  done_phase
  systemctl poweroff
  ;;
esac
