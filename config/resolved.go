package config

import (
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"labelprivacy/internal/atomicfile"
)

// Invocation is how a config was given: the command line (shell-quoted,
// every --set included), the TRAIN_* variables that set config keys
// (NAME=value, sorted), the config file read and the --set overrides in
// their order. Load fills all but the command line, which its caller
// knows; a program building a Config may leave it empty.
type Invocation struct {
	Command    string
	Env        []string
	ConfigFile string
	Sets       []string
}

// WriteResolved writes the effective config to <output>/config.resolved.yaml
// (it holds the seed: it stays with the raw data, never with a release);
// Load reads it back to the same Config.
func (c *Config) WriteResolved() (string, error) {
	b, err := yaml.Marshal(c)
	if err != nil {
		return "", err
	}
	path := filepath.Join(c.Output, "config.resolved.yaml")
	header := "# The configuration this run resolved (file + TRAIN_* environment + --set).\n"
	if inv := c.Invocation; inv.Command != "" {
		header += "# Command: " + inv.Command + "\n"
		for _, e := range inv.Env {
			header += "# Environment: " + e + "\n"
		}
	}
	return path, atomicfile.WriteFile(path, append([]byte(header), b...))
}
