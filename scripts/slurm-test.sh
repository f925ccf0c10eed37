#!/usr/bin/env bash
# A real Slurm test: start a one-node Slurm cluster on this machine (munged,
# slurmctld, slurmd with a generated slurm.conf: real hostname, CPUs and
# memory), submit the array job that `train sweep emit slurm` writes for a
# small sweep, wait for it and for the audit job it submits (afterok), and
# check that `train report` sees every run of the grid exactly once; then
# signal a training task as Slurm does ahead of its time limit (USR1 to the
# batch shell) and check that it checkpoints, is requeued, resumes from its
# checkpoint and finishes, and that its audit job runs after it. Stops the
# daemons it started (by pid) at the end.
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
# waitjobs NAME SECONDS: wait until no job of that name is queued or running.
waitjobs() {
	for _ in $(seq $(( $2 * 5 ))); do
		[ -z "$(squeue -h -n "$1" -o %i)" ] && return 0
		sleep 0.2
	done
	log "jobs $1 still queued after $2 s:"; squeue; return 1
}
# A TRAIN_ override seen by emit only: the script must carry it (and drop
# the stray one of the submitting shell).
TRAIN_TRAIN_EPOCHS=2 ./train sweep emit slurm -c sweep.yaml --shards "$SHARDS" --out sweep.sbatch
cat sweep.sbatch
for d in '#SBATCH --requeue' '#SBATCH --signal=B:USR1@300' '#SBATCH --open-mode=append' 'dependency=afterok'; do
	grep -qF -- "$d" sweep.sbatch || { log "the emitted script lacks $d"; exit 1; }
done
log "sbatch --wait (array of $SHARDS tasks), then its audit job"
TRAIN_TRAIN_BATCH_SIZE=64 sbatch --wait sweep.sbatch
waitjobs lp-slurmtest-audit 300
squeue || true
export TRAIN_TRAIN_EPOCHS=2
./train sweep status -c sweep.yaml | tee status.txt
# Every run of this config (2 epochs, batch 128: the stray batch size was dropped) is done.
awk '$1 == "total" && $2 == 12 && $3 == 0 && $4 == 0 { ok = 1 } END { exit !ok }' status.txt ||
	{ log "sweep status: not every run of the emitted config is done"; exit 1; }
# The audit job (afterok) audited and reported, once, with emit's override.
n=$(ls out/logs/audit-*.out | wc -l)
[ "$n" -eq 1 ] || { log "want 1 audit job log, found $n"; exit 1; }
[ -s out/audit.csv ] && grep -q 'Command: `train audit -c' out/report.md ||
	{ log "the audit job wrote no audit.csv or report.md"; cat out/logs/audit-*.out; exit 1; }
./train report --in out --out report | tee report.txt
grep -q '3 settings from 12 runs;' report.txt
n=$(ls out/runs/*.json | grep -vc failed)
[ "$n" -eq 12 ] || { log "want 12 run results, found $n"; exit 1; }
n=$(grep -l '"epochs": 2,' out/runs/*.json | grep -vc failed || true)
[ "$n" -eq 12 ] || { log "want 12 runs of 2 epochs (TRAIN_TRAIN_EPOCHS carried by emit), found $n"; exit 1; }
for i in $(seq 0 $((SHARDS - 1))); do
	grep -h "sweep: shard $i/$SHARDS (from Slurm array task)" out/logs/*.out >/dev/null || { log "no log line from array task $i"; exit 1; }
done
log "$SHARDS array tasks trained 12 runs, each exactly once, with emit's TRAIN_ override; the audit job ran after them; report sees all 12"

# Requeue ahead of the time limit: one long training task; once it has a
# checkpoint, USR1 reaches its batch shell as --signal=B:USR1@120 would two
# minutes before the limit. The task must stop after its step (checkpoint),
# be requeued, resume from the checkpoint and finish; its audit job follows.
unset TRAIN_TRAIN_EPOCHS
cat >requeue.yaml <<YAML
name: requeuetest
seed: 7
output: $WORK/rq
data: {synth: {kind: logistic, rows: 2000, test_rows: 1000, features: 8}}
model: {kind: mlp, hidden: [128, 128]}
train: {epochs: 600, batch_size: 32, learning_rates: [0.001], trials: 1, checkpoint_every: 200}
pets:
  - {mechanism: rr, epsilon: [1]}
audit: {eta: true, examples: 500, calibration_rows: 500, label_draws: 2}
cluster: {cpus_per_task: 1, mem: 1G, time: "00:30:00", binary: $WORK/train}
YAML
./train sweep emit slurm -c requeue.yaml --shards 1 --signal-lead 2m --out requeue.sbatch
grep -qF -- '#SBATCH --signal=B:USR1@120' requeue.sbatch || { log "--signal-lead 2m: no --signal=B:USR1@120"; exit 1; }
JOB=$(sbatch --parsable requeue.sbatch)
for _ in $(seq 1500); do
	[ -n "$(find rq/checkpoints -type f 2>/dev/null | head -1)" ] && break
	sleep 0.2
done
[ -n "$(find rq/checkpoints -type f 2>/dev/null | head -1)" ] || { log "no checkpoint of ${JOB}_0 after 300 s"; exit 1; }
log "checkpoint written: USR1 to the batch shell of ${JOB}_0"
scancel --batch --signal=USR1 "${JOB}_0"
waitjobs lp-requeuetest 600
waitjobs lp-requeuetest-audit 300
TASKLOG=rq/logs/${JOB}_0.out
grep -q "stopped ahead of the time limit; requeueing ${JOB}_0" "$TASKLOG" ||
	{ log "task ${JOB}_0 was not requeued:"; cat "$TASKLOG"; exit 1; }
grep -q 'resumed from its checkpoint at step' "$TASKLOG" ||
	{ log "the requeued task did not resume from its checkpoint:"; cat "$TASKLOG"; exit 1; }
n=$(ls rq/runs/*.json | grep -vc failed)
[ "$n" -eq 1 ] || { log "want 1 run result after the requeue, found $n"; exit 1; }
[ -s rq/audit.csv ] && [ "$(ls rq/logs/audit-*.out | wc -l)" -eq 1 ] ||
	{ log "the audit job did not run once after the requeued task"; ls rq/logs; exit 1; }
log "PASS: $SHARDS array tasks trained 12 runs, each exactly once, with emit's TRAIN_ override and an afterok audit job; report sees all 12; a task signalled ahead of its time limit checkpointed, was requeued, resumed and was audited"
