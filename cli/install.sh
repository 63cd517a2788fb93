#!/bin/sh
# Installs the deployer command line @@VERSION@@ (one file, run by Node 22 or newer) as `deployer`.
#
#   curl -fsSL <server>/cli/install.sh | sh
#   curl -fsSL <server>/cli/install.sh | sh -s -- --bin-dir "$HOME/bin"
#
# Options:
#   --bin-dir DIR   where to put `deployer` (default /usr/local/bin as root, else ~/.local/bin)
#   --server URL    the service to download from (default: @@SERVER@@)
#
# The file is checked against its SHA-256 before it is installed.
set -eu

VERSION='@@VERSION@@'
SHA256='@@SHA256@@'
FILE='@@FILE@@'
FILE_PATH='@@PATH@@'
SERVER='@@SERVER@@'
BIN_DIR=''

fail() {
  printf 'install.sh: %s\n' "$1" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case $1 in
    --bin-dir) [ $# -ge 2 ] || fail '--bin-dir needs a folder'; BIN_DIR=$2; shift 2 ;;
    --bin-dir=*) BIN_DIR=${1#--bin-dir=}; shift ;;
    --server) [ $# -ge 2 ] || fail '--server needs a URL'; SERVER=$2; shift 2 ;;
    --server=*) SERVER=${1#--server=}; shift ;;
    -h | --help) printf 'Usage: install.sh [--bin-dir DIR] [--server URL]\n'; exit 0 ;;
    *) fail "unknown option $1 (options: --bin-dir DIR, --server URL)" ;;
  esac
done

[ -n "$SERVER" ] || fail 'no server known: pass --server https://your-deployer'
SERVER=${SERVER%/}

if [ -z "$BIN_DIR" ]; then
  if [ "$(id -u)" = 0 ]; then BIN_DIR=/usr/local/bin; else BIN_DIR=$HOME/.local/bin; fi
fi

command -v node >/dev/null 2>&1 || fail 'Node.js 22 or newer is required (node not found)'
NODE_MAJOR=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
[ "$NODE_MAJOR" -ge 22 ] 2>/dev/null || fail "Node.js 22 or newer is required (found $(node --version 2>/dev/null || echo none))"

mkdir -p "$BIN_DIR" || fail "cannot create $BIN_DIR"
TMP=$(mktemp "$BIN_DIR/.deployer.XXXXXX") || fail "cannot write to $BIN_DIR"
trap 'rm -f "$TMP"' EXIT INT TERM

URL="$SERVER$FILE_PATH"
if command -v curl >/dev/null 2>&1; then
  curl -fsSL -o "$TMP" "$URL" || fail "download of $URL failed"
elif command -v wget >/dev/null 2>&1; then
  wget -q -O "$TMP" "$URL" || fail "download of $URL failed"
else
  fail 'curl or wget is required'
fi

if command -v sha256sum >/dev/null 2>&1; then
  ACTUAL=$(sha256sum "$TMP" | cut -d ' ' -f 1)
elif command -v shasum >/dev/null 2>&1; then
  ACTUAL=$(shasum -a 256 "$TMP" | cut -d ' ' -f 1)
else
  ACTUAL=$(node -e 'process.stdout.write(require("crypto").createHash("sha256").update(require("fs").readFileSync(process.argv[1])).digest("hex"))' "$TMP")
fi
[ "$ACTUAL" = "$SHA256" ] || fail "checksum mismatch for $FILE: expected $SHA256, got $ACTUAL (nothing installed)"

chmod 0755 "$TMP"
mv -f "$TMP" "$BIN_DIR/deployer"
trap - EXIT INT TERM
printf 'Installed deployer %s to %s/deployer\n' "$VERSION" "$BIN_DIR"
case ":$PATH:" in
  *":$BIN_DIR:"*) ;;
  *) printf 'Add %s to your PATH to run it as deployer.\n' "$BIN_DIR" ;;
esac
