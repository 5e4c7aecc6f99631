#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# prepare.sh - builds (or reuses) everything the HIL guests need, in $HIL_CACHE
# (default /var/tmp/jukebox-hil). Sourced by board/hil/run.sh; every step checks a stamp that
# names its inputs and does nothing when that stamp is still valid.
#
#   apt packages      qemu, busybox-static, mmdebstrap, kernel headers and source, sox, alsa-utils
#   kernel            Debian's linux-image-<abi>-amd64 (ABI resolved from linux-image-amd64 now),
#                     unpacked with dpkg -x; the uncompressed ELF vmlinux (PVH entry) cut out of it
#   modules           gpio-sim + irq_sim from the same version's linux-source, i2c-hil (ours)
#   initramfs         busybox, the modules and board/hil/guest/init
#   tools             pcmcmp, pcmsnr (audio comparison) and the other C tools, built with the host's cc
#   systemd image     mmdebstrap bookworm + systemd + the runtime libraries, as an ext4 image
set -euo pipefail

hil_log() { printf 'hil: %s\n' "$*" >&2; }

# Sets HIL_ABI (6.1.0-57-amd64) and HIL_KVER (6.1.192-3): the kernel Debian ships today.
hil_resolve_kernel() {
  local dep
  dep=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
  if [ -z "$dep" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 update -q >/dev/null
    dep=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
  fi
  [ -n "$dep" ] || { hil_log "cannot resolve the kernel ABI from linux-image-amd64"; return 1; }
  HIL_ABI=${dep#linux-image-}
  HIL_KVER=$(apt-cache show "$dep" | awk '/^Version:/ {print $2; exit}')
  HIL_KMAJOR=$(echo "$HIL_ABI" | cut -d. -f1-2)
}

# Stamp helpers: a step is valid when its stamp file holds exactly the same key.
hil_valid() { [ -f "$HIL_CACHE/stamps/$1" ] && [ "$(cat "$HIL_CACHE/stamps/$1")" = "$2" ]; }
hil_stamp() { mkdir -p "$HIL_CACHE/stamps"; printf '%s' "$2" > "$HIL_CACHE/stamps/$1"; }

hil_prepare_packages() {
  hil_apt_install "$HIL_CACHE/apt.log" qemu-system-x86 busybox-static mmdebstrap e2fsprogs xz-utils cpio kmod gcc make mtools \
    libc6-dev sox alsa-utils "linux-headers-$HIL_ABI=$HIL_KVER" "linux-source-$HIL_KMAJOR=$HIL_KVER"
}

# The kernel image unpacked (not installed) and its ELF vmlinux.
hil_prepare_kernel() {
  local key="$HIL_ABI $HIL_KVER" k="$HIL_CACHE/kernel"
  hil_valid kernel "$key" && return 0
  hil_log "kernel $HIL_ABI ($HIL_KVER): download and unpack"
  rm -rf "$k" && mkdir -p "$k"
  (cd "$k" && apt-get download -q "linux-image-$HIL_ABI=$HIL_KVER" >/dev/null 2>&1)
  dpkg -x "$k"/linux-image-*.deb "$k/root"
  rm -f "$k"/linux-image-*.deb
  depmod -b "$k/root" "$HIL_ABI"
  # The bzImage's payload is one xz stream; the ELF inside carries the PVH note QEMU boots directly
  # (decompressing under TCG costs ~4 s a boot).
  local bz="$k/root/boot/vmlinuz-$HIL_ABI" off
  off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$bz" | head -n 1 | cut -d: -f1)
  tail -c +"$((off + 1))" "$bz" | xz -dc --single-stream > "$k/vmlinux" 2>/dev/null || true
  head -c 4 "$k/vmlinux" | grep -q 'ELF' || { hil_log "no ELF vmlinux in $bz"; return 1; }
  hil_stamp kernel "$key"
}

# gpio-sim and irq_sim from Debian's source of the same version, plus i2c-hil.
hil_prepare_modules() {
  local src="$HIL_DIR/modules" m="$HIL_CACHE/modules"
  local key
  key="$HIL_ABI $HIL_KVER $(cat "$src"/* | sha256sum | cut -c1-16)"
  hil_valid modules "$key" && return 0
  hil_log "building gpio-sim, irq_sim, i2c-hil against linux-headers-$HIL_ABI"
  rm -rf "$m" && mkdir -p "$m"
  cp "$src"/* "$m/"
  local top="linux-source-$HIL_KMAJOR"
  tar -xJf "/usr/src/linux-source-$HIL_KMAJOR.tar.xz" -C "$m" --strip-components=3 \
    "$top/drivers/gpio/gpio-sim.c" "$top/drivers/gpio/gpiolib.h" "$top/kernel/irq/irq_sim.c"
  # Built-in code made a module: it needs a licence, and irq_to_desc is not exported
  # (generic_handle_irq looks the descriptor up itself and is).
  sed -i 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' "$m/irq_sim.c"
  grep -q 'generic_handle_irq(irqnum)' "$m/irq_sim.c" || { hil_log "irq_sim.c changed upstream: patch did not apply"; return 1; }
  printf '\n#include <linux/module.h>\nMODULE_LICENSE("GPL");\n' >> "$m/irq_sim.c"
  make -s -C "/usr/src/linux-headers-$HIL_ABI" M="$m" modules >"$m/build.log" 2>&1 \
    || { tail -n 30 "$m/build.log" >&2; return 1; }
  hil_stamp modules "$key"
}

# The modules each guest loads from the initramfs (dependencies resolved with the image's
# modules.dep): the test guest's devices, and what the systemd guest needs to mount its disk.
HIL_KMODS="virtio_pci 9pnet_virtio 9p snd-aloop snd-dummy i2c-dev configfs"
HIL_KMODS_SYSTEMD="virtio_pci virtio_blk crc32c_generic ext4"

# Copies MODULES and their dependencies into the initramfs tree $1, load order into $1/lib/modules/$2.
hil_module_list() {
  local r=$1 out=$2 k="$HIL_CACHE/kernel/root" mod f seen=""
  shift 2
  : > "$r/lib/modules/$out"
  for mod in "$@"; do
    for f in $(modprobe -d "$k" -S "$HIL_ABI" --show-depends "$mod" | awk '$1 == "insmod" {print $2}'); do
      case " $seen " in *" $f "*) continue ;; esac
      seen="$seen $f"
      case "$f" in
        *.xz) xz -dc "$f" > "$r/lib/modules/$(basename "$f" .xz)"; f=${f%.xz} ;;
        *) cp "$f" "$r/lib/modules/" ;;
      esac
      basename "$f" >> "$r/lib/modules/$out"
    done
  done
}

hil_prepare_initramfs() {
  local key
  key="$HIL_ABI $HIL_KVER $(cat "$HIL_DIR/guest/init" "$HIL_CACHE/stamps/modules" | sha256sum | cut -c1-16) $HIL_KMODS $HIL_KMODS_SYSTEMD"
  hil_valid initramfs "$key" && return 0
  hil_log "initramfs: busybox + modules"
  local r="$HIL_CACHE/initramfs.d" f
  rm -rf "$r" && mkdir -p "$r"/{bin,dev,proc,sys,host,lib/modules}
  cp /bin/busybox "$r/bin/busybox"
  ln -s busybox "$r/bin/sh"
  # shellcheck disable=SC2086
  hil_module_list "$r" load $HIL_KMODS
  # shellcheck disable=SC2086
  hil_module_list "$r" load-systemd $HIL_KMODS_SYSTEMD
  for f in irq_sim gpio-sim i2c-hil; do cp "$HIL_CACHE/modules/$f.ko" "$r/lib/modules/"; done
  cp "$HIL_DIR/guest/init" "$r/init"
  chmod 755 "$r/init"
  (cd "$r" && find . | cpio -o -H newc --quiet) > "$HIL_CACHE/initramfs.cpio"
  hil_stamp initramfs "$key"
}

# The C tools (board/hil/tools/*.c, programs, and the header they share) and LD_PRELOAD shims
# (board/hil/tools/lib/*.c, shared objects), built with the host's cc.
hil_prepare_tools() {
  local key
  key=$(cat "$HIL_DIR"/tools/*.c "$HIL_DIR"/tools/*.h "$HIL_DIR"/tools/lib/*.c | sha256sum | cut -c1-16)
  hil_valid tools "$key" && return 0
  mkdir -p "$HIL_CACHE/tools"
  local c
  for c in "$HIL_DIR"/tools/*.c; do cc -O2 -Wall -o "$HIL_CACHE/tools/$(basename "$c" .c)" "$c" -lm; done
  for c in "$HIL_DIR"/tools/lib/*.c; do cc -O2 -Wall -shared -fPIC -o "$HIL_CACHE/tools/$(basename "$c" .c).so" "$c" -ldl; done
  hil_stamp tools "$key"
}

# Test audio, made on the host (sox under TCG takes minutes):
#   a.flac (1.5 s) + b.wav (1 s, then 0.5 s of silence: snd-aloop may blank the last 4 ms tick of a
#   stream) = src.raw: noise never silent across the boundary, so any gap, shift or change shows;
#   music/Track N.wav (60 s tones), chime.wav (3 s), chime-short.wav (1 s), www/station.flac (Track 3
#   as FLAC: the station deb-radio serves in the guest).
HIL_FIXTURES_VERSION=2
hil_prepare_fixtures() {
  local f="$HIL_CACHE/fixtures" raw="-t raw -r 44100 -e signed -b 16 -c 2" n
  hil_valid fixtures "$HIL_FIXTURES_VERSION $(sha256sum < "$HIL_CACHE/tools/pcmcmp" | cut -c1-16)" && return 0
  rm -rf "$f" && mkdir -p "$f/music" "$f/www"
  "$HIL_CACHE/tools/pcmcmp" gen "$f/a.raw" 66150 1
  "$HIL_CACHE/tools/pcmcmp" gen "$f/b.raw" 44100 2 22050
  cat "$f/a.raw" "$f/b.raw" > "$f/src.raw"
  # shellcheck disable=SC2086
  sox -q $raw "$f/a.raw" "$f/a.flac" && sox -q $raw "$f/b.raw" "$f/b.wav"
  for n in 1 2 3; do
    sox -q -n -r 44100 -c 2 -b 16 "$f/music/Track $n.wav" synth 60 sine $((300 + 100 * n)) vol 0.3
  done
  sox -q "$f/music/Track 3.wav" "$f/www/station.flac"
  sox -q -n -r 44100 -c 2 -b 16 "$f/chime.wav" synth 3 sine 880 vol 0.3
  sox -q -n -r 44100 -c 2 -b 16 "$f/chime-short.wav" synth 1 sine 990 vol 0.3
  hil_stamp fixtures "$HIL_FIXTURES_VERSION $(sha256sum < "$HIL_CACHE/tools/pcmcmp" | cut -c1-16)"
}
