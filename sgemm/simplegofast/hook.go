package simplegofast

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"labelprivacy/sgemm"
)

// GoMLXVersion is the only GoMLX version this package installs on.
const GoMLXVersion = "v0.26.0"

const gomlxModule = "github.com/gomlx/gomlx"

// ErrNotInstalled wraps every reason Install refuses.
var ErrNotInstalled = errors.New("simplegofast: not installed")

// executor is simplego's nodeExecutor type.
type executor = func(*simplego.Backend, *simplego.Node, []*simplego.Buffer, []bool) (*simplego.Buffer, error)

// nodeExecutors is simplego's table of op executors (exec.go in v0.26.0:
// var nodeExecutors [backends.OpTypeLast]nodeExecutor). Only Install
// writes it, once, before the first Enable.
//
//go:linkname nodeExecutors github.com/gomlx/gomlx/backends/simplego.nodeExecutors
var nodeExecutors [backends.OpTypeLast]executor

var (
	installOnce sync.Once
	installErr  error
	original    executor // simplego's DotGeneral executor
	layout      structLayout
	// enabled holds the backends that use sgemm and the kernel each runs
	// (weak keys: a dropped backend is removed by its cleanup).
	enabled sync.Map // weak.Pointer[simplego.Backend] → sgemm.Kernel
	// active is set once Install has succeeded.
	active atomic.Bool
	// fastCalls counts products run on sgemm (tests, self-test).
	fastCalls atomic.Int64
)

// Install puts this package's DotGeneral executor in front of simplego's,
// once per process; later calls return the first call's result. On error
// (wrapping ErrNotInstalled) nothing was changed. Backends still run
// simplego's code until passed to Enable. Install writes a table simplego
// reads while executing, so call it before any simplego program runs
// (where backends are created), not concurrently with executions.
func Install() error {
	installOnce.Do(func() { installErr = install() })
	return installErr
}

func install() error {
	if !sgemm.HasAVX2() {
		return fmt.Errorf("%w: sgemm's AVX2/FMA kernel is not available (not amd64, the purego build tag, or a CPU without AVX2 and FMA); simplego's code runs", ErrNotInstalled)
	}
	orig := nodeExecutors[backends.OpTypeDotGeneral]
	if orig == nil {
		return fmt.Errorf("%w: simplego has no DotGeneral executor", ErrNotInstalled)
	}
	if err := checkVersion(orig); err != nil {
		return err
	}
	l, err := readLayout()
	if err != nil {
		return fmt.Errorf("%w: GoMLX's simplego structures differ from v0.26.0's: %v", ErrNotInstalled, err)
	}
	replaced := []struct {
		op   backends.OpType
		orig *executor
		fast executor
	}{
		{backends.OpTypeDotGeneral, &original, execDotGeneral},
		{backends.OpTypeWhere, &originalWhere, execWhere},
		{backends.OpTypeSlice, &originalSlice, execSlice},
		{backends.OpTypeGreaterOrEqual, &originalGE, execGreaterOrEqual},
	}
	for _, r := range replaced {
		if nodeExecutors[r.op] == nil {
			return fmt.Errorf("%w: simplego has no %s executor", ErrNotInstalled, r.op)
		}
	}
	layout = l
	for _, r := range replaced {
		*r.orig, nodeExecutors[r.op] = nodeExecutors[r.op], r.fast
	}
	if err := selfTest(); err != nil {
		for _, r := range replaced {
			nodeExecutors[r.op] = *r.orig
		}
		return fmt.Errorf("%w: self-test failed: %v", ErrNotInstalled, err)
	}
	active.Store(true)
	return nil
}

// checkVersion requires GoMLX v0.26.0: the build info's module version
// when it lists modules (go build, go run, go install), else (test
// binaries list none) the path of the source file of simplego's executor,
// which the go command puts under the module cache's gomlx@v0.26.0. A
// replaced or vendored GoMLX is refused: its structures may differ.
func checkVersion(orig executor) error {
	var deps []*debug.Module
	if bi, ok := debug.ReadBuildInfo(); ok {
		deps = bi.Deps
	}
	return versionFrom(deps, sourceFile(orig))
}

// versionFrom is checkVersion's decision from the build info's modules and
// the file that defines simplego's DotGeneral executor.
func versionFrom(deps []*debug.Module, file string) error {
	for _, d := range deps {
		if d.Path != gomlxModule {
			continue
		}
		if d.Replace != nil {
			return fmt.Errorf("%w: GoMLX is replaced by %s %s; written for %s", ErrNotInstalled, d.Replace.Path, d.Replace.Version, GoMLXVersion)
		}
		if d.Version != GoMLXVersion {
			return fmt.Errorf("%w: GoMLX is %s; written for %s", ErrNotInstalled, d.Version, GoMLXVersion)
		}
		return nil
	}
	if !strings.Contains(file, gomlxModule+"@"+GoMLXVersion+"/backends/simplego/") {
		return fmt.Errorf("%w: cannot tell the GoMLX version (build info lists no %s; simplego's DotGeneral is in %q); written for %s",
			ErrNotInstalled, gomlxModule, file, GoMLXVersion)
	}
	return nil
}

// sourceFile is the file that defines f.
func sourceFile(f any) string {
	fn := runtime.FuncForPC(reflect.ValueOf(f).Pointer())
	if fn == nil {
		return ""
	}
	file, _ := fn.FileLine(fn.Entry())
	return file
}

// Enable makes b run float32 DotGeneral on sgemm's kernel kern
// (sgemm.KernelAVX2 or sgemm.KernelAVX512; calling it again switches the
// kernel). It fails when Install has not succeeded, the kernel is not an
// assembly kernel this CPU runs, or b is not a simplego backend.
func Enable(b backends.Backend, kern sgemm.Kernel) error {
	if err := Install(); err != nil {
		return err
	}
	if kern == sgemm.KernelGo || !kern.Available() {
		return fmt.Errorf("%w: sgemm kernel %s is not available on this CPU (available: %v)", ErrNotInstalled, kern, sgemm.Kernels())
	}
	sb, ok := b.(*simplego.Backend)
	if !ok {
		return fmt.Errorf("simplegofast: backend %T is not simplego's", b)
	}
	enable(sb, kern)
	return nil
}

func enable(sb *simplego.Backend, kern sgemm.Kernel) {
	key := weak.Make(sb)
	if _, loaded := enabled.Swap(key, kern); !loaded {
		runtime.AddCleanup(sb, func(k weak.Pointer[simplego.Backend]) { enabled.Delete(k) }, key)
	}
}

// Enabled reports whether b runs float32 DotGeneral on sgemm.
func Enabled(b backends.Backend) bool {
	_, on := Kernel(b)
	return on
}

// Kernel is the sgemm kernel b runs float32 DotGeneral on; false when b
// does not use sgemm.
func Kernel(b backends.Backend) (sgemm.Kernel, bool) {
	sb, ok := b.(*simplego.Backend)
	if !ok || !active.Load() {
		return 0, false
	}
	return kernelOf(sb)
}

func kernelOf(sb *simplego.Backend) (sgemm.Kernel, bool) {
	v, on := enabled.Load(weak.Make(sb))
	if !on {
		return 0, false
	}
	return v.(sgemm.Kernel), true
}

func isEnabled(sb *simplego.Backend) bool {
	_, on := enabled.Load(weak.Make(sb))
	return on
}

// structLayout locates the unexported fields this package reads.
type structLayout struct {
	nodeData    int   // simplego.Node.data (any: *dotGeneralNodeData for DotGeneral)
	parallelism []int // simplego.Backend.workers.maxParallelism (int)
}

// paramLayouts caches the validation of dotGeneralNodeData on its first
// use (the type is unexported: only a node holds one).
var paramLayouts sync.Map // reflect.Type → *paramFields or error

func readLayout() (structLayout, error) {
	var l structLayout
	f, ok := reflect.TypeFor[simplego.Node]().FieldByName("data")
	if !ok || f.Type.Kind() != reflect.Interface || f.Type.NumMethod() != 0 {
		return l, errors.New("simplego.Node has no field data of type any")
	}
	l.nodeData = f.Index[0]
	w, ok := reflect.TypeFor[simplego.Backend]().FieldByName("workers")
	if !ok || w.Type.Kind() != reflect.Struct {
		return l, errors.New("simplego.Backend has no struct field workers")
	}
	p, ok := w.Type.FieldByName("maxParallelism")
	if !ok || p.Type.Kind() != reflect.Int {
		return l, errors.New("simplego's workersPool has no int field maxParallelism")
	}
	l.parallelism = append(append([]int(nil), w.Index...), p.Index...)
	return l, nil
}

// paramFields are the field indices of simplego's dotGeneralNodeData.
type paramFields struct {
	lhsContracting, lhsBatch, rhsContracting, rhsBatch int // []int
	batch, lhsCross, rhsCross, contracting             int // int
}

var wantParams = []struct {
	name string
	kind reflect.Kind
}{
	{"lhsContractingAxes", reflect.Slice}, {"lhsBatchAxes", reflect.Slice},
	{"rhsContractingAxes", reflect.Slice}, {"rhsBatchAxes", reflect.Slice},
	{"batchSize", reflect.Int}, {"lhsCrossSize", reflect.Int}, {"rhsCrossSize", reflect.Int}, {"contractingSize", reflect.Int},
}

// fieldsOf validates the type of a DotGeneral node's data (a pointer to
// simplego's dotGeneralNodeData) and returns its field indices.
func fieldsOf(t reflect.Type) (*paramFields, error) {
	if v, ok := paramLayouts.Load(t); ok {
		if err, bad := v.(error); bad {
			return nil, err
		}
		return v.(*paramFields), nil
	}
	var idx [8]int
	err := func() error {
		if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct || t.Elem().Name() != "dotGeneralNodeData" ||
			t.Elem().PkgPath() != gomlxModule+"/backends/simplego" {
			return fmt.Errorf("DotGeneral node data is %v, want *simplego.dotGeneralNodeData", t)
		}
		for i, w := range wantParams {
			f, ok := t.Elem().FieldByName(w.name)
			if !ok || f.Type.Kind() != w.kind || (w.kind == reflect.Slice && f.Type.Elem().Kind() != reflect.Int) {
				return fmt.Errorf("dotGeneralNodeData.%s missing or not %v", w.name, w.kind)
			}
			idx[i] = f.Index[0]
		}
		return nil
	}()
	if err != nil {
		paramLayouts.Store(t, err)
		return nil, err
	}
	pf := &paramFields{idx[0], idx[1], idx[2], idx[3], idx[4], idx[5], idx[6], idx[7]}
	paramLayouts.Store(t, pf)
	return pf, nil
}

// dotParams is a DotGeneral node's description.
type dotParams struct {
	lhsContracting, lhsBatch, rhsContracting, rhsBatch []int
	batch, lhsCross, rhsCross, contracting             int
}

// readParams reads node's dotGeneralNodeData through reflection (reading,
// never writing, unexported fields).
func readParams(node *simplego.Node) (dotParams, error) {
	d := reflect.ValueOf(node).Elem().Field(layout.nodeData)
	if d.IsNil() {
		return dotParams{}, errors.New("DotGeneral node without data")
	}
	pv := d.Elem()
	f, err := fieldsOf(pv.Type())
	if err != nil {
		return dotParams{}, err
	}
	s := pv.Elem()
	ints := func(i int) []int {
		v := s.Field(i)
		out := make([]int, v.Len())
		for j := range out {
			out[j] = int(v.Index(j).Int())
		}
		return out
	}
	return dotParams{
		lhsContracting: ints(f.lhsContracting), lhsBatch: ints(f.lhsBatch),
		rhsContracting: ints(f.rhsContracting), rhsBatch: ints(f.rhsBatch),
		batch: int(s.Field(f.batch).Int()), lhsCross: int(s.Field(f.lhsCross).Int()),
		rhsCross: int(s.Field(f.rhsCross).Int()), contracting: int(s.Field(f.contracting).Int()),
	}, nil
}

// threads is the backend's parallelism option (simplego's
// "parallelism=N": 0 disables parallelism, < 0 is unlimited; default
// NumCPU), capped at GOMAXPROCS and at the cap SetThreads gave it.
func threads(b *simplego.Backend) int {
	p := int(reflect.ValueOf(b).Elem().FieldByIndex(layout.parallelism).Int())
	g := runtime.GOMAXPROCS(0)
	switch {
	case p == 0:
		p = 1
	case p < 0 || p > g:
		p = g
	}
	if v, ok := threadCaps.Load(weak.Make(b)); ok {
		if c := int(v.(*atomic.Int32).Load()); c > 0 && c < p {
			p = c
		}
	}
	return p
}

// threadCaps holds the caps SetThreads set (weak keys, removed with their
// backend).
var threadCaps sync.Map // weak.Pointer[simplego.Backend] → *atomic.Int32

// SetThreads caps the goroutines that b's float32 products and this
// package's element-wise kernels use at n (below b's parallelism option
// and GOMAXPROCS); n ≤ 0 removes the cap. Results do not depend on it, and
// it may change while b executes (each op reads it when it starts): a
// process training several groups at once gives each its share of the
// cores. It does nothing for a backend that is not simplego's.
func SetThreads(b backends.Backend, n int) {
	sb, ok := b.(*simplego.Backend)
	if !ok {
		return
	}
	key := weak.Make(sb)
	v, loaded := threadCaps.LoadOrStore(key, new(atomic.Int32))
	if !loaded {
		runtime.AddCleanup(sb, func(k weak.Pointer[simplego.Backend]) { threadCaps.Delete(k) }, key)
	}
	v.(*atomic.Int32).Store(int32(max(n, 0)))
}

// Threads is the number of goroutines b's products use now (its
// parallelism option, GOMAXPROCS and SetThreads' cap); GOMAXPROCS for a
// backend that is not simplego's or before Install succeeded.
func Threads(b backends.Backend) int {
	sb, ok := b.(*simplego.Backend)
	if !ok || !active.Load() {
		return runtime.GOMAXPROCS(0)
	}
	return threads(sb)
}

// execDotGeneral is the replacement executor: sgemm for float32 on enabled
// backends, simplego's own otherwise.
func execDotGeneral(backend *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer, owned []bool) (*simplego.Buffer, error) {
	kern, on := kernelOf(backend)
	if len(inputs) != 2 || !on {
		return original(backend, node, inputs, owned)
	}
	lhsShape, err1 := backend.BufferShape(inputs[0])
	rhsShape, err2 := backend.BufferShape(inputs[1])
	if err1 != nil || err2 != nil || lhsShape.DType != dtypes.Float32 || rhsShape.DType != dtypes.Float32 {
		return original(backend, node, inputs, owned)
	}
	p, err := readParams(node)
	if err != nil {
		return nil, fmt.Errorf("simplegofast: %w", err)
	}
	lflat, err1 := backend.BufferData(inputs[0])
	rflat, err2 := backend.BufferData(inputs[1])
	if err1 != nil || err2 != nil {
		return original(backend, node, inputs, owned)
	}
	lhs, rhs := lflat.([]float32), rflat.([]float32)
	a, aTmp, err := operand(lhs, lhsShape.Dimensions, p.lhsContracting, p.lhsBatch, p.batch, p.lhsCross, p.contracting)
	if err != nil {
		return nil, fmt.Errorf("simplegofast: lhs %s: %w", lhsShape, err)
	}
	defer putTemp(aTmp)
	b, bTmp, err := operand(rhs, rhsShape.Dimensions, p.rhsContracting, p.rhsBatch, p.batch, p.rhsCross, p.contracting)
	if err != nil {
		return nil, fmt.Errorf("simplegofast: rhs %s: %w", rhsShape, err)
	}
	defer putTemp(bTmp)
	out := backend.NewBuffer(shapes.Make(dtypes.Float32, p.batch, p.lhsCross, p.rhsCross))
	oflat, err := backend.BufferData(out)
	if err != nil {
		return nil, err
	}
	c := sgemm.RowMajor(oflat.([]float32), p.lhsCross, p.rhsCross)
	// lhs is [batch, m, k] (A); rhs is [batch, n, k], i.e. Bᵀ.
	sgemm.MultiplyWith(kern, p.batch, p.lhsCross, p.rhsCross, p.contracting, a, b.T(), c, threads(backend))
	fastCalls.Add(1)
	return out, nil
}

// operand views data (dims, row-major) as [batch, cross, contracting] with
// one stride per group when its axes allow, else copies it into that order
// (tmp, to be returned with putTemp). It checks the sizes against the
// node's.
func operand(data []float32, dims, contracting, batch []int, batchSize, crossSize, contractSize int) (v sgemm.Strided, tmp *[]float32, err error) {
	rank := len(dims)
	strides := make([]int, rank)
	s := 1
	for ax := rank - 1; ax >= 0; ax-- {
		strides[ax] = s
		s *= dims[ax]
	}
	kind := make([]byte, rank) // 0 cross, 1 contracting, 2 batch
	for _, ax := range contracting {
		if ax < 0 || ax >= rank || kind[ax] != 0 {
			return v, nil, fmt.Errorf("bad contracting axes %v", contracting)
		}
		kind[ax] = 1
	}
	for _, ax := range batch {
		if ax < 0 || ax >= rank || kind[ax] != 0 {
			return v, nil, fmt.Errorf("bad batch axes %v", batch)
		}
		kind[ax] = 2
	}
	var cross []int
	for ax := range rank {
		if kind[ax] == 0 {
			cross = append(cross, ax)
		}
	}
	bn, bs, bok := collapse(batch, dims, strides)
	cn, cs, cok := collapse(cross, dims, strides)
	kn, ks, kok := collapse(contracting, dims, strides)
	if bn != batchSize || cn != crossSize || kn != contractSize || len(data) != s {
		return v, nil, fmt.Errorf("sizes (batch %d, free %d, contracting %d of %d values) differ from the node's (%d, %d, %d)",
			bn, cn, kn, len(data), batchSize, crossSize, contractSize)
	}
	if bok && cok && kok {
		return sgemm.Strided{Data: data, Batch: bs, Row: cs, Col: ks}, nil, nil
	}
	// Copy into [batch, cross, contracting]: walk the destination in order
	// over the virtual axes (batch axes as listed, free axes in order,
	// contracting axes as listed) with the source's strides.
	order := append(append(append([]int(nil), batch...), cross...), contracting...)
	tmp = getTemp(s)
	dst := *tmp
	idx := make([]int, len(order))
	src := 0
	for i := range dst {
		dst[i] = data[src]
		for j := len(order) - 1; j >= 0; j-- {
			ax := order[j]
			idx[j]++
			src += strides[ax]
			if idx[j] < dims[ax] {
				break
			}
			src -= strides[ax] * dims[ax]
			idx[j] = 0
		}
	}
	return sgemm.Strided{Data: dst, Batch: crossSize * contractSize, Row: contractSize, Col: 1}, tmp, nil
}

// collapse flattens axes (in the given order, row-major) into one index:
// its size, and its stride when the axes are consecutive in memory
// (ok). Axes of size 1 are skipped; no axes give size 1, stride 0.
func collapse(axes, dims, strides []int) (size, stride int, ok bool) {
	size, ok = 1, true
	prev := -1
	for _, ax := range axes {
		size *= dims[ax]
		if dims[ax] == 1 {
			continue
		}
		if prev >= 0 && strides[prev] != strides[ax]*dims[ax] {
			ok = false
		}
		prev = ax
	}
	if prev >= 0 {
		stride = strides[prev]
	}
	return size, stride, ok
}

var temps sync.Pool // *[]float32

func getTemp(n int) *[]float32 {
	if p, _ := temps.Get().(*[]float32); p != nil && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]float32, n)
	return &s
}

func putTemp(p *[]float32) {
	if p != nil {
		temps.Put(p)
	}
}

var _ = unsafe.Pointer(nil) // //go:linkname needs package unsafe imported

func weakKey(sb *simplego.Backend) weak.Pointer[simplego.Backend] { return weak.Make(sb) }
