package data

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ImportOptions configures a streaming import.
type ImportOptions struct {
	In       string // input file (plain, .gz or .bz2: detected by magic bytes)
	TestIn   string // optional separate test file (libsvm)
	Out      string // dataset directory to write
	TestRows int64  // rows of In that form the test set (first rows, as in the paper); with TestIn: 0 = all of TestIn, else its first TestRows
	// DropInvalid drops rows with invalid values (NaN, ±Inf, numbers beyond
	// float32 in Higgs or float64 in libsvm: ErrInvalid), counted in
	// Meta.DroppedRows, instead of failing.
	DropInvalid bool
	HashBuckets uint32 // libsvm: hash buckets (0: DefaultHashBuckets, the paper's 500,000)
	// Classes is the number of label classes, 2..MaxClasses (0: 2, binary).
	// libsvm: with C ≥ 3 labels are the classes 0..C−1 (ParseLibSVMLineClasses)
	// and meta.json records classes; Higgs takes only 0 or 2.
	Classes int
	// Values, when not zero, makes the labels conversion values on this
	// grid (libsvm and csv): each is a real number, clipped to [0, B] and
	// rounded to the grid (counted in Meta.ClippedValues and
	// RoundedValues); NaN, ±Inf and a negative value are a *LineError
	// (ErrLabel) naming the file and line. Classes must then be 0.
	Values ValueGrid
	// LabelColumn is the csv importer's label column, by its header name.
	LabelColumn string
	// Progress, if set, is called after every chunk of rows.
	Progress func(ImportProgress)
}

// ImportProgress reports a running import. InputPos/InputSize is the
// fraction done, for a percentage and an ETA.
type ImportProgress struct {
	Rows    int64 // rows written so far (train + test)
	Bytes   int64 // uncompressed input bytes read so far
	Dropped int64
	// InputPos is how far the import has read into its input file(s), in
	// bytes as stored on disk (for .gz/.bz2 the position in the compressed
	// stream); a separate test file (TestIn) is read first and counts first.
	// It runs ahead of the rows written by at most the 1 MiB read buffer.
	InputPos int64
	// InputSize is the total size of the input file(s) in bytes, 0 when
	// unknown (a pipe or other non-regular file).
	InputSize int64
}

// chunkRows is the number of rows buffered before a record batch is written:
// memory stays bounded (~7 MiB for Higgs) whatever the input size.
const chunkRows = 1 << 16

// countingReader counts bytes read.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// input is an open input file.
type input struct {
	io.Reader                 // its content, decompressed
	raw       *countingReader // counts the bytes read from the file itself
	close     func() error
}

// openInput opens path, transparently decompressing gzip or bzip2 (by magic
// bytes, so a misnamed file still works).
func openInput(path string) (*input, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	raw := &countingReader{r: f}
	in := &input{raw: raw, close: f.Close}
	br := bufio.NewReaderSize(raw, 1<<20)
	magic, _ := br.Peek(3)
	switch {
	case len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, inFile(path, err)
		}
		in.Reader = zr
	case bytes.Equal(magic, []byte("BZh")):
		in.Reader = bzip2.NewReader(br)
	default:
		in.Reader = br
	}
	return in, nil
}

// inputSize returns the total size of the regular files paths, or 0 if any
// size is unknown.
func inputSize(paths ...string) int64 {
	var n int64
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() {
			return 0
		}
		n += st.Size()
	}
	return n
}

// lineReader yields lines with their 1-based numbers; lines may be longer
// than the buffer.
type lineReader struct {
	br   *bufio.Reader
	cr   *countingReader
	line int64
	long []byte
}

func newLineReader(r io.Reader) *lineReader {
	cr := &countingReader{r: r}
	return &lineReader{br: bufio.NewReaderSize(cr, 1<<20), cr: cr}
}

// next returns the next line without its newline; io.EOF at the end.
func (l *lineReader) next() ([]byte, error) {
	b, err := l.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		l.long = append(l.long[:0], b...)
		for err == bufio.ErrBufferFull {
			b, err = l.br.ReadSlice('\n')
			l.long = append(l.long, b...)
		}
		b = l.long
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	if len(b) == 0 && err == io.EOF {
		return nil, io.EOF
	}
	l.line++
	if l.line == 1 {
		b = bytes.TrimPrefix(b, utf8BOM) // spreadsheet exports start with one
	}
	return bytes.TrimRight(b, "\r\n"), nil
}

// utf8BOM is the UTF-8 byte order mark.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// errSkipLine is a rowParser's answer for a line that holds no row (a
// csv header).
var errSkipLine = errors.New("data: not a row")

// rowParser parses one non-blank line into the chunk being built.
type rowParser func(line []byte, c *Frame) error

// splitSink routes the first testRows rows to the test writer and the rest to
// the train writer, in chunks.
type splitSink struct {
	test, train   *Writer
	chunk         *Frame
	testRows      int64 // rows still owed to the test set
	maxIdx        int
	trainN, testN int64
	labels        [MaxClasses]int64 // training labels per class
	zeros         int64             // values: training values that are 0
	valueSum      float64           // values: their sum
	dropped       int64
}

func (s *splitSink) flush(toTest bool) error {
	c := s.chunk
	if c.Rows == 0 {
		return nil
	}
	w := s.train
	if toTest {
		w = s.test
		s.testN += int64(c.Rows)
	} else {
		s.trainN += int64(c.Rows)
		for _, y := range c.Label {
			s.labels[y]++
		}
		for _, v := range c.Value {
			if v == 0 {
				s.zeros++
			}
			s.valueSum += v
		}
	}
	if c.Offsets != nil {
		for i := range c.Rows {
			s.maxIdx = max(s.maxIdx, int(c.Offsets[i+1]-c.Offsets[i]))
		}
	}
	if err := w.Write(c); err != nil {
		return err
	}
	c.Rows, c.X, c.Label, c.Value = 0, c.X[:0], c.Label[:0], c.Value[:0]
	if c.Offsets != nil {
		c.Indices, c.Offsets = c.Indices[:0], c.Offsets[:1]
	}
	return nil
}

// consume reads every line of path into the sink. toTest decides, per row
// about to be added, whether the current chunk belongs to the test set.
func (s *splitSink) consume(ctx context.Context, path string, parse rowParser, limit int64, toTest func() bool, opts *ImportOptions, progress *ImportProgress) error {
	in, err := openInput(path)
	if err != nil {
		return err
	}
	defer in.close()
	lr := newLineReader(in)
	base := progress.InputPos
	var rows int64
	dest := toTest()
	for limit < 0 || rows < limit {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return &LineError{File: path, Line: lr.line + 1, Err: fmt.Errorf("%w: %v", ErrMalformed, err)}
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue // blank lines (e.g. a trailing one) carry no row
		}
		if d := toTest(); d != dest {
			if err := s.flush(dest); err != nil {
				return err
			}
			dest = d
		}
		if err := parse(line, s.chunk); err != nil {
			if err == errSkipLine {
				continue
			}
			if opts.DropInvalid && errors.Is(err, ErrInvalid) {
				s.dropped++
				continue
			}
			return &LineError{File: path, Line: lr.line, Err: err}
		}
		rows++
		if dest && s.testRows > 0 {
			s.testRows--
		}
		if s.chunk.Rows == chunkRows {
			if err := s.flush(dest); err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			progress.Rows = s.trainN + s.testN
			progress.Bytes += lr.cr.n
			lr.cr.n = 0
			progress.Dropped = s.dropped
			progress.InputPos = base + in.raw.n
			if opts.Progress != nil {
				opts.Progress(*progress)
			}
		}
	}
	progress.Bytes += lr.cr.n
	progress.InputPos = base + in.raw.n
	return s.flush(dest)
}

// runImport streams opts' input(s) through parse into the dataset's files,
// then writes meta.json (last: its presence marks a complete dataset).
func runImport(ctx context.Context, opts ImportOptions, like *Frame, parse rowParser, meta *Meta) (*Meta, error) {
	if opts.In == "" {
		return nil, fmt.Errorf("data: no input file given")
	}
	if opts.Out == "" {
		return nil, fmt.Errorf("data: no output directory given")
	}
	if opts.TestRows < 0 {
		return nil, fmt.Errorf("data: test rows must be ≥ 0, got %d", opts.TestRows)
	}
	return publishDataset(opts.Out, func(dir string) (*Meta, error) { return importInto(ctx, dir, opts, like, parse, meta) })
}

// importInto is runImport writing into the (new, temporary) directory dir.
func importInto(ctx context.Context, dir string, opts ImportOptions, like *Frame, parse rowParser, meta *Meta) (*Meta, error) {
	test, err := NewWriter(filepath.Join(dir, TestFile), like, map[string]string{"split": "test", "source": meta.Source})
	if err != nil {
		return nil, err
	}
	defer test.Abort()
	train, err := NewWriter(filepath.Join(dir, TrainFile), like, map[string]string{"split": "train", "source": meta.Source})
	if err != nil {
		return nil, err
	}
	defer train.Abort()
	chunk := &Frame{Features: like.Features, X: make([]float32, 0, chunkRows*like.Dim()), Classes: like.Classes}
	if like.Value != nil {
		chunk.Value = make([]float64, 0, chunkRows)
	} else {
		chunk.Label = make([]uint8, 0, chunkRows)
	}
	if like.Offsets != nil {
		chunk.Offsets = []int64{0}
	}
	s := &splitSink{test: test, train: train, chunk: chunk, testRows: opts.TestRows}
	prog := ImportProgress{InputSize: inputSize(opts.In)}
	if opts.TestIn != "" {
		prog.InputSize = inputSize(opts.TestIn, opts.In)
		limit := int64(-1)
		if opts.TestRows > 0 {
			limit = opts.TestRows
		}
		if err := s.consume(ctx, opts.TestIn, parse, limit, func() bool { return true }, &opts, &prog); err != nil {
			return nil, err
		}
		if err := s.consume(ctx, opts.In, parse, -1, func() bool { return false }, &opts, &prog); err != nil {
			return nil, err
		}
	} else if err := s.consume(ctx, opts.In, parse, -1, func() bool { return s.testRows > 0 }, &opts, &prog); err != nil {
		return nil, err
	}
	if s.trainN+s.testN == 0 {
		return nil, fmt.Errorf("%w: %s: no rows", ErrEmpty, opts.In)
	}
	if s.trainN == 0 {
		return nil, fmt.Errorf("%w: %s: all %d rows went to the test set (--test-rows %d); no training rows", ErrEmpty, opts.In, s.testN, opts.TestRows)
	}
	if s.testN == 0 {
		hint := "set --test-rows > 0 (the paper: 10,000)"
		if meta.Source == "libsvm" {
			hint += " or give --test"
		}
		return nil, fmt.Errorf("%w: the test set is empty (%s)", ErrEmpty, hint)
	}
	if opts.Progress != nil {
		prog.Rows, prog.Dropped = s.trainN+s.testN, s.dropped
		opts.Progress(prog)
	}
	if err := test.Commit(); err != nil {
		return nil, err
	}
	if err := train.Commit(); err != nil {
		return nil, err
	}
	meta.setContent(train.sum, test.sum)
	meta.TrainRows, meta.TestRows, meta.DroppedRows = s.trainN, s.testN, s.dropped
	switch {
	case like.Value != nil:
		meta.Labels, meta.ValueMax, meta.ValueStep = LabelsValues, opts.Values.Max, opts.Values.Step
		meta.ValueZeroRate = finitePtr(float64(s.zeros) / float64(s.trainN))
		meta.ValueMean = finitePtr(s.valueSum / float64(s.trainN))
	case like.NumClasses() >= 3:
		meta.Classes = like.NumClasses()
		meta.ClassRates = classRates(s.labels[:meta.Classes], int(s.trainN))
	default:
		meta.PositiveRate = positiveRate(s.trainN-s.labels[0], s.trainN)
	}
	meta.MaxIndices = s.maxIdx
	meta.Features = like.Features
	if meta.Features == nil {
		meta.Features = []string{}
	}
	if err := WriteMeta(dir, meta); err != nil {
		return nil, err
	}
	return meta, nil
}

// ImportHiggs imports the UCI HIGGS.csv (29 comma-separated numeric columns,
// label first; plain, .gz or .bz2) into a dataset directory, streaming with
// bounded memory. The first TestRows rows (the paper: 10,000) are the test set.
//
// Higgs labels are binary: Classes other than 0 and 2 are refused.
func ImportHiggs(ctx context.Context, opts ImportOptions) (*Meta, error) {
	if opts.Classes != 0 && opts.Classes != 2 {
		return nil, fmt.Errorf("%w: %s %d: the Higgs dataset has binary labels (signal/background); use classes 2", ErrInvalid, MetaClasses, opts.Classes)
	}
	like := &Frame{Features: HiggsFeatures, Label: []uint8{}}
	d := len(HiggsFeatures)
	var feats [28]float32
	parse := func(line []byte, c *Frame) error {
		y, err := ParseHiggsLine(line, feats[:])
		if err != nil {
			return err
		}
		c.X = append(c.X, feats[:d]...)
		c.Label = append(c.Label, y)
		c.Rows++
		return nil
	}
	return runImport(ctx, opts, like, parse, &Meta{Source: "higgs", Input: opts.In, Dims: d})
}

// DefaultHashBuckets is the paper's hashed dimension for KDD Cup 2012.
const DefaultHashBuckets = 500_000

// MaxHashBuckets bounds the hashed dimension: 2^26 = 67,108,864, above KDD
// Cup 2012's 54,686,452 raw dimensions (so hashing can keep nearly every
// raw index apart; more buckets than raw indices only add empty rows). At
// kdd_embed's 50 floats per bucket the table alone is then 13.4 GB, and its
// Adam moments twice that again.
const MaxHashBuckets = 1 << 26

// ImportLibSVM imports a libsvm-format file (KDD Cup 2012 as in the libsvm
// collection) into a dataset with a sparse `indices` column, hashing feature
// indices into HashBuckets buckets with HashIndex. With Classes C ≥ 3 the
// labels are the classes 0..C−1 and any other label is a *LineError
// (ErrLabel) naming the file and line.
func ImportLibSVM(ctx context.Context, opts ImportOptions) (*Meta, error) {
	if err := opts.checkLabels(); err != nil {
		return nil, err
	}
	if opts.HashBuckets == 0 {
		opts.HashBuckets = DefaultHashBuckets
	}
	if opts.HashBuckets > MaxHashBuckets {
		return nil, fmt.Errorf("%w: hash buckets %d: more than %d (MaxHashBuckets)", ErrInvalid, opts.HashBuckets, MaxHashBuckets)
	}
	like := opts.labelled(&Frame{Offsets: []int64{0}})
	var ln LibSVMLine
	meta := &Meta{Source: "libsvm", Dims: int(opts.HashBuckets), HashBuckets: opts.HashBuckets,
		Hash: "splitmix64(index) mod hash_buckets"}
	parse := func(line []byte, c *Frame) error {
		if like.Value != nil {
			if err := ParseLibSVMLineValue(line, opts.HashBuckets, &ln); err != nil {
				return err
			}
			v, err := opts.Values.snapValue(ln.Value, &meta.ClippedValues, &meta.RoundedValues)
			if err != nil {
				return err
			}
			c.Value = append(c.Value, v)
		} else if err := ParseLibSVMLineClasses(line, opts.HashBuckets, like.NumClasses(), &ln); err != nil {
			return err
		} else {
			c.Label = append(c.Label, ln.Label)
		}
		meta.NonBinaryValues += int64(ln.NonBinary)
		meta.DuplicateIndices += int64(ln.Duplicates)
		meta.BucketCollisions += int64(ln.Collisions)
		c.Indices = append(c.Indices, ln.Indices...)
		c.Offsets = append(c.Offsets, int64(len(c.Indices)))
		c.Rows++
		return nil
	}
	meta.Input = opts.In
	if opts.TestIn != "" {
		meta.Input += "," + opts.TestIn
	}
	return runImport(ctx, opts, like, parse, meta)
}

// checkLabels checks the options' labels: classes in range, and values on
// a valid grid without classes.
func (o ImportOptions) checkLabels() error {
	if err := CheckClasses(o.Classes); err != nil {
		return err
	}
	if o.Values == (ValueGrid{}) {
		return nil
	}
	if o.Classes != 0 {
		return fmt.Errorf("%w: conversion values (value_max %v) are not %s (%d)", ErrInvalid, o.Values.Max, MetaClasses, o.Classes)
	}
	return o.Values.Check()
}

// labelled gives like (a frame of no rows) the label column of o's labels:
// values, or classes (Classes set for C ≥ 3).
func (o ImportOptions) labelled(like *Frame) *Frame {
	if o.Values != (ValueGrid{}) {
		like.Value = []float64{}
		return like
	}
	like.Label = []uint8{}
	if o.Classes >= 3 {
		like.Classes = o.Classes
	}
	return like
}
