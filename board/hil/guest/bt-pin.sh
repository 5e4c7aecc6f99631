# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# bt-pin (sourced by board/hil/guest/bluetooth.sh after bt-loop, and after bt-speaker when that
# was asked for too; it uses bt-speaker.sh's helpers: install_jukebox, sample, play_for, field,
# SOCK, CONFIG). The installed player pairs with a speaker that wants a PIN (issue 31,
# docs/BLUETOOTH.md): hci3, hci4 and hci2 (btvirt -l5), each with Secure Simple Pairing off
# (`hciconfig hciN sspmode 0`: btvirt's btdev then does legacy pairing, a PIN code request on
# each side, compared byte for byte), the scenario's bluetoothctl (BlueZ's default agent, which
# answers for them: one bluetoothd runs every controller) typing the speaker's PIN. The box's
# config chooses its adapter (`"bluetooth": {"adapter": <hci0>}`): with three controllers
# BlueZ's default may be another (bt-speaker run 8). Checks, each through `jukebox ctl` while the
# player plays on (every status sample checked as bt-speaker's are: never back, never ahead):
# a PIN of letters, one too long and an address that is not one are refused at once; a wrong
# PIN → `refused the PIN`; the right one → `Pairing successful`, and BlueZ on hci0 says paired;
# then, forgotten again, a speaker whose side never answers → the pair's bound, nothing hangs.

PIN_SPEAKER=4321
PIN_LOG=$L/jukebox-ctl-pin.txt

# pin_ctl ANSWER ARGS…: `jukebox ctl ARGS…` in the background while the status is sampled; each
# new `Request PIN code` of the scenario's bluetoothctl (the speaker's side) is answered with
# ANSWER (none: `-`). REPLY: its reply; WALL: its seconds.
pin_ctl() {
  local answer=$1 n t pid
  shift
  n=$(count 'Request PIN code')
  t=$(uptime_s)
  timeout 120 jukebox ctl --socket "$SOCK" "$@" >/tmp/pin-reply 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$answer" != - ] && seen 'Request PIN code' "$n"; then
      ctl "$answer"
      n=$((n + 1))
    fi
    sample
    sleep 0.3
  done
  wait "$pid"
  WALL=$(secs "$t")
  REPLY=$(tr '\n' ' ' </tmp/pin-reply | sed 's/ $//')
  echo "$* (the speaker's side answers ${answer/-/nothing}): ${WALL} s: $REPLY" >>"$PIN_LOG"
}
dev_path() { echo "/org/bluez/hci0/dev_${1//:/_}"; }
box_paired() { busctl --system get-property org.bluez "$(dev_path "$1")" org.bluez.Device1 Paired 2>/dev/null | grep -q true; }
playing() { sample; [ "$STATUS_PHASE" = playing ]; }

pin() {
  install_jukebox
  ok || return
  # The Loopback card and the adapter; after bt-speaker the section is there (its speaker).
  if grep -q '"bluetooth": {' "$CONFIG"; then
    sed -i "s|\"bluetooth\": {|\"bluetooth\": {\"adapter\": \"$A0\", |" "$CONFIG"
  else
    sed -i "s|\"device\": \"default\"|\"device\": \"hw:Loopback,0,0\"|; s|\"logLevel\": \"info\",|&\n  \"bluetooth\": {\"adapter\": \"$A0\"},|" "$CONFIG"
  fi
  grep -q "\"adapter\": \"$A0\"" "$CONFIG" || note "the conffile did not take the adapter: $(cat "$CONFIG")"
  [ -e /srv/music/speaker.wav ] || cp "$OUT/speaker.wav" /srv/music/
  systemctl restart jukebox.service
  wait_for 60 playing || note "expected the player playing after the restart; seen phase '$STATUS_PHASE' ($(prop StatusText))"
  ok || return
  # Three speakers, each paired once: a second pairing attempt between the same two emulated
  # controllers broke the emulation (run 2: after the wrong PIN on hci2, the right one never
  # ended, hci2 got `ACL packet for unknown connection handle`, and the kernel's list
  # corruption in hci_chan_del killed bluetoothd, which came back with Simple Pairing on again;
  # the same defect as bt-speaker's re-pairing, board/hil/README.md). hci3 takes the wrong PIN,
  # hci4 the right one, hci2 never answers (after bt-speaker, which pairs hci2, that is a
  # second attempt: the emulation may break there, which the check allows). Each: legacy pairing only (HCI Write Simple Pairing
  # Mode 0, which btdev keeps and the kernel notes), pairable, discoverable. Not `btmgmt --index
  # N power off; ssp off; power on`: the first run hung in it for good (its output file stayed
  # empty until the boot's bound), so each program here is bounded.
  local c n
  for n in 3 4 2; do
    {
      echo "hciconfig hci$n sspmode 0:"
      timeout 10 hciconfig "hci$n" sspmode 0
      echo "rc $?"
      timeout 10 hciconfig "hci$n" sspmode
    } >>"$L/ssp.txt" 2>&1
    for c in "select $(addr "hci$n")" "pairable on" "discoverable on"; do
      ctl "$c"
      sleep 0.5
    done
  done
  ctl "select $A0"
  [ "$(grep -ci 'Simple Pairing mode: Disabled' "$L/ssp.txt")" = 3 ] || note "Simple Pairing not off on hci2-4: $(tr '\n\t' '  ' <"$L/ssp.txt")"
  ok || return
  # Bad input: refused by the language, at once, bluetoothctl never run.
  pin_ctl - bluetooth pair "$A3" pin 12ab
  [[ $REPLY == *"a PIN is 1 to 16 digits"* ]] || note "a PIN of letters: expected 'a PIN is 1 to 16 digits'; replied: $REPLY"
  BAD+=("letters ${WALL} s")
  pin_ctl - bluetooth pair "$A3" pin 12345678901234567
  [[ $REPLY == *"a PIN is 1 to 16 digits"* ]] || note "a PIN of 17 digits: expected 'a PIN is 1 to 16 digits'; replied: $REPLY"
  BAD+=("17 digits ${WALL} s")
  pin_ctl - bluetooth pair "${A3%:*}" pin 1234
  [[ $REPLY == *"usage: bluetooth pair"* ]] || note "a short address: expected the usage; replied: $REPLY"
  BAD+=("short address ${WALL} s")
  # The wrong PIN: the speaker's side answers its own, the box another.
  pin_ctl "$PIN_SPEAKER" bluetooth pair "$A3" pin 9999
  WRONG="${WALL} s ($REPLY)"
  [[ $REPLY == *"refused the PIN"* ]] || note "pair with the wrong PIN: expected 'refused the PIN'; replied: $REPLY"
  box_paired "$A3" && note "BlueZ says $A3 paired after the wrong PIN"
  play_for 1 || note "after the wrong PIN: the position did not advance (phase '$STATUS_PHASE')"
  kill -0 "$BTVIRT" 2>/dev/null || { note "btvirt died in the pair with the wrong PIN"; return; }
  # The right PIN. Under btvirt it never ended in runs 2, 4 and 5 (after the wrong one on the
  # same speaker, on a fresh one, and first of all): both sides asked and answered, then `ACL
  # packet for unknown connection handle 43` on the speaker's controller and, when the
  # player's bluetoothctl left, the kernel's list corruption in hci_chan_del killed bluetoothd.
  # That emulation defect is said, not judged; any other failure is.
  pin_ctl "$PIN_SPEAKER" bluetooth pair "$A4" pin "$PIN_SPEAKER"
  RIGHT="${WALL} s ($REPLY)"
  if [[ $REPLY == "bluetooth pair: Pairing successful"* ]]; then
    wait_for 10 box_paired "$A4" || note "BlueZ on hci0 does not say $A4 paired after the right PIN"
  elif [[ $REPLY == *"did not finish pairing within"* ]] && dmesg | grep -q 'hci4: ACL packet for unknown connection handle'; then
    RIGHT+=" [btvirt's legacy pairing broke: $(dmesg | grep -m1 'hci4: ACL packet for unknown connection handle' | sed 's/^\[[^]]*\] //')]"
  else
    note "pair with the right PIN: expected 'Pairing successful'; replied: $REPLY"
  fi
  play_for 1 || note "after the right PIN: the position did not advance (phase '$STATUS_PHASE')"
  kill -0 "$BTVIRT" 2>/dev/null || { note "btvirt died in the pair with the right PIN"; return; }
  # A speaker that never answers (its side's PIN request left waiting): an error within the
  # bound, the player on; then the speaker's side's prompt is answered, so its bluetoothctl
  # reads commands again.
  local asked
  asked=$(count 'Request PIN code')
  pin_ctl - bluetooth pair "$A2" pin "$PIN_SPEAKER"
  SILENT="${WALL} s ($REPLY)"
  # Whatever ends it first (the player's 25 s bound, or BlueZ giving up on the agent), an error
  # within jukebox ctl's wait, and the player on.
  [[ $REPLY == *"bluetooth pair"* && $REPLY != *"Pairing successful"* ]] || note "pair with a speaker that never answers: expected an error; replied: $REPLY"
  awk -v w="$WALL" 'BEGIN { exit !(w < 60) }' || note "pair with a speaker that never answers took $WALL s"
  seen 'Request PIN code' "$asked" && ctl "$PIN_SPEAKER"
  play_for 1 || note "after the unanswered pair: the position did not advance (phase '$STATUS_PHASE')"
  # Said, not judged: the emulation's own defect (bt-speaker's re-pairing, board/hil/README.md).
  EMULATION=$(dmesg | grep -m1 'list_del corruption\|kernel BUG' || echo "no kernel BUG")
}

pin_scenario() {
  PROBLEMS=()
  echo "HIL-BEGIN bt-pin (uptime $(uptime_s) s)"
  local t0 s
  t0=$(uptime_s)
  installed="" BAD=() WRONG="" RIGHT="" SILENT="" EMULATION=""
  pin
  s=$(secs "$t0")
  if [ ${#PROBLEMS[@]} -eq 0 ]; then
    echo "HIL-RESULT PASS bt-pin (${s}s): apt install ${installed} s; refused at once: $(IFS=','; echo "${BAD[*]}"); wrong PIN: $WRONG; right PIN: $RIGHT; a speaker that never answers: $SILENT ($EMULATION); $(wc -l <"$SAMPLES") status samples, none back nor ahead"
  else
    echo "HIL-RESULT FAIL bt-pin (${s}s)"
    for p in "${PROBLEMS[@]}"; do echo "  expected/seen: $p"; done
    echo "  refused at once: $(IFS=','; echo "${BAD[*]}"); wrong PIN: $WRONG; right PIN: $RIGHT; never answers: $SILENT"
    echo "  bluetoothctl of the scenario (last 15 lines):"
    sed 's/\x1b\[[0-9;]*[A-Za-z]//g' "$CTL" 2>/dev/null | tail -n 15 | sed 's/^/  | /'
    echo "  journal (jukebox, last 20 lines):"
    journalctl -b -u jukebox --no-pager -n 20 -o cat 2>&1 | sed 's/^/  | /'
  fi
  journalctl -b -u jukebox --no-pager -o cat >"$L/jukebox-pin.txt" 2>&1
}
