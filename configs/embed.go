// Package configs embeds the default configuration so that the train binary
// works from any directory.
package configs

import _ "embed"

// Quickstart is configs/quickstart.yaml, the default of `train` and `train run`.
//
//go:embed quickstart.yaml
var Quickstart []byte

// QuickstartName names the embedded file in messages.
const QuickstartName = "configs/quickstart.yaml (embedded)"
