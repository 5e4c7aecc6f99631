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
# shellcheck source=board/hil/guest/upload-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/upload-lib.sh"
status_json() { jukebox ctl --socket "$SOCK" status --json 2>&1; }
repeat_is() { [ "$(field repeat "$(status_json)")" = "$1" ]; }
refused_in_journal() { journalctl -b "_PID=$1" -o cat 2>/dev/null | grep -q 'mpd: cannot listen on 127.0.0.1:6600'; }
mpc_playing() { mpc -h 127.0.0.1 -p 6600 status > /tmp/mpc.log 2>/dev/null && grep -q '^\[playing\]' /tmp/mpc.log; }
resumed_by() { journalctl -b "_PID=$1" -o cat 2>/dev/null | grep -q 'resuming .* from /var/lib/jukebox/state.json'; }
# apt as a user types it, in the folder holding the .deb (a copy: the share is 9p).
apt_do() { (cd /root && DEBIAN_FRONTEND=noninteractive apt "$@" -y) > /tmp/apt.log 2>&1; }

# ---- boot 2's card reader and USB stick ----------------------------------------------------------
# One `status --json` through hilctl (C: polled many times, where a Swift client takes ~1 s to
# start under TCG).
fast_status() { "$OUT/hilctl" "$SOCK" status --json 2>/dev/null | tail -n 1; }
status_is() { [ "$(field "$1" "$(fast_status)")" = "$2" ]; }
playing_path() { local j; j=$(fast_status); [ "$(field phase "$j")" = playing ] && [[ "$(field path "$j")" == "$1"* ]]; }
journal_has() { journalctl -b "_PID=$1" -o cat 2>/dev/null | grep -qF "$2"; }
# The queue's source in the state file (the pretty-printed JSON on one line, slashes unescaped).
state_source() { tr -d ' \n\\' < /var/lib/jukebox/state.json 2>/dev/null | grep -o '"source":{[^}]*}'; }
# The reader (board/hil/tools/hilkeys, a uinput keyboard) runs as the coprocess KEYS.
# swipe ID: it types ID and Enter; SWIPE is its answer (`typed ID elsewhere N grab busy|free`).
# Reads of a card less than sameCardDelay (1 s) apart are one swipe: a swipe comes at least
# 1.1 s after the one before (the pause is part of the stimulus).
SWIPED_AT=0
# While EVENTS (a file) holds the control socket's event stream, each swipe waits for the core to
# be given its card (one more `card ID` line), so a swipe lost on its way is named as such.
EVENTS=
# card_lines_above ID N: the event stream holds more than N `card ID` lines. (A function, not an
# `eval` string: inside wait_for, $1 would be wait_for's own argument.)
card_lines_above() { [ "$(grep -c " card $1 " "$EVENTS")" -gt "$2" ]; }
swipe() {
  local wait before=0
  wait=$(awk -v a="$SWIPED_AT" -v b="$(uptime_s)" 'BEGIN { w = a + 1.1 - b; printf "%.2f", (w > 0 ? w : 0) }')
  # (Parenthesised: in awk, `printf …, w > 0 ? …` redirects into a file named 0, and the
  # swipes were not spaced at all.)
  [ -n "$wait" ] || note "swipe: no pause computed after the swipe at ${SWIPED_AT}s"
  sleep "${wait:-1.1}"
  [ -z "$EVENTS" ] || before=$(grep -c " card $1 " "$EVENTS")
  echo "type $1" >&"${KEYS[1]}"
  read -r -t 10 SWIPE <&"${KEYS[0]}" || SWIPE="(no answer from hilkeys)"
  SWIPED_AT=$(uptime_s)
  [ -z "$EVENTS" ] || wait_for 10 card_lines_above "$1" "$before" \
    || note "swipe of $1 at ${SWIPED_AT}s: the core was not given the card within 10 s (hilkeys: $SWIPE; events: $(tail -n 6 "$EVENTS" | tr '\n' ';'))"
}
# secs T: seconds of uptime since T, one decimal.
secs() { awk -v a="$1" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }'; }
round() { awk -v v="$1" 'BEGIN { printf "%.1f", v }'; }
# host_do WHAT: asks the host (board/hil/systemd.sh hil_host_requests) for usb-plug or usb-pull
# on QEMU's monitor through a request file in the run folder; HOST_ANSWER is the monitor's
# answer. False when none came within 30 s.
HOST_SEQ=0
host_do() {
  HOST_SEQ=$((HOST_SEQ + 1))
  local r="$OUT/host-request.$HOST_SEQ" a="$OUT/host-answer.$HOST_SEQ"
  echo "$1" > "$r.tmp" && mv "$r.tmp" "$r"
  wait_for 30 test -e "$a" || { HOST_ANSWER="(no answer from the host within 30 s)"; return 1; }
  HOST_ANSWER=$(cat "$a")
}
STICK=/media/jukebox/HILSTICK
# stick_mount [PID]: the options of the stick's filesystem as the host (or process PID) sees it.
stick_mount() { findmnt ${1:+-N "$1"} -n -t vfat -o OPTIONS -M "$STICK" 2>/dev/null; }
stick_unmounted() { [ -z "$(stick_mount)" ]; }
pcm_running() { grep -q 'state: RUNNING' /proc/asound/Loopback/pcm0p/sub0/status 2>/dev/null; }
pcm_stopped() { ! pcm_running; }
position_at_least() { awk -v p="$(field position "$(fast_status)")" -v m="$1" 'BEGIN { exit !(p + 0 >= m) }'; }
# record_stick WAV: records 2.5 s of what plays from the Loopback's capture side (subdevice 0, as
# the service plays to hw:Loopback,0,0) in WAV's format (the fixtures: 16-bit stereo 44.1 kHz)
# and finds it in WAV bit for bit (pcmcmp window: anywhere in the track). An underrun's inserted
# silence (`gap: …`) is timing, not the data path: retried, at most 3 attempts, each noted in
# RECORDED; any other difference stops at once. RECORDED: pcmcmp's line(s); false unless bit-exact.
record_stick() {
  local attempt cmp
  RECORDED=""
  for attempt in 1 2 3; do
    rm -f /tmp/stick-rec.raw
    if ! timeout 10 arecord -q -D hw:Loopback,1,0 -f S16_LE -r 44100 -c 2 -s 110250 -t raw /tmp/stick-rec.raw 2>/tmp/arecord.err; then
      RECORDED+="attempt $attempt: arecord failed: $(cat /tmp/arecord.err) (playback: $(tr '\n' ' ' < /proc/asound/Loopback/pcm0p/sub0/hw_params))"
      return 1
    fi
    cmp=$("$OUT/pcmcmp" window "$1" /tmp/stick-rec.raw 44100) && { RECORDED+="$cmp"; return 0; }
    RECORDED+="attempt $attempt: $cmp; "
    [[ "$cmp" == gap:* ]] || return 1
  done
  return 1
}
source_is() { [ "$(state_source)" = "$1" ]; }
# record_float WAV: record_stick for a stream, which decodes to 32-bit float and is handed to the
# device as it is (bit-perfect): the Loopback's capture takes that format, and pcmcmp turns it back
# into the 16 bits it came from before looking for it in WAV. Same retries and RECORDED.
record_float() {
  local attempt cmp
  RECORDED=""
  for attempt in 1 2 3; do
    rm -f /tmp/radio.f32 /tmp/radio.raw
    if ! timeout 10 arecord -q -D hw:Loopback,1,0 -f FLOAT_LE -r 44100 -c 2 -s 110250 -t raw /tmp/radio.f32 2>/tmp/arecord.err \
        || ! "$OUT/pcmcmp" f2s /tmp/radio.f32 /tmp/radio.raw; then
      RECORDED+="attempt $attempt: arecord failed: $(cat /tmp/arecord.err) (playback: $(tr '\n' ' ' < /proc/asound/Loopback/pcm0p/sub0/hw_params))"
      return 1
    fi
    cmp=$("$OUT/pcmcmp" window "$1" /tmp/radio.raw 44100) && { RECORDED+="$cmp"; return 0; }
    RECORDED+="attempt $attempt: $cmp; "
    [[ "$cmp" == gap:* ]] || return 1
  done
  return 1
}

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
  # install.sh made /srv/music (still empty) group jukebox; after userdel that gid names nothing.
  rmdir /srv/music || note "removing the kept, empty /srv/music failed: $(ls -la /srv/music 2>&1)"
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
  # The kids' box of boot 2 (rfid-keyboard, usb-stick): a keyboard card reader by name (not
  # plugged in yet), its map where the service may write it, sticks played when inserted.
  sed -i 's|"logLevel": "info",|&\n  "rfid": {"reader": "keyboard", "name": "HIL RFID Reader", "cards": "/var/lib/jukebox/cards.json", "secondSwipe": "toggle"},\n  "usb": {"autoplay": true},|' "$CONFIG"
  grep -q '"usb": {"autoplay": true}' "$CONFIG" || note "the conffile did not take the rfid/usb edit: $(cat "$CONFIG")"
  cp "$OUT/music"/*.wav /srv/music/
  systemctl restart jukebox.service
  wait_for 60 playing || note "expected StatusText 'playing: …' after the config edit; seen '$(prop StatusText)'"
  sleep 3   # some seconds heard, so the saved position is not 0
  # Under the unit's sandbox the player watches /dev/snd for a card's return (SoundDeviceWatch,
  # made for a kernel card's name): an inotify watch on that folder's inode among its fds.
  snd_ino=$(printf '%x' "$(stat -c %i /dev/snd)")
  grep -qs "inotify wd:[0-9]* ino:$snd_ino " "/proc/$(prop MainPID)/fdinfo/"* \
    || note "the service does not watch /dev/snd (no inotify watch on inode $snd_ino): $(journalctl -b -u jukebox.service -o cat | grep -i watch | tail -n 2)"
  # systemd says so on every start when the unit's mode and the package's differ.
  ! journalctl -b -u jukebox.service -o cat | grep -q "already exists but the mode is different" \
    || note "systemd: $(journalctl -b -u jukebox.service -o cat | grep -m 1 "already exists but the mode is different")"
  finish "apt install ./$deb: $VERSION, enabled and started (${took} s); conffile edited; /dev/snd watched; $(prop StatusText)"

  # The web app as the .deb installs it: jukebox-web.socket listens on port 80 and nothing runs
  # until a page is asked for; the first request starts jukebox-web.service (user jukebox, no
  # network of its own) which answers with the page and the player's own status. (Bounded by
  # timeout(1): Debian 12's static busybox wget crashes on its own -T.)
  begin deb-web
  t=$(uptime_s)
  [ "$(systemctl is-enabled jukebox-web.socket 2>&1)" = enabled ] || note "expected jukebox-web.socket enabled, seen $(systemctl is-enabled jukebox-web.socket 2>&1)"
  [ "$(systemctl is-active jukebox-web.socket 2>&1)" = active ] || note "expected jukebox-web.socket listening, seen $(systemctl is-active jukebox-web.socket 2>&1)"
  [ "$(systemctl is-active jukebox-web.service 2>&1)" != active ] || note "jukebox-web.service ran before any page was asked for"
  if ! timeout 30 "$OUT/busybox" wget -O /tmp/web-index.html http://127.0.0.1/ > /tmp/web-get.log 2>&1; then
    note "GET http://127.0.0.1/ failed: $(tr '\n' ' ' < /tmp/web-get.log)"
    note "jukebox-web: $(systemctl show -p ActiveState,SubState,Result,ExecMainStatus jukebox-web.service | tr '\n' ' '); journal: $(journalctl -b -u jukebox-web.service -u jukebox-web.socket -o cat 2>&1 | tail -n 12 | tr '\n' '|')"
  fi
  grep -qi '<html' /tmp/web-index.html 2>/dev/null || note "GET / did not answer the page: $(head -c 300 /tmp/web-index.html 2>&1)"
  timeout 10 "$OUT/busybox" wget -q -O /tmp/web-status.json http://127.0.0.1/api/status > /tmp/web-get.log 2>&1 || note "GET /api/status failed: $(cat /tmp/web-get.log)"
  web_json=$(cat /tmp/web-status.json 2>/dev/null)
  [ "$(field phase "$web_json")" = playing ] || note "expected /api/status to say phase playing, seen: $web_json"
  wpid=$(systemctl show -p MainPID --value jukebox-web.service)
  wuser=$(ps -o user= -p "$wpid" 2>/dev/null | tr -d ' ')
  [ "$wuser" = jukebox ] || note "expected jukebox web to run as user jukebox, seen '$wuser' (pid $wpid)"
  [ "$(systemctl show -p PrivateNetwork --value jukebox-web.service)" = yes ] || note "expected jukebox-web.service without a network of its own"
  finish "socket-activated on port 80: page $(wc -c < /tmp/web-index.html 2>/dev/null) bytes, /api/status phase $(field phase "$web_json"), served by pid $wpid as $wuser ($(since "$t") s)"
  scenario_deb_upload

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

  # Internet radio through the installed sandbox: radio.network makes mpd-network open the unit
  # to any address (netlink for the resolver too); a FLAC station served in the guest (busybox
  # httpd on 127.0.0.1) plays, and what reaches the Loopback is the station's audio, bit for bit.
  # Then the folder again: the later boots resume from the state file.
  begin deb-radio
  t=$(uptime_s)
  url=http://127.0.0.1:8000/station.flac
  sed -i 's|"device": "hw:Loopback,0,0",|&\n  "radio": {"network": true, "bufferSeconds": 1},|' "$CONFIG"
  grep -q '"radio": {"network": true' "$CONFIG" || note "the radio edit did not take: $(cat "$CONFIG")"
  /usr/share/jukebox/mpd-network --jukebox /usr/bin/jukebox > /tmp/mpd-network.log 2>&1 || note "mpd-network failed: $(cat /tmp/mpd-network.log)"
  grep -qx 'IPAddressAllow=any' "$dropin" 2>/dev/null || note "expected IPAddressAllow=any in $dropin with radio.network, seen: $(cat "$dropin" 2>&1)"
  "$OUT/busybox" httpd -f -p 127.0.0.1:8000 -h "$OUT/www" &
  httpd=$!
  systemctl restart jukebox.service
  wait_for 60 playing || note "expected it to play after the restart; seen '$(prop StatusText)'"
  [[ "$(prop RestrictAddressFamilies)" == *AF_NETLINK* ]] || note "the radio drop-in is not in force: RestrictAddressFamilies=$(prop RestrictAddressFamilies)"
  jukebox ctl --socket "$SOCK" vol 100 > /dev/null 2>&1 || note "vol 100 refused"
  jukebox ctl --socket "$SOCK" load "$url" > /tmp/radio-load.log 2>&1 || note "ctl load $url: $(cat /tmp/radio-load.log)"
  wait_for 30 playing_path "$url" || note "expected $url playing, seen $(fast_status)"
  started=$(secs "$t")
  [ "$(field stream "$(fast_status)")" = true ] || note "expected status --json to say stream true: $(fast_status)"
  wait_for 20 position_at_least 1.5 || note "expected the station to play on, seen $(fast_status)"
  record_float "$OUT/music/Track 3.wav" || note "the station's audio at hw:Loopback,1,0 is not the served FLAC's: $RECORDED"
  kill "$httpd" 2>/dev/null
  jukebox ctl --socket "$SOCK" load /srv/music > /tmp/radio-load.log 2>&1 || note "ctl load /srv/music: $(cat /tmp/radio-load.log)"
  wait_for 30 playing_path /srv/music || note "expected /srv/music playing again, seen $(fast_status)"
  wait_for 20 position_at_least 3 || note "expected some seconds of /srv/music heard before the poweroff, seen $(fast_status)"
  finish "drop-in IPAddressAllow=any, AF_NETLINK; $url playing ${started} s after the restart began; recorded: $RECORDED ($(since "$t") s)"
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

  # A USB card reader that types ids as a keyboard (a uinput device, board/hil/tools/hilkeys.c)
  # plugged in while the service runs: found by name and grabbed (no key reaches another reader
  # of the device, as a console's keyboard would be one), an unknown card learnt with
  # `ctl card assign`, its folder started by the next swipe, then secondSwipe toggle.
  begin rfid-keyboard
  pid=$(prop MainPID)
  card=0012345678
  modprobe uinput || note "modprobe uinput failed"
  # What the core was told (every card read, also one taken as the same swipe), for the notes.
  EVENTS=/tmp/rfid-events.log
  # Its stdin stays open (a line or the end of it there would end the stream).
  timeout 120 jukebox ctl --socket "$SOCK" events < <(sleep 130) > "$EVENTS" 2>&1 &
  events_pid=$!
  wait_for 20 grep -q "streaming events" "$EVENTS" || note "the event stream did not start: $(cat "$EVENTS")"
  coproc KEYS { exec "$OUT/hilkeys" "HIL RFID Reader"; }
  read -r -t 20 ready <&"${KEYS[0]}" || ready="(hilkeys did not start)"
  node=${ready#ready }
  t=$(uptime_s)
  wait_for 20 journal_has "$pid" "card reader: HIL RFID Reader ($node), grabbed" \
    || note "expected jukebox (pid $pid) to log 'card reader: HIL RFID Reader ($node), grabbed'; hilkeys: $ready"
  found=$(secs "$t")
  swipe "$card"
  first=$SWIPE
  [ "$first" = "typed $card elsewhere 0 grab busy" ] \
    || note "expected the keys to reach jukebox only (no key event at a second reader of $node, EVIOCGRAB busy); hilkeys: $first"
  wait_for 10 status_is newCard "$card" || note "expected newCard $card in status --json after the swipe, seen $(fast_status)"
  jukebox ctl --socket "$SOCK" card assign /srv/music > /tmp/assign.log 2>&1 || note "jukebox ctl card assign /srv/music failed: $(cat /tmp/assign.log)"
  grep -q "card $card is /srv/music" /tmp/assign.log || note "expected the answer 'card $card is /srv/music', seen: $(cat /tmp/assign.log)"
  swipe "$card"
  t=$(uptime_s)
  wait_for 20 playing_path "/srv/music/Track 1.wav" || note "expected the card to play /srv/music from Track 1, seen $(fast_status)"
  started=$(secs "$t")
  wait_for 10 source_is '"source":{"marked":false,"paths":["/srv/music"]}' \
    || note "expected the queue's source /srv/music in the state file, seen '$(state_source)'"
  swipe "$card"
  wait_for 10 status_is phase paused \
    || note "expected the second swipe to pause (secondSwipe toggle), seen $(fast_status); hilkeys: $SWIPE; events: $(tail -n 12 /tmp/rfid-events.log | tr '\n' ';')"
  swipe "$card"
  wait_for 10 status_is phase playing \
    || note "expected the third swipe to play again, seen $(fast_status); hilkeys: $SWIPE; card lines: $(journalctl -b -u jukebox.service -o short-monotonic | grep -i card | tail -n 4 | tr '\n' ' '); events: $(tail -n 12 /tmp/rfid-events.log | tr '\n' ';')"
  kill "$events_pid" 2>/dev/null
  EVENTS=
  finish "$node found and grabbed in $found s (keys elsewhere: ${first#typed $card elsewhere }), new card $card assigned to /srv/music; swipe: playing /srv/music from $(field title "$(fast_status)") in $started s; 2nd swipe paused, 3rd played"

  # A USB stick hot-plugged through QEMU's monitor (the host's FAT image, partition 1 labelled
  # HILSTICK): the package's udev rule and jukebox-usb@.service mount it read-only, and the mount
  # reaches the sandboxed service (PrivateMounts=, ProtectSystem=strict), which plays it; pulled
  # mid-track: the sound stops, the queue and the place stay, nothing is skipped; a card plays
  # meanwhile; plugged back in, the stick resumes at its bookmark.
  begin usb-stick
  pid=$(prop MainPID)
  # Volume 100 (bit-perfect; below it the software volume dithers, and the conffile's bootVolume
  # is 40): the stick's audio is recorded and compared bit for bit.
  "$OUT/hilctl" "$SOCK" volume 100 >/dev/null || note "volume 100 through the control socket failed"
  t=$(uptime_s)
  host_do usb-plug || note "usb-plug: $HOST_ANSWER"
  wait_for 30 test -b /dev/sda1 || note "expected /dev/sda1 after device_add (monitor: $HOST_ANSWER)"
  wait_for 40 playing_path "$STICK/Stick 1.wav" \
    || note "expected autoplay of $STICK/Stick 1.wav, seen $(fast_status); jukebox-usb@sda1: $(systemctl show -p Result --value jukebox-usb@sda1.service); mounts: $(findmnt -n -o TARGET,FSTYPE,OPTIONS -R /media 2>&1 | tr '\n' ';'); in the service: $(grep ' /media' "/proc/$pid/mountinfo" | tr '\n' ';')"
  plugged=$(secs "$t")
  mounted=$(stick_mount)
  [[ "$mounted" == ro,* ]] || note "expected $STICK mounted vfat ro, seen '$mounted'"
  [[ "$(stick_mount "$pid")" == ro,* ]] || note "expected the mount in jukebox's namespace too, seen '$(stick_mount "$pid")'"
  wait_for 10 pcm_running || note "expected hw:Loopback,0,0 running while the stick plays"
  # Recorded from 1.5 s in: past the start of the stream and the card's music it replaced.
  wait_for 20 position_at_least 1.5 || note "expected the stick to play 1.5 s, seen $(fast_status)"
  rec_from=$(field position "$(fast_status)")
  [ "$(field volume "$(fast_status)")" = 100 ] || note "expected volume 100 for the recording, seen $(fast_status)"
  stick_path=$(field path "$(fast_status)")
  wav="$OUT/music/Track ${stick_path##*Stick }"   # Stick N.wav is the host's Track N.wav (hil_make_stick)
  t=$(uptime_s)
  record_stick "$wav" || note "expected what the stick plays recorded from hw:Loopback,1,0 bit for bit in $(basename "$wav"), seen: $RECORDED"
  recorded=$(secs "$t")
  wait_for 20 position_at_least 2 || note "expected the stick to play 2 s, seen $(fast_status)"
  before=$(fast_status)
  t=$(uptime_s)
  host_do usb-pull || note "usb-pull: $HOST_ANSWER"
  # A read that fails before the watcher sees the stick gone must not skip: by the time the
  # player waits for the stick, a skip would have shown in the index.
  wait_for 20 status_is phase waiting || note "expected waiting for music once the stick was pulled, seen $(fast_status)"
  pulled=$(secs "$t")
  wait_for 10 pcm_stopped || note "expected the sound to stop once the stick was pulled"
  after=$(fast_status)
  [ "$(field index "$after")" = "$(field index "$before")" ] && [ "$(field count "$after")" = "$(field count "$before")" ] \
    || note "expected the queue and the track kept (no skip): before the pull $before, after $after"
  kept=$(field position "$after")
  awk -v a="$(field position "$before")" -v k="${kept:-0}" 'BEGIN { exit !(k >= a && k <= a + 10) }' \
    || note "expected the place kept at or just after $(field position "$before") s, seen $kept s"
  [[ "$(prop StatusText)" == *"$STICK"* ]] || note "expected the status to name $STICK, seen '$(prop StatusText)'"
  wait_for 10 test ! -b /dev/sda1 || note "expected /dev/sda1 gone after device_del (monitor: $HOST_ANSWER)"
  wait_for 10 stick_unmounted || note "expected the mount gone with the stick, seen '$(stick_mount)'"
  swipe "$card"
  wait_for 20 playing_path /srv/music/ || note "expected the card to play /srv/music while the stick is out, seen $(fast_status)"
  t=$(uptime_s)
  host_do usb-plug || note "usb-plug again: $HOST_ANSWER"
  wait_for 40 playing_path "$(field path "$after")" || note "expected the stick to play $(field path "$after") again, seen $(fast_status)"
  replugged=$(secs "$t")
  resumed=$(field position "$(fast_status)")
  awk -v k="${kept:-0}" -v r="${resumed:-0}" 'BEGIN { exit !(r >= k - 0.5 && r <= k + 10) }' \
    || note "expected the stick to resume at its bookmark, $kept s, seen $resumed s"
  [ "$(prop MainPID)" = "$pid" ] || note "expected the same jukebox throughout (pid $pid), now $(prop MainPID), NRestarts $(prop NRestarts)"
  # The power cut comes next: a queue that is there at the next boot (the card's folder).
  swipe "$card"
  wait_for 20 playing_path /srv/music/ || note "expected the card to play /srv/music again, seen $(fast_status)"
  echo quit >&"${KEYS[1]}"
  finish "plugged: mounted vfat ${mounted%%,nosuid*} (seen by the service), playing in $plugged s; at $(round "$rec_from") s recorded and compared in $recorded s: $RECORDED in $(basename "$wav"); pulled at $(round "$(field position "$before")") s of track $(field index "$before"): waiting in $pulled s, kept $(round "$kept") s, no skip; card played; plugged back: resumed at $(round "$resumed") s in $replugged s"

  # However long the host takes to cut, the queue must still play then: repeat all (the state
  # file carries it over the cut).
  jukebox ctl --socket "$SOCK" repeat all >/dev/null 2>&1 || echo "hil: jukebox ctl repeat all failed before the cut"
  start_upload_for_power_cut
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
  scenario_upload_power_cut

  # The same package rebuilt as a higher version, installed over the running service. Repeat all
  # first: a mode only the state file carries over a restart (the config says nothing of it), and
  # the queue never runs out however long the upgrade takes under TCG.
  begin deb-upgrade
  deb=jukebox_${VERSION}+hil1_amd64.deb
  t=$(uptime_s)
  jukebox ctl --socket "$SOCK" repeat all >/dev/null 2>&1 || note "jukebox ctl repeat all failed"
  wait_for 10 repeat_is all || note "expected repeat all before the upgrade, seen: $(status_json)"
  pid0=$(prop MainPID)
  cp "$OUT/$deb" /root/
  apt_do install "./$deb" || note "apt install ./$deb failed: $(tail -n 10 /tmp/apt.log)"
  inst=$(dpkg-query -W -f='${Status} ${Version}' jukebox 2>&1)
  [ "$inst" = "install ok installed $VERSION+hil1" ] || note "expected jukebox $VERSION+hil1 installed, dpkg says: $inst"
  wait_for 60 active || note "expected jukebox.service active after the upgrade; seen $(prop ActiveState)/$(prop SubState)"
  pid1=$(prop MainPID)
  if [ "$pid1" = "$pid0" ] || [ "$pid1" = 0 ]; then note "expected the upgrade to restart the service: MainPID $pid0 before, $pid1 after"; fi
  wait_for 30 playing || note "expected it to play on after the upgrade; seen '$(prop StatusText)'"
  # The new process read the state the old one saved at SIGTERM and went on from there: it resumes
  # at the track the old one last started. (Not the track before the upgrade began: apt under TCG
  # takes over a minute, and with repeat all the queue may have wrapped to track 1 meanwhile.)
  wait_for 10 resumed_by "$pid1" || note "expected the new jukebox (pid $pid1) to log 'resuming … from /var/lib/jukebox/state.json'"
  index0=$(journalctl -b "_PID=$pid0" -o cat 2>/dev/null | grep -o 'playing: .*\[[0-9]*/' | tail -n 1 | grep -o '[0-9]*/$' | tr -d /)
  index1=$(journalctl -b "_PID=$pid1" -o cat 2>/dev/null | grep -m1 -o 'resuming .* from /var/lib/jukebox/state.json: track [0-9]*' | grep -o '[0-9]*$')
  [ -n "$index0" ] && [ "$index1" = "$index0" ] || note "expected the new jukebox to resume at the track the old one last started (its journal: track '$index0'), its own journal says track '$index1'"
  repeat_is all || note "expected repeat all kept through the upgrade (only the state file has it), seen: $(status_json)"
  grep -q '"device": "hw:Loopback,0,0"' "$CONFIG" || note "the upgrade replaced the edited conffile: $(cat "$CONFIG")"
  ls /etc/jukebox/*.dpkg-* >/dev/null 2>&1 && note "the upgrade left $(ls /etc/jukebox/*.dpkg-*)"
  finish "$VERSION -> $VERSION+hil1 in $(since "$t") s: MainPID $pid0 -> $pid1, resumed at track $index1 (the old one's last), repeat all kept, conffile kept; $(prop StatusText)"

  begin deb-purge
  t=$(uptime_s)
  apt_do purge jukebox || note "apt purge jukebox failed: $(tail -n 10 /tmp/apt.log)"
  left=()
  for f in /usr/bin/jukebox /usr/lib/systemd/system/jukebox.service /etc/jukebox /var/lib/jukebox \
    /var/lib/private/jukebox /run/jukebox /etc/systemd/system/jukebox.service \
    /etc/systemd/system/multi-user.target.wants/jukebox.service /usr/share/jukebox \
    /etc/systemd/system/jukebox.service.d /usr/lib/systemd/system/jukebox-web.socket \
    /usr/lib/systemd/system/jukebox-web.service /etc/systemd/system/sockets.target.wants/jukebox-web.socket; do
    if [ -e "$f" ] || [ -L "$f" ]; then left+=("$f"); fi
  done
  [ ${#left[@]} -eq 0 ] || note "purge left ${left[*]}"
  dpkg-query -W -f='${Status}' jukebox >/dev/null 2>&1 && note "dpkg still knows jukebox: $(dpkg-query -W -f='${Status}' jukebox)"
  getent passwd jukebox >/dev/null && note "purge left the user jukebox"
  getent group jukebox >/dev/null && note "purge left the group jukebox"
  pgrep -x jukebox >/dev/null && note "jukebox still runs after purge (pid $(pgrep -x jukebox))"
  [ "$(prop LoadState)" = not-found ] || note "expected systemd to know no jukebox.service, seen LoadState $(prop LoadState)"
  # Listening sockets on port 80 (0x0050, state 0A) in the kernel's tables: iproute2 is not in the guest.
  grep -Eq '^ *[0-9]+: [0-9A-F]+:0050 [0-9A-F]+:0000 0A ' /proc/net/tcp /proc/net/tcp6 2>/dev/null && note "something still listens on port 80 after purge"
  [ -n "$(ls /srv/music)" ] || note "purge touched the music in /srv/music"
  finish "binary, unit, config, state, user and group gone, music kept ($(since "$t") s)"
  done_phase
  systemctl poweroff
  ;;
esac
