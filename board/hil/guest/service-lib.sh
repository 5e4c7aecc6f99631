# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Helpers for the two systemd guests' drivers (sourced): board/hil/guest/service.sh (amd64, from
# the checkout) and board/hil/arm64/guest.sh (arm64: board/hil/arm64.sh copies this file beside
# it). Result lines, waits, the service's properties and the power-cut check, defined once.
# Expects OUT (the run folder), PHASE, CONFIG and the driver's own `status_json` (one line of
# `status --json`); WAIT_POLL sets the seconds between wait_for's polls (default 0.1).

PROBLEMS=()
uptime_s() { cut -d' ' -f1 /proc/uptime; }
# since T: whole seconds of uptime since T.
since() { awk -v a="$1" -v b="$(uptime_s)" 'BEGIN { printf "%.0f", b - a }'; }
# Starts a scenario; its notes make it fail.
begin() { CURRENT=$1; PROBLEMS=(); T0=$(uptime_s); echo "HIL-BEGIN $1 (uptime $T0 s)"; }
# A failed expectation: what was expected and what was seen.
note() { PROBLEMS+=("$*"); }
# finish TEXT: the scenario's HIL-RESULT line (TEXT on a pass; the notes and the journal's tail
# on a failure).
finish() {
  local line secs
  secs=$(awk -v a="$T0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')
  if [ ${#PROBLEMS[@]} -eq 0 ]; then
    echo "HIL-RESULT PASS $CURRENT (${secs}s): $*"
  else
    echo "HIL-RESULT FAIL $CURRENT (${secs}s)"
    for line in "${PROBLEMS[@]}"; do echo "  expected/seen: $line"; done
    echo "  journal (jukebox, last 20 lines):"
    journalctl -b -u jukebox --no-pager -n 20 -o cat 2>&1 | sed 's/^/  | /'
  fi
}
# wait_for SECONDS CMD...: polls CMD every WAIT_POLL seconds until it succeeds; fails after SECONDS.
wait_for() {
  local end=$(($(date +%s) + $1))
  shift
  until "$@"; do
    [ "$(date +%s)" -lt "$end" ] || return 1
    sleep "${WAIT_POLL:-0.1}"
  done
}
prop() { systemctl show -p "$1" --value jukebox.service; }
# field NAME JSON: a top-level value of a `status --json` line.
field() { grep -o "\"$1\":\(\"[^\"]*\"\|[^,}]*\)" <<<"$2" | head -n 1 | cut -d: -f2- | tr -d '"'; }
playing() { [[ "$(prop StatusText)" == playing:* ]]; }
active() { [ "$(prop ActiveState)" = active ]; }
done_phase() { echo "HIL-PHASE-DONE $PHASE (uptime $(uptime_s) s)"; sync; }

# check_power_cut SECONDS: after the host killed the machine mid-track at the position it wrote
# to $OUT/position-at-cut, the service comes back active and playing (within SECONDS), resumed
# (its journal's first "resuming … at P s" line of this boot: what it read from the queue file
# and the place sidecar, as it reads them) at a position within the save interval before the
# cut, and plays on from there. Notes what does not hold; sets cut, json, pos, spos and interval
# for the result line.
check_power_cut() {
  local line
  cut=$(cat "$OUT/position-at-cut" 2>/dev/null)
  wait_for 120 active || note "expected jukebox.service active after the power cut; seen $(prop ActiveState)"
  wait_for "$1" playing || note "expected it to play on after the power cut; seen '$(prop StatusText)'"
  json=$(status_json)
  pos=$(field position "$json")
  line=$(journalctl -b -u jukebox --no-pager -o cat 2>/dev/null | grep -m 1 '^resuming ')
  spos=$(grep -o ' at [0-9.]* s' <<<"$line" | grep -o '[0-9.]*')
  interval=$(grep -o '"saveInterval": *[0-9]*' "$CONFIG" | grep -o '[0-9]*$' || true)
  interval=${interval:-5}
  if [ -z "$cut" ]; then
    note "the host could not read the position before the cut"
  elif [ -z "$spos" ]; then
    note "no 'resuming … at P s' line in the journal of this boot: '${line:-none}'"
  elif ! awk -v r="$spos" -v c="$cut" -v i="$interval" 'BEGIN { exit !(r >= c - i - 0.5 && r <= c + 0.1) }'; then
    note "expected to resume within the save interval ($interval s) before $cut s, resumed at $spos s ($line; files at boot: queue $(grep -o '"position" *: *[0-9.]*' /run/hil-state-at-boot.json 2>/dev/null | head -n 1), place $(tr -d '\0' </run/hil-place-at-boot.json 2>/dev/null | tr '\n' ' ' | head -c 400))"
  fi
  # Played on: the resumed track at or past the resumed place, or (the cut came near its end, and a
  # loaded TCG guest is slow to get here) another track after the resumed one started (with repeat
  # all, which boot 2 sets so the queue never runs out, that may be track 1).
  local strack index first
  strack=$(grep -o ': track [0-9]* at' <<<"$line" | grep -o '[0-9]*')
  index=$(field index "$json")
  if [ -n "$strack" ] && [ "$index" != "$strack" ]; then
    first=$(journalctl -b -u jukebox --no-pager -o cat 2>/dev/null | grep -m 1 -o '^playing: .*\[[0-9]*/' | grep -o '[0-9]*/$' | tr -d /)
    [ "$first" = "$strack" ] && [ -n "$index" ] \
      || note "expected to play on from track $strack at $spos s, seen track $index (the first track this boot played: '$first') ($json)"
  else
    awk -v p="${pos:-0}" -v s="${spos:-0}" 'BEGIN { exit !(p >= s) }' || note "expected to play on from $spos s, seen position $pos ($json)"
  fi
}
