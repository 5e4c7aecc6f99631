# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# bt-speaker (sourced by board/hil/guest/bluetooth.sh after bt-loop, in the same boot: it needs
# bt-loop's controllers, pairing and the two bluealsa daemons). The installed jukebox service (the
# .deb, `apt install` as deb-install does) plays to the speaker: its bluealsa-cli talks to the
# source's daemon (the default name org.bluealsa, on hci0), its config names hci1 as the speaker
# and the Loopback as the card; the sink's daemon (org.bluealsa.sink) is recorded with arecord.
# Checks: connected → `"output":"bluetooth"` and the recording is the track (pcmsnr: SNR, and
# the place it starts at, which must be where the move happened); then SPEAKER_CYCLES times
# disconnect (→ "card", playing on) and connect (→ "bluetooth"); every status sample's position
# never goes back by more than the card's buffer (1 s) and never ahead of the time passed; the
# speaker's buttons and its own volume both ways (avrcp_buttons, avrcp_volume).
# Uses bluetooth.sh's helpers (wait_for, ctl, seen, count, uptime_s, secs, pcms, note, ok) and
# A0/A1/A2 (hci0, hci1, hci2).

SOCK=/run/jukebox/control
CONFIG=/etc/jukebox/config.json
RATE=44100
BACK_MAX=1.2   # the card's buffer is a second; a little more for the sampling
SPEAKER_CYCLES=$(cat "$OUT/speaker-cycles" 2>/dev/null || echo 20)
prop() { systemctl show -p "$1" --value jukebox.service; }
field() { grep -o "\"$1\":\(\"[^\"]*\"\|[^,}]*\)" <<<"$2" | head -n 1 | cut -d: -f2- | tr -d '"'; }
# sample: one `status --json` through hilctl (C; a Swift client takes seconds to start under
# TCG); STATUS_JSON, STATUS_OUTPUT, STATUS_PHASE, STATUS_POS set; each sample is checked against the one
# before: back by at most BACK_MAX, ahead by at most the uptime from before the read before to
# after this one + 0.3 s.
LAST_T="" LAST_TB="" LAST_P=""
SAMPLES=$L/speaker-samples.txt
sample() {
  local j t p tb
  # The clock before and after the read: the player's position lies between them, and a guest
  # stalled between its answer and the clock read after it (5 December, run C: 8.5 s between two reads)
  # would otherwise show the position ahead of the clock.
  tb=$(uptime_s)
  j=$("$OUT/hilctl" "$SOCK" status --json 2>/dev/null | tail -n 1)
  t=$(uptime_s)
  STATUS_JSON=$j STATUS_OUTPUT=$(field output "$j") STATUS_PHASE=$(field phase "$j") STATUS_POS=$(field position "$j")
  p=$STATUS_POS
  echo "$t $p $STATUS_OUTPUT $STATUS_PHASE" >>"$SAMPLES"
  [ -n "$p" ] || return 0
  if [ -n "$LAST_P" ]; then
    local bad
    bad=$(awk -v t0="$LAST_TB" -v p0="$LAST_P" -v t="$t" -v p="$p" -v b="$BACK_MAX" \
      'BEGIN { if (p < p0 - b) printf "back %.2f s", p0 - p; else if (p > p0 + (t - t0) + 0.3) printf "ahead %.2f s in %.2f s", p - p0, t - t0 }')
    [ -z "$bad" ] || note "position $LAST_P -> $p between uptime $LAST_T and $t: $bad (cycle ${i:-0})"
  fi
  LAST_T=$t LAST_TB=$tb LAST_P=$p
}
output_is() { sample; [ "$STATUS_OUTPUT" = "$1" ] && [ "$STATUS_PHASE" = playing ]; }
# play_for SECONDS: samples while it plays; false when the position did not advance by half of it.
play_for() {
  local p0 end
  sample
  p0=$STATUS_POS
  end=$(awk -v a="$(uptime_s)" -v s="$1" 'BEGIN { print a + s }')
  while awk -v a="$(uptime_s)" -v e="$end" 'BEGIN { exit !(a < e) }'; do sleep 0.2; sample; done
  awk -v a="${p0:-0}" -v b="${STATUS_POS:-0}" -v s="$1" 'BEGIN { exit !(b - a >= s / 2) }'
}
sink_pcm() { [ -n "$(pcms sink)" ]; }

# diagnose_monitor: why jukebox's `bluealsa-cli monitor` ends (it runs with stderr on
# /dev/null): the player's command (setpriv --pdeathsig TERM -- bluealsa-cli monitor) under the
# installed unit's whole sandbox (its [Service] lines as systemd-run properties), without
# setpriv, and leaving out one sandbox line at a time; 4 s each. Logged, and in the failure.
diagnose_monitor() {
  local f=$L/monitor-diagnosis.txt line props=() i
  while IFS= read -r line; do
    case $line in
      '[Service]') props=(); continue ;;
      '[Install]') break ;;
      ''|'#'*|'['*|Type=*|NotifyAccess=*|Exec*|Watchdog*|Timeout*|Restart*|*Directory*|Description=*|Documentation=*|Wants=*|After=*) continue ;;
    esac
    props+=("$line")
  done </usr/lib/systemd/system/jukebox.service
  run_with() {
    local a=() q
    for q in "$@"; do a+=(-p "$q"); done
    timeout 30 systemd-run --quiet --wait --pipe "${a[@]}" "${CMD[@]}" 2>&1 </dev/null
    echo "exit $?"
  }
  {
    CMD=(/usr/bin/timeout 4 /usr/bin/setpriv --pdeathsig TERM -- /usr/bin/bluealsa-cli monitor)
    echo "== all ${#props[@]} lines, setpriv"; run_with "${props[@]}"
    CMD=(/usr/bin/timeout 4 /usr/bin/bluealsa-cli monitor)
    echo "== all lines, no setpriv"; run_with "${props[@]}"
    CMD=(/usr/bin/timeout 4 /usr/bin/setpriv --pdeathsig TERM -- /usr/bin/bluealsa-cli monitor)
    for i in "${!props[@]}"; do
      echo "== without '${props[$i]}'"
      run_with "${props[@]:0:$i}" "${props[@]:$((i + 1))}"
    done
  } >"$f" 2>&1
  note "monitor diagnosis: $(tr '\n' '|' <"$f")"
}

# cycle_half COMMAND PATTERN OUTPUT: one half of a disconnect/connect cycle: COMMAND to
# bluetoothctl, then the status's output OUTPUT (playing) and one more PATTERN line of
# bluetoothctl, each within 30 s; then a second of play. STEP: the seconds from COMMAND to OUTPUT.
cycle_half() {
  local n t
  n=$(count "$2")
  t=$(uptime_s)
  ctl "$1"
  wait_for 30 output_is "$3" || note "cycle $i: expected output $3 30 s after '$1'; seen '$STATUS_OUTPUT' phase '$STATUS_PHASE'"
  STEP=$(secs "$t")
  wait_for 30 seen "$2" "$n" || note "cycle $i: '$1' not done within 30 s"
  play_for 1 || note "cycle $i: the position did not advance on output $3"
}

# install_jukebox: the package from the run folder, `apt install` as deb-install does (once a
# boot: bt-phone after bt-speaker finds it installed); `installed`: the seconds it took.
install_jukebox() {
  local deb version t
  if dpkg -s jukebox >/dev/null 2>&1; then installed="(installed before)"; return; fi
  version=$(cat "$OUT/deb-version")
  deb=jukebox_${version}_amd64.deb
  cp "$OUT/$deb" /root/
  t=$(uptime_s)
  (cd /root && DEBIAN_FRONTEND=noninteractive apt install -y "./$deb") >"$L/apt.log" 2>&1 \
    || note "apt install ./$deb failed: $(tail -n 5 "$L/apt.log" | tr '\n' ' ')"
  installed=$(secs "$t")
  id -nG jukebox 2>/dev/null | grep -qw audio || note "user jukebox not in group audio: $(id jukebox 2>&1)"
}

# pair_with_jukebox: the box pairs and trusts a speaker with the installed player's own command
# (`jukebox ctl bluetooth pair|trust`, issue 31), not with the scenario's bluetoothctl: hci2, a
# second speaker this boot has never paired (btvirt's third controller), made discoverable and
# pairable, so the player must discover it. Not hci1: making the box and hci1 pair again broke
# the emulation every time (runs 2 and 4: hci1's BlueZ dropped the link right after the bonding
# and the guest's kernel hit a list corruption in hci_chan_del that killed bluetoothd; run 5,
# hci1 keeping its key: btvirt died; board/hil/README.md). The played speaker (hci1) keeps
# bt-loop's pairing. PAIRED: "ctl's wall time (its reply)".
# What the box's adapter (hci0) knows of a device, through BlueZ's objects: a one-shot
# bluetoothctl asks BlueZ's default adapter, which with three is whichever registered first
# (hci2 in 5 December's run A: its `info` knew neither speaker, so these checks saw nothing).
# box_prop ADDRESS PROPERTY: Device1's PROPERTY as busctl prints it (`b true`, `s "name"`).
box_prop() { busctl get-property org.bluez "/org/bluez/hci0/dev_${1//:/_}" org.bluez.Device1 "$2" 2>&1; }
unknown() { ! busctl get-property org.bluez "/org/bluez/hci0/dev_${1//:/_}" org.bluez.Device1 Paired >/dev/null 2>&1; }
paired_trusted() { [ "$(box_prop "$1" Paired)" = "b true" ] && [ "$(box_prop "$1" Trusted)" = "b true" ]; }
pair_with_jukebox() {
  local c t reply
  PAIRED=""
  for c in "select $A2" "power on" "pairable on" "discoverable on" "select $A0"; do
    ctl "$c"
    sleep 0.5
  done
  # The player's bluetoothctl uses BlueZ's first adapter as its default, which with three is
  # whichever registered first (run 8: hci2, which then scanned for itself).
  bluetoothctl list >"$L/bluetoothctl-list.txt" 2>&1
  unknown "$A2" || note "the box knows $A2 before the player paired it: Paired $(box_prop "$A2" Paired)"
  ok || return
  t=$(uptime_s)
  reply=$(timeout 120 jukebox ctl --socket "$SOCK" bluetooth pair "$A2" 2>&1)
  PAIRED="$(secs "$t") s ($reply)"
  echo "pair: $PAIRED" >>"$L/jukebox-ctl.txt"
  case $reply in
    "bluetooth pair: Pairing successful (found after "*) ;;
    *) note "expected 'jukebox ctl bluetooth pair $A2' to discover and pair; replied: $reply (a one-shot bluetoothctl's default controller: $(grep default "$L/bluetoothctl-list.txt"))"; return ;;
  esac
  reply=$(timeout 60 jukebox ctl --socket "$SOCK" bluetooth trust "$A2" 2>&1)
  echo "trust: $reply" >>"$L/jukebox-ctl.txt"
  [[ $reply == "bluetooth trust: trusted on hci"* ]] || note "expected 'jukebox ctl bluetooth trust $A2' to succeed; replied: $reply"
  wait_for 10 paired_trusted "$A2" || note "after pair and trust, the box's $A2: Paired $(box_prop "$A2" Paired), Trusted $(box_prop "$A2" Trusted)"
  # Paired already: fine, and nothing run but bluetoothctl's `info`.
  reply=$(timeout 60 jukebox ctl --socket "$SOCK" bluetooth pair "$A2" 2>&1)
  echo "pair again: $reply" >>"$L/jukebox-ctl.txt"
  [ "$reply" = "bluetooth pair: already paired" ] || note "a second pair of $A2 replied: $reply"
}

# forget_with_jukebox: `jukebox ctl bluetooth forget` of hci2 right after its pairing (hci2 never
# plays; done before the move and the cycles, so it is checked even when their timing fails on a
# loaded host, as in runs 6 and 7): BlueZ no longer knows hci2 (within 10 s), the player plays on
# the card; a second forget says no adapter knows it.
# FORGOTTEN: "wall time (its reply)".
forget_with_jukebox() {
  local t reply
  FORGOTTEN=""
  t=$(uptime_s)
  reply=$(timeout 60 jukebox ctl --socket "$SOCK" bluetooth forget "$A2" 2>&1)
  echo "forget: $reply" >>"$L/jukebox-ctl.txt"
  [[ $reply == "bluetooth forget: "* ]] || note "expected 'jukebox ctl bluetooth forget $A2' to succeed; replied: $reply"
  wait_for 10 unknown "$A2" || note "BlueZ still knows $A2 10 s after the forget"
  FORGOTTEN="$(secs "$t") s ($reply)"
  output_is card || note "expected playing on the card after forgetting $A2; seen '$STATUS_OUTPUT' phase '$STATUS_PHASE'"
  reply=$(timeout 60 jukebox ctl --socket "$SOCK" bluetooth forget "$A2" 2>&1)
  echo "forget again: $reply" >>"$L/jukebox-ctl.txt"
  [[ $reply == *"$A2 is known to none of hci"* ]] || note "a second forget of $A2 replied: $reply"
}

speaker() {
  local t
  # The speaker away first: the service starts on the card. The disconnect must be answered
  # before anything connects again (bt-phone found a pending one cutting the next connection;
  # here the apt install between the two happened to hide it).
  local n
  n=$(count 'Disconnection successful|Failed to disconnect')
  ctl "disconnect $A1"
  wait_for 30 seen 'Disconnection successful|Failed to disconnect' "$n" || note "'disconnect $A1' not answered within 30 s"
  wait_for 30 no_source_pcm || note "the speaker's PCM still there 30 s after 'disconnect'"
  install_jukebox
  ok || return
  # The box's config as its user would edit it: the Loopback card, the speaker, one known track.
  # "input": ["AVRCP"]: the speaker's buttons, BlueZ's uinput device "<speaker's name> (AVRCP)".
  # "adapter": the box's own (hci0): with three controllers BlueZ's default one is whichever
  # registered first (5 December, run A: hci2, the speaker the player was to find, which then scanned for
  # itself); the pair selects it, trust and forget go through its objects.
  sed -i "s|\"device\": \"default\"|\"device\": \"hw:Loopback,0,0\"|; s|\"logLevel\": \"info\",|&\n  \"bluetooth\": {\"speaker\": \"$A1\", \"adapter\": \"$A0\"},\n  \"input\": [\"AVRCP\"],|" "$CONFIG"
  grep -q "\"speaker\": \"$A1\", \"adapter\": \"$A0\"" "$CONFIG" || note "the conffile did not take the edit: $(cat "$CONFIG")"
  grep -q '"input": \["AVRCP"\]' "$CONFIG" || note "the conffile did not take the input edit: $(cat "$CONFIG")"
  cp "$OUT/speaker.wav" /srv/music/
  # A second track (the same sound, a hard link) for the speaker's Next and Previous.
  ln -f /srv/music/speaker.wav /srv/music/speaker2.wav
  systemctl restart jukebox.service
  wait_for 60 output_is card || note "expected playing on the card after the restart; seen output '$STATUS_OUTPUT' phase '$STATUS_PHASE' ($(prop StatusText))"
  "$OUT/hilctl" "$SOCK" volume 100 >/dev/null || note "volume 100 through the control socket failed"
  ok || return
  # The pairing by the player is a part of its own: when it fails (run 8's one-shot bluetoothctl
  # scanning with the very controller it looks for, BLUETOOTH.md "Not yet"), the play to the
  # speaker, its buttons and the cycles are still tried; the failure stays in the result.
  pair_with_jukebox
  ok && forget_with_jukebox
  # Unless the emulation itself died in it (run 4 of branch avrcp: btvirt's segfault mid-pair).
  kill -0 "$BTVIRT" 2>/dev/null || { note "btvirt (pid $BTVIRT) died during the pairing: the emulation is gone"; return; }
  local pairing=("${PROBLEMS[@]}")
  PROBLEMS=()
  speaker_play
  # whenGone pause is the player's rule, not the emulation's sound: tried whenever the play is
  # on the speaker, also when the recording or the cycles failed before it (5 December, runs B and D: the
  # recording's SNR 7.5 and 8.7 dB, a stalled guest's SBC stream).
  local played=("${PROBLEMS[@]}")
  PROBLEMS=()
  if output_is bluetooth; then gone_pause; else note "whenGone pause not tried: not playing on the speaker (output '$STATUS_OUTPUT', phase '$STATUS_PHASE')"; fi
  PROBLEMS=("${pairing[@]}" "${played[@]}" "${PROBLEMS[@]}")
}

# speaker_play: the move to the speaker, its recording, its buttons and the cycles.
speaker_play() {
  local t
  play_for 2 || note "the position did not advance on the card"
  # The move: arecord on the sink as soon as its PCM is there (before the player's first frames
  # reach it, so the recording's first sound is the place the move started from).
  local before rec=/tmp/speaker-rec.raw pid
  sample
  before=$STATUS_POS
  t=$(uptime_s)
  ctl "connect $A1"
  wait_for 30 sink_pcm || note "no sink PCM 30 s after 'connect'"
  timeout 60 arecord -D "bluealsa:DEV=$A0,PROFILE=a2dp,SRV=org.bluealsa.sink" -f S16_LE -c 2 -r $RATE -t raw "$rec" >"$L/arecord-speaker.log" 2>&1 &
  pid=$!
  wait_for 30 output_is bluetooth || { note "expected output bluetooth 30 s after 'connect'; seen '$STATUS_OUTPUT' phase '$STATUS_PHASE'"; diagnose_monitor; }
  moved=$(secs "$t")
  local first_bt=$STATUS_POS
  play_for 4 || note "the position did not advance on the speaker"
  kill -INT $pid 2>/dev/null; wait $pid
  cp "$rec" "$OUT/rec-speaker.raw" 2>/dev/null
  ok || return
  # pcmsnr against a window of the track around the move (the whole 5 min would need a 2^24-point
  # FFT: too much memory for the guest): from 3 s before the place before the move, 12 s long.
  local w0 f
  w0=$(awk -v p="$before" 'BEGIN { w = int(p - 3); print (w < 0 ? 0 : w) }')
  dd if="$OUT/speaker.raw" of=/tmp/window.raw bs=$((RATE * 4)) skip="$w0" count=12 status=none
  SNR=$("$OUT/pcmsnr" /tmp/window.raw "$rec" $RATE "$MIN_DB")
  echo "$SNR" >"$L/pcmsnr-speaker.txt"
  f=$(grep -o 'from source frame [0-9]*' <<<"$SNR" | grep -o '[0-9]*$')
  snr=$(grep -o '^snr [0-9.-]*' <<<"$SNR" | grep -o '[0-9.-]*$')
  if [ -z "$f" ] || ! awk -v s="$snr" -v m="$MIN_DB" 'BEGIN { exit !(s >= m) }'; then
    note "expected the recording to be the track with at least $MIN_DB dB overall; pcmsnr: $SNR"
    return
  fi
  at=$(awk -v w="$w0" -v f="$f" -v r=$RATE 'BEGIN { printf "%.3f", w + f / r }')
  # The speaker's first sound is the place heard on the card when it moved: not before the
  # position read before 'connect' by more than the card's buffer (a jump back), and normally
  # not after the first position read on the speaker. The sink's PCM gives no silence before the
  # stream, so an arecord that opened late (a loaded guest) only loses the start: said, not failed.
  awk -v a="$at" -v b="$before" -v m="$BACK_MAX" 'BEGIN { exit !(a >= b - m) }' \
    || note "expected the speaker's first sound at most $BACK_MAX s before $before s of the track (the position before 'connect'), found at $at s"
  if awk -v a="$at" -v c="$first_bt" 'BEGIN { exit !(a <= c + 0.1) }'; then
    place="the speaker's first sound at $at s of the track (position $before s before 'connect', $first_bt s when first read on the speaker)"
  else
    place="the recording starts at $at s of the track, after the first position read on the speaker ($first_bt s): arecord opened late"
  fi
  # The speaker's buttons and volume, on the speaker, before the cycles (whose timing on a loaded
  # host fails more often than anything else).
  avrcp_buttons
  avrcp_volume
  ok || return
  local n=${SPEAKER_CYCLES:-20} off on
  for i in $(seq 1 "$n"); do
    ok || return
    cycle_half "disconnect $A1" 'Disconnection successful' card
    off=$STEP
    cycle_half "connect $A1" 'Connection successful' bluetooth
    on=$STEP
    speaker_cycles+=("$off/$on")
  done
  sample
  last_pos=$STATUS_POS
}

# gone_pause: `whenGone: pause` and the speaker's volume cap with real BlueZ (issue 31; until
# now only the core's tables and the binary's test devices had them). The conffile gets
# "whenGone": "pause", "volumeMax": 70, and `reload` applies both at once (BLUETOOTH.md). On the
# speaker, the player's `volume 100` -> the status's volume 70, the speaker's PCM at 89 (70 of
# 127); the speaker's `disconnect` -> paused (not on to the card) and the position held for 3 s;
# its `connect` -> playing on the speaker from that place (not back by more than BACK_MAX s),
# each within 30 s. GONE: what was seen, with each step's seconds.
GONE=""
paused_now() { sample; [ "$STATUS_PHASE" = paused ]; }
gone_pause() {
  local reply t held sink n
  sed -i "s|\"adapter\": \"$A0\"}|\"adapter\": \"$A0\", \"whenGone\": \"pause\", \"volumeMax\": 70}|" "$CONFIG"
  grep -q '"whenGone": "pause", "volumeMax": 70' "$CONFIG" || { note "whenGone: the conffile did not take the edit: $(grep '"bluetooth"' "$CONFIG")"; return; }
  reply=$("$OUT/hilctl" "$SOCK" reload 2>&1 | tail -n 1)
  [[ $reply == "ok configuration reloaded"* ]] || note "reload with whenGone pause replied: $reply"
  sink=$(pcms sink | grep a2dpsnk | head -n 1)
  t=$(uptime_s)
  "$OUT/hilctl" "$SOCK" volume 100 >/dev/null || note "volume 100 through the control socket failed"
  wait_for "$VOLUME_MAX" volume_is 70 || note "volumeMax 70 on the speaker: the status's volume is $(field volume "$STATUS_JSON") after volume 100"
  wait_for "$VOLUME_MAX" level_is "$sink" 89 sink || note "volumeMax 70 on the speaker: its PCM is at $(level_of "$sink" sink), not 89"
  GONE="volume 100 -> $(field volume "$STATUS_JSON") on the speaker, its PCM $(level_of "$sink" sink)/127 in $(secs "$t") s"
  n=$(count 'Disconnection successful|Failed to disconnect')
  t=$(uptime_s)
  ctl "disconnect $A1"
  if wait_for 30 paused_now; then
    GONE+="; disconnect -> paused in $(secs "$t") s at $STATUS_POS s (output '$STATUS_OUTPUT')"
  else
    note "whenGone pause: expected paused 30 s after 'disconnect'; seen output '$STATUS_OUTPUT' phase '$STATUS_PHASE'"
    return
  fi
  held=$STATUS_POS
  wait_for 30 seen 'Disconnection successful|Failed to disconnect' "$n" || note "whenGone pause: 'disconnect $A1' not answered within 30 s"
  sleep 3
  sample
  [ "$STATUS_PHASE" = paused ] && [ "$STATUS_POS" = "$held" ] \
    || note "whenGone pause: 3 s after the pause expected paused at $held s; seen phase '$STATUS_PHASE' at $STATUS_POS s"
  t=$(uptime_s)
  ctl "connect $A1"
  if wait_for 30 output_is bluetooth; then
    GONE+="; connect -> playing on the speaker in $(secs "$t") s from $STATUS_POS s"
  else
    note "whenGone pause: expected playing on the speaker 30 s after 'connect'; seen output '$STATUS_OUTPUT' phase '$STATUS_PHASE'"
    return
  fi
  awk -v p="$STATUS_POS" -v h="$held" -v m="$BACK_MAX" 'BEGIN { exit !(p >= h - m) }' \
    || note "whenGone pause: resumed at $STATUS_POS s, more than $BACK_MAX s before the pause's $held s"
  play_for 2 || note "whenGone pause: the position did not advance on the speaker after its return"
}

# avrcp_buttons: the speaker's own buttons (issue 31). The speaker's BlueZ (hci1) sends AVRCP
# passthrough commands to the box through org.bluez.MediaControl1 (Pause, Play, Next, Previous:
# a press and its release); the box's BlueZ, with no media player registered, turns each into a
# key of its uinput device "<speaker's name> (AVRCP)" (profiles/audio/avctp.c: PAUSE is
# KEY_PAUSECD, PLAY KEY_PLAYCD, FORWARD KEY_NEXTSONG, BACKWARD KEY_PREVIOUSSONG), which the
# installed player reads through its config's "input": ["AVRCP"]. Each must show in the status
# within BUTTON_MAX s of the call; the result line gives each one's time. A button that
# does not come is noted and the player is put back with the control socket, so the others are
# still tried. BUTTONS: "name time" each.
BUTTON_MAX=5
index_is() { sample; [ "$(field index "$STATUS_JSON")" = "$1" ] && [ "$STATUS_PHASE" = playing ]; }
phase_is() { sample; [ "$STATUS_PHASE" = "$1" ]; }
went_back() {
  index_is "$1" || { [ "$STATUS_PHASE" = playing ] && awk -v p="$STATUS_POS" -v b="$2" 'BEGIN { exit !(p < b) }'; }
}
# button NAME CHECK ARGS...: MediaControl1.NAME on the speaker's side, then CHECK ARGS within
# BUTTON_MAX s; FIX: the control-socket command that puts the player where CHECK wanted it.
button() {
  local name=$1 fix=$2 t reply
  shift 2
  t=$(uptime_s)
  reply=$(timeout 20 busctl call org.bluez "$SPEAKER_SIDE" org.bluez.MediaControl1 "$name" 2>&1) \
    || { note "MediaControl1.$name on the speaker's side failed: $reply"; BUTTONS+=("$name: call failed"); "$OUT/hilctl" "$SOCK" $fix >/dev/null; return; }
  if wait_for "$BUTTON_MAX" "$@"; then
    BUTTONS+=("$name $(secs "$t") s")
  else
    note "the speaker's $name: expected $* within $BUTTON_MAX s; seen phase '$STATUS_PHASE' index '$(field index "$STATUS_JSON")'"
    BUTTONS+=("$name: not within $BUTTON_MAX s")
    "$OUT/hilctl" "$SOCK" $fix >/dev/null
    wait_for 10 "$@"
  fi
}
# avrcp_node: the box's uinput device for the speaker, /dev/input/eventN named "<the speaker's
# name as the box knows it> (AVRCP)" (the speaker's side makes one for the box too); held: the
# player has it open (its rescan, once a second, after each connect made a new one).
avrcp_node() {
  local n e
  n="$(box_prop "$A1" Name | sed -n 's/^s "\(.*\)"$/\1/p') (AVRCP)"
  for e in /sys/class/input/event*; do
    [ "$(cat "$e/device/name" 2>/dev/null)" = "$n" ] && { echo "/dev/input/${e##*/}"; return; }
  done
}
holds_avrcp() {
  local node pid
  node=$(avrcp_node)
  pid=$(prop MainPID)
  [ -n "$node" ] && [ "$pid" != 0 ] || return 1
  local fd
  for fd in "/proc/$pid/fd/"*; do [ "$(readlink "$fd" 2>/dev/null)" = "$node" ] && return 0; done
  return 1
}
avrcp_buttons() {
  local i0
  SPEAKER_SIDE=/org/bluez/hci1/dev_${A0//:/_}
  wait_for 10 holds_avrcp || note "the player does not hold the speaker's AVRCP device '$(avrcp_node)' 10 s after the connect"
  journalctl -b -u jukebox --no-pager -o cat 2>/dev/null | grep '^.*input: ' >"$L/jukebox-input.txt"
  AVRCP_DEVICES=$(grep -o 'input: .*(AVRCP).*' "$L/jukebox-input.txt" | sort -u | tr '\n' ';')
  grep -H . /sys/class/input/input*/name >"$L/input-names.txt" 2>&1
  sample
  i0=$(field index "$STATUS_JSON")
  button Pause pause phase_is paused
  button Play play phase_is playing
  LAST_P=""  # another track: its position starts again
  button Next next index_is $((i0 + 1))
  # Previous goes to the track before, or (more than 3 s heard: a slow guest) to this one's start.
  sample
  LAST_P=""
  button Previous previous went_back "$i0" "$STATUS_POS"
  LAST_P=""
  play_for 1 || note "the position did not advance after the speaker's buttons"
}

# avrcp_volume: the speaker's own volume (issue 31). The player turns the box's PCM's soft
# volume off at the connect and sends its volume there (0-100 -> 0-127); the speaker's keys
# (AVRCP absolute volume; simulated by the sink's bluealsa setting its PCM's volume, as a
# speaker's keys would) come back as the player's volume. Checks, each within VOLUME_MAX s:
# the box's PCM has soft volume off and the player's 100 (127); the speaker set to 40 and to 90
# -> the status's volume 31 and 71 (40 and 90 of 127, rounded); the player's `volume 50` -> the
# speaker's PCM at 64, and the status still 50 three seconds later (its echo changed nothing).
# Our own `bluealsa-cli monitor --properties=Volume` on the box's daemon, stamped, in the log.
# VOLUME: what was seen, with each step's seconds.
VOLUME_MAX=10
level_of() { bluealsa-cli ${2:+-B "$2"} info "$1" 2>&1 | grep -i '^volume' | grep -o '[0-9]\+' | head -n 1; }
softvol_off() { bluealsa-cli info "$1" 2>&1 | grep -i '^softvol' | grep -qi 'false'; }
level_is() { [ "$(level_of "$1" "${3:-}")" = "$2" ]; }
volume_is() { sample; [ "$(field volume "$STATUS_JSON")" = "$1" ]; }
avrcp_volume() {
  local mon=$L/box-volume-monitor.txt box sink pid t
  box=$(pcms | grep a2dpsrc | head -n 1)
  sink=$(pcms sink | grep a2dpsnk | head -n 1)
  # Ends by itself after the steps below.
  timeout 60 stdbuf -oL bluealsa-cli monitor --properties=Volume 2>&1 | while IFS= read -r line; do echo "$(uptime_s) $line"; done >"$mon" &
  pid=$!
  wait_for "$VOLUME_MAX" softvol_off "$box" \
    || note "the box's PCM still has soft volume $VOLUME_MAX s after the checks began: $(bluealsa-cli info "$box" 2>&1 | grep -i softvol) ($(journalctl -b -u jukebox --no-pager -o cat | grep -i "speaker's own volume" | tail -n 1))"
  wait_for "$VOLUME_MAX" level_is "$box" 127 || note "expected the box's PCM at 127 (the player's 100); it is at $(level_of "$box")"
  VOLUME="box '$box' soft volume $(bluealsa-cli info "$box" 2>&1 | grep -i '^softvol' | tr -d '\n'), at $(level_of "$box") (player 100)"
  # speaker_sets LEVEL PERCENT: the speaker's side sets LEVEL; the status must show PERCENT.
  speaker_sets() {
    t=$(uptime_s)
    bluealsa-cli -B sink volume "$sink" "$1" >>"$L/volume.txt" 2>&1 || VOLUME+="; speaker volume $1: exit $?"
    if wait_for "$VOLUME_MAX" volume_is "$2"; then
      VOLUME+="; speaker $1/127 -> status volume $2 in $(secs "$t") s (box PCM $(level_of "$box"))"
    else
      note "the speaker set to $1/127: expected the status's volume $2 within $VOLUME_MAX s; seen $(field volume "$STATUS_JSON") (box PCM $(level_of "$box"), speaker $(level_of "$sink" sink))"
      VOLUME+="; speaker $1: not within $VOLUME_MAX s"
    fi
  }
  speaker_sets 40 31
  speaker_sets 90 71
  t=$(uptime_s)
  "$OUT/hilctl" "$SOCK" volume 50 >/dev/null || note "volume 50 through the control socket failed"
  if wait_for "$VOLUME_MAX" level_is "$sink" 64 sink; then
    VOLUME+="; player volume 50 -> speaker $(level_of "$sink" sink)/127 in $(secs "$t") s (box PCM $(level_of "$box"))"
  else
    note "the player's volume 50: expected the speaker's PCM at 64 within $VOLUME_MAX s; it is at $(level_of "$sink" sink) (box PCM $(level_of "$box"))"
  fi
  sleep 3
  volume_is 50 || note "the player's volume 50 moved to $(field volume "$STATUS_JSON") within 3 s (an echo?)"
  VOLUME+="; status volume 3 s later $(field volume "$STATUS_JSON")"
  # The player's 100 again, for the cycles and bt-phone (the samples are untouched at 100 either way).
  "$OUT/hilctl" "$SOCK" volume 100 >/dev/null
  wait_for "$VOLUME_MAX" level_is "$sink" 127 sink || note "the player's volume 100 did not reach the speaker: $(level_of "$sink" sink)"
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  VOLUME+="; the box's monitor: $(sed 's|/org/bluealsa/[^ ]*|PCM|' "$mon" | tr '\n' ';')"
  echo "$VOLUME" >"$L/volume-result.txt"
}

speaker_scenario() {
  PROBLEMS=()
  echo "HIL-BEGIN bt-speaker (uptime $(uptime_s) s)"
  local t0 s
  t0=$(uptime_s)
  installed="" moved="" place="" snr="" SNR="" at="" last_pos="" speaker_cycles=() PAIRED="" FORGOTTEN="" GONE="" BUTTONS=() VOLUME="" AVRCP_DEVICES=""
  speaker
  s=$(secs "$t0")
  if [ ${#PROBLEMS[@]} -eq 0 ]; then
    echo "HIL-RESULT PASS bt-speaker (${s}s): apt install ${installed} s; on the card, connect -> \"output\":\"bluetooth\" in $moved s; recording: $SNR; $place; ${#speaker_cycles[@]} x disconnect/connect (s to card / to speaker): $(IFS=' '; echo "${speaker_cycles[*]}"); position $last_pos s at the end, never back by more than $BACK_MAX s nor ahead of the clock ($(wc -l <"$SAMPLES") samples); jukebox ctl bluetooth pair $A2 (wall time, reply): $PAIRED; forget: $FORGOTTEN; whenGone pause and volumeMax 70: $GONE; the speaker's buttons (MediaControl1 -> status): $(IFS=','; echo "${BUTTONS[*]}") (the player's input devices: $AVRCP_DEVICES); volume: $VOLUME"
  else
    echo "HIL-RESULT FAIL bt-speaker (${s}s)"
    for p in "${PROBLEMS[@]}"; do echo "  expected/seen: $p"; done
    echo "  the speaker's buttons: $(IFS=','; echo "${BUTTONS[*]}") (the player's input devices: $AVRCP_DEVICES)"
    echo "  volume: $VOLUME"
    echo "  journal (jukebox, last 20 lines):"
    journalctl -b -u jukebox --no-pager -n 20 -o cat 2>&1 | sed 's/^/  | /'
  fi
  journalctl -b -u jukebox --no-pager -o cat >"$L/jukebox.txt" 2>&1
}
