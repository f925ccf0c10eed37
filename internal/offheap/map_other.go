//go:build !unix

package offheap

import "errors"

func mapAnon(int) ([]byte, error) { return nil, errors.New("offheap: not supported") }
func unmap([]byte)                {}
func dropPages([]byte)            {}
func protectNone([]byte) error    { return errors.New("offheap: not supported") }
