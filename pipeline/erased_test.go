package pipeline

import (
	"math"
	"testing"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/internal/testutil"
	"labelprivacy/pets"
)

// A channel that erases some releases (ara_event, pets.FormRRErased):
// channelTargets drops the erased rows and gives the others targets whose
// expectation over the releases that are not erased is the label's
// one-hot vector (within 1e-12), on two classes and on five.
func TestChannelTargetsErased(t *testing.T) {
	for _, c := range []int{2, 5} {
		p := pets.Params{Kind: pets.ARAEvent, Epsilon: 1.5, TriggerData: c - 1, Windows: 1, Reports: 2}
		if c >= 3 {
			p.Classes = c
		}
		m := testutil.MustNew(p)
		set := &setting{Setting: config.Setting{Params: p}, Mech: m, ID: "ara"}
		ch := m.FirstChannel()
		rel := &data.Frame{Rows: ch.Z, LabelRR: make([]uint8, ch.Z), Row: make([]int64, ch.Z)}
		for z := range ch.Z {
			rel.LabelRR[z] = uint8(z)
		}
		ct, err := newChannelTargets(rel, set)
		if err != nil {
			t.Fatal(err)
		}
		tz := make([][]float64, ch.Z)
		for z := range ch.Z {
			tz[z] = make([]float64, c)
			if trained := ct.target(tz[z], z, uint8(z), config.PriorTargetsArgmax); trained != (z < c) {
				t.Fatalf("C=%d: release %d trained on: %v", c, z, trained)
			}
		}
		kept := 1 - ch.Prob(uint8(c), 0)
		for y := range c {
			for j := range c {
				e := 0.0
				for z := range c {
					e += ch.Prob(uint8(z), uint8(y)) / kept * tz[z][j]
				}
				if want := float64(boolInt(j == y)); math.Abs(e-want) > 1e-12 {
					t.Errorf("C=%d: E[t_%d | y=%d] = %v, want %v", c, j, y, e, want)
				}
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
