package model

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// Sentinel errors; match them with errors.Is.
var (
	// ErrInvalidConfig: a GroupConfig, ModelConfig, LossParams or enum text
	// is invalid.
	ErrInvalidConfig = errors.New("model: invalid config")
	// ErrInvalidData: the features or a batch do not fit the model or loss.
	ErrInvalidData = errors.New("model: invalid data")
	// ErrNonFiniteLoss: a replica's training loss became NaN or ±Inf.
	ErrNonFiniteLoss = errors.New("model: non-finite training loss")
	// ErrCheckpointMismatch: the checkpoint directory holds another group's
	// checkpoint (other model, loss, replicas, seeds, learning rates, ...).
	ErrCheckpointMismatch = errors.New("model: checkpoint belongs to another group")
	// ErrClosed: the Group was closed.
	ErrClosed = errors.New("model: group is closed")
)

// ReplicaError is an error of one replica of a group.
type ReplicaError struct {
	Group   string
	Replica string // Replica.Name
	Index   int    // position in GroupConfig.Replicas
	Step    int64  // global step (1-based) when known, else 0
	Err     error
}

func (e *ReplicaError) Error() string {
	at := ""
	if e.Step > 0 {
		at = fmt.Sprintf(" at step %d", e.Step)
	}
	return fmt.Sprintf("model: group %q replica %d (%q)%s: %v", e.Group, e.Index, e.Replica, at, e.Err)
}

func (e *ReplicaError) Unwrap() error { return e.Err }

// RowError reports a bad row of the features (data.Features).
type RowError struct {
	Row int
	Msg string
}

func (e *RowError) Error() string { return fmt.Sprintf("model: feature row %d: %s", e.Row, e.Msg) }

func (e *RowError) Unwrap() error { return ErrInvalidData }

// recoverErr turns a panic (GoMLX reports graph errors by panicking) into an
// error naming the group.
func recoverErr(group string, err *error) {
	if r := recover(); r != nil {
		e, ok := r.(error)
		if !ok {
			e = fmt.Errorf("%v", r)
		}
		*err = fmt.Errorf("model: group %q: panic: %w\n%s", group, e, debug.Stack())
	}
}
