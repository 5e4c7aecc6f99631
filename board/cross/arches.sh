# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Sourced by cross-build.sh and package.sh: the architectures the packages are made for, and the
# one way `--arch` chooses among them. Needs the caller's `die`.

# shellcheck disable=SC2034  # read by the caller
arches=(arm64 amd64)

# choose_arches VALUE: `--arch`'s value (all, arm64 or amd64) into `arches`.
choose_arches() {
  case "$1" in
    all) arches=(arm64 amd64) ;;
    arm64|amd64) arches=("$1") ;;
    *) die "--arch $1: only arm64 and amd64 (Debian has no Swift for armhf: see docs/INSTALL.md)" ;;
  esac
}
