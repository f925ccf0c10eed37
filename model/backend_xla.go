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

// XLAAvailable reports whether this binary was built with the XLA backend
// (it needs cgo; the build tag "noxla" leaves it out).
const XLAAvailable = true

func newXLABackend(name, plugin string) (backends.Backend, error) {
	xla.EnableAutoInstall(false)
	if isCUDAPlugin(plugin) {
		// go-xla v0.1.4, when it finds ../nvidia next to the CUDA plugin, sets
		// XLA_FLAGS=--xla_gpu_cuda_data_dir to a path hard-coded for its
		// author's machine; its driver check can be turned off.
		if _, set := os.LookupEnv("GOPJRT_CUDA_CHECKS"); !set {
			_ = os.Setenv("GOPJRT_CUDA_CHECKS", "0")
		}
	}
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
