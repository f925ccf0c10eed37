// Package testutil holds helpers shared by the tests of several packages;
// no production code imports it.
package testutil

import "labelprivacy/pets"

// MustNew is pets.New for parameters a test knows to be valid: it panics
// on error.
func MustNew(p pets.Params) *pets.Mechanism {
	m, err := pets.New(p)
	if err != nil {
		panic(err)
	}
	return m
}
