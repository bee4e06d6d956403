#!/usr/bin/env bash
# Put `promtool` and `prometheus` in $VENV/tools/prometheus/bin for the ops tests
# (tests/unit/test_ops_files.py, tests/integration/test_prometheus.py).
#
# Touches nothing outside the project: it never installs a package, never starts or stops
# a service or a process. If both tools are already on PATH it uses those. Otherwise it
# fetches Debian's `prometheus` package file with `apt-get download` and unpacks it with
# `dpkg-deb -x` into the virtualenv (both binaries are static Go programs: they need no
# other file of the package). Only if apt has no package lists yet does it run
# `apt-get update`, which refreshes those lists and installs nothing; that needs root, so
# as a user it prints the command instead. `make clean` removes the copy.
set -euo pipefail
cd "$(dirname "$0")/../.."
dest="${VENV:-.venv}/tools/prometheus"

if [ -x "$dest/bin/promtool" ] && [ -x "$dest/bin/prometheus" ]; then
  exit 0
fi
if command -v promtool >/dev/null && command -v prometheus >/dev/null; then
  exit 0
fi
if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
  echo "promtool/prometheus not found: put both on PATH (https://prometheus.io/download/," >&2
  echo "or your OS's prometheus package); the ops tests fail without them." >&2
  exit 1
fi

root_opts=()
[ "$(id -u)" = 0 ] && root_opts=(-o APT::Sandbox::User=root)  # root downloads as itself
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
download() { (cd "$work" && apt-get download -qq "${root_opts[@]}" prometheus) >/dev/null 2>&1; }

echo "fetching Debian's prometheus package into $dest (for promtool; nothing is installed)" >&2
if ! download; then
  if [ "$(id -u)" != 0 ]; then
    echo "apt-get cannot find the prometheus package: run 'sudo apt-get update' (it only" >&2
    echo "refreshes apt's package lists), then 'make test' again." >&2
    exit 1
  fi
  echo "apt has no package lists yet: running 'apt-get update' (refreshes the lists only)" >&2
  apt-get update -qq >/dev/null
  download
fi
dpkg-deb -x "$work"/prometheus_*.deb "$work/root"
mkdir -p "$dest/bin"
cp "$work/root/usr/bin/promtool" "$work/root/usr/bin/prometheus" "$dest/bin/"
"$dest/bin/promtool" --version 2>&1 | head -1 >&2
