// Package faultpoint lets a test kill this process at a named point, the
// way a power cut or kill -9 would, to check what a crash there leaves
// behind. A point is hit by Hit(name); the process dies by SIGKILL (no
// deferred call, no cleanup) when the environment variable
// LABELPRIVACY_FAULTPOINT equals name at start-up. Unset (always, outside
// tests) Hit does nothing but compare two strings.
package faultpoint

import "os"

// Env is the environment variable naming the point to die at.
const Env = "LABELPRIVACY_FAULTPOINT"

var armed = os.Getenv(Env)

// Hit kills the process if name is the armed point.
func Hit(name string) {
	if armed != "" && armed == name {
		kill()
	}
}
