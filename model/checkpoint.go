package model

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A group checkpoint is one file holding every replica's parameters and
// Adam moments, the global step and the loss bookkeeping:
//
//	"LPCKPT01" | header length (uint64 LE) | header (JSON) |
//	tensors (float32 LE, in header order) | CRC-32C of all previous bytes (uint32 LE) | "LPCKEND1"
//
// It is written to a temporary file in the same directory, fsynced, renamed
// to ckpt-<step>.lpck and the directory fsynced, so a crash leaves either the
// previous set of checkpoints or the new one. On load, the length, the CRC
// and the fingerprint are checked; a file that fails the first two (or a
// leftover temporary) is moved to <dir>/incomplete/ and the next older
// checkpoint is tried. GoMLX's own checkpoints (written in place) are not
// used.
const (
	ckptMagic    = "LPCKPT01"
	ckptEndMagic = "LPCKEND1"
	ckptFormat   = 1
	ckptPrefix   = "ckpt-"
	ckptExt      = ".lpck"
	ckptTmp      = ".tmp-"
	// ckptKeep is how many complete checkpoints a directory keeps.
	ckptKeep = 2
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type ckptTensor struct {
	Name string `json:"name"`
	Dims []int  `json:"dims"`
}

type ckptHeader struct {
	Format      int    `json:"format"`
	Fingerprint string `json:"fingerprint"`
	Step        int64  `json:"step"`
	// Float64 bits (JSON has no NaN): per replica, the loss summed over the
	// current epoch's steps so far, and the last finished epoch's mean loss.
	EpochLossSum  []uint64     `json:"epoch_loss_sum"`
	LastEpochLoss []uint64     `json:"last_epoch_loss"`
	Tensors       []ckptTensor `json:"tensors"`
}

// snapshot is a group's training state copied to the host at a step
// boundary. A tensor with a read function instead of data (a host-kept
// embedding table: 300 MB for kdd_embed) is read from the live state in
// chunks while the file is written, so the write must finish before
// training goes on; it is never copied whole.
type snapshot struct {
	step          int64
	epochLossSum  []float64
	lastEpochLoss []float64
	tensors       []ckptTensor
	data          [][]float32
	read          []func(dst []float32, off int) // per tensor, or nil: data holds it
}

// size is the number of floats of tensor t.
func (t ckptTensor) size() int {
	n := 1
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

func bitsOf(v []float64) []uint64 {
	out := make([]uint64, len(v))
	for i, x := range v {
		out[i] = math.Float64bits(x)
	}
	return out
}

func floatsOf(v []uint64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Float64frombits(x)
	}
	return out
}

func ckptName(step int64) string { return fmt.Sprintf("%s%012d%s", ckptPrefix, step, ckptExt) }

// writeCheckpoint writes s atomically into dir and prunes old checkpoints.
func writeCheckpoint(dir, fingerprint string, s *snapshot) (err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	h := ckptHeader{Format: ckptFormat, Fingerprint: fingerprint, Step: s.step,
		EpochLossSum: bitsOf(s.epochLossSum), LastEpochLoss: bitsOf(s.lastEpochLoss), Tensors: s.tensors}
	hj, err := json.Marshal(h)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ckptTmp+ckptName(s.step)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	crc := crc32.New(castagnoli)
	w := bufio.NewWriterSize(io.MultiWriter(f, crc), 1<<20)
	w.WriteString(ckptMagic)
	binary.Write(w, binary.LittleEndian, uint64(len(hj)))
	w.Write(hj)
	buf := make([]byte, 0, 1<<16)
	var chunk []float32 // a streamed tensor's current part
	for i, t := range s.data {
		var read func([]float32, int)
		if i < len(s.read) {
			read = s.read[i]
		}
		size := len(t)
		if read != nil {
			size, chunk = s.tensors[i].size(), make([]float32, cap(buf)/4)
		}
		for off := 0; off < size; {
			n := min(size-off, cap(buf)/4)
			var part []float32
			if read != nil {
				part = chunk[:n]
				read(part, off)
			} else {
				part = t[off : off+n]
			}
			buf = buf[:0]
			for _, v := range part {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			}
			if _, err := w.Write(buf); err != nil {
				return err
			}
			off += n
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	var tail [12]byte
	binary.LittleEndian.PutUint32(tail[:4], crc.Sum32())
	copy(tail[4:], ckptEndMagic)
	if _, err := f.Write(tail[:]); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, ckptName(s.step))); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	names, _ := listCheckpoints(dir)
	for len(names) > ckptKeep {
		os.Remove(filepath.Join(dir, names[0]))
		names = names[1:]
	}
	return nil
}

// listCheckpoints returns the checkpoint file names in dir, oldest first.
func listCheckpoints(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if n := e.Name(); !e.IsDir() && strings.HasPrefix(n, ckptPrefix) && strings.HasSuffix(n, ckptExt) {
			names = append(names, n)
		}
	}
	slices.Sort(names) // zero-padded steps: lexical order is step order
	return names, nil
}

// errDamaged marks a checkpoint file that is incomplete or corrupt.
var errDamaged = errors.New("damaged checkpoint")

// readCheckpoint reads and verifies one checkpoint file.
func readCheckpoint(path string) (*ckptHeader, [][]float32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	crc := crc32.New(castagnoli)
	r := io.TeeReader(bufio.NewReaderSize(f, 1<<20), crc)
	damaged := func(format string, a ...any) error {
		return fmt.Errorf("%w %s: %s", errDamaged, path, fmt.Sprintf(format, a...))
	}
	var magic [8]byte
	var hlen uint64
	if _, err := io.ReadFull(r, magic[:]); err != nil || string(magic[:]) != ckptMagic {
		return nil, nil, damaged("bad magic")
	}
	if err := binary.Read(r, binary.LittleEndian, &hlen); err != nil || hlen > uint64(st.Size()) {
		return nil, nil, damaged("bad header length")
	}
	hj := make([]byte, hlen)
	if _, err := io.ReadFull(r, hj); err != nil {
		return nil, nil, damaged("short header")
	}
	var h ckptHeader
	if err := json.Unmarshal(hj, &h); err != nil || h.Format != ckptFormat {
		return nil, nil, damaged("bad header")
	}
	size := int64(8 + 8 + hlen + 12)
	for _, t := range h.Tensors {
		n := int64(4)
		for _, d := range t.Dims {
			if d <= 0 || int64(d) > st.Size() {
				return nil, nil, damaged("tensor %s has dims %v", t.Name, t.Dims)
			}
			n *= int64(d)
			if n > st.Size() {
				return nil, nil, damaged("tensor %s larger than the file", t.Name)
			}
		}
		size += n
	}
	if size != st.Size() {
		return nil, nil, damaged("%d bytes, want %d", st.Size(), size)
	}
	data := make([][]float32, len(h.Tensors))
	buf := make([]byte, 1<<16)
	for i, t := range h.Tensors {
		n := 1
		for _, d := range t.Dims {
			n *= d
		}
		v := make([]float32, n)
		for off := 0; off < n; {
			k := min(n-off, len(buf)/4)
			if _, err := io.ReadFull(r, buf[:4*k]); err != nil {
				return nil, nil, damaged("short data")
			}
			for j := range k {
				v[off+j] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*j:]))
			}
			off += k
		}
		data[i] = v
	}
	sum := crc.Sum32()
	var tail [12]byte
	if _, err := io.ReadFull(r, tail[:]); err != nil || binary.LittleEndian.Uint32(tail[:4]) != sum || string(tail[4:]) != ckptEndMagic {
		return nil, nil, damaged("checksum mismatch")
	}
	return &h, data, nil
}

// loadCheckpoint returns the newest complete checkpoint in dir (nil when
// there is none). Damaged checkpoints and leftover temporaries are moved to
// dir/incomplete/ and reported through notice; a complete checkpoint with
// another fingerprint is an ErrCheckpointMismatch.
func loadCheckpoint(dir, fingerprint string, notice func(string)) (*ckptHeader, [][]float32, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	setAside := func(name, why string) error {
		inc := filepath.Join(dir, "incomplete")
		if err := os.MkdirAll(inc, 0o755); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(dir, name), filepath.Join(inc, name)); err != nil {
			return err
		}
		notice(fmt.Sprintf("set aside checkpoint %s (%s) in %s", name, why, inc))
		return nil
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ckptTmp) {
			if err := setAside(e.Name(), "a write that did not finish"); err != nil {
				return nil, nil, err
			}
		}
	}
	names, err := listCheckpoints(dir)
	if err != nil {
		return nil, nil, err
	}
	for i := len(names) - 1; i >= 0; i-- {
		h, data, err := readCheckpoint(filepath.Join(dir, names[i]))
		if errors.Is(err, errDamaged) {
			if err := setAside(names[i], strings.TrimPrefix(err.Error(), errDamaged.Error()+" ")); err != nil {
				return nil, nil, err
			}
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if h.Fingerprint != fingerprint {
			return nil, nil, fmt.Errorf("%w: %s was trained as %s; this group is %s", ErrCheckpointMismatch,
				filepath.Join(dir, names[i]), h.Fingerprint, fingerprint)
		}
		return h, data, nil
	}
	return nil, nil, nil
}

// ckptWriter writes snapshots in the background, one at a time.
type ckptWriter struct {
	dir, fingerprint string
	done             chan error // nil when no write is in flight
	writeS           float64    // total time spent writing (in the background)
	last             time.Duration
}

// start writes s in a goroutine; the caller must wait() before reusing s
// or starting another write.
func (w *ckptWriter) start(s *snapshot) {
	w.done = make(chan error, 1)
	go func() {
		t0 := time.Now()
		err := writeCheckpoint(w.dir, w.fingerprint, s)
		w.last = time.Since(t0)
		w.done <- err
	}()
}

// wait waits for the write in flight, if any, and returns its error.
func (w *ckptWriter) wait() error {
	if w.done == nil {
		return nil
	}
	err := <-w.done
	w.done = nil
	w.writeS += w.last.Seconds()
	if err != nil {
		return fmt.Errorf("writing checkpoint in %s: %w", w.dir, err)
	}
	return nil
}

// fingerprintOf canonicalizes what a checkpoint must match.
func fingerprintOf(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}
