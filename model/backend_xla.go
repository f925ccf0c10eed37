//go:build cgo && !noxla

package model

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/xla"
)

func newXLABackend(name, plugin string) (backends.Backend, error) {
	xla.EnableAutoInstall(false) // programmatic: a missing plugin is an error, never a download
	pluginName, _, _ := cutOptions(plugin)
	if !filepath.IsAbs(pluginName) {
		if !slices.Contains(xla.GetAvailablePlugins(), pluginName) {
			return nil, fmt.Errorf("model: backend %q: %s", name, xlaInstallHelp(pluginName))
		}
	} else if _, err := os.Stat(pluginName); err != nil {
		return nil, fmt.Errorf("model: backend %q: %w", name, err)
	}
	b, err := xla.New(plugin)
	if err != nil {
		return nil, fmt.Errorf("model: backend %q: %w (%s)", name, err, xlaInstallHelp(pluginName))
	}
	return b, nil
}
