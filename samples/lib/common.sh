# shellcheck shell=bash disable=SC2034
# Shared helpers of the samples/build-* scripts. Sourced, not run.
#
# A build script sets SAMPLE_NAME (and SAMPLE_NEEDS_ROOT, the reason, if it needs root), calls
# sample_parse_args "$@" (which sets OUTDIR and SIZE and
# exits early, printing the stored summary, when OUTDIR already holds a complete build of that
# size), builds into OUTDIR, then calls sample_finish [manifest.py options...] to checksum the
# result, write the stamp OUTDIR/.zsim-sample and print the summary line.

set -euo pipefail

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
