# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154 # a library: its functions set and read its caller's variables
# image-lib.sh (sourced by board/image-test.sh and board/power-cuts.sh): what both tests of the
# appliance image do alike, defined once: the image copied to a test disk with the test music on
# its music partition, the settings on its boot partition, the image's own kernel, initrd and
# command line with a probe handed to systemd as a credential, and one boot in QEMU virt with the
# UART's lines stamped by the host's clock. The caller sets IT_REPO (the checkout) and
# HIL_LOG_NAME before sourcing it, and run (the run folder; run/out is shared with the guest over
# 9p) before calling; the functions set the variables named in their comments (locals of the
# caller's main, when it declares them).

# The caches and the arm64 HIL guest's steps (a64_prepare_fixtures), as board/hil/arm64.sh has them.
A64_DIR=$IT_REPO/board/hil/arm64
A64_REPO=$IT_REPO
IT_CACHE=${IMAGE_CACHE:-/var/tmp/jukebox-image}
A64_CACHE=$IT_CACHE/test
A64_CROSS=${CROSS_CACHE:-/var/tmp/jukebox-cross}
A64_MIRROR=${TRIXIE_MIRROR:-http://deb.debian.org/debian}
# shellcheck source=board/hil/host.sh
. "$A64_DIR/../host.sh"
# shellcheck source=board/hil/arm64/prepare.sh
. "$A64_DIR/prepare.sh"

say() { printf '%s: %s\n' "${HIL_LOG_NAME:-image-test}" "$*" >&2; }

# part_start IMAGE N / part_size IMAGE N: partition N's first byte and size in bytes (sfdisk -d). Printed whole
# (printf %.0f: mawk prints numbers past 2^31, a partition past 2 GiB, as 2.69e+09).
part_field() { sfdisk -d "$1" | awk -v p="$1$2" -v f="$3" '$1 == p { for (i = 1; i <= NF; i++) if ($i == f "=") { gsub(",", "", $(i+1)); printf "%.0f\n", $(i+1) * 512 } }'; }
part_start() { part_field "$1" "$2" start; }
part_size() { part_field "$1" "$2" size; }

# img_disk IMAGE MUSIC-DIR: run/disk.img, the image (.img or .img.xz) made 512 MiB bigger (a
# bigger card: the music partition grows into it), MUSIC-DIR's files on its music partition (made
# again at its place and size). Sets raw_size, xz_size, boot_off, music_off, music_size, data_off,
# data_size and fat (mtools' name of the boot partition).
img_disk() {
  case "$1" in
    *.xz) xz -dc "$1" > "$run/disk.img" ;;
    *) cp --sparse=always "$1" "$run/disk.img" ;;
  esac
  raw_size=$(stat -c %s "$run/disk.img")
  xz_size=""
  [[ "$1" != *.xz ]] || xz_size=$(stat -c %s "$1")
  truncate -s +512M "$run/disk.img"
  boot_off=$(part_start "$run/disk.img" 1)
  # The music partition is the last one (6 in an image with two root slots, 4 before).
  music_part=$(sfdisk -d "$run/disk.img" | sed -n "s|^$run/disk.img\([0-9]*\) .*|\1|p" | sort -n | tail -n 1)
  music_off=$(part_start "$run/disk.img" "$music_part")
  music_size=$(part_size "$run/disk.img" "$music_part")
  data_off=$(part_start "$run/disk.img" 3)
  data_size=$(part_size "$run/disk.img" 3)
  mkfs.ext4 -q -F -L jbmusic -m 0 -E "offset=$music_off,nodiscard" -d "$2" \
    "$run/disk.img" "$((music_size / 1024))k"
  fat="$run/disk.img@@$boot_off"
}

# img_music_long: run/music, the test music and a 2-hour silent track after it (FLAC: 1.3 MiB; made
# once), so that every boot resumes into something to play, however long the boot before it ran.
img_music_long() {
  [ -s "$A64_CACHE/fixtures/long.flac" ] || sox -D -n -r 44100 -c 2 -b 16 "$A64_CACHE/fixtures/long.flac" trim 0 7200
  mkdir -p "$run/music"
  cp "$A64_CACHE/fixtures/music"/* "$run/music/"
  cp "$A64_CACHE/fixtures/long.flac" "$run/music/04 long.flac"
}

# img_config [SED-SCRIPT]: run/good.json, the image's own jukebox.json (run/default.json) pointed at
# the test device (hw:Loopback,0,0, volume 100: bit-exact), and SED-SCRIPT's changes; put on the
# boot partition as jukebox.json.
img_config() {
  mtype -i "$fat" ::jukebox.json > "$run/default.json"
  sed 's|"device": "default"|"device": "hw:Loopback,0,0"|; s|"bootVolume": [0-9]*|"bootVolume": 100|' "$run/default.json" \
    | sed "${1:-}" > "$run/good.json"
  grep -q '"hw:Loopback,0,0"' "$run/good.json" || { say "the image's jukebox.json did not take the test device: $(cat "$run/default.json")"; return 1; }
  mcopy -o -i "$fat" "$run/good.json" ::jukebox.json
}

# img_root_copy OUT: root slot A's file system of run/disk.img (its ext4, as long as the file
# system says, not the partition) copied to OUT, the root an update bundle is made of (board/bundle.sh).
img_root_copy() {
  local root_off blocks bsize
  root_off=$(part_start "$run/disk.img" 2)
  dd if="$run/disk.img" of="$run/probe-root" bs=1M skip=$((root_off / 1048576)) count=8 status=none
  blocks=$(dumpe2fs -h "$run/probe-root" 2>/dev/null | sed -n 's/^Block count: *//p' || true)
  bsize=$(dumpe2fs -h "$run/probe-root" 2>/dev/null | sed -n 's/^Block size: *//p' || true)
  rm -f "$run/probe-root"
  { [ -n "$blocks" ] && [ -n "$bsize" ]; } || { say "slot A holds no ext4 (not an image with two root slots?)"; return 1; }
  dd if="$run/disk.img" of="$1" bs=1M skip=$((root_off / 1048576)) count=$((blocks * bsize / 1048576)) status=none
}

# img_firmware: the stand-in for the Pi firmware's choice of the root slot (QEMU virt has no Pi
# firmware: this, not the firmware, is what the tests exercise). As the firmware does: config.txt's
# os_prefix (the committed slot), or tryboot.txt's for one boot when the boot before it ended
# with the kernel's "Restarting system with command '0 tryboot'" (the reboot argument the Raspberry
# Pi kernel passes to the firmware as the one-shot tryboot flag; run/tryboot holds it between
# boots, and this clears it). Sets prefix ("" for an image with one kernel at the top) and
# slot_trial (1 when tryboot.txt was used).
img_firmware() {
  local f=config.txt
  slot_trial=0
  if [ -f "$run/tryboot" ]; then
    rm -f "$run/tryboot"
    # shellcheck disable=SC2034 # slot_trial: read by the callers (update-test)
    if mtype -i "$fat" ::tryboot.txt > /dev/null 2>&1; then f=tryboot.txt; slot_trial=1; fi
  fi
  prefix=$(mtype -i "$fat" "::$f" | tr -d '\r' | sed -n 's|^os_prefix=||p' | tail -n 1)
}
# img_reboot_arg PHASE: run/tryboot made when boot PHASE ended with a reboot asking for tryboot.
img_reboot_arg() {
  if grep -q "reboot: Restarting system with command '0 tryboot'" "$run/console-$1.log"; then : > "$run/tryboot"; fi
}

# img_kernel PROBE: the kernel, initrd and command line of the image, as the Pi's firmware would
# take them (img_firmware: from the committed slot's folder, or the one on trial), with the console
# moved to the virt machine's UART; PROBE (a guest script, copied to run/out/probe.sh) run by a unit
# given to the image's systemd as a credential (systemd-debug-generator), and the sound card for
# the test (snd-aloop), on the command line: nothing of it is in the image. Sets kernel, cmdline,
# prefix and slot_trial.
img_kernel() {
  local initrd unit
  img_firmware
  if [ -n "$prefix" ]; then
    kernel=${prefix}vmlinuz initrd=${prefix}initrd.img
  else
    kernel=$(mdir -b -i "$fat" :: | sed 's|^::/||' | grep '^vmlinuz-' | sort -V | tail -n 1)
    initrd=$(mdir -b -i "$fat" :: | sed 's|^::/||' | grep '^initrd.img-' | sort -V | tail -n 1)
  fi
  mcopy -o -i "$fat" "::$kernel" "$run/vmlinuz" && mcopy -o -i "$fat" "::$initrd" "$run/initrd.img"
  cmdline=$(mtype -i "$fat" "::${prefix}cmdline.txt" | tr -d '\r' | head -n 1 | sed 's/console=[^ ]*//g; s/  */ /g')
  unit=$(printf '%s\n' "[Unit]" "Description=image-test probe" "DefaultDependencies=no" \
    "After=systemd-modules-load.service" "[Service]" "Type=simple" \
    "ExecStart=/bin/sh -c 'modprobe -a 9pnet_virtio 9p && mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /mnt && exec /bin/bash /mnt/probe.sh'" \
    "StandardOutput=tty" "StandardError=tty" "TTYPath=/dev/ttyAMA0" | base64 -w0)
  # No getty on the UART: it would hang up the probe's output there.
  cmdline="console=ttyAMA0 $cmdline modules-load=snd-aloop snd_aloop.pcm_substreams=1 systemd.mask=serial-getty@ttyAMA0.service systemd.set_credential_binary=systemd.extra-unit.image-probe.service:$unit systemd.wants=image-probe.service"
  cp "$1" "$run/out/probe.sh"
  cp "$IT_REPO/board/image-probe-lib.sh" "$run/out/probe-lib.sh"
}

# img_boot PHASE: one boot of run/disk.img (QEMU's pid in run/qemu.pid: a power cut is a SIGKILL to
# it); the UART's lines in run/console-PHASE.log, stamped with the host's clock (seconds since
# QEMU started). The guest reads PHASE from run/out/phase.
img_boot() {
  local phase=$1 t0 line d
  echo "$phase" > "$run/out/phase"
  t0=${EPOCHREALTIME/./}   # microseconds
  timeout 900 qemu-system-aarch64 -M virt -accel tcg,thread=multi -cpu cortex-a72 -smp 2 -m 1024 \
    -nographic -no-reboot -nodefaults -pidfile "$run/qemu.pid" \
    -kernel "$run/vmlinuz" -initrd "$run/initrd.img" -append "$cmdline" \
    -drive if=none,id=hd,file="$run/disk.img",format=raw,cache=writeback -device virtio-blk-pci,drive=hd \
    -fsdev local,id=out,path="$run/out",security_model=none -device virtio-9p-pci,fsdev=out,mount_tag=out \
    -serial stdio < /dev/null 2> "$run/qemu-$phase.err" \
    | while IFS= read -r line; do
        d=$(( ${EPOCHREALTIME/./} - t0 ))
        printf '%d.%02d %s\n' $((d / 1000000)) $((d % 1000000 / 10000)) "${line//$'\r'/}"
      done \
    > "$run/console-$phase.log" || true
}

# img_figures PHASE FIRST-UP READY-US: QEMU start to READY and to the first sample, from the guest's
# monotonic clock (FIRST-UP: /proc/uptime at the first sample; READY-US: jukebox.service's
# ActiveEnterTimestampMonotonic) and the host's stamp of the probe's first line, `… start up=U`
# (its offset: QEMU start to the kernel's clock zero). Prints "KERNEL READY FIRST" in seconds.
img_figures() {
  local line stamp upstart
  line=$(grep -m1 -E 'PROBE start up=' "$run/console-$1.log") || return 1
  stamp=${line%% *} upstart=${line##*up=}
  awk -v s="$stamp" -v u="$upstart" -v f="${2:-0}" -v r="${3:-0}" 'BEGIN {
    off = s - u; printf "%.1f %.1f %.1f\n", off, off + r / 1e6, off + f }'
}
