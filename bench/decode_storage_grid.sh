#!/usr/bin/env bash
# usage: bench/decode_storage_grid.sh EXE OUT.tsv — the decode grid of bench/attention_bench.py (decode with H = 8,
# decode_gqa; B 1, 8; Lq 1, 4; Lk 1024, 4096, 32768; 1 and 2 threads) for our kernels in float32 and bf16 storage,
# through `attnforge bench --chosen-only` (no peers: bench/decode_peers.py has float32 ones only). Columns: variant,
# B, Lq, Lk, dtype, threads, ms, GB/s of all inputs and the output, % of the read bandwidth, that bandwidth (GB/s: the
# median of the probe passes run between the kernel's calls, as `attnforge bench` measures it).
exe=$1; out=$2; : > "$out"
for v in decode decode_gqa; do for B in 1 8; do for lq in 1 4; do for lk in 1024 4096 32768; do
  heads=""; [ $v = decode ] && heads="--heads 8"
  for dt in float32 bf16; do
    $exe bench $v $heads --batch $B --lq $lq --lk $lk --threads 1,2 --chosen-only --no-interpreter --dtype $dt 2>&1 \
      | awk -v v=$v -v B=$B -v lq=$lq -v lk=$lk -v dt=$dt '$3 == "*" && $2 ~ /decode/ {printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\n", v, B, lq, lk, dt, $1, $4, $7, $8, 100 * $7 / $8}' >> "$out"
  done
done; done; done; done
