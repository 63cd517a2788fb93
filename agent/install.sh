#!/bin/sh
# Installs the deployer agent @@VERSION@@ on a Linux host: the one-file agent (checked against its SHA-256), a wrapper,
# its state folder, a systemd unit started at boot, and enrolls the host once. Served by the service at
# /agent/install.sh; run it as root:
#
#   curl -fsSL <server>/agent/install.sh | sudo sh -s -- --enroll det_... [--name NAME]
#
# Run it again to upgrade in place (the agent keeps its identity); --uninstall removes everything it wrote.
# Exit codes: 0 installed and started; 1 failed (the message names what is missing or wrong); 2 bad usage;
# 3 installed and enrolled, but there is no running systemd to start it (a container): the message gives the command
# to run the agent in the foreground.
set -eu

VERSION='@@VERSION@@'
SHA256='@@SHA256@@'
FILE='@@FILE@@'
BUNDLE_PATH='@@PATH@@'
DEFAULT_SERVER='@@SERVER@@'
NODE_MAJOR=22
UNIT_NAME=deployer-agent.service

usage() {
  cat <<EOF
Installs the deployer agent $VERSION on this Linux host (Node.js $NODE_MAJOR or later, systemd).

Usage: curl -fsSL <server>/agent/install.sh | sudo sh -s -- --enroll TOKEN [options]

Options:
  --server URL     the service (default: ${DEFAULT_SERVER:-none, so it is required})
  --enroll TOKEN   enrollment token (det_...); needed for the first install only
  --name NAME      the target's name (default: this host's name)
  --node PATH      the Node.js $NODE_MAJOR+ to run the agent with (default: node on PATH)
  --prefix DIR     write every file under DIR instead of / (tests, unprivileged tries; root not needed)
  --user USER      the user the agent runs as (default root)
  --uninstall      stop the agent and remove everything this script wrote
  -h, --help       print this help

Writes: <prefix>/opt/deployer-agent/ (the agent and a wrapper), <prefix>/var/lib/deployer-agent/ (its identity and
command records, mode 0700), <prefix>/etc/deployer-agent/agent.env (extra agent flags in DEPLOYER_AGENT_ARGS),
<prefix>/etc/systemd/system/$UNIT_NAME.
Exit codes: 0 installed and running; 1 failed; 2 bad usage; 3 installed and enrolled but no running systemd
(the command to run the agent in the foreground is printed).
EOF
}

say() { printf '%s\n' "deployer-agent: $*"; }
fail() {
  printf '%s\n' "deployer-agent: error: $*" >&2
  exit 1
}
usage_error() {
  printf '%s\n\n' "deployer-agent: $*" >&2
  usage >&2
  exit 2
}

SERVER=$DEFAULT_SERVER
ENROLL=''
NAME=''
NODE=''
PREFIX=''
RUN_USER=root
UNINSTALL=0
while [ $# -gt 0 ]; do
  case $1 in
    --server | --enroll | --name | --node | --prefix | --user)
      [ $# -ge 2 ] || usage_error "$1 needs a value"
      case $1 in
        --server) SERVER=$2 ;;
        --enroll) ENROLL=$2 ;;
        --name) NAME=$2 ;;
        --node) NODE=$2 ;;
        --prefix) PREFIX=$2 ;;
        --user) RUN_USER=$2 ;;
      esac
      shift 2
      ;;
    --server=* | --enroll=* | --name=* | --node=* | --prefix=* | --user=*)
      value=${1#*=}
      case $1 in
        --server=*) SERVER=$value ;;
        --enroll=*) ENROLL=$value ;;
        --name=*) NAME=$value ;;
        --node=*) NODE=$value ;;
        --prefix=*) PREFIX=$value ;;
        --user=*) RUN_USER=$value ;;
      esac
      shift
      ;;
    --uninstall) UNINSTALL=1 && shift ;;
    -h | --help) usage && exit 0 ;;
    *) usage_error "unknown option '$1'" ;;
  esac
done

if [ -n "$PREFIX" ]; then
  mkdir -p "$PREFIX" || fail "cannot create the prefix $PREFIX"
  PREFIX=$(cd "$PREFIX" && pwd) || fail "cannot use the prefix $PREFIX"
  [ "$PREFIX" = / ] && PREFIX=''
fi
OPT_DIR=$PREFIX/opt/deployer-agent
STATE_DIR=$PREFIX/var/lib/deployer-agent
ETC_DIR=$PREFIX/etc/deployer-agent
ENV_FILE=$ETC_DIR/agent.env
UNIT_DIR=$PREFIX/etc/systemd/system
UNIT_FILE=$UNIT_DIR/$UNIT_NAME
AGENT=$OPT_DIR/$FILE
WRAPPER=$OPT_DIR/deployer-agent
# The folders this script made (one a line), so that --uninstall removes them and no folder that was there before.
CREATED=$OPT_DIR/.created-folders

if [ -z "$PREFIX" ] && [ "$(id -u)" != 0 ]; then
  fail "root is needed to write /opt, /var/lib, /etc and the systemd unit: run it with sudo (curl ... | sudo sh -s -- ...), or pass --prefix DIR to install under DIR"
fi

# A running systemd: systemctl on PATH and answering (a container may have systemctl without systemd running).
has_systemd() {
  command -v systemctl >/dev/null 2>&1 && systemctl show-environment >/dev/null 2>&1
}

# --- uninstall ---------------------------------------------------------------------------------------------------
if [ "$UNINSTALL" = 1 ]; then
  if has_systemd; then
    systemctl disable --now "$UNIT_NAME" >/dev/null 2>&1 || true
    say "stopped and disabled $UNIT_NAME"
  fi
  folders=''
  [ -f "$CREATED" ] && folders=$(cat "$CREATED")
  rm -f "$UNIT_FILE" "$ENV_FILE" "$AGENT" "$WRAPPER" "$CREATED"
  rm -rf "$STATE_DIR"
  rmdir "$ETC_DIR" "$OPT_DIR" 2>/dev/null || true
  # The folders this script made, deepest first; a folder something else has put files in is kept.
  printf '%s\n' "$folders" | sort -r | while IFS= read -r folder; do
    if [ -n "$folder" ] && [ -d "$folder" ] && ! rmdir "$folder" 2>/dev/null; then
      say "kept $folder: it is not empty"
    fi
  done
  if has_systemd; then systemctl daemon-reload || true; fi
  say "removed $OPT_DIR, $STATE_DIR (the agent's identity and records), $ENV_FILE and $UNIT_FILE"
  say "the target stays listed on the server until it is deleted there (console or DELETE /api/v1/targets/{id})"
  exit 0
fi

# --- what the install needs --------------------------------------------------------------------------------------
[ -n "$SERVER" ] || usage_error "--server URL is required (this script was served without the service's public URL)"
case $SERVER in
  http://* | https://*) SERVER=${SERVER%/} ;;
  *) usage_error "--server must be an http:// or https:// URL (got '$SERVER')" ;;
esac
case $NAME in
  *[!A-Za-z0-9._@:+\ -]*) usage_error "--name may hold letters, digits, spaces and . _ @ : + - only (got '$NAME')" ;;
esac
[ "$(id -u "$RUN_USER" 2>/dev/null || true)" != '' ] || fail "--user $RUN_USER: there is no such user (create it first, e.g. useradd --system $RUN_USER)"

if command -v curl >/dev/null 2>&1; then
  download() { curl -fsSL --retry 3 -o "$2" "$1"; }
elif command -v wget >/dev/null 2>&1; then
  download() { wget -q -O "$2" "$1"; }
else
  fail "neither curl nor wget is installed; install one (apt-get install curl, dnf install curl, apk add curl)"
fi
if command -v sha256sum >/dev/null 2>&1; then
  checksum() { sha256sum "$1" | cut -d ' ' -f 1; }
elif command -v shasum >/dev/null 2>&1; then
  checksum() { shasum -a 256 "$1" | cut -d ' ' -f 1; }
else
  fail "neither sha256sum nor shasum is installed to check the download; install coreutils (apt-get install coreutils) or perl (shasum)"
fi

if [ -z "$NODE" ]; then
  NODE=$(command -v node 2>/dev/null) ||
    fail "Node.js $NODE_MAJOR or later is needed and there is no node on PATH; install it (https://nodejs.org/en/download, or your distribution's nodejs package) or pass --node /path/to/node"
fi
case $NODE in
  /*) ;;
  */*) NODE=$(cd "$(dirname "$NODE")" && pwd)/$(basename "$NODE") ;;
  *) NODE=$(command -v "$NODE" 2>/dev/null) || fail "Node.js $NODE_MAJOR or later is needed: no '$NODE' on PATH" ;;
esac
[ -x "$NODE" ] || fail "Node.js $NODE_MAJOR or later is needed: $NODE is not an executable file (install Node.js $NODE_MAJOR+, https://nodejs.org/en/download, or pass --node /path/to/node)"
NODE_VERSION=$("$NODE" -p process.versions.node 2>/dev/null) || fail "Node.js $NODE_MAJOR or later is needed: $NODE does not run"
case ${NODE_VERSION%%.*} in
  '' | *[!0-9]*) fail "Node.js $NODE_MAJOR or later is needed: $NODE printed '$NODE_VERSION' as its version" ;;
esac
[ "${NODE_VERSION%%.*}" -ge "$NODE_MAJOR" ] ||
  fail "Node.js $NODE_MAJOR or later is needed: $NODE is $NODE_VERSION (install Node.js $NODE_MAJOR+, https://nodejs.org/en/download, or pass --node /path/to/node)"

# These go into the unit file and the wrapper as they are: nothing systemd or sh would read as quoting or specifiers.
for value in "$SERVER" "$PREFIX" "$NODE"; do
  case $value in
    *[[:space:]\'\"\\%\$\`]*) usage_error "'$value' holds a space, quote, backslash, % or \$; use a path or URL without them" ;;
  esac
done

# --- download and check ------------------------------------------------------------------------------------------
TMP=$(mktemp -d) || fail "cannot create a temporary folder (mktemp)"
trap 'rm -rf "$TMP"' EXIT
say "downloading the agent $VERSION from $SERVER$BUNDLE_PATH"
download "$SERVER$BUNDLE_PATH" "$TMP/$FILE" || fail "could not download $SERVER$BUNDLE_PATH"
GOT=$(checksum "$TMP/$FILE")
[ "$GOT" = "$SHA256" ] ||
  fail "checksum mismatch: $SERVER$BUNDLE_PATH has SHA-256 $GOT, this script expects $SHA256; nothing was installed (fetch install.sh again, or check what is between this host and $SERVER)"
say "checksum verified (SHA-256 $SHA256)"

# --- install -----------------------------------------------------------------------------------------------------
# Creates a folder (and its missing parents), noting each one made in $CREATED once $OPT_DIR exists.
made=''
make_dir() {
  missing=''
  dir=$1
  while [ -n "$dir" ] && [ "$dir" != / ] && [ ! -d "$dir" ]; do
    missing="$dir
$missing"
    dir=$(dirname "$dir")
  done
  mkdir -p "$1" || fail "cannot create $1"
  made="$made$missing"
}
make_dir "$OPT_DIR"
make_dir "$STATE_DIR"
make_dir "$ETC_DIR"
make_dir "$UNIT_DIR"
if [ -n "$made" ]; then
  printf '%s' "$made" | grep -v '^$' >>"$CREATED" || true
fi
chmod 0755 "$OPT_DIR"
chmod 0700 "$STATE_DIR"

UPGRADE=0
[ -f "$UNIT_FILE" ] && UPGRADE=1
if ! { cp "$TMP/$FILE" "$AGENT.new" && chmod 0755 "$AGENT.new" && mv -f "$AGENT.new" "$AGENT"; }; then
  fail "cannot write $AGENT"
fi
cat >"$WRAPPER.new" <<EOF
#!/bin/sh
# The deployer agent $VERSION: see $WRAPPER --help.
exec '$NODE' '$AGENT' "\$@"
EOF
if ! { chmod 0755 "$WRAPPER.new" && mv -f "$WRAPPER.new" "$WRAPPER"; }; then
  fail "cannot write $WRAPPER"
fi
if [ ! -f "$ENV_FILE" ]; then
  (umask 077 && cat >"$ENV_FILE" <<EOF
# Extra flags for the deployer agent (see $WRAPPER --help), e.g.
# DEPLOYER_AGENT_ARGS=--concurrency 8 --transport polling
DEPLOYER_AGENT_ARGS=
EOF
  ) || fail "cannot write $ENV_FILE"
fi
chmod 0600 "$ENV_FILE"
say "installed $AGENT (Node.js $NODE_VERSION at $NODE)"

# --- enroll once ---------------------------------------------------------------------------------------------------
NAME_ARG=''
[ -n "$NAME" ] && NAME_ARG=$NAME
if [ -f "$STATE_DIR/state.json" ] && [ -z "$ENROLL" ]; then
  say "upgrading in place: keeping the identity in $STATE_DIR"
fi
if [ -f "$STATE_DIR/state.json" ] || [ -n "$ENROLL" ]; then
  # The token goes in the environment, not on a command line other users can read.
  if [ -n "$NAME_ARG" ]; then
    DEPLOYER_AGENT_ENROLL_TOKEN=$ENROLL "$NODE" "$AGENT" --enroll-only --server "$SERVER" --state-dir "$STATE_DIR" --name "$NAME_ARG"
  else
    DEPLOYER_AGENT_ENROLL_TOKEN=$ENROLL "$NODE" "$AGENT" --enroll-only --server "$SERVER" --state-dir "$STATE_DIR"
  fi || fail "enrollment with $SERVER failed (the agent's message is above); the agent is installed but not enrolled: run this script again with --enroll TOKEN (a new token from the console's Targets page)"
else
  fail "this host is not enrolled yet: pass --enroll TOKEN (an enrollment token from the console's Targets page or POST /api/v1/targets/enrollment-tokens); the agent is installed in $OPT_DIR"
fi
[ "$RUN_USER" = root ] || chown -R "$RUN_USER" "$STATE_DIR" || fail "cannot give $STATE_DIR to $RUN_USER"

# --- the service -------------------------------------------------------------------------------------------------
NAME_FLAG=''
[ -n "$NAME" ] && NAME_FLAG=" --name \"$NAME\""
cat >"$UNIT_FILE.new" <<EOF
# The deployer agent $VERSION, written by $SERVER/agent/install.sh (run it again to upgrade, with --uninstall to remove).
[Unit]
Description=Deployer agent (runs deployments from $SERVER)
Documentation=$SERVER/api/v1/docs
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
User=$RUN_USER
EnvironmentFile=-$ENV_FILE
ExecStart=$NODE $AGENT --server $SERVER --state-dir $STATE_DIR$NAME_FLAG \$DEPLOYER_AGENT_ARGS
Restart=always
RestartSec=1
# SIGTERM to the agent only: it lets running commands finish (--shutdown-grace-seconds, 30), kills the rest
# (--kill-grace-seconds, 5), delivers their results (up to 10 s) and says goodbye; after that systemd kills what is left.
KillMode=mixed
TimeoutStopSec=60
StandardOutput=journal
StandardError=journal
SyslogIdentifier=deployer-agent

[Install]
WantedBy=multi-user.target
EOF
mv -f "$UNIT_FILE.new" "$UNIT_FILE" || fail "cannot write $UNIT_FILE"
chmod 0644 "$UNIT_FILE"
say "wrote $UNIT_FILE"

FOREGROUND="$WRAPPER --server $SERVER --state-dir $STATE_DIR"
[ -n "$NAME" ] && FOREGROUND="$FOREGROUND --name '$NAME'"
if ! has_systemd; then
  say "there is no running systemd here (no systemctl, or it cannot reach systemd: a container?), so the agent was not started."
  say "run it in the foreground (or under your supervisor) with:"
  printf '%s\n' "  $FOREGROUND"
  exit 3
fi
systemctl daemon-reload || fail "systemctl daemon-reload failed"
if [ "$UPGRADE" = 1 ]; then
  systemctl enable "$UNIT_NAME" || fail "systemctl enable $UNIT_NAME failed"
  systemctl restart "$UNIT_NAME" || fail "systemctl restart $UNIT_NAME failed (see journalctl -u deployer-agent)"
  say "upgraded to $VERSION and restarted $UNIT_NAME (logs: journalctl -u deployer-agent -f)"
else
  systemctl enable --now "$UNIT_NAME" || fail "systemctl enable --now $UNIT_NAME failed (see journalctl -u deployer-agent)"
  say "started $UNIT_NAME (logs: journalctl -u deployer-agent -f)"
fi
