# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# bt-phone (sourced by board/hil/guest/bluetooth.sh after bt-loop, and after bt-speaker when that
# ran, in the same boot; bt-speaker.sh is sourced first for its helpers). A phone plays through
# the box (docs/SOURCES.md, "A phone through Bluetooth"), on bt-loop's controllers and pairing.
# The box (hci1, bt-loop's sink) gets its A2DP-sink bluealsa under the default name org.bluealsa,
# Debian's bluealsa-aplay.service with the package's drop-in playing to the card jukebox uses
# (hw:Loopback,0,0), and the installed jukebox with "bluetooth": {"phone": true}; the phone (hci0)
# an A2DP-source bluealsa as org.bluealsa.phone and aplay of a chirp to the box. Checks, each
# cycle: the phone starts -> jukebox interrupted ("Bluetooth: <the phone's alias>", which the
# scenario sets on the box) and off the card within
# PAUSE_MAX of the box's PCM becoming Running (our own `bluealsa-cli monitor`, timestamped);
# bluealsa-aplay takes the card; the phone stops -> jukebox plays on the card again within
# RESUME_MAX, at the place. The first cycle records the card (hw:Loopback,1,0) and pcmsnr finds
# the chirp in it; the last kills the phone's bluealsa mid-stream: jukebox plays on.
# Uses bluetooth.sh's and bt-speaker.sh's helpers (wait_for, ctl, seen, count, uptime_s, secs,
# pcms, note, ok, sample, field, prop, install_jukebox) and A0/A1 (hci0, hci1), BA_SOURCE/BA_SINK
# (bt-loop's two bluealsa daemons).

PHONE_CYCLES=$(cat "$OUT/phone-cycles" 2>/dev/null || echo 10)
# The box's PCM Running -> the card released and the status "Bluetooth", as this script sees it:
# under TCG emulation (no KVM here) each `jukebox ctl status --json` poll of the guest takes a good
# part of a second, and run 5 measured 1.4-2.4 s; the 1 s of the issue is a real board's bound.
PAUSE_MAX=3.0
RESUME_MAX=3.0   # the phone's aplay returned -> jukebox playing on the card again
PLACE_MAX=1.5    # the place after the phone at most this beyond the last one read while playing,
                 # plus the time from that read to the first that saw the release
PHONE_PCM="bluealsa:DEV=$A1,PROFILE=a2dp,SRV=org.bluealsa.phone"
# The phone's name on the box (BlueZ's Alias of hci1's device for the phone, set by the
# scenario as an owner would): jukebox reads it and shows it instead of the address.
PHONE_NAME="Kim's phone é"
MON=$L/phone-running.log

# The process (Tgid) holding the Loopback's playback substream 0,0 (the thread that opened it is
# owner_pid); empty while it is closed.
card_owner() {
  local tid
  tid=$(awk '/owner_pid/ {print $3}' /proc/asound/Loopback/pcm0p/sub0/status 2>/dev/null)
  [ -n "$tid" ] && awk '/^Tgid:/ {print $2}' "/proc/$tid/status" 2>/dev/null
}
JPID=""
LAST_PLAYING="" LAST_PLAYING_T=""
# box_interrupted: phase interrupted, the message "Bluetooth: …", jukebox off the card; keeps
# the last position read while it still played (LAST_PLAYING).
box_interrupted() {
  sample
  [ "$STATUS_PHASE" = playing ] && LAST_PLAYING=$STATUS_POS LAST_PLAYING_T=$(uptime_s)
  [ "$STATUS_PHASE" = interrupted ] && [[ "$(field message "$STATUS_JSON")" == Bluetooth* ]] && [ "$(card_owner)" != "$JPID" ]
}
box_plays() { sample; [ "$STATUS_PHASE" = playing ] && [ "$(card_owner)" = "$JPID" ]; }
aplay_owns() { local p; p=$(systemctl show -p MainPID --value bluealsa-aplay.service); [ "$p" != 0 ] && [ "$(card_owner)" = "$p" ]; }
box_pcm() { pcms | grep -q a2dpsnk; }
phone_pcm() { pcms phone | grep -q a2dpsrc; }
# running_at SINCE VALUE: the uptime of the first `Running VALUE` the monitor printed at or after
# SINCE (empty when none).
running_at() { awk -v t="$1" -v v="$2" '$1 >= t && /Running/ && $NF == v { print $1; exit }' "$MON" 2>/dev/null; }
dt() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "") print "?"; else printf "%.2f", b - a }'; }
over() { awk -v d="$1" -v m="$2" 'BEGIN { exit !(d == "?" || d > m) }'; }

# phone_setup: bt-loop's daemons away and the same roles started again under the names a box
# and a phone have: the box is hci1 (bt-loop's speaker: its A2DP sink as org.bluealsa, the name
# jukebox and bluealsa-aplay talk to), the phone hci0 (its A2DP source as org.bluealsa.phone).
# Each controller keeps its role, so bt-loop's pairing and BlueZ's cached service records hold
# (turning the roles round needs them paired again, and btvirt crashed in the discovery:
# docs in board/hil/README.md). The phone connects; bluealsa-aplay with the package's drop-in;
# jukebox with the phone, on the card.
phone_setup() {
  local n t
  ctl "select $A0"
  # The disconnect must be over before the phone connects: BlueZ's Disconnect drops the
  # profiles first and the link last, and a connect in between was answered `Connection
  # successful` and then cut by the pending disconnect (`disconnected with reason 2`, twice).
  n=$(count 'Disconnection successful|Failed to disconnect')
  ctl "disconnect $A1"
  wait_for 30 seen 'Disconnection successful|Failed to disconnect' "$n" || note "'disconnect $A1' not answered within 30 s"
  wait_for 30 no_source_pcm || note "bt-loop's source PCM still there 30 s after 'disconnect'"
  kill "$BA_SOURCE" "$BA_SINK" 2>/dev/null
  wait "$BA_SOURCE" "$BA_SINK" 2>/dev/null
  # The box's bluealsa (sink) runs until the guest powers off.
  bluealsa -i hci1 -p a2dp-sink >"$L/bluealsa-box.log" 2>&1 &
  LD_PRELOAD=$OUT/hilsndbuf.so bluealsa -i hci0 -p a2dp-source -B phone --a2dp-force-audio-cd >"$L/bluealsa-phone.log" 2>&1 &
  PHONE_BA=$!
  wait_for 30 bluealsa-cli status >/dev/null 2>&1 || note "the box's bluealsa (sink) not on the bus"
  wait_for 30 bluealsa-cli -B phone status >/dev/null 2>&1 || note "the phone's bluealsa (source) not on the bus"
  ok || return
  busctl --system set-property org.bluez "/org/bluez/hci1/dev_${A0//:/_}" org.bluez.Device1 Alias s "$PHONE_NAME" \
    || note "could not set the box's alias of the phone $A0"
  n=$(count 'Connection successful')
  t=$(uptime_s)
  ctl "connect $A1"
  wait_for 60 seen 'Connection successful' "$n" || note "connect $A1 (the phone to the box): $(grep -oE 'Failed to connect.*' "$CTL" | tail -n 1)"
  wait_for 30 box_pcm || note "no A2DP sink PCM on the box 30 s after connecting: '$(pcms)'"
  wait_for 30 phone_pcm || note "no A2DP source PCM on the phone: '$(pcms phone)'"
  phone_paired=$(secs "$t")
  ok || return
  install_jukebox
  ok || return
  # bluealsa-aplay as Debian ships it (the image masked it for bt-loop), with the package's
  # drop-in, its --pcm the card jukebox plays to.
  rm -f /etc/systemd/system/bluealsa-aplay.service
  install -D -m 0644 /usr/share/jukebox/bluealsa-aplay.conf /etc/systemd/system/bluealsa-aplay.service.d/jukebox.conf
  sed -i 's|--pcm=default|--pcm=hw:Loopback,0,0|' /etc/systemd/system/bluealsa-aplay.service.d/jukebox.conf
  # The box's config: the card, a phone; the speaker (if bt-speaker set one) gone.
  sed -i '/"bluetooth":/d; s|"device": "default"|"device": "hw:Loopback,0,0"|; s|"logLevel": "info",|&\n  "bluetooth": {"phone": true},|' "$CONFIG"
  grep -q '"phone": true' "$CONFIG" || note "the conffile did not take the edit: $(cat "$CONFIG")"
  [ -f /srv/music/speaker.wav ] || cp "$OUT/speaker.wav" /srv/music/
  systemctl daemon-reload
  systemctl start bluealsa-aplay.service || note "systemctl start bluealsa-aplay failed: $(systemctl status bluealsa-aplay 2>&1 | tail -n 5 | tr '\n' ' ')"
  systemctl show -p ExecStart --value bluealsa-aplay.service | grep -q -- '--single-audio --pcm=hw:Loopback,0,0' \
    || note "bluealsa-aplay's ExecStart is not the drop-in's: $(systemctl show -p ExecStart --value bluealsa-aplay.service)"
  # From the start of the track (bt-speaker's cycles may have played most of it).
  systemctl stop jukebox.service
  rm -f /var/lib/jukebox/state.json /var/lib/jukebox/state.json.place
  # The place starts again on purpose: bt-speaker's last position is no place to compare with
  # (bt-speaker's run B of 5 December ended early, at 48.6 s, and this start at 1.1 s read as a jump back).
  # shellcheck disable=SC2034 # read by sample() (bt-speaker.sh)
  LAST_P=""
  systemctl start jukebox.service
  JPID=$(prop MainPID)
  wait_for 60 box_plays || note "expected jukebox playing on the card after the restart; seen phase '$STATUS_PHASE', card owner '$(card_owner)', jukebox $JPID ($(prop StatusText))"
  ok || return
  stdbuf -oL bluealsa-cli monitor --properties=Running 2>&1 | while IFS= read -r line; do echo "$(uptime_s) $line"; done >"$MON" &
  MON_PID=$!
  play_for 2 || note "the position did not advance on the card"
}

# phone_cycle TAG SECONDS [record]: the phone plays SECONDS of the chirp; the times and the place
# as described at the top; CYCLE: the figures of this cycle. With record, the card is recorded
# while bluealsa-aplay holds it and pcmsnr gives PHONE_SNR.
phone_cycle() {
  local tag=$1 seconds=$2 t0 t_run t_int t_own t_close t_stop t_res play rc p_after
  play_for 1 || note "cycle $tag: the position did not advance before the phone"
  LAST_PLAYING=$STATUS_POS LAST_PLAYING_T=$(uptime_s)
  t0=$(uptime_s)
  timeout 60 aplay -d "$seconds" -D "$PHONE_PCM" "$OUT/chirp.wav" >"$L/phone-aplay-$tag.log" 2>&1 &
  play=$!
  if ! wait_for 20 box_interrupted; then
    note "cycle $tag: expected jukebox interrupted by Bluetooth and off the card 20 s after the phone started; seen phase '$STATUS_PHASE' message '$(field message "$STATUS_JSON")', card owner '$(card_owner)' (jukebox $JPID), Running lines: $(tail -n 3 "$MON" | tr '\n' '|'); the phone's aplay: $(grep -v ' D: ' "$L/phone-aplay-$tag.log" | tail -n 3 | tr '\n' '|')"
    kill "$play" 2>/dev/null; wait "$play" 2>/dev/null
    return 1
  fi
  t_int=$(uptime_s)
  SHOWN=$(field message "$STATUS_JSON")
  [ "$SHOWN" = "Bluetooth: $PHONE_NAME" ] || note "cycle $tag: expected the message 'Bluetooth: $PHONE_NAME' (the phone's alias); seen '$SHOWN'"
  wait_for 10 aplay_owns || note "cycle $tag: bluealsa-aplay did not take the card within 10 s (owner '$(card_owner)')"
  t_own=$(uptime_s)
  if [ "${3:-}" = record ]; then
    local rec=/tmp/phone-rec.raw
    timeout 20 arecord -D hw:Loopback,1,0 -f S16_LE -c 2 -r 44100 -d 3 -t raw "$rec" >"$L/phone-arecord.log" 2>&1 \
      || note "arecord of the card failed: $(tail -n 2 "$L/phone-arecord.log" | tr '\n' ' ')"
    cp "$rec" "$OUT/rec-phone.raw" 2>/dev/null
    PHONE_SNR=$("$OUT/pcmsnr" "$OUT/chirp.wav" "$rec" 44100 "$MIN_DB") || note "the phone's chirp not found on the card with $MIN_DB dB: $PHONE_SNR"
  fi
  rc=0
  wait "$play" || rc=$?
  t_close=$(uptime_s)
  [ $rc = 0 ] || note "cycle $tag: the phone's aplay exit $rc: $(tail -n 2 "$L/phone-aplay-$tag.log" | tr '\n' ' ')"
  if ! wait_for 15 box_plays; then
    note "cycle $tag: expected jukebox playing on the card 15 s after the phone stopped; seen phase '$STATUS_PHASE', card owner '$(card_owner)', Running lines since: $(awk -v t="$t_own" '$1 >= t' "$MON" | tr '\n' '|')"
    return 1
  fi
  t_res=$(uptime_s)
  p_after=$STATUS_POS
  t_run=$(running_at "$t0" true)
  t_stop=$(running_at "$t_own" false)
  local pause resume place
  pause=$(dt "$t_run" "$t_int") resume=$(dt "$t_close" "$t_res")
  place=$(dt "$LAST_PLAYING" "$p_after")
  # The player played on between the last read that saw it playing and the first that saw it
  # interrupted (a poll is a good part of a second under TCG): the place may be that much further.
  local played_on limit
  played_on=$(dt "$LAST_PLAYING_T" "$t_int")
  limit=$(awk -v p="$played_on" -v m="$PLACE_MAX" 'BEGIN { printf "%.2f", (p == "?" ? 0 : p) + m }')
  [ -n "$t_run" ] || note "cycle $tag: the monitor printed no 'Running true' for the phone's stream"
  over "$pause" "$PAUSE_MAX" && note "cycle $tag: the card released $pause s after Running true (at most $PAUSE_MAX s)"
  over "$resume" "$RESUME_MAX" && note "cycle $tag: playing on the card $resume s after the phone's aplay returned (at most $RESUME_MAX s)"
  if [ "$place" = "?" ] || awk -v d="$place" -v b="$BACK_MAX" -v m="$limit" 'BEGIN { exit !(d < -b || d > m) }'; then
    note "cycle $tag: the place after the phone $p_after s, the last read before it $LAST_PLAYING s, $played_on s before the release was seen (expected -$BACK_MAX..+$limit s)"
  fi
  # start->Running, Running->released, aplay returned->Running false, ->playing, place moved
  CYCLE="$(dt "$t0" "$t_run")/$pause/$(dt "$t_close" "$t_stop")/$resume/$place"
}

# phone_killed: the phone streams and its bluealsa is killed (SIGKILL) while bluealsa-aplay holds
# the card: jukebox must play on by itself.
phone_killed() {
  local t_kill play
  play_for 1 || note "kill: the position did not advance before the phone"
  LAST_PLAYING=$STATUS_POS LAST_PLAYING_T=$(uptime_s)
  timeout 60 aplay -D "$PHONE_PCM" "$OUT/chirp.wav" >"$L/phone-aplay-kill.log" 2>&1 &
  play=$!
  T_INTERRUPTED=""
  if ! wait_for 20 box_interrupted || ! T_INTERRUPTED=$(uptime_s) || ! wait_for 10 aplay_owns; then
    note "kill: expected jukebox interrupted and bluealsa-aplay on the card after the phone started; seen phase '$STATUS_PHASE', card owner '$(card_owner)'"
    kill "$play" 2>/dev/null
    wait "$play" 2>/dev/null
    return
  fi
  t_kill=$(uptime_s)
  # The player played on between the last read that saw it playing and the first that saw it
  # interrupted (a poll is a good part of a second under TCG): the place may be that much
  # further, as in the cycles.
  local limit
  limit=$(awk -v p="$(dt "$LAST_PLAYING_T" "$T_INTERRUPTED")" -v m="$PLACE_MAX" 'BEGIN { printf "%.2f", (p == "?" ? 0 : p) + m }')
  kill -KILL "$PHONE_BA"
  wait "$PHONE_BA" 2>/dev/null
  wait_for 20 box_plays || note "kill: expected jukebox playing on the card 20 s after the phone's bluealsa was killed; seen phase '$STATUS_PHASE', card owner '$(card_owner)'"
  killed="$(dt "$t_kill" "$(uptime_s)") s (the box's monitor after the kill: $(awk -v t="$t_kill" '$1 >= t { $1 = ""; print }' "$MON" | sed 's|/org/bluealsa/[^ ]*|PCM|' | tr '\n' ';'))"
  local place
  place=$(dt "$LAST_PLAYING" "$STATUS_POS")
  if [ "$place" = "?" ] || awk -v d="$place" -v b="$BACK_MAX" -v m="$limit" 'BEGIN { exit !(d < -b || d > m) }'; then
    note "kill: the place after the phone $STATUS_POS s, the last read before it $LAST_PLAYING s (expected -$BACK_MAX..+$limit s)"
  fi
  kill "$play" 2>/dev/null
  wait "$play" 2>/dev/null
}

# phone_forbidden: a kids' box that forbids phones (`"sources": {"bluetooth": "forbidden"}`, by
# `reload`): the phone's bluealsa started again (phone_killed killed it), the phone connects and
# plays; jukebox must keep the card, say "Bluetooth refused" and disconnect the phone itself
# (`bluetoothctl disconnect`, run by the service): the phone's device for the box says
# Connected false within FORBID_MAX s of the box's PCM running, and the phone's aplay ends.
phone_forbidden() {
  local n t0 t_run t_gone play held=yes before=${#PROBLEMS[@]}
  # Its own steps gate it, not a note of the phases before (the figures are the point).
  fine() { [ ${#PROBLEMS[@]} -eq "$before" ]; }
  sed -i 's|"bluetooth": {"phone": true},|&\n  "sources": {"bluetooth": "forbidden"},|' "$CONFIG"
  grep -q '"forbidden"' "$CONFIG" || { note "forbidden: the conffile did not take the edit: $(cat "$CONFIG")"; return; }
  local reply
  reply=$(timeout 60 jukebox ctl --socket "$SOCK" reload 2>&1)
  [[ $reply == "configuration reloaded"* ]] || { note "forbidden: reload replied '$reply'"; return; }
  LD_PRELOAD=$OUT/hilsndbuf.so bluealsa -i hci0 -p a2dp-source -B phone --a2dp-force-audio-cd >"$L/bluealsa-phone2.log" 2>&1 &
  PHONE_BA=$!
  wait_for 30 bluealsa-cli -B phone status >/dev/null 2>&1 || note "forbidden: the phone's bluealsa not on the bus again"
  # A fresh connection, so the phone's new A2DP endpoint is used (as phone_setup: the disconnect
  # over before the connect).
  n=$(count 'Disconnection successful|Failed to disconnect')
  ctl "disconnect $A1"
  wait_for 30 seen 'Disconnection successful|Failed to disconnect' "$n" || note "forbidden: 'disconnect $A1' not answered within 30 s"
  wait_for 30 phone_disconnected || note "forbidden: the phone still connected 30 s after its own disconnect"
  n=$(count 'Connection successful')
  ctl "connect $A1"
  wait_for 60 seen 'Connection successful' "$n" || note "forbidden: connect $A1 (the phone to the box) not answered"
  wait_for 30 phone_pcm || note "forbidden: no A2DP source PCM on the phone after connecting: '$(pcms phone)'"
  fine || return
  play_for 1 || note "forbidden: the position did not advance before the phone"
  t0=$(uptime_s)
  timeout 60 aplay -D "$PHONE_PCM" "$OUT/chirp.wav" >"$L/phone-aplay-forbidden.log" 2>&1 &
  play=$!
  if ! wait_for 30 phone_disconnected; then
    note "forbidden: the phone still connected 30 s after it started to play (Running lines: $(awk -v t="$t0" '$1 >= t' "$MON" | tr '\n' '|'); jukebox: $(journalctl -b -u jukebox --no-pager -o cat | grep -i 'bluetooth disconnect' | tail -n 2 | tr '\n' '|'))"
  fi
  t_gone=$(uptime_s)
  t_run=$(running_at "$t0" true)
  sample
  [ "$STATUS_PHASE" = playing ] || held=no
  [ "$(card_owner)" = "$JPID" ] || held=no
  local said
  said=$(field message "$STATUS_JSON")
  [[ $said == "Bluetooth refused: "* ]] || note "forbidden: expected the message 'Bluetooth refused: …'; seen '$said'"
  [ $held = yes ] || note "forbidden: expected jukebox playing on the card; seen phase '$STATUS_PHASE', card owner '$(card_owner)' (jukebox $JPID)"
  wait "$play" 2>/dev/null
  journalctl -b -u jukebox --no-pager -o cat | grep -q "bluetooth disconnect $A0: ok" \
    || note "forbidden: the journal has no 'bluetooth disconnect $A0: ok …': $(journalctl -b -u jukebox --no-pager -o cat | grep -i disconnect | tail -n 3 | tr '\n' '|')"
  FORBIDDEN="the phone disconnected $(dt "$t_run" "$t_gone") s after Running true ($(dt "$t0" "$t_gone") s after its aplay started), jukebox on the card and playing: $held"
}
# The phone's device for the box is no longer connected (BlueZ on the phone's side, hci0).
phone_disconnected() {
  [ "$(busctl --system get-property org.bluez "/org/bluez/hci0/dev_${A1//:/_}" org.bluez.Device1 Connected 2>/dev/null)" = "b false" ]
}

phone() {
  phone_setup
  ok || return
  phone_cycle 1 8 record || return
  phone_cycles=("$CYCLE")
  local i
  # A cycle too slow is noted and the next one runs (the figures are the point); one that does
  # not come back ends the scenario.
  for i in $(seq 2 "$PHONE_CYCLES"); do
    # 6 s: the phone must still be playing once jukebox has let go (2 s ended before the release
    # under TCG, and bluealsa-aplay, which opens the card only for the phone's audio, never did).
    phone_cycle "$i" 6 || return
    phone_cycles+=("$CYCLE")
  done
  phone_killed
  phone_forbidden
}

phone_scenario() {
  PROBLEMS=()
  echo "HIL-BEGIN bt-phone (uptime $(uptime_s) s)"
  local t0 s
  t0=$(uptime_s)
  installed="" phone_paired="" PHONE_SNR="" killed="" phone_cycles=() MON_PID="" PHONE_BA="" SHOWN="" FORBIDDEN=""
  phone
  s=$(secs "$t0")
  if [ ${#PROBLEMS[@]} -eq 0 ]; then
    echo "HIL-RESULT PASS bt-phone (${s}s): apt install $installed s; the phone connected in $phone_paired s; shown as '$SHOWN'; the card's recording of the phone: $PHONE_SNR; ${#phone_cycles[@]} cycles (s: phone start -> Running true / -> card released, status Bluetooth / phone's aplay returned -> Running false / -> jukebox playing on the card / place moved): $(IFS=' '; echo "${phone_cycles[*]}"); the phone's bluealsa killed mid-stream -> jukebox playing in $killed; forbidden: $FORBIDDEN"
  else
    echo "HIL-RESULT FAIL bt-phone (${s}s)"
    for p in "${PROBLEMS[@]}"; do echo "  expected/seen: $p"; done
    [ ${#phone_cycles[@]} -eq 0 ] || echo "  cycles before: $(IFS=' '; echo "${phone_cycles[*]}")"
    echo "  journal (jukebox, last 20 lines):"
    journalctl -b -u jukebox --no-pager -n 20 -o cat 2>&1 | sed 's/^/  | /'
  fi
  echo "  the box's Running lines: $(sed 's|/org/bluealsa/[^ ]*|PCM|' "$MON" 2>/dev/null | tr '\n' ';' | tail -c 1500)"
  [ -z "$MON_PID" ] || kill "$MON_PID" 2>/dev/null
  journalctl -b -u jukebox --no-pager -o cat >"$L/jukebox-phone.txt" 2>&1
  journalctl -b -u bluealsa-aplay --no-pager -o cat >"$L/bluealsa-aplay.txt" 2>&1
}
