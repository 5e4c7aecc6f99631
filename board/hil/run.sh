#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run.sh - hardware in the loop: jukebox on real kernel devices in QEMU guests running Debian's own
# kernel. Prepares what is missing in the cache (board/hil/prepare.sh), then runs the scenarios and
# prints `N passed, N failed` as its last line; exit 1 when anything failed. Needs root (apt, the
# image); see board/hil/README.md.
#
#   bash board/hil/run.sh [SCENARIO...]        all, or some of: audio buttons display-hd44780
#                                              interruption display-ssd1306 headphones battery card-return; naming any of install-sh
#                                              deb-install deb-web deb-upload deb-mpd deb-radio service-boot rfid-keyboard
#                                              usb-stick serial-console power-cut upload-power-cut deb-upgrade deb-purge (or
#                                              service) runs all of those; bt-loop, bt-speaker, bt-pin and bt-phone
#                                              (only with JUKEBOX_HIL_BLUETOOTH=1) boot the systemd guest once
#                                              more (bt-speaker, bt-pin and bt-phone after bt-loop, in the same boot);
#                                              airplay (only when named) boots it twice more with shairport-sync
# Environment:
#   JUKEBOX_BIN=PATH     the jukebox binary guest 1 tests (default: built here, debug, dynamically
#                        linked against the Swift runtime: the same kind board/test.sh unit-tested)
#   JUKEBOX_DEB=PATH     the amd64 .deb the systemd guest installs (default: the newest in
#                        /var/tmp/jukebox-cross/debs, made by board/package.sh --arch amd64 if none)
#   HIL_CACHE=DIR        cache (default /var/tmp/jukebox-hil)
#   HIL_ACCEL=tcg|kvm    default: kvm only when the CPU has vmx/svm and it is not a PVM guest
#   JUKEBOX_HIL_BLUETOOTH=1  adds bt-loop (Bluetooth A2DP through two virtual controllers),
#                        bt-speaker (the installed jukebox plays to the virtual speaker),
#                        bt-pin (the installed jukebox pairs with a speaker that wants a PIN),
#                        bt-phone (a virtual phone plays through the box) and
#                        the Bluetooth packages to the systemd guest's root
#   JUKEBOX_HIL_BT_CYCLES=N  bt-speaker's disconnect/connect cycles (default 20)
#   JUKEBOX_HIL_BT_PHONE_CYCLES=N  bt-phone's start/stop cycles of the phone (default 10)
#   JUKEBOX_HIL_AIRPLAY_CYCLES=N  airplay's sessions (default 5)
set -euo pipefail
HIL_DIR=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HIL_DIR/../.." && pwd)
HIL_CACHE=${HIL_CACHE:-/var/tmp/jukebox-hil}
# shellcheck source=board/private-dir.sh
. "$HIL_DIR/../private-dir.sh"
private_dir "$HIL_CACHE" HIL_CACHE || exit 1
ONLY=("$@")
mkdir -p "$HIL_CACHE"
# shellcheck source=board/hil/host.sh
. "$HIL_DIR/host.sh"
# shellcheck source=board/hil/prepare.sh
. "$HIL_DIR/prepare.sh"
# shellcheck source=board/hil/systemd.sh
. "$HIL_DIR/systemd.sh"

[ "$(id -u)" -eq 0 ] || { hil_log "run as root (apt-get, modules, disk image)"; exit 2; }
t_start=$(date +%s)

# ---- Prepare ------------------------------------------------------------------------------------
hil_resolve_kernel
hil_log "kernel: linux-image-$HIL_ABI $HIL_KVER"
hil_prepare_packages
hil_prepare_kernel
hil_prepare_modules
hil_prepare_initramfs
hil_prepare_tools
hil_prepare_fixtures

want() { [ ${#ONLY[@]} -eq 0 ] || [[ " ${ONLY[*]} " == *" $1 "* ]]; }
guest_scenarios=()
for s in audio buttons display-hd44780 interruption display-ssd1306 headphones battery card-return; do want "$s" && guest_scenarios+=("$s"); done

if [ ${#guest_scenarios[@]} -gt 0 ] && [ -z "${JUKEBOX_BIN:-}" ]; then
  hil_log "building jukebox (debug) in $HIL_CACHE/build"
  (cd "$REPO" && swift build --product jukebox --scratch-path "$HIL_CACHE/build" >"$HIL_CACHE/build.log" 2>&1) \
    || { tail -n 30 "$HIL_CACHE/build.log" >&2; exit 1; }
  JUKEBOX_BIN="$HIL_CACHE/build/debug/jukebox"
fi
if [ ${#guest_scenarios[@]} -gt 0 ]; then
  JUKEBOX_BIN=$(readlink -f "$JUKEBOX_BIN")
  [ -x "$JUKEBOX_BIN" ] || { hil_log "no jukebox binary at $JUKEBOX_BIN"; exit 1; }
fi
# bt-loop runs only when asked for by JUKEBOX_HIL_BLUETOOTH=1 (board/hil/README.md).
# bt-speaker, bt-pin and bt-phone follow bt-loop in its boot (they need its controllers and pairing):
# asking for either runs bt-loop first.
want_bt=0 want_bt_speaker=0 want_bt_phone=0 want_bt_pin=0
if want bt-loop || want bt-speaker || want bt-phone || want bt-pin; then
  if hil_bluetooth; then
    want_bt=1
    want bt-speaker && want_bt_speaker=1
    want bt-phone && want_bt_phone=1
    want bt-pin && want_bt_pin=1
  elif [ ${#ONLY[@]} -gt 0 ]; then hil_log "bt-loop, bt-speaker, bt-phone and bt-pin skipped: they run only with JUKEBOX_HIL_BLUETOOTH=1"; fi
fi
want_airplay=0
hil_airplay && want_airplay=1
if hil_want_systemd || [ $want_bt = 1 ] || [ $want_airplay = 1 ]; then
  hil_resolve_deb
  hil_prepare_image
fi
t_prepared=$(date +%s)
hil_log "prepared in $((t_prepared - t_start)) s"

# ---- QEMU ---------------------------------------------------------------------------------------
accel=${HIL_ACCEL:-}
if [ -z "$accel" ]; then
  accel=tcg
  if [ -w /dev/kvm ] && grep -Eqw 'vmx|svm' /proc/cpuinfo && [ ! -d /sys/module/kvm_pvm ]; then accel=kvm; fi
fi
cpu=max
[ "$accel" = kvm ] && cpu=host
HIL_QEMU=(qemu-system-x86_64 -accel "$accel" -cpu "$cpu" -smp 2 -nographic -no-reboot -nodefaults
  -kernel "$HIL_CACHE/kernel/vmlinux" -initrd "$HIL_CACHE/initramfs.cpio")

PASSED=0
FAILED=0
# ---- The initramfs guest: audio, buttons, displays, interruption ---------------------------------
if [ ${#guest_scenarios[@]} -gt 0 ]; then
  out="$HIL_CACHE/out"
  rm -rf "$out" && mkdir -p "$out"
  # The guest's /tmp is its own tmpfs: the binary and the guest scripts go in through the writable
  # share (a checkout under /tmp, as CI makes, would be hidden there).
  cp "$JUKEBOX_BIN" "$out/jukebox"
  cp -r "$HIL_DIR/guest" "$out/guest"
  args="/tmp/out/jukebox,$HIL_CACHE$(printf ',%s' "${guest_scenarios[@]}")"
  hil_log "guest 1 (initramfs, host / over 9p): ${guest_scenarios[*]}"
  t0=$(date +%s)
  # 270 s on a quiet 2-core machine: twice that before a hung guest is given up on.
  timeout 600 "${HIL_QEMU[@]}" -m 512 \
    -append "console=ttyS0 quiet loglevel=3 hil.script=/tmp/out/guest/scenarios.sh hil.args=$args" \
    -fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap \
    -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
    -fsdev local,id=out,path="$out",security_model=none \
    -device virtio-9p-pci,fsdev=out,mount_tag=out \
    -serial file:"$out/console.log" || true
  hil_results "$out/console.log"
  hil_finished "$out/console.log" 'HIL-SUMMARY' "guest 1 did not finish" 30 || true
  hil_log "guest 1: $(($(date +%s) - t0)) s"
fi

# ---- The systemd guest: install.sh, the .deb, service, power cut, upgrade, purge ------------------
if hil_want_systemd; then
  hil_run_systemd_guest
fi
if [ $want_bt = 1 ]; then
  hil_run_bluetooth_guest "$want_bt_speaker" "$want_bt_phone" "$want_bt_pin"
fi
if [ $want_airplay = 1 ]; then
  hil_run_airplay_guest
fi

hil_log "prepare $((t_prepared - t_start)) s, run $(($(date +%s) - t_prepared)) s"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
