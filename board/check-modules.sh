#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check-modules.sh - fails when the module graph loses its one-way arrows (docs/ARCHITECTURE.md
# section 1: Core <- Service <- App -> Audio/Board). Needs no build and no root (board/test.sh
# runs it): from `swift package describe`, the closure of each target's dependencies must hold
# none of the targets listed against it:
#   - JukeboxService, JukeboxServiceTests and JukeboxTestSupport (the tests' shared doubles): no
#     adapter and no C library but Linux's own headers (no ALSA, libsndfile, TagLib or libgpiod:
#     the service builds and is tested without them);
#   - JukeboxAudio, JukeboxBoard: not the service or the wiring (adapters know only their own vocabulary
#     and the core's display words);
#   - JukeboxCore: nothing at all; JukeboxSystem: nothing but Glibc.
# and a face that is a room of its own (MPD/, Control/, Console/) names neither the runtime nor
# another face's types in its code: it reaches the loop through its port (`MPDLoop`, `ControlLoop`);
# and the runtime is one file: no other file extends `Runtime` (a port holds what it needs instead).
#
#   bash board/check-modules.sh           the closure check
#   sudo bash board/check-modules.sh --build
#                                         also builds JukeboxServiceTests (and so JukeboxService)
#                                         from nothing with the ALSA, libsndfile, TagLib and libgpiod
#                                         headers hidden (a private mount namespace; minutes)
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { printf 'check-modules: FAIL: %s\n' "$*" >&2; exit 1; }

adapters="JukeboxAudio JukeboxBoard JukeboxApp JukeboxMQTT JukeboxWeb CWeb CLibraryLoader CALSA CSndfile CTagLib CMosquitto CAlsaMessages CInput CHTTP CMpg123 COgg COpus CFaad CFLAC CSoundTouch CEbur128 CExpat JukeboxFixtures JukeboxTestPCM"
rules=(
  "JukeboxService:$adapters JukeboxTestSupport"
  # The tests may use the shared test doubles (JukeboxTestSupport), which must then reach no adapter either.
  "JukeboxServiceTests:$adapters"
  "JukeboxTestSupport:$adapters"
  "JukeboxAudio:JukeboxService JukeboxApp JukeboxBoard JukeboxCore"
  "JukeboxBoard:JukeboxService JukeboxApp JukeboxAudio"
  # The MQTT face reaches the player through the control socket only: no adapter, not the wiring.
  "JukeboxMQTT:JukeboxAudio JukeboxBoard JukeboxApp CALSA CSndfile CTagLib CAlsaMessages CInput CHTTP CMpg123 COgg COpus CFaad CFLAC CSoundTouch CEbur128 CExpat"
  # So does the web face (docs/WEB.md): libmicrohttpd and libcrypt only, through CWeb.
  "JukeboxWeb:JukeboxAudio JukeboxBoard JukeboxApp JukeboxMQTT CALSA CSndfile CTagLib CMosquitto CAlsaMessages CInput CHTTP CMpg123 COgg COpus CFaad CFLAC CSoundTouch CEbur128 CExpat"
  "JukeboxCore:*"
  "JukeboxSystem:*"
)

described=$(swift package describe --type text 2>/dev/null) || fail "swift package describe failed"

# NAME: DEP DEP ... for every target, from the text description's Targets section.
edges=$(printf '%s\n' "$described" | awk '
  /^Targets:/ { t = 1; next }
  t && /^    Name: / { name = $2; deps[name] = ""; order[++n] = name; inDeps = 0; next }
  t && /^    Target dependencies:/ { inDeps = 1; next }
  t && inDeps && /^        [^ ]/ { deps[name] = deps[name] " " $1; next }
  t && /^    [^ ]/ { inDeps = 0 }
  END { for (i = 1; i <= n; i++) print order[i] ":" deps[order[i]] }')
[ -n "$edges" ] || fail "no targets in swift package describe's output"

deps_of() { printf '%s\n' "$edges" | sed -n "s/^$1: *//p"; }

# The transitive closure of a target's dependencies (the target itself left out).
closure() {
  local todo=("$1") seen=" " t d
  printf '%s\n' "$edges" | grep -q "^$1:" || fail "no target $1"
  while [ "${#todo[@]}" -gt 0 ]; do
    t=${todo[0]}
    todo=("${todo[@]:1}")
    for d in $(deps_of "$t"); do
      case "$seen" in *" $d "*) ;; *) seen="$seen$d "; todo+=("$d") ;; esac
    done
  done
  printf '%s\n' "$seen" | xargs
}

for rule in "${rules[@]}"; do
  target=${rule%%:*}
  banned=${rule#*:}
  reach=$(closure "$target")
  if [ "$banned" = "*" ]; then
    [ -z "$reach" ] || fail "$target must depend on nothing of this package, depends on: $reach"
  else
    for b in $banned; do
      case " $reach " in *" $b "*) fail "$target reaches $b (its closure: $reach)" ;; esac
    done
  fi
  echo "check-modules: $target -> ${reach:-(nothing)}"
done

# Faces that are rooms of their own reach the loop only through their port (`MPDLoop`,
# `ControlLoop`): no file in such a folder names `Runtime` or a port's implementation (`ControlPort`,
# `MPDPort`, `LoopCore`), nor a type declared in another face's
# folder, in code (comments may). The types are read from the folders, so a new type in a face is
# banned from the others without editing this list. The socket plumbing that lives in Control/
# (`shared`) is for every face.
service=Sources/JukeboxService
face_folders="MPD Snapcast Console Control"
face_rooms="MPD Control Console"
shared="LineSplitter UnixSocket SocketFolder"
declared() {
  grep -hoE '^([a-z]+ )*(class|struct|enum|protocol|actor) [A-Z][A-Za-z0-9_]*' "$service/$1"/*.swift | awk '{print $NF}' | sort -u
}
for room in $face_rooms; do
  folder=$service/$room
  banned="Runtime ControlPort MPDPort LoopCore"
  for other in $face_folders; do
    [ "$other" = "$room" ] && continue
    for t in $(declared "$other"); do
      case " $shared " in *" $t "*) ;; *) banned="$banned $t" ;; esac
    done
  done
  for name in $banned; do
    # Code only: lines that are not comments.
    hits=$(grep -n -w "$name" "$folder"/*.swift | grep -v -E '^[^:]+:[0-9]+:[[:space:]]*//' || true)
    [ -z "$hits" ] || fail "$folder reaches $name (a face talks to the loop through its port): $hits"
  done
  echo "check-modules: $folder names neither Runtime nor another face's types ($(echo "$banned" | wc -w) names)"
done

# The runtime is one file: a port is a class of its own holding what it needs, never an
# extension of `Runtime` elsewhere (issue 27: the class stays small enough to read at once).
ext=$(grep -rln -E '^[[:space:]]*(public |internal |private |fileprivate )?extension Runtime\b' "$service" | grep -v -x "$service/Loop/Runtime.swift" || true)
[ -z "$ext" ] || fail "Runtime is extended outside Loop/Runtime.swift: $ext"
echo "check-modules: Runtime is one file"

[ "${1:-}" = --build ] || exit 0

# The same, proven by a compiler: a build from nothing where the adapters' headers do not exist.
[ "$(id -u)" -eq 0 ] || fail "--build needs root (a private mount namespace hides the headers)"
scratch=$(mktemp -d /var/tmp/jukebox-check-modules.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/empty"
: > "$scratch/empty-file"
hide=()
for h in /usr/include/alsa /usr/include/taglib /usr/include/sndfile.h /usr/include/gpiod.h /usr/include/x86_64-linux-gnu/mpg123.h /usr/include/aarch64-linux-gnu/mpg123.h /usr/include/neaacdec.h /usr/include/FLAC \
  /usr/include/x86_64-linux-gnu/curl /usr/include/aarch64-linux-gnu/curl /usr/include/ogg /usr/include/vorbis /usr/include/opus; do
  [ -e "$h" ] || continue
  if [ -d "$h" ]; then hide+=("$scratch/empty:$h"); else hide+=("$scratch/empty-file:$h"); fi
done
echo "check-modules: building JukeboxServiceTests from nothing with these hidden: ${hide[*]#*:}"
# In the namespace: hide, check they are hidden, build, then list what was compiled. SwiftPM
# plans every target's .build folder; only what was compiled has a module or an object file.
# shellcheck disable=SC2016  # expanded by the inner shell
unshare --mount --propagation private bash -euc '
  scratch=$1; shift
  for pair in "$@"; do
    mount --bind "${pair%%:*}" "${pair#*:}"
    h=${pair#*:}
    if [ -d "$h" ]; then [ -z "$(ls -A "$h")" ]; else [ ! -s "$h" ]; fi
  done
  swift build -j 2 --target JukeboxServiceTests --scratch-path "$scratch/build" >"$scratch/build.log" 2>&1 \
    || { tail -n 40 "$scratch/build.log"; exit 1; }
  built=$(cd "$scratch/build/debug/Modules" && ls -- *.swiftmodule | sed "s/[.]swiftmodule\$//" | xargs)
  echo "check-modules: compiled: $built"
  for m in JukeboxAudio JukeboxBoard JukeboxApp; do case " $built " in *" $m "*) exit 1 ;; esac; done
  [ -z "$(find "$scratch/build/debug/CInput.build" "$scratch/build/debug/CAlsaMessages.build" -name "*.o")" ]
' check-modules "$scratch" "${hide[@]}" || fail "JukeboxServiceTests did not build without the adapters' headers"
echo "check-modules: JukeboxServiceTests built without ALSA, libsndfile, TagLib or libgpiod headers"
