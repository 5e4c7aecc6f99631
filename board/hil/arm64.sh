#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# arm64.sh - the arm64 .deb on an emulated arm64 machine: qemu-system-aarch64 (TCG, -M virt,
# Cortex-A72 like a Pi 4) booting Debian 13's own arm64 kernel into an mmdebstrapped Debian 13
# arm64 image with systemd, snd-aloop and the package's dependencies. Two boots of one disk:
#   1  `apt install ./jukebox_…_arm64.deb` (deb-install); the service restarted with its config
#      pointed at hw:Loopback,0,0: READY (service-ready), and what it plays recorded from
#      hw:Loopback,1,0 bit for bit (audio-bit-exact); the host reads `status` on the PL011 UART
#      (jukebox's serial console on ttyAMA0: serial-console) and kills QEMU mid-track (SIGKILL)
#   2  after the power cut: the position kept within the save interval (power-cut); gpio-sim
#      (cross-built for this kernel) as the play button: press pauses, press plays (gpio-button)
# Prints `N passed, N failed` as its last line; exit 1 when anything failed. See board/hil/README.md.
#
#   sudo bash board/hil/arm64.sh [DEB]   (default: the newest $CROSS_CACHE/debs/jukebox_*_arm64.deb)
#
# Environment:
#   HIL_ARM64_CACHE=DIR   cache (default /var/tmp/jukebox-hil-arm64)
#   CROSS_CACHE=DIR       the arm64 sysroot and .debs of board/package.sh (default /var/tmp/jukebox-cross)
#   TRIXIE_MIRROR=URL     Debian mirror (default http://deb.debian.org/debian)
set -euo pipefail
A64_DIR=$(cd "$(dirname "$0")/arm64" && pwd)
HIL_LOG_NAME=hil-arm64
A64_REPO=$(cd "$A64_DIR/../../.." && pwd)
A64_CACHE=${HIL_ARM64_CACHE:-/var/tmp/jukebox-hil-arm64}
A64_CROSS=${CROSS_CACHE:-/var/tmp/jukebox-cross}
A64_MIRROR=${TRIXIE_MIRROR:-http://deb.debian.org/debian}
# shellcheck source=board/hil/host.sh
. "$A64_DIR/../host.sh"
# shellcheck source=board/hil/arm64/prepare.sh
. "$A64_DIR/prepare.sh"

# All in one function: bash reads a script as it runs, and this one runs for minutes (an edit or a
# checkout meanwhile would otherwise change what it executes).
main() {
[ "$(id -u)" -eq 0 ] || { a64_log "run as root (apt-get, mmdebstrap, binfmt)"; exit 2; }
deb=${1:-$(find "$A64_CROSS/debs" -maxdepth 1 -name 'jukebox_*_arm64.deb' -printf '%T@ %p\n' 2>/dev/null | sort -n | tail -n 1 | cut -d' ' -f2-)}
[ -f "${deb:-}" ] || { a64_log "no arm64 .deb: run board/package.sh --arch arm64"; exit 1; }
deb=$(realpath "$deb")
# shellcheck source=board/private-dir.sh
. "$A64_DIR/../../private-dir.sh"
private_dir "$A64_CACHE" HIL_ARM64_CACHE || exit 1
private_dir "$A64_CROSS" CROSS_CACHE || exit 1
cd "$A64_REPO"
t_start=$SECONDS

# ---- Prepare ------------------------------------------------------------------------------------
a64_prepare_packages
a64_prepare_apt
a64_resolve_kernel
a64_log "kernel: linux-image-$A64_ABI $A64_KVER; package: ${deb##*/}"
a64_prepare_kernel
a64_prepare_initramfs
a64_prepare_tools
a64_prepare_fixtures
a64_prepare_gpiosim
a64_prepare_image "$(a64_deb_depends "$deb")"
t_prepared=$SECONDS
a64_log "prepared in $((t_prepared - t_start)) s"

# ---- Run ----------------------------------------------------------------------------------------
PASSED=0
FAILED=0
sd="$A64_CACHE/run"
rm -rf "$sd" && mkdir -p "$sd/out/tools"
cp --sparse=always "$A64_CACHE/base.img" "$sd/run.img"
cp "$deb" "$sd/out/"
cp "$A64_DIR/guest.sh" "$sd/out/guest.sh"
cp "$A64_DIR/../guest/service-lib.sh" "$sd/out/service-lib.sh"   # what guest.sh sources
cp -r "$A64_CACHE/fixtures/music" "$A64_CACHE/fixtures/src.raw" "$sd/out/"
cp "$A64_CACHE/tools/arm64"/* "$sd/out/tools/"

# boot CONSOLE-LOG [QEMU-ARGS...]: one boot of run.img; the driver's console is the virtio console
# (hvc0), the UART ttyAMA0 a socket for hilserial.
boot() {
  local console=$1
  shift
  rm -f "$sd/ttyAMA0.sock"
  timeout 900 qemu-system-aarch64 -M virt -accel tcg,thread=multi -cpu cortex-a72 -smp 2 -m 1024 \
    -nographic -no-reboot -nodefaults -pidfile "$sd/qemu.pid" \
    -kernel "$A64_CACHE/kernel/root/boot/vmlinuz-$A64_ABI" -initrd "$A64_CACHE/initramfs.cpio" \
    -append "console=hvc0 quiet loglevel=3 systemd.show_status=0 panic=-1" \
    -drive if=none,id=hd,file="$sd/run.img",format=raw,cache=writeback -device virtio-blk-pci,drive=hd \
    -fsdev local,id=out,path="$sd/out",security_model=none -device virtio-9p-pci,fsdev=out,mount_tag=out \
    -device virtio-serial-pci -chardev file,id=hvc,path="$console" -device virtconsole,chardev=hvc \
    -chardev socket,id=uart,path="$sd/ttyAMA0.sock",server=on,wait=off -serial chardev:uart "$@"
}

a64_log "boot 1: apt install the .deb, READY, bit-exact to hw:Loopback, then the power cut"
t0=$SECONDS
echo install > "$sd/out/phase"
boot "$sd/console-1.log" 2>"$sd/qemu-1.err" &
qpid=$!
end=$((SECONDS + 600))
while ! grep -q '^HIL-CUT-GO' "$sd/console-1.log" 2>/dev/null; do
  if [ $SECONDS -gt $end ] || ! kill -0 $qpid 2>/dev/null; then break; fi
  sleep 0.5
done
pos_cut=""
if grep -q '^HIL-CUT-GO' "$sd/console-1.log"; then
  transcript=$("$A64_CACHE/tools/hilserial" "$sd/ttyAMA0.sock" 30 status 2>&1) || true
  if grep -q '▶' <<<"$transcript"; then
    hil_result PASS serial-console "ttyAMA0 (PL011) answers: $(grep -m1 '▶' <<<"$transcript")"
  else
    hil_result FAIL serial-console "expected a status line with ▶ on ttyAMA0; transcript:"
    # shellcheck disable=SC2001  # a prefix on every line
    sed 's/^/  | /' <<<"$transcript"
  fi
  # The power cut: the position just before, then QEMU killed (no shutdown, no sync).
  pos_cut=$("$A64_CACHE/tools/hilserial" "$sd/ttyAMA0.sock" 10 "status --json" 2>/dev/null | grep -o '"position":[0-9.]*' | cut -d: -f2 || true)
fi
kill -KILL "$(cat "$sd/qemu.pid" 2>/dev/null)" 2>/dev/null || true
wait $qpid 2>/dev/null || true
hil_results "$sd/console-1.log"
t_boot1=$((SECONDS - t0))
if hil_finished "$sd/console-1.log" '^HIL-CUT-GO' "boot 1 did not reach the power cut" 40; then
  a64_log "boot 1: $t_boot1 s (position at the cut: ${pos_cut:-?} s)"
  a64_log "boot 2: after the power cut"
  t0=$SECONDS
  echo "$pos_cut" > "$sd/out/position-at-cut"
  boot "$sd/console-2.log" 2>"$sd/qemu-2.err" || true
  hil_results "$sd/console-2.log"
  hil_finished "$sd/console-2.log" '^HIL-PHASE-DONE resume' "boot 2 did not finish" 40 || true
  a64_log "boot 2: $((SECONDS - t0)) s"
fi
a64_log "prepare $((t_prepared - t_start)) s, run $((SECONDS - t_prepared)) s"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
}
main "$@"
