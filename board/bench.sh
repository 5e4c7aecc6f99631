#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench.sh - regenerate the figures of docs/TESTING.md "Performance and reliability".
#
#   board/bench.sh [--quick] [--json FILE] [--only SECTION,...] [--day-hour SECONDS] [--vs-mpd [FILE]]
#
# Builds a release jukebox the way board/install.sh does (static Swift standard library) and
# jukebox-bench, compiles the ALSA test device with cc, then runs jukebox-bench: it plays through
# the test device and libasound's file PCM (no sound card needed) and prints a table and one JSON
# object. About 7 minutes on a 2-core machine with a warm build; --quick takes about two (CI smoke test;
# its day section, two compressed days, about 90 s).
#
# Options:
#   --quick          shorter runs, fewer repeats, no 2,000-track folder
#   --json FILE      also write the JSON object to FILE
#   --only LIST      some of playback,resume,button,latency,library,usb,state,loop,gapless,idle,web,faces,day
#                    (web: not in --quick unless named; faces: `jukebox run` with MPD, MQTT (mosquitto,
#                    when installed) and the web app on, and without, on the test device and plug over it)
#   --day-hour SECONDS  wall seconds per "hour" of the day section (default 1.75 with --quick, else 6;
#                    180: a whole day of audio at 20x real time, 72 minutes a day, two days)
#   --vs-mpd [FILE]  then, when MPD is installed, MPD and this jukebox side by side in one run:
#                    ../shared/bench/side-by-side.sh (paced CPU through ALSA's pulse plugin, RSS,
#                    PSS, idle CPU; ~6 minutes); its JSON to FILE (default: beside --json, or not kept)
# Environment:
#   JUKEBOX_BENCH_BUILD   the build folder (default /var/tmp/jukebox-bench-build, ours alone: see
#                         board/private-dir.sh; kept for a warm build)
#   JUKEBOX_SIDE_BY_SIDE  the side-by-side script (default: ../shared/bench/side-by-side.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'bench: %s\n' "$*" >&2; }
die() { say "$*"; exit 2; }

args=()
vs_mpd=0
vs_mpd_json=
json=
while [ $# -gt 0 ]; do
  case "$1" in
    --vs-mpd)
      vs_mpd=1
      if [ $# -ge 2 ] && [ "${2#-}" = "$2" ]; then vs_mpd_json=$(realpath -m "$2"); shift; fi ;;
    --quick) args+=(--quick) ;;
    --json) [ $# -ge 2 ] || die "--json needs a FILE"; json=$(realpath -m "$2"); args+=(--json "$json"); shift ;;
    --json=*) json=$(realpath -m "${1#--json=}"); args+=(--json "$json") ;;
    --only) [ $# -ge 2 ] || die "--only needs a LIST"; args+=(--only "$2"); shift ;;
    --only=*) args+=(--only "${1#--only=}") ;;
    --day-hour) [ $# -ge 2 ] || die "--day-hour needs SECONDS"; args+=(--day-hour "$2"); shift ;;
    --day-hour=*) args+=(--day-hour "${1#--day-hour=}") ;;
    -h|--help) sed -n '3,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (try --help)" ;;
  esac
  shift
done

command -v swift >/dev/null 2>&1 || die "no swift on PATH (see README: board/setup.sh)"
command -v cc >/dev/null 2>&1 || die "no C compiler (apt-get install gcc)"
scratch=${JUKEBOX_BENCH_BUILD:-/var/tmp/jukebox-bench-build}
# The player loads the test device from this folder: it must be ours alone.
. board/private-dir.sh
private_dir "$scratch" JUKEBOX_BENCH_BUILD || exit 1

# The same build as install.sh: release, Swift standard library linked in. Both products in one
# scratch folder with the same flags, so the second build reuses the first one's modules.
build=(swift build -c release --static-swift-stdlib --scratch-path "$scratch")
say "building jukebox and jukebox-bench (${build[*]})"
"${build[@]}" --product jukebox >&2
"${build[@]}" --product jukebox-bench >&2
bin=$("${build[@]}" --show-bin-path)

# The test device with cc, not SwiftPM: SwiftPM links its dynamic library products to
# libswiftCore.so, which would put a second Swift runtime into the player and its memory figures.
plugin="$scratch/bench/libJukeboxTestPCM.so"
mkdir -p "$scratch/bench"
if [ ! -f "$plugin" ] || [ Sources/JukeboxTestPCM/jukeboxtest.c -nt "$plugin" ]; then
  say "compiling the test device ($plugin)"
  cc -O2 -shared -fPIC -DPIC -ISources/JukeboxTestPCM/include -o "$plugin" Sources/JukeboxTestPCM/jukeboxtest.c -lasound
fi

toolchain=$(swift --version 2>/dev/null | head -n 1)
say "running jukebox-bench"
status=0
"$bin/jukebox-bench" --jukebox "$bin/jukebox" --test-pcm "$plugin" \
  --build "release, --static-swift-stdlib (as board/install.sh)" --toolchain "$toolchain" ${args[@]+"${args[@]}"} || status=$?

if [ "$vs_mpd" = 1 ]; then
  harness=${JUKEBOX_SIDE_BY_SIDE:-$(pwd)/../shared/bench/side-by-side.sh}
  if ! command -v mpd >/dev/null 2>&1; then
    say "--vs-mpd: MPD is not installed (apt-get install mpd): side by side skipped"
  elif [ ! -f "$harness" ]; then
    say "--vs-mpd: no side-by-side script at $harness (set JUKEBOX_SIDE_BY_SIDE): skipped"
  else
    if [ -z "$vs_mpd_json" ] && [ -n "$json" ]; then vs_mpd_json="${json%.json}-vs-mpd.json"; fi
    say "MPD and jukebox side by side ($harness; $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ))"
    bash "$harness" "$bin/jukebox" --sections paced,idle \
      ${vs_mpd_json:+--out "$vs_mpd_json"} || status=$?
  fi
fi
exit "$status"
