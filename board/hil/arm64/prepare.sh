# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# prepare.sh (sourced by board/hil/arm64.sh): everything the arm64 guest needs, in $A64_CACHE
# (default /var/tmp/jukebox-hil-arm64). Every step keeps a stamp naming its inputs and is redone
# only when they change.
#
#   packages   qemu-system-arm, qemu-user-static + binfmt (mmdebstrap runs arm64 maintainer
#              scripts through it), mmdebstrap, arch-test, e2fsprogs, cpio, sox, gcc
#   apt        a private apt configuration for Debian 13 arm64 (the host stays as it is): the
#              kernel and busybox are downloaded with it, never installed
#   kernel     linux-image-<abi>-arm64 (ABI from linux-image-arm64 now) unpacked with dpkg -x;
#              its boot/vmlinuz is an uncompressed arm64 Image that QEMU boots directly
#   initramfs  busybox-static (arm64) + virtio_blk and ext4 (modules in Debian's arm64 kernel) +
#              board/hil/arm64/init: mounts /dev/vda and switch_roots to systemd
#   tools      pcmcmp and hilserial for the host (cc); pcmcmp and hilctl for the guest,
#              cross-compiled with the trixie chroot's clang against the arm64 sysroot
#   fixtures   the test noise (pcmcmp gen) as a.flac + b.wav, and a 60 s tone
#   gpio-sim   gpio-sim and irq_sim (Debian's arm64 kernel has neither) from trixie's linux-source
#              of the same version, cross-built out of tree against linux-headers-<abi>-arm64 in a
#              small amd64 trixie build root (gcc-aarch64-linux-gnu 14, the kernel's own compiler,
#              and the x86-64 linux-kbuild tools): a64_kbuild, which board/image.sh and
#              board/tryboot-test.sh use for the image's module jukebox_tryboot
#   rootfs     mmdebstrap --arch=arm64 trixie minbase + systemd, udev, alsa-utils and the .deb's
#              Depends (so that `apt install ./jukebox_…_arm64.deb` in the guest needs no network)
#   image      the rootfs + snd-aloop and 9p modules, test units, as an ext4 image (mkfs.ext4 -d)

a64_log() { printf 'hil-arm64: %s\n' "$*" >&2; }
a64_valid() { [ -f "$A64_CACHE/stamps/$1" ] && [ "$(cat "$A64_CACHE/stamps/$1")" = "$2" ]; }
a64_stamp() { mkdir -p "$A64_CACHE/stamps"; printf '%s' "$2" > "$A64_CACHE/stamps/$1"; }

a64_prepare_packages() {
  hil_apt_install "$A64_CACHE/apt.log" qemu-system-arm qemu-user-static binfmt-support arch-test mmdebstrap e2fsprogs \
    xz-utils cpio kmod gcc libc6-dev sox
  # mmdebstrap runs the arm64 maintainer scripts through binfmt_misc (not mounted on every host).
  if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
    mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
  fi
  [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || { a64_log "cannot register qemu-aarch64 with binfmt_misc"; return 1; }
}

# apt-get/apt-cache on Debian 13 arm64 through a private configuration (index refreshed daily).
a64_apt() { APT_CONFIG="$A64_CACHE/apt/apt.conf" "$@"; }
a64_prepare_apt() {
  local a="$A64_CACHE/apt"
  mkdir -p "$a"/{state/lists/partial,cache/archives/partial,sources.list.d,preferences.d}
  touch "$a/state/status"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $A64_MIRROR trixie ${A64_COMPONENTS:-main}" > "$a/sources.list"
  cat > "$a/apt.conf" <<EOF
APT::Architecture "arm64";
APT::Architectures { "arm64"; };
Dir::State "$a/state";
Dir::State::status "$a/state/status";
Dir::Cache "$a/cache";
Dir::Etc::SourceList "$a/sources.list";
Dir::Etc::SourceParts "$a/sources.list.d";
Dir::Etc::PreferencesParts "$a/preferences.d";
Acquire::Languages "none";
APT::Sandbox::User "root";
EOF
  if [ -z "$(find "$a/stamp-update" -mmin -1440 2>/dev/null)" ]; then
    a64_apt apt-get -q update >"$a/update.log" 2>&1 || { tail -n 10 "$a/update.log" >&2; return 1; }
    touch "$a/stamp-update"
  fi
}

# Sets A64_ABI (6.12.117+deb13-arm64) and A64_KVER (6.12.117-1): the kernel Debian 13 ships today.
a64_resolve_kernel() {
  local dep
  dep=$(a64_apt apt-cache depends linux-image-arm64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
  [ -n "$dep" ] || { a64_log "cannot resolve the kernel ABI from linux-image-arm64 (trixie, arm64)"; return 1; }
  A64_ABI=${dep#linux-image-}
  A64_KVER=$(a64_apt apt-cache show "$dep" | awk '/^Version:/ {print $2; exit}')
}

# The kernel and busybox-static unpacked (not installed).
a64_prepare_kernel() {
  local key="$A64_ABI $A64_KVER" k="$A64_CACHE/kernel"
  a64_valid kernel "$key" && return 0
  a64_log "kernel $A64_ABI ($A64_KVER) and busybox-static (arm64): download and unpack"
  rm -rf "$k" && mkdir -p "$k"
  (cd "$k" && a64_apt apt-get download -q "linux-image-$A64_ABI=$A64_KVER" busybox-static >"$k/download.log" 2>&1) \
    || { tail -n 10 "$k/download.log" >&2; return 1; }
  dpkg -x "$k"/linux-image-*.deb "$k/root"
  dpkg -x "$k"/busybox-static_*.deb "$k/busybox"
  rm -f "$k"/*.deb
  # Merged /usr: the modules are in usr/lib/modules; modprobe -d wants ROOT/lib/modules.
  [ -e "$k/root/lib" ] || ln -s usr/lib "$k/root/lib"
  depmod -b "$k/root" "$A64_ABI"
  file -b "$k/root/boot/vmlinuz-$A64_ABI" | grep -q 'ARM64 boot executable Image' \
    || { a64_log "vmlinuz-$A64_ABI is not an uncompressed arm64 Image: $(file -b "$k/root/boot/vmlinuz-$A64_ABI")"; return 1; }
  a64_stamp kernel "$key"
}

# a64_modules MODULE...: the .ko files (with dependencies, load order) the unpacked kernel needs.
a64_modules() {
  local m
  for m in "$@"; do
    modprobe -d "$A64_CACHE/kernel/root" -S "$A64_ABI" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
  done | awk '!seen[$0]++'
}

A64_INITRAMFS_MODULES="virtio_blk ext4"
a64_prepare_initramfs() {
  local key
  key="$A64_ABI $A64_KVER $(sha256sum < "$A64_DIR/init" | cut -c1-16) $A64_INITRAMFS_MODULES"
  a64_valid initramfs "$key" && return 0
  a64_log "initramfs: busybox + $A64_INITRAMFS_MODULES"
  local r="$A64_CACHE/initramfs.d" f
  rm -rf "$r" && mkdir -p "$r"/{bin,dev,proc,sys,newroot,modules}
  cp "$A64_CACHE/kernel/busybox/usr/bin/busybox" "$r/bin/busybox"
  ln -s busybox "$r/bin/sh"
  # busybox insmod takes plain .ko files: Debian's are xz-compressed.
  # shellcheck disable=SC2086
  for f in $(a64_modules $A64_INITRAMFS_MODULES); do
    case "$f" in
      *.xz) xz -dc "$f" > "$r/modules/$(basename "$f" .xz)"; basename "$f" .xz ;;
      *) cp "$f" "$r/modules/"; basename "$f" ;;
    esac
  done > "$r/modules/order"
  install -m 0755 "$A64_DIR/init" "$r/init"
  (cd "$r" && find . | cpio -o -H newc --quiet) > "$A64_CACHE/initramfs.cpio"
  a64_stamp initramfs "$key"
}

# pcmcmp and hilserial for the host; pcmcmp and hilctl for the guest (arm64).
a64_prepare_tools() {
  local src="$A64_DIR/../tools" t="$A64_CACHE/tools" key c
  key="$(cat "$src"/pcmcmp.c "$src"/pcmfile.h "$src"/hilserial.c "$src"/hilctl.c | sha256sum | cut -c1-16) $(sha256sum < "$A64_CROSS/arm64-sysroot/.jukebox-sysroot-done" 2>/dev/null | cut -c1-8)"
  a64_valid tools "$key" && return 0
  rm -rf "$t" && mkdir -p "$t/arm64"
  for c in pcmcmp hilserial; do cc -O2 -Wall -o "$t/$c" "$src/$c.c"; done
  [ -e "$A64_CROSS/arm64-sysroot/.jukebox-sysroot-done" ] \
    || { a64_log "no arm64 sysroot in $A64_CROSS/arm64-sysroot: run board/cross-build.sh --arch arm64"; return 1; }
  # The same compiler and sysroot as board/emulate-arm64.sh's reference decoder.
  for c in pcmcmp hilctl; do
    bash "$A64_REPO/board/trixie-chroot.sh" --bind "$A64_CROSS" --bind "$A64_CACHE" /usr/libexec/swift/bin/clang \
      --target=aarch64-linux-gnu --sysroot="$A64_CROSS/arm64-sysroot" -fuse-ld=lld -O2 -Wall -Werror \
      "board/hil/tools/$c.c" -o "$t/arm64/$c" >"$t/cc.log" 2>&1 || { cat "$t/cc.log" >&2; return 1; }
  done
  a64_stamp tools "$key"
}

# a.flac (1.5 s) + b.wav (1 s, then 0.5 s of silence: snd-aloop may blank the last 4 ms tick of a
# stream) = src.raw, full-scale noise never silent across the boundary; a 60 s tone to cut in.
A64_FIXTURES_VERSION=1
a64_prepare_fixtures() {
  local f="$A64_CACHE/fixtures" raw="-t raw -r 44100 -e signed -b 16 -c 2" key
  key="$A64_FIXTURES_VERSION $(sha256sum < "$A64_CACHE/tools/pcmcmp" | cut -c1-16)"
  a64_valid fixtures "$key" && return 0
  rm -rf "$f" && mkdir -p "$f/music"
  "$A64_CACHE/tools/pcmcmp" gen "$f/a.raw" 66150 1
  "$A64_CACHE/tools/pcmcmp" gen "$f/b.raw" 44100 2 22050
  cat "$f/a.raw" "$f/b.raw" > "$f/src.raw"
  # shellcheck disable=SC2086
  sox -q $raw "$f/a.raw" "$f/music/01 noise.flac" && sox -q $raw "$f/b.raw" "$f/music/02 noise.wav"
  sox -q -n -r 44100 -c 2 -b 16 "$f/music/03 tone.wav" synth 60 sine 440 vol 0.3
  rm -f "$f/a.raw" "$f/b.raw"
  a64_stamp fixtures "$key"
}

# a64_kbuild_root: an amd64 trixie build root for out-of-tree arm64 modules, $A64_CACHE/gpio/root
# (named for its first user): gcc-aarch64-linux-gnu 14 (the kernel's own compiler), the x86-64
# linux-kbuild tools, and linux-headers-$A64_ABI ($A64_KVER) unpacked in /usr/src. Cross-compiled
# rather than built under qemu-aarch64: seconds instead of minutes, and no compiler in an image.
a64_kbuild_root() {
  local g="$A64_CACHE/gpio" kv=${A64_ABI%-arm64} rkey hkey="$A64_ABI $A64_KVER"
  rkey="mmdebstrap trixie amd64 make,gcc,gcc-aarch64-linux-gnu,linux-kbuild-$kv,xz-utils,libc6-dev,bc"
  if ! a64_valid kbuild-root "$rkey"; then
    a64_log "an amd64 trixie build root with the arm64 cross compiler (kbuild $kv)"
    rm -rf "$g/root"
    mkdir -p "$g"
    mmdebstrap --variant=minbase --include="${rkey#mmdebstrap trixie amd64 }" --dpkgopt=force-unsafe-io \
      --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
      trixie "$g/root" "$A64_MIRROR" >"$g/mmdebstrap.log" 2>&1 || { tail -n 20 "$g/mmdebstrap.log" >&2; return 1; }
    a64_stamp kbuild-root "$rkey"
    rm -f "$A64_CACHE/stamps/kbuild-headers"
  fi
  a64_valid kbuild-headers "$hkey" && [ -d "$g/root/usr/src/linux-headers-$A64_ABI" ] && return 0
  rm -rf "$g/hdebs" && mkdir -p "$g/hdebs"
  (cd "$g/hdebs" && a64_apt apt-get download -q "linux-headers-$A64_ABI=$A64_KVER" \
    "linux-headers-$kv-common=$A64_KVER" >"$g/download.log" 2>&1) || { tail -n 10 "$g/download.log" >&2; return 1; }
  dpkg -x "$g/hdebs/linux-headers-${A64_ABI}_"*.deb "$g/root"
  dpkg -x "$g/hdebs/linux-headers-${kv}-common_"*.deb "$g/root"
  rm -rf "$g/hdebs"
  a64_stamp kbuild-headers "$hkey"
}

# a64_kbuild NAME SRC OUT: the out-of-tree modules of the folder SRC (its Kbuild) built in the
# build root's /build/NAME against linux-headers-$A64_ABI; their .ko files (without debugging
# sections) copied into OUT.
a64_kbuild() {
  local name=$1 src=$2 out=$3 b="$A64_CACHE/gpio/root/build/$1"
  a64_kbuild_root
  rm -rf "$b" && mkdir -p "$b" "$out"
  cp -a "$src/." "$b/"
  chroot "$A64_CACHE/gpio/root" make -C "/usr/src/linux-headers-$A64_ABI" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- \
    M="/build/$name" modules >"$A64_CACHE/gpio/build-$name.log" 2>&1 || { tail -n 30 "$A64_CACHE/gpio/build-$name.log" >&2; return 1; }
  # Without their debugging sections: a tenth of the size.
  chroot "$A64_CACHE/gpio/root" sh -c "aarch64-linux-gnu-strip --strip-debug /build/$name/*.ko"
  cp "$b"/*.ko "$out/"
}

# gpio-sim + irq_sim for the arm64 kernel. irq_sim is built-in code made a module: it needs a
# licence, and irq_to_desc is not exported (generic_handle_irq looks the descriptor up itself);
# the same patch as board/hil/prepare.sh applies to amd64's 6.1.
A64_GPIO_VERSION=1
a64_prepare_gpiosim() {
  local g="$A64_CACHE/gpio" key
  key="$A64_GPIO_VERSION $A64_ABI $A64_KVER"
  a64_valid gpiosim "$key" && return 0
  a64_log "gpio-sim for $A64_ABI: linux-source, headers, an amd64 trixie build root with the arm64 cross compiler"
  local t0=$SECONDS
  rm -rf "$g/debs" "$g/src" && mkdir -p "$g/debs" "$g/src"
  (cd "$g/debs" && a64_apt apt-get download -q "linux-source-$(echo "$A64_ABI" | cut -d. -f1-2)=$A64_KVER" \
    >"$g/download.log" 2>&1) || { tail -n 10 "$g/download.log" >&2; return 1; }
  local top
  top=$(basename "$g/debs"/linux-source-*.deb | cut -d_ -f1)
  dpkg-deb --fsys-tarfile "$g/debs"/linux-source-*.deb | tar -xO "./usr/src/$top.tar.xz" \
    | tar -xJ -C "$g/src" --strip-components=3 "$top/drivers/gpio/gpio-sim.c" "$top/kernel/irq/irq_sim.c"
  rm -rf "$g/debs"
  sed -i 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' "$g/src/irq_sim.c"
  grep -q 'generic_handle_irq(irqnum)' "$g/src/irq_sim.c" || { a64_log "irq_sim.c changed upstream: patch did not apply"; return 1; }
  printf '\n#include <linux/module.h>\nMODULE_LICENSE("GPL");\n' >> "$g/src/irq_sim.c"
  echo 'obj-m += gpio-sim.o irq_sim.o' > "$g/src/Kbuild"
  rm -rf "$g/ko"
  a64_kbuild gpio-sim "$g/src" "$g/ko"
  rm -rf "$g/src"
  a64_log "gpio-sim: $((SECONDS - t0)) s"
  a64_stamp gpiosim "$key"
}

# The package's Depends, as package names (what the image must hold for an offline install).
a64_deb_depends() {
  dpkg-deb -f "$1" Depends | tr ',' '\n' | sed 's/^ *//; s/[ (].*//' | grep . | sort -u | paste -sd, -
}

A64_IMAGE_PACKAGES=systemd,systemd-sysv,udev,kmod,procps,alsa-utils
# The Debian 13 arm64 root. Maintainer scripts run under qemu-aarch64 (binfmt): minutes, cached.
# A caller may set A64_COMPONENTS (default main; board/image.sh adds non-free-firmware for the Pi
# firmware) and A64_ROOTFS_OPTS (more mmdebstrap options, an array); both are part of the stamp.
a64_prepare_rootfs() {
  local deps=$1 key r="$A64_CACHE/rootfs" u
  local -a opts=("${A64_ROOTFS_OPTS[@]}")
  [ -z "${A64_COMPONENTS:-}" ] || opts+=("--components=${A64_COMPONENTS// /,}")
  key="mmdebstrap trixie arm64 minbase $A64_IMAGE_PACKAGES,$deps${opts[*]:+ ${opts[*]}}"
  a64_valid rootfs "$key" && return 0
  a64_log "mmdebstrap --arch=arm64 trixie (maintainer scripts under qemu-user: a few minutes)"
  rm -rf "$r"
  local t0=$SECONDS
  # No fsync per file (a throw-away image); no docs, manuals or translations, and no hardware
  # database sources (udev's postinst compiles them: over a minute under qemu-user; nothing here
  # needs vendor names): less to emulate.
  mmdebstrap --arch=arm64 --variant=minbase --include="$A64_IMAGE_PACKAGES,$deps" "${opts[@]}" \
    --dpkgopt=force-unsafe-io --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/lib/udev/hwdb.d/*' \
    trixie "$r" "$A64_MIRROR" >"$A64_CACHE/mmdebstrap.log" 2>&1 \
    || { tail -n 20 "$A64_CACHE/mmdebstrap.log" >&2; return 1; }
  # First-boot work done once here rather than at every first boot under TCG.
  systemd-machine-id-setup --root="$r" >/dev/null 2>&1 || true
  touch "$r/etc/.updated" "$r/var/.updated"
  for u in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer \
    systemd-timesyncd.service dpkg-db-backup.timer man-db.timer; do
    ln -sf /dev/null "$r/etc/systemd/system/$u"
  done
  a64_log "rootfs: $((SECONDS - t0)) s"
  a64_stamp rootfs "$key"
}

# The kernel modules the image loads (snd-aloop for the sound card, 9p for the shared folder).
A64_IMAGE_MODULES="snd-aloop 9p 9pnet_virtio configfs"
A64_IMAGE_VERSION=4
a64_prepare_image() {
  local deps=$1 key r="$A64_CACHE/rootfs" k="$A64_CACHE/kernel/root" f
  a64_prepare_rootfs "$deps"
  key="$A64_IMAGE_VERSION $A64_ABI $A64_KVER $(cat "$A64_CACHE/stamps/rootfs" "$A64_CACHE/stamps/gpiosim" | sha256sum | cut -c1-16) $A64_IMAGE_MODULES"
  a64_valid image "$key" && return 0
  a64_log "image: modules, test units, ext4"
  rm -rf "$r/usr/lib/modules" && mkdir -p "$r/usr/lib/modules/$A64_ABI"
  cp "$k/usr/lib/modules/$A64_ABI"/modules.{order,builtin,builtin.modinfo} "$r/usr/lib/modules/$A64_ABI/"
  # shellcheck disable=SC2086
  for f in $(a64_modules $A64_IMAGE_MODULES); do
    install -D -m 0644 "$f" "$r/usr/lib/modules/$A64_ABI/${f#*/"$A64_ABI"/}"
  done
  install -D -m 0644 -t "$r/usr/lib/modules/$A64_ABI/extra" "$A64_CACHE/gpio/ko"/{gpio-sim,irq_sim}.ko
  depmod -b "$r" "$A64_ABI"
  printf 'snd-aloop\n' > "$r/etc/modules-load.d/hil.conf"
  printf 'options snd-aloop pcm_substreams=1\n' > "$r/etc/modprobe.d/hil.conf"
  echo jukebox-hil-arm64 > "$r/etc/hostname"
  # The initramfs mounts / read-write; naming /dev/vda in fstab made boot wait for udev to announce
  # it (75 s of a 2-minute boot under TCG).
  echo '# / is mounted by the initramfs (board/hil/arm64/init)' > "$r/etc/fstab"
  # The driver: the run folder over 9p, then its guest.sh. Output on the virtio console (hvc0):
  # the PL011 UART (ttyAMA0, as on a Pi) is jukebox's serial console.
  hil_guest_units "$r" "jukebox HIL arm64 guest driver" /dev/hvc0 \
    'modprobe 9pnet_virtio && modprobe 9p && mkdir -p /mnt/out && mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /mnt/out && exec /bin/bash /mnt/out/guest.sh'
  # No getty on either console: the driver writes to hvc0, jukebox owns ttyAMA0.
  for f in serial-getty@hvc0.service serial-getty@ttyAMA0.service getty@tty1.service getty-static.service; do
    ln -sf /dev/null "$r/etc/systemd/system/$f"
  done
  rm -f "$A64_CACHE/base.img"
  mkfs.ext4 -q -F -L hilroot -d "$r" "$A64_CACHE/base.img" 1G >/dev/null
  a64_stamp image "$key"
}
