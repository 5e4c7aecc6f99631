#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tryboot-test.sh - the image's module jukebox_tryboot (board/image/tryboot/) shown to hand
# `reboot '0 tryboot'` on to the Raspberry Pi firmware, as far as QEMU can show it: Debian 13's
# arm64 kernel on QEMU's raspi3b machine (the Pi 3's device tree, bcm2837-rpi-3-b.dtb from the
# kernel's own package), whose emulated VideoCore property mailbox logs each tag it does not
# implement (`-d unimp`: "bcm2835_property: unhandled tag 0x00038064", the firmware's
# SET_REBOOT_FLAGS). No image: a small initramfs (busybox-static, bcm2835_wdt, the module built
# against the kernel's headers, board/hil/arm64/hilrestart.c) loads the module and restarts at once.
# Two boots:
#   tryboot   restart command '0 tryboot': the module finds the firmware and sends the tag, once
#   plain     a plain restart (no command): no such tag
# Not shown (QEMU has no Pi firmware): what the firmware does with the flag. Prints PASS/FAIL lines
# and `N passed, N failed`; exit 1 when anything failed. About 1-3 minutes (two boots of ~30-60 s
# under TCG; the first run also makes the build root, minutes, cached).
#
#   sudo bash board/tryboot-test.sh
#
# Environment: IMAGE_CACHE (default /var/tmp/jukebox-image; the kernel and the module build root,
# shared with board/image.sh; logs in $IMAGE_CACHE/tryboot-test), TRIXIE_MIRROR, TRYBOOT_TIMEOUT
# (seconds a boot may take, default 180; QEMU is killed then, and when this script ends).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
A64_DIR=$REPO/board/hil/arm64
A64_REPO=$REPO
A64_CACHE=${IMAGE_CACHE:-/var/tmp/jukebox-image}
A64_CROSS=${CROSS_CACHE:-/var/tmp/jukebox-cross}
A64_MIRROR=${TRIXIE_MIRROR:-http://deb.debian.org/debian}
HIL_LOG_NAME=tryboot-test
TIMEOUT=${TRYBOOT_TIMEOUT:-180}
# shellcheck source=board/hil/host.sh
. "$A64_DIR/../host.sh"
# shellcheck source=board/hil/arm64/prepare.sh
. "$A64_DIR/prepare.sh"

PASSED=0 FAILED=0
pass() { PASSED=$((PASSED + 1)); printf 'PASS %s: %s\n' "$1" "$2"; }
fail() { FAILED=$((FAILED + 1)); printf 'FAIL %s: %s\n' "$1" "$2"; }
say() { printf 'tryboot-test: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 2; }

[ "$(id -u)" -eq 0 ] || die "run as root (packages, the build root's chroot)"
# shellcheck source=board/private-dir.sh
. "$REPO/board/private-dir.sh"
private_dir "$A64_CACHE" IMAGE_CACHE || exit 2
run=$A64_CACHE/tryboot-test
qemu_pid=""
stop_qemu() { [ -z "$qemu_pid" ] || { kill "$qemu_pid" 2>/dev/null || true; wait "$qemu_pid" 2>/dev/null || true; qemu_pid=""; }; }
trap stop_qemu EXIT
trap 'exit 130' INT TERM

# initramfs: busybox-static, the watchdog (the Pi's restart: QEMU's bcm2835 power manager resets
# the machine, and -no-reboot makes QEMU exit), the module, hilrestart, and an init that loads
# them and restarts with the command given on the kernel's command line (jbtest=tryboot|plain).
initramfs() {
  local r="$run/initramfs.d" f
  rm -rf "$r" && mkdir -p "$r"/{bin,dev,proc,sys,modules}
  cp "$A64_CACHE/kernel/busybox/usr/bin/busybox" "$r/bin/busybox"
  ln -s busybox "$r/bin/sh"
  for f in $(a64_modules bcm2835_wdt); do
    case "$f" in
      *.xz) xz -dc "$f" > "$r/modules/$(basename "$f" .xz)"; basename "$f" .xz ;;
      *) cp "$f" "$r/modules/"; basename "$f" ;;
    esac
  done > "$r/modules/order"
  cp "$run/ko/jukebox_tryboot.ko" "$r/modules/" && echo jukebox_tryboot.ko >> "$r/modules/order"
  install -m 0755 "$run/hilrestart" "$r/bin/hilrestart"
  cat > "$r/init" <<'INIT'
#!/bin/sh
export PATH=/bin
busybox mount -t proc proc /proc
busybox mount -t sysfs sys /sys
busybox mount -t devtmpfs dev /dev
for m in $(busybox cat /modules/order); do busybox insmod "/modules/$m" || echo "tryboot-test: insmod $m failed"; done
echo "tryboot-test: firmware devices bound: $(busybox ls /sys/bus/platform/drivers/raspberrypi-firmware 2>/dev/null | busybox grep -c :)"
echo "tryboot-test: restart ($jbtest)"
case "$jbtest" in
  tryboot) exec hilrestart '0 tryboot' ;;
  *) exec hilrestart ;;
esac
INIT
  chmod 0755 "$r/init"
  (cd "$r" && find . | cpio -o -H newc --quiet) > "$run/initramfs.cpio"
}

# boot NAME: one boot of QEMU raspi3b with jbtest=NAME; the console in run/NAME.console, QEMU's
# log of what it does not implement in run/NAME.qemu.log. Ends when QEMU exits (the watchdog's
# reset), a few seconds after the kernel says it restarts, or after TIMEOUT (QEMU killed).
boot() {
  local name=$1 t0=$SECONDS k="$A64_CACHE/kernel/root" con="$run/$1.console" end
  rm -f "$con" "$run/$name.qemu.log"
  : > "$con"
  # maxcpus=1: the other three cores stay parked (two host cores run the emulation).
  timeout -s KILL $((TIMEOUT + 10)) qemu-system-aarch64 -M raspi3b -no-reboot -display none -monitor none \
    -kernel "$k/boot/vmlinuz-$A64_ABI" -dtb "$k/usr/lib/linux-image-$A64_ABI/broadcom/bcm2837-rpi-3-b.dtb" \
    -initrd "$run/initramfs.cpio" -append "console=ttyAMA0,115200 loglevel=7 maxcpus=1 panic=-1 jbtest=$name" \
    -serial "file:$con" -d unimp -D "$run/$name.qemu.log" </dev/null >"$run/$name.qemu.out" 2>&1 &
  qemu_pid=$!
  end=$((SECONDS + TIMEOUT))
  while kill -0 "$qemu_pid" 2>/dev/null && [ $SECONDS -lt $end ]; do
    if grep -q 'reboot: Restarting system' "$con"; then end=$((SECONDS + 5)); fi
    sleep 1
  done
  boot_end="QEMU exited"
  kill -0 "$qemu_pid" 2>/dev/null && boot_end="QEMU stopped"
  stop_qemu
  boot_s=$((SECONDS - t0))
}

main() {
  local t0=$SECONDS tag=0x00038064 notify=0x00030048 n order
  a64_prepare_packages
  a64_prepare_apt
  a64_resolve_kernel
  a64_prepare_kernel
  mkdir -p "$run"
  rm -rf "$run/ko"
  a64_kbuild tryboot "$REPO/board/image/tryboot" "$run/ko"
  cp "$REPO/board/hil/arm64/hilrestart.c" "$A64_CACHE/gpio/root/build/"
  chroot "$A64_CACHE/gpio/root" aarch64-linux-gnu-gcc -O2 -Wall -Werror -static -nostdlib -ffreestanding \
    -fno-stack-protector -o /build/hilrestart /build/hilrestart.c
  cp "$A64_CACHE/gpio/root/build/hilrestart" "$run/hilrestart"
  initramfs
  say "kernel $A64_ABI, module and initramfs ready in $((SECONDS - t0)) s; two boots on QEMU raspi3b"

  boot tryboot
  local c="$run/tryboot.console" q="$run/tryboot.qemu.log"
  say "boot tryboot: $boot_s s ($boot_end)"
  if grep -q 'raspberrypi-firmware .*Attached to firmware' "$c"; then pass tryboot-firmware "$(grep -m1 -o 'raspberrypi-firmware .*' "$c" | tr -d '\r')"
  else fail tryboot-firmware "the kernel's firmware driver did not attach to the emulated mailbox (see $c)"; fi
  if grep -q 'jukebox_tryboot: Raspberry Pi firmware found' "$c"; then pass tryboot-module "$(grep -m1 -o 'jukebox_tryboot: Raspberry.*' "$c" | tr -d '\r')"
  else fail tryboot-module "the module did not load or found no firmware: $(grep -m2 -E 'jukebox_tryboot|insmod' "$c" | tr -d '\r' | paste -sd'|')"; fi
  if grep -q "reboot: Restarting system with command '0 tryboot'" "$c"; then pass tryboot-restart "the kernel restarted with the command '0 tryboot'"
  else fail tryboot-restart "no restart with '0 tryboot' within ${TIMEOUT} s (see $c)"; fi
  if grep -q "jukebox_tryboot: restart command '0 tryboot': firmware reboot flags set to 0x1" "$c"; then
    pass tryboot-sent "$(grep -m1 -o "jukebox_tryboot: restart command.*" "$c" | tr -d '\r')"
  else fail tryboot-sent "the module did not say it set the flag: $(grep -m2 'jukebox_tryboot: restart' "$c" | tr -d '\r' | paste -sd'|')"; fi
  n=$(grep -c "unhandled tag $tag" "$q" || true)
  if [ "$n" -eq 1 ]; then pass tryboot-tag "QEMU's mailbox got the tag once: $(grep -m1 "unhandled tag $tag" "$q")"
  else fail tryboot-tag "QEMU's mailbox log holds the tag $tag $n times, expected once (see $q)"; fi
  # As the Raspberry Pi kernel does it: the flag, then the firmware driver's NOTIFY_REBOOT (its
  # shutdown), then the watchdog's reset.
  order=$(grep -o -E "unhandled tag ($tag|$notify)|powermgt_write: WDOG" "$q" | awk '{print $NF}' | paste -sd' ')
  if [ "$order" = "$tag $notify WDOG" ]; then pass tryboot-order "the mailbox got $tag, then NOTIFY_REBOOT ($notify), then the watchdog reset the machine"
  else fail tryboot-order "expected $tag, $notify, WDOG in QEMU's log; got: ${order:-nothing}"; fi

  boot plain
  c="$run/plain.console" q="$run/plain.qemu.log"
  say "boot plain: $boot_s s ($boot_end)"
  if grep -q 'reboot: Restarting system$' <(tr -d '\r' < "$c"); then pass plain-restart "the kernel restarted without a command"
  else fail plain-restart "no plain restart within ${TIMEOUT} s: $(grep -m1 'reboot:' "$c" | tr -d '\r')"; fi
  if grep -q 'jukebox_tryboot: Raspberry Pi firmware found' "$c" && ! grep -q 'jukebox_tryboot: restart command' "$c"; then
    pass plain-module "the module loaded and left the restart alone"
  else fail plain-module "expected the module loaded and silent at the restart: $(grep 'jukebox_tryboot' "$c" | tr -d '\r' | paste -sd'|')"; fi
  n=$(grep -c "unhandled tag $tag" "$q" || true)
  if [ "$n" -eq 0 ] && [ -s "$q" ]; then pass plain-no-tag "QEMU's mailbox log holds no $tag ($(wc -l < "$q") lines of unimplemented accesses)"
  else fail plain-no-tag "QEMU's mailbox log holds the tag $tag $n times, or is empty, after a plain restart (see $q)"; fi
  # The mailbox still answered at this restart: the tag's absence is the module's doing.
  order=$(grep -o -E "unhandled tag $notify|powermgt_write: WDOG" "$q" | awk '{print $NF}' | paste -sd' ')
  if [ "$order" = "$notify WDOG" ]; then pass plain-mailbox "the mailbox got NOTIFY_REBOOT ($notify) at this restart, then the watchdog reset the machine"
  else fail plain-mailbox "expected $notify, WDOG in QEMU's log; got: ${order:-nothing}"; fi

  printf '%d passed, %d failed in %d s\n' "$PASSED" "$FAILED" $((SECONDS - t0))
  [ "$FAILED" -eq 0 ]
}
main "$@"
