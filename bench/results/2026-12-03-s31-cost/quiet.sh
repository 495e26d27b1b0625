#!/bin/bash
# quiet.sh LOG CMD...: pause the other heavy processes (builds, ctest, test binaries, other zsim
# runs and the scripts that start them), also those that start during the run, then resume
# exactly the pids paused (also on failure). This script's own process group is left alone.
# Session 31: the watch loop forks nothing but one pgrep per round (the pgid comes from
# /proc/PID/stat, the paused set is a bash array); session 27's ran ps and grep for every
# matching pid every 0.3 s, about 0.4 of a core taken from the measured command (idle.txt).
log=$1; shift
read -r -a me < /proc/$$/stat
mypg=${me[4]}
list=$(mktemp)
: > "$list"
pat='cc1plus|ctest|/build/|zsim|ninja|run_openzfs23|run_accuracy|mpirun|xxh128sum|duperemove'
declare -A seen
pause_new() {
  local p st
  for p in $(pgrep -f "$pat"); do
    [ -n "${seen[$p]:-}" ] && continue
    # /proc/PID/stat: pid (comm) state ppid pgrp ...; comm may hold spaces, so cut at the last ')'.
    { read -r st < "/proc/$p/stat"; } 2>/dev/null || continue
    st=${st##*) }
    read -r -a f <<< "$st"
    seen[$p]=1  # ours or paused: not looked at again
    [ "${f[2]}" = "$mypg" ] && continue
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
