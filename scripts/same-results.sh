#!/usr/bin/env bash
# Checks that two revisions give the same results for a config: builds
# both, runs `train run` with each, and compares runs.csv, audit.csv and
# summary.csv column by column (timing columns left out) and report.md.
#   bash scripts/same-results.sh REV_A [REV_B=HEAD] [CONFIG] [--set key=value]…
# Exit status 1 when anything differs.
set -euo pipefail
cd "$(dirname "$0")/.."
a=${1:?usage: same-results.sh REV_A [REV_B] [CONFIG] [--set k=v]…}
b=${2:-HEAD}
cfg=${3:-}
[[ -n $cfg ]] && cfg=$(realpath "$cfg")
shift $(( $# < 3 ? $# : 3 ))
work=$(mktemp -d)
trap 'git worktree remove --force "$work/src-a" 2>/dev/null; git worktree remove --force "$work/src-b" 2>/dev/null; rm -rf "$work"' EXIT
for side in a b; do
	rev=${!side}
	git worktree add -q --detach "$work/src-$side" "$rev"
	(cd "$work/src-$side" && go build -o "$work/train-$side" ./cmd/train)
	args=(run)
	[[ -n $cfg ]] && args+=(-c "$cfg")
	(cd "$work" && "$work/train-$side" "${args[@]}" --set output="$work/out-$side" "$@" >/dev/null 2>&1)
done
python3 - "$work/out-a" "$work/out-b" <<'PY'
import csv, sys
timing = {'wall_s', 'examples_per_s', 'group_examples_per_s', 'compile_s', 'checkpoint_s'}
bad = 0
for name in ['runs.csv', 'audit.csv', 'summary.csv']:
    rows = [list(csv.DictReader(open(f'{d}/{name}'))) for d in sys.argv[1:3]]
    cols = [set(r[0]) - timing if r else set() for r in rows]
    same = len(rows[0]) == len(rows[1]) and cols[0] == cols[1] and all(
        all(x[k] == y[k] for k in cols[0]) for x, y in zip(*rows))
    print(f'{name}: {len(rows[0])} rows, {"identical" if same else "DIFFERENT"}')
    bad += not same
same = open(f'{sys.argv[1]}/report.md').read() == open(f'{sys.argv[2]}/report.md').read()
print('report.md:', 'identical' if same else 'DIFFERENT')
sys.exit(1 if bad or not same else 0)
PY
