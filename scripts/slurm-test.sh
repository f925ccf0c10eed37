#!/usr/bin/env bash
# A real Slurm test: start a one-node Slurm cluster on this machine (munged,
# slurmctld, slurmd with a generated slurm.conf: real hostname, CPUs and
# memory), submit the array job that `train sweep emit slurm` writes for a
# small sweep, wait for it, and check that `train report` sees every run of
# the grid exactly once. Stops the daemons it started (by pid) at the end.
#
# Needs root (apt-get, daemons). Installs Debian's slurm-wlm and munge when
# missing. Usage: scripts/slurm-test.sh   (SHARDS=3 by default)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARDS=${SHARDS:-3}
WORK=$(mktemp -d /tmp/lp-slurm.XXXXXX)
HOST=$(hostname -s)
CPUS=$(nproc)
MEM_MB=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))
PIDS=()

log() { printf 'slurm-test: %s\n' "$*"; }
cleanup() {
	local rc=$?
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${PIDS[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null || true
	done
	if [ $rc -ne 0 ]; then
		log "FAILED (rc=$rc); logs:"
		tail -n 30 "$WORK"/*.log "$WORK"/out/logs/*.out 2>/dev/null || true
	fi
	if [ $rc -eq 0 ]; then
		rm -rf "$WORK"
		log "stopped daemons (${PIDS[*]:-none}); removed $WORK"
	else
		log "stopped daemons (${PIDS[*]:-none}); work dir kept: $WORK"
	fi
	exit $rc
}
trap cleanup EXIT

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
	log "installing slurm-wlm and munge from Debian"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi

log "building train"
(cd "$ROOT" && go build -o "$WORK/train" ./cmd/train)

# munge: a private key and socket, run as root (--force).
mkdir -p "$WORK/munge"
chmod 700 "$WORK/munge"
dd if=/dev/urandom of="$WORK/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$WORK/munge/munge.key"
MUNGE_SOCKET="$WORK/munge/munge.socket"
munged --force --key-file="$WORK/munge/munge.key" --socket="$MUNGE_SOCKET" \
	--pid-file="$WORK/munge/munged.pid" --log-file="$WORK/munged.log" --seed-file="$WORK/munge/munged.seed"
for _ in $(seq 50); do [ -s "$WORK/munge/munged.pid" ] && break; sleep 0.1; done
PIDS+=("$(cat "$WORK/munge/munged.pid")")
log "munged pid ${PIDS[0]}"

# slurm.conf for one node: this host, its CPUs and memory, private ports.
mkdir -p "$WORK/state" "$WORK/spool"
export SLURM_CONF="$WORK/slurm.conf"
cat >"$SLURM_CONF" <<CONF
ClusterName=lptest
SlurmctldHost=$HOST
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
NodeName=$HOST CPUs=$CPUS RealMemory=$MEM_MB State=UNKNOWN
PartitionName=debug Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
CONF

slurmctld -D -i -f "$SLURM_CONF" >"$WORK/slurmctld.out" 2>&1 &
PIDS+=($!)
slurmd -D -f "$SLURM_CONF" >"$WORK/slurmd.out" 2>&1 &
PIDS+=($!)
log "slurmctld pid ${PIDS[1]}, slurmd pid ${PIDS[2]} ($HOST: $CPUS CPUs, ${MEM_MB} MB)"
for _ in $(seq 100); do
	sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)' && break
	sleep 0.2
done
sinfo

# A small sweep: 3 settings × 2 learning rates × 2 trials = 12 runs.
cd "$WORK"
cat >sweep.yaml <<YAML
name: slurmtest
seed: 7
output: $WORK/out
data: {synth: {kind: logistic, rows: 4000, test_rows: 1000, features: 8}}
model: {kind: mlp, hidden: [16]}
train: {epochs: 1, batch_size: 128, learning_rates: [0.01, 0.003], trials: 2}
pets:
  - {mechanism: none}
  - {mechanism: rr, epsilon: [1]}
  - {mechanism: llp, k: [4]}
audit: {eta: true, examples: 800, label_draws: 2}
cluster: {cpus_per_task: 1, mem: 1G, time: "00:10:00", binary: $WORK/train}
YAML
# A TRAIN_ override seen by emit only: the script must carry it (and drop
# the stray one of the submitting shell).
TRAIN_TRAIN_EPOCHS=2 ./train sweep emit slurm -c sweep.yaml --shards "$SHARDS" --out sweep.sbatch
cat sweep.sbatch
log "sbatch --wait (array of $SHARDS tasks)"
TRAIN_TRAIN_BATCH_SIZE=64 sbatch --wait sweep.sbatch
squeue || true
export TRAIN_TRAIN_EPOCHS=2
./train sweep status -c sweep.yaml | tee status.txt
# Every run of this config (2 epochs, batch 128: the stray batch size was dropped) is done.
awk '$1 == "total" && $2 == 12 && $3 == 0 && $4 == 0 { ok = 1 } END { exit !ok }' status.txt ||
	{ log "sweep status: not every run of the emitted config is done"; exit 1; }
./train audit -c sweep.yaml >/dev/null
./train report --in out --out report | tee report.txt
grep -q '3 settings from 12 runs;' report.txt
n=$(ls out/runs/*.json | grep -vc failed)
[ "$n" -eq 12 ] || { log "want 12 run results, found $n"; exit 1; }
n=$(grep -l '"epochs": 2,' out/runs/*.json | grep -vc failed || true)
[ "$n" -eq 12 ] || { log "want 12 runs of 2 epochs (TRAIN_TRAIN_EPOCHS carried by emit), found $n"; exit 1; }
for i in $(seq 0 $((SHARDS - 1))); do
	grep -h "sweep: shard $i/$SHARDS (from Slurm array task)" out/logs/*.out >/dev/null || { log "no log line from array task $i"; exit 1; }
done
log "PASS: $SHARDS array tasks trained 12 runs, each exactly once, with emit's TRAIN_ override; report sees all 12"
