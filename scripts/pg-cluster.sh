#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests (issue 11), from Debian's `postgresql`
# package (installed when missing and run as root); no Docker.
#   scripts/pg-cluster.sh start DIR   initdb into DIR/data, start on a free port of
#                                      127.0.0.1, create database `graft`, print its URL
#   scripts/pg-cluster.sh stop DIR    stop it (DIR can then be deleted)
#   scripts/pg-cluster.sh resume DIR  start a stopped cluster again on its port (the
#                                      fault tests stop and restart PostgreSQL under Graft)
# PostgreSQL refuses to run as root: as root, the cluster runs as the `postgres` user.
set -euo pipefail
usage="usage: scripts/pg-cluster.sh start|stop|resume DIR"
cmd=${1:?$usage}
dir=${2:?$usage}
pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
bin=$(pg_bin)
if [ -z "$bin" ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "PostgreSQL is not installed: apt-get install postgresql (Debian)" >&2
    exit 1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql > /dev/null
  bin=$(pg_bin)
fi
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
case $cmd in
  start)
    mkdir -p "$dir"
    if [ "$(id -u)" = 0 ]; then
      chown postgres "$dir"
      # the `postgres` user must reach DIR: a private temp dir's parent lets it through
      chmod o+x "$(dirname "$(realpath "$dir")")"
    fi
    as_pg "$bin/initdb" -D "$dir/data" -U graft --auth=trust -E UTF8 --no-instructions > "$dir/initdb.log"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/data/server.log" -w \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off" start > /dev/null
    as_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U graft graft
    echo "$port" > "$dir/port"
    echo "postgres://graft@127.0.0.1:$port/graft"
    ;;
  stop)
    as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop > /dev/null
    ;;
  resume)
    port=$(cat "$dir/port")
    as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/data/server.log" -w \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off" start > /dev/null
    ;;
  *)
    echo "$usage" >&2
    exit 2
    ;;
esac
