#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# image.sh - the appliance image jukebox-<version>-arm64.img.xz for Raspberry Pi 3, 4 and Zero 2 W
# (64-bit), from Debian 13 packages only, on any x86-64 Debian machine, as root, without a loop
# device (it works in a container). See docs/IMAGE.md.
#
#   sudo bash board/image.sh [--deb DEB] [--out DIR] [--music DIR] [--no-xz] [--version V]
#                            [--key KEY --cert CERT]
#
#   --deb DEB     the project's arm64 package (default: the newest $CROSS_CACHE/debs/jukebox_*_arm64.deb;
#                 with none, board/package.sh --arch arm64 makes one)
#   --out DIR     where the image goes (default: $IMAGE_CACHE/out)
#   --music DIR   files put on the music partition (default: none; it is grown at the first boot)
#   --no-xz       leave the raw .img (default: .img.xz, the raw one removed)
#   --version V   the image's and its update bundle's version (default: the .deb's)
#   --key KEY     the update bundle's signing key and certificate (board/bundle.sh); the
#   --cert CERT   certificate is the image's RAUC keyring. Default: the development key in
#                 $IMAGE_CACHE/keys, made at the first use (its private part is never in the image)
#
# The root: mmdebstrap --arch=arm64 trixie (board/hil/arm64/prepare.sh's rootfs step, cached) with
# linux-image-arm64, raspi-firmware (which lays out /boot/firmware: the Pi firmware, the kernel,
# the initrd, the device trees, config.txt and cmdline.txt), Wi-Fi firmware and tools, SSH, and the
# .deb; then the appliance's files from board/image/ (read-only root, settings from the boot
# partition, A/B updates with RAUC, the module jukebox_tryboot for the firmware's tryboot flag,
# cross-compiled for the root's kernel). Partitions are made as files (mkfs.vfat + mcopy, mkfs.ext4
# -d) and put together with sfdisk and dd (MBR, disk identifier 0x6a756b65 in every image):
#   1 FAT32  JUKEBOX  256 MiB   /boot/firmware (read-only): firmware, a/ and b/ (each slot's
#                               kernel, initrd, device trees, cmdline.txt), settings
#   2 ext4   jbroot   1 GiB     root slot A: /  (read-only)
#   3 ext4   jbdata   256 MiB   /data: the player's state (/var/lib/jukebox), last good settings
#   4 extended, holding:
#   5 ext4   jbroot   1 GiB     root slot B: empty until the first update
#   6 ext4   jbmusic  64 MiB    /srv/music, grown to the end of the card at the first boot
# Beside the image: jukebox-<version>-arm64.raucb, the update bundle of the same root (bundle.sh).
#
# Environment: IMAGE_CACHE (default /var/tmp/jukebox-image), CROSS_CACHE, TRIXIE_MIRROR as for
# board/package.sh and board/hil/arm64.sh.
set -euo pipefail
IMG_REPO=$(cd "$(dirname "$0")/.." && pwd)
A64_DIR=$IMG_REPO/board/hil/arm64
A64_REPO=$IMG_REPO
A64_CACHE=${IMAGE_CACHE:-/var/tmp/jukebox-image}
A64_CROSS=${CROSS_CACHE:-/var/tmp/jukebox-cross}
A64_MIRROR=${TRIXIE_MIRROR:-http://deb.debian.org/debian}
HIL_LOG_NAME=image
# shellcheck source=board/hil/host.sh
. "$A64_DIR/../host.sh"
# shellcheck source=board/hil/arm64/prepare.sh
. "$A64_DIR/prepare.sh"

# What the image holds beyond prepare.sh's base (systemd, udev, kmod, procps, alsa-utils) and the
# .deb's Depends: the kernel and the Pi's firmware (raspi-firmware and the Wi-Fi chips' firmware
# are in non-free-firmware), Wi-Fi (wpa_supplicant; systemd-networkd and -resolved do the rest),
# the clock, SSH (off unless a key is given), time zones, sfdisk (growing the music partition), and
# polkitd (the player's power-off, a Recommends of the .deb).
IMG_PACKAGES=linux-image-arm64,raspi-firmware,firmware-brcm80211,wpasupplicant,openssh-server,tzdata
IMG_PACKAGES=$IMG_PACKAGES,fdisk,e2fsprogs,systemd-timesyncd,systemd-resolved,polkitd
# A/B updates: RAUC (rauc-service: its D-Bus service, which `rauc install` and `rauc status` use).
IMG_PACKAGES=$IMG_PACKAGES,rauc,rauc-service
A64_COMPONENTS="main non-free-firmware"
A64_IMAGE_PACKAGES=$A64_IMAGE_PACKAGES,$IMG_PACKAGES
BOOT_MB=256 DATA_MB=256 MUSIC_MB=64 FIRST_MB=4
# Each root slot: fixed, since an update writes a later root into the same partitions (the root
# is about 620 MiB with a quarter free today).
SLOT_MB=1024
# The MBR disk identifier ("juke"): the same in every image, so that a bundle's root and the
# slots' cmdline.txt name the partitions alike (root=PARTUUID=6a756b65-02, -05).
DISK_ID=0x6a756b65

say() { printf 'image: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

# img_rootfs DEB: the cached Debian root with the .deb installed (prepare.sh's step; the .deb and
# board/image/rootfs-hook.sh are copied under names holding their checksums, so that the stamp
# changes with their content).
img_rootfs() {
  local deb=$1 sha hook
  sha=$(sha256sum < "$deb" | cut -c1-16)
  mkdir -p "$A64_CACHE/deb/$sha"
  [ -f "$A64_CACHE/deb/$sha/${deb##*/}" ] || cp "$deb" "$A64_CACHE/deb/$sha/"
  hook="$A64_CACHE/rootfs-hook-$(sha256sum < "$IMG_REPO/board/image/rootfs-hook.sh" | cut -c1-16).sh"
  [ -f "$hook" ] || cp "$IMG_REPO/board/image/rootfs-hook.sh" "$hook"
  A64_ROOTFS_OPTS=("--customize-hook=sh $hook \"\$1\" $A64_CACHE/deb/$sha/${deb##*/}")
  a64_prepare_rootfs "$(a64_deb_depends "$deb")"
}

# img_tryboot: board/image/tryboot/'s module jukebox_tryboot.ko, which passes `reboot '0 tryboot'` on
# to the Pi's firmware (Debian's kernel does not: docs/IMAGE.md), built for the root's own kernel
# against its linux-headers, cross-compiled in prepare.sh's build root (a64_kbuild; cached by the
# source and the kernel's version). Sets A64_ABI, A64_KVER and tryboot_ko.
img_tryboot() {
  local r="$A64_CACHE/rootfs" key t0=$SECONDS
  A64_ABI=$(find "$r/usr/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n')
  [ -n "$A64_ABI" ] && [ "$(wc -l <<<"$A64_ABI")" -eq 1 ] || die "expected one kernel in the root, found: $(echo "$A64_ABI" | paste -sd' ')"
  A64_KVER=$(dpkg-query --admindir="$r/var/lib/dpkg" -W -f='${Version}' "linux-image-$A64_ABI")
  tryboot_ko="$A64_CACHE/tryboot/jukebox_tryboot.ko"
  key="$A64_ABI $A64_KVER $(cat "$IMG_REPO/board/image/tryboot/"* | sha256sum | cut -c1-16)"
  a64_valid tryboot "$key" && [ -f "$tryboot_ko" ] && return 0
  rm -rf "$A64_CACHE/tryboot"
  a64_kbuild tryboot "$IMG_REPO/board/image/tryboot" "$A64_CACHE/tryboot"
  modinfo -F vermagic "$tryboot_ko" | grep -q "^$A64_ABI " || die "jukebox_tryboot.ko is not for $A64_ABI: $(modinfo -F vermagic "$tryboot_ko")"
  say "jukebox_tryboot.ko for $A64_ABI ($A64_KVER) in $((SECONDS - t0)) s"
  a64_stamp tryboot "$key"
}

# img_stage DIR: a copy of the root made into the appliance (files only: no program of the image
# runs here). /boot/firmware's content goes to DIR.boot, the data partition's to DIR.data.
img_stage() {
  local s=$1 i="$IMG_REPO/board/image" u
  rm -rf "$s" "$s.boot" "$s.data"
  cp -a "$A64_CACHE/rootfs" "$s"
  # The FAT partition: what raspi-firmware laid out, and the settings a builder edits.
  mv "$s/boot/firmware" "$s.boot" && mkdir -m 0755 "$s/boot/firmware"
  cp "$i/boot/"* "$s.boot/"
  img_slot_boot "$s.boot"
  cp "$s/etc/jukebox/config.json" "$s.boot/jukebox.json"
  # The player's config: the package's file is the default; the one in force is chosen at boot.
  install -D -m 0644 "$s/etc/jukebox/config.json" "$s/usr/share/jukebox/image/jukebox.json"
  ln -sfn /run/jukebox-setup/jukebox.json "$s/etc/jukebox/config.json"
  install -m 0755 "$i/jukebox-setup" "$s/usr/lib/jukebox/image-setup"
  install -m 0755 "$i/jukebox-grow-music" "$s/usr/lib/jukebox/image-grow-music"
  install -m 0755 "$i/jukebox-data" "$s/usr/lib/jukebox/image-data"
  install -m 0755 "$i/jukebox-partitions-gone" "$s/usr/lib/jukebox/image-partitions-gone"
  install -m 0644 "$i/jukebox-setup.service" "$i/jukebox-grow-music.service" "$i/jukebox-data.service" \
    "$i/jukebox-partitions-gone.service" "$s/usr/lib/systemd/system/"
  install -D -m 0644 "$i/jukebox.conf" "$s/etc/systemd/system/jukebox.service.d/image.conf"
  # A/B updates (RAUC): the slots, the backend for the firmware's tryboot, the kernel copied to the
  # boot partition after an install, the check that commits a slot booted on trial, the keyring.
  install -D -m 0644 "$i/rauc/system.conf" "$s/etc/rauc/system.conf"
  install -m 0644 "$keyring" "$s/etc/rauc/keyring.pem"
  install -m 0755 "$i/jukebox-rauc-backend" "$s/usr/lib/jukebox/rauc-backend"
  install -m 0755 "$i/jukebox-rauc-post-install" "$s/usr/lib/jukebox/rauc-post-install"
  install -m 0755 "$i/jukebox-update-check" "$s/usr/lib/jukebox/image-update-check"
  install -m 0755 "$i/jukebox-update" "$s/usr/sbin/jukebox-update"
  install -m 0644 "$i/jukebox-update-check.service" "$s/usr/lib/systemd/system/"
  # The firmware's tryboot flag (img_tryboot), loaded at every boot: where there is no Pi firmware
  # it only says so (one line), which keeps one image for the Pi and QEMU alike.
  install -D -m 0644 "$tryboot_ko" "$s/usr/lib/modules/$A64_ABI/updates/jukebox_tryboot.ko"
  depmod -b "$s" "$A64_ABI"
  modprobe -d "$s" -S "$A64_ABI" --show-depends jukebox_tryboot | grep -q 'updates/jukebox_tryboot.ko' \
    || die "depmod did not index jukebox_tryboot in the root"
  install -D -m 0644 "$i/tryboot/modules-load.conf" "$s/usr/lib/modules-load.d/jukebox-tryboot.conf"
  # Read-only root: what must be written lives in /run, on tmpfs (fstab) or on the data partition.
  install -m 0644 "$i/fstab" "$s/etc/fstab"
  install -D -m 0644 "$i/journald.conf" "$s/etc/systemd/journald.conf.d/image.conf"
  install -D -m 0644 "$i/sshd.conf" "$s/etc/ssh/sshd_config.d/jukebox.conf"
  install -D -m 0644 "$i/80-jukebox.network" "$s/etc/systemd/network/80-jukebox.network"
  : > "$s/etc/machine-id"   # empty: a new one in RAM at every boot (not a first boot)
  ln -sfn /run/jukebox-setup/hostname "$s/etc/hostname"
  ln -sfn /run/jukebox-setup/localtime "$s/etc/localtime"
  rm -f "$s/etc/timezone"
  mkdir -p "$s/etc/wpa_supplicant"
  ln -sfn /run/jukebox-setup/wpa_supplicant-wlan0.conf "$s/etc/wpa_supplicant/wpa_supplicant-wlan0.conf"
  mkdir -p "$s/data" "$s/srv/music" "$s/var/lib/jukebox"
  # prepare.sh masks the clock for its test guest; a box needs it (TLS for streams and feeds).
  rm -f "$s/etc/systemd/system/systemd-timesyncd.service"
  systemctl --root="$s" -q enable jukebox-setup.service jukebox-grow-music.service jukebox-data.service \
    jukebox-partitions-gone.service jukebox-update-check.service systemd-networkd.service
  systemctl --root="$s" -q mask systemd-networkd-wait-online.service
  # Nothing the appliance cannot use starts beside the player (each is processes competing with
  # its start, docs/IMAGE.md "Fast to music"): the D-Bus Wi-Fi daemon (wlan0 has its own, started
  # by jukebox-setup), a login prompt on the screen (root has no password), the copy of crash logs
  # from pstore (none on a Pi; it loads efi_pstore). apt's, dpkg's and e2scrub's timers are masked
  # by prepare.sh already.
  systemctl --root="$s" -q disable wpa_supplicant.service getty@tty1.service systemd-pstore.service
  # The data partition's first content: the player's folder and the system's.
  mkdir -p "$s.data/jukebox" "$s.data/system/var-lib-systemd" "$s.data/system/.var-lib-systemd-work" "$s.data/system/rauc"
  chown "$(img_id "$s" jukebox)" "$s.data/jukebox" && chmod 0750 "$s.data/jukebox"
}

# img_slot_boot BOOT: the boot partition's content laid out for two root slots. What raspi-firmware
# put at its top for the one kernel (vmlinuz-*, initrd.img-*, the device trees, cmdline.txt) goes
# to a/, slot A's folder, under fixed names; config.txt names them relative to os_prefix=a/, the
# committed slot (b/ is made by jukebox-rauc-post-install at the first update). cmdline.txt names
# the root by partition (both slots hold a file system labelled jbroot) and the slot for RAUC.
img_slot_boot() {
  local b=$1 k r
  mkdir -p "$b/a"
  k=$(find "$b" -maxdepth 1 -name 'vmlinuz-*' -printf '%f\n' | sort -V | tail -n 1)
  r=$(find "$b" -maxdepth 1 -name 'initrd.img-*' -printf '%f\n' | sort -V | tail -n 1)
  if [ -z "$k" ] || [ -z "$r" ]; then die "raspi-firmware laid out no kernel or initrd in /boot/firmware"; fi
  mv "$b/$k" "$b/a/vmlinuz" && mv "$b/$r" "$b/a/initrd.img"
  rm -f "$b"/vmlinuz-* "$b"/initrd.img-*
  mv "$b"/*.dtb "$b/a/"
  grep -q 'root=LABEL=jbroot' "$b/cmdline.txt" || die "cmdline.txt does not name root=LABEL=jbroot: $(cat "$b/cmdline.txt")"
  # panic=10: a slot whose kernel cannot start its init restarts, and after a trial the firmware
  # then boots the committed slot.
  sed 's|root=LABEL=jbroot|root=PARTUUID=6a756b65-02 rauc.slot=A panic=10|' "$b/cmdline.txt" > "$b/a/cmdline.txt"
  rm -f "$b/cmdline.txt"
  sed -i -e "s|^kernel=$k\$|kernel=vmlinuz|" -e "s|^initramfs $r\$|initramfs initrd.img followkernel|" "$b/config.txt"
  { grep -qx 'kernel=vmlinuz' "$b/config.txt" && grep -qx 'initramfs initrd.img followkernel' "$b/config.txt"; } \
    || die "config.txt from raspi-firmware not as expected: $(grep -E '^(kernel|initramfs)' "$b/config.txt" | paste -sd' ')"
  {
    echo
    echo "# A/B root slots (docs/IMAGE.md, \"A/B updates with RAUC\"): the kernel, initrd, device trees and"
    echo "# cmdline.txt come from this folder, the committed slot's. An update writes tryboot.txt, this"
    echo "# file with the other slot's folder, which the firmware reads once after reboot '0 tryboot'."
    echo "os_prefix=a/"
  } >> "$b/config.txt"
}

# img_id ROOT USER: USER's uid:gid in ROOT.
img_id() { awk -F: -v u="$2" '$1 == u {print $3 ":" $4}' "$1/etc/passwd"; }

# img_assemble STAGE IMAGE MUSIC: the partitions made as files, then put together; the root's file
# is kept as $w/root.ext4 for the update bundle.
img_assemble() {
  local s=$1 img=$2 music=$3 p="$1.parts" root_mb music_mb total owner
  rm -rf "$p" && mkdir -p "$p"
  truncate -s "${BOOT_MB}M" "$p/1"
  mkfs.vfat -F 32 -n JUKEBOX "$p/1" >/dev/null
  mcopy -s -i "$p/1" "$s.boot"/* ::
  # The root: its content and a quarter more (apt while remounted, a second kernel), in whole MiB,
  # in slot A's partition of SLOT_MB (the rest of the slot unused: an update's root may be bigger).
  root_mb=$(( $(du -sm --apparent-size "$s" | cut -f1) * 5 / 4 + 64 ))
  [ "$root_mb" -le "$SLOT_MB" ] || die "the root ($root_mb MiB with its free quarter) no longer fits a slot of $SLOT_MB MiB"
  mkfs.ext4 -q -F -L jbroot -m 0 -d "$s" "$p/2" "${root_mb}M"
  # The data partition: journaled (ordered), inode tables and journal written now rather than by
  # the kernel in the background at the first boot.
  mkfs.ext4 -q -F -L jbdata -m 0 -E lazy_itable_init=0,lazy_journal_init=0 -d "$s.data" "$p/3" "${DATA_MB}M"
  music_mb=$MUSIC_MB
  if [ -n "$music" ]; then music_mb=$(( $(du -sm --apparent-size "$music" | cut -f1) * 11 / 10 + MUSIC_MB )); fi
  owner=$(img_id "$s" jukebox)
  local -a content=()
  [ -z "$music" ] || content=(-d "$music")
  # The music partition's top folder belongs to the player's user (the web app's uploads).
  mkfs.ext4 -q -F -L jbmusic -m 0 -E "lazy_itable_init=0,lazy_journal_init=0,root_owner=$owner" \
    "${content[@]}" "$p/6" "${music_mb}M"
  # MBR holds four primary partitions: the second slot and the music partition are logical ones in
  # an extended partition (4), the music partition last so that it can grow to the card's end. Each
  # logical partition is 1 MiB after the one before (its extended boot record).
  local b1=$FIRST_MB a=$((FIRST_MB + BOOT_MB)) d e sb m
  d=$((a + SLOT_MB)) e=$((a + SLOT_MB + DATA_MB))
  sb=$((e + 1)) m=$((e + 1 + SLOT_MB + 1))
  total=$((m + music_mb))
  rm -f "$img" && truncate -s "${total}M" "$img"
  {
    echo "label: dos"
    echo "label-id: $DISK_ID"
    echo "unit: sectors"
    echo "start=$((b1 * 2048)), size=$((BOOT_MB * 2048)), type=c, bootable"
    echo "start=$((a * 2048)), size=$((SLOT_MB * 2048)), type=83"
    echo "start=$((d * 2048)), size=$((DATA_MB * 2048)), type=83"
    echo "start=$((e * 2048)), size=$(((total - e) * 2048)), type=5"
    echo "start=$((sb * 2048)), size=$((SLOT_MB * 2048)), type=83"
    echo "start=$((m * 2048)), size=$((music_mb * 2048)), type=83"
  } | sfdisk -q "$img" >/dev/null
  dd if="$p/1" of="$img" bs=1M seek="$b1" conv=notrunc,sparse status=none
  dd if="$p/2" of="$img" bs=1M seek="$a" conv=notrunc,sparse status=none
  dd if="$p/3" of="$img" bs=1M seek="$d" conv=notrunc,sparse status=none
  dd if="$p/6" of="$img" bs=1M seek="$m" conv=notrunc,sparse status=none
  mv "$p/2" "$w/root.ext4"
  rm -rf "$p"
  say "partitions (MiB): boot $BOOT_MB, root slot A $SLOT_MB (its file system $root_mb), data $DATA_MB, root slot B $SLOT_MB (empty), music $music_mb; image $total MiB"
}

main() {
  local deb="" out="" music="" xz=1 version="" key="" cert="" keyring t0=$SECONDS w img
  while [ $# -gt 0 ]; do
    case "$1" in
      --deb) [ $# -ge 2 ] || die "--deb needs a file"; deb=$2; shift ;;
      --out) [ $# -ge 2 ] || die "--out needs a folder"; out=$2; shift ;;
      --music) [ $# -ge 2 ] || die "--music needs a folder"; music=$(realpath "$2"); shift ;;
      --no-xz) xz=0 ;;
      --version) [ $# -ge 2 ] || die "--version needs a value"; version=$2; shift ;;
      --key) [ $# -ge 2 ] || die "--key needs a file"; key=$2; shift ;;
      --cert) [ $# -ge 2 ] || die "--cert needs a file"; cert=$2; shift ;;
      -h|--help) sed -n '3,38p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
      *) die "unknown argument: $1 (try --help)" ;;
    esac
    shift
  done
  [ "$(id -u)" -eq 0 ] || die "run as root (mmdebstrap, chroot for the Pi firmware's hook, file owners)"
  # shellcheck source=board/private-dir.sh
  . "$IMG_REPO/board/private-dir.sh"
  private_dir "$A64_CACHE" IMAGE_CACHE || exit 1
  [ -z "$music" ] || [ -d "$music" ] || die "--music $music: not a folder"
  if [ -z "$deb" ]; then
    deb=$(find "$A64_CROSS/debs" -maxdepth 1 -name 'jukebox_*_arm64.deb' -printf '%T@ %p\n' 2>/dev/null | sort -n | tail -n 1 | cut -d' ' -f2-)
    if [ -z "$deb" ]; then
      bash "$IMG_REPO/board/package.sh" --arch arm64
      deb=$(find "$A64_CROSS/debs" -maxdepth 1 -name 'jukebox_*_arm64.deb' -printf '%T@ %p\n' | sort -n | tail -n 1 | cut -d' ' -f2-)
    fi
  fi
  [ -f "$deb" ] || die "no arm64 .deb: $deb"
  deb=$(realpath "$deb")
  [ "$(dpkg-deb -f "$deb" Architecture)" = arm64 ] || die "$deb is not an arm64 package"
  [ -n "$version" ] || version=$(dpkg-deb -f "$deb" Version)
  out=${out:-$A64_CACHE/out}
  mkdir -p "$out"
  hil_apt_install "$A64_CACHE/apt.log" dosfstools mtools fdisk xz-utils rauc squashfs-tools openssl
  # The update bundles' signer: the image's keyring is its certificate.
  if [ -z "$key$cert" ]; then keyring=$(IMAGE_CACHE=$A64_CACHE bash "$IMG_REPO/board/bundle.sh" --keyring-of)
  elif [ -f "$cert" ] && [ -n "$key" ]; then keyring=$(realpath "$cert")
  else die "--key and --cert go together (the certificate a file)"; fi
  a64_prepare_packages
  a64_prepare_apt
  say "package ${deb##*/}; root: mmdebstrap trixie arm64 (cached when unchanged)"
  img_rootfs "$deb"
  img_tryboot
  w="$A64_CACHE/work"
  mkdir -p "$w"
  img_stage "$w/stage"
  img="$out/jukebox-$version-arm64.img"
  img_assemble "$w/stage" "$img" "$music"
  rm -rf "$w/stage" "$w/stage.boot" "$w/stage.data"
  local -a sign=()
  [ -z "$key" ] || sign=(--key "$key" --cert "$cert")
  IMAGE_CACHE=$A64_CACHE bash "$IMG_REPO/board/bundle.sh" --root "$w/root.ext4" --version "$version" \
    --out "$out/jukebox-$version-arm64.raucb" "${sign[@]}"
  rm -f "$w/root.ext4"
  if [ "$xz" -eq 1 ]; then
    xz -T0 -6 -f "$img"
    img="$img.xz"
  fi
  say "made $img ($(du -h --apparent-size "$img" | cut -f1)) in $((SECONDS - t0)) s"
}
main "$@"
