package data

import (
	"errors"
	"testing"
)

func TestFrameValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(f *Frame)
		want   error
	}{
		{"valid", func(f *Frame) {}, nil},
		{"feature named like a column", func(f *Frame) { f.Features[1] = ColLabelRR }, ErrSchema},
		{"feature named indices", func(f *Frame) { f.Features[0] = ColIndices }, ErrSchema},
		{"feature twice", func(f *Frame) { f.Features[1] = f.Features[0] }, ErrSchema},
		{"short X", func(f *Frame) { f.X = f.X[:5] }, ErrSchema},
		{"short column", func(f *Frame) { f.Alpha = f.Alpha[:3] }, ErrSchema},
		{"offsets decrease", func(f *Frame) { f.Offsets[2], f.Offsets[3] = 5, 1 }, ErrSchema},
		{"offsets end early", func(f *Frame) { f.Offsets[len(f.Offsets)-1]-- }, ErrSchema},
		{"label 2", func(f *Frame) { f.Label[1] = 2 }, ErrLabel},
		{"label_rr 3", func(f *Frame) { f.LabelRR[0] = 3 }, ErrLabel},
		{"eta above 1", func(f *Frame) { f.Eta[2] = 1.5 }, ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := fullFrame()
			tc.change(f)
			if err := f.Validate(); !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}
