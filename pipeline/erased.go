package pipeline

import (
	"fmt"

	"labelprivacy/data"
)

// trainedRows is the frame a run trained on label_rr trains on: the
// release itself, or, for a kind whose channel erases some releases
// (pets.FormRRErased: ara_event's states that are no class), the rows
// whose release is not erased, each with its dataset row. Which rows are
// erased depends on no label (the erasure has the same probability
// whatever the label), so the rows kept are a random subsample and their
// releases rr's over the classes, corrected by train.rr_loss with the
// channel's flip probability, without bias; an erased row says nothing of
// its label.
func trainedRows(rel *data.Frame, set *setting) (*data.Frame, error) {
	law := set.Mech.ExampleLaw()
	if law == nil || rel.LabelRR == nil {
		return rel, nil
	}
	ch := set.Mech.FirstChannel()
	erased, ok := ch.Erased()
	if !ok {
		return rel, nil
	}
	if rel.Row == nil {
		return nil, fmt.Errorf("%s: the release lacks its %s column", set.ID, data.ColRow)
	}
	f := &data.Frame{Classes: rel.Classes}
	for i, z := range rel.LabelRR {
		if z != erased {
			f.Row, f.LabelRR = append(f.Row, rel.Row[i]), append(f.LabelRR, z)
		}
	}
	f.Rows = len(f.Row)
	if f.Rows == 0 {
		return nil, fmt.Errorf("%s: every row's release shows no class: nothing to train on", set.ID)
	}
	return f, nil
}
