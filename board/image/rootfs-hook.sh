#!/bin/sh
# SPDX-License-Identifier: MIT
# rootfs-hook.sh ROOT DEB: run by board/image.sh as mmdebstrap's --customize-hook (inside the
# cached root, /proc mounted, programs under qemu-aarch64): the steps that must run programs of the
# image itself. Everything that is only files is laid down later by board/image.sh.
set -eu
r=$1
# The project's package (its Depends are already in: mmdebstrap --include named them). Not given
# to --include itself: in root mode apt hands dpkg a copy under the host's /tmp, which dpkg in the
# chroot cannot see.
cp "$2" "$r/tmp/jukebox.deb"
DEBIAN_FRONTEND=noninteractive chroot "$r" dpkg -i /tmp/jukebox.deb
rm -f "$r/tmp/jukebox.deb"
# raspi-firmware writes /boot/firmware (the FAT partition's content) from these: the root found by
# label (the same on an SD card, a USB disk and QEMU's virtio disk), mounted read-only ("ro" after
# the hook's own "rw": the last one wins, in the kernel and in the initramfs).
cat > "$r/etc/default/raspi-firmware" <<'CONF'
# board/image.sh: the appliance image. See docs/IMAGE.md.
ROOTPART="LABEL=jbroot"
CONSOLES="tty0 ttyS1,115200"
CONF
echo 'ro' > "$r/etc/default/raspi-extra-cmdline"
DEB_MAINT_PARAMS=configure chroot "$r" /etc/kernel/postinst.d/z50-raspi-firmware
# No password anywhere: root locked (SSH with a key from the boot partition only).
chroot "$r" passwd -q -l root
# Host keys are made per box on the data partition (jukebox-setup): none shipped in the image.
rm -f "$r"/etc/ssh/ssh_host_*
chroot "$r" systemctl -q disable ssh.service
