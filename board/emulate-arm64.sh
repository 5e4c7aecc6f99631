#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# emulate-arm64.sh - the cross-built arm64 jukebox run under qemu-aarch64 (user mode) against the
# arm64 sysroot of board/cross-build.sh, on this x86-64 machine (board/test.sh runs it):
#   1. `jukebox --version` prints the source's version;
#   2. `play` of a FLAC (16-bit) and of an MP3 (decoded to float) to an ALSA `file` PCM at volume
#      100: each recording is bit-identical to the same file decoded by the sysroot's own
#      libsndfile (board/cross/decode.c, cross-compiled here and also run under qemu), followed
#      by nothing but silence;
#   3. `play --state`: stopped with SIGTERM part-way, the state file holds a position; played
#      again, it resumes there: the recording is the source's decode from that frame on.
#
#   sudo bash board/emulate-arm64.sh [BINARY]     (default: $CROSS_CACHE/out/arm64/jukebox)
#
# Installs qemu-user-static, sox, libsox-fmt-mp3 and file with apt-get when missing (sox makes the test
# audio). Needs no binfmt_misc: qemu-aarch64-static is called directly with -L SYSROOT.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'emulate-arm64: %s\n' "$*" >&2; }
fail() { say "FAIL: $*"; exit 1; }

cache=${CROSS_CACHE:-/var/tmp/jukebox-cross}
. board/private-dir.sh
private_dir "$cache" CROSS_CACHE || exit 1
sysroot=$cache/arm64-sysroot
bin=$(realpath "${1:-$cache/out/arm64/jukebox}")
[ -x "$bin" ] || fail "no arm64 binary $bin: run board/cross-build.sh --arch arm64"
[ -e "$sysroot/.jukebox-sysroot-done" ] || fail "no arm64 sysroot in $sysroot: run board/cross-build.sh --arch arm64"

missing=()
for p in qemu-user-static sox libsox-fmt-mp3 file; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || fail "need root to install ${missing[*]}"
  say "apt-get install ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
t0=$SECONDS

arm64() { qemu-aarch64-static -L "$sysroot" "$@"; }

# The reference decoder, cross-compiled with the trixie chroot's clang against the sysroot.
decode=$cache/out/arm64/decode
bash board/trixie-chroot.sh --bind "$cache" /usr/libexec/swift/bin/clang \
  --target=aarch64-linux-gnu --sysroot="$sysroot" -fuse-ld=lld -O2 -Wall -Werror \
  board/cross/decode.c -lsndfile -o "$decode" 2>"$work/cc.log" || fail "compiling decode.c: $(cat "$work/cc.log")"

# 1. version
want="jukebox $(sed -n 's/^let jukeboxVersion = "\([^"]*\)"$/\1/p' Sources/jukebox/Help.swift)"
got=$(arm64 "$bin" --version)
[ "$got" = "$want" ] || fail "--version printed '$got', expected '$want'"
say "--version: $got ($(file -b "$bin" | cut -d, -f1-2))"

# 2. bit-exact playback. Noise, so that no stretch of the source is silent by chance.
sox -q -D -n -r 44100 -c 2 -b 16 "$work/a.flac" synth 6 whitenoise gain -6
sox -q -D -n -r 44100 -c 2 -C 192 "$work/b.mp3" synth 6 whitenoise gain -10

# expect_decode RECORDING REFERENCE SKIP [FADE]: RECORDING = REFERENCE from byte SKIP on, then
# only zeros; the first FADE bytes of RECORDING (a fade-in) are not compared.
expect_decode() {
  local rec=$1 ref=$2 skip=$3 fade=${4:-0} rsize size n
  rsize=$(stat -c %s "$ref"); size=$(stat -c %s "$rec"); n=$((rsize - skip))
  [ "$n" -gt 0 ] || fail "$(basename "$rec"): nothing to compare (reference $rsize bytes, skip $skip)"
  [ "$size" -ge "$n" ] || fail "$(basename "$rec"): $size bytes recorded, $n expected"
  cmp -s -n "$((n - fade))" -i "$((skip + fade)):$fade" "$ref" "$rec" \
    || fail "$(basename "$rec"): differs from the reference decode: $(cmp -n "$((n - fade))" -i "$((skip + fade)):$fade" "$ref" "$rec" 2>&1 | head -n 1)"
  [ "$(tail -c +"$((n + 1))" "$rec" | tr -d '\0' | wc -c)" -eq 0 ] \
    || fail "$(basename "$rec"): something other than silence after the decoded audio"
}

play_to_file() { # play_to_file RECORDING ARGS...
  local rec=$1; shift
  arm64 "$bin" play --device "file:FILE=$rec,FORMAT=raw" --volume 100 --socket "" "$@" </dev/null
}

for f in a.flac:int16 b.mp3:float32; do
  name=${f%%:*} enc=${f#*:}
  arm64 "$decode" "$work/$name" "$work/$name.ref.raw" || fail "decode $name"
  t=$SECONDS
  play_to_file "$work/$name.rec.raw" "$work/$name" || fail "play $name exited with status $?"
  expect_decode "$work/$name.rec.raw" "$work/$name.ref.raw" 0
  say "play $name ($enc) to an ALSA file PCM: bit-identical to the reference decode ($(stat -c %s "$work/$name.ref.raw") bytes, $((SECONDS - t)) s)"
done

# 3. state written and resumed (--audio null keeps real time: stopped after about 3 s).
# qemu itself in the background (not through a function: $! would be a subshell, not the player).
qemu-aarch64-static -L "$sysroot" "$bin" play --audio null --state "$work/state.json" --socket "" "$work/a.flac" </dev/null &
pid=$!
sleep 4
kill -TERM "$pid"
wait "$pid" || fail "play --state exited with status $? on SIGTERM"
[ -s "$work/state.json" ] || fail "no state file written"
# The place (position among it) is in the sidecar beside the queue file once it has been saved there.
place="$work/state.json"
[ -s "$work/state.json.place" ] && place="$work/state.json.place"
position=$(grep -o '"position"[^,}]*' "$place" | head -n 1 | sed 's/.*: *//')
[ -n "$position" ] || fail "no position in the state file: $(cat "$place")"
awk -v p="$position" 'BEGIN { exit !(p > 0.5 && p < 5.9) }' || fail "saved position $position s is not within the 6 s track"
play_to_file "$work/resume.rec.raw" --state "$work/state.json" "$work/a.flac" || fail "resumed play exited with status $?"
# The recording is the decode from the resume frame on (4 bytes a frame; no padding at the end).
rsize=$(stat -c %s "$work/a.flac.ref.raw")
skip=$(( rsize - $(stat -c %s "$work/resume.rec.raw") ))
found=$(( skip / 4 ))
expected=$(awk -v p="$position" 'BEGIN { printf "%d", p * 44100 }')
if [ $(( skip % 4 )) -ne 0 ] || [ "$found" -lt $(( expected - 4410 )) ] || [ "$found" -gt $(( expected + 4410 )) ]; then
  fail "the resumed recording starts at frame $found, not within 0.1 s of the saved position $position s (frame $expected)"
fi
# A resume fades in over 15 ms (GainRamp, 662 frames at 44.1 kHz): compared from frame 1024 on.
expect_decode "$work/resume.rec.raw" "$work/a.flac.ref.raw" "$((found * 4))" 4096
say "state: saved at $position s; resumed at frame $found ($(awk -v f="$found" 'BEGIN { printf "%.2f", f / 44100 }') s), bit-identical from there after the 15 ms fade-in"
say "all passed in $((SECONDS - t0)) s"
