#!/usr/bin/env bash
# Narayanan et al. 2021 Table 1: predicted vs published achieved TFLOP/s per GPU (no throughput given).
# Usage: P=build/release/app/cli/plansight bash bench/narayanan_table1.sh
# Narayanan 2021 Table 1 rows: model gpus tp pp mb v batch published [extra flags]
P=${P:-build/release/app/cli/plansight}
while read -r model gpus tp pp mb v batch pub extra; do
  sched=""; [ "$v" != "1" ] && sched="--vpp $v"
  $P estimate --json --model $model --system selene --gpus $gpus --tp $tp --pp $pp $sched --micro-batch $mb --global-batch $batch \
     --recompute full --precision fp16 --attention standard $extra | python3 -c "
import json,sys; d=json.load(sys.stdin)
if 'errors' in d: print(d['errors']); sys.exit()
t=d['time']; b=t['breakdown']
print('%-17s %6.1f vs %5.1f  %+5.1f%%  it %6.2fs ' % ('$model', t['achieved_tflops_per_gpu'], $pub, (t['achieved_tflops_per_gpu']/$pub-1)*100, t['iteration_s']), ' '.join('%s=%.2f' % (k.replace('_s','').replace('_comm',''), v) for k,v in b.items()))"
done <<'ROWS'
narayanan-1.7b 32 1 1 16 1 512 137
narayanan-3.6b 64 2 1 16 1 512 138
narayanan-7.5b 128 4 1 16 1 512 142
narayanan-18.4b 256 8 1 8 1 1024 135
narayanan-39.1b 512 8 2 4 1 1536 138 --no-dp-overlap
narayanan-76.1b 1024 8 4 2 3 1792 140 --no-dp-overlap
narayanan-145.6b 1536 8 8 2 2 2304 148 --no-dp-overlap
narayanan-310.1b 1920 8 16 1 2 2160 155 --no-dp-overlap
narayanan-529.6b 2520 8 35 1 3 2520 163 --no-dp-overlap
narayanan-1008b 3072 8 64 1 1 3072 163 --no-dp-overlap
ROWS
