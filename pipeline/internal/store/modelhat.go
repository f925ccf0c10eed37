package store

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"

	"labelprivacy/data"
)

// The model attack's predictions (audit.model_attack): every trained run's
// predicted probabilities on its probe of training rows (members) and on
// the audit rows of the test set (non-members), OUT/model_hat/<run_id>.parquet,
// one row per prediction: member (1: a training row, 0: a test row), row
// (its row number in its split) and p (binary: P(y = 1)) or p_0 … p_{C−1}.

// ModelHat is one run's stored predictions for the model attack.
type ModelHat struct {
	TrainRows []int     // the probed training rows, in stored order
	Train     []float64 // their predictions (1 or C values a row)
	Test      []float64 // the first len(Test)/width test rows' predictions
}

func (st Store) modelHatPath(id string) string {
	return filepath.Join(st.Dir, "model_hat", id+".parquet")
}

// PutModelHat stores run id's predictions on the probed training rows and
// on the first test rows (Group.Predict's layout: 1 value a row for
// binary labels, C on C ≥ 3 classes).
func (st Store) PutModelHat(id string, trainRows []int, train, test []float32, classes int) error {
	w := 1
	if classes >= 3 {
		w = classes
	}
	if len(train) != len(trainRows)*w || len(test)%w != 0 {
		return fmt.Errorf("store: model_hat %s: %d predictions for %d training rows and %d for test rows of %d classes",
			id, len(train), len(trainRows), len(test), classes)
	}
	nt := len(test) / w
	n := len(trainRows) + nt
	member, row := make([]int64, n), make([]int64, n)
	for i, r := range trainRows {
		member[i], row[i] = 1, int64(r)
	}
	for i := range nt {
		row[len(trainRows)+i] = int64(i)
	}
	cols := []data.Column{{Name: "member", Values: member}, {Name: "row", Values: row}}
	for j := range w {
		v := make([]float64, n)
		for i := range trainRows {
			v[i] = float64(train[i*w+j])
		}
		for i := range nt {
			v[len(trainRows)+i] = float64(test[i*w+j])
		}
		name := "p"
		if w > 1 {
			name = "p_" + strconv.Itoa(j)
		}
		cols = append(cols, data.Column{Name: name, Values: v})
	}
	t := &data.Table{Columns: cols, Meta: map[string]string{"run_id": id}}
	return t.WriteParquet(st.modelHatPath(id))
}

// ModelHat reads run id's stored predictions; nil and no error when there
// are none (a run trained before the model attack, or with it off).
func (st Store) ModelHat(id string, classes int) (*ModelHat, error) {
	path := st.modelHatPath(id)
	t, err := data.ReadTable(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ints := func(name string) []int64 {
		for _, c := range t.Columns {
			if c.Name == name {
				if v, ok := c.Values.([]int64); ok {
					return v
				}
			}
		}
		return nil
	}
	w := 1
	names := []string{"p"}
	if classes >= 3 {
		w, names = classes, nil
		for j := range classes {
			names = append(names, "p_"+strconv.Itoa(j))
		}
	}
	member, row := ints("member"), ints("row")
	if member == nil || row == nil || len(member) != len(row) {
		return nil, fmt.Errorf("%s: no int64 member and row columns of one length", path)
	}
	vals := make([][]float64, w)
	for j, name := range names {
		for _, c := range t.Columns {
			if c.Name == name {
				vals[j], _ = c.Values.([]float64)
			}
		}
		if len(vals[j]) != len(row) {
			return nil, fmt.Errorf("%s: no float64 column %s of %d rows (%d classes)", path, name, len(row), classes)
		}
	}
	h := &ModelHat{}
	for i, m := range member {
		dst := &h.Test
		switch m {
		case 1:
			dst = &h.Train
			h.TrainRows = append(h.TrainRows, int(row[i]))
		case 0:
			if int(row[i]) != len(h.Test)/w {
				return nil, fmt.Errorf("%s: row %d: test row %d out of order", path, i, row[i])
			}
		default:
			return nil, fmt.Errorf("%s: row %d: member %d is not 0 or 1", path, i, m)
		}
		for j := range w {
			*dst = append(*dst, vals[j][i])
		}
	}
	return h, nil
}
