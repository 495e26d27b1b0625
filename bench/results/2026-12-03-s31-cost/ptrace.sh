#!/bin/bash
# ptrace.sh BIN DIR N: the probe's codec total over the codec CPU the scan measured, N runs.
for i in $(seq $3); do ZSIM_TRACE_PROBE=1 "$1" scan "$2" --json --progress --threads 2 2>&1 >/dev/null | tr '\r' '\n' | grep TRACE | tail -1 | awk '{split($5,a,"="); split($8,b,"="); printf "%.3f ", b[2]/a[2]}'; done; echo
