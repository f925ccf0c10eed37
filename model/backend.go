package model

import (
	"fmt"
	"strings"
	"sync"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"

	"labelprivacy/sgemm"
	"labelprivacy/sgemm/simplegofast"
)

// DefaultBackend is the backend name used when none is configured: GoMLX's
// pure-Go backend, which builds and runs anywhere (no cgo, no plugins).
const DefaultBackend = "go"

// DefaultGoOptions are the simplego options of backend "go". GoMLX v0.26's
// pure-Go executor can deadlock when it runs independent ops in parallel:
// an op running on a pool worker (e.g. a small DotGeneral) waits for more
// workers to split its own work, and with all 2·NumCPU slots held by such
// waiting ops nothing finishes (seen here on 2 cores in about 1 of 20
// kdd_embed test runs; the stacks end in workersPool.WaitToStart). Executing
// ops sequentially keeps each op's own parallelism and removes the nested
// wait, at a few percent of throughput on the Higgs MLP. dotgeneral_large
// uses simplego's blocked matmul kernel for every product: kdd_embed's small
// dense layers (50→100→50) then train 15% faster (37k → 42k examples/s at
// batch 1024 on 2 cores), the Higgs MLP is unchanged (~5.0k).
const DefaultGoOptions = "ops_sequential,dotgeneral_large"

// Matrix-product paths of backend "go" (Matmul, MatmulPath; the run
// record's matmul column).
const (
	// MatmulAVX512: float32 DotGeneral runs on package sgemm's packed
	// AVX-512 kernel (installed by package simplegofast).
	MatmulAVX512 = "avx512"
	// MatmulAVX2: the same on sgemm's AVX2/FMA kernel. Both kernels give
	// the same bits (sgemm's doc); AVX-512 runs about twice as fast.
	MatmulAVX2 = "avx2"
	// MatmulSimplego: simplego's own scalar blocked kernel.
	MatmulSimplego = "simplego"
	// MatmulXLA: an XLA backend (its own compiler picks the kernels).
	MatmulXLA = "xla"
)

// matmulOption is the option of backend "go" that picks the product path:
// matmul=auto (default: avx512 where the CPU has AVX-512, else avx2, where
// the hook installs; else simplego), matmul=avx512 or matmul=avx2 (an
// error where that kernel does not run) or matmul=simplego (off).
const matmulOption = "matmul"

// NewBackend returns the GoMLX backend with the given name:
//
//   - "" or "go": the pure-Go backend (package simplego) with
//     DefaultGoOptions; "go:<options>" passes simplego options through
//     instead, e.g. "go:parallelism=2" or "go:ops_parallel". The option
//     matmul=auto|avx512|avx2|simplego (this package's, not simplego's)
//     picks the matrix-product kernel; on its own, e.g.
//     "go:matmul=simplego", it keeps DefaultGoOptions. With auto (the
//     default) float32 products run on package sgemm's AVX-512 kernel on
//     CPUs with AVX-512F, else on its AVX2/FMA kernel, when
//     simplegofast.Install accepts this binary (GoMLX v0.26.0, amd64 with
//     AVX2 and FMA), else on simplego's own; Matmul tells which.
//   - "xla:cpu", "xla:cuda", or "xla:<plugin>": the XLA/PJRT backend with that
//     plugin. Plugins are searched in the directories of
//     PJRT_PLUGIN_LIBRARY_PATH (':'-separated, read at program start) under the
//     name pjrt_c_api_<plugin>_plugin.so. "xla:/abs/path/plugin.so" loads a
//     plugin file directly.
//
// NewBackend never downloads anything (it turns GoMLX's plugin auto-install
// off programmatically): a missing plugin is an error that says how to
// install one. It does not touch the process environment; see BackendEnv for
// what a caller may want to set first. The XLA backend needs cgo; a binary
// built with CGO_ENABLED=0 or with the build tag "noxla" has only the "go"
// backend.
//
// NewBackend installs this package's fast gradients (dotvjp.go) in GoMLX's
// registry, once per process, before any graph is built on the backend.
func NewBackend(name string) (backends.Backend, error) {
	b, err := ParseBackend(name)
	if err != nil {
		return nil, err
	}
	return b.Open()
}

// BackendName is a parsed backend name (the config key backend): "go",
// "go:<options>" (simplego options plus matmul=auto|avx512|avx2|simplego),
// "xla:<plugin>". The zero value is not a backend; ParseBackend makes one.
// Its text is the name as given (trimmed), so it names runs and configs
// exactly as the user wrote it.
type BackendName struct {
	name     string // as given, trimmed
	kind     string // "go" or "xla"
	simplego string // go: simplego's options
	matmul   string // go: auto, MatmulAVX512, MatmulAVX2 or MatmulSimplego
	plugin   string // xla: the PJRT plugin
}

// ParseBackend parses a backend name ("" is DefaultBackend); the error
// says which names exist.
func ParseBackend(name string) (BackendName, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		name = DefaultBackend
	}
	b := BackendName{name: name}
	kind, opts, hasOpts := strings.Cut(name, ":")
	switch kind {
	case simplego.BackendName:
		if hasOpts && opts == "" {
			return BackendName{}, fmt.Errorf("%w: backend %q: empty options after \"go:\"", ErrInvalidConfig, name)
		}
		var err error
		if b.simplego, b.matmul, err = goOptions(opts, hasOpts); err != nil {
			return BackendName{}, fmt.Errorf("model: backend %q: %w", name, err)
		}
		b.kind = "go"
	case "xla":
		if opts == "" {
			return BackendName{}, fmt.Errorf("%w: backend %q: name a PJRT plugin, e.g. \"xla:cpu\" or \"xla:cuda\" (backend \"go\" works anywhere)", ErrInvalidConfig, name)
		}
		b.kind, b.plugin = "xla", opts
	default:
		return BackendName{}, fmt.Errorf("%w: unknown backend %q: want \"go\", \"go:<options>\", \"xla:cpu\", \"xla:cuda\" or \"xla:<plugin>\"", ErrInvalidConfig, name)
	}
	return b, nil
}

// String is the name as given.
func (b BackendName) String() string { return b.name }

// IsGo reports whether b is the pure-Go backend.
func (b BackendName) IsGo() bool { return b.kind == "go" }

// HostMemory reports whether b keeps a model's state in this machine's
// memory (go, xla:cpu) rather than on a device.
func (b BackendName) HostMemory() bool {
	return b.kind == "go" || (b.kind == "xla" && b.plugin == "cpu")
}

// MarshalText writes the name.
func (b BackendName) MarshalText() ([]byte, error) { return []byte(b.name), nil }

// UnmarshalText parses a name (ParseBackend).
func (b *BackendName) UnmarshalText(text []byte) error {
	v, err := ParseBackend(string(text))
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// Open creates the backend (see NewBackend).
func (b BackendName) Open() (be backends.Backend, err error) {
	if b.kind == "" {
		return nil, fmt.Errorf("%w: no backend named", ErrInvalidConfig)
	}
	installFastVJPs()
	defer func() {
		if r := recover(); r != nil {
			be, err = nil, fmt.Errorf("model: creating backend %q: %v", b.name, r)
		}
	}()
	if b.kind == "xla" {
		return newXLABackend(b.name, b.plugin)
	}
	be, err = simplego.New(b.simplego)
	if err != nil {
		return nil, fmt.Errorf("model: creating backend %q: %w", b.name, err)
	}
	if b.matmul != MatmulSimplego {
		if err := simplegofast.Enable(be, b.kernel()); err != nil && b.matmul != "auto" {
			be.Finalize()
			return nil, fmt.Errorf("model: backend %q: matmul=%s: %w", b.name, b.matmul, err)
		}
	}
	return be, nil
}

// kernel is the sgemm kernel matmul asks for (auto: the best one).
func (b BackendName) kernel() sgemm.Kernel {
	switch b.matmul {
	case MatmulAVX512:
		return sgemm.KernelAVX512
	case MatmulAVX2:
		return sgemm.KernelAVX2
	}
	return sgemm.Best()
}

// goOptions splits the options of backend "go" into simplego's (default
// DefaultGoOptions when none but matmul are given) and the matmul choice
// ("auto", MatmulAVX512, MatmulAVX2 or MatmulSimplego).
func goOptions(opts string, hasOpts bool) (simplegoOpts, matmul string, err error) {
	matmul = "auto"
	if !hasOpts {
		return DefaultGoOptions, matmul, nil
	}
	var rest []string
	for _, o := range strings.Split(opts, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(o), "=")
		if k != matmulOption {
			rest = append(rest, o)
			continue
		}
		switch v {
		case "auto", MatmulAVX512, MatmulAVX2, MatmulSimplego:
			matmul = v
		default:
			return "", "", fmt.Errorf("%w: option %s=%q: want auto, %s, %s or %s", ErrInvalidConfig, matmulOption, v,
				MatmulAVX512, MatmulAVX2, MatmulSimplego)
		}
	}
	if len(rest) == 0 {
		return DefaultGoOptions, matmul, nil
	}
	return strings.Join(rest, ","), matmul, nil
}

// isGoBackend reports whether be is GoMLX's pure-Go backend.
func isGoBackend(be backends.Backend) bool {
	_, ok := be.(*simplego.Backend)
	return ok
}

// Matmul names the matrix-product path backend be runs float32 products
// on: MatmulAVX512, MatmulAVX2, MatmulSimplego or MatmulXLA.
func Matmul(be backends.Backend) string {
	if k, ok := simplegofast.Kernel(be); ok {
		return k.String()
	}
	if isGoBackend(be) {
		return MatmulSimplego
	}
	return MatmulXLA
}

// usesSgemm reports whether be runs float32 products on an sgemm kernel
// (either: they give the same bits, so the graphs built for them must be
// the same too).
func usesSgemm(be backends.Backend) bool { return simplegofast.Enabled(be) }

// Matmul is the package's Matmul for the backend Open makes, without
// making one. It may install the kernel (simplegofast.Install), as Open
// would.
func (b BackendName) Matmul() string {
	switch {
	case b.kind == "xla":
		return MatmulXLA
	case b.kind == "":
		return ""
	case b.matmul == MatmulSimplego:
		return MatmulSimplego
	case simplegofast.Install() == nil && b.kernel().Available():
		return b.kernel().String()
	case b.matmul != "auto":
		return "" // Open fails
	}
	return MatmulSimplego
}

// MatmulNote says why backend "go" runs simplego's own kernel when an
// sgemm one was wanted (matmul=auto) but the hook refused to install; ""
// when it installed.
func MatmulNote() string {
	if err := simplegofast.Install(); err != nil {
		return strings.TrimPrefix(err.Error(), simplegofast.ErrNotInstalled.Error()+": ")
	}
	return ""
}

// fallbackNotice is said once per process (FallbackNotice).
var fallbackNotice onceNotice

// FallbackNotice is, the first time it is called in a process for a
// backend that asked for sgemm (matmul=auto) and runs simplego's own
// kernel because the hook refused to install (or its self-test failed),
// the sentence to tell the user once (e.g. on stderr): which kernel runs,
// why, and what it costs. It is "" on every later call and for every
// other backend.
func FallbackNotice(be backends.Backend) string {
	if Matmul(be) != MatmulSimplego {
		return ""
	}
	return fallbackNotice.take(simplegofast.Install())
}

// onceNotice turns the hook's refusal into a sentence, the first time only.
type onceNotice struct{ once sync.Once }

func (o *onceNotice) take(refused error) string {
	if refused == nil {
		return ""
	}
	msg := ""
	o.once.Do(func() {
		why := strings.TrimPrefix(refused.Error(), simplegofast.ErrNotInstalled.Error()+": ")
		msg = "matrix products run on GoMLX's own kernel, about 25× slower than sgemm's (runs record matmul: simplego): " + why
	})
	return msg
}

// CUDAChecksEnv is go-xla's switch for its CUDA driver checks. With the checks
// on (the default) and an nvidia/ directory next to the CUDA plugin's parent,
// go-xla v0.1.4 sets XLA_FLAGS=--xla_gpu_cuda_data_dir to a path hard-coded
// for its author's machine, which breaks compilation.
const CUDAChecksEnv = "GOPJRT_CUDA_CHECKS"

// BackendEnv returns the environment variables a program should set (with
// os.Setenv, before calling NewBackend, unless the user set them) for the
// named backend: {CUDAChecksEnv: "0"} for a CUDA plugin, nothing otherwise.
// NewBackend itself never changes the environment.
func BackendEnv(name string) map[string]string {
	kind, plugin, _ := strings.Cut(strings.TrimSpace(name), ":")
	if kind == "xla" && isCUDAPlugin(plugin) {
		return map[string]string{CUDAChecksEnv: "0"}
	}
	return nil
}

// xlaInstallHelp explains how to make a PJRT plugin available.
func xlaInstallHelp(plugin string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "PJRT plugin %q not available (auto-download is disabled). ", plugin)
	switch plugin {
	case "cuda":
		sb.WriteString("Point PJRT_PLUGIN_LIBRARY_PATH at a directory holding pjrt_c_api_cuda_plugin.so " +
			"(e.g. a symlink to xla_cuda_plugin.so from jax's CUDA PJRT wheel, jax_plugins/xla_cuda*/ in its site-packages; " +
			"the NVIDIA libraries it needs come from the nvidia-* wheels), or use \"xla:/abs/path/to/xla_cuda_plugin.so\". ")
	default:
		fmt.Fprintf(&sb, "Point PJRT_PLUGIN_LIBRARY_PATH at a directory holding pjrt_c_api_%s_plugin.so "+
			"(e.g. from github.com/gomlx/pjrt-cpu-binaries releases for the cpu plugin), or use \"xla:/abs/path/to/plugin.so\". ", plugin)
	}
	sb.WriteString("Backend \"go\" (pure Go) works anywhere.")
	return sb.String()
}

// cutOptions splits "plugin,opt1,opt2" into the plugin name and its options.
func cutOptions(s string) (name, opts string, found bool) {
	return strings.Cut(s, ",")
}

// isCUDAPlugin guesses, like go-xla does, whether a plugin is NVIDIA's.
func isCUDAPlugin(plugin string) bool {
	u := strings.ToUpper(plugin)
	return strings.Contains(u, "CUDA") || strings.Contains(u, "NVIDIA")
}
