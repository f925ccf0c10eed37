#!/usr/bin/env bash
# Peak resident memory of `train fit` at scale (not CI): dense Higgs-shaped
# synthetic datasets (28 float32 features) and KDD-shaped sparse ones
# (scripts/gen-kdd: 11 indices per row, hashed to 500,000 buckets), each
# fitted once under /usr/bin/time (maximum RSS). Dense fits train a small
# mlp (hidden [8]) on pets none and rr ε=1 (a release made in the process),
# and the clean model alone, then `train audit` audits the none+rr fit (η
# of the clean model, then audit.eta: knn); KDD fits train kdd_embed (lazy
# Adam) on none.
# One epoch each: the peak comes from loading, the releases and the
# model's state, not from the number of steps.
#
# Usage: scripts/mem-bench.sh [TRAIN_BINARY]
# Environment: DENSE (row counts, default "1000000 3000000 10000000"),
#   KDD ("5000000 20000000"; " " for none), BENCH_DIR (/tmp/labelprivacy-mem-bench:
#   datasets are kept and reused there). Needs ~6 GB of disk for the
#   defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${BENCH_DIR:-/tmp/labelprivacy-mem-bench}
DENSE=${DENSE:-1000000 3000000 10000000}
KDD=${KDD:-5000000 20000000}
mkdir -p "$DIR"
TRAIN=${1:-}
if [ -z "$TRAIN" ]; then
	TRAIN=$DIR/train
	go build -o "$TRAIN" ./cmd/train
fi
[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time; }

fit() { # fit NAME DATASET PETS MODEL [AUDIT]: one row (train fit, or train audit of fit NAME's output with AUDIT's keys)
	local name=$1 ds=$2 pets=$3 model=$4 audit=${5:-}
	local cmd=fit out=$name
	if [ -n "$audit" ]; then
		cmd=audit out=${name%-audit*}
	fi
	cat >"$DIR/$name.yaml" <<YAML
name: $out
seed: 1
backend: go
output: $DIR/out/$out
data: {path: $ds}
model: $model
train: {epochs: 1, batch_size: 1024, learning_rates: [0.001], trials: 1}
pets: $pets
audit: {${audit}}
YAML
	[ -n "$audit" ] || rm -rf "$DIR/out/$name"
	/usr/bin/time -f "%M %e" -o "$DIR/time" "$TRAIN" "$cmd" --config "$DIR/$name.yaml" >"$DIR/$name.log" 2>&1 ||
		{ cat "$DIR/$name.log" >&2; exit 1; }
	read -r kib wall <"$DIR/time"
	printf "%-30s %10.0f %12.0f %8.1f\n" "$name" "$(awk -v k="$kib" 'BEGIN { print k / 1024 }')" \
		"$(awk -v b="$(data_mib "$ds")" -v k="$kib" 'BEGIN { print b }')" "$wall"
}

# data_mib DATASET: the training features' size in memory, MiB (dense:
# rows × features × 4 bytes; sparse: the indices file's list values × 4).
data_mib() {
	python3 - "$1" <<'PY' 2>/dev/null || echo 0
import json, sys
m = json.load(open(sys.argv[1] + "/meta.json"))
print(m["train_rows"] * len(m.get("features") or []) * 4 / 2**20 if not m.get("hash_buckets") else m["train_rows"] * 11 * 4 / 2**20)
PY
}

echo "mem-bench: $(date -u +%FT%TZ), $(nproc) cores, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 2^20 }' /proc/meminfo), $($TRAIN version 2>/dev/null | head -1)"
printf "%-30s %10s %12s %8s\n" run max_rss_MiB features_MiB wall_s
for n in $DENSE; do
	ds=$DIR/dense$n
	[ -f "$ds/meta.json" ] || "$TRAIN" data synth --out "$ds" --kind logistic --rows "$n" --test-rows 20000 --seed 1 >/dev/null
	fit "dense$n-none" "$ds" '[{mechanism: none}]' '{kind: mlp, hidden: [8]}'
	fit "dense$n-none+rr" "$ds" '[{mechanism: none}, {mechanism: rr, epsilon: [1]}]' '{kind: mlp, hidden: [8]}'
	# train audit of that fit: η of the clean model, then of the 100,000
	# nearest training rows (audit.eta: knn, the one audit that reads them).
	fit "dense$n-none+rr-audit" "$ds" '[{mechanism: none}, {mechanism: rr, epsilon: [1]}]' '{kind: mlp, hidden: [8]}' 'eta: clean_model'
	fit "dense$n-none+rr-audit-knn" "$ds" '[{mechanism: none}, {mechanism: rr, epsilon: [1]}]' '{kind: mlp, hidden: [8]}' 'eta: knn'
done
for n in $KDD; do
	ds=$DIR/kdd$n
	if [ ! -f "$ds/meta.json" ]; then
		go run ./scripts/gen-kdd -rows $((n + 20000)) >"$DIR/kdd$n.libsvm"
		"$TRAIN" data import libsvm --in "$DIR/kdd$n.libsvm" --out "$ds" --test-rows 20000 >/dev/null
		rm -f "$DIR/kdd$n.libsvm"
	fi
	fit "kdd$n" "$ds" '[{mechanism: none}]' '{kind: kdd_embed}'
done
