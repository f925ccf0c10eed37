package ledger

import (
	"encoding/binary"
	"errors"
	"io"
)

// dec decodes a payload held in memory; the first error sticks.
type dec struct {
	b   []byte
	err error
}

func (d *dec) uv() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = io.ErrUnexpectedEOF
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) byte1() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.err = io.ErrUnexpectedEOF
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *dec) bytes(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = io.ErrUnexpectedEOF
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

// appendRow encodes a record's row number and line.
func (*dec) appendRow(row uint64, line []byte) []byte {
	b := binary.AppendUvarint(nil, row)
	b = binary.AppendUvarint(b, uint64(len(line)))
	return append(b, line...)
}

// streamDec decodes from a byteReader; the first error sticks.
type streamDec struct {
	r   *byteReader
	err error
}

func (d *streamDec) uv() uint64 {
	if d.err != nil {
		return 0
	}
	v, err := d.r.uvarint()
	d.err = err
	return v
}

func (d *streamDec) byte1() byte {
	if d.err != nil {
		return 0
	}
	c, err := d.r.ReadByte()
	if err != nil {
		d.err = io.ErrUnexpectedEOF
	}
	return c
}

func (d *streamDec) u64() uint64 {
	if d.err != nil {
		return 0
	}
	var b [8]byte
	if _, err := io.ReadFull(d.r, b[:]); err != nil {
		d.err = io.ErrUnexpectedEOF
		return 0
	}
	return binary.LittleEndian.Uint64(b[:])
}

// byteReader is a minimal buffered reader that decodes varints straight
// from its buffer (bufio's ReadByte per byte was a third of a pass); it
// counts the bytes it has handed out.
type byteReader struct {
	src      io.Reader
	buf      []byte
	pos      int
	eof      bool
	consumed int64
}

// fill makes at least n bytes available unless the source ends.
func (b *byteReader) fill(n int) {
	if len(b.buf)-b.pos >= n || b.eof {
		return
	}
	rest := copy(b.buf[:cap(b.buf)], b.buf[b.pos:])
	b.buf, b.pos = b.buf[:rest], 0
	for len(b.buf) < n && !b.eof {
		m, err := b.src.Read(b.buf[len(b.buf):cap(b.buf)])
		b.buf = b.buf[:len(b.buf)+m]
		if err != nil {
			b.eof = true
		}
	}
}

func (b *byteReader) uvarint() (uint64, error) {
	b.fill(binary.MaxVarintLen64)
	v, n := binary.Uvarint(b.buf[b.pos:])
	switch {
	case n == 0:
		return 0, io.ErrUnexpectedEOF
	case n < 0:
		return 0, errors.New("varint overflows 64 bits")
	}
	b.pos += n
	b.consumed += int64(n)
	return v, nil
}

// Read implements io.Reader.
func (b *byteReader) Read(p []byte) (int, error) {
	b.fill(1)
	if b.pos == len(b.buf) {
		return 0, io.EOF
	}
	n := copy(p, b.buf[b.pos:])
	b.pos += n
	b.consumed += int64(n)
	return n, nil
}

// ReadByte implements io.ByteReader.
func (b *byteReader) ReadByte() (byte, error) {
	b.fill(1)
	if b.pos == len(b.buf) {
		return 0, io.EOF
	}
	b.pos++
	b.consumed++
	return b.buf[b.pos-1], nil
}
