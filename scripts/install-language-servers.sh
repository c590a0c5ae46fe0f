#!/usr/bin/env bash
# Install the language servers the analyzer gate's end-to-end tests run
# (tests/e2e/test_language_gates.py), and bubblewrap, the sandbox of the
# model's commands (tests/e2e/test_sandbox.py), once:
#   Debian: gopls, golang-go, clangd, shellcheck, bubblewrap (apt-get, only the missing
#           ones, only as root; otherwise it names them and fails);
#   npm:    typescript-language-server, typescript and bash-language-server,
#           pinned, into .tools/node_modules (gitignored).
# A stamp (.tools/.installed) records what was installed: a later call with
# the same pins returns at once.
#
# The pins: typescript-language-server 6.x needs Node >= 22.22, 5.3 runs on
# Node 20 (Debian 12's is 20.x here); it drives tsserver, which npm's
# typescript 7.x (the native Go compiler) does not ship, so typescript is
# pinned to the last 5.x.
set -euo pipefail
cd "$(dirname "$0")/.."

TOOLS=${REIN_TOOLS:-$PWD/.tools}
NPM_PACKAGES=(
  typescript-language-server@5.3.0
  typescript@5.9.3
  bash-language-server@5.8.1
)
DEBIAN_PACKAGES=(gopls golang-go clangd shellcheck bubblewrap)
STAMP=$TOOLS/.installed
WANT="${DEBIAN_PACKAGES[*]} | ${NPM_PACKAGES[*]}"

log() { echo "[install-language-servers] $*" >&2; }

if [[ -f $STAMP && $(cat "$STAMP") == "$WANT" ]]; then
  exit 0
fi

missing=()
for pkg in "${DEBIAN_PACKAGES[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    log "missing Debian packages: ${missing[*]} (run 'apt-get install -y ${missing[*]}' as root)"
    exit 1
  fi
  log "apt-get install ${missing[*]}"
  apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=300 --no-install-recommends "${missing[@]}" >&2
fi

mkdir -p "$TOOLS"
[[ -f $TOOLS/package.json ]] || printf '{"name":"rein-test-tools","private":true}\n' >"$TOOLS/package.json"
log "npm install ${NPM_PACKAGES[*]} into $TOOLS"
# Three tries: the registry drops a connection now and then (ECONNRESET).
for try in 1 2 3; do
  if npm install --prefix "$TOOLS" --save-exact --no-audit --no-fund --loglevel=error "${NPM_PACKAGES[@]}" >&2; then
    break
  fi
  if [[ $try == 3 ]]; then exit 1; fi
  log "npm install failed (try $try of 3): trying again"
  sleep $((try * 5))
done
echo "$WANT" >"$STAMP"
