#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test.sh - the whole test suite, from a fresh Debian 12/13 machine: installs what is needed
# (board/setup.sh), builds, runs every unit and end-to-end test, then builds and tests the
# package again with Debian 13's Swift 6.0.3 in a trixie chroot (board/trixie-chroot.sh; needs
# root; skipped on a trixie host, where the first run already used that toolchain), and checks
# systemd/jukebox.service (board/check-unit.sh: systemd-analyze verify, security score <= 2.5).
#
#   bash board/test.sh                 everything
#   JUKEBOX_SKIP_TRIXIE=1 bash board/test.sh   skip the Debian 13 chroot build
set -euo pipefail
cd "$(dirname "$0")/.."

bash board/setup.sh

echo "test: systemd unit"
bash board/check-unit.sh

echo "test: swift build and test ($(swift --version 2>/dev/null | head -n 1))"
swift build --build-tests
swift test --skip-build

# shellcheck disable=SC1091
codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
if [ "${JUKEBOX_SKIP_TRIXIE:-0}" = 1 ]; then
  echo "test: Debian 13 build skipped (JUKEBOX_SKIP_TRIXIE=1)"
elif [ "$codename" = trixie ]; then
  echo "test: host is Debian 13 already; no chroot needed"
elif [ "$(id -u)" -ne 0 ]; then
  echo "test: Debian 13 build skipped (needs root for the chroot)"
else
  echo "test: build and test with Debian 13's swiftlang in a trixie chroot"
  bash board/trixie-chroot.sh bash -c 'swift --version 2>&1 | head -n 1 && swift build --build-tests --scratch-path /root/trixie-build && swift test --skip-build --scratch-path /root/trixie-build'
fi
echo "test: all passed"
