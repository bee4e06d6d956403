#!/usr/bin/env bash
# Make sure promtool (Debian package `prometheus`) is installed: the ops tests need it.
set -euo pipefail
command -v promtool >/dev/null && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing Debian's prometheus package (for promtool)..." >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus) >/dev/null
  # the package starts a server on :9090 on some systems; tests start their own
  (systemctl stop prometheus 2>/dev/null || service prometheus stop 2>/dev/null || true) >/dev/null 2>&1
  pkill -x prometheus 2>/dev/null || true
  exit 0
fi
echo "promtool not found: run 'sudo apt-get install prometheus' (or your OS's package)." >&2
echo "The ops tests fail without it." >&2
