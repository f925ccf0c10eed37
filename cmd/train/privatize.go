package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"labelprivacy/data"
	"labelprivacy/llp"
	"labelprivacy/pets"
)

var errNoRelease = errors.New("privatize: mechanism none releases the raw labels; train the clean model from the dataset itself")

// releaseOptions are the knobs of one privatization.
type releaseOptions struct {
	Seed          uint64 // bags: PCG(Seed, 1); noise: PCG(Seed, 2) unless Secure
	Secure        bool   // noise from crypto/rand (pets.NewSecureRand)
	KeepRemainder bool   // keep the n mod k rows as a smaller last bag
}

// releaseInfo describes what a privatization released.
type releaseInfo struct {
	Rows    int // rows in the privatized frame
	Bags    int // LLP family: bags released
	Dropped int // LLP remainder rows dropped
}

// privatize releases train's labels through m. The returned frame holds
// the features plus the release (label_rr; or bag_id, alpha and, for
// llp_geom, alpha_debiased) and never the raw label or eta columns.
func privatize(train *data.Frame, m *pets.Mechanism, o releaseOptions) (*data.Frame, releaseInfo, error) {
	if train.Label == nil {
		return nil, releaseInfo{}, fmt.Errorf("privatize: the input has no %q column", data.ColLabel)
	}
	var noise pets.Rand = pcg(o.Seed, streamNoise)
	if o.Secure {
		noise = pets.NewSecureRand()
	}
	// Features only: the raw label and eta columns are never copied.
	out := &data.Frame{Rows: train.Rows, Features: train.Features, X: train.X, Indices: train.Indices, Offsets: train.Offsets}
	info := releaseInfo{Rows: train.Rows}
	switch k := m.Kind(); {
	case k == pets.None:
		return nil, info, errNoRelease
	case k == pets.Bot:
		// ⊥ releases nothing: features only.
	case k == pets.RR:
		out.LabelRR = make([]uint8, train.Rows)
		m.ReleaseRR(out.LabelRR, train.Label, noise)
	case k.IsLLP():
		bags, err := llp.Partition(train.Rows, m.K(), pcg(o.Seed, streamBags), o.KeepRemainder)
		if err != nil {
			return nil, info, fmt.Errorf("privatize: %w", err)
		}
		kept := bags.Order[:bags.Kept()]
		rows := make([]int, len(kept))
		for i, r := range kept {
			rows[i] = int(r)
		}
		out = out.Take(rows) // rows in bag order: bag 0's members, bag 1's, …
		out.BagID = make([]int64, len(rows))
		out.Alpha = make([]float64, len(rows))
		if k == pets.LLPGeom {
			out.AlphaDebiased = make([]float64, len(rows))
		}
		sums := bags.Sums(train.Label, nil)
		r := 0
		for b := range bags.NumBags {
			n := bags.Size(b)
			alpha := m.ReleaseBag(sums[b], n, noise)
			deb := m.Debias(alpha, n)
			for range n {
				out.BagID[r] = int64(b)
				out.Alpha[r] = alpha
				if out.AlphaDebiased != nil {
					out.AlphaDebiased[r] = deb
				}
				r++
			}
		}
		info = releaseInfo{Rows: len(rows), Bags: bags.NumBags, Dropped: bags.Dropped}
	default:
		return nil, info, fmt.Errorf("privatize: unsupported mechanism %s", k)
	}
	out.Rows = info.Rows
	return out, info, nil
}

// releaseMeta is the Arrow schema metadata of a privatized file. It holds no
// timestamp, so the same seed gives byte-identical files.
func releaseMeta(m *pets.Mechanism, o releaseOptions, info releaseInfo, source string) map[string]string {
	p := m.Params()
	md := map[string]string{
		"mechanism":        p.Kind.String(),
		"label_dp_epsilon": data.FormatFloat(m.Epsilon()),
		"seed":             strconv.FormatUint(o.Seed, 10),
		"secure":           strconv.FormatBool(o.Secure),
		"rows":             strconv.Itoa(info.Rows),
		"source":           source,
		"tool":             version,
	}
	if p.Kind.NeedsK() {
		md["k"] = strconv.Itoa(p.K)
		md["bags"] = strconv.Itoa(info.Bags)
		md["dropped_rows"] = strconv.Itoa(info.Dropped)
		md["keep_remainder"] = strconv.FormatBool(o.KeepRemainder)
	}
	if p.Kind.NeedsEpsilon() {
		md["epsilon"] = data.FormatFloat(p.Epsilon)
	}
	if p.Kind == pets.RR {
		md["flip_prob"] = data.FormatFloat(m.FlipProb())
	}
	return md
}

// newMechanism builds a validated mechanism; secure only matters (and is
// only accepted by pets) for the kinds that add noise.
func newMechanism(kind pets.Kind, k int, eps float64, secure bool) (*pets.Mechanism, error) {
	return pets.New(pets.Params{Kind: kind, K: k, Epsilon: eps, Secure: secure && kind.NeedsEpsilon()})
}

// priorReleases counts ledger entries for the same mechanism and parameters:
// the releases of these labels before this one.
func priorReleases(path string, m *pets.Mechanism) (int, error) {
	entries, err := pets.ReadLedger(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		return 0, err
	}
	n := 0
	p := m.Params()
	for _, e := range entries {
		if e.Mechanism == p.Kind && e.K == p.K && (e.Epsilon == m.Epsilon() || (math.IsInf(e.Epsilon, 1) && math.IsInf(m.Epsilon(), 1))) {
			n++
		}
	}
	return n, nil
}

func newPrivatizeCmd(stdout io.Writer) *cobra.Command {
	var in, out, pet string
	var eps, deltaPrime float64
	var k int
	var o releaseOptions
	cmd := &cobra.Command{
		Use:   "privatize --in DIR/train.arrow --pet rr|llp|llp_lap|llp_geom|bot [--epsilon E] [--k K] --seed S --out FILE.arrow",
		Short: "Release a dataset's labels through a PET into a new Arrow file (no raw labels)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			kind, err := pets.ParseKind(pet)
			if err != nil {
				return fmt.Errorf("--pet: %w", err)
			}
			m, err := newMechanism(kind, k, eps, o.Secure)
			if err != nil {
				return fmt.Errorf("--%s: %w", paramFlag(err), err)
			}
			train, err := data.ReadFrame(in)
			if err != nil {
				return err
			}
			rel, info, err := privatize(train, m, o)
			if err != nil {
				return err
			}
			if err := data.WriteFrame(out, rel, releaseMeta(m, o, info, in)); err != nil {
				return err
			}
			ledger, err := recordRelease(filepath.Dir(out), deltaPrime, m, info.Rows, o.Seed)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "privatize: wrote %s (%s, %d rows", out, m, info.Rows)
			if kind.IsLLP() {
				fmt.Fprintf(stdout, ", %d bags, %d rows dropped", info.Bags, info.Dropped)
			}
			fmt.Fprintf(stdout, ")\nprivatize: ledger %s\n", ledger)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&in, "in", "", "input Arrow/Parquet file with a label column (e.g. DIR/train.arrow)")
	f.StringVar(&out, "out", "", "privatized Arrow file to write")
	f.StringVar(&pet, "pet", "", "mechanism: bot | rr | llp | llp_lap | llp_geom")
	f.Float64Var(&eps, "epsilon", 0, "label-DP ε (rr, llp_lap, llp_geom)")
	f.IntVar(&k, "k", 0, "bag size (llp family)")
	f.Uint64Var(&o.Seed, "seed", 1, "seed of the bags and the noise")
	f.BoolVar(&o.Secure, "secure", false, "crypto/rand noise and a floating-point-safe Laplace sampler")
	f.BoolVar(&o.KeepRemainder, "keep-remainder", false, "keep the n mod k leftover rows as a smaller last bag (default: drop and count)")
	f.Float64Var(&deltaPrime, "delta-prime", 1e-6, "δ' of the advanced composition bound in the ledger")
	for _, name := range []string{"in", "out", "pet"} {
		cmd.MarkFlagRequired(name)
	}
	return cmd
}

// recordRelease appends the release to dir/privacy_ledger.csv, counting the
// earlier releases of the same mechanism and parameters recorded there.
func recordRelease(dir string, deltaPrime float64, m *pets.Mechanism, rows int, seed uint64) (string, error) {
	path := filepath.Join(dir, pets.LedgerFile)
	prior, err := priorReleases(path, m)
	if err != nil {
		return "", err
	}
	l, err := pets.NewLedger(path, deltaPrime)
	if err != nil {
		return "", err
	}
	if _, err := l.Record(m, rows, seed, prior+1); err != nil {
		return "", err
	}
	return path, nil
}

// paramFlag names the CLI flag of a pets parameter error.
func paramFlag(err error) string {
	var pe *pets.ParamError
	if errors.As(err, &pe) {
		return pe.Param
	}
	return "pet"
}
