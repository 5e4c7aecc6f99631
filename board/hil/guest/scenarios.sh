#!/bin/bash
# SPDX-License-Identifier: MIT
# The initramfs guest's scenarios, run as root in a chroot of the host's / (read-only) by
# board/hil/guest/init: real kernel devices (snd-aloop, snd-dummy, gpio-sim, i2c-hil), the real
# jukebox binary. Prints `HIL-RESULT PASS name` or `HIL-RESULT FAIL name` with what was expected
# and seen; board/hil/run.sh counts them.
#   scenarios.sh JUKEBOX_BIN HIL_CACHE [SCENARIO...]
set -uo pipefail
JB=$1
CACHE=$2
shift 2
ONLY="$*"
HERE=$(cd "$(dirname "$0")" && pwd)
PCMCMP="$CACHE/tools/pcmcmp"
W=/tmp/w
mkdir -p "$W"
RATE=44100
# shellcheck source=board/hil/guest/lib.sh
. "$HERE/lib.sh"

# Fixtures (made on the host by prepare.sh): a.flac + b.wav = src.raw, music/, chime*.wav.
F="$CACHE/fixtures"

t=$(date +%s%N); "$JB" --version >/dev/null; echo "HIL-TIMING jukebox --version: $((($(date +%s%N) - t) / 1000000)) ms"

want() { [ -z "$ONLY" ] || [[ " $ONLY " == *" $1 "* ]]; }

# ---- Audio: bit-exact and gapless through hw:Loopback -----------------------------------------
if want audio; then
  begin audio
  # An underrun (the emulated CPU starved on a busy host) inserts silence: that is timing, not the
  # data path, so it is retried (at most 3 attempts, each one reported); any other difference fails.
  for attempt in 1 2 3; do
    rm -f "$W/rec.raw"
    arecord -q -D hw:Loopback,1,0 -f S16_LE -r $RATE -c 2 -t raw "$W/rec.raw" 2>"$W/arecord.err" &
    rec=$!
    wait_for 10 pcm_state Loopback 1c RUNNING || note "arecord never started: $(cat "$W/arecord.err")"
    timeout 60 "$JB" play --device hw:Loopback,0,0 --volume 100 "$F/a.flac" "$F/b.wav" </dev/null >"$W/play.out" 2>&1
    rc=$?
    kill -INT $rec; wait $rec
    [ $rc -eq 0 ] || note "jukebox play exited $rc: $(tail -n 5 "$W/play.out")"
    cmp=$("$PCMCMP" find "$F/src.raw" "$W/rec.raw" $RATE) && break
    detail "attempt $attempt: $cmp"
    [[ "$cmp" == gap:* ]] || break
  done
  [[ "$cmp" == bit-exact* ]] || note "expected a.flac+b.wav bit-exact and gapless in the recording; seen: $cmp"
  DETAILS=("$cmp (attempt $attempt)" "${DETAILS[@]}")
  finish
fi

# ---- Devices for the service scenarios ----------------------------------------------------------
sim_setup GPIO17 GPIO27 GPIO22 GPIO23 GPIO24 GPIO4
i2c_clear

# A jukebox daemon with CONFIG ($1: extra JSON members); its socket is $W/ctl.
DAEMONS=0
start_daemon() {
  DAEMONS=$((DAEMONS + 1))
  DLOG="$W/daemon-$DAEMONS.log"
  rm -f "$W/state.json" "$W/ctl"
  cat > "$W/config.json" <<EOF
{"state": "$W/state.json", "music": ["$F/music"], "socket": "$W/ctl", "logLevel": "debug",
 "releaseDelay": 1, "volumeStep": 5, $1}
EOF
  "$JB" run --config "$W/config.json" >"$DLOG" 2>&1 &
  JPID=$!
  wait_for 30 status_is playing || note "daemon never played: $(tail -n 5 "$DLOG")"
}
stop_daemon() {
  kill -TERM "$JPID" 2>/dev/null
  wait "$JPID" 2>/dev/null
}

# ---- Buttons: gpio-sim lines -> libgpiod -> jukebox; and the HD44780 it drives ------------------
if want buttons || want display-hd44780; then
  start_daemon '"device": "hw:Dummy,0,0", "gpio": {"bias": "pull-up", "activeLow": true, "debounceMs": 50},
 "buttons": {"play": "GPIO17", "next": "GPIO27", "previous": "GPIO22", "volumeUp": "GPIO23", "volumeDown": "GPIO24"},
 "display": {"type": "hd44780-16x2", "bus": "jukebox-hil", "address": 39}'
  if want buttons; then
    begin buttons
    v0=$(json_field volume)
    press GPIO17; expect_status 5 phase paused "play pressed once"
    press GPIO17; expect_status 5 phase playing "play pressed again"
    press GPIO27; expect_status 5 index 2 "next pressed"
    # "previous" goes back a track only under 3 s heard, else it starts this one again: the track
    # starts again first, so a guest slowed by a busy host still presses well inside the 3 s.
    ctl seek 0:00
    press GPIO22; expect_status 5 index 1 "previous pressed (under 3 s heard)"
    press GPIO24; expect_status 5 volume $((v0 - 5)) "volume down pressed"
    press GPIO23; expect_status 5 volume "$v0" "volume up pressed"
    # Bounce: five edges within a few ms on press and three on release make one "next".
    sim_bounce GPIO27 down; hold_for 0.15; sim_bounce GPIO27 up
    expect_status 5 index 2 "next pressed with bounce"
    settle 1; expect_status 1 index 2 "still one next after the bounce settled"
    # Bursts longer than the kernel's queue of 16 edges (libgpiod 1.6 drops the rest): the level
    # read when each window ends decides, so one toggle, and no long press after the release.
    sim_bounce GPIO17 down 41; hold_for 0.15; sim_bounce GPIO17 up 41
    expect_status 5 phase paused "play pressed with 41-edge bursts on press and release"
    settle 1.5; expect_status 1 phase paused "still paused 1.5 s later (no second toggle, no long press)"
    sim_line GPIO17 down; hold_for 1.2; sim_line GPIO17 up
    expect_status 5 phase stopped "play held 1.2 s (long press: stop)"
    finish
  fi
  if want display-hd44780; then
    begin display-hd44780
    ctl play
    wait_for 10 status_is playing
    settle 1.5
    t1=$(json_field title); i2c_log > "$W/hd44780.log"; t2=$(json_field title)
    screen=$("$JB" probe replay-i2c --panel hd44780-16x2 --address 39 "$W/hd44780.log" 2>&1)
    detail "screen (title before/after the snapshot: $t1/$t2):"; detail "$screen"
    expect_screen "$screen" 1 "($(printf '%-16s' "$t1")|$(printf '%-16s' "$t2"))"
    expect_screen "$screen" 2 '▶ [0-9]:[0-9]{2}/1:00 +'
    finish
  fi
  stop_daemon
fi

# ---- Interruption: the real kernel's EBUSY, release on pause, yield; and the SSD1306 ------------
if want interruption || want display-ssd1306; then
  i2c_clear
  start_daemon '"device": "hw:Loopback,0,0", "display": {"type": "ssd1306", "bus": "jukebox-hil", "address": 60}'
  if want interruption; then
    begin interruption
    # "playing" is the player's phase: the writer thread opens the device a moment later (CI saw
    # aplay get there first with the arm64 guest running beside). The test is about a held device.
    wait_for 10 pcm_owner_is Loopback 0p "$JPID" || note "jukebox does not hold the device while playing: $(pcm_status Loopback 0p)"
    out=$(aplay -D hw:Loopback,0,0 "$F/chime-short.wav" 2>&1) && note "aplay played while jukebox held the device"
    grep -q "Device or resource busy" <<<"$out" || note "expected aplay to fail with 'Device or resource busy' while jukebox plays; seen: $out"
    ctl pause
    wait_for 10 pcm_state Loopback 0p closed || note "device not released 1 s after pause (releaseDelay 1): $(pcm_status Loopback 0p)"
    # A long sound, stopped once jukebox has been seen waiting: aplay's exit is the cue to resume.
    aplay -q -D hw:Loopback,0,0 "$F/music/Track 3.wav" 2>"$W/aplay.err" &
    apid=$!
    wait_for 10 pcm_state Loopback 0p RUNNING || note "aplay did not take the released device: $(cat "$W/aplay.err")"
    ctl play
    wait_for 10 status_matches '"message":"waiting for audio device:[^"]*busy[^"]*aplay' \
      || note "expected status 'waiting for audio device: … busy (held by aplay …)'; seen: $(status_json)"
    detail "while aplay held it: $(json_field message); aplay while jukebox played: $(tail -n 1 <<<"$out")"
    kill -TERM $apid; wait $apid
    freed=$(date +%s%N)
    wait_for 10 status_is playing || note "jukebox did not resume by itself after aplay exited; seen: $(status_json)"
    # Printed, not asserted (TCG timing): the player probes a waiting device every 0.25 s.
    detail "playing again $(( ($(date +%s%N) - freed) / 1000000 )) ms after aplay exited (status polled through ctl)"
    wait_for 10 pcm_owner_is Loopback 0p "$JPID" || note "device not reopened by jukebox: $(pcm_status Loopback 0p)"
    grep -q "busy" "$DLOG" || note "the daemon log never said busy"
    out=$(timeout 30 "$JB" yield --socket "$W/ctl" -- aplay -D hw:Loopback,0,0 "$F/chime-short.wav" 2>&1)
    rc=$?
    [ $rc -eq 0 ] || note "jukebox yield -- aplay exited $rc: $out"
    wait_for 10 status_is playing || note "not playing after yield; seen: $(status_json)"
    wait_for 10 pcm_owner_is Loopback 0p "$JPID" || note "device not reopened by jukebox after yield: $(pcm_status Loopback 0p)"
    finish
  fi
  if want display-ssd1306; then
    begin display-ssd1306
    wait_for 10 status_is playing
    settle 1.5
    t1=$(json_field title); i2c_log > "$W/ssd1306.log"; t2=$(json_field title)
    screen=$("$JB" probe replay-i2c --panel ssd1306 --address 60 "$W/ssd1306.log" 2>&1)
    detail "screen (▒: pixels that are no character, e.g. the progress bar; title before/after: $t1/$t2):"; detail "$screen"
    expect_screen "$screen" 1 "($(printf '%-21s' "$t1")|$(printf '%-21s' "$t2"))"
    expect_screen "$screen" 6 '▒{21}'
    expect_screen "$screen" 8 '▶ [0-9]:[0-9]{2}/1:00 +100'
    finish
  fi
  stop_daemon
fi
# ---- Headphones: a jack control on the kernel's card (a user control on snd-aloop) ----------------
if want headphones; then
  # In before the start, as a box booted with headphones on: the cap applies at once.
  "$CACHE/tools/hiljack" Loopback add "Headphone Jack" 1 2>"$W/hiljack.err" || note "hiljack add: $(cat "$W/hiljack.err")"
  start_daemon '"device": "hw:Loopback,0,0", "bootVolume": 90, "headphones": {"card": "hw:Loopback", "volumeMax": 50}'
  begin headphones
  expect_status 10 headphones true "start with the jack's control on"
  expect_status 5 volume 50 "start with headphones in (bootVolume 90, headphones.volumeMax 50)"
  expect_status 5 volumeMax 50 "headphones in"
  ctl volume 80
  expect_status 5 volume 50 "volume 80 asked with headphones in"
  t=$(date +%s%N)
  "$CACHE/tools/hiljack" Loopback set "Headphone Jack" 0 || note "hiljack set 0 failed"
  expect_status 5 phase paused "the headphones pulled out while playing"
  detail "pulled: paused $(( ($(date +%s%N) - t) / 1000000 )) ms after the control changed (status polled through ctl)"
  expect_status 5 volumeMax 100 "headphones out"
  grep -q "headphones unplugged: paused" "$DLOG" || note "the log never said 'headphones unplugged: paused': $(grep -i headphones "$DLOG" | tail -n 3)"
  ctl volume 80
  expect_status 5 volume 80 "volume 80 asked with headphones out"
  "$CACHE/tools/hiljack" Loopback set "Headphone Jack" 1 || note "hiljack set 1 failed"
  expect_status 5 volume 50 "the headphones plugged in again"
  expect_status 1 phase paused "still paused after the plug (a plug starts nothing)"
  finish
  stop_daemon
fi

# ---- Battery: a MAX17048 on the i2c-hil adapter (its registers set in debugfs) and a PowerBoost's
# LBO on a gpio-sim line; the power command only leaves a file.
# The saved phase: the place sidecar's newest record (two slots of a JSON line each, the higher
# "seq" the newer: PlaceSlots), else the queue file's.
state_phase() {
  local line
  line=$(tr '\0' '\n' < "$W/state.json.place" 2>/dev/null | grep '^{' \
    | awk '{ match($0, /"seq":[0-9]+/); print substr($0, RSTART + 6, RLENGTH - 6), $0 }' | sort -n | tail -n 1)
  [ -n "$line" ] || line=$(tr -d ' \n' < "$W/state.json" 2>/dev/null)
  grep -o '"phase":"[a-z]*"' <<<"$line" | head -n 1 | cut -d'"' -f4
}
if want battery; then
  i2c_reg clear
  # Version 0x0012; VCELL 0xCC00 (3.98 V); SOC 0x3200 (50 %); CRATE negative: discharging.
  i2c_reg 36 08 0012; i2c_reg 36 02 cc00; i2c_reg 36 04 3200; i2c_reg 36 16 fff0
  sim_line GPIO4 up
  rm -f "$W/powered-off"
  start_daemon '"device": "hw:Dummy,0,0", "powerCommand": ["/usr/bin/touch", "'"$W"'/powered-off"],
 "warningChime": "'"$F"'/chime-short.wav", "battery": {"chip": "max17048", "bus": "jukebox-hil", "interval": 1, "lowPin": "GPIO4"}'
  begin battery
  expect_status 10 percent 50.0 "the gauge at 50 % (SOC 0x3200)"
  expect_status 5 charging false "its charge rate negative"
  expect_status 5 low false "LBO high at start"
  i2c_reg 36 04 0c00
  expect_status 10 message "battery low: 12 %" "the gauge at 12 %"
  expect_status 1 phase playing "the warning (it plays on)"
  wait_for 10 grep -q 'startTrack.*chime-short.wav' "$DLOG" || note "the warning chime was never started: $(grep -c startTrack "$DLOG") startTrack lines"
  i2c_reg 36 04 0400
  expect_status 10 phase paused "the gauge at 4 % (critical: 5)"
  wait_for 10 test -e "$W/powered-off" || note "the power command never ran at 4 %"
  grep -q "battery empty: saving and powering off (4 %)" "$DLOG" || note "the log never said 'battery empty ... (4 %)'"
  [ "$(state_phase)" = paused ] || note "the state file says phase '$(state_phase)' after the power command, not paused"
  # Plugged in before the power went: over. Then unplugged at 50 %, and LBO alone empties it.
  rm -f "$W/powered-off"
  i2c_reg 36 16 0010; i2c_reg 36 04 3200
  expect_status 10 charging true "the charge rate positive"
  expect_status 5 message null "charging (the message gone)"
  ctl play
  expect_status 5 phase playing "play after charging"
  i2c_reg 36 16 fff0
  expect_status 10 charging false "unplugged again"
  t=$(date +%s%N)
  sim_line GPIO4 down
  expect_status 10 phase paused "LBO pulled low with the gauge at 50 %"
  detail "LBO low: paused $(( ($(date +%s%N) - t) / 1000000 )) ms after the line changed (status polled)"
  expect_status 5 low true "the pin's word in the status"
  wait_for 10 test -e "$W/powered-off" || note "the power command never ran for the pin"
  grep -q "battery: low-battery pin GPIO4 asserted" "$DLOG" || note "the log never said the pin was asserted"
  sim_line GPIO4 up
  expect_status 10 low false "LBO let go"
  finish
  stop_daemon
fi

# ---- A card that goes away and comes back: snd-dummy's driver unbound while it plays -------------
if want card-return; then
  start_daemon '"device": "hw:Dummy,0,0"'
  begin card-return
  drv=/sys/bus/platform/drivers/snd_dummy
  dev=$(basename "$(ls -d "$drv"/snd_dummy.* 2>/dev/null | head -n 1)")
  [ -n "$dev" ] || note "no snd_dummy device under $drv: $(ls "$drv" 2>&1)"
  wait_for 10 pcm_owner_is Dummy 0p "$JPID" || note "jukebox does not hold the card while playing: $(pcm_status Dummy 0p)"
  # The kernel frees the card once its files are closed: the unbind returns only after jukebox
  # closed the PCM it lost (in the background, so that a player that never lets go is a failure
  # here, not a hung guest).
  ( echo "$dev" > "$drv/unbind" ) 2>"$W/unbind.err" &
  unbinder=$!
  wait_for 10 status_matches '"message":"waiting for audio device' \
    || note "expected 'waiting for audio device' once the card was gone; seen: $(status_json)"
  wait_for 10 eval "! kill -0 $unbinder 2>/dev/null" || note "the unbind never returned: jukebox kept the lost card open"
  # Gone for 9 s: polling 0.25 s apart would probe about 36 times; announced, the probes back off.
  before=$(grep -c 'timerFired(JukeboxCore.TimerID.deviceRetry' "$DLOG")
  settle 9
  probes=$(( $(grep -c 'timerFired(JukeboxCore.TimerID.deviceRetry' "$DLOG") - before ))
  echo "$dev" > "$drv/bind" 2>>"$W/unbind.err" || note "cannot bind $dev again: $(cat "$W/unbind.err")"
  back=$(date +%s%N)
  wait_for 20 status_is playing || note "jukebox did not play again by itself once the card was back; seen: $(status_json)"
  detail "probes while the card was gone 9 s: $probes; playing again $(( ($(date +%s%N) - back) / 1000000 )) ms after the bind (status polled through ctl)"
  [ "$probes" -le 12 ] || note "the player polled the missing card $probes times in 9 s (announced: at most 12)"
  grep -q 'soundDevicesChanged -> \["probeDevice"' "$DLOG" || note "the card's return was not announced to the core (no 'soundDevicesChanged -> [\"probeDevice\"' in the log)"
  wait_for 10 pcm_owner_is Dummy 0p "$JPID" || note "card not reopened by jukebox: $(pcm_status Dummy 0p)"
  finish
  stop_daemon
fi

summary
cp "$W"/*.log "$W"/*.json /tmp/out/ 2>/dev/null || true
