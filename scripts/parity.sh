#!/usr/bin/env bash
# Parity of labelprivacy's training with PyTorch (issue 12 §1). Not part of CI.
#
# Generates one Higgs-shaped dataset (scripts/parity.py data: heavy-tailed,
# unscaled features), trains the PyTorch anchor protocol on it (the paper's
# Higgs MLP, Adam 1e-3, batch 128, 8 epochs, PyTorch's default init, with and
# without standardized features; one run per seed) and the same protocol in
# labelprivacy through `train run -c` (model.init, data.standardize), and
# prints every configuration's mean test AUC with its SE over seeds.
#
# Usage: scripts/parity.sh [WORKDIR]      (default: a new temporary directory)
# Environment: SEEDS (5) TRAIN_ROWS (6500) TEST_ROWS (5000) EPOCHS (8)
#   BATCH (128) LR (0.001) INITS (uniform_fan_in; e.g.
#   uniform_fan_in,glorot_uniform,he_normal) STANDARDIZE (false,true)
#   BACKEND (go) LP_CMD (run)
#   TRAIN (the train command; default `go run ./cmd/train`).
# Installs Debian's python3-torch and python3-numpy with apt-get when
# /usr/bin/python3 cannot import them (needs root or sudo).
set -euo pipefail
cd "$(dirname "$0")/.."

SEEDS=${SEEDS:-5}
TRAIN_ROWS=${TRAIN_ROWS:-6500}
TEST_ROWS=${TEST_ROWS:-5000}
EPOCHS=${EPOCHS:-8}
BATCH=${BATCH:-128}
LR=${LR:-0.001}
INITS=${INITS:-uniform_fan_in}
STANDARDIZE=${STANDARDIZE:-false,true}
BACKEND=${BACKEND:-go}
LP_CMD=${LP_CMD:-run}
TRAIN=${TRAIN:-go run ./cmd/train}
WORK=${1:-$(mktemp -d -t parity.XXXXXX)}
mkdir -p "$WORK"
PY=/usr/bin/python3

if ! "$PY" -c 'import torch, numpy' 2>/dev/null; then
	echo "parity: installing python3-torch and python3-numpy (Debian)" >&2
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	$SUDO apt-get install -y --no-install-recommends python3-torch python3-numpy >&2
fi

CSV=$WORK/higgs_like.csv
"$PY" scripts/parity.py data --out "$CSV" --train "$TRAIN_ROWS" --test "$TEST_ROWS" --seed 1

# labelprivacy: import once, then one config per (init, standardize).
$TRAIN data import higgs --in "$CSV" --out "$WORK/dataset" --test-rows "$TEST_ROWS"
LP_ARGS=()
for init in ${INITS//,/ }; do
	for std in ${STANDARDIZE//,/ }; do
		name=${init}_std_${std}
		cat >"$WORK/$name.yaml" <<YAML
name: parity_$name
seed: 1
backend: $BACKEND
output: $WORK/lp_$name
data: {path: $WORK/dataset, standardize: $std}
model: {kind: higgs_mlp, init: $init}
train: {epochs: $EPOCHS, batch_size: $BATCH, learning_rates: [$LR], trials: $SEEDS}
pets: [{mechanism: none}]
audit: {examples: 1000, label_draws: 1}
YAML
		$TRAIN $LP_CMD -c "$WORK/$name.yaml" >&2
		LP_ARGS+=(--lp "$init/$std=$WORK/lp_$name/runs.csv")
	done
done

"$PY" scripts/parity.py torch --csv "$CSV" --test "$TEST_ROWS" --seeds "$SEEDS" --epochs "$EPOCHS" \
	--batch "$BATCH" --lr "$LR" --init "$INITS" --standardize "$STANDARDIZE" --out "$WORK/torch.jsonl"

echo "parity: $TRAIN_ROWS train rows, $TEST_ROWS test rows, $EPOCHS epochs, batch $BATCH, Adam $LR, $SEEDS seeds (work dir $WORK)"
"$PY" scripts/parity.py summary --torch "$WORK/torch.jsonl" "${LP_ARGS[@]}"
