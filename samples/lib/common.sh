# shellcheck shell=bash disable=SC2034
# Shared helpers of the samples/build-* scripts. Sourced, not run.
#
# A build script sets SAMPLE_NAME (and SAMPLE_NEEDS_ROOT, the reason, if it needs root), calls
# sample_parse_args "$@" (which sets OUTDIR and SIZE and
# exits early, printing the stored summary, when OUTDIR already holds a complete build of that
# size), builds into OUTDIR, then calls sample_finish [manifest.py options...] to checksum the
# result, write the stamp OUTDIR/.zsim-sample and print the summary line.

set -eEuo pipefail

# No silent death: any command that fails where `set -e` would end the script (a pipeline under
# pipefail, a failing command inside $(...), a function returning non-zero) says what failed and
# where before the script exits with its status. Inside a subshell or command substitution the
# trap only passes the status on; the shell that runs the script names the failed line, once.
sample_on_error() {
  local rc=$1 where=$2 cmd=$3
  if ((BASH_SUBSHELL == 0)); then
    echo "build-${SAMPLE_NAME:-sample}: error: $where: '$cmd' failed (exit $rc)" >&2
  fi
  exit "$rc"
}
trap 'sample_on_error $? "${BASH_SOURCE[0]##*/}:$LINENO" "$BASH_COMMAND"' ERR

SAMPLES_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SAMPLE_CACHE=${ZSIM_SAMPLES_CACHE:-/var/cache/zsim-samples}
# Fixed instant for every timestamp a sample carries: 2024-01-01 00:00:00 UTC.
SAMPLE_EPOCH=1704067200
export SOURCE_DATE_EPOCH=$SAMPLE_EPOCH
export LC_ALL=C TZ=UTC

sample_die() {
  echo "build-$SAMPLE_NAME: error: $*" >&2
  exit 1
}

sample_log() {
  echo "build-$SAMPLE_NAME: $*" >&2
}

sample_usage() {
  cat >&2 <<USAGE
usage: build-$SAMPLE_NAME OUTDIR [--size small|medium|large]
Builds the '$SAMPLE_NAME' sample dataset into OUTDIR (default size: small). Idempotent: an OUTDIR
that already holds a complete build of the same size is left alone and its summary printed.
USAGE
  exit 2
}

sample_need_root() {
  if [[ $(id -u) -ne 0 ]]; then
    sample_die "needs root ($*); run it as root or with sudo"
  fi
}

# sample_first_match GLOB: prints the first existing path the glob matches, or nothing; never
# fails (an empty cache is the normal first run, not an error).
sample_first_match() {
  local IFS= m
  local -a matches
  shopt -s nullglob
  matches=($1)
  shopt -u nullglob
  for m in "${matches[@]}"; do
    [[ -e $m ]] && { printf '%s\n' "$m"; return 0; }
  done
  return 0
}

# sample_debian_mirror: the Debian archive this machine's apt uses for bookworm main, as apt
# itself has it configured ($ZSIM_DEBIAN_MIRROR overrides). Read from apt's own view first
# (`apt-cache policy`, which lists every configured and fetched source), then from the source
# files (one-line and deb822 formats). No mirror is written into the project.
sample_debian_mirror() {
  if [[ -n ${ZSIM_DEBIAN_MIRROR:-} ]]; then
    printf '%s\n' "$ZSIM_DEBIAN_MIRROR"
    return 0
  fi
  local m
  m=$(apt-cache policy 2>/dev/null |
    awk '$3 == "bookworm/main" && $4 ~ /^(amd64|all)$/ {print $2; exit}' || true)
  if [[ -z $m ]]; then
    m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i ~ /:\/\//) {
             if ($(i + 1) == "bookworm") { print $i; exit } break } }' || true)
  fi
  if [[ -z $m ]]; then
    m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '
      function flush() { if (uri != "" && suites ~ /(^| )bookworm( |$)/ && types ~ /deb( |$)/) { print uri; found = 1; exit } }
      /^[ \t]*$/ { flush(); uri = ""; suites = ""; types = ""; next }
      /^URIs:/ { uri = $2 } /^Suites:/ { $1 = ""; suites = $0 } /^Types:/ { $1 = ""; types = $0 }
      END { if (!found) flush() }' || true)
  fi
  [[ -n $m ]] || return 1
  printf '%s\n' "${m%/}"
}

sample_need_cmd() {
  local c
  for c in "$@"; do
    command -v "$c" >/dev/null 2>&1 ||
      sample_die "command '$c' not found (install the Debian packages listed in samples/README.md)"
  done
}

# sample_parse_args "$@": sets OUTDIR and SIZE; exits 0 when the build is already complete.
sample_parse_args() {
  OUTDIR=""
  SIZE=small
  while (($#)); do
    case $1 in
      --size) (($# >= 2)) || sample_usage; SIZE=$2; shift 2 ;;
      --size=*) SIZE=${1#--size=}; shift ;;
      -h | --help) sample_usage ;;
      -*) echo "build-$SAMPLE_NAME: unknown option $1" >&2; sample_usage ;;
      *) [[ -z $OUTDIR ]] || sample_usage; OUTDIR=$1; shift ;;
    esac
  done
  [[ -n $OUTDIR ]] || sample_usage
  case $SIZE in small | medium | large) ;; *) sample_die "unknown size '$SIZE'" ;; esac
  mkdir -p "$OUTDIR"
  OUTDIR=$(cd "$OUTDIR" && pwd)
  local stamp=$OUTDIR/.zsim-sample
  if [[ -f $stamp ]] && grep -qx "name=$SAMPLE_NAME" "$stamp" && grep -qx "size=$SIZE" "$stamp" &&
    grep -q '^summary=' "$stamp"; then
    sed -n 's/^summary=//p' "$stamp"
    exit 0
  fi
  [[ -z ${SAMPLE_NEEDS_ROOT:-} ]] || sample_need_root "$SAMPLE_NEEDS_ROOT"
  # Only ever wipe a directory that is empty or that a previous (possibly partial) build made.
  if [[ -n $(ls -A "$OUTDIR") && ! -e $stamp && ! -e $OUTDIR/.zsim-sample.partial ]]; then
    sample_die "$OUTDIR is not empty and holds no zsim sample; refusing to overwrite it"
  fi
  find "$OUTDIR" -mindepth 1 -maxdepth 1 ! -name .zsim-sample.partial -exec rm -rf {} +
  printf 'name=%s\nsize=%s\n' "$SAMPLE_NAME" "$SIZE" >"$OUTDIR/.zsim-sample.partial"
  SAMPLE_T0=$(date +%s)
}

# sample_finish [--exclude GLOB]... : checksums OUTDIR, writes the stamp, prints the summary line.
# Extra "key=value" lines for the stamp can be put in SAMPLE_STAMP_EXTRA beforehand.
sample_finish() {
  local m
  m=$(python3 "$SAMPLES_DIR/lib/manifest.py" "$OUTDIR" "$@") || sample_die "manifest failed"
  local summary="sample=$SAMPLE_NAME size=$SIZE $m"
  {
    echo "name=$SAMPLE_NAME"
    echo "size=$SIZE"
    echo "built_seconds=$(($(date +%s) - SAMPLE_T0))"
    local e
    for e in "$@"; do echo "manifest_arg=$e"; done
    [[ -z ${SAMPLE_STAMP_EXTRA:-} ]] || printf '%s\n' "$SAMPLE_STAMP_EXTRA"
    echo "summary=$summary"
  } >"$OUTDIR/.zsim-sample.partial"
  mv "$OUTDIR/.zsim-sample.partial" "$OUTDIR/.zsim-sample"
  echo "$summary"
}
