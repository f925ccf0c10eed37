package data

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"os"
)

// Arrow IPC file trailer: footer flatbuffer, its int32 length, "ARROW1".
var arrowMagic = []byte("ARROW1")

// checkIPCFooter verifies the flatbuffer footer of an Arrow IPC file before
// arrow-go decodes it. arrow-go allocates a slice of every vector length it
// finds in the schema (fields, children, key/values) without checking that
// the vector fits in the footer, so one flipped length byte made it request
// hundreds of GB and die with a fatal, unrecoverable "out of memory". This
// walks exactly the parts arrow-go turns into allocations (Footer, Schema,
// Field recursively, KeyValue vectors, Block vectors; Arrow format
// File.fbs/Schema.fbs) and bounds the number of fields it visits, so a
// footer whose fields share children cannot blow up exponentially either.
func checkIPCFooter(fh *os.File, size int64) error {
	const trailer = 4 + 6
	if size < int64(2*len(arrowMagic)+4) {
		return fmt.Errorf("%w: %d bytes is too small for an Arrow IPC file", ErrCorrupt, size)
	}
	tail := make([]byte, trailer)
	if _, err := fh.ReadAt(tail, size-trailer); err != nil {
		return err
	}
	if !bytes.Equal(tail[4:], arrowMagic) {
		return fmt.Errorf("%w: not an Arrow IPC file (no ARROW1 magic at the end)", ErrCorrupt)
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n <= 0 || n > size-trailer-int64(len(arrowMagic)) {
		return fmt.Errorf("%w: footer length %d does not fit the %d-byte file", ErrCorrupt, n, size)
	}
	buf := make([]byte, n)
	if _, err := fh.ReadAt(buf, size-trailer-n); err != nil {
		return err
	}
	if err := verifyFooter(fbuf(buf)); err != nil {
		return fmt.Errorf("%w: footer: %v", ErrCorrupt, err)
	}
	return nil
}

// fbuf is a flatbuffer under verification.
type fbuf []byte

// Slots (vtable field indices) of the tables we walk.
const (
	footerSchema, footerDictionaries, footerRecordBatches, footerMetadata = 1, 2, 3, 4
	schemaFields, schemaMetadata                                          = 1, 2
	fieldChildren, fieldMetadata                                          = 5, 6
	blockSize                                                             = 24 // struct Block {long, int, pad, long}
	maxFieldDepth                                                         = 64
)

func (b fbuf) u32(pos int) (int, error) {
	if pos < 0 || pos > len(b)-4 {
		return 0, fmt.Errorf("offset %d outside the %d-byte footer", pos, len(b))
	}
	return int(binary.LittleEndian.Uint32(b[pos:])), nil
}

// fbTable is a verified table: pos is its start, vt its vtable.
type fbTable struct {
	b       fbuf
	pos, vt int
	vtLen   int // vtable length in bytes
}

// table verifies the table at pos (its vtable reference and vtable).
func (b fbuf) table(pos int) (fbTable, error) {
	so, err := b.u32(pos)
	if err != nil {
		return fbTable{}, err
	}
	vt := pos - int(int32(uint32(so)))
	if vt < 0 || vt > len(b)-4 {
		return fbTable{}, fmt.Errorf("vtable at %d outside the footer", vt)
	}
	vtLen := int(binary.LittleEndian.Uint16(b[vt:]))
	if vtLen < 4 || vtLen%2 != 0 || vt+vtLen > len(b) {
		return fbTable{}, fmt.Errorf("vtable at %d has bad length %d", vt, vtLen)
	}
	return fbTable{b: b, pos: pos, vt: vt, vtLen: vtLen}, nil
}

// ref follows the offset field in slot; ok is false when it is absent.
func (t fbTable) ref(slot int) (target int, ok bool, err error) {
	at := 4 + 2*slot
	if at+2 > t.vtLen {
		return 0, false, nil
	}
	fo := int(binary.LittleEndian.Uint16(t.b[t.vt+at:]))
	if fo == 0 {
		return 0, false, nil
	}
	off, err := t.b.u32(t.pos + fo)
	if err != nil {
		return 0, false, err
	}
	target = t.pos + fo + off
	if target > len(t.b)-4 {
		return 0, false, fmt.Errorf("reference at %d points outside the footer", t.pos+fo)
	}
	return target, true, nil
}

// vector verifies the vector in slot (elements of elem bytes) and returns
// the position of its first element and its length.
func (t fbTable) vector(slot, elem int) (start, n int, err error) {
	v, ok, err := t.ref(slot)
	if err != nil || !ok {
		return 0, 0, err
	}
	n, _ = t.b.u32(v) // ref checked v+4 ≤ len
	if n > (len(t.b)-v-4)/elem {
		return 0, 0, fmt.Errorf("vector at %d claims %d elements of %d bytes, more than the footer holds", v, n, elem)
	}
	return v + 4, n, nil
}

// tables verifies a vector of tables in slot and calls visit on each.
func (t fbTable) tables(slot int, visit func(fbTable) error) error {
	start, n, err := t.vector(slot, 4)
	if err != nil {
		return err
	}
	for i := range n {
		p := start + 4*i
		off, _ := t.b.u32(p)
		sub, err := t.b.table(p + off)
		if err != nil {
			return err
		}
		if err := visit(sub); err != nil {
			return err
		}
	}
	return nil
}

// root verifies the buffer's root table.
func (b fbuf) root() (fbTable, error) {
	pos, err := b.u32(0)
	if err != nil {
		return fbTable{}, err
	}
	return b.table(pos)
}

func verifyFooter(b fbuf) error {
	footer, err := b.root()
	if err != nil {
		return err
	}
	for _, slot := range []int{footerDictionaries, footerRecordBatches} {
		if _, _, err := footer.vector(slot, blockSize); err != nil {
			return err
		}
	}
	if err := footer.tables(footerMetadata, verifyKeyValue); err != nil {
		return err
	}
	sp, ok, err := footer.ref(footerSchema)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no schema")
	}
	return verifySchema(b, sp)
}

// verifySchema verifies the Schema table at pos.
func verifySchema(b fbuf, pos int) error {
	schema, err := b.table(pos)
	if err != nil {
		return err
	}
	if err := schema.tables(schemaMetadata, verifyKeyValue); err != nil {
		return err
	}
	budget := len(b)/8 + 1 // fields visited; a field table takes ≥ 8 bytes
	var field func(depth int) func(fbTable) error
	field = func(depth int) func(fbTable) error {
		return func(f fbTable) error {
			if budget--; budget < 0 {
				return fmt.Errorf("more fields than the footer can hold")
			}
			if depth > maxFieldDepth {
				return fmt.Errorf("fields nested deeper than %d", maxFieldDepth)
			}
			if err := f.tables(fieldMetadata, verifyKeyValue); err != nil {
				return err
			}
			return f.tables(fieldChildren, field(depth+1))
		}
	}
	return schema.tables(schemaFields, field(0))
}

// Message table slots and header type (Message.fbs).
const (
	messageHeaderType, messageHeader, messageBodyLength = 1, 2, 3
	messageHeaderSchema                                 = 1
)

// checkArrowSchemaKey verifies the "ARROW:schema" key/value that Parquet
// writers (pqarrow, pyarrow) store: base64 of an IPC stream holding one
// Schema message, which pqarrow decodes with the same allocations as a
// footer's schema, plus a body of the length the message declares.
func checkArrowSchemaKey(v string) error {
	var dec []byte
	var err error
	if len(v)%4 == 0 { // pqarrow's order: padded, then unpadded
		dec, err = base64.StdEncoding.DecodeString(v)
	}
	if len(dec) == 0 || err != nil {
		if dec, err = base64.RawStdEncoding.DecodeString(v); err != nil {
			return nil // pqarrow reports undecodable base64 itself
		}
	}
	if len(dec) < 8 {
		return nil
	}
	n := int(binary.LittleEndian.Uint32(dec))
	rest := dec[4:]
	if n == 0xFFFFFFFF { // continuation marker, then the length
		n, rest = int(binary.LittleEndian.Uint32(dec[4:])), dec[8:]
	}
	if n > len(rest) {
		return fmt.Errorf("%w: ARROW:schema: message of %d bytes in %d", ErrCorrupt, n, len(rest))
	}
	if n < 4 {
		return nil // an end-of-stream marker: pqarrow reports it
	}
	if err := verifySchemaMessage(fbuf(rest[:n]), len(rest)-n); err != nil {
		return fmt.Errorf("%w: ARROW:schema: %v", ErrCorrupt, err)
	}
	return nil
}

// verifySchemaMessage verifies a Message whose header is a Schema and whose
// body must fit in the bodyRoom bytes that follow it.
func verifySchemaMessage(b fbuf, bodyRoom int) error {
	msg, err := b.root()
	if err != nil {
		return err
	}
	if body, err := msg.scalar(messageBodyLength, 8); err != nil {
		return err
	} else if body != nil && int64(binary.LittleEndian.Uint64(body)) > int64(bodyRoom) {
		return fmt.Errorf("body of %d bytes declared, %d present", int64(binary.LittleEndian.Uint64(body)), bodyRoom)
	}
	if typ, err := msg.scalar(messageHeaderType, 1); err != nil || typ == nil || typ[0] != messageHeaderSchema {
		return err // not a schema: arrow-go refuses it without allocating
	}
	sp, ok, err := msg.ref(messageHeader)
	if err != nil || !ok {
		return err
	}
	return verifySchema(b, sp)
}

// scalar returns the size bytes of the scalar in slot, or nil if absent.
func (t fbTable) scalar(slot, size int) ([]byte, error) {
	at := 4 + 2*slot
	if at+2 > t.vtLen {
		return nil, nil
	}
	fo := int(binary.LittleEndian.Uint16(t.b[t.vt+at:]))
	if fo == 0 {
		return nil, nil
	}
	p := t.pos + fo
	if p < 0 || p > len(t.b)-size {
		return nil, fmt.Errorf("field at %d outside the buffer", p)
	}
	return t.b[p : p+size], nil
}

// verifyKeyValue accepts any KeyValue table whose vtable is sound (its
// strings are sliced with bounds checks by flatbuffers, never allocated by
// a declared length).
func verifyKeyValue(fbTable) error { return nil }
