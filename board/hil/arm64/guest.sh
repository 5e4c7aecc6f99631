#!/bin/bash
# SPDX-License-Identifier: MIT
# The arm64 guest's driver, started by hil-guest.service with the run folder at /mnt/out (9p).
# Output goes to the virtio console (hvc0, read by the host); jukebox's serial console is the
# PL011 UART ttyAMA0, as on a Pi. What it does depends on /mnt/out/phase (board/hil/arm64.sh):
#   install  `apt install ./jukebox_…_arm64.deb` (no network: the image holds its Depends), the
#            service enabled and running as user jukebox; the config pointed at hw:Loopback,0,0
#            (boot volume 100, console ttyAMA0); music copied; the service restarted: READY, and
#            what it plays is recorded from hw:Loopback,1,0 and compared bit for bit with the test
#            noise (an underrun is retried up to 3 times); then it plays the 60 s tone, says
#            HIL-CUT-GO and waits for the host to read the UART and kill QEMU (the power cut)
#   resume   after the power cut: the state file found at boot holds a position within the save
#            interval before the one the host read, and the service plays on from there; then a
#            gpio-sim line named GPIO17 as the play button: a press pauses, a press plays
# Prints `HIL-RESULT PASS|FAIL name` lines, with what was expected and seen.
set -uo pipefail
OUT=/mnt/out
PHASE=$(cat "$OUT/phase")
SOCK=/run/jukebox/control
CONFIG=/etc/jukebox/config.json
W=/root/hil
mkdir -p "$W"
WAIT_POLL=0.5   # each poll starts processes: costly under TCG
# shellcheck source=board/hil/guest/service-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/service-lib.sh"
# The control socket through the small C client (a Swift process is slow to start under TCG).
status_json() { "$OUT/tools/hilctl" "$SOCK" status --json 2>/dev/null | tail -n 1; }
at_track() { [ "$(field index "$(status_json)")" = "$1" ]; }
past() { local j; j=$(status_json); [ "$(field index "$j")" = "$1" ] && awk -v p="$(field position "$j")" -v m="$2" 'BEGIN { exit !(p >= m) }'; }

case "$PHASE" in
install)
  begin deb-install
  deb=$(ls "$OUT"/jukebox_*_arm64.deb)
  cp "$deb" /tmp/ && chmod 0644 "/tmp/${deb##*/}"
  t=$(uptime_s)
  if ! DEBIAN_FRONTEND=noninteractive apt install -y "/tmp/${deb##*/}" > "$W/apt.log" 2>&1; then
    note "apt install ./${deb##*/} failed: $(tail -n 10 "$W/apt.log")"
  fi
  took=$(since "$t")
  version=$(/usr/bin/jukebox --version 2>&1)
  [ "$version" = "jukebox $(dpkg-query -W -f='${Version}' jukebox | sed 's/[+~].*//')" ] || note "jukebox --version: $version"
  [ "$(systemctl is-enabled jukebox.service 2>&1)" = enabled ] || note "jukebox.service not enabled by the package"
  wait_for 60 active || note "expected the package to start jukebox.service; seen $(prop ActiveState)/$(prop SubState)"
  groups=$(id -nG jukebox 2>&1)
  [[ " $groups " == *" audio "* ]] || note "user jukebox not in group audio: $groups"
  finish "$version ($(uname -m)), installed by apt in $took s, enabled, $(prop ActiveState), user jukebox in $groups"

  begin service-ready
  systemctl stop jukebox.service
  # This box: the loopback card, volume 100 (bit-exact), the console on the Pi's UART name.
  sed -i 's|"device": "default"|"device": "hw:Loopback,0,0"|; s|"bootVolume": [0-9]*|"bootVolume": 100|; s|"logLevel": "info",|"logLevel": "info",\n  "console": "/dev/ttyAMA0",|' "$CONFIG"
  if ! grep -q '"hw:Loopback,0,0"' "$CONFIG" || ! grep -q '"bootVolume": 100' "$CONFIG" || ! grep -q ttyAMA0 "$CONFIG"; then
    note "the package's config did not take the test settings: $(cat "$CONFIG")"
  fi
  mkdir -p /srv/music && cp "$OUT/music"/* /srv/music/
  attempt=1 audio=""
  while :; do
    rm -f /var/lib/jukebox/state.json /var/lib/jukebox/state.json.place
    arecord -q -D hw:Loopback,1,0 -f S16_LE -r 44100 -c 2 -t raw "$W/rec.raw" 2>"$W/arecord.err" &
    rec=$!
    t=$(uptime_s)
    systemctl start jukebox.service || note "systemctl start jukebox.service failed (attempt $attempt)"
    ready=$(awk -v a="$t" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')
    wait_for 120 at_track 3 || note "expected the queue to reach track 3 (the tone) after the noise; seen $(status_json)"
    # Track 3 starts when its first frames are written, while the device still holds the noise's
    # last ones (CI once stopped the recording 0.17 s short): a second into the tone, they are in.
    wait_for 30 past 3 1 || note "the tone did not pass 1 s: $(status_json)"
    kill -INT $rec; wait $rec
    audio=$("$OUT/tools/pcmcmp" find "$OUT/src.raw" "$W/rec.raw" 44100)
    # An underrun (the emulated machine too slow for the 160 ms buffer) is counted by the player
    # (`diag`: xruns N): only then is a difference retried; any other difference fails at once.
    xruns=$("$OUT/tools/hilctl" "$SOCK" diag 2>/dev/null | sed -n 's/.*xruns \([0-9]*\).*/\1/p' | head -n 1)
    if [[ "$audio" != bit-exact:* ]] && [ "${xruns:-0}" -gt 0 ] && [ $attempt -lt 3 ]; then
      echo "  attempt $attempt: $xruns underrun(s) counted by the player: $audio (retrying)"
      attempt=$((attempt + 1))
      systemctl stop jukebox.service
      continue
    fi
    break
  done
  pid=$(prop MainPID)
  user=$(ps -o user= -p "$pid" 2>/dev/null | tr -d ' ')
  [ "$user" = jukebox ] || note "expected the service to run as user jukebox, seen '$user' (pid $pid)"
  [ "$(prop Type)" = notify ] || note "expected Type=notify, seen $(prop Type)"
  active || note "expected jukebox.service active (READY=1); seen $(prop ActiveState)/$(prop SubState)"
  finish "systemctl start returned after READY=1 in $ready s, user $user, $(prop StatusText)"

  begin audio-bit-exact
  [[ "$audio" == bit-exact:* ]] || note "the recording from hw:Loopback,1,0 is not the test noise: $audio"
  finish "01 noise.flac + 02 noise.wav played by the service to hw:Loopback,0,0, recorded from hw:Loopback,1,0: $audio (attempt $attempt, xruns ${xruns:-?})"

  # Into the tone, past a periodic save (every 5 s): then the host reads the UART and cuts.
  wait_for 60 past 3 7 || echo "  (the tone did not pass 7 s: $(status_json))"
  echo resume > "$OUT/phase"
  sync
  echo "HIL-CUT-GO $(status_json)"
  sleep 600
  ;;
resume)
  begin power-cut
  check_power_cut 60
  [ "$(field index "$json")" = 3 ] || note "expected to resume in track 3 (the tone), seen $json"
  finish "cut at $cut s, resumed at $spos s (lost $(awk -v c="$cut" -v r="${spos:-0}" 'BEGIN { printf "%.1f", c - r }') s, save interval $interval s), playing track $(field index "$json") at $pos s"

  # gpio-sim (built out of tree for this kernel): a line named GPIO17, pulled up (a released
  # button); the config names it as the play button; presses are pulls to ground, real edge
  # events through libgpiod. The package's udev rule gives /dev/gpiochipN to group gpio.
  begin gpio-button
  c=/sys/kernel/config/gpio-sim/hil chip="" owner=""
  if ! modprobe gpio-sim 2>"$W/modprobe.err"; then
    note "modprobe gpio-sim: $(cat "$W/modprobe.err")"
  else
    mkdir -p "$c/bank0/line0" && echo 1 > "$c/bank0/num_lines" && echo GPIO17 > "$c/bank0/line0/name" && echo 1 > "$c/live"
    chip=$(cat "$c/bank0/chip_name" 2>/dev/null)
    pull="/sys/devices/platform/$(cat "$c/dev_name" 2>/dev/null)/$chip/sim_gpio0/pull"
    [ -w "$pull" ] || note "no gpio-sim line at $pull"
    echo pull-up > "$pull"
    udevadm settle -t 30
    owner=$(stat -c '%G %a' "/dev/$chip" 2>&1)
    [ "$owner" = "gpio 660" ] || note "expected /dev/$chip group gpio mode 660 (the package's udev rule), seen $owner"
    sed -i 's|"logLevel": "info",|"logLevel": "info",\n  "buttons": {"play": "GPIO17"},|' "$CONFIG"
    systemctl restart jukebox.service || note "restart with the button config failed"
    # The tone may have played to the end of the queue meanwhile (stopped): play it again.
    playing || "$OUT/tools/hilctl" "$SOCK" play >/dev/null
    wait_for 60 playing || note "expected playing after the restart; seen '$(prop StatusText)'"
    # The restart resumes where the tone was, which under TCG can be its last seconds (57.1 of 60 s
    # once: the queue ended between the presses): the tone starts again, so both land inside it.
    "$OUT/tools/hilctl" "$SOCK" seek 0:00 >/dev/null || note "seek 0:00 after the restart failed"
    phase() { [ "$(field phase "$(status_json)")" = "$1" ]; }
    # Held with bash's own timed read: an external sleep can stretch past the 1 s long press here.
    mkfifo "$W/hold" && exec {hold}<>"$W/hold"
    press() { echo pull-down > "$pull"; read -r -t 0.3 -u "$hold" _; echo pull-up > "$pull"; }
    press
    wait_for 10 phase paused || note "GPIO17 pressed: expected phase paused, seen $(status_json)"
    press
    wait_for 10 phase playing || note "GPIO17 pressed again: expected phase playing, seen $(status_json)"
  fi
  finish "gpio-sim chip $chip ($(cat "$c/dev_name" 2>/dev/null), /dev/$chip $owner): GPIO17 press → paused, press → playing"
  done_phase
  systemctl --force --force poweroff
  ;;
esac
