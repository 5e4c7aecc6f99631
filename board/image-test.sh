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
HIL_LOG_NAME=image-test
# shellcheck source=board/image-lib.sh
. "$IT_REPO/board/image-lib.sh"

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
# shellcheck disable=SC2034 # slot_trial: set by img_kernel (image-lib.sh), read by update-test only
local raw_size xz_size fat kernel cmdline music_part prefix slot_trial
img_disk "$img" "$A64_CACHE/fixtures/music"
# The settings on the boot partition.
img_config
echo jbtest > "$run/hostname.txt"
echo Europe/Berlin > "$run/timezone.txt"
printf 'ssid=\npsk=short\n' > "$run/wifi.txt"
rm -f "$run/key" && ssh-keygen -q -t ed25519 -N '' -C image-test -f "$run/key"
cp "$run/key.pub" "$run/authorized_keys"
for k in hostname.txt timezone.txt wifi.txt authorized_keys; do
  mcopy -o -i "$fat" "$run/$k" "::$k"
done
img_kernel "$IT_REPO/board/image-probe.sh"
say "image $(basename "$img"): raw $((raw_size / 1048576)) MiB${xz_size:+, xz $((xz_size / 1048576)) MiB}; kernel $kernel"
say "cmdline (without the probe): ${cmdline%% systemd.set_credential*}"
local t_prepared=$SECONDS

PASSED=0
FAILED=0
# boot PHASE: one boot (img_boot).
boot() { img_boot "$1"; }
# figures PHASE: QEMU start to READY and to the first sample (img_figures, from the probe's times).
figures() {
  local phase=$1 f k_s r_s f_s
  f=$(img_figures "$phase" "$(sed -n 's/^first_up=//p' "$run/out/times-$phase" 2>/dev/null)"     "$(sed -n 's/^ready_us=//p' "$run/out/times-$phase" 2>/dev/null)") || { say "$phase: the probe never started"; return 0; }
  read -r k_s r_s f_s <<< "$f"
  say "$phase boot: QEMU start to kernel $k_s s, to jukebox READY $r_s s, to the first sample $f_s s"
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
