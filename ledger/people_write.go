package ledger

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
)

// appendRecord appends a record after the last complete one (cutting off
// what a crash left after it) and fsyncs.
func (p *people) appendRecord(k *Keys, typ byte, payload []byte) error {
	if p.size > p.end {
		if err := p.f.Truncate(p.end); err != nil {
			return fmt.Errorf("ledger: %s: %w", p.path, err)
		}
	}
	m := recordMAC(k, p.lastMAC, typ)
	m.Write(payload)
	b := make([]byte, 0, recHeaderLen+len(payload)+macLen)
	b = append(b, typ)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(payload)))
	b = append(append(b, payload...), m.Sum(nil)...)
	if _, err := p.f.WriteAt(b, p.end); err != nil {
		return fmt.Errorf("ledger: append %s: %w", p.path, err)
	}
	if err := p.f.Sync(); err != nil {
		return fmt.Errorf("ledger: fsync %s: %w", p.path, err)
	}
	p.end += int64(len(b))
	p.size = p.end
	copy(p.lastMAC[:], b[len(b)-macLen:])
	return nil
}

// snapshotWriter writes a new people file holding one snapshot to a
// temporary file beside it.
type snapshotWriter struct {
	path    string
	tmp     *os.File
	w       *bufio.Writer
	mac     hash.Hash
	key     uint64
	n, want uint64
	buf     []byte
}

func newSnapshotWriter(path string, k *Keys, head []byte, persons uint64, version uint32) (*snapshotWriter, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".new-*")
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	sw := &snapshotWriter{path: path, tmp: tmp, mac: recordMAC(k, [macLen]byte{}, recSnapshot), want: persons}
	sw.w = bufio.NewWriterSize(tmp, 1<<16)
	hdr := append(peopleHeader(version), recSnapshot)
	hdr = binary.LittleEndian.AppendUint64(hdr, 0) // the length, filled in by commit
	sw.w.Write(hdr)
	head = binary.AppendUvarint(head, persons)
	sw.w.Write(head)
	sw.mac.Write(head)
	return sw, nil
}

func (sw *snapshotWriter) put(key uint64, class uint32) {
	sw.buf = binary.AppendUvarint(sw.buf[:0], key-sw.key)
	sw.buf = binary.AppendUvarint(sw.buf, uint64(class))
	sw.w.Write(sw.buf)
	sw.mac.Write(sw.buf)
	sw.key = key
	sw.n++
}

// commit writes the MAC and the length, fsyncs and renames the file into
// place.
func (sw *snapshotWriter) commit() error {
	if sw.n != sw.want {
		sw.abort()
		return fmt.Errorf("ledger: people file: wrote %d people, the snapshot says %d", sw.n, sw.want)
	}
	err := sw.w.Flush()
	var size int64
	if err == nil {
		size, err = sw.tmp.Seek(0, io.SeekCurrent)
	}
	if err == nil {
		_, err = sw.tmp.Write(sw.mac.Sum(nil))
	}
	if err == nil {
		var l [8]byte
		binary.LittleEndian.PutUint64(l[:], uint64(size-int64(peopleHeaderLen+recHeaderLen)))
		_, err = sw.tmp.WriteAt(l[:], int64(peopleHeaderLen+1))
	}
	if err == nil {
		err = sw.tmp.Chmod(0o640)
	}
	if err == nil {
		err = sw.tmp.Sync()
	}
	if cerr := sw.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(sw.tmp.Name(), sw.path)
	}
	if err != nil {
		os.Remove(sw.tmp.Name())
		return fmt.Errorf("ledger: write %s: %w", sw.path, err)
	}
	syncDir(filepath.Dir(sw.path))
	return nil
}

func (sw *snapshotWriter) abort() {
	sw.tmp.Close()
	os.Remove(sw.tmp.Name())
}
