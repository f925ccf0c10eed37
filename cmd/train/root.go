package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"labelprivacy/cmd/train/internal/console"
	"labelprivacy/config"
	"labelprivacy/internal/english"
	"labelprivacy/ledger"
	"labelprivacy/pets"
	"labelprivacy/pipeline"
)

// run executes the CLI with args, writing results to stdout and progress and
// diagnostics to stderr.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	root := newRootCmd(stdout, os.Stderr, config.OSEnv{})
	setArgs(root, args)
	return root.ExecuteContext(ctx)
}

func newRootCmd(stdout, stderr io.Writer, lookup config.Env) *cobra.Command {
	ev := console.New(stdout, stderr)
	root := &cobra.Command{
		Use:   "train",
		Short: "Measure what label-privacy mechanisms cost and protect",
		Long: `train runs the labelprivacy pipeline from a config file: data, privatized
labels (RR, LLP, LLP+Laplace, LLP+Geometric), training, audit and reports.

With no arguments it runs the embedded default config (configs/quickstart.yaml);
key=value arguments override its keys (train train.epochs=3), as --set does.

` + exitHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          overrideArgs,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	stage := func(use, short string, required bool, stages pipeline.Stages) *cobra.Command {
		return configCmd(use, short, required, lookup, func(cmd *cobra.Command, cfg *config.Config) error {
			return pipeline.Run(cmd.Context(), cfg, ev, stages)
		})
	}
	runCmd := stage("run", "Run every stage of the pipeline for a config (default: the embedded quickstart)", false, pipeline.StageAll)
	root.RunE = runCmd.RunE // the quickstart: no -c, no --set (key=value arguments only)
	root.AddCommand(runCmd,
		stage("fit", "Privatize and train every PET setting × learning rate × trial; runs.csv/.parquet, summary.csv", true, pipeline.StageFit),
		stage("audit", "Exact attack advantage of every PET setting (after fit or a sweep); audit.csv/.parquet, posteriors.csv/.parquet", true, pipeline.StageAudit),
		newSweepCmd(ev, lookup), newDataCmd(ev), newPrivatizeCmd(stdout, stderr, ev, lookup), newLedgerCmd(stdout, lookup), newReportCmd(ev),
		newBenchCmd(stdout, stderr), newAraCmd(stdout, stderr),
		&cobra.Command{Use: "version", Short: "Print the tool version", Args: cobra.NoArgs,
			Run: func(*cobra.Command, []string) { fmt.Fprintln(stdout, pipeline.VersionLine()) }},
	)
	markRan(root)
	return root
}

// configCmd is a command taking -c FILE and --set key=value flags; its
// key=value arguments are --set overrides too, applied after the flags
// (Hydra's habit: train run train.epochs=3).
func configCmd(use, short string, required bool, lookup config.Env, fn func(*cobra.Command, *config.Config) error) *cobra.Command {
	var file string
	var sets []string
	var prof profiles
	cmd := &cobra.Command{
		Use:   use + " -c FILE [--set key=value]... [key=value]...",
		Short: short,
		Args:  overrideArgs,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			cfg, err := configFor(cmd, config.Source{File: file, Env: lookup, Sets: append(slices.Clone(sets), args...)}, args)
			if err != nil {
				return err
			}
			stop, err := prof.start()
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, stop()) }()
			return fn(cmd, cfg)
		},
	}
	help := "config file (YAML)"
	if !required {
		help += "; default: the embedded configs/quickstart.yaml"
	}
	cmd.Flags().StringVarP(&file, "config", "c", "", help)
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a config key, e.g. --set train.epochs=3 (repeatable; values are YAML)")
	prof.flags(cmd)
	if required {
		cmd.MarkFlagRequired("config")
	}
	return cmd
}

// configFor loads src for cmd, records cmd's command line (with its
// key=value arguments, overrides) in the config's provenance and sets the
// environment its backend needs.
func configFor(cmd *cobra.Command, src config.Source, overrides []string) (*config.Config, error) {
	cfg, err := config.Load(src)
	if err != nil {
		return nil, err
	}
	cfg.Invocation.Command = commandLine(cmd)
	if _, typed := cmd.Root().Annotations[typedArgs]; !typed { // as typed, they are in it already
		for _, o := range overrides {
			cfg.Invocation.Command += " " + shellQuote(o)
		}
	}
	applyBackendEnv(cfg.Backend.String(), cmd.ErrOrStderr())
	return cfg, nil
}

func newSweepCmd(ev *console.Events, lookup config.Env) *cobra.Command {
	var shardFlag string
	cmd := configCmd("sweep", "Train this shard's part of the grid (skipping finished runs); status; emit Slurm/Kubernetes jobs", true, lookup,
		func(cmd *cobra.Command, cfg *config.Config) error {
			sh, from, err := pipeline.ResolveShard(shardFlag, lookup.LookupEnv)
			if err != nil {
				return flagError(err, nil)
			}
			ev.Info("sweep", fmt.Sprintf("shard %s (from %s)", sh, cmp.Or(from, "--shard")))
			return pipeline.Sweep(cmd.Context(), cfg, sh, ev)
		})
	cmd.Long = `sweep trains the runs of one shard of the config's grid (PET settings × learning
rates × trials), in groups of up to train.replicas models. Each finished run writes
OUT/runs/<run_id>.json atomically; a rerun skips finished runs, and a group killed
mid-training resumes from its checkpoint. Shards partition the groups exactly and may run
concurrently on one shared filesystem.

The shard comes from --shard i/n, else a Slurm array task (SLURM_ARRAY_TASK_ID,
SLURM_ARRAY_TASK_COUNT), else a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, JOB_COMPLETIONS).`
	cmd.Flags().StringVar(&shardFlag, "shard", "", "this process's shard i/n (0 ≤ i < n)")
	status := configCmd("status", "Count done, failed and missing runs of a sweep", true, lookup, func(cmd *cobra.Command, cfg *config.Config) error {
		st, err := pipeline.SweepStatus(cmd.Context(), cfg)
		if err != nil {
			return err
		}
		st.WriteTable(cmd.OutOrStdout())
		for _, d := range st.Damaged {
			ev.Warn("sweep", d+": counted as missing (the next fit or sweep sets it aside and trains the run again)")
		}
		return nil
	})
	emit := &cobra.Command{Use: "emit", Short: "Write a Slurm array script or a Kubernetes Indexed Job for a sweep"}
	for _, kind := range []string{"slurm", "k8s"} {
		var out string
		o := pipeline.EmitOptions{Kind: kind, AuditJob: true, Requeue: true, SignalLead: 5 * time.Minute}
		c := configCmd(kind, map[string]string{"slurm": "an sbatch script with --array=0-(N-1)", "k8s": "an Indexed Job manifest (YAML) with N completions"}[kind],
			true, lookup, func(cmd *cobra.Command, cfg *config.Config) error {
				o.Out, o.Warn = out, func(msg string) { ev.Warn("emit", msg) }
				b, err := pipeline.Emit(cfg, o)
				if err == nil && out == "" {
					_, err = cmd.OutOrStdout().Write(b)
				} else if err == nil {
					ev.Info("emit", fmt.Sprintf("wrote %s (%s)", out, english.Count(o.Shards, "shard")))
				}
				return flagError(err, map[string]string{"grace_period": "--grace-period", "signal_lead": "--signal-lead"})
			})
		f := c.Flags()
		f.IntVar(&o.Shards, "shards", 1, "number of shards (array tasks / completions)")
		f.StringVar(&out, "out", "", "file to write (default: stdout)")
		if kind == "slurm" {
			f.BoolVar(&o.AuditJob, "audit-job", true, "the first task submits the audit and report as a job that starts once every task has succeeded (afterok)")
			f.BoolVar(&o.Requeue, "requeue", true, "a task signalled --signal-lead before its time limit checkpoints, stops and is requeued to resume (--signal=B:USR1, --requeue)")
			f.DurationVar(&o.SignalLead, "signal-lead", o.SignalLead, "how long before the time limit (cluster.time) Slurm signals a task to checkpoint and requeue (Slurm may signal up to 1m earlier)")
		} else {
			f.BoolVar(&o.Requeue, "requeue", true, "a disrupted pod (evicted, preempted) is made again, resuming from its checkpoint, without counting against backoffLimit")
			f.DurationVar(&o.SignalLead, "grace-period", o.SignalLead, "the pods' terminationGracePeriodSeconds: time from SIGTERM (a checkpoint is written) to SIGKILL")
			o.AuditJob = false // a Job cannot start another: the manifest says how to run the audit
		}
		emit.AddCommand(c)
	}
	cmd.AddCommand(status, emit)
	return cmd
}

func newPrivatizeCmd(stdout, stderr io.Writer, ev *console.Events, lookup config.Env) *cobra.Command {
	var o pipeline.PrivatizeOptions
	var seed uint64
	cmd := &cobra.Command{
		Use:   "privatize --in DIR/train.arrow --pet rr|llp|llp_lap|llp_geom|bot [--epsilon E] [--k K] --out FILE.arrow [--seed S]",
		Short: "Release a dataset's labels through a PET into a new Arrow file meant to leave the machine",
		Long: `privatize releases the labels of --in through one mechanism and writes --out: the
features and the release (label_rr; or bag_id, alpha and, for llp_geom, alpha_debiased; per
class on labels of C classes, whose form of the mechanism --in's classes decide), rows in a
random order, never the raw label, an id column, a seed or a hash of the labels. Bags and
noise come from crypto/rand. Nothing but the release file is written to --out's folder.

The release is recorded in the privacy ledger before a byte of it is written: by default the
user's ledger, $XDG_DATA_HOME/labelprivacy/privacy_ledger.csv (else
~/.local/share/labelprivacy/), with its key and people file beside it; --ledger names another.
The ledger composes per person, each row charged: a person is an id (--id-column) or a row's
feature values, so copies of the same people in another order, a subset, a link, a re-import
or another folder compose. --budget E refuses, before writing anything, a release that would
take anyone above ε = E. The ledger verifies itself (a MAC chain over its rows) and refuses to
go on when a file of it was edited, lost or replaced.

privatize never destroys or leaks: it refuses an --out that is --in, lies under a dataset
directory or the ledger's folder, has the ledger under its folder, is not named .arrow
(.feather, .ipc), or exists (unless --force); llp with --k 1 (it ships the raw labels); an
--in whose bytes are not those its dataset's meta.json records, or that changes while it is
read; a feature column that gives the labels away (the label is a function of its value, or
alone it separates a class with AUC ≥ 0.99: a copy of the label) unless --allow-label-like names
it (then it is warned of and recorded in the release's metadata). --out is put in place only if
nothing is there by then: of two runs started at once to
one --out, one lands and the other is refused (its ledger row marked aborted, still counted).

--seed S makes the release reproducible instead: anyone who learns or guesses S (and has this
program) can regenerate the noise and undo it. Use it for experiments, never for data that
leaves the machine.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("seed") {
				o.Seed = &seed
				fmt.Fprintln(stderr, "privatize: warning: "+pipeline.SeedWarning(seed))
			}
			if err := needsFlags(cmd, o.Params.Kind); err != nil {
				return err
			}
			o.LookupEnv, o.Events = lookup.LookupEnv, ev
			p, err := pipeline.Privatize(o)
			if err != nil {
				return privatizeFlagError(err)
			}
			for _, w := range p.Warnings {
				fmt.Fprintf(stderr, "privatize: warning: %s\n", w)
			}
			fmt.Fprint(stdout, p.Summary())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.In, "in", "", "input Arrow/Parquet file with a label column (e.g. DIR/train.arrow)")
	f.StringVar(&o.Out, "out", "", "privatized Arrow file to write")
	f.TextVar(&o.Params.Kind, "pet", o.Params.Kind, "`mechanism`: bot | rr | llp | llp_lap | llp_geom (required)")
	f.Lookup("pet").DefValue = "" // no default: the zero kind (none) is refused
	f.Float64Var(&o.Params.Epsilon, "epsilon", 0, "label-DP ε (rr, llp_lap, llp_geom)")
	f.IntVar(&o.Params.K, "k", 0, "bag size (llp family)")
	f.Uint64Var(&seed, "seed", 0, "make the release reproducible from this seed (default: crypto/rand; see above)")
	f.BoolVar(&o.KeepRemainder, "keep-remainder", false, "keep the n mod k leftover rows as a smaller last bag (default: drop and count)")
	f.Float64Var(&o.DeltaPrime, "delta-prime", 0, "δ' of a new ledger's (ε, δ') totals, ≤ 1e-3 (default: the ledger's own; 1e-6 for a new one)")
	f.StringVar(&o.Ledger, "ledger", "", "privacy ledger file (default: the user's, $XDG_DATA_HOME/labelprivacy/privacy_ledger.csv)")
	f.StringVar(&o.IDColumn, "id-column", "", "column of --in identifying people (not a feature, never shipped; default: people known by their features)")
	f.Float64Var(&o.Budget, "budget", 0, "refuse a release that would take anyone above this ε (0: no budget)")
	f.StringArrayVar(&o.AllowLabelLike, "allow-label-like", nil, "ship this feature column although it gives the labels away (repeatable; warned of and recorded in the release)")
	f.BoolVar(&o.Force, "force", false, "replace an existing --out (never --in, a dataset file or a file beside the ledger)")
	for _, name := range []string{"in", "out", "pet"} {
		cmd.MarkFlagRequired(name)
	}
	return cmd
}

// needsFlags refuses a privatize command line that leaves out a parameter
// its mechanism takes (rr needs --epsilon, llp --k, llp_geom both), before
// their zero values would be refused as out of range.
func needsFlags(cmd *cobra.Command, kind pets.Kind) error {
	var missing []string
	if kind.NeedsK() && !cmd.Flags().Changed("k") {
		missing = append(missing, "--k")
	}
	if kind.NeedsEpsilon() && !cmd.Flags().Changed("epsilon") {
		missing = append(missing, "--epsilon")
	}
	if len(missing) == 0 {
		return nil
	}
	return &usageError{msg: fmt.Sprintf("%s: %s needs %s (e.g. --pet %s%s)", missing[0], kind, strings.Join(missing, " and "), kind, example(missing))}
}

// example is a command-line example of the flags.
func example(flags []string) string {
	var b strings.Builder
	for _, f := range flags {
		b.WriteString(" " + f + map[string]string{"--k": " 8", "--epsilon": " 1"}[f])
	}
	return b.String()
}

// privatizeFlagError names the flags of an error about privatize's options.
func privatizeFlagError(err error) error {
	return flagError(err, map[string]string{"mechanism": "--pet"})
}

func newLedgerCmd(stdout io.Writer, lookup config.Env) *cobra.Command {
	var delta float64
	var checks []string
	var head string
	cmd := &cobra.Command{
		Use:   "ledger [--check FILE.arrow]... [--head N:MAC] [PATH]",
		Short: "What a privacy ledger guarantees each person: totals per history class, and in words",
		Long: `ledger verifies a privacy ledger (a file, or a directory holding privacy_ledger.csv; default
the user's, $XDG_DATA_HOME/labelprivacy/privacy_ledger.csv) with its key and people file — the
MAC chain over its rows, the chain head its key file keeps, the people file against its last
row, every person — and prints each person-history class (people, releases, every bound:
basic, DRV, DRV with the quadratic mean, PLD), one statement of the guarantee every person has,
at the ledger's own δ' unless --delta-prime says otherwise, and the chain head (N:MAC): keep it
elsewhere, and --head N:MAC later says whether the ledger still holds it. A ledger that fails
verification is refused, naming the first bad row or the file at fault.

--check FILE.arrow (repeatable) says instead, for each release privatize wrote, whether the
ledger still holds the row that charged it (the file's metadata names it): a ledger whose files
were all restored from an older backup verifies, but lacks the rows of later releases. The exit
status is non-zero when a row is missing.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var path string
			if len(args) == 1 {
				path = args[0]
			} else {
				var err error
				if path, err = ledger.DefaultPath(lookup.LookupEnv); err != nil {
					return err
				}
			}
			if len(checks) > 0 {
				return pipeline.CheckReleases(stdout, path, checks)
			}
			st, err := pipeline.LedgerReport(stdout, path, delta)
			if err != nil || head == "" {
				return err
			}
			if err := pipeline.CheckHead(st, head); err != nil {
				return flagError(err, nil)
			}
			fmt.Fprintf(stdout, "the ledger holds the chain head %s\n", head)
			return nil
		},
	}
	cmd.Flags().Float64Var(&delta, "delta-prime", 0, "δ' of the (ε, δ') totals, ≤ 1e-3 (default: the ledger's own)")
	cmd.Flags().StringArrayVar(&checks, "check", nil, "a release file privatize wrote: does the ledger still hold its row? (repeatable)")
	cmd.Flags().StringVar(&head, "head", "", "a chain head kept elsewhere (N:MAC, as this command prints it): does the ledger still hold it?")
	return cmd
}

func newReportCmd(ev *console.Events) *cobra.Command {
	var o pipeline.ReportOptions
	cmd := &cobra.Command{
		Use:   "report --in DIR [--in DIR2]... --out DIR [--compare A,B | --compare A B] [--allow-mixed]",
		Short: "Merge result sets; write summary.csv/.parquet, the paper's plots and report.md; compare two sets",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(o.Compare) == 1 && len(args) == 1 {
				o.Compare = append(o.Compare, args[0]) // --compare A B
			} else if len(args) > 0 {
				return &usageError{msg: fmt.Sprintf("unexpected argument %q (directories go after --in, or --compare A B)", args[0])}
			}
			o.Invocation = config.Invocation{Command: commandLine(cmd)}
			return flagError(pipeline.ReportSets(o, ev), nil)
		},
	}
	cmd.Flags().StringArrayVar(&o.In, "in", nil, "a run directory (OUT of a config); repeatable: result sets are merged")
	cmd.Flags().StringVar(&o.Out, "out", "", "directory for summary.csv, summary.parquet, report.md and figures/")
	cmd.Flags().StringSliceVar(&o.Compare, "compare", nil, "two run directories A,B (or A B): ΔAUC and Δadvantage (B − A) with standard errors")
	cmd.Flags().BoolVar(&o.AllowMixed, "allow-mixed", false, "keep runs of different datasets or model configs as separate rows instead of failing")
	cmd.MarkFlagRequired("out")
	return cmd
}
