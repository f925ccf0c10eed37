//go:build !cgo || noxla

package model

import (
	"fmt"

	"github.com/gomlx/gomlx/backends"
)

func newXLABackend(name, plugin string) (backends.Backend, error) {
	return nil, fmt.Errorf("model: backend %q: this binary was built without the XLA backend "+
		"(it needs cgo and no \"noxla\" build tag); backend \"go\" works anywhere", name)
}
