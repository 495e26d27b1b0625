#!/bin/bash
# quiet.sh LOG CMD...: pause the other heavy processes (builds, ctest, test binaries, other zsim
# runs and the scripts that start them), also those that start during the run, then resume
# exactly the pids paused (also on failure). This script's own process group is left alone.
log=$1; shift
mypg=$(ps -o pgid= -p $$ | tr -d ' ')
list=$(mktemp)
: > "$list"
pat='cc1plus|chromium|ctest|/build/|zsim|ninja|run_openzfs23|run_accuracy|mpirun|xxh128sum|duperemove'
pause_new() {
  for p in $(pgrep -f "$pat"); do
    [ "$(ps -o pgid= -p "$p" 2>/dev/null | tr -d ' ')" = "$mypg" ] && continue
    grep -qx "$p" "$list" && continue
    kill -STOP "$p" 2>/dev/null && echo "$p" >> "$list"
  done
}
resume() {
  [ -n "${loop:-}" ] && kill "$loop" 2>/dev/null
  [ -s "$list" ] && kill -CONT $(cat "$list") 2>/dev/null
  echo "resumed: $(tr '\n' ' ' < "$list")" >> "$log"
  rm -f "$list"
}
trap resume EXIT
trap 'exit 1' INT TERM
{ echo "== $(date -u +%H:%M:%S) $*"; echo "uptime before: $(uptime)"; } >> "$log"
pause_new
( while true; do pause_new; sleep 0.3; done ) &
loop=$!
sleep 8
{ echo "paused: $(tr '\n' ' ' < "$list")"; echo "uptime after pausing (8 s): $(uptime)"; } >> "$log"
"$@" >> "$log" 2>&1
echo "rc $? uptime at the end: $(uptime)" >> "$log"
