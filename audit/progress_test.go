package audit

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"labelprivacy/internal/testutil"
	"labelprivacy/pets"
)

// passCounter records an audit's passes and the units counted in each.
type passCounter struct {
	mu     sync.Mutex
	passes []string
	total  []int
	done   []int
}

func (p *passCounter) Pass(of string, units int) {
	p.mu.Lock()
	p.passes, p.total, p.done = append(p.passes, of), append(p.total, units), append(p.done, 0)
	p.mu.Unlock()
}

func (p *passCounter) Done(n int) {
	p.mu.Lock()
	p.done[len(p.done)-1] += n
	p.mu.Unlock()
}

// An audit tells its Progress each pass and counts exactly its units:
// bags (or examples) of the exact pass, then the realized attack's
// releases and the canary rounds' releases; the result is the same with
// and without one.
func TestProgressCountsEveryUnit(t *testing.T) {
	eta := uniformEta(3001, 4)
	r := rand.New(rand.NewPCG(2, 2))
	etaC := make([]float64, 0, 1200*3)
	for range 1200 {
		etaC = append(etaC, mcEta(r, 3, 1, false)...)
	}
	cases := []struct {
		name   string
		run    func(Progress) (*Result, error)
		passes []string
		units  []int // the exact pass's (a canary round's count depends on the seed)
	}{
		{"rr, binary", func(p Progress) (*Result, error) {
			return Run(eta, testutil.MustNew(pets.Params{Kind: pets.RR, Epsilon: 1}),
				Options{Seed: 1, LabelDraws: 2, Sampler: releaseSampler{}, Draws: 3, Canaries: 500, Progress: p})
		}, []string{"examples", "releases", "canary releases"}, []int{3001, 3}},
		{"llp_geom k=8, binary", func(p Progress) (*Result, error) {
			return Run(eta, testutil.MustNew(pets.Params{Kind: pets.LLPGeom, K: 8, Epsilon: 1}),
				Options{Seed: 1, LabelDraws: 2, Sampler: releaseSampler{}, Draws: 3, Canaries: 500, Progress: p})
		}, []string{"bags", "releases", "canary releases", "canary releases"}, []int{375, 3}},
		{"llp k=4, C = 3", func(p Progress) (*Result, error) {
			return RunC(etaC, mcMech(pets.Params{Kind: pets.LLP, K: 4}, 3),
				OptionsC{Seed: 1, LabelDraws: 2, Sampler: mcSampler{}, Draws: 2, Canaries: 300, Progress: p})
		}, []string{"bags", "releases", "canary releases"}, []int{300, 2}},
		{"rr, C = 3, exact pass only", func(p Progress) (*Result, error) {
			return RunC(etaC, mcMech(pets.Params{Kind: pets.RR, Epsilon: 2}, 3), OptionsC{Seed: 1, LabelDraws: 2, Progress: p})
		}, []string{"examples"}, []int{1200}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var p passCounter
			with, err := tc.run(&p)
			if err != nil {
				t.Fatal(err)
			}
			without, err := tc.run(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(fmt.Sprint(with), fmt.Sprint(without)) {
				t.Fatal("the result changed with a Progress")
			}
			if !reflect.DeepEqual(p.passes, tc.passes) {
				t.Fatalf("passes %q, want %q", p.passes, tc.passes)
			}
			for i := range p.passes {
				if p.done[i] != p.total[i] || i < len(tc.units) && p.total[i] != tc.units[i] {
					t.Errorf("pass %d (%s): %d of %d units counted, want %v", i, p.passes[i], p.done[i], p.total[i], tc.units)
				}
			}
		})
	}
}
