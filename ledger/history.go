package ledger

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"labelprivacy/pets"
)

// A person's history is the multiset of steps its releases charged it (a
// release charges one step per row, or per group of rows in one draw:
// charge), and its number of releases. People with equal histories share
// one class; the composition depends on the multiset only.

// stepCount is a step taken n times.
type stepCount struct {
	s pets.Step
	n int
}

// history is an interned history.
type history struct {
	releases int
	steps    []stepCount // by pets.CompareSteps
	comp     *pets.Composition
	compAt   float64 // δ' of comp
}

// expand lists the steps with repetition (for pets.Compose).
func (h *history) expand() []pets.Step {
	var out []pets.Step
	for _, sc := range h.steps {
		for range sc.n {
			out = append(out, sc.s)
		}
	}
	return out
}

// histories interns histories: equal ones get one id; 0 is the empty one.
type histories struct {
	list  []*history
	index map[string]int32
	memo  map[histMove]int32
}

// histMove is a history after one more release: of step s, charge ch.
type histMove struct {
	from int32
	s    pets.Step
	ch   string
}

func newHistories() *histories {
	h := &histories{index: map[string]int32{}, memo: map[histMove]int32{}}
	h.intern(0, nil)
	return h
}

func histKey(releases int, steps []stepCount) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(releases))
	for _, sc := range steps {
		b.WriteByte('|')
		b.WriteString(strconv.Itoa(int(sc.s.Kind)))
		b.WriteByte(':')
		b.WriteString(strconv.FormatUint(math.Float64bits(sc.s.Epsilon), 16))
		b.WriteByte('*')
		b.WriteString(strconv.Itoa(sc.n))
	}
	return b.String()
}

// sortSteps orders a history's steps by pets.CompareSteps: the same order
// in every process, whatever order kinds were registered in.
func sortSteps(steps []stepCount) { slices.SortFunc(steps, compareStepCounts) }

func compareStepCounts(a, b stepCount) int { return pets.CompareSteps(a.s, b.s) }

// intern returns the id of the history (steps sorted by sortSteps, each
// step once).
func (h *histories) intern(releases int, steps []stepCount) int32 {
	k := histKey(releases, steps)
	if id, ok := h.index[k]; ok {
		return id
	}
	id := int32(len(h.list))
	h.list = append(h.list, &history{releases: releases, steps: steps})
	h.index[k] = id
	return id
}

// add returns the history from after one more release of step s charged
// ch.
func (h *histories) add(from int32, s pets.Step, ch charge) int32 {
	mv := histMove{from, s, ch.String()}
	if id, ok := h.memo[mv]; ok {
		return id
	}
	m := map[pets.Step]int{}
	for _, sc := range h.list[from].steps {
		m[sc.s] += sc.n
	}
	ch.steps(s, m)
	steps := make([]stepCount, 0, len(m))
	for st, n := range m {
		steps = append(steps, stepCount{st, n})
	}
	sortSteps(steps)
	id := h.intern(h.list[from].releases+1, steps)
	h.memo[mv] = id
	return id
}

// compose returns the composition of history id at δ' (cached).
func (h *histories) compose(id int32, deltaPrime float64) (pets.Composition, error) {
	x := h.list[id]
	if x.comp == nil || x.compAt != deltaPrime {
		c, err := pets.Compose(x.expand(), deltaPrime)
		if err != nil {
			return pets.Composition{}, err
		}
		x.comp, x.compAt = &c, deltaPrime
	}
	return *x.comp, nil
}
