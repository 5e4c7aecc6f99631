#!/bin/sh
# SPDX-License-Identifier: MIT
#
# usb-mount.sh KERNELNAME - mount the USB stick /dev/KERNELNAME read-only (ro, nosuid, nodev,
# noexec; not checked by fsck) under /media/jukebox/NAME with systemd-mount --automount, where
# NAME is its label made safe: no "/", no control characters, no leading dots (so never "." or
# ".."), at most 64 bytes; without a usable label its UUID, else KERNELNAME. A second stick with
# a name already mounted gets NAME-KERNELNAME. Run as root by jukebox-usb@.service (installed as
# /usr/local/share/jukebox/usb-mount); JUKEBOX_USB_DRYRUN=1 prints the command instead,
# JUKEBOX_USB_ROOT replaces /media/jukebox, and ID_FS_LABEL/ID_FS_UUID given in the
# environment replace udev's (both for tests).
set -eu
kernel=${1:?usage: usb-mount.sh KERNELNAME}
case "$kernel" in */*|.*|'') echo "usb-mount: bad device name: $kernel" >&2; exit 2 ;; esac
dev=/dev/$kernel
root=${JUKEBOX_USB_ROOT:-/media/jukebox}

if [ -z "${ID_FS_LABEL+x}${ID_FS_UUID+x}" ]; then
  props=$(udevadm info --query=property --name="$dev" 2>/dev/null || true)
  ID_FS_LABEL=$(printf '%s\n' "$props" | sed -n 's/^ID_FS_LABEL=//p' | head -n 1)
  ID_FS_UUID=$(printf '%s\n' "$props" | sed -n 's/^ID_FS_UUID=//p' | head -n 1)
fi

# Bytes, not characters: a label is whatever the filesystem holds.
safe() { printf '%s' "$1" | LC_ALL=C tr -d '\000-\037\177/' | LC_ALL=C sed 's/^\.*//' | LC_ALL=C cut -b 1-64; }

name=$(safe "${ID_FS_LABEL:-}")
[ -n "$name" ] || name=$(safe "${ID_FS_UUID:-}")
[ -n "$name" ] || name=$kernel
if mountpoint -q "$root/$name" 2>/dev/null; then name=$name-$kernel; fi

# --fsck=no: systemd-mount would otherwise run `fsck -a` first, which repairs, i.e. writes to a
# stick that is only ever read, and makes a big stick wait for its check before it plays (seen in
# board/hil's usb-stick scenario: the check ran at every insert).
set -- systemd-mount --no-block --automount=yes --bind-device --collect --fsck=no \
  --options=ro,nosuid,nodev,noexec "$dev" "$root/$name"
if [ "${JUKEBOX_USB_DRYRUN:-0}" = 1 ]; then printf '%s\n' "$*"; exit 0; fi
mkdir -p "$root"
exec "$@"
