#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test.sh - the whole test suite, from a fresh Debian 12/13 machine (it is what CI runs):
#   1. installs what is needed (board/setup.sh), checks systemd/jukebox.service (check-unit.sh) and
#      the module graph's one-way arrows (check-modules.sh: the service reaches no adapter and no
#      ALSA, libsndfile, TagLib or libgpiod), and that every repository file the docs name exists
#      (check-docs.sh), and the image's update bundles on the host (bundle-test.sh: seconds), and
#      (as root) the image's tryboot module on QEMU raspi3b (tryboot-test.sh: 1-2 minutes);
#   2. builds and runs every unit and end-to-end test;
#   3. the reliability tests: 200+ power cuts (SIGKILL) and a compressed fault soak (beside
#      steps 2 and 4-6: they mostly wait on real time);
#   4. the parsers under libFuzzer for a bounded time (board/fuzz.sh);
#   5. the suite under ThreadSanitizer and AddressSanitizer, and a leak check of the binary
#      (board/sanitize.sh);
#   6. a quick run of the benchmark (board/bench.sh --quick) as a smoke test;
#   7. packages: release binaries cross-built for arm64 and amd64 with Debian 13's Swift
#      (board/cross-build.sh), both .debs made and checked by lintian (board/package.sh: beside
#      step 6, whose runs mostly wait on real time while these builds use one core), the
#      arm64 binary run under qemu-aarch64: version, bit-exact FLAC and MP3, state resumed
#      (board/emulate-arm64.sh), the amd64 .deb installed, upgraded, removed and purged with apt in
#      a fresh trixie root (board/test-deb-chroot.sh); then, beside steps 8-10, the arm64 .deb
#      installed with apt in an emulated arm64 machine running Debian 13 (qemu-system-aarch64):
#      READY, bit-exact to hw:Loopback, serial console, power cut, a gpio-sim button
#      (board/hil/arm64.sh); needs root;
#   8. hardware in the loop: the debug binary on real kernel devices in a QEMU guest, and the
#      amd64 .deb of step 7 installed with apt in a systemd guest: service, power cut, upgrade,
#      purge (board/hil/run.sh; needs root; without step 7's .deb only the first guest runs);
#   9. the test suite (all but the reliability runs) cross-built for arm64 with Debian 13's Swift
#      and run in an arm64 root through binfmt_misc and qemu-aarch64 (board/test-arm64.sh; needs
#      step 7's sysroot);
#  10. builds and tests again with Debian 13's Swift 6.0.3 in a trixie chroot (board/trixie-chroot.sh;
#      needs root; skipped on a trixie host, where step 2 already used that toolchain, and when
#      step 9 ran, which that toolchain built and trixie's libraries ran).
#
#   bash board/test.sh                   everything (a fresh clone runs from a copy that keeps
#                                        time stamps, so its builds are incremental: below)
#   JUKEBOX_SKIP_TRIXIE=1 JUKEBOX_SKIP_HIL=1 JUKEBOX_SKIP_SANITIZERS=1 JUKEBOX_SKIP_FUZZ=1 \
#   JUKEBOX_SKIP_RELIABILITY=1 JUKEBOX_SKIP_BENCH=1 JUKEBOX_SKIP_PACKAGES=1 \
#   JUKEBOX_SKIP_ARM64_GUEST=1 JUKEBOX_SKIP_ARM64_TESTS=1 JUKEBOX_SKIP_TRYBOOT=1 bash board/test.sh
#                                        any subset of the long steps
set -euo pipefail
cd "$(dirname "$0")/.."

# A checkout with no build of its own (a fresh clone, as CI's) is tested from a copy of its files in
# $JUKEBOX_CI_CACHE/src (default /var/tmp/jukebox-ci), kept by sync_tree (board/sync-tree.sh): a
# file whose bytes did not change keeps its time stamp there, so the run's builds (debug, thread
# and address sanitizers, fuzzer, bench) redo what changed since the run before instead of
# everything (16 of the run's minutes on a 2-core machine). What is built and tested is exactly the
# checkout's files; git still answers for it (a .git file points at the checkout's). A lock keeps
# two runs out of one copy. JUKEBOX_NO_COPY=1 runs in place.
if [ -z "${JUKEBOX_COPY_OF:-}" ] && [ ! -d .build ] && [ "${JUKEBOX_NO_COPY:-0}" != 1 ]; then
  # shellcheck source=board/private-dir.sh
  . board/private-dir.sh
  ci_cache=${JUKEBOX_CI_CACHE:-/var/tmp/jukebox-ci}
  private_dir "$ci_cache" JUKEBOX_CI_CACHE || exit 1
  exec 7>"$ci_cache/lock"
  flock -n 7 || { echo "test: another run holds $ci_cache/lock: waiting"; flock 7; }
  # shellcheck source=board/sync-tree.sh
  . board/sync-tree.sh
  changed=$(sync_tree "$PWD" "$ci_cache/src")
  rm -rf "$ci_cache/src/.git"
  [ ! -d .git ] || printf 'gitdir: %s\n' "$PWD/.git" > "$ci_cache/src/.git"
  echo "test: run from the copy $ci_cache/src ($changed file(s) changed since the run before)"
  JUKEBOX_COPY_OF=$PWD exec bash "$ci_cache/src/board/test.sh" "$@"
fi

# Each step's line says when it began (minutes:seconds into the run), and how busy the machine's
# cores were since the line before: where CI's time goes, where the run waits on real time (room
# for work beside it) and where it is bound by the CPU.
cpu_busy=0 cpu_all=0 step_t=0
cpu_mark() {
  local _ u n s i w q sq st
  read -r _ u n s i w q sq st _ < /proc/stat
  cpu_busy=$((u + n + s + q + sq + st)) cpu_all=$((u + n + s + i + w + q + sq + st))
}
cpu_mark
step() {
  local b0=$cpu_busy a0=$cpu_all before=""
  cpu_mark
  [ $((cpu_all - a0)) -gt 0 ] && [ "$SECONDS" -gt "$step_t" ] &&
    before=" (since the line before: $((SECONDS - step_t)) s, cores $((100 * (cpu_busy - b0) / (cpu_all - a0)))% busy)"
  step_t=$SECONDS
  printf 'test: [%d:%02d] %s%s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" "$before"
}

bash board/setup.sh
# setup.sh installed every peer the tests run against (mpd, mpc, mosquitto, icecast2, snapserver,
# chromium…): a test that finds one missing, or a fixture server that cannot start, fails here
# instead of skipping (a developer's `swift test` without them skips, saying what to install).
export JUKEBOX_REQUIRE_PEERS=1

step "systemd unit"
bash board/check-unit.sh

step "module graph"
bash board/check-modules.sh

step "files the docs name"
bash board/check-docs.sh

step "update bundles (RAUC) on the host"
bash board/bundle-test.sh

if [ "$(id -u)" -ne 0 ]; then
  step "the image's tryboot module skipped (needs root)"
elif [ "${JUKEBOX_SKIP_TRYBOOT:-0}" = 1 ]; then
  step "the image's tryboot module skipped (JUKEBOX_SKIP_TRYBOOT=1)"
else
  step "the image's tryboot module on QEMU raspi3b (board/tryboot-test.sh, 1-2 min)"
  bash board/tryboot-test.sh
fi

skip() { [ "${1:-0}" = 1 ]; }

# Steps that run beside the next ones, each under a short key: in its own session, so that an early
# exit stops it and everything it started; its output kept in a private file (mktemp) until it is
# awaited.
declare -A beside_pid=() beside_log=() beside_what=()
stop_besides() {
  local k
  for k in "${!beside_pid[@]}"; do
    # The group, and the process itself in case it has not reached setsid yet.
    kill -- -"${beside_pid[$k]}" 2>/dev/null || kill "${beside_pid[$k]}" 2>/dev/null || true
    rm -f "${beside_log[$k]}"
  done
}
trap stop_besides EXIT
start_beside() { # KEY WHAT COMMAND...
  local key=$1
  beside_what[$key]=$2
  shift 2
  beside_log[$key]=$(mktemp /var/tmp/jukebox-beside.XXXXXX)
  setsid "$@" >"${beside_log[$key]}" 2>&1 &
  beside_pid[$key]=$!
}
await_beside() { # [KEY...]: those, or all still running
  local keys=("$@") k t0 status
  [ $# -gt 0 ] || keys=("${!beside_pid[@]}")
  for k in "${keys[@]}"; do
    [ -n "${beside_pid[$k]:-}" ] || continue
    t0=$SECONDS status=0
    wait "${beside_pid[$k]}" || status=$?
    step "${beside_what[$k]}: its log (waited $((SECONDS - t0)) s for it)"
    cat "${beside_log[$k]}"
    rm -f "${beside_log[$k]}"
    unset "beside_pid[$k]" "beside_log[$k]"
    [ "$status" -eq 0 ] || { step "${beside_what[$k]} FAILED (exit $status)" >&2; exit 1; }
  done
}

step "swift build and test ($(swift --version 2>/dev/null | head -n 1))"
swift build --build-tests

# The reliability tests spend minutes waiting on real time (power cuts, a fault storm) at a load
# near 0.2, so they run beside steps 2 and 4-6 instead of after them; their log is shown when they
# are awaited, after the benchmark. They run the test bundle directly, not through `swift test`,
# which would hold the .build lock the other steps' `swift build` calls need.
if skip "${JUKEBOX_SKIP_RELIABILITY:-0}"; then
  step "reliability tests skipped (JUKEBOX_SKIP_RELIABILITY=1)"
else
  bundle="$(swift build --show-bin-path)/jukeboxPackageTests.xctest"
  classes=$(swift test list --skip-build | sed -n 's|^\(JukeboxReliabilityTests\.[A-Za-z0-9_]*\)/.*|\1|p' | sort -u | paste -sd, -)
  [ -n "$classes" ] || { step "no reliability tests found in $bundle" >&2; exit 1; }
  step "reliability (power cuts, fault soak) started beside the next steps: ${classes//JukeboxReliabilityTests./}"
  start_beside reliability "reliability (power cuts, fault soak)" "$bundle" "$classes"
fi
# In JUKEBOX_TEST_WORKERS processes (default 4): most tests wait on real time (a device's pace, a
# peer, a timeout), so 4 fit 2 cores (266 s in one process, about 100 s in four). Every test is
# made to pass beside others: a flake that shows only here is a defect of the test or the code.
export JUKEBOX_TEST_WORKERS=${JUKEBOX_TEST_WORKERS:-4}
t0=$SECONDS
swift test --skip-build --parallel --num-workers "$JUKEBOX_TEST_WORKERS" --skip JukeboxReliabilityTests
step "unit and end-to-end tests took $((SECONDS - t0)) s ($JUKEBOX_TEST_WORKERS processes)"

if skip "${JUKEBOX_SKIP_FUZZ:-0}"; then
  step "fuzzing skipped (JUKEBOX_SKIP_FUZZ=1)"
else
  step "fuzzing the parsers"
  FUZZ_SECONDS=${FUZZ_SECONDS:-30} bash board/fuzz.sh
fi

if skip "${JUKEBOX_SKIP_SANITIZERS:-0}"; then
  step "sanitizers skipped (JUKEBOX_SKIP_SANITIZERS=1)"
else
  step "sanitizers: thread"
  bash board/sanitize.sh thread
  step "sanitizers: address"
  bash board/sanitize.sh address
fi

# The packages' release builds (two of about 3.5 minutes each, one module after the other: one
# core) run beside the benchmark (its own release build, then runs that mostly wait on real time:
# the two were 475 s and 533 s at about 50% of the cores each, one after the other). The smoke
# run's figures are taken beside a compiler: its CPU and latency figures are not the benchmark's
# (board/bench.sh alone, docs/TESTING.md); what it checks is that every section runs.
deb=""
packages_ran=0
arm64_suite_ran=0
if skip "${JUKEBOX_SKIP_PACKAGES:-0}"; then
  step "packages skipped (JUKEBOX_SKIP_PACKAGES=1)"
elif [ "$(id -u)" -ne 0 ]; then
  step "packages skipped (needs root for the chroot and mmdebstrap)"
elif [ "$(uname -m)" != x86_64 ]; then
  step "packages skipped (cross-building needs an x86-64 machine)"
else
  step "packages: arm64 and amd64 cross-built, .debs and lintian (beside the benchmark)"
  packages_t0=$SECONDS
  packages_ran=1
  start_beside packages "packages: cross-built, .debs and lintian" bash board/package.sh
fi

if skip "${JUKEBOX_SKIP_BENCH:-0}"; then
  step "benchmark smoke run skipped (JUKEBOX_SKIP_BENCH=1)"
else
  step "benchmark smoke run"
  bash board/bench.sh --quick
fi

await_beside reliability

if [ "$packages_ran" = 1 ]; then
  await_beside packages
  step "packages: the arm64 binary under qemu-aarch64"
  bash board/emulate-arm64.sh
  step "packages: apt's life cycle in a chroot"
  bash board/test-deb-chroot.sh
  if skip "${JUKEBOX_SKIP_ARM64_GUEST:-0}"; then
    step "arm64 guest skipped (JUKEBOX_SKIP_ARM64_GUEST=1)"
  else
    # One emulated CPU keeps one core busy for 5-10 minutes: the amd64 guests (step 8) and the
    # arm64 suite (step 9) use the other core meanwhile. Its log is shown when it is awaited.
    step "the arm64 .deb in an emulated arm64 machine (qemu-system-aarch64, Debian 13), beside steps 8-10"
    start_beside arm64-guest "the arm64 .deb in an emulated arm64 machine" bash board/hil/arm64.sh
  fi
  step "packages took $((SECONDS - packages_t0)) s (the arm64 guest goes on)"
  version=$(sed -n 's/^let jukeboxVersion = "\([^"]*\)"$/\1/p' Sources/jukebox/Help.swift)
  deb="${CROSS_CACHE:-/var/tmp/jukebox-cross}/debs/jukebox_${version}_amd64.deb"
fi

if skip "${JUKEBOX_SKIP_HIL:-0}"; then
  step "hardware in the loop skipped (JUKEBOX_SKIP_HIL=1)"
elif [ "$(id -u)" -ne 0 ]; then
  step "hardware in the loop skipped (needs root)"
elif [ -n "$deb" ]; then
  step "hardware in the loop (QEMU): guest 1, and $(basename "$deb") in the systemd guest"
  JUKEBOX_BIN="$(swift build --show-bin-path)/jukebox" JUKEBOX_DEB=$deb bash board/hil/run.sh
else
  step "hardware in the loop (QEMU): guest 1 only; the systemd guest installs step 7's .deb (skipped)"
  JUKEBOX_BIN="$(swift build --show-bin-path)/jukebox" bash board/hil/run.sh audio buttons display-hd44780 interruption display-ssd1306 headphones battery card-return
fi

if [ "$packages_ran" = 0 ]; then
  step "arm64 test suite skipped (it uses the packages step's sysroot and Swift SDK)"
elif skip "${JUKEBOX_SKIP_ARM64_TESTS:-0}"; then
  step "arm64 test suite skipped (JUKEBOX_SKIP_ARM64_TESTS=1)"
else
  # Not beside the hardware in the loop: even at the idle scheduling class, its build slowed the
  # KVM guests 2.4x (guest 1's buttons missed the 3-second rule and the guest its 300 s), as a
  # nested guest's exits wait on the host's busy cores. After a run of a nearby commit it is
  # incremental (board/cross/sdk.sh). Run in 4 processes, beside the arm64 guest if still running.
  step "the test suite cross-built for arm64 and run under qemu-aarch64 (board/test-arm64.sh)"
  bash board/test-arm64.sh
  arm64_suite_ran=1
fi

# shellcheck disable=SC1091
codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
if skip "${JUKEBOX_SKIP_TRIXIE:-0}"; then
  step "Debian 13 build skipped (JUKEBOX_SKIP_TRIXIE=1)"
elif [ "$codename" = trixie ]; then
  step "host is Debian 13 already; no chroot needed"
elif [ "$arm64_suite_ran" = 1 ]; then
  # The arm64 suite was built by Debian 13's swiftlang 6.0.3 and ran against trixie's libraries
  # (libgpiod 2 among them), and step 7 built the amd64 release with it: running the same suite
  # again on amd64 would repeat that, for minutes of a CI run.
  step "Debian 13 build and test covered by step 9 (the suite built by swiftlang 6.0.3, run on arm64 against trixie's libraries; the amd64 release built with it)"
elif [ "$(id -u)" -ne 0 ]; then
  step "Debian 13 build skipped (needs root for the chroot)"
else
  step "build and test with Debian 13's swiftlang in a trixie chroot"
  bash board/trixie-chroot.sh bash -c 'swift --version 2>&1 | head -n 1 && swift build --build-tests --scratch-path /root/trixie-build && swift test --skip-build --skip JukeboxReliabilityTests --scratch-path /root/trixie-build'
fi
await_beside
step "all passed"
