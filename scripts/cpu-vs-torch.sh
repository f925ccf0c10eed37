#!/usr/bin/env bash
# Side by side on this machine's CPU (not CI): labelprivacy's trainer on
# backend go (`train bench`) and PyTorch (scripts/torch_mlp_bench.py), each
# on one core and on all cores, as CPU µs per example (process CPU time over
# the steady-state steps: the measure that moves least when other jobs share
# the machine) and examples/s (wall clock: moves with the load).
#
# Rows: the paper's Higgs MLP (28→300×4→1, batch 1024 per model) with bce,
# debiased_bce and propmatch (bags of 64) at R = 1 and R = 8 models per
# group, kdd_embed (500,000 buckets, 11 indices per row, lazy Adam), and
# PyTorch's Higgs MLP (bce, Adam). One core: GOMAXPROCS=1 for labelprivacy;
# OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 and torch.set_num_threads(1) for
# PyTorch (set_num_threads alone does not bind OpenBLAS's threads). All
# cores: GOMAXPROCS unset; PyTorch twice, as pytorch-blas (one torch thread,
# OpenBLAS on every core: the faster here) and pytorch-omp (torch and
# OpenBLAS threads on every core). labelprivacy's Higgs bce R=1 row is also
# run on its AVX2 kernel (matmul=avx2) where the CPU has AVX-512, and on all
# cores as one group per core trained at once (R=1x2 on 2 cores: `train
# bench --groups`, what train fit does with several groups to train).
#
# The fair anchor is PyTorch on the OpenBLAS kernel meant for this CPU:
# Debian's OpenBLAS 0.3.21 does not recognise newer CPUs and may fall back
# to an SSE3 ("Prescott") kernel about 4× slower, or pick another family.
# The script sets OPENBLAS_CORETYPE=SkylakeX where the CPU has avx512f,
# Haswell where it has avx2 (FAIR_CORETYPE overrides), prints the kernel
# OpenBLAS reports (OPENBLAS_VERBOSE=2) and runs PyTorch's one-core row
# both ways: pytorch-default (OpenBLAS's own choice) and pytorch (the
# fair kernel). The multi-core PyTorch rows use the fair kernel.
#
# Then ROUNDS alternating rounds (default 5; the machine may be shared, so
# only figures taken in the same window compare): each round runs the
# one-core Higgs MLP (bce, R=1) on each of sgemm's assembly kernels and
# PyTorch on the OpenBLAS kernel that matches it (avx512 with SkylakeX,
# avx2 with Haswell: on an AVX-512 CPU the avx2 pair is a proxy for an
# AVX2-only one, not the same microarchitecture), then every Higgs product
# shape on one thread: sgemm's BenchmarkMultiply (sgemm/bench_test.go)
# against the same shapes and layouts on OpenBLAS through PyTorch
# (scripts/torch_gemm_bench.py), in GFLOP per CPU second. It prints the
# medians, their ratio and the load.
#
# Usage: scripts/cpu-vs-torch.sh
# Environment: TRAIN (a train binary; default: built from this checkout),
#   BEFORE (a second train binary, e.g. built from an older commit: its rows
#   are printed too), BACKEND (go), STEPS (60: Higgs R=1 and kdd_embed;
#   R=8 runs STEPS/3), TORCH_STEPS (150), ROUNDS (5; 0 skips the rounds),
#   SGEMM_TEST (an sgemm test binary, `go test -c ./sgemm/`; default: built
#   from this checkout), TABLE (1; 0 skips the table before the rounds).
# Installs Debian's python3-torch and OpenBLAS (libopenblas0-pthread) with
# apt-get when /usr/bin/python3 cannot import torch or the system BLAS is
# not OpenBLAS (Debian's python3-torch otherwise runs on the reference BLAS,
# about 15× slower); needs root or sudo for that.
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS=${STEPS:-60}
TORCH_STEPS=${TORCH_STEPS:-150}
ROUNDS=${ROUNDS:-5}
TABLE=${TABLE:-1}
BACKEND=${BACKEND:-go}
PY=/usr/bin/python3
CORES=$(nproc)
WORK=$(mktemp -d -t cpu-vs-torch.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
if ! "$PY" -c 'import torch' 2>/dev/null; then
	echo "cpu-vs-torch: installing python3-torch (Debian)" >&2
	$SUDO apt-get install -y --no-install-recommends python3-torch python3-numpy >&2
fi
ARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
blas() { readlink -f "/usr/lib/$ARCH/libblas.so.3" 2>/dev/null || echo unknown; }
if ! blas | grep -q openblas; then
	echo "cpu-vs-torch: the system BLAS is $(blas); installing OpenBLAS (libopenblas0-pthread)" >&2
	$SUDO apt-get install -y --no-install-recommends libopenblas0-pthread >&2
fi

if [ -z "${TRAIN:-}" ]; then
	TRAIN=$WORK/train
	CGO_ENABLED=0 go build -o "$TRAIN" ./cmd/train
fi
if [ -z "${SGEMM_TEST:-}" ] && [ "$ROUNDS" -gt 0 ]; then
	SGEMM_TEST=$WORK/sgemm.test
	CGO_ENABLED=0 go test -c -o "$SGEMM_TEST" ./sgemm/
fi

# bench BINARY LABEL GOMAXPROCS ARGS...: one output row per measured group.
bench() {
	local bin=$1 label=$2 procs=$3
	shift 3
	local env=()
	[ "$procs" = all ] || env=(GOMAXPROCS="$procs")
	env "${env[@]}" "$bin" bench --backend "$BACKEND" "$@" >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err" >&2; exit 1; }
	local matmul
	matmul=$(sed -n 's/^backend .*, matmul \([a-z0-9]*\).*/\1/p' "$WORK/out")
	awk -v label="$label" -v cores="$([ "$procs" = all ] && echo "$CORES" || echo "$procs")" -v mm="${matmul:-?}" \
		'$1 ~ /^(higgs_mlp|kdd_embed|mlp)$/ { r = $3; if (NF >= 11 && $11 > 1) r = r "x" $11
			printf "%-16s %-10s %-13s R=%-3s %5s  %-12s %13.1f %14.0f\n", label, $1, $2, r, cores, mm, $8, $6 }' "$WORK/out"
}

# torch LABEL TORCH_THREADS ENV...: one row; the matmul column names the
# OpenBLAS kernel (OPENBLAS_VERBOSE=2's "Core:" line). On 2 cores Debian's
# PyTorch 1.13 with OpenBLAS (pthreads) ran fastest with one torch thread
# and OpenBLAS on both cores; torch.set_num_threads(2) (OpenMP) with
# OpenBLAS threads ran 3-4× slower here (both spin-wait), so both settings
# are printed.
torch() {
	local label=$1 threads=$2 cores=$3
	shift 3
	env OPENBLAS_VERBOSE=2 "$@" "$PY" scripts/torch_mlp_bench.py --threads "$threads" --steps "$TORCH_STEPS" >"$WORK/torch" 2>&1 ||
		{ cat "$WORK/torch" >&2; exit 1; }
	local core
	core=$(sed -n 's/^Core: *//p' "$WORK/torch" | head -1)
	grep '^pytorch' "$WORK/torch" |
		awk -v label="$label" -v cores="$cores" -v core="ob:${core:-?}" '{ for (i = 1; i <= NF; i++) { if ($i == "ex/s,") eps = $(i-1); if ($i == "cpu_us_per_ex") us = $(i-1) }
			printf "%-16s %-10s %-13s R=%-3s %5s  %-12s %13.1f %14.0f\n", label, "higgs_mlp", "bce", 1, cores, core, us, eps }'
}

rows() { # rows BINARY LABEL
	for procs in 1 all; do
		bench "$1" "$2" "$procs" --replicas 1 --steps "$STEPS"
		bench "$1" "$2" "$procs" --replicas 8 --steps $((STEPS / 3 > 2 ? STEPS / 3 : 3))
		bench "$1" "$2" "$procs" --model kdd_embed --losses bce --replicas 1 --steps "$STEPS"
	done
	# Groups trained at once, one per core (train fit's train.concurrent_groups:
	# auto): "R=1x2" is two groups of one model. Binaries before it lack --groups.
	if [ "$CORES" -gt 1 ] && "$1" bench --help 2>/dev/null | grep -q -- --groups; then
		bench "$1" "$2" all --losses bce --replicas 1 --steps "$STEPS" --groups "$CORES"
	fi
	if grep -qw avx512f /proc/cpuinfo && [ "$BACKEND" = go ]; then
		BACKEND=go:matmul=avx2 bench "$1" "$2" 1 --losses bce --replicas 1 --steps "$STEPS"
	fi
}

# The OpenBLAS kernel meant for this CPU.
if [ -n "${FAIR_CORETYPE:-}" ]; then
	FAIR=$FAIR_CORETYPE
elif grep -qw avx512f /proc/cpuinfo; then
	FAIR=SkylakeX
elif grep -qw avx2 /proc/cpuinfo; then
	FAIR=Haswell
else
	FAIR=""
fi

echo "cpu-vs-torch: $(date -u +%FT%TZ), $CORES cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)$(grep -qw avx512f /proc/cpuinfo && echo ' (avx512f)'), PyTorch $("$PY" -c 'import torch; print(torch.__version__)'), BLAS $(blas), fair OPENBLAS_CORETYPE=${FAIR:-none}"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$TABLE" != 0 ]; then
	printf "%-16s %-10s %-13s %-5s %5s  %-12s %13s %14s\n" trainer model loss group cores matmul cpu_us_per_ex examples_per_s
	rows "$TRAIN" labelprivacy
	[ -z "${BEFORE:-}" ] || rows "$BEFORE" before
	fair=()
	[ -z "$FAIR" ] || fair=(OPENBLAS_CORETYPE="$FAIR")
	torch pytorch-default 1 1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
	torch pytorch 1 1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 "${fair[@]}"
	torch pytorch-blas 1 "$CORES" OPENBLAS_NUM_THREADS="$CORES" OMP_NUM_THREADS=1 "${fair[@]}"
	torch pytorch-omp "$CORES" "$CORES" OPENBLAS_NUM_THREADS="$CORES" OMP_NUM_THREADS="$CORES" "${fair[@]}"
	echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
fi

# The alternating rounds: kernel pairs (sgemm kernel, OpenBLAS coretype).
pairs=()
grep -qw avx512f /proc/cpuinfo && pairs+=(avx512:SkylakeX)
grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && pairs+=(avx2:Haswell)
[ "$BACKEND" = go ] || pairs=()
# One line per measurement in $WORK/rounds: what, kernel pair, side, value.
: >"$WORK/rounds"
loads=()
for ((r = 1; r <= ROUNDS && ${#pairs[@]} > 0; r++)); do
	for pair in "${pairs[@]}"; do
		k=${pair%%:*} ct=${pair#*:}
		GOMAXPROCS=1 "$TRAIN" bench --backend "go:matmul=$k" --losses bce --replicas 1 --steps "$STEPS" >"$WORK/out" 2>"$WORK/err" ||
			{ cat "$WORK/err" >&2; exit 1; }
		awk -v p="$pair" '$1 == "higgs_mlp" { print "mlp_cpu_us_per_ex", p, "labelprivacy", $8 }' "$WORK/out" >>"$WORK/rounds"
		env OPENBLAS_VERBOSE=2 OPENBLAS_CORETYPE="$ct" OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
			"$PY" scripts/torch_mlp_bench.py --threads 1 --steps "$TORCH_STEPS" >"$WORK/torch" 2>&1 || { cat "$WORK/torch" >&2; exit 1; }
		core=$(sed -n 's/^Core: *//p' "$WORK/torch" | head -1)
		[ "$core" = "$ct" ] || echo "cpu-vs-torch: OpenBLAS ran kernel ${core:-?}, not $ct" >&2
		awk -v p="$pair" '/^pytorch/ { for (i = 1; i <= NF; i++) if ($i == "cpu_us_per_ex") print "mlp_cpu_us_per_ex", p, "pytorch", $(i-1) }' "$WORK/torch" >>"$WORK/rounds"
		"$SGEMM_TEST" -test.run '^$' -test.bench "^BenchmarkMultiply\$/^higgs_/^$k\$/^threads=1\$" -test.benchtime 0.2s >"$WORK/out" 2>&1 ||
			{ cat "$WORK/out" >&2; exit 1; }
		awk -v p="$pair" '/^BenchmarkMultiply\// { split($1, f, "/"); for (i = 1; i <= NF; i++) if ($i == "GFLOP/cpu-s") print f[2], p, "labelprivacy", $(i-1) }' "$WORK/out" >>"$WORK/rounds"
		env OPENBLAS_CORETYPE="$ct" OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
			"$PY" scripts/torch_gemm_bench.py --threads 1 --filter higgs_ --seconds 0.2 >"$WORK/out" 2>&1 || { cat "$WORK/out" >&2; exit 1; }
		awk -v p="$pair" '/^torch_gemm/ { print $2, p, "openblas", $(NF-3) }' "$WORK/out" >>"$WORK/rounds"
	done
	loads+=("$(cut -d' ' -f1 /proc/loadavg)")
done
if [ -s "$WORK/rounds" ]; then
	echo
	echo "$ROUNDS alternating rounds, one core, medians (range); load average after each round: ${loads[*]}"
	"$PY" - "$WORK/rounds" <<'PYEOF'
import statistics, sys
vals = {}
for line in open(sys.argv[1]):
    what, pair, side, v = line.split()
    vals.setdefault((what, pair), {}).setdefault(side, []).append(float(v))
# ratio: labelprivacy / anchor of the medians, and the range of the
# rounds' own ratios (each round's pair ran minutes apart at most).
print(f"{'measure':28s} {'kernels':16s} {'labelprivacy':>22s} {'anchor':>22s} {'ratio (rounds)':>20s}")
for (what, pair), sides in vals.items():
    ours, anchor = sides.get("labelprivacy", []), sides.get("pytorch", sides.get("openblas", []))
    if not ours or not anchor:
        continue
    cell = lambda v: f"{statistics.median(v):7.1f} ({min(v):.1f}-{max(v):.1f})"
    per = [o / a for o, a in zip(ours, anchor)]
    ratio = f"{statistics.median(ours) / statistics.median(anchor):.2f} ({min(per):.2f}-{max(per):.2f})"
    unit = "CPU µs/example, lower is better" if what.startswith("mlp") else "GFLOP/cpu-s, higher is better"
    print(f"{what:28s} {pair:16s} {cell(ours):>22s} {cell(anchor):>22s} {ratio:>20s}  {unit}")
PYEOF
fi
