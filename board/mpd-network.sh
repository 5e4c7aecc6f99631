#!/bin/sh
# SPDX-License-Identifier: MIT
#
# mpd-network.sh - opens jukebox's service sandbox to the network when, and only when, its config
# has an MPD TCP listener, an MQTT broker or internet radio. The unit itself allows Unix sockets
# only (PrivateNetwork=yes, RestrictAddressFamilies=AF_UNIX); with a TCP "bind" in the config's
# "mpd" object, an "mqtt" object, or radio ("radio": {"network": true}, or a URL in "music":
# then IP traffic with any address, and netlink for the resolver) this writes
#   /etc/systemd/system/jukebox.service.d/mpd-network.conf   IPv4/IPv6 sockets, the host's
#       network, IP traffic only with localhost (a loopback bind or broker), the broker's
#       address when it is written as one, or the private ranges (any other bind; a broker
#       named by host name, whose name server is usually there too), and bind() only on the
#       MPD port (none at all for MQTT alone: connecting needs no bind)
#   /etc/avahi/services/jukebox-mpd.service                   _mpd._tcp on that port, only for a
#       non-loopback bind and when avahi-daemon is installed
# and removes both when the config has none of them (no "mqtt", no radio; no "mpd" or Unix socket
# paths only).
# A broker by name outside the private ranges: widen IPAddressAllow in another drop-in.
# Installed as /usr/share/jukebox/mpd-network (package; its postinst runs it) and
# /usr/local/share/jukebox/mpd-network (board/install.sh runs it). After changing "mpd":
#   sudo /usr/share/jukebox/mpd-network && sudo systemctl restart jukebox
#
# Options: --config FILE (default /etc/jukebox/config.json), --jukebox BIN (default: jukebox on
# PATH), --root DIR (write under a staging root; no systemctl). The listeners come from
# `jukebox mpd-tcp` (the brokers from `jukebox mpd-tcp --mqtt`: the config's, and any that still
# hold what an earlier config announced, which the player takes away at its next start; radio
# from `--radio`), which validates the config as the player does. Exit 1 when it cannot be read
# (the files are then left as they are).
set -eu

config=/etc/jukebox/config.json
jukebox=jukebox
root=""
while [ $# -gt 0 ]; do
    case "$1" in
        --config) config=$2; shift ;;
        --jukebox) jukebox=$2; shift ;;
        --root) root=${2%/}; shift ;;
        -h|--help) sed -n '3,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "mpd-network: unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done

say() { printf 'mpd-network: %s\n' "$*"; }
dropin_dir=/etc/systemd/system/jukebox.service.d
dropin=$dropin_dir/mpd-network.conf
avahi_dir=/etc/avahi/services
avahi=$avahi_dir/jukebox-mpd.service

listeners=""
broker=""
radio=""
if [ -e "$root$config" ]; then
    if ! listeners=$("$jukebox" mpd-tcp --config "$root$config") \
        || ! broker=$("$jukebox" mpd-tcp --mqtt --config "$root$config") \
        || ! radio=$("$jukebox" mpd-tcp --radio --config "$root$config"); then
        say "cannot read $config: $dropin left as it is" >&2
        exit 1
    fi
fi

changed=0
# Writes $2 to $1 (atomically) when it differs.
put() {
    if [ -f "$root$1" ] && [ "$(cat "$root$1")" = "$2" ]; then return 0; fi
    mkdir -p "$root$(dirname "$1")"
    printf '%s\n' "$2" > "$root$1.tmp"
    chmod 644 "$root$1.tmp"
    mv -f "$root$1.tmp" "$root$1"
    say "wrote $1"
    changed=1
}
drop() {
    if [ -e "$root$1" ]; then
        rm -f "$root$1"
        say "removed $1"
        changed=1
    fi
}

if [ -z "$listeners" ] && [ -z "$broker" ] && [ -z "$radio" ]; then
    drop "$dropin"
    rmdir "$root$dropin_dir" 2>/dev/null || true
    drop "$avahi"
else
    port=""
    loopback_only=1
    binds=""
    # One "ADDRESS PORT" line each; every listener shares the one port.
    [ -n "$listeners" ] && while read -r address p; do
        case "$p" in
            ""|*[!0-9]*) say "unexpected output from $jukebox mpd-tcp: $address $p" >&2; exit 1 ;;
        esac
        port=$p
        binds="$binds $address"
        case "$address" in
            127.*|::1) ;;
            *) loopback_only=0 ;;
        esac
    done <<EOF
$listeners
EOF
    # The LAN: private IPv4 ranges, carrier-grade NAT, link-local, IPv6 unique-local.
    lan="link-local 10.0.0.0/8 172.16.0.0/12 192.168.0.0/16 100.64.0.0/10 fc00::/7"
    if [ "$loopback_only" -eq 1 ]; then
        allow="localhost"
    else
        allow="localhost $lan"
    fi
    what=""
    if [ -n "$listeners" ]; then
        what="MPD TCP listeners on$binds, port $port"
        bindrule="# bind() only on the MPD port (TCP; UDP not at all).
SocketBindDeny=any
SocketBindAllow=tcp:$port"
    else
        bindrule="# No bind() at all: the MQTT client only connects.
SocketBindDeny=any"
    fi
    # One "HOST PORT" line each: the config's broker, and brokers that still hold what an earlier
    # config announced (until the player has taken it away).
    [ -n "$broker" ] && while read -r bhost bport; do
        case "$bport" in
            ""|*[!0-9]*) say "unexpected output from $jukebox mpd-tcp --mqtt: $bhost $bport" >&2; exit 1 ;;
        esac
        what="${what:+$what; }an MQTT broker at $bhost port $bport"
        case "$bhost" in
            localhost|127.*|::1) ;;
            *[!0-9a-fA-F.:]*) case " $allow " in *" fc00::/7 "*) ;; *) allow="$allow $lan" ;; esac ;;
            *) case " $allow " in *" $bhost "*) ;; *) allow="$allow $bhost" ;; esac ;;
        esac
    done <<EOF
$broker
EOF
    families="AF_UNIX AF_INET AF_INET6"
    if [ -n "$radio" ]; then
        # Streams: a station can be anywhere, and the resolver asks the kernel which address
        # families are up (getaddrinfo's AI_ADDRCONFIG, over netlink).
        what="${what:+$what; }internet radio (\"radio\": {\"network\": true} or a URL in \"music\")"
        allow="any"
        families="AF_UNIX AF_INET AF_INET6 AF_NETLINK"
        [ -n "$listeners" ] || bindrule="# No bind() at all: streams and the MQTT client only connect.
SocketBindDeny=any"
    fi
    put "$dropin" "# Written by mpd-network (jukebox): $config has $what.
# It removes this file when the config has none of them. Do not edit: changes go in another drop-in
# (e.g. override.conf, which sorts after this one), or widen IPAddressAllow there.
[Service]
PrivateNetwork=no
RestrictAddressFamilies=$families
IPAddressDeny=any
IPAddressAllow=$allow
$bindrule"
    if [ "$loopback_only" -eq 0 ] && [ -d "$root$avahi_dir" ]; then
        put "$avahi" "<?xml version=\"1.0\" standalone='no'?>
<!DOCTYPE service-group SYSTEM \"avahi-service.dtd\">
<!-- Written by mpd-network (jukebox): announces its MPD listener; removed with the listener. -->
<service-group>
  <name replace-wildcards=\"yes\">jukebox on %h</name>
  <service>
    <type>_mpd._tcp</type>
    <port>$port</port>
  </service>
</service-group>"
    else
        drop "$avahi"
    fi
fi

if [ "$changed" -eq 1 ] && [ -z "$root" ] && [ -d /run/systemd/system ]; then
    systemctl daemon-reload
    say "restart jukebox for it to apply: systemctl restart jukebox"
fi
exit 0
