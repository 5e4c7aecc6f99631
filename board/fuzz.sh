#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# fuzz.sh - fuzz the parsers: the control language (socket lines and serial-console keystrokes),
# the config loader, the state file loader, HLS playlists, MPEG-TS, fragmented MP4 segments and
# podcast feeds, each for a bounded time.
#
# Builds jukebox-fuzz with libFuzzer (`swift build --sanitize=fuzzer -Xswiftc -DLIBFUZZER`) and
# runs each harness under it, starting from the seed corpus in Tests/FuzzCorpus/HARNESS. When
# libFuzzer cannot be built (a toolchain without libclang_rt.fuzzer), it says so and runs the
# plain build's seeded randomized mode instead. Every input also checks the parser's properties
# (round trips, messages that name the problem, bounded output); a failed property is a crash.
#
# Usage:
#   bash board/fuzz.sh [--seconds N] [--random] [--out DIR] [HARNESS...]
#
#   HARNESS        command, config, state, runtime, hls, ts, fmp4, feed (default: all eight)
#   --seconds N    per harness (default 60; env FUZZ_SECONDS)
#   --random       skip libFuzzer, use the randomized mode (env FUZZ_MODE=random)
#   --out DIR      work folder (default /tmp/jukebox-fuzz; env FUZZ_OUT): DIR/crashes holds
#                  crashing inputs, DIR/corpus/HARNESS what libFuzzer learnt, DIR/HARNESS.log the log
#   env FUZZ_SEED  seed of the randomized mode (default: the time; printed, to repeat a run)
#   env FUZZ_SCRATCH  build folder prefix (default .build/fuzz; -lf and -plain are appended)
#
# A hang (one input over 10 s) or more than 2 GB of memory counts as a crash. libFuzzer runs with
# SWIFT_BACKTRACE=enable=no: otherwise Swift's crash handler takes the signal of a failed
# property and libFuzzer never writes the input.
#
# Exits 1 when a harness found a crash (the input is in DIR/crashes: copy it to
# Tests/FuzzCorpus/HARNESS/crash-WHAT, fix the parser, and FuzzRegressionTests replays it),
# 2 when nothing could be built.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH=${FUZZ_SECONDS:-60}
MODE=${FUZZ_MODE:-auto}
OUT=${FUZZ_OUT:-/tmp/jukebox-fuzz}
SEED=${FUZZ_SEED:-$(date +%s)}
SCRATCH=${FUZZ_SCRATCH:-.build/fuzz}
HARNESSES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_EACH=$2; shift 2 ;;
    --random) MODE=random; shift ;;
    --out) OUT=$2; shift 2 ;;
    command|config|state|runtime|hls|ts|fmp4|feed) HARNESSES+=("$1"); shift ;;
    -h|--help) sed -n '/^# Usage/,/^# Exits/p' "$0" | sed -e 's/^# \{0,1\}//' -e '$d'; exit 0 ;;
    *) echo "fuzz: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
done
[ ${#HARNESSES[@]} -gt 0 ] || HARNESSES=(command config state runtime hls ts fmp4 feed)
case "$SECONDS_EACH" in ''|*[!0-9]*) echo "fuzz: --seconds needs a whole number" >&2; exit 2 ;; esac
mkdir -p "$OUT/crashes"

BIN=
if [ "$MODE" != random ]; then
  echo "fuzz: building jukebox-fuzz with libFuzzer (release, -sanitize=fuzzer)"
  LF=(-c release --product jukebox-fuzz -Xswiftc -DLIBFUZZER --scratch-path "$SCRATCH-lf")
  # SwiftPM 6.0 (Debian 13's swiftlang 6.0.3) refuses --sanitize=fuzzer, and -Xswiftc
  # -sanitize=fuzzer does not link there (its executable link wants the target's own main, and
  # its libclang_rt.fuzzer trips both ld and lld): that toolchain gets the randomized mode.
  if swift build "${LF[@]}" --sanitize=fuzzer >"$OUT/build-libfuzzer.log" 2>&1; then
    BIN=$(swift build "${LF[@]}" --sanitize=fuzzer --show-bin-path)/jukebox-fuzz
    MODE=libfuzzer
  else
    echo "fuzz: libFuzzer build failed (see $OUT/build-libfuzzer.log; last lines below):" >&2
    tail -n 5 "$OUT/build-libfuzzer.log" >&2 || true
    echo "fuzz: falling back to the randomized mode (no coverage feedback)" >&2
    MODE=random
  fi
fi
if [ "$MODE" = random ]; then
  echo "fuzz: building jukebox-fuzz (release, randomized mode)"
  swift build -c release --product jukebox-fuzz --scratch-path "$SCRATCH-plain" >"$OUT/build-plain.log" 2>&1 \
    || { tail -n 20 "$OUT/build-plain.log" >&2; echo "fuzz: cannot build jukebox-fuzz" >&2; exit 2; }
  BIN=$(swift build -c release --product jukebox-fuzz --scratch-path "$SCRATCH-plain" --show-bin-path)/jukebox-fuzz
  echo "fuzz: randomized mode, seed $SEED (FUZZ_SEED=$SEED repeats this run)"
fi

# The harnesses' scratch files (state files, the runtime's socket), in RAM where there is some.
if [ -w /dev/shm ]; then JUKEBOX_FUZZ_TMP=/dev/shm/jukebox-fuzz.$$; else JUKEBOX_FUZZ_TMP=$OUT/tmp; fi
export JUKEBOX_FUZZ_TMP
trap 'rm -rf "$JUKEBOX_FUZZ_TMP"' EXIT

# One harness: its summary line to $OUT/$h.line, its exit status returned.
fuzz_one() {
  local h=$1 log=$OUT/$1.log rc line execs rate cov corp
  set +e
  if [ "$MODE" = libfuzzer ]; then
    mkdir -p "$OUT/corpus/$h"
    "$BIN" dict "$h" >"$OUT/$h.dict"
    # New inputs go to the first folder (the work corpus), never into the repository.
    # The Swift runtime's own crash handler would otherwise take the signal before libFuzzer can
    # save the input.
    SWIFT_BACKTRACE=enable=no "$BIN" "$h" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -dict="$OUT/$h.dict" -artifact_prefix="$OUT/crashes/$h-" "$OUT/corpus/$h" "Tests/FuzzCorpus/$h" >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -n 1)
    corp=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$log" | tail -n 1)
    line="$h: ${execs:-?} executions, ${rate:-?} exec/s, ${cov:-cov: ?}, ${corp:-corp: ?}"
  else
    timeout $((SECONDS_EACH + 120)) "$BIN" "$h" --seconds "$SECONDS_EACH" --seed "$SEED" \
      --corpus "Tests/FuzzCorpus/$h" --crash-dir "$OUT/crashes" >"$log" 2>&1
    rc=$?
    line=$(grep "random mode" "$log" | tail -n 1 | sed 's/^jukebox-fuzz //')
    [ -n "$line" ] || line="$h: no statistics"
  fi
  set -e
  if [ $rc -ne 0 ]; then
    [ $rc -eq 124 ] && echo "fuzz: $h hung (killed after $((SECONDS_EACH + 120)) s)" >"$OUT/crashes/$h-hang-seed$SEED"
    line="$line -- CRASH (exit $rc)"
    echo "fuzz: $h crashed; the end of $log:" >&2
    grep -E 'Fatal error|property failed|ERROR: libFuzzer|SUMMARY|Test unit written|input written' "$log" | head -n 10 >&2 || true
  fi
  echo "fuzz: $line"
  printf '%s\n' "$line" >"$OUT/$h.line"
  return $rc
}

# Each harness is one process on one core: FUZZ_JOBS (default: the cores) run at once.
jobs_at_once=${FUZZ_JOBS:-$(nproc)}
declare -A pid_of=()
failed=()
summary=()
for h in "${HARNESSES[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_at_once" ]; do wait -n || true; done
  echo "fuzz: $h for $SECONDS_EACH s ($MODE)"
  fuzz_one "$h" &
  pid_of[$h]=$!
done
for h in "${HARNESSES[@]}"; do
  wait "${pid_of[$h]}" || failed+=("$h")
  summary+=("$(cat "$OUT/$h.line" 2>/dev/null || echo "$h: no statistics")")
done

echo "fuzz: summary ($MODE, $SECONDS_EACH s each; logs, corpus and crashes in $OUT)"
printf '  %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: crashes in: ${failed[*]}; inputs:" >&2
  ls -1 "$OUT/crashes" >&2
  exit 1
fi
echo "fuzz: no crashes"
