#!/usr/bin/env bash
# Installs the Debian packages given as arguments that are not installed yet (apt-get, with sudo when not
# root; an `apt-get update` only when the first attempt fails). Sourced or run by scripts/build.sh and
# scripts/fuzz.sh.
set -euo pipefail
missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "attnbench: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 ||
    { $sudo apt-get update -q >&2 && $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; }
fi
