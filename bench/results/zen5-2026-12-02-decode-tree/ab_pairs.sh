#!/bin/bash
# usage: ab2.sh BUILD_A BUILD_B reps -- bench args...
A=$1/tools/attnforge/attnforge; B=$2/tools/attnforge/attnforge; n=$3; shift 4
one() { $1 bench "${@:2}" --threads 1 --chosen-only --no-interpreter --min-seconds 0.3 2>&1 | grep " \* " | awk '{print $(NF-4), $NF}'; }
ra=(); rb=()
for i in $(seq $n); do ra+=("$(one $A "$@")"); rb+=("$(one $B "$@")"); done
med() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
ma=$(printf "%s\n" "${ra[@]}" | awk '{print $1}' | med); mb=$(printf "%s\n" "${rb[@]}" | awk '{print $1}' | med)
ba=$(printf "%s\n" "${ra[@]}" | awk '{print $2}' | med); bb=$(printf "%s\n" "${rb[@]}" | awk '{print $2}' | med)
# paired ratio of ms
rat=$(for i in $(seq 0 $((n-1))); do echo "${ra[$i]} ${rb[$i]}" | awk '{print $3/$1}'; done | med)
printf "%-75s A %7s ms %5s%%  B %7s ms %5s%%  B/A %s\n" "$*" $ma $ba $mb $bb $rat
