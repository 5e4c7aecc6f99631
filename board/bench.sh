#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench.sh - regenerate the figures of README "Performance and reliability".
#
#   board/bench.sh [--quick] [--json FILE] [--only SECTION,...]
#
# Builds a release jukebox the way board/install.sh does (static Swift standard library) and
# jukebox-bench, compiles the ALSA test device with cc, then runs jukebox-bench: it plays through
# the test device and libasound's file PCM (no sound card needed) and prints a table and one JSON
# object. About 2-3 minutes on a 2-core machine with a warm build; --quick takes ~30 s (CI smoke test).
#
# Options:
#   --quick          shorter runs, fewer repeats, no 2,000-track folder
#   --json FILE      also write the JSON object to FILE
#   --only LIST      some of playback,resume,button,library,state,loop,gapless
# Environment:
#   JUKEBOX_BENCH_BUILD   the build folder (default /tmp/build-bench-rel; keep it for a warm build)
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'bench: %s\n' "$*" >&2; }
die() { say "$*"; exit 2; }

args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) args+=(--quick) ;;
    --json) [ $# -ge 2 ] || die "--json needs a FILE"; args+=(--json "$(realpath -m "$2")"); shift ;;
    --json=*) args+=(--json "$(realpath -m "${1#--json=}")") ;;
    --only) [ $# -ge 2 ] || die "--only needs a LIST"; args+=(--only "$2"); shift ;;
    --only=*) args+=(--only "${1#--only=}") ;;
    -h|--help) sed -n '3,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (try --help)" ;;
  esac
  shift
done

command -v swift >/dev/null 2>&1 || die "no swift on PATH (see README: board/setup.sh)"
command -v cc >/dev/null 2>&1 || die "no C compiler (apt-get install gcc)"
scratch=${JUKEBOX_BENCH_BUILD:-/tmp/build-bench-rel}

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
exec "$bin/jukebox-bench" --jukebox "$bin/jukebox" --test-pcm "$plugin" \
  --build "release, --static-swift-stdlib (as board/install.sh)" --toolchain "$toolchain" ${args[@]+"${args[@]}"}
