package data

// MarshalText writes the kind's name (configs, JSON).
func (k SynthKind) MarshalText() ([]byte, error) { return synthKinds.Marshal(k) }

// UnmarshalText reads logistic, beta, uniform, multiclass or conversions.
func (k *SynthKind) UnmarshalText(b []byte) error { return synthKinds.Unmarshal(k, b) }
