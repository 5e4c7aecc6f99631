# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# systemd.sh (sourced by run.sh): the systemd guest. An mmdebstrapped Debian 13 (trixie) with
# systemd, udev and the amd64 .deb's dependencies (the guest is offline), booted from the same
# initramfs (hil.mode=systemd mounts /dev/vda and switch_roots) on Debian 12's kernel (the one the
# out-of-tree modules are built for: a trixie userland runs on it).
# Three boots of one disk (a copy of the cached image, so it persists between them):
#   1 install  install-sh: board/install.sh --binary (the package's binary) as a user would, the
#              service starts; --uninstall. deb-install: `apt install ./jukebox_V_amd64.deb`, the
#              conffile edited for the test box (device hw:Loopback, console /dev/ttyS1), plays,
#              clean poweroff (saves state)
#   2 boot     jukebox starts at boot as user jukebox, READY, autoplays from the state file;
#              the guest checks systemd and the control socket; a keyboard card reader (uinput)
#              and a USB stick (plugged and pulled through QEMU's monitor, at the guest's request:
#              hil_host_requests); the host checks the serial console (QEMU's second UART); then
#              the host kills QEMU mid-track: the power cut
#   3 resume   after the power cut: position within the save interval of where it was cut; then
#              deb-upgrade (`apt install` of the same package rebuilt as V+hil1: restarted, state
#              and conffile kept, plays on) and deb-purge (`apt purge`: all gone)
# The guest side is board/hil/guest/service.sh, read from the checkout over 9p.

HIL_IMAGE_VERSION=7
# The test box's own packages; the .deb's Depends and Recommends are added (hil_deb_packages).
HIL_GUEST_PACKAGES=systemd,systemd-sysv,udev,kmod,procps,alsa-utils,mpc
# bt-loop, opt-in (JUKEBOX_HIL_BLUETOOTH=1): the Bluetooth stack it drives is added to the root
# only then, so without it the image (and its stamps) stay exactly what they were.
HIL_BT_PACKAGES=dbus,bluez,bluez-test-tools,bluez-alsa-utils
HIL_BT_IMAGE_VERSION=4
hil_bluetooth() { [ "${JUKEBOX_HIL_BLUETOOTH:-0}" = 1 ]; }
# airplay, opt-in (asked for by name): Debian's shairport-sync as installed beside jukebox
# (avahi-daemon and dbus, which its unit needs, named so that no Recommends is relied on), and
# python3 for the scenario's RTSP sender. Added to the root only then, as for Bluetooth.
HIL_AIRPLAY_PACKAGES=shairport-sync,avahi-daemon,dbus,python3
HIL_AIRPLAY_IMAGE_VERSION=2
hil_airplay() { [ ${#ONLY[@]} -gt 0 ] && want airplay; }
HIL_SYSTEMD_SCENARIOS="install-sh deb-install deb-web deb-upload deb-mpd deb-radio service-boot rfid-keyboard usb-stick serial-console power-cut upload-power-cut deb-upgrade deb-purge"

# True when any systemd-guest scenario is asked for (they share one disk and run together).
hil_want_systemd() {
  local s
  for s in service $HIL_SYSTEMD_SCENARIOS; do want "$s" && return 0; done
  return 1
}

# Sets HIL_DEB: $JUKEBOX_DEB, else the newest amd64 .deb board/package.sh made, else one made now.
hil_resolve_deb() {
  local debs=${CROSS_CACHE:-/var/tmp/jukebox-cross}/debs
  HIL_DEB=${JUKEBOX_DEB:-$(find "$debs" -maxdepth 1 -name 'jukebox_*_amd64.deb' -printf '%T@ %p\n' 2>/dev/null | sort -n | tail -n 1 | cut -d' ' -f2-)}
  if [ -z "$HIL_DEB" ]; then
    hil_log "no amd64 .deb in $debs: making one (board/package.sh --arch amd64)"
    bash "$REPO/board/package.sh" --arch amd64 >"$HIL_CACHE/package.log" 2>&1 \
      || { tail -n 30 "$HIL_CACHE/package.log" >&2; return 1; }
    HIL_DEB=$(find "$debs" -maxdepth 1 -name 'jukebox_*_amd64.deb' -printf '%T@ %p\n' | sort -n | tail -n 1 | cut -d' ' -f2-)
  fi
  HIL_DEB=$(readlink -f "$HIL_DEB")
  if [ ! -f "$HIL_DEB" ] || [ "$(dpkg-deb -f "$HIL_DEB" Architecture)" != amd64 ]; then
    hil_log "JUKEBOX_DEB=$HIL_DEB is not an amd64 .deb"
    return 1
  fi
  hil_log "package: $(basename "$HIL_DEB")"
}

# The packages the .deb names in Depends and Recommends (first of alternatives, no versions), so
# `apt install ./….deb` finds everything installed, as on a box that is online.
hil_deb_packages() {
  { dpkg-deb -f "$HIL_DEB" Depends; dpkg-deb -f "$HIL_DEB" Recommends; } | tr ',' '\n' \
    | sed 's/|.*//; s/(.*//; s/:any//; s/[[:space:]]//g' | grep . | paste -sd, -
}

# The Debian root (mmdebstrap: ~30 s here against ~3 min for debootstrap; cached on its own).
hil_prepare_rootfs() {
  local pkgs key r="$HIL_CACHE/rootfs"
  local extra=""
  hil_bluetooth && extra=",$HIL_BT_PACKAGES"
  hil_airplay && extra="$extra,$HIL_AIRPLAY_PACKAGES"
  pkgs=$(printf '%s%s,%s\n' "$HIL_GUEST_PACKAGES" "$extra" "$(hil_deb_packages)" | tr ',' '\n' | sort -u | paste -sd, -)
  key="mmdebstrap trixie minbase $pkgs"
  hil_valid rootfs "$key" && return 0
  hil_log "mmdebstrap trixie (systemd guest): $pkgs"
  rm -rf "$r"
  mmdebstrap --variant=minbase --include="$pkgs" trixie "$r" \
    http://deb.debian.org/debian >"$HIL_CACHE/mmdebstrap.log" 2>&1 \
    || { tail -n 20 "$HIL_CACHE/mmdebstrap.log" >&2; return 1; }
  # First-boot work done once here instead of at every run's first boot (~30 s under TCG).
  systemd-machine-id-setup --root="$r" >/dev/null 2>&1
  chroot "$r" systemd-hwdb update
  chroot "$r" ldconfig
  chroot "$r" journalctl --update-catalog 2>/dev/null || true
  touch "$r/etc/.updated" "$r/var/.updated"
  local u
  for u in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer \
    systemd-timesyncd.service dpkg-db-backup.timer; do
    [ -e "$r/usr/lib/systemd/system/$u" ] && ln -sf /dev/null "$r/etc/systemd/system/$u"
  done
  hil_stamp rootfs "$key"
}

# The ext4 image: the root, the kernel's modules and ours, the test units. jukebox itself is
# installed in the guest (install.sh, then the .deb), never here.
hil_prepare_image() {
  hil_prepare_rootfs
  local key
  key="$HIL_IMAGE_VERSION $HIL_ABI $HIL_KVER $(cat "$HIL_CACHE/stamps/modules" "$HIL_CACHE/stamps/rootfs" | sha256sum | cut -c1-16)"
  # Only an image with bt-loop's stack names its own version: the one without stays valid.
  hil_bluetooth && key="$key bluetooth $HIL_BT_IMAGE_VERSION"
  hil_airplay && key="$key airplay $HIL_AIRPLAY_IMAGE_VERSION"
  hil_valid image "$key" && return 0
  hil_log "systemd image: modules, units"
  local r="$HIL_CACHE/rootfs" k="$HIL_CACHE/kernel/root" m f
  rm -rf "$r/lib/modules" && mkdir -p "$r/lib/modules/$HIL_ABI/extra"
  cp "$k/lib/modules/$HIL_ABI"/modules.{order,builtin,builtin.modinfo} "$r/lib/modules/$HIL_ABI/"
  # uinput and evdev: the card reader; xhci, usb-storage, sd_mod, vfat and its code pages: the
  # stick; autofs4: systemd-mount --automount; hci_vhci (bt-loop): bluetooth, rfkill, crc16, ….
  local bt=""
  hil_bluetooth && bt=hci_vhci
  # airplay: a network card (QEMU's virtio-net, never connected to anything): shairport-sync
  # makes its device ID from a MAC address, and waits for one, then warns, on a box without.
  hil_airplay && bt="$bt virtio_net"
  for m in $bt snd-aloop snd-dummy i2c-dev 9p 9pnet_virtio configfs virtio_blk ext4 virtio_pci virtio_console \
    uinput evdev xhci-pci usb-storage sd_mod vfat nls_cp437 nls_ascii nls_utf8 autofs4; do
    for f in $(modprobe -d "$k" -S "$HIL_ABI" --show-depends "$m" | awk '$1 == "insmod" {print $2}'); do
      mkdir -p "$r/$(dirname "${f#"$k"}")"
      cp "$f" "$r/${f#"$k"}"
    done
  done
  cp "$HIL_CACHE/modules"/{irq_sim,gpio-sim,i2c-hil}.ko "$r/lib/modules/$HIL_ABI/extra/"
  # bt-loop: all of the Bluetooth stack and the kernel's crypto modules, which the kernel asks for
  # by alias at run time (--show-depends cannot name them). With hci_vhci's dependencies only,
  # btvirt's controllers never came up here (3 tries in each of two boots, each time
  # `hci0: Opcode 0x0c03 failed: -110`); with these, at the first try.
  if hil_bluetooth; then
    for f in net/bluetooth drivers/bluetooth crypto arch/x86/crypto; do
      mkdir -p "$r/lib/modules/$HIL_ABI/kernel/$(dirname "$f")"
      cp -r "$k/lib/modules/$HIL_ABI/kernel/$f" "$r/lib/modules/$HIL_ABI/kernel/$(dirname "$f")/"
    done
  fi
  depmod -b "$r" "$HIL_ABI"
  printf 'snd-aloop\nsnd-dummy\ni2c-dev\ngpio-sim\ni2c-hil\n' > "$r/etc/modules-load.d/hil.conf"
  printf 'options snd-aloop pcm_substreams=1\noptions snd-dummy pcm_substreams=1\n' > "$r/etc/modprobe.d/hil.conf"
  echo jukebox-hil > "$r/etc/hostname"
  echo '/dev/vda / ext4 rw,errors=remount-ro 0 1' > "$r/etc/fstab"
  # The guest's test driver: mounts the checkout (ro) and the run folder (rw), runs service.sh.
  # shellcheck disable=SC2016  # expanded by the guest's shell
  hil_guest_units "$r" "jukebox HIL guest driver" /dev/ttyS0 \
    'modprobe 9pnet_virtio; mkdir -p /mnt/repo /mnt/out; mount -t 9p -o trans=virtio,version=9p2000.L,ro repo /mnt/repo && mount -t 9p -o trans=virtio,version=9p2000.L out /mnt/out && exec /bin/bash "$(cat /mnt/out/service-script)"'
  # Generators this box has no use for (no GPT auto-mounts, TPM, SSH, SysV scripts, hibernation,
  # gettys): each one is a process every daemon-reload starts, ~1 s apiece under TCG, and
  # install.sh and the package's scripts reload 6 times (14 s a reload with all 11 here).
  mkdir -p "$r/etc/systemd/system-generators"
  for u in debug getty gpt-auto hibernate-resume rc-local run ssh system-update sysv tpm2; do
    ln -sf /dev/null "$r/etc/systemd/system-generators/systemd-$u-generator"
  done
  # No login prompt on the console: the driver writes its results there.
  ln -sf /dev/null "$r/etc/systemd/system/serial-getty@ttyS0.service"
  ln -sf /dev/null "$r/etc/systemd/system/getty@tty1.service"
  if hil_bluetooth; then
    # bt-loop starts its own two bluealsa daemons (one an adapter each): the source's under the
    # default name org.bluealsa (bt-speaker's jukebox talks to it), the sink's as
    # org.bluealsa.sink (bt-phone: the box's sink as org.bluealsa, the phone's source as
    # org.bluealsa.phone); Debian's policy lets root own org.bluealsa.* but send only to
    # org.bluealsa itself. bt-phone unmasks bluealsa-aplay.service.
    ln -sf /dev/null "$r/etc/systemd/system/bluealsa.service"
    ln -sf /dev/null "$r/etc/systemd/system/bluealsa-aplay.service"
    cat > "$r/etc/dbus-1/system.d/hil-bluealsa.conf" <<'XML'
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <policy user="root">
    <allow send_destination="org.bluealsa.sink"/>
    <allow send_destination="org.bluealsa.phone"/>
  </policy>
</busconfig>
XML
  fi
  rm -f "$HIL_CACHE/base.img"
  mkfs.ext4 -q -F -L hilroot -d "$r" "$HIL_CACHE/base.img" 1200M >/dev/null
  hil_stamp image "$key"
}

# Boots the disk run.img of the run folder (HIL_SD, default $HIL_CACHE/sd) once, for at most
# HIL_BOOT_TIMEOUT seconds (600); extra QEMU arguments follow. Console in $1.
hil_boot_systemd() {
  local console=$1 sd=${HIL_SD:-$HIL_CACHE/sd}
  shift
  timeout "${HIL_BOOT_TIMEOUT:-600}" "${HIL_QEMU[@]}" -m 512 -pidfile "$sd/qemu.pid" \
    -append "console=ttyS0 quiet loglevel=3 hil.mode=systemd systemd.show_status=0 rw" \
    -drive file="$sd/run.img",format=raw,if=virtio,cache=writeback \
    -fsdev local,id=repo,path="$REPO",security_model=none,readonly=on \
    -device virtio-9p-pci,fsdev=repo,mount_tag=repo \
    -fsdev local,id=out,path="$sd",security_model=none \
    -device virtio-9p-pci,fsdev=out,mount_tag=out \
    -serial file:"$console" \
    -chardev socket,id=ttyS1,path="$sd/ttyS1.sock",server=on,wait=off -serial chardev:ttyS1 "$@"
}

# hil_make_stick IMAGE: the USB stick of usb-stick, a plain file made with mtools (no loop
# device, no mount on the host): 32 MiB, an MBR with one FAT16 (LBA) partition from sector 2048
# to the end (63488 sectors) labelled HILSTICK, holding Stick 1.wav and Stick 2.wav (the 60 s
# tones of Track 1 and 2).
hil_make_stick() {
  local img=$1 n
  rm -f "$img" && truncate -s 32M "$img"
  printf '\x00\xfe\xff\xff\x0e\xfe\xff\xff\x00\x08\x00\x00\x00\xf8\x00\x00' | dd of="$img" bs=1 seek=446 conv=notrunc status=none
  printf '\x55\xaa' | dd of="$img" bs=1 seek=510 conv=notrunc status=none
  MTOOLS_SKIP_CHECK=1 mformat -i "$img@@1M" -T 63488 -h 64 -s 32 -H 2048 -v HILSTICK ::
  for n in 1 2; do MTOOLS_SKIP_CHECK=1 mcopy -i "$img@@1M" "$HIL_CACHE/fixtures/music/Track $n.wav" "::/Stick $n.wav"; done
}

# hil_host_requests RUNDIR: does what the guest asked for in RUNDIR/host-request.N
# (board/hil/guest/service.sh host_do): usb-plug / usb-pull, a device_add / device_del of the
# stick on QEMU's monitor. The monitor's answer goes to host-answer.N (written, then renamed, so
# the guest never reads half of it) and to monitor.log; the request is removed.
hil_host_requests() {
  local sd=$1 f what cmd answer
  for f in "$sd"/host-request.*; do
    case $f in *.tmp) continue ;; esac
    [ -f "$f" ] || continue
    what=$(cat "$f")
    case $what in
      usb-plug) cmd="device_add usb-storage,bus=xhci.0,drive=stick,id=stick-dev,removable=on" ;;
      usb-pull) cmd="device_del stick-dev" ;;
      *) cmd="" ;;
    esac
    if [ -z "$cmd" ]; then
      answer="unknown request '$what'"
    elif ! answer=$("$HIL_CACHE/tools/hilmon" "$sd/monitor.sock" 10 "$cmd" 2>&1); then
      answer="hilmon failed: $answer"
    fi
    printf '%s %s: %s\n' "$(date +%T)" "$cmd" "$answer" >> "$sd/monitor.log"
    printf '%s\n' "$answer" > "$sd/host-answer.${f##*.}.tmp"
    mv "$sd/host-answer.${f##*.}.tmp" "$sd/host-answer.${f##*.}"
    rm -f "$f"
  done
}

hil_run_systemd_guest() {
  local sd="$HIL_CACHE/sd" t0 qpid pos_cut line
  rm -rf "$sd" && mkdir -p "$sd/music"
  cp --sparse=always "$HIL_CACHE/base.img" "$sd/run.img"
  cp "$HIL_CACHE/fixtures/music"/*.wav "$sd/music/"
  echo "/mnt/repo/board/hil/guest/service.sh" > "$sd/service-script"
  # The package, the same package rebuilt with a higher version (dpkg-deb: the very files of
  # HIL_DEB, whichever build that is), and its binary for install.sh (the debug build links
  # Debian 12's libgpiod2, which trixie does not have).
  local v pkg="$sd/pkg"
  v=$(dpkg-deb -f "$HIL_DEB" Version)
  cp "$HIL_DEB" "$sd/jukebox_${v}_amd64.deb"
  dpkg-deb -R "$HIL_DEB" "$pkg"
  sed -i "s/^Version: .*/Version: $v+hil1/" "$pkg/DEBIAN/control"
  dpkg-deb --root-owner-group -Zgzip -z1 --build "$pkg" "$sd/jukebox_${v}+hil1_amd64.deb" >/dev/null
  cp "$pkg/usr/bin/jukebox" "$sd/jukebox"
  rm -rf "$pkg"
  printf '%s\n' "$v" > "$sd/deb-version"
  # Boot 2's card reader (a uinput keyboard), its fast control client, the stick, the comparison
  # of the stick's recorded audio.
  cp "$HIL_CACHE/tools/hilkeys" "$HIL_CACHE/tools/hilctl" "$HIL_CACHE/tools/pcmcmp" "$sd/"
  # Boot 1's radio station: a FLAC file served in the guest by the host's static busybox (httpd).
  cp -r "$HIL_CACHE/fixtures/www" "$sd/www"
  cp /bin/busybox "$sd/busybox"
  hil_make_stick "$sd/stick.img"

  hil_log "systemd guest, boot 1: install.sh, then apt install ./jukebox_${v}_amd64.deb"
  t0=$(date +%s)
  echo install > "$sd/phase"
  hil_boot_systemd "$sd/console-1.log" || true
  hil_results "$sd/console-1.log"
  hil_finished "$sd/console-1.log" '^HIL-PHASE-DONE install' "boot 1 did not finish" 30 || return 0
  hil_log "boot 1: $(($(date +%s) - t0)) s"

  hil_log "systemd guest, boot 2: start at boot, socket, card reader, USB stick, console; then the power cut"
  t0=$(date +%s)
  echo boot > "$sd/phase"
  # A USB controller, the stick's image as a block node (plugged in only when the guest asks) and
  # the human monitor on a socket.
  hil_boot_systemd "$sd/console-2.log" -device qemu-xhci,id=xhci \
    -blockdev "driver=file,filename=$sd/stick.img,node-name=stick-file,read-only=on" \
    -blockdev driver=raw,file=stick-file,node-name=stick,read-only=on \
    -monitor "unix:$sd/monitor.sock,server=on,wait=off" 2>"$sd/qemu-2.err" &
  qpid=$!
  # The guest says when it is done with the service (rfid-keyboard and usb-stick included,
  # plugging the stick through the monitor meanwhile); only then is the UART worth talking to.
  local end=$(($(date +%s) + 360))
  while ! grep -q '^HIL-SERIAL-GO' "$sd/console-2.log" 2>/dev/null; do
    if [ "$(date +%s)" -gt "$end" ] || ! kill -0 $qpid 2>/dev/null; then break; fi
    hil_host_requests "$sd"
    sleep 0.2
  done
  local transcript pass=1 why=()
  transcript=$("$HIL_CACHE/tools/hilserial" "$sd/ttyS1.sock" 30 status "status --json" 2>&1) || { pass=0; why+=("no answer on the serial console"); }
  grep -q '▶ Track' <<<"$transcript" || { pass=0; why+=("expected a status line '▶ Track …' on the serial console"); }
  grep -q '"phase":"playing"' <<<"$transcript" || { pass=0; why+=("expected phase playing in 'status --json' on the serial console"); }
  if [ $pass = 1 ]; then
    hil_result PASS serial-console "$(grep -m1 '▶' <<<"$transcript")"
  else
    hil_result FAIL serial-console
    for line in "${why[@]}"; do echo "  expected/seen: $line"; done
    echo "  console transcript:"
    # shellcheck disable=SC2001  # a prefix on every line
    sed 's/^/  | /' <<<"$transcript"
  fi
  # The power cut: the position just before, then QEMU killed (no shutdown, no sync).
  pos_cut=$("$HIL_CACHE/tools/hilserial" "$sd/ttyS1.sock" 10 "status --json" 2>/dev/null | grep -o '"position":[0-9.]*' | cut -d: -f2)
  kill -KILL "$(cat "$sd/qemu.pid")" 2>/dev/null || true
  wait $qpid 2>/dev/null || true
  hil_results "$sd/console-2.log"
  hil_log "boot 2: $(($(date +%s) - t0)) s (position at the cut: ${pos_cut:-?} s)"

  hil_log "systemd guest, boot 3: after the power cut; upgrade to $v+hil1, purge"
  t0=$(date +%s)
  echo resume > "$sd/phase"
  echo "${pos_cut:-}" > "$sd/position-at-cut"
  hil_boot_systemd "$sd/console-3.log" || true
  hil_results "$sd/console-3.log"
  hil_finished "$sd/console-3.log" '^HIL-PHASE-DONE resume' "boot 3 did not finish" 30 || true
  hil_log "boot 3: $(($(date +%s) - t0)) s"
}

# bt-speaker's and bt-phone's files in the run folder $1: the package (as deb-install installs
# it), hilctl, and the track jukebox plays: 36 stereo chirps of 8.5 s, each over other
# frequencies (5 min 6 s, WAV and raw), so that any 1.5 s of it is found at one place only (one
# slow sweep over 5 min would leave the cross-correlation a choice between neighbouring cycles of
# the tone).
hil_bt_jukebox_files() {
  local sd=$1 i
  cp "$HIL_DEB" "$sd/jukebox_$(dpkg-deb -f "$HIL_DEB" Version)_amd64.deb"
  dpkg-deb -f "$HIL_DEB" Version > "$sd/deb-version"
  cp "$HIL_CACHE/tools/hilctl" "$sd/"
  mkdir -p "$sd/sweep"
  for i in $(seq 0 35); do
    sox -q -n -r 44100 -c 2 -b 16 "$sd/sweep/$(printf %02d "$i").wav" \
      synth 8.5 sine $((200 + 41 * i))-$((6000 - 67 * i)) sine $((5000 - 59 * i))-$((300 + 29 * i)) vol 0.5
  done
  sox "$sd/sweep"/*.wav "$sd/speaker.wav"
  sox "$sd/speaker.wav" -t raw "$sd/speaker.raw"
  rm -r "$sd/sweep"
}

# bt-loop (opt-in): one boot of a fresh copy of the image, its own run folder $HIL_CACHE/bt;
# board/hil/guest/bluetooth.sh drives it. The test sound (an 8 s stereo chirp) is made here.
# With $1 = 1, bt-speaker follows in the same boot (JUKEBOX_HIL_BT_CYCLES: its disconnect/connect
# cycles, default 20); with $2 = 1, bt-phone (JUKEBOX_HIL_BT_PHONE_CYCLES: the phone's
# start/stop cycles, default 10); with $3 = 1, bt-pin (a speaker that wants a PIN). The guest
# runs each one whose NAME-cycles file is there.
hil_run_bluetooth_guest() {
  local sd="$HIL_CACHE/bt" t0
  rm -rf "$sd" && mkdir -p "$sd"
  cp --sparse=always "$HIL_CACHE/base.img" "$sd/run.img"
  echo "/mnt/repo/board/hil/guest/bluetooth.sh" > "$sd/service-script"
  echo bluetooth > "$sd/phase"
  cp "$HIL_CACHE/tools/pcmsnr" "$HIL_CACHE/tools/hilsndbuf.so" "$sd/"
  sox -q -n -r 44100 -c 2 -b 16 "$sd/chirp.wav" synth 8 sine 200-6000 sine 300-5000 vol 0.5
  local what=bt-loop
  if [ "${1:-0}" = 1 ]; then
    what="$what, bt-speaker"
    echo "${JUKEBOX_HIL_BT_CYCLES:-20}" > "$sd/speaker-cycles"
  fi
  if [ "${3:-0}" = 1 ]; then
    what="$what, bt-pin"
    echo 1 > "$sd/pin-cycles"
  fi
  if [ "${2:-0}" = 1 ]; then
    what="$what, bt-phone"
    echo "${JUKEBOX_HIL_BT_PHONE_CYCLES:-10}" > "$sd/phone-cycles"
  fi
  [ "$what" = bt-loop ] || hil_bt_jukebox_files "$sd"
  hil_log "systemd guest, bluetooth boot: $what"
  t0=$(date +%s)
  # bt-phone adds ~3-4 min to the boot under TCG (pairing again, apt install, 10 cycles).
  local limit=600
  [ "${2:-0}" = 1 ] && limit=900
  HIL_SD=$sd HIL_BOOT_TIMEOUT=$limit hil_boot_systemd "$sd/console.log" || true
  hil_results "$sd/console.log"
  hil_finished "$sd/console.log" '^HIL-PHASE-DONE bluetooth' "the bluetooth boot did not finish" 30 || true
  hil_log "bluetooth boot: $(($(date +%s) - t0)) s (logs in $sd/log)"
}

# airplay (opt-in, asked for by name): two boots of a fresh copy of the image, its own run folder
# $HIL_CACHE/airplay; board/hil/guest/airplay.sh drives them. Boot 1 installs the package and
# follows docs/SOURCES.md's AirPlay steps, then the sessions (JUKEBOX_HIL_AIRPLAY_CYCLES, default
# 5) and jukebox restarted under a running shairport-sync; boot 2 is the start order at boot.
hil_run_airplay_guest() {
  local sd="$HIL_CACHE/airplay" t0 n
  rm -rf "$sd" && mkdir -p "$sd"
  cp --sparse=always "$HIL_CACHE/base.img" "$sd/run.img"
  echo "/mnt/repo/board/hil/guest/airplay.sh" > "$sd/service-script"
  cp "$HIL_DEB" "$sd/jukebox_$(dpkg-deb -f "$HIL_DEB" Version)_amd64.deb"
  dpkg-deb -f "$HIL_DEB" Version > "$sd/deb-version"
  cp "$HIL_CACHE/tools/hilctl" "$sd/"
  echo "${JUKEBOX_HIL_AIRPLAY_CYCLES:-5}" > "$sd/airplay-cycles"
  # One 5-minute track, so that no session meets a track's end.
  sox -q -n -r 44100 -c 2 -b 16 "$sd/long.wav" synth 300 sine 440 vol 0.3
  for n in 1 2; do
    hil_log "systemd guest, airplay boot $n"
    t0=$(date +%s)
    echo "airplay-$n" > "$sd/phase"
    HIL_SD=$sd HIL_BOOT_TIMEOUT=900 hil_boot_systemd "$sd/console-$n.log" -nic user,model=virtio-net-pci,restrict=on || true
    hil_results "$sd/console-$n.log"
    hil_finished "$sd/console-$n.log" "^HIL-PHASE-DONE airplay-$n" "airplay boot $n did not finish" 30 || return 0
    hil_log "airplay boot $n: $(($(date +%s) - t0)) s (logs in $sd/log)"
  done
}
