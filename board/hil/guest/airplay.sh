#!/bin/bash
# SPDX-License-Identifier: MIT
# airplay, the systemd guest's opt-in AirPlay boots (board/hil/run.sh airplay; started by
# hil-guest.service with the checkout at /mnt/repo and the run folder at /mnt/out; see
# board/hil/systemd.sh hil_run_airplay_guest). The installed path of docs/SOURCES.md "AirPlay with
# shairport-sync", followed step by step: Debian's shairport-sync (in the image, as installed
# beside jukebox) under its own unit and user, the jukebox package installed with apt, then
#   1. /etc/shairport-sync.conf: its sessioncontrol and metadata groups taken out, the package's
#      /usr/share/jukebox/shairport-sync.conf @included; the alsa group's output_device the card
#   2. jukebox's config: "airplayMetadata": "/run/jukebox/airplay-metadata", the card
#   3. usermod -aG jukebox shairport-sync
#   4. the package's drop-in for shairport-sync.service when the package has one, then restarts
# The sender is board/hil/guest/airplay-sender.py (RTSP over loopback to shairport-sync's port 5000).
# Phase airplay-1 (first boot): the sessions; airplay-2 (after a reboot): the start order.
# Prints HIL-RESULT lines on the console.
set -uo pipefail
OUT=/mnt/out
L=$OUT/log
PHASE=$(cat "$OUT/phase")
SOCK=/run/jukebox/control
CONFIG=/etc/jukebox/config.json
PIPE=/run/jukebox/airplay-metadata
SSCONF=/etc/shairport-sync.conf
SENDER=/mnt/repo/board/hil/guest/airplay-sender.py
# The sender's name as an iPhone might send it, hostile: ESC [2J, BEL, RLO. The core makes each
# control character inert (docs/SOURCES.md "The commands"), as AirPlayTests asserts on the host.
NAME=$'Anna\e[2J\a\'s \u202eiPhone'
SHOWN_NAME=$'AirPlay: Anna\ufffd[2J\ufffd\'s \ufffdiPhone'
CYCLES=$(cat "$OUT/airplay-cycles" 2>/dev/null || echo 5)
# Under TCG each status poll takes a good part of a second (bt-phone's figures) and each hook is
# a Swift process that takes seconds to start: the bounds are a hang's, the figures are the
# point. (5 s failed at load 9-11 beside a package build: 5.3-8.9 s, run 5.) The release itself is
# checked exactly: the card is free when shairport-sync answers RECORD.
# (10 s failed once at load 12-15: 11.19 s, run 6, where RECORD was answered, the card free, in
# 0.50 s: the poll's own time.)
RELEASE_MAX=30.0 # RECORD sent -> jukebox off the card, status AirPlay (seen by a poll)
RESUME_MAX=30.0  # TEARDOWN sent (or the sender killed) -> jukebox playing on the card again (seen)
BACK_MAX=1.2     # the card's buffer is a second
PLACE_MAX=1.5
mkdir -p "$L"
# uptime_s, note, wait_for (and PROBLEMS) as the other systemd-guest drivers have them.
# shellcheck source=board/hil/guest/service-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/service-lib.sh"
SHOWN="" INSTALLED="" FILES="" SS_USER="" DROPIN=no SS_VERSION="" CYCLE=""
ok() { [ ${#PROBLEMS[@]} -eq 0 ]; }
secs() { awk -v a="$1" -v b="$(uptime_s)" 'BEGIN { printf "%.2f", b - a }'; }
dt() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "") print "?"; else printf "%.2f", b - a }'; }
over() { awk -v d="$1" -v m="$2" 'BEGIN { exit !(d == "?" || d > m) }'; }
# prop NAME [UNIT]: service-lib's, for shairport-sync.service too.
prop() { systemctl show -p "$1" --value "${2:-jukebox.service}"; }
# status_field NAME: NAME's value in the last status (a string without its quotes; the sender's name
# holds no '"'; the player writes it as UTF-8, unescaped). grep, not python: under TCG a poll
# that starts python3 takes seconds.
status_field() { grep -o "\"$1\":\(\"[^\"]*\"\|[^,}]*\)" <<<"$STATUS_JSON" | head -n 1 | cut -d: -f2- | sed 's/^"//; s/"$//; s/^null$//'; }
sample() {
  STATUS_JSON=$("$OUT/hilctl" "$SOCK" status --json 2>/dev/null | tail -n 1)
  STATUS_JSON=${STATUS_JSON#ok } # the reply is one line: `ok {…}`
  STATUS_PHASE=$(status_field phase) STATUS_POS=$(status_field position) STATUS_MSG=$(status_field message)
  echo "$(uptime_s) $STATUS_PHASE $STATUS_POS $STATUS_MSG | ${STATUS_JSON:0:300}" >>"$L/samples.txt"
}
# The process (Tgid) holding the Loopback's playback substream 0,0; empty while it is closed.
card_owner() {
  local tid
  tid=$(awk '/owner_pid/ {print $3}' /proc/asound/Loopback/pcm0p/sub0/status 2>/dev/null)
  [ -n "$tid" ] && awk '/^Tgid:/ {print $2}' "/proc/$tid/status" 2>/dev/null
}
JPID=""
box_plays() { sample; [ "$STATUS_PHASE" = playing ] && [ "$(card_owner)" = "$JPID" ]; }
box_interrupted() {
  sample
  [ "$STATUS_PHASE" = interrupted ] && [[ $STATUS_MSG == AirPlay* ]] && [ "$(card_owner)" != "$JPID" ]
}
shows_name() { sample; [ "$STATUS_MSG" = "$SHOWN_NAME" ]; }
play_for() { # play_for S: playing on the card, the position S seconds on
  local p0
  wait_for 30 box_plays || return 1
  p0=$STATUS_POS
  wait_for 30 position_past "$p0" "$1"
}
position_past() { sample; awk -v p="$STATUS_POS" -v a="$1" -v s="$2" 'BEGIN { exit !(p != "" && p >= a + s) }'; }
# The processes of shairport-sync.service's control group (its daemon, and the holder
# `jukebox source begin` leaves during a session).
ss_procs() { cat /sys/fs/cgroup/system.slice/shairport-sync.service/cgroup.procs 2>/dev/null; }
holder() { local p; for p in $(ss_procs); do tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q 'jukebox source begin' && echo "$p"; done; }
no_holder() { [ -z "$(holder)" ]; }
has_holder() { [ -n "$(holder)" ]; }
ss_journal() { journalctl -b -u shairport-sync --no-pager -o cat 2>/dev/null; }
restarted_since() { local p; p=$(prop MainPID); [ "$p" != 0 ] && [ "$p" != "$1" ] && [ "$(prop ActiveState)" = active ]; }
ss_active() { [ "$(systemctl is-active shairport-sync)" = active ]; }
# The sender: SENDER_PID, its log SLOG, its stdin the FIFO held open on fd 5.
start_sender() { # start_sender TAG
  SLOG=$L/sender-$1.log
  rm -f /tmp/sender.in && mkfifo /tmp/sender.in
  timeout 120 python3 "$SENDER" 127.0.0.1 5000 "$NAME" </tmp/sender.in >"$SLOG" 2>&1 &
  SENDER_PID=$!
  exec 5>/tmp/sender.in
}
said() { awk -v e="$1" '$1 == e { print $2; exit }' "$SLOG" 2>/dev/null; }
said_yet() { [ -n "$(said "$1")" ]; }
sender_problem() { grep -m1 -E 'ERROR|Error|Traceback' "$SLOG" 2>/dev/null; }

install_jukebox() {
  local deb t
  deb=jukebox_$(cat "$OUT/deb-version")_amd64.deb
  cp "$OUT/$deb" /root/
  t=$(uptime_s)
  (cd /root && DEBIAN_FRONTEND=noninteractive apt install -y "./$deb") >"$L/apt.log" 2>&1 \
    || note "apt install ./$deb failed: $(tail -n 5 "$L/apt.log" | tr '\n' ' ')"
  INSTALLED=$(secs "$t")
}

# SOURCES.md's steps, as a builder follows them.
setup() {
  timeout 180 systemctl is-system-running --wait >/dev/null 2>&1
  SS_VERSION=$(dpkg-query -W -f '${Version}' shairport-sync 2>/dev/null)
  [ -n "$SS_VERSION" ] || { note "shairport-sync is not installed in the image"; return; }
  shairport-sync -V >"$L/shairport-sync-V.txt" 2>&1
  python3 --version >"$L/python3.txt" 2>&1 || note "no python3 in the guest: $(cat "$L/python3.txt")"
  systemctl cat shairport-sync >"$L/shairport-sync-unit.txt" 2>&1
  install_jukebox
  ok || return
  cp "$OUT/long.wav" /srv/music/
  # 1. The groups: the stock sessioncontrol and metadata groups out, the package's file in.
  cp "$SSCONF" "$L/shairport-sync.conf.stock"
  awk '/^(sessioncontrol|metadata)[ \t]*=/ { skip = 1 } !skip { print } skip && /^};/ { skip = 0 }' "$L/shairport-sync.conf.stock" >"$SSCONF"
  printf '\n@include "/usr/share/jukebox/shairport-sync.conf"\n' >>"$SSCONF"
  # 4. (the card) shairport-sync's alsa group plays to the card jukebox plays to.
  sed -i '/^alsa[ \t]*=/,/^};/ s|^{$|{\n\toutput_device = "hw:Loopback,0,0";|' "$SSCONF"
  grep -q 'output_device = "hw:Loopback,0,0"' "$SSCONF" || note "the alsa group did not take output_device: $(grep -A3 '^alsa' "$SSCONF" | tr '\n' ' ')"
  # 2. jukebox's config: the pipe, and (4.) the card.
  sed -i 's|"device": "default"|"device": "hw:Loopback,0,0"|; s|"logLevel": "info",|&\n  "airplayMetadata": "'"$PIPE"'",|' "$CONFIG"
  grep -q '"airplayMetadata"' "$CONFIG" || note "the conffile did not take airplayMetadata: $(cat "$CONFIG")"
  # 3. shairport-sync may use the control socket.
  usermod -aG jukebox shairport-sync || note "usermod -aG jukebox shairport-sync failed"
  # The package's drop-in for shairport-sync.service, when it ships one (SOURCES.md).
  DROPIN=no
  if [ -f /usr/share/jukebox/shairport-sync.service.conf ]; then
    install -D -m 0644 /usr/share/jukebox/shairport-sync.service.conf /etc/systemd/system/shairport-sync.service.d/jukebox.conf
    systemctl daemon-reload
    DROPIN=yes
  fi
  # 5. A config change takes a restart: both, jukebox first (it makes the pipe).
  systemctl restart jukebox shairport-sync || note "systemctl restart jukebox shairport-sync failed: $(prop StatusText)"
  wait_for 30 ss_active || note "shairport-sync not active after its restart: $(ss_journal | tail -n 5 | tr '\n' '|')"
  JPID=$(prop MainPID)
  wait_for 60 box_plays || note "expected jukebox playing on the card after the restart; seen phase '$STATUS_PHASE', card owner '$(card_owner)', jukebox $JPID ($(prop ActiveState) $(prop SubState): $(prop StatusText)); its journal: $(journalctl -b -u jukebox --no-pager -o cat | tail -n 4 | tr '\n' '|')"
  "$OUT/hilctl" "$SOCK" volume 100 >/dev/null
  # What the steps made: the pipe, the socket, the folder; shairport-sync's user and groups.
  FILES="$(stat -c '%n %A %U:%G' /run/jukebox "$PIPE" "$SOCK" 2>&1 | tr '\n' ';')"
  [ "$(stat -c '%F %a %U:%G' "$PIPE" 2>/dev/null)" = "fifo 620 jukebox:jukebox" ] || note "expected the pipe a FIFO 0620 jukebox:jukebox: $FILES"
  local sp
  sp=$(prop MainPID shairport-sync.service)
  SS_USER="$(ps -o user:20=,group:20=,supgrp:80= -p "$sp" 2>/dev/null | tr -s ' ')"
  [[ $SS_USER == "shairport-sync shairport-sync "*jukebox* ]] || note "expected shairport-sync running as its user with group jukebox: '$SS_USER'"
  journalctl -b -u jukebox --no-pager -o cat | grep -q 'airplay metadata' \
    && note "jukebox said of the pipe: $(journalctl -b -u jukebox --no-pager -o cat | grep 'airplay metadata' | tail -n 1)"
}

# session TAG [kill]: one AirPlay session with the times; CYCLE its figures. With kill, the
# sender is killed (SIGKILL) mid-session instead of sending TEARDOWN.
session() {
  local tag=$1 how=${2:-teardown} t_rec t_ans t_int t_named t_end t_res place played_on limit hp hu
  play_for 1 || { note "$tag: not playing on the card before the session (phase '$STATUS_PHASE', card owner '$(card_owner)')"; return 1; }
  start_sender "$tag"
  if ! wait_for 30 said_yet record-answered; then
    note "$tag: RECORD not answered within 30 s: $(tr '\n' '|' <"$SLOG"); shairport-sync: $(ss_journal | tail -n 4 | tr '\n' '|')"
    exec 5>&-; kill "$SENDER_PID" 2>/dev/null; wait "$SENDER_PID" 2>/dev/null
    return 1
  fi
  # shairport-sync answers RECORD once the begin hook returned: the card must be free by then.
  [ "$(card_owner)" != "$JPID" ] || note "$tag: jukebox still held the card when shairport-sync answered RECORD"
  t_rec=$(said record-sent) t_ans=$(said record-answered)
  if ! wait_for 30 box_interrupted; then
    note "$tag: expected jukebox interrupted by AirPlay and off the card; seen phase '$STATUS_PHASE' message '$STATUS_MSG', card owner '$(card_owner)'"
  fi
  t_int=$(uptime_s)
  local frozen=$STATUS_POS first=$STATUS_MSG
  wait_for 15 shows_name || note "$tag: expected the message '$SHOWN_NAME'; seen '$STATUS_MSG'"
  t_named=$(uptime_s)
  # Shown by the very status that showed the interruption: the name came first.
  [ "$first" = "$SHOWN_NAME" ] && t_named=$t_int
  SHOWN=$STATUS_MSG
  hp=$(holder)
  hu=$([ -n "$hp" ] && ps -o user:20= -p "$hp" | tr -d ' ')
  [ "$hu" = shairport-sync ] || note "$tag: expected the holder (jukebox source begin) in shairport-sync.service's control group as user shairport-sync; seen '$hp' '$hu' ($(ss_procs | tr '\n' ' '))"
  sleep 2
  sample
  [ "$STATUS_PHASE" = interrupted ] || note "$tag: expected still interrupted 2 s into the session; seen '$STATUS_PHASE'"
  if [ "$how" = kill ]; then
    t_end=$(uptime_s)
    kill -KILL "$SENDER_PID"
  else
    echo teardown >&5
    wait_for 30 said_yet teardown-answered || note "$tag: TEARDOWN not answered: $(tr '\n' '|' <"$SLOG")"
    t_end=$(said teardown-sent)
  fi
  exec 5>&-
  wait "$SENDER_PID" 2>/dev/null
  wait_for 30 box_plays || note "$tag: expected jukebox playing on the card again after the session; seen phase '$STATUS_PHASE', card owner '$(card_owner)'"
  t_res=$(uptime_s)
  wait_for 10 no_holder || note "$tag: the holder still there after the session: $(holder)"
  [ -z "$(sender_problem)" ] || [ "$how" = kill ] || note "$tag: the sender said $(sender_problem)"
  # The place: the position the status showed while interrupted (where the player stopped) and
  # the first one read playing again, which may be ahead by at most the time since the session's
  # end (the player started again somewhere in it) and back by at most the card's buffer.
  place=$(dt "$frozen" "$STATUS_POS")
  played_on=$(dt "$t_end" "$t_res")
  limit=$(awk -v p="$played_on" -v m="$PLACE_MAX" 'BEGIN { printf "%.2f", (p == "?" ? 0 : p) + m }')
  if [ "$place" = "?" ] || awk -v d="$place" -v b="$BACK_MAX" -v m="$limit" 'BEGIN { exit !(d < -b || d > m) }'; then
    note "$tag: the place after the session $STATUS_POS s, where it stopped $frozen s (expected -$BACK_MAX..+$limit s)"
  fi
  over "$(dt "$t_rec" "$t_int")" "$RELEASE_MAX" && note "$tag: jukebox seen off the card $(dt "$t_rec" "$t_int") s after RECORD (at most $RELEASE_MAX)"
  over "$(dt "$t_end" "$t_res")" "$RESUME_MAX" && note "$tag: jukebox playing again $(dt "$t_end" "$t_res") s after the session's end (at most $RESUME_MAX)"
  # RECORD sent -> answered (the begin hook's wait) / -> off the card, status AirPlay seen /
  # -> the name seen / end -> playing on the card / the place after it minus where it stopped
  CYCLE="$(dt "$t_rec" "$t_ans")/$(dt "$t_rec" "$t_int")/$(dt "$t_rec" "$t_named")/$(dt "$t_end" "$t_res")/$place"
}

result() { # result NAME T0 TEXT: PASS with TEXT, or FAIL with the problems and the journals
  local s
  s=$(secs "$2")
  if ok; then
    echo "HIL-RESULT PASS $1 (${s}s): $3"
  else
    echo "HIL-RESULT FAIL $1 (${s}s)"
    for p in "${PROBLEMS[@]}"; do echo "  expected/seen: $p"; done
    echo "  seen so far: $3"
    echo "  jukebox (last 12 lines):"
    journalctl -b -u jukebox --no-pager -n 12 -o cat 2>&1 | sed 's/^/  | /'
    echo "  shairport-sync (last 12 lines):"
    journalctl -b -u shairport-sync --no-pager -n 12 -o cat 2>&1 | sed 's/^/  | /'
    journalctl -b --no-pager >"$L/journal-$1.txt" 2>&1
  fi
  PROBLEMS=()
}

phase_sessions() {
  local t0 i cycles=() killed="" restarted=""
  t0=$(uptime_s)
  echo "HIL-BEGIN airplay (uptime $t0 s)"
  setup
  if ok; then
    for i in $(seq 1 "$CYCLES"); do
      session "cycle $i" || break
      cycles+=("$CYCLE")
    done
  fi
  ok && session killed kill && killed=$CYCLE
  result airplay "$t0" "shairport-sync $SS_VERSION ($(head -n 1 "$L/shairport-sync-V.txt")), drop-in $DROPIN; apt install $INSTALLED s; $FILES shairport-sync as '$SS_USER'; shown '$SHOWN'; ${#cycles[@]} sessions (s: RECORD sent -> answered / -> jukebox off the card, AirPlay / -> the name shown / TEARDOWN sent -> playing on the card / place after - place stopped): ${cycles[*]}; the sender killed mid-session: $killed"
  # jukebox restarted (a config change, an upgrade, a crash's restart) while shairport-sync runs:
  # its pipe is made again; does the name still come through?
  t0=$(uptime_s)
  local before_ss
  before_ss=$(prop MainPID shairport-sync.service)
  systemctl restart jukebox.service || note "systemctl restart jukebox failed"
  JPID=$(prop MainPID)
  wait_for 30 ss_active || note "shairport-sync not active after jukebox's restart: $(ss_journal | tail -n 3 | tr '\n' '|')"
  restarted="shairport-sync $before_ss -> $(prop MainPID shairport-sync.service)"
  ok && session "after jukebox's restart" && restarted="$restarted; $CYCLE, shown '$SHOWN'"
  result airplay-restart "$t0" "$restarted"
  # jukebox killed (a crash; the unit's Restart=on-failure starts it again): the same question.
  t0=$(uptime_s)
  before_ss=$(prop MainPID shairport-sync.service)
  local before_j
  before_j=$(prop MainPID)
  systemctl kill -s KILL jukebox.service
  wait_for 60 restarted_since "$before_j" || note "jukebox not running again 60 s after it was killed: $(prop ActiveState) $(prop SubState)"
  JPID=$(prop MainPID)
  wait_for 30 ss_active || note "shairport-sync not active after jukebox's crash: $(ss_journal | tail -n 3 | tr '\n' '|')"
  restarted="jukebox $before_j -> $JPID ($(prop NRestarts) restarts), shairport-sync $before_ss -> $(prop MainPID shairport-sync.service)"
  ok && session "after jukebox's crash" && restarted="$restarted; $CYCLE, shown '$SHOWN'"
  result airplay-crash "$t0" "$restarted"
  journalctl -b --no-pager >"$L/journal-1.txt" 2>&1
}

# After a reboot: both services start at boot, in whatever order systemd gives them.
phase_boot() {
  local t0 order
  t0=$(uptime_s)
  echo "HIL-BEGIN airplay-boot (uptime $t0 s)"
  timeout 180 systemctl is-system-running --wait >/dev/null 2>&1
  JPID=$(prop MainPID)
  local ja sa
  ja=$(prop ActiveEnterTimestampMonotonic) sa=$(prop ActiveEnterTimestampMonotonic shairport-sync.service)
  order="jukebox active at ${ja} us, shairport-sync $(systemctl is-active shairport-sync) (active at ${sa} us, $(prop NRestarts shairport-sync.service) restarts); pipe: $(stat -c '%A %U:%G' "$PIPE" 2>&1)"
  ss_active || note "shairport-sync not active after the boot: $(ss_journal | grep -v '^$' | tail -n 4 | tr '\n' '|')"
  # Started before jukebox had made the pipe, it dies (Debian's Restart=on-failure may start it
  # again in time, or not: five starts in 10 s and it stays down).
  ss_journal | grep -q 'Could not create metadata pipe' \
    && note "shairport-sync started before jukebox's pipe was there and died ($(prop NRestarts shairport-sync.service) restarts): $(ss_journal | grep -m1 'Could not create metadata pipe')"
  [ "$(stat -c '%U' "$PIPE" 2>/dev/null)" = jukebox ] || note "the pipe is not jukebox's after the boot: $(stat -c '%A %U:%G' "$PIPE" 2>&1); jukebox said: $(journalctl -b -u jukebox --no-pager -o cat | grep 'airplay metadata' | tail -n 1)"
  ok && session "after the boot" && order="$order; $CYCLE, shown '$SHOWN'"
  result airplay-boot "$t0" "$order"
  journalctl -b --no-pager >"$L/journal-2.txt" 2>&1
}

case $PHASE in
  airplay-1) phase_sessions ;;
  airplay-2) phase_boot ;;
esac
echo "HIL-PHASE-DONE $PHASE (uptime $(uptime_s) s)"
sync
systemctl poweroff
