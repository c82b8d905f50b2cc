#!/bin/sh
# Run a fuzz campaign in chunks, appending each chunk's summary to a log.
#   sh fuzz/campaign.sh SEED START END [CHUNK] [LOG]
# e.g. sh fuzz/campaign.sh 7 48000 1000000 10000 fuzz/campaign-s7.log
set -e
seed=$1; start=$2; end=$3; chunk=${4:-10000}; log=${5:-fuzz/campaign-s$seed.log}
here=$(dirname "$0")
i=$start
while [ "$i" -lt "$end" ]; do
    n=$chunk
    [ $((i + n)) -gt "$end" ] && n=$((end - i))
    echo "== $(date -u +%FT%TZ) rev $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo ?)" >>"$log"
    # exit 1 means findings (listed in the log and fuzz/findings/); go on
    python "$here/run.py" --seed "$seed" --start "$i" --count "$n" --jobs 2 >>"$log" 2>&1 || true
    i=$((i + n))
done
