#!/usr/bin/env bash
# The reference reports in results/reference/: what a full run produces,
# for a user to see before running one. Runs configs/acceptance.yaml and
# configs/paper-synthetic.yaml on Beta(2,30) and uniform η, then keeps each
# run's report.md, summary.csv, audit.csv and PNG figures (not the data,
# releases, models or SVGs). About 1.5 minutes on 2 cores (backend go;
# 85 s on 2026-12-02: acceptance 7 s, paper-beta 28 s, paper-uniform 40 s).
#   bash scripts/reference.sh            # all three
#   bash scripts/reference.sh acceptance # one of acceptance | paper-beta | paper-uniform
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/train
go build -o "$bin" ./cmd/train
work=$(mktemp -d)
trap 'rm -rf "$work" "$(dirname "$bin")"' EXIT

run() { # name config [--set …]
	local name=$1 cfg=$2
	shift 2
	echo "== $name"
	local start=$SECONDS
	"$bin" run -c "$cfg" --set output="$work/$name" "$@"
	local dst=results/reference/$name
	rm -rf "$dst"
	mkdir -p "$dst/figures"
	cp "$work/$name"/{report.md,summary.csv,audit.csv} "$dst/"
	cp "$work/$name"/figures/*.png "$dst/figures/"
	echo "$name: $((SECONDS - start)) s" >>"$work/times"
}

want=${1:-all}
[[ $want == all || $want == acceptance ]] && run acceptance configs/acceptance.yaml
[[ $want == all || $want == paper-beta ]] && run paper-beta configs/paper-synthetic.yaml
[[ $want == all || $want == paper-uniform ]] && run paper-uniform configs/paper-synthetic.yaml --set data.synth.kind=uniform
cat "$work/times"
