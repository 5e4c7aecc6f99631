# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Helpers for the HIL guest scenarios (sourced): result bookkeeping, condition waits, the sound
# card's /proc status, the control socket, gpio-sim lines and the i2c-hil byte log.
# Expects JB (the jukebox binary) and W (a work folder).

PASSED=0
FAILED=0
CURRENT=""
PROBLEMS=()
DETAILS=()

# Starts a scenario; its notes make it fail.
begin() { CURRENT=$1; PROBLEMS=(); DETAILS=(); T0=$(date +%s.%N); echo "HIL-BEGIN $1"; }
# A failed expectation: what was expected and what was seen.
note() { PROBLEMS+=("$*"); }
# Context printed with the result (always for failures, first line for passes).
detail() { DETAILS+=("$*"); }
finish() {
  local secs line
  secs=$(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  if [ ${#PROBLEMS[@]} -eq 0 ]; then
    PASSED=$((PASSED + 1))
    echo "HIL-RESULT PASS $CURRENT (${secs}s) ${DETAILS[0]:-}"
  else
    FAILED=$((FAILED + 1))
    echo "HIL-RESULT FAIL $CURRENT (${secs}s)"
    for line in "${PROBLEMS[@]}"; do echo "  expected/seen: $line"; done
    for line in "${DETAILS[@]}"; do printf '%s\n' "$line" | sed 's/^/  | /'; done
    if [ -n "${DLOG:-}" ] && [ -f "$DLOG" ]; then
      echo "  daemon log (last 15 lines above debug):"; grep -v '^<7>' "$DLOG" | tail -n 15 | sed 's/^/  | /'
    fi
  fi
}
summary() { echo "HIL-SUMMARY $PASSED passed, $FAILED failed"; }

# wait_for SECONDS CMD...: polls CMD every 50 ms until it succeeds; fails after SECONDS.
wait_for() {
  local limit=$1 end
  shift
  end=$(($(date +%s%N) + limit * 1000000000))
  while ! "$@"; do
    [ "$(date +%s%N)" -lt "$end" ] || return 1
    pause_for 0.05
  done
}
# A builtin sleep: under TCG, starting /usr/bin/sleep can take longer than a button press.
mkfifo "$W/.pause" && exec {PAUSE_FD}<>"$W/.pause"
pause_for() { read -r -t "$1" -u "$PAUSE_FD" _ || true; }
# A held button or a quiet period is part of the stimulus, not a synchronisation.
hold_for() { pause_for "$1"; }
settle() { pause_for "$1"; }

# ---- Sound card (/proc/asound/CARD/pcmNX/sub0/status) -------------------------------------------
pcm_status() { cat "/proc/asound/$1/pcm$2/sub0/status" 2>/dev/null; }
pcm_state() {
  local s
  s=$(pcm_status "$1" "$2")
  if [ "$3" = closed ]; then [ "$s" = closed ]; else grep -q "state: $3" <<<"$s"; fi
}
# The owner is the thread that opened the PCM: compare its process (Tgid) with PID.
pcm_owner_is() {
  local tid
  tid=$(pcm_status "$1" "$2" | awk '/owner_pid/ {print $3}')
  [ -n "$tid" ] && grep -Eq "^Tgid:\s+$3\$" "/proc/$tid/status" 2>/dev/null && pcm_state "$1" "$2" RUNNING
}

# ---- The control socket ------------------------------------------------------------------------
status_json() { "$CACHE/tools/hilctl" "$W/ctl" status --json 2>/dev/null | tail -n 1; }
json_field() {
  status_json | grep -o "\"$1\":\(\"[^\"]*\"\|[^,}]*\)" | head -n 1 | cut -d: -f2- | tr -d '"'
}
# ctl COMMAND...: a control command through the socket (hilctl: fast to start under TCG).
ctl() { "$CACHE/tools/hilctl" "$W/ctl" "$@" >/dev/null || note "control command '$*' failed"; }
status_is() { [ "$(json_field phase)" = "$1" ]; }
status_matches() { status_json | grep -Eq "$1"; }
field_is() { [ "$(json_field "$1")" = "$2" ]; }
# expect_status SECONDS FIELD VALUE WHAT: waits for FIELD to become VALUE, notes it otherwise.
expect_status() {
  wait_for "$1" field_is "$2" "$3" || note "after $4: expected $2 $3, seen $2 $(json_field "$2") ($(status_json))"
}

# ---- gpio-sim ----------------------------------------------------------------------------------
# sim_setup NAME...: one simulated chip with these named lines, all pulled up (buttons released).
sim_setup() {
  local c=/sys/kernel/config/gpio-sim/hil i=0 name
  mkdir -p "$c/bank0"
  echo $# > "$c/bank0/num_lines"
  for name in "$@"; do
    mkdir -p "$c/bank0/line$i"
    echo "$name" > "$c/bank0/line$i/name"
    SIM_OFFSET[$name]=$i
    i=$((i + 1))
  done
  echo 1 > "$c/live"
  SIM_SYSFS="/sys/devices/platform/$(cat "$c/dev_name")/$(cat "$c/bank0/chip_name")"
  for name in "$@"; do sim_line "$name" up; done
}
declare -A SIM_OFFSET
# sim_line NAME down|up: a button to ground (pressed, low) or released (pulled up).
sim_line() {
  if [ "$2" = down ]; then echo pull-down; else echo pull-up; fi > "$SIM_SYSFS/sim_gpio${SIM_OFFSET[$1]}/pull"
}
# sim_bounce NAME LEVEL [EDGES]: contact bounce: the line chatters (EDGES writes, odd, default 5)
# and settles at LEVEL; notes when the stimulus took longer than the test config's 50 ms debounce
# window (then it was not a bounce but separate presses).
sim_bounce() {
  local f="$SIM_SYSFS/sim_gpio${SIM_OFFSET[$1]}/pull" other=pull-up last=pull-down us n=${3:-5} levels=()
  if [ "$2" = up ]; then other=pull-down; last=pull-up; fi
  while [ ${#levels[@]} -lt $((n - 1)) ]; do levels+=("$last" "$other"); done
  us=$("$CACHE/tools/hilgpio" "$f" "${levels[@]}" "$last")
  detail "bounce $1 $2: $n edges in $us us"
  [ "$us" -lt 40000 ] || note "the bounce stimulus took $us us, not well within the 50 ms debounce window (host too slow?)"
}
press() { sim_line "$1" down; hold_for 0.1; sim_line "$1" up; }

# ---- i2c-hil -----------------------------------------------------------------------------------
i2c_clear() { echo clear > /sys/kernel/debug/i2c-hil/log; }
i2c_log() { cat /sys/kernel/debug/i2c-hil/log; }
# i2c_reg ADDR REG VALUE (hex): a 16-bit register that reads back at ADDR (a fuel gauge's); i2c_reg clear.
i2c_reg() { echo "$*" > /sys/kernel/debug/i2c-hil/regs || note "i2c-hil: cannot set register: $*"; }

# expect_screen SCREEN ROW REGEX: row ROW (1-based) of a replayed panel matches REGEX entirely.
expect_screen() {
  local row
  row=$(sed -n "${2}p" <<<"$1")
  [[ "$row" =~ ^\|$3\|$ ]] || note "screen row $2: expected /$3/, seen '$row'"
}
