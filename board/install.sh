#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# install.sh - install jukebox as a system service (systemd/jukebox.service), or remove it.
# Safe to run again: an update rebuilds, reinstalls and restarts; the config is never overwritten.
#
#   sudo env PATH="$PATH" board/install.sh [--board NAME]   build and install, enable and start
#   sudo board/install.sh --uninstall                         stop, disable, remove what it announced over MQTT,
#                                                             remove (keeps config and state)
#
# Options:
#   --board NAME     name a board profile (board/profiles/NAME.json) in a new config; without it the
#                    config uses no buttons, encoder or display
#   --binary PATH    install this jukebox binary instead of building one (skips setup.sh and the build)
#   --root DIR       install the files under DIR (a staging root); skips users, udev and systemctl
#   --dry-run        print every step, change nothing
#   --snapcast-server   also make this box a Snapcast server (docs/REMOTE.md "Several rooms: Snapcast"): snapserver
#                    installed and started with jukebox's pipe source, a new config's output into it
#   --snapcast-client[=HOST]   make this box a Snapcast client only (no jukebox): snapclient installed
#                    and started, following the server at HOST (default: found by avahi)
#
# What it does (as root): board/setup.sh; a release build (static Swift stdlib); installs
#   /usr/local/bin/jukebox                     the binary
#   /etc/systemd/system/jukebox.service        the unit
#   /etc/jukebox/config.json                   a default config, only if there is none
#   /usr/local/share/jukebox/profiles/*.json   the board profiles
#   /etc/udev/rules.d/99-jukebox.rules         GPIO, I2C and SPI for groups gpio, i2c and spi
#   /etc/udev/rules.d/98-jukebox-usb.rules     USB sticks: starts jukebox-usb@KERNELNAME.service
#   /etc/systemd/system/jukebox-usb@.service   mounts a stick read-only under /media/jukebox/LABEL
#   /usr/local/share/jukebox/usb-mount         board/usb-mount.sh, which that unit runs
#   /usr/local/share/jukebox/shairport-sync.conf   shairport-sync's session hooks (docs/SOURCES.md)
#   /usr/local/share/jukebox/shairport-sync.service.conf   its unit's drop-in (after jukebox, restarted with it)
#   /usr/local/share/jukebox/bluealsa-aplay.conf   bluealsa-aplay's drop-in for a phone (docs/SOURCES.md)
#   /etc/polkit-1/rules.d/50-jukebox-power.rules   lets user jukebox power off and reboot
#   /etc/systemd/system/jukebox-web.socket     the web app's port 80 (docs/WEB.md), enabled: it starts
#   /etc/systemd/system/jukebox-web.service    `jukebox web` at the first connection
#   /usr/local/share/jukebox/web/              the web app's page (Sources/JukeboxWeb/Assets)
#   /usr/local/share/jukebox/mpd-network       board/mpd-network.sh, run here: only when the config
#       has an MPD TCP listener, /etc/systemd/system/jukebox.service.d/mpd-network.conf opens the
#       sandbox to the network (and, for a LAN listener with avahi installed,
#       /etc/avahi/services/jukebox-mpd.service announces it); otherwise both are removed
# creates groups gpio, i2c and spi and the system user jukebox (no login, home /var/lib/jukebox) in
# groups audio gpio i2c spi input dialout, the folder /srv/music, then enables and starts the service
# when systemd runs (PID 1). With --snapcast-server, also
#   /usr/local/lib/jukebox/snapcast-control    a link to the binary: snapserver's controlscript
#   /etc/systemd/system/snapserver.service.d/jukebox.conf   /run/snapserver for the pipe
#   /etc/snapserver.conf                       the jukebox source line (the package's default
#       /tmp/snapfifo source commented out; the original kept as /etc/snapserver.conf.jukebox-orig)
# and puts user jukebox in group _snapserver (the pipe) and _snapserver in group jukebox (the
# control socket).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

say() { printf 'install: %s\n' "$*"; }
die() { say "$*" >&2; exit 1; }

uninstall=0
dry=0
board=""
binary=""
root=""
snapserver=0
snapclient=""
while [ $# -gt 0 ]; do
  case "$1" in
    --uninstall) uninstall=1 ;;
    --dry-run) dry=1 ;;
    --board) [ $# -ge 2 ] || die "--board needs a NAME"; board=$2; shift ;;
    --board=*) board=${1#--board=} ;;
    --binary) [ $# -ge 2 ] || die "--binary needs a PATH"; binary=$2; shift ;;
    --binary=*) binary=${1#--binary=} ;;
    --root) [ $# -ge 2 ] || die "--root needs a DIR"; root=$2; shift ;;
    --root=*) root=${1#--root=} ;;
    --snapcast-server) snapserver=1 ;;
    --snapcast-client) snapclient=auto ;;
    --snapcast-client=*) snapclient=${1#--snapcast-client=}; [ -n "$snapclient" ] || snapclient=auto
      # It goes into snapclient's defaults file, which a shell reads: a host name or address only.
      case "$snapclient" in *[!A-Za-z0-9.:-]*) die "--snapcast-client=HOST: a host name or address, not '$snapclient'" ;; esac ;;
    -h|--help) awk 'NR >= 3 && /^set -euo/ { exit } NR >= 3' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (try --help)" ;;
  esac
  shift
done
root=${root%/}

# 32-bit ARM: Debian has no Swift there (no swiftlang for armhf or armel), so jukebox can be neither
# built nor run. uname -m alone is not enough: 32-bit Raspberry Pi OS often runs a 64-bit kernel.
machine_arch=${JUKEBOX_ARCH:-$( (dpkg --print-architecture 2>/dev/null || uname -m) | head -n 1)}
case "$machine_arch" in
  armhf|armel|arm|armv6l|armv7l|armv8l)
    die "this system is 32-bit ARM ($machine_arch): not supported. Debian has no Swift toolchain or runtime for 32-bit ARM, so jukebox cannot be built or run on 32-bit Raspberry Pi OS, nor at all on the armv6 boards (Pi 1, original Pi Zero / Zero W). On a Pi Zero 2 W, 3, 4 or 5 install 64-bit Raspberry Pi OS (trixie) and the arm64 .deb (see docs/INSTALL.md)." ;;
esac

if [ -n "$board" ] && [ ! -f "board/profiles/$board.json" ]; then
  names=""
  for f in board/profiles/*.json; do names="$names $(basename "$f" .json)"; done
  die "no board profile '$board'; there are:$names"
fi
if [ -n "$binary" ] && [ ! -x "$binary" ]; then
  die "--binary $binary is not an executable file"
fi

# Root is needed for the real thing; a dry run or a staging root needs none.
if [ "$dry" -eq 0 ] && [ -z "$root" ] && [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || die "run as root (or install sudo)"
  say "not root: running again through sudo"
  exec sudo env "PATH=$PATH" bash "$0" "$@"
fi

# Runs a command, or only prints it in a dry run.
run() {
  printf '  +'; printf ' %q' "$@"; printf '\n'
  if [ "$dry" -eq 0 ]; then "$@"; fi
}

# systemd as PID 1 (the test sd_booted() uses); never in a staging root.
systemd_running() { [ -z "$root" ] && [ -d /run/systemd/system ]; }

bin=/usr/local/bin/jukebox
unit=/etc/systemd/system/jukebox.service
config=/etc/jukebox/config.json
share=/usr/local/share/jukebox
udev_rule=/etc/udev/rules.d/99-jukebox.rules
polkit_rule=/etc/polkit-1/rules.d/50-jukebox-power.rules
usb_rule=/etc/udev/rules.d/98-jukebox-usb.rules
usb_unit=/etc/systemd/system/jukebox-usb@.service
web_socket=/etc/systemd/system/jukebox-web.socket
web_service=/etc/systemd/system/jukebox-web.service
dropin_dir=/etc/systemd/system/jukebox.service.d
dropin=$dropin_dir/mpd-network.conf
avahi_service=/etc/avahi/services/jukebox-mpd.service
snapcast_link=/usr/local/lib/jukebox/snapcast-control
snapserver_dropin=/etc/systemd/system/snapserver.service.d/jukebox.conf
snapserver_conf=/etc/snapserver.conf
snapcast_pipe=/run/snapserver/jukebox
snapcast_format=44100:16:2
# FLAC: lossless (what the clients play is what jukebox played, bit for bit), half the bandwidth of pcm.
snapcast_source="source = pipe://$snapcast_pipe?name=jukebox&sampleformat=$snapcast_format&codec=flac&controlscript=$snapcast_link"

# Installs Debian packages that are missing (never in a staging root).
apt_install() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ "${#missing[@]}" -gt 0 ] || return 0
  if [ -n "$root" ]; then say "staging root: not installing ${missing[*]}"; return 0; fi
  run env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# A Snapcast client box: snapclient only, following HOST (or the server avahi finds).
if [ -n "$snapclient" ] && [ "$uninstall" -eq 0 ]; then
  say "Snapcast client: snapclient (Debian's package), playing to ALSA's default device"
  apt_install snapclient
  if [ "$snapclient" != auto ]; then
    say "following the Snapcast server at $snapclient (/etc/default/snapclient)"
    if [ "$dry" -eq 0 ]; then
      install -d -m 0755 "$root/etc/default"
      if [ -e "$root/etc/default/snapclient" ] && grep -q '^SNAPCLIENT_OPTS=' "$root/etc/default/snapclient"; then
        sed -i "s|^SNAPCLIENT_OPTS=.*|SNAPCLIENT_OPTS=\"--host $snapclient\"|" "$root/etc/default/snapclient"
      else
        printf 'SNAPCLIENT_OPTS="--host %s"\n' "$snapclient" >> "$root/etc/default/snapclient"
      fi
    fi
  fi
  if systemd_running; then
    run systemctl enable snapclient.service
    run systemctl restart snapclient.service
  fi
  say "done: a Snapcast client (systemctl status snapclient); jukebox itself is not installed here"
  exit 0
fi

reload_udev() {
  if [ -n "$root" ]; then
    say "staging root: udev not reloaded"
  elif command -v udevadm >/dev/null 2>&1 && [ -d /run/udev ]; then
    run udevadm control --reload
    run udevadm trigger --action=add --subsystem-match=gpio --subsystem-match=i2c-dev --subsystem-match=spidev
  else
    say "udev is not running: the rule applies from the next boot"
  fi
}

if [ "$uninstall" -eq 1 ]; then
  say "removing the jukebox service"
  if systemd_running; then
    if [ -e "$root$web_socket" ]; then run systemctl disable --now jukebox-web.socket jukebox-web.service; fi
    if [ -e "$root$unit" ]; then run systemctl disable --now jukebox.service; fi
  else
    say "systemd is not running (not PID 1): nothing to stop or disable"
  fi
  # What the player announced over MQTT (Home Assistant's entities, retained state) goes too:
  # bounded, and a broker that cannot be reached does not stop the removal.
  if [ -z "$root" ] && [ -x "$bin" ] && [ -e "$config" ]; then
    run timeout 15 "$bin" mqtt-forget --config "$config" --timeout 10 || say "MQTT: not everything announced could be removed (see above)"
  fi
  for f in "$unit" "$bin" "$udev_rule" "$usb_rule" "$usb_unit" "$polkit_rule" "$dropin" "$avahi_service" "$web_socket" "$web_service"; do
    if [ -e "$root$f" ]; then run rm -f "$root$f"; fi
  done
  if [ -d "$root$share/web" ]; then run rm -rf "$root$share/web"; fi
  # Snapcast (--snapcast-server): the controlscript link and snapserver's drop-in.
  if [ -L "$root$snapcast_link" ]; then run rm -f "$root$snapcast_link"; run rmdir --ignore-fail-on-non-empty "$root$(dirname "$snapcast_link")"; fi
  if [ -e "$root$snapserver_dropin" ]; then
    run rm -f "$root$snapserver_dropin"
    run rmdir --ignore-fail-on-non-empty "$root$(dirname "$snapserver_dropin")"
    if grep -qF "$snapcast_pipe" "$root$snapserver_conf" 2>/dev/null; then
      say "kept: the jukebox source in $snapserver_conf (snapserver cannot open it any more: remove it, see ${snapserver_conf}.jukebox-orig)"
    fi
  fi
  if [ -d "$root$dropin_dir" ]; then run rmdir --ignore-fail-on-non-empty "$root$dropin_dir"; fi
  if [ -d "$root$share" ]; then run rm -rf "$root$share"; fi
  if systemd_running; then run systemctl daemon-reload; fi
  if [ -n "$root" ] || [ "$dry" -eq 1 ] || [ -e /etc/udev/rules.d ]; then reload_udev; fi
  say "kept: /etc/jukebox (config), /var/lib/jukebox (state), /srv/music, the user jukebox and groups gpio, i2c, spi"
  say "  remove them by hand if wanted: rm -r /etc/jukebox /var/lib/jukebox; userdel jukebox"
  exit 0
fi

# 1. Build tools and libraries, and the binary.
if [ -z "$binary" ]; then
  say "checking build dependencies (board/setup.sh)"
  run bash board/setup.sh
  say "building a release binary (static Swift standard library: ~3 MiB less memory, no Swift runtime needed on the board)"
  build=(swift build -c release --static-swift-stdlib --product jukebox)
  # Under sudo, build as the user who asked, so the checkout's .build stays theirs.
  if [ "$(id -u)" -eq 0 ] && [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
    build=(runuser -u "$SUDO_USER" -- env "PATH=$PATH" "${build[@]}")
  fi
  if ! run "${build[@]}"; then
    # A toolchain without the static standard library (swift_static) still builds, linked dynamically.
    say "the static build failed: building with the shared Swift runtime instead"
    build=("${build[@]/--static-swift-stdlib/}")
    run "${build[@]}"
  fi
  if [ "$dry" -eq 1 ]; then
    binary="$repo/.build/release/jukebox"
  else
    binary="$("${build[@]}" --show-bin-path)/jukebox"
  fi
fi

# 2. Users and groups (the unit's SupplementaryGroups must all exist, or the service cannot start).
if [ -n "$root" ]; then
  say "staging root: users and groups not created"
else
  for g in audio gpio i2c spi input dialout; do
    if ! getent group "$g" >/dev/null; then
      say "creating group $g"
      run groupadd --system "$g"
    fi
  done
  if ! getent passwd jukebox >/dev/null; then
    say "creating system user jukebox (no login, home /var/lib/jukebox)"
    run useradd --system --user-group --home-dir /var/lib/jukebox --no-create-home \
      --shell /usr/sbin/nologin --comment "jukebox music player" jukebox
  fi
  say "user jukebox in groups audio gpio i2c spi input dialout"
  run usermod --append --groups audio,gpio,i2c,spi,input,dialout jukebox
  run install -d -o jukebox -g jukebox -m 0750 /var/lib/jukebox
fi

# 3. Files.
say "installing $bin"
run install -D -m 0755 "$binary" "$root$bin"
say "installing $unit"
run install -D -m 0644 systemd/jukebox.service "$root$unit"
say "installing board profiles to $share/profiles"
run install -d -m 0755 "$root$share/profiles"
run install -m 0644 board/profiles/*.json "$root$share/profiles/"
run install -m 0755 board/mpd-network.sh "$root$share/mpd-network"
run install -m 0755 board/usb-mount.sh "$root$share/usb-mount"
# shairport-sync's session hooks (docs/SOURCES.md), naming this install's binary.
run install -d -m 0755 "$root$share"
run sh -c 'sed "s|/usr/bin/jukebox|$1|g" board/shairport-sync.conf > "$2" && chmod 0644 "$2"' sh "$bin" "$root$share/shairport-sync.conf"
run install -m 0644 board/shairport-sync.service.conf "$root$share/shairport-sync.service.conf"
run install -m 0644 board/bluealsa-aplay.conf "$root$share/bluealsa-aplay.conf"
say "installing $udev_rule"
run install -D -m 0644 board/99-jukebox.rules "$root$udev_rule"
say "installing $usb_rule and $usb_unit (USB sticks, read-only, under /media/jukebox)"
run install -D -m 0644 board/98-jukebox-usb.rules "$root$usb_rule"
run install -D -m 0644 systemd/jukebox-usb@.service "$root$usb_unit"
say "installing $web_socket and $web_service (the web app on port 80, docs/WEB.md)"
run install -D -m 0644 systemd/jukebox-web.socket "$root$web_socket"
run install -D -m 0644 systemd/jukebox-web.service "$root$web_service"
run install -d -m 0755 "$root$share/web"
run install -m 0644 Sources/JukeboxWeb/Assets/* "$root$share/web/"
say "installing $polkit_rule (power button: user jukebox may power off)"
run install -D -m 0644 board/50-jukebox-power.rules "$root$polkit_rule"
if [ -z "$root" ] && ! command -v pkcheck >/dev/null 2>&1 && [ ! -x /usr/lib/polkit-1/polkitd ]; then
  say "warning: polkit is not installed, so the power button cannot power off: apt-get install polkitd"
fi

if [ -e "$root$config" ]; then
  say "keeping $config (it exists)"
else
  say "writing a default $config (music in /srv/music${board:+, board $board})"
  run install -d -m 0755 "$root/etc/jukebox"
  board_line=""
  if [ -n "$board" ]; then board_line="  \"board\": \"$board\","$'\n'; fi
  output_lines="  \"device\": \"default\",
  \"audio\": \"alsa\","
  if [ "$snapserver" -eq 1 ]; then
    output_lines="  \"output\": {\"type\": \"snapcast\", \"pipe\": \"$snapcast_pipe\", \"sampleFormat\": \"$snapcast_format\"},"
  fi
  text="{
$output_lines
  \"state\": \"/var/lib/jukebox/state.json\",
  \"music\": [\"/srv/music\"],
  \"socket\": \"/run/jukebox/control\",
  \"resume\": \"playing\",
  \"logLevel\": \"info\",
  \"bootVolume\": 40,
${board_line}  \"powerCommand\": [\"systemctl\", \"poweroff\"]
}"
  if [ "$dry" -eq 1 ]; then
    printf '%s\n' "$text" | sed 's/^/      /'
  else
    (umask 022 && printf '%s\n' "$text" > "$root$config")
  fi
fi
# The web app's Settings page writes the config through a new file renamed over it (docs/WEB.md
# "Settings"): the folder is writable by group jukebox; the web unit may write it and no more of /etc.
if [ -z "$root" ] && [ -d /etc/jukebox ]; then
  say "/etc/jukebox writable by group jukebox (the web app's Settings page)"
  run chgrp jukebox /etc/jukebox
  run chmod 0775 /etc/jukebox
fi
if [ ! -d "$root/srv/music" ]; then
  say "creating /srv/music (put the music there, readable by user jukebox; web uploads write it as group jukebox)"
  if [ -n "$root" ]; then run install -d -m 0755 "$root/srv/music"; else run install -d -g jukebox -m 2775 /srv/music; fi
fi

reload_udev

# The network drop-in: only for an MPD TCP listener in the config (the unit allows Unix sockets only).
say "MPD network access for the service, from $config (board/mpd-network.sh)"
if [ "$dry" -eq 1 ]; then
  run sh board/mpd-network.sh --config "$config" --jukebox "$binary" ${root:+--root "$root"}
elif ! sh board/mpd-network.sh --config "$config" --jukebox "$binary" ${root:+--root "$root"} | sed 's/^/  /'; then
  say "warning: could not read $config: the network drop-in is left as it was (the service will say what is wrong)"
fi

# Snapcast server: snapserver reads jukebox's pipe and runs `jukebox snapcast-control` for its
# clients (the link: its controlscript must name a file; the binary acts on the name).
if [ "$snapserver" -eq 1 ]; then
  say "Snapcast server: snapserver with the source $snapcast_pipe"
  apt_install snapserver
  run install -d -m 0755 "$root$(dirname "$snapcast_link")"
  run ln -sfn "$bin" "$root$snapcast_link"
  say "installing $snapserver_dropin (/run/snapserver for the pipe, group _snapserver may enter)"
  dropin_text="# Installed by jukebox's board/install.sh --snapcast-server.
[Service]
# The pipe jukebox writes into ($snapcast_pipe): snapserver makes it at start, in a folder of its
# own that group _snapserver (user jukebox is in it) may enter.
RuntimeDirectory=snapserver
RuntimeDirectoryMode=0750
# Where jukebox snapcast-control (the controlscript) finds the player.
Environment=JUKEBOX_SOCKET=/run/jukebox/control"
  if [ "$dry" -eq 1 ]; then
    printf '%s\n' "$dropin_text" | sed 's/^/      /'
  else
    install -d -m 0755 "$root$(dirname "$snapserver_dropin")"
    (umask 022 && printf '%s\n' "$dropin_text" > "$root$snapserver_dropin")
  fi
  if grep -qF "$snapcast_pipe" "$root$snapserver_conf" 2>/dev/null; then
    say "keeping the jukebox source in $snapserver_conf"
  else
    say "adding the jukebox source to $snapserver_conf (its /tmp/snapfifo default commented out; original: ${snapserver_conf}.jukebox-orig)"
    if [ "$dry" -eq 1 ]; then
      say "  $snapcast_source"
    else
      install -d -m 0755 "$root$(dirname "$snapserver_conf")"
      touch "$root$snapserver_conf"
      [ -e "$root$snapserver_conf.jukebox-orig" ] || cp -p "$root$snapserver_conf" "$root$snapserver_conf.jukebox-orig"
      awk -v line="$snapcast_source" '
        /^[ \t]*source[ \t]*=[ \t]*pipe:\/\/\/tmp\/snapfifo/ { print "#" $0; next }
        { print }
        /^[ \t]*\[stream\][ \t]*$/ && !done { print line; done = 1 }
        END { if (!done) { print "[stream]"; print line } }' \
        "$root$snapserver_conf" > "$root$snapserver_conf.new"
      mv -f "$root$snapserver_conf.new" "$root$snapserver_conf"
    fi
  fi
  if [ -z "$root" ]; then
    say "user jukebox in group _snapserver (the pipe), _snapserver in group jukebox (the control socket)"
    run usermod --append --groups _snapserver jukebox
    run usermod --append --groups jukebox _snapserver
  fi
  if ! grep -q '"snapcast"' "$root$config" 2>/dev/null; then
    say "note: $config does not play into Snapcast; set \"output\": {\"type\": \"snapcast\", \"pipe\": \"$snapcast_pipe\", \"sampleFormat\": \"$snapcast_format\"}"
  fi
fi

# 4. The service.
if systemd_running; then
  if [ "$snapserver" -eq 1 ]; then
    run systemctl daemon-reload
    run systemctl enable snapserver.service
    run systemctl restart snapserver.service
  fi
  run systemctl daemon-reload
  run systemctl enable jukebox.service
  # restart, not start: an update must run the new binary.
  run systemctl restart jukebox.service
  # The web app: its socket listens; an update ends a running `jukebox web` so the next page gets the new one.
  run systemctl enable jukebox-web.socket
  run systemctl restart jukebox-web.socket
  run systemctl stop jukebox-web.service
  say "started; see: systemctl status jukebox; journalctl -u jukebox -f; the web app: http://$(hostname 2>/dev/null || echo BOX)/"
else
  say "systemd is not running (not PID 1${root:+, or a staging root}): skipped daemon-reload, enable and start"
  say "  on the board: systemctl daemon-reload && systemctl enable --now jukebox"
fi
say "done"
