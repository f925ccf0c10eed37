package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestEmitSlurm(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	cfg := writeSweepConfig(t, out, "cluster: {cpus_per_task: 3, mem: 2G, time: \"01:00:00\", partition: gpu, gpus: 1, binary: /opt/bin/train}\n")
	script, err := cli(t, nil, "sweep", "emit", "slurm", "-c", cfg, "--shards", "5", "--set", "train.trials=4")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#!/bin/bash", "#SBATCH --job-name=lp-sweeptest", "#SBATCH --array=0-4", "#SBATCH --cpus-per-task=3", "#SBATCH --mem=2G",
		"#SBATCH --time=01:00:00", "#SBATCH --partition=gpu", "#SBATCH --gres=gpu:1",
		"#SBATCH --output=" + filepath.Join(out, "logs") + "/%A_%a.out",
		"exec '/opt/bin/train' 'sweep' '-c' '" + cfg + "' '--set' 'train.trials=4'"} {
		if !strings.Contains(script, want) {
			t.Fatalf("script lacks %q:\n%s", want, script)
		}
	}
	if st, err := os.Stat(filepath.Join(out, "logs")); err != nil || !st.IsDir() {
		t.Fatalf("the logs directory Slurm writes to was not created: %v", err)
	}
}

func TestEmitK8s(t *testing.T) {
	cfg := writeSweepConfig(t, filepath.Join(t.TempDir(), "out"), "cluster: {image: reg/lp:1, mem: 4G, gpus: 1}\n")
	manifest, err := cli(t, nil, "sweep", "emit", "k8s", "-c", cfg, "--shards", "4")
	if err != nil {
		t.Fatal(err)
	}
	var job struct {
		Kind string
		Spec struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int
			Parallelism    int
			Template       struct {
				Spec struct {
					RestartPolicy string `yaml:"restartPolicy"`
					Containers    []struct {
						Image     string
						Command   []string
						Env       []struct{ Name, Value string }
						Resources struct {
							Requests map[string]any
							Limits   map[string]any
						}
					}
				}
			}
		}
	}
	if err := yaml.Unmarshal([]byte(manifest), &job); err != nil {
		t.Fatalf("manifest is not YAML: %v\n%s", err, manifest)
	}
	c := job.Spec.Template.Spec.Containers
	if job.Kind != "Job" || job.Spec.CompletionMode != "Indexed" || job.Spec.Completions != 4 || len(c) != 1 ||
		c[0].Image != "reg/lp:1" || strings.Join(c[0].Command, " ") != "train sweep -c "+cfg ||
		len(c[0].Env) != 1 || c[0].Env[0].Name != "JOB_COMPLETIONS" || c[0].Env[0].Value != "4" ||
		c[0].Resources.Requests["memory"] != "4Gi" || c[0].Resources.Limits["nvidia.com/gpu"] != 1 {
		t.Fatalf("manifest:\n%s", manifest)
	}
	if _, err := cli(t, nil, "sweep", "emit", "k8s", "-c", writeSweepConfig(t, "o", ""), "--shards", "2"); err == nil || !strings.Contains(err.Error(), "cluster.image") {
		t.Fatalf("no image: err = %v", err)
	}
}

// A failed run is reported by status and retried by the next sweep.
func TestSweepStatusFailed(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	cfg := writeSweepConfig(t, out, "")
	set := []string{"--set", "pets=[{mechanism: none}]", "--set", "train.trials=1", "--set", "train.learning_rates=[0.01]"}
	if _, err := cli(t, nil, append([]string{"sweep", "-c", cfg}, set...)...); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(out, "runs", "*.json"))
	if len(files) != 1 {
		t.Fatalf("run files %v", files)
	}
	id := strings.TrimSuffix(filepath.Base(files[0]), ".json")
	os.Remove(files[0])
	c, err := loadConfig(cfg, []string{"pets=[{mechanism: none}]", "train.trials=1", "train.learning_rates=[0.01]"}, mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	failed := filepath.Join(c.Output, "runs", id+".failed.json")
	if err := os.WriteFile(failed, []byte(`{"run_id": "`+id+`", "setting": "none", "error": "invalid argument"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	status, err := cli(t, nil, append([]string{"sweep", "status", "-c", cfg}, set...)...)
	if err != nil || !strings.Contains(status, "total                         0      1        0") {
		t.Fatalf("status: %v\n%s", err, status)
	}
	if _, err := cli(t, nil, append([]string{"sweep", "-c", cfg}, set...)...); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(failed); err == nil {
		t.Fatal("the failure record outlived a successful retry")
	}
}
