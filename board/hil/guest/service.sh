#!/bin/bash
# SPDX-License-Identifier: MIT
# The systemd guest's driver (started by hil-guest.service with the checkout at /mnt/repo and the
# run folder at /mnt/out). What it does depends on /mnt/out/phase (see board/hil/systemd.sh):
#   install  board/install.sh --binary, test config, play, clean poweroff
#   boot     checks the service as booted; says HIL-SERIAL-GO for the host to use the UART, then
#            waits for the power cut
#   resume   checks the position after the power cut, powers off
# Prints `HIL-RESULT PASS|FAIL name` lines (with what was expected and seen) on the console.
set -uo pipefail
OUT=/mnt/out
PHASE=$(cat "$OUT/phase")
SOCK=/run/jukebox/control
CONFIG=/etc/jukebox/config.json
PROBLEMS=()
begin() { CURRENT=$1; PROBLEMS=(); echo "HIL-BEGIN $1 (uptime $(cut -d' ' -f1 /proc/uptime) s)"; }
note() { PROBLEMS+=("$*"); }
finish() {
  local line
  if [ ${#PROBLEMS[@]} -eq 0 ]; then
    echo "HIL-RESULT PASS $CURRENT: $*"
  else
    echo "HIL-RESULT FAIL $CURRENT"
    for line in "${PROBLEMS[@]}"; do echo "  expected/seen: $line"; done
    echo "  journal (jukebox, last 20 lines):"
    journalctl -b -u jukebox --no-pager -n 20 -o cat 2>&1 | sed 's/^/  | /'
  fi
}
# wait_for SECONDS CMD...: polls CMD every 0.1 s.
wait_for() {
  local end=$(($(date +%s) + $1))
  shift
  until "$@"; do
    [ "$(date +%s)" -lt "$end" ] || return 1
    sleep 0.1
  done
}
prop() { systemctl show -p "$1" --value jukebox.service; }
status_json() { /usr/local/bin/jukebox ctl --socket "$SOCK" status --json 2>&1; }
playing() { [[ "$(prop StatusText)" == playing:* ]]; }
active() { [ "$(prop ActiveState)" = active ]; }
field() { grep -o "\"$1\":\(\"[^\"]*\"\|[^,}]*\)" <<<"$2" | head -n 1 | cut -d: -f2- | tr -d '"'; }
done_phase() { echo "HIL-PHASE-DONE $PHASE (uptime $(cut -d' ' -f1 /proc/uptime) s)"; sync; }

case "$PHASE" in
install)
  begin install
  mkdir -p /srv/music
  if ! bash /mnt/repo/board/install.sh --binary "$OUT/jukebox" > /tmp/install.log 2>&1; then
    note "board/install.sh --binary exited non-zero: $(tail -n 10 /tmp/install.log)"
  fi
  grep -q "install: done" /tmp/install.log || note "install.sh did not say done"
  [ -x /usr/local/bin/jukebox ] || note "no /usr/local/bin/jukebox after install.sh"
  [ "$(systemctl is-enabled jukebox.service 2>&1)" = enabled ] || note "jukebox.service not enabled by install.sh"
  # This box: the loopback card (the default PCM would be whichever card came first), the console
  # on the second UART. Everything else stays as install.sh wrote it.
  sed -i 's|"device": "default"|"device": "hw:Loopback,0,0"|; s|"logLevel": "info",|"logLevel": "info",\n  "console": "/dev/ttyS1",|' "$CONFIG"
  cp "$OUT/music"/*.wav /srv/music/
  echo "HIL-T $(cut -d' ' -f1 /proc/uptime) installed"
  systemctl restart jukebox.service
  wait_for 60 playing || note "expected StatusText 'playing: …' after install; seen '$(prop StatusText)'"
  sleep 3   # some seconds heard, so the saved position is not 0
  finish "$(grep -c '^  +' /tmp/install.log) install steps; $(prop StatusText)"
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
  cut=$(cat "$OUT/position-at-cut")
  wait_for 120 active || note "expected jukebox.service active after the power cut; seen $(prop ActiveState)"
  wait_for 30 playing || note "expected it to play on after the power cut; seen '$(prop StatusText)'"
  json=$(status_json)
  pos=$(field position "$json")
  # The position is in the place sidecar once one was saved beside the queue file (while playing,
  # every save but the first), else in the queue file itself.
  saved=$(cat /run/hil-place-at-boot.json 2>/dev/null || cat /run/hil-state-at-boot.json 2>/dev/null)
  spos=$(grep -o '"position" *: *[0-9.]*' <<<"$saved" | grep -o '[0-9.]*$')
  interval=$(grep -o '"saveInterval": *[0-9]*' "$CONFIG" | grep -o '[0-9]*$' || true)
  interval=${interval:-5}
  if [ -z "$cut" ]; then
    note "the host could not read the position before the cut"
  elif [ -z "$spos" ]; then
    note "no position in the state file found at boot: $saved"
  elif ! awk -v r="$spos" -v c="$cut" -v i="$interval" 'BEGIN { exit !(r >= c - i - 0.5 && r <= c + 0.1) }'; then
    note "expected the state file after the cut to hold a position within the save interval ($interval s) before $cut s, seen $spos s"
  fi
  awk -v p="${pos:-0}" -v s="${spos:-0}" 'BEGIN { exit !(p >= s) }' || note "expected to play on from $spos s, seen position $pos ($json)"
  resumed=$spos
  finish "cut at $cut s, state file at boot $resumed s (lost $(awk -v c="$cut" -v r="$resumed" 'BEGIN { printf "%.1f", c - r }') s, save interval $interval s), playing at $pos s"
  done_phase
  systemctl poweroff
  ;;
esac
