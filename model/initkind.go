package model

import (
	"fmt"
	"strings"
)

// Init names a weight initialization (issue 12's parity study).
type Init int

const (
	// InitUniformFanIn is PyTorch's nn.Linear default: weights and biases
	// U(±1/√fan_in).
	InitUniformFanIn Init = iota + 1
	// InitGlorotUniform is Keras' default: weights U(±√(6/(fan_in+fan_out))),
	// zero biases.
	InitGlorotUniform
	// InitHeNormal is GoMLX's default: weights N(0, 2/fan_in), zero biases.
	InitHeNormal
)

// DefaultInit is the initialization used when the config names none.
const DefaultInit = InitUniformFanIn

var initNames = map[Init]string{InitUniformFanIn: "uniform_fan_in", InitGlorotUniform: "glorot_uniform", InitHeNormal: "he_normal"}

func (i Init) String() string {
	if s, ok := initNames[i]; ok {
		return s
	}
	return fmt.Sprintf("Init(%d)", int(i))
}

// ParseInit parses uniform_fan_in, glorot_uniform or he_normal.
func ParseInit(s string) (Init, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for i, name := range initNames {
		if name == t {
			return i, nil
		}
	}
	return 0, fmt.Errorf("model: unknown init %q (want uniform_fan_in, glorot_uniform or he_normal)", s)
}

// MarshalText implements encoding.TextMarshaler.
func (i Init) MarshalText() ([]byte, error) {
	if _, ok := initNames[i]; !ok {
		return nil, fmt.Errorf("model: invalid Init %d", int(i))
	}
	return []byte(i.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (i *Init) UnmarshalText(b []byte) error {
	v, err := ParseInit(string(b))
	if err != nil {
		return err
	}
	*i = v
	return nil
}
