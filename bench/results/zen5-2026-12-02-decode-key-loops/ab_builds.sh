#!/bin/bash
# usage: abc.sh reps -- bench args ; builds in $BUILDS (space-separated), alternated per rep; prints medians and paired ratios to the first
n=$1; shift 2
declare -A r
for i in $(seq $n); do for b in $BUILDS; do
  t=$($b/tools/attnforge/attnforge bench "$@" --threads 1 --chosen-only --no-interpreter --min-seconds 0.3 2>&1 | grep " \* " | awk "{print \$(${COL:-NF-4})}")
  r[$b]+="$t "; done; done
first=${BUILDS%% *}
out="$*:"
for b in $BUILDS; do
  med=$(echo ${r[$b]} | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
  rat=$(paste <(echo ${r[$first]} | tr ' ' '\n') <(echo ${r[$b]} | tr ' ' '\n') | awk '{print $2/$1}' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
  out+="  $(basename $b) $med ($rat)"
done
echo "$out"
