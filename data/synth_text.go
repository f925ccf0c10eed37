package data

// MarshalText writes the kind's name (configs, JSON).
func (k SynthKind) MarshalText() ([]byte, error) {
	if _, ok := synthNames[k]; !ok {
		return nil, ErrInvalid
	}
	return []byte(k.String()), nil
}

// UnmarshalText reads logistic, beta, uniform or multiclass.
func (k *SynthKind) UnmarshalText(b []byte) error {
	v, err := ParseSynthKind(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}
