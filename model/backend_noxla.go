//go:build !cgo || noxla

package model

import (
	"fmt"

	"github.com/gomlx/gomlx/backends"
)

// XLAAvailable reports whether this binary was built with the XLA backend
// (it needs cgo; the build tag "noxla" leaves it out).
const XLAAvailable = false

func newXLABackend(name, plugin string) (backends.Backend, error) {
	return nil, fmt.Errorf("model: backend %q: this binary was built without the XLA backend "+
		"(it needs cgo and no \"noxla\" build tag); backend \"go\" works anywhere", name)
}
