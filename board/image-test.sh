#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# image-test.sh - boots the appliance image of board/image.sh in QEMU (-M virt, Cortex-A72, TCG)
# with the image's own kernel, initrd and cmdline.txt taken from its boot partition (the console
# moved to the virt machine's UART), the image as a virtio disk grown by 512 MiB, the test music
# on its music partition and settings on its boot partition, as a builder would put them:
#   boot 1 (good)  a good jukebox.json (hw:Loopback,0,0, volume 100), hostname.txt, timezone.txt,
#                  an SSH key, a broken wifi.txt: READY, the first sample, bit-exact to snd-aloop,
#                  settings applied, the bad Wi-Fi file refused, the music partition grown, / ro
#   boot 2 (bad)   jukebox.json half-written (cut mid-file): the reason on the console and in the
#                  journal, the last good one in force, READY and playing
#   boot 3 (nodata) the data partition hidden (its label changed), the good jukebox.json back: READY
#                  without waiting for the device timeout (jukebox-partitions-gone), bit-exact, the player's state in RAM, the reason on the
#                  console and in the problems file, the partition's bytes untouched by the boot
#   boot 4 (back)  the label restored: the place saved by boot 2 found again on /data
# Each boot: every line of the setup problems file in `jukebox ctl status --json` "setupProblems".
# Prints the figures (image size, QEMU start to READY and to the first sample, the critical chain)
# and `N passed, N failed` last; exit 1 when anything failed. See docs/IMAGE.md.
#
#   sudo bash board/image-test.sh [IMAGE.img|IMAGE.img.xz]   (default: board/image.sh --no-xz makes one)
#
# Environment: IMAGE_CACHE (default /var/tmp/jukebox-image; this test uses IMAGE_CACHE/test).
set -euo pipefail
IT_REPO=$(cd "$(dirname "$0")/.." && pwd)
A64_DIR=$IT_REPO/board/hil/arm64
A64_REPO=$IT_REPO
IT_CACHE=${IMAGE_CACHE:-/var/tmp/jukebox-image}
A64_CACHE=$IT_CACHE/test
A64_CROSS=${CROSS_CACHE:-/var/tmp/jukebox-cross}
A64_MIRROR=${TRIXIE_MIRROR:-http://deb.debian.org/debian}
HIL_LOG_NAME=image-test
# shellcheck source=board/hil/host.sh
. "$A64_DIR/../host.sh"
# shellcheck source=board/hil/arm64/prepare.sh
. "$A64_DIR/prepare.sh"

say() { printf 'image-test: %s\n' "$*" >&2; }

# part_start IMAGE N / part_size IMAGE N: partition N's first byte and size in bytes (sfdisk -d).
part_field() { sfdisk -d "$1" | awk -v p="$1$2" -v f="$3" '$1 == p { for (i = 1; i <= NF; i++) if ($i == f "=") { gsub(",", "", $(i+1)); print $(i+1) * 512 } }'; }
part_start() { part_field "$1" "$2" start; }
part_size() { part_field "$1" "$2" size; }

main() {
[ "$(id -u)" -eq 0 ] || { say "run as root (apt-get, image.sh)"; exit 2; }
local t_start=$SECONDS img=${1:-} run boot_off music_off music_size data_off data_size k
# shellcheck source=board/private-dir.sh
. "$IT_REPO/board/private-dir.sh"
private_dir "$IT_CACHE" IMAGE_CACHE || exit 1
mkdir -p "$A64_CACHE/tools"
hil_apt_install "$A64_CACHE/apt.log" qemu-system-arm mtools e2fsprogs fdisk sox gcc libc6-dev xz-utils openssh-client
if [ -z "$img" ]; then
  bash "$IT_REPO/board/image.sh" --no-xz --out "$IT_CACHE/out"
  img=$(find "$IT_CACHE/out" -maxdepth 1 -name 'jukebox-*-arm64.img' -printf '%T@ %p\n' | sort -n | tail -n 1 | cut -d' ' -f2-)
fi
[ -f "$img" ] || { say "no image: $img"; exit 1; }
# The test noise and music of the arm64 HIL guest (prepare.sh), with the host's pcmcmp.
[ "$A64_CACHE/tools/pcmcmp" -nt "$IT_REPO/board/hil/tools/pcmcmp.c" ] && [ "$A64_CACHE/tools/pcmcmp" -nt "$IT_REPO/board/hil/tools/pcmfile.h" ] \
  || cc -O2 -Wall -o "$A64_CACHE/tools/pcmcmp" "$IT_REPO/board/hil/tools/pcmcmp.c"
a64_prepare_fixtures

run="$A64_CACHE/run"
rm -rf "$run" && mkdir -p "$run/out"
case "$img" in
  *.xz) xz -dc "$img" > "$run/disk.img" ;;
  *) cp --sparse=always "$img" "$run/disk.img" ;;
esac
local raw_size xz_size
raw_size=$(stat -c %s "$run/disk.img")
xz_size=""
[[ "$img" != *.xz ]] || xz_size=$(stat -c %s "$img")
truncate -s +512M "$run/disk.img"   # a bigger card: the music partition grows into it
boot_off=$(part_start "$run/disk.img" 1)
music_off=$(part_start "$run/disk.img" 4)
music_size=$(part_size "$run/disk.img" 4)
data_off=$(part_start "$run/disk.img" 3)
data_size=$(part_size "$run/disk.img" 3)
# Music copied onto the music partition (made again at its place and size, with the files).
mkfs.ext4 -q -F -L jbmusic -m 0 -E "offset=$music_off,nodiscard" -d "$A64_CACHE/fixtures/music" \
  "$run/disk.img" "$((music_size / 1024))k"
# The settings on the boot partition.
local fat="$run/disk.img@@$boot_off"
mtype -i "$fat" ::jukebox.json > "$run/default.json"
sed 's|"device": "default"|"device": "hw:Loopback,0,0"|; s|"bootVolume": [0-9]*|"bootVolume": 100|' "$run/default.json" > "$run/good.json"
grep -q '"hw:Loopback,0,0"' "$run/good.json" || { say "the image's jukebox.json did not take the test device: $(cat "$run/default.json")"; exit 1; }
echo jbtest > "$run/hostname.txt"
echo Europe/Berlin > "$run/timezone.txt"
printf 'ssid=\npsk=short\n' > "$run/wifi.txt"
rm -f "$run/key" && ssh-keygen -q -t ed25519 -N '' -C image-test -f "$run/key"
cp "$run/key.pub" "$run/authorized_keys"
for k in good.json:jukebox.json hostname.txt timezone.txt wifi.txt authorized_keys; do
  mcopy -o -i "$fat" "$run/${k%%:*}" "::${k##*:}"
done
# The kernel, initrd and command line of the image, as the Pi's firmware would take them.
local kernel initrd cmdline
kernel=$(mdir -b -i "$fat" :: | sed 's|^::/||' | grep '^vmlinuz-' | sort -V | tail -n 1)
initrd=$(mdir -b -i "$fat" :: | sed 's|^::/||' | grep '^initrd.img-' | sort -V | tail -n 1)
mcopy -o -i "$fat" "::$kernel" "$run/vmlinuz" && mcopy -o -i "$fat" "::$initrd" "$run/initrd.img"
cmdline=$(mtype -i "$fat" ::cmdline.txt | tr -d '\r' | head -n 1 | sed 's/console=[^ ]*//g; s/  */ /g')
# The probe: a unit given to the image's systemd as a credential (systemd-debug-generator), and the
# sound card for the test (snd-aloop), on the kernel command line; nothing of it is in the image.
local unit
unit=$(printf '%s\n' "[Unit]" "Description=image-test probe" "DefaultDependencies=no" \
  "After=systemd-modules-load.service" "[Service]" "Type=simple" \
  "ExecStart=/bin/sh -c 'modprobe -a 9pnet_virtio 9p && mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /mnt && exec /bin/bash /mnt/probe.sh'" \
  "StandardOutput=tty" "StandardError=tty" "TTYPath=/dev/ttyAMA0" | base64 -w0)
# No getty on the UART: it would hang up the probe's output there.
cmdline="console=ttyAMA0 $cmdline modules-load=snd-aloop snd_aloop.pcm_substreams=1 systemd.mask=serial-getty@ttyAMA0.service systemd.set_credential_binary=systemd.extra-unit.image-probe.service:$unit systemd.wants=image-probe.service"
cp "$IT_REPO/board/image-probe.sh" "$run/out/probe.sh"
say "image $(basename "$img"): raw $((raw_size / 1048576)) MiB${xz_size:+, xz $((xz_size / 1048576)) MiB}; kernel $kernel"
say "cmdline (without the probe): ${cmdline%% systemd.set_credential*}"
local t_prepared=$SECONDS

PASSED=0
FAILED=0
# boot PHASE: one boot; the UART's lines stamped with the host's clock (seconds since QEMU started).
boot() {
  local phase=$1 t0
  echo "$phase" > "$run/out/phase"
  t0=${EPOCHREALTIME/./}   # microseconds
  timeout 900 qemu-system-aarch64 -M virt -accel tcg,thread=multi -cpu cortex-a72 -smp 2 -m 1024 \
    -nographic -no-reboot -nodefaults -kernel "$run/vmlinuz" -initrd "$run/initrd.img" -append "$cmdline" \
    -drive if=none,id=hd,file="$run/disk.img",format=raw,cache=writeback -device virtio-blk-pci,drive=hd \
    -fsdev local,id=out,path="$run/out",security_model=none -device virtio-9p-pci,fsdev=out,mount_tag=out \
    -serial stdio < /dev/null 2> "$run/qemu-$phase.err" \
    | while IFS= read -r line; do
        d=$(( ${EPOCHREALTIME/./} - t0 ))
        printf '%d.%02d %s\n' $((d / 1000000)) $((d % 1000000 / 10000)) "${line//$'\r'/}"
      done \
    > "$run/console-$phase.log" || true
}
# figures PHASE: QEMU start to READY and to the first sample, from the guest's monotonic clock and
# the host's stamp of the probe's first line (its offset: QEMU start to the kernel's clock zero).
figures() {
  local phase=$1 line stamp upstart first ready_us
  line=$(grep -m1 'IMG-PROBE start up=' "$run/console-$phase.log") || { say "$phase: the probe never started"; return 0; }
  stamp=${line%% *} upstart=${line##*up=}
  first=$(sed -n 's/^first_up=//p' "$run/out/times-$phase" 2>/dev/null)
  ready_us=$(sed -n 's/^ready_us=//p' "$run/out/times-$phase" 2>/dev/null)
  awk -v s="$stamp" -v u="$upstart" -v f="${first:-0}" -v r="${ready_us:-0}" -v p="$phase" 'BEGIN {
    off = s - u
    printf "image-test: %s boot: QEMU start to kernel %.1f s, to jukebox READY %.1f s, to the first sample %.1f s\n", p, off, off + r / 1e6, off + f }' >&2
}

# data_copy: the data partition copied out of the disk to data.part (it starts and ends on a MiB).
data_copy() { dd if="$run/disk.img" of="$run/data.part" bs=1M skip=$((data_off / 1048576)) count=$((data_size / 1048576)) status=none; }
# data_label LABEL: the data partition's ext4 label changed on the disk (nothing else in it).
data_label() {
  data_copy && e2label "$run/data.part" "$1" \
    && dd if="$run/data.part" of="$run/disk.img" bs=1M seek=$((data_off / 1048576)) conv=notrunc status=none
}
# data_sum: the checksum of the data partition's bytes.
data_sum() { data_copy && sha256sum < "$run/data.part" | cut -c1-64; }
# check_audio PHASE: what the guest recorded is the test noise bit for bit (a fresh queue plays it first).
check_audio() {
  local audio
  audio=$("$A64_CACHE/tools/pcmcmp" find "$A64_CACHE/fixtures/src.raw" "$run/out/rec-$1.raw" 44100 2>&1 || true)
  if [[ "$audio" == bit-exact:* ]]; then hil_result PASS "$1-bit-exact" "recorded from hw:Loopback,1,0 in the guest: $audio"
  else hil_result FAIL "$1-bit-exact" "expected the test noise bit for bit from hw:Loopback,1,0: $audio"; fi
}

say "boot 1: good settings (first boot)"
local t0=$SECONDS
boot good
say "boot 1: $((SECONDS - t0)) s"
hil_results "$run/out/results-good" 2>/dev/null || true
check_audio good
figures good
hil_finished "$run/console-good.log" 'IMG-PROBE done' "boot 1: the probe did not finish" 40 || true

# Boot 2: a jukebox.json cut in the middle, as a PC pulled out too early leaves it.
head -c "$(( $(stat -c %s "$run/good.json") / 2 ))" "$run/good.json" > "$run/half.json"
mcopy -o -i "$fat" "$run/half.json" ::jukebox.json
say "boot 2: a half-written jukebox.json"
t0=$SECONDS
boot bad
say "boot 2: $((SECONDS - t0)) s"
hil_results "$run/out/results-bad" 2>/dev/null || true
if grep -q 'jukebox-setup: PROBLEM: jukebox.json on the boot partition is not used' "$run/console-bad.log"; then
  hil_result PASS bad-config-console "$(grep -m1 'PROBLEM: jukebox.json' "$run/console-bad.log" | cut -d' ' -f2-)"
else
  hil_result FAIL bad-config-console "expected the reason on the serial console; seen: $(grep -m3 jukebox-setup "$run/console-bad.log" | cut -d' ' -f2- | paste -sd'|')"
fi
figures bad
hil_finished "$run/console-bad.log" 'IMG-PROBE done' "boot 2: the probe did not finish" 40 || true

# Boot 3: the data partition hidden as a missing or unreadable partition would be (its label
# changed: /dev/disk/by-label/jbdata never appears, and the device times out), the good jukebox.json
# back on the boot partition (no last good one can be read without /data).
mcopy -o -i "$fat" "$run/good.json" ::jukebox.json
data_label jbhidden
local sum_before sum_after
sum_before=$(data_sum)
say "boot 3: the data partition hidden (label jbhidden); the wait for its device (at most $(grep -o 'LABEL=jbdata.*device-timeout=[0-9a-z]*' "$IT_REPO/board/image/fstab" | sed 's/.*=//')) ended once udev has settled"
t0=$SECONDS
boot nodata
say "boot 3: $((SECONDS - t0)) s"
hil_results "$run/out/results-nodata" 2>/dev/null || true
check_audio nodata
# The wait for the gone partition ended by jukebox-partitions-gone, not by the device timeout.
if grep -q 'jukebox-partitions-gone: no partition labelled jbdata on any disk once udev had settled' "$run/console-nodata.log"; then
  hil_result PASS nodata-no-wait "$(grep -m1 'jukebox-partitions-gone: no partition labelled jbdata' "$run/console-nodata.log" | cut -d' ' -f2-)"
else
  hil_result FAIL nodata-no-wait "expected jukebox-partitions-gone to end the wait for jbdata; seen: $(grep -m3 'jukebox-partitions-gone\|jbdata' "$run/console-nodata.log" | cut -d' ' -f2- | paste -sd'|')"
fi
if grep -q 'jukebox-setup: PROBLEM: no data partition (label jbdata) was found' "$run/console-nodata.log"; then
  hil_result PASS nodata-console "$(grep -m1 'jukebox-setup: PROBLEM: no data partition' "$run/console-nodata.log" | cut -d' ' -f2-)"
else
  hil_result FAIL nodata-console "expected the missing data partition on the serial console; seen: $(grep -m3 'jukebox-data\|PROBLEM' "$run/console-nodata.log" | cut -d' ' -f2- | paste -sd'|')"
fi
sum_after=$(data_sum)
[ -n "$sum_before" ] && [ "$sum_before" = "$sum_after" ] \
  && hil_result PASS nodata-data-untouched "the hidden data partition's bytes the same after the boot without it (sha256 ${sum_after:0:16})" \
  || hil_result FAIL nodata-data-untouched "the hidden data partition changed during the boot without it: ${sum_before:0:16} -> ${sum_after:0:16}"
figures nodata
hil_finished "$run/console-nodata.log" 'IMG-PROBE done' "boot 3: the probe did not finish" 40 || true

# Boot 4: the data partition's label as it was.
data_label jbdata
say "boot 4: the data partition back"
t0=$SECONDS
boot back
say "boot 4: $((SECONDS - t0)) s"
hil_results "$run/out/results-back" 2>/dev/null || true
figures back
hil_finished "$run/console-back.log" 'IMG-PROBE done' "boot 4: the probe did not finish" 40 || true
rm -f "$run/data.part"
for p in good bad nodata back; do
  [ -f "$run/out/analyze-$p.txt" ] && { echo "---- $p boot: systemd-analyze (from $run/out/analyze-$p.txt)"; sed -n '/^== systemd-analyze$/,/^== blame/p' "$run/out/analyze-$p.txt" | grep -v '^== blame'; }
done
say "image: raw $((raw_size / 1048576)) MiB${xz_size:+, xz $((xz_size / 1048576)) MiB}"
say "prepare $((t_prepared - t_start)) s, run $((SECONDS - t_prepared)) s (files in $run)"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
}
main "$@"
