#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test-arm64.sh - the test suite cross-built for arm64 and run on this x86-64 machine in an arm64
# root, every arm64 program in it (the tests, the jukebox binary they start, aplay, gcc, the test
# device plugin libasound loads) run by qemu-aarch64 through binfmt_misc. The module-level suites
# (core, audio, board, service, system, MQTT, app) and a few end-to-end classes of the binary;
# board/test.sh runs it. Left out: JukeboxReliabilityTests (minutes long natively) and the other
# end-to-end classes of JukeboxEndToEndTests (see cli_classes below).
#
#   sudo bash board/test-arm64.sh [--no-build] [FILTER]
#
#   --no-build  run the bundle built last instead of building
#   FILTER      XCTest's own filter (Module.Class or Module.Class/testName, comma-separated)
#               instead of the default selection
#
#   1. builds the tests for aarch64 (release, with -enable-testing) in the trixie chroot with the
#      sysroot and Swift SDK of board/cross-build.sh (board/cross/sdk.sh); the build lives in the
#      chroot, in /root/cross-build/arm64-tests;
#   2. the root the tests run in is an overlay: the arm64 sysroot (it has what the tests link and
#      load: the Swift runtime swiftlang ships, libasound, libsndfile, TagLib, libgpiod, and gcc,
#      which MixerTests calls) over a small extract of the programs the tests call (dash,
#      coreutils, setpriv, aplay, metaflac; $CROSS_CACHE/arm64-run-extra, made once), under a writable layer
#      made fresh for each run, so the shared sysroot is never written to. The sources the build
#      saw ($CROSS_CACHE/src: the repository's files, unchanged ones with their old time stamps, so
#      a clean clone rebuilds only what changed) are mounted read-only at /src, where the build
#      saw them (tests find their fixtures by #filePath);
#   3. mounts binfmt_misc and enables qemu-user-static's qemu-aarch64 entry (flag F: the
#      interpreter is opened at registration, so it works inside the root) when they are not
#      already; puts them back as they were on exit;
#   4. runs the bundle, prints the failures, the ten slowest tests and one closing line
#      "arm64 tests: N passed, N failed, N skipped", and exits non-zero on any failure. The whole
#      output is kept in $CROSS_CACHE/arm64-tests.log.
#
# Needs root. Installs qemu-user-static, binfmt-support and mmdebstrap with apt-get when missing.
# JUKEBOX_ARM64_TEST_JOBS (default 4) test processes run side by side; JUKEBOX_ARM64_TEST_TIMEOUT
# (seconds, default 1500) bounds each.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'test-arm64: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

build=1
filter=""
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) build=0 ;;
    -h|--help) sed -n '3,37p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option: $1 (try --help)" ;;
    *) filter=$1 ;;
  esac
  shift
done
[ "$(id -u)" -eq 0 ] || die "run as root (chroot, mount, binfmt_misc)"

# shellcheck source=board/cross/sdk.sh
. board/cross/sdk.sh
scratch=/root/cross-build/arm64-tests        # inside the trixie chroot
# Optimised, with @testable imports allowed: under emulation unoptimised Swift is the bottleneck
# (a debug build spent 8 of BadMediaTests' 9 minutes making its random test files).
build_args=(-c release -Xswiftc -enable-testing --build-tests --scratch-path "$scratch")
extra=$cache/arm64-run-extra
# The programs the tests call, which the sysroot (an extract of libraries and compilers) lacks.
extra_packages=dash,coreutils,util-linux,alsa-utils,mosquitto,mosquitto-clients,openssl,flac
run=$cache/arm64-run                         # the overlay's writable layer and mount point
log=$cache/arm64-tests.log
t_all=$SECONDS

exec 8>"$cache/arm64-run.lock"
flock -n 8 || { say "another run holds $cache/arm64-run.lock: waiting"; flock 8; }

for p in qemu-user-static:qemu-aarch64-static binfmt-support:update-binfmts; do
  ensure_tool "${p#*:}" "${p%%:*}"
done

# 1. the build, from the copy of the sources that keeps unchanged files' time stamps (sdk.sh)
sync_sources
if [ "$build" = 1 ]; then
  t0=$SECONDS
  arm64_swift_build "${build_args[@]}" || die "the arm64 test build failed (see above)"
  say "built in $((SECONDS - t0)) s"
fi
bundle=$scratch/aarch64-unknown-linux-gnu/release/jukeboxPackageTests.xctest   # SwiftPM's layout
[ -x "$chroot_dir$bundle" ] || die "no test bundle $chroot_dir$bundle: run without --no-build"

# 2. the programs the tests call, extracted once (no maintainer scripts, so the fixes by hand).
if [ "$(cat "$extra/.jukebox-extra-done" 2>/dev/null)" != "$extra_packages" ]; then
  ensure_mmdebstrap
  t0=$SECONDS
  rm -rf --one-file-system "$extra" "$extra.part"
  mmdebstrap --quiet --arch=arm64 --variant=extract --include="$extra_packages" trixie "$extra.part" \
    "deb $mirror trixie main" "deb $mirror trixie-updates main" "deb $security trixie-security main" \
    || die "mmdebstrap of the programs the tests call failed (see above)"
  for d in bin sbin lib; do [ -e "$extra.part/$d" ] || ln -s "usr/$d" "$extra.part/$d"; done
  ln -sf dash "$extra.part/usr/bin/sh"
  ln -sf gcc "$extra.part/usr/bin/cc"      # an alternative, set by no script here: the sysroot's gcc
  # base-passwd's postinst would write these; the tests need root's home and nobody.
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' \
    > "$extra.part/etc/passwd"
  printf 'root:x:0:\naudio:x:29:\nnogroup:x:65534:\n' > "$extra.part/etc/group"
  mv "$extra.part" "$extra"
  printf '%s\n' "$extra_packages" > "$extra/.jukebox-extra-done"
  say "programs the tests call extracted in $((SECONDS - t0)) s ($(du -sh "$extra" | cut -f1))"
fi

# 3. binfmt_misc, put back as found on exit.
binfmt=/proc/sys/fs/binfmt_misc
mounted_binfmt=0 enabled_aarch64=0 mounts=()
# shellcheck disable=SC2317  # runs from the EXIT trap
cleanup() {
  local rc=$? i
  trap '' INT TERM
  for (( i=${#mounts[@]}-1; i>=0; i-- )); do
    umount -R "${mounts[i]}" 2>/dev/null || umount -R -l "${mounts[i]}" || true
  done
  rm -rf --one-file-system "$run"
  [ "$enabled_aarch64" = 0 ] || update-binfmts --disable qemu-aarch64 || true
  [ "$mounted_binfmt" = 0 ] || umount "$binfmt" || true
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if ! mountpoint -q "$binfmt"; then
  mount -t binfmt_misc binfmt_misc "$binfmt" || die "cannot mount binfmt_misc"
  mounted_binfmt=1
fi
if ! grep -qx enabled "$binfmt/qemu-aarch64" 2>/dev/null; then
  update-binfmts --enable qemu-aarch64 || die "update-binfmts --enable qemu-aarch64 failed"
  enabled_aarch64=1
fi
grep -q '^flags:.*F' "$binfmt/qemu-aarch64" \
  || die "qemu-aarch64 is registered without flag F ($(grep flags "$binfmt/qemu-aarch64")): it cannot run inside a root"

# The root: sysroot over the extra programs, a fresh writable layer; then the system mounts.
# Mounts left by a run that was killed go first (rm stays on its own file system anyway).
if mountpoint -q "$run/root"; then
  say "stale mounts from an earlier run under $run/root: unmounting"
  umount -R "$run/root" 2>/dev/null || umount -R -l "$run/root"
fi
rm -rf --one-file-system "$run"
mkdir -p "$run/upper" "$run/work" "$run/root"
mount -t overlay overlay -o "lowerdir=$sysroot:$extra,upperdir=$run/upper,workdir=$run/work" "$run/root"
mounts+=("$run/root")
root=$run/root
mkdir -p "$root/proc" "$root/dev" "$root/tmp" "$root/src" "$root/root"
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount --make-rslave "$root/dev"
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
mount --bind "$cache/src" "$root/src"
mount -o remount,bind,ro "$root/src"
mkdir -p "$root$scratch"
mount --bind "$chroot_dir$scratch" "$root$scratch"
mount -o remount,bind,ro "$root$scratch"
# The build's RUNPATH names the Swift runtime by its host path through the SDK bundle's
# sysroot link: the same path here, a link to this root's own /.
mkdir -p "$root$sdk_bundle/jukebox-arm64"
ln -s / "$root$sdk_bundle/jukebox-arm64/sysroot"

in_root() {
  # JUKEBOX_QEMU_USER: the two limitations of the emulation a test allows for (qemu-user 7.2 does
  # not translate 921600 baud: SerialConsoleTests; it ignores madvise: ColdPagesTests).
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    JUKEBOX_QEMU_USER=1 "$@"
}

# 4. the run. Raw XCTest takes classes (Module.Class), not modules: every class outside
# JukeboxReliabilityTests and JukeboxEndToEndTests, from the bundle's own list, and these of
# JukeboxEndToEndTests. The end-to-end classes start the binary many times (each start costs seconds
# under emulation) and run the same Swift code the module suites run here: all of them took 2,613
# of the 3,900 seconds the whole suite took under emulation (3 December 2026), and two failed only
# for the emulator's pace beside three other processes. The binary itself is proven on arm64 by
# board/emulate-arm64.sh (bit-exact, state resumed) and the arm64 guest of board/hil/arm64.sh (the
# .deb's service on a kernel device); these add what depends on the machine: signals and the
# parent-death signal (BinaryTests, StopBoundTests), a file name that is not UTF-8 from the
# directory listing to open() (CChar is unsigned on arm64), and the state file's refusals.
cli_classes=(
  JukeboxEndToEndTests.BinaryTests
  JukeboxEndToEndTests.StopBoundTests
  JukeboxEndToEndTests.ForeignPathsTests/testANonUTF8NamePlaysIsShownAsReplacementAndResumesAfterARestart
  JukeboxEndToEndTests.StateFilesBinaryTests/testLinksPlantedAtTheStateFilesTemporaryNamesAreNeverWrittenThrough
)
if [ -z "$filter" ]; then
  in_root "$bundle" --list-tests > "$run/list" 2>&1 || die "$bundle --list-tests failed: $(tail -n 5 "$run/list")"
  filter=$( { sed -n 's#^\([A-Za-z0-9_]*\)\.\([A-Za-z0-9_]*\)/.*#\1.\2#p' "$run/list" \
    | { grep -v -e '^JukeboxReliabilityTests\.' -e '^JukeboxEndToEndTests\.' || true; }
    printf '%s\n' "${cli_classes[@]}"; } | sort -u | paste -sd, -)
  [ -n "$filter" ] || die "the bundle listed no tests"
fi
# Split into JOBS processes: qemu runs one emulated thread per host thread and the tests mostly
# wait on one another's threads, so the cores are otherwise half idle. The classes are dealt out
# longest first, each to the process with the least so far (a round robin left one process with
# 752 s and the other with 1,469 s). Costs: seconds under emulation per class, 2-core VM, measured
# 3 December 2026 in 4 processes beside the arm64 guest; a class not listed counts 10 s.
class_cost() {
  case "${1#*.}" in
    MQTTBridgeTests) echo 283 ;;
    SeekAccuracyTests) echo 192 ;;
    RadioStreamTests) echo 144 ;;
    BadMediaTests) echo 128 ;;
    StopBoundTests) echo 112 ;;
    OggStreamTests) echo 103 ;;
    FaultyDeviceTests) echo 74 ;;
    BinaryTests|StateFilesBinaryTests/*) echo 66 ;;
    DecoderTests) echo 43 ;;
    ForeignPathsTests/*) echo 33 ;;
    GaplessBoundaryTests) echo 32 ;;
    TagTextTests) echo 29 ;;
    IcecastTests|EnginePauseTests) echo 18 ;;
    *) echo 10 ;;
  esac
}
IFS=, read -r -a classes <<< "$filter"
# Four: the run used 6.6 CPU-minutes of its 24.5 minutes in 2 processes; in 4 it took 291 s on 2
# cores (1 December 2026, nothing else running).
jobs=${JUKEBOX_ARM64_TEST_JOBS:-4}
[ "$jobs" -ge 1 ] 2>/dev/null || die "JUKEBOX_ARM64_TEST_JOBS must be a number from 1"
[ "$jobs" -le "${#classes[@]}" ] || jobs=${#classes[@]}
say "running ${#classes[@]} test classes in $jobs processes under qemu-aarch64 ($(qemu-aarch64-static --version | head -n 1))"
groups=() loads=()
for (( j=0; j<jobs; j++ )); do groups+=(""); loads+=(0); done
while read -r cost class; do
  best=0
  for (( j=1; j<jobs; j++ )); do [ "${loads[j]}" -lt "${loads[best]}" ] && best=$j; done
  groups[best]+="${groups[best]:+,}$class"
  loads[best]=$(( loads[best] + cost ))
done < <(for c in "${classes[@]}"; do echo "$(class_cost "$c") $c"; done | sort -k1,1rn -k2)
t0=$SECONDS
pids=()
for (( j=0; j<jobs; j++ )); do
  in_root timeout "${JUKEBOX_ARM64_TEST_TIMEOUT:-1500}" "$bundle" "${groups[j]}" > "$run/out.$j" 2>&1 &
  pids+=($!)
done
rc=0
for (( j=0; j<jobs; j++ )); do
  s=0
  wait "${pids[j]}" || s=$?
  [ "$s" -eq 0 ] || { say "process $((j + 1)) of $jobs exited with status $s (124: over JUKEBOX_ARM64_TEST_TIMEOUT)"; rc=$s; }
done
took=$((SECONDS - t0))
for (( j=0; j<jobs; j++ )); do cat "$run/out.$j"; done > "$log"

grep -E ': error: |Test Case .* (failed|skipped)|Fatal error|Crash|Illegal instruction' "$log" | head -n 100 >&2 || true
echo "test-arm64: slowest tests:"
sed -n "s/^Test Case '\(.*\)' \(passed\|failed\) (\([0-9.]*\) seconds).*/\3 \1 (\2)/p" "$log" | sort -rn | sed -n '1,10s/^/  /p'
passed=$(grep -c "^Test Case '.*' passed" "$log" || true)
failed=$(grep -c "^Test Case '.*' failed" "$log" || true)
skipped=$(grep -c "^Test Case '.*' skipped" "$log" || true)
say "ran in $took s (all: $((SECONDS - t_all)) s); whole output: $log"
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
  tail -n 30 "$log" >&2
  failed=1
  say "a test process failed without a failed test (a crash or the timeout): counted as one failure"
fi
echo "arm64 tests: $passed passed, $failed failed, $skipped skipped"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ]
