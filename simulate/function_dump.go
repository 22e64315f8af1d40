package simulate

import (
	"encoding/binary"
	"fmt"
	"hash/crc64"
)

// FUNCTION DUMP's payload is Redis's DUMP format: for each library the
// RDB opcode FUNCTION2 and the library code as an RDB string, then the
// RDB version (2 bytes) and a CRC64 (Jones polynomial, 8 bytes), both
// little-endian. The simulator writes strings uncompressed (Redis
// compresses long ones with LZF), so payloads can differ byte for byte;
// RESTORE reads both.
const (
	rdbOpcodeFunction2 = 0xf5
	rdbOpcodeFunction  = 0xf6 // 7.0 release candidates' format, not read
	rdbVersion         = 10   // Redis 7.0's
	rdbEncLZF          = 3
)

// crcJones is Redis's crc64 table: reflected Jones polynomial.
var crcJones = crc64.MakeTable(0x95ac9329ac4bc9b5)

// redisCRC64 is crc64(0, p) as Redis computes it (no inversion, which
// Go's crc64.Update applies on the way in and out).
func redisCRC64(p []byte) uint64 { return ^crc64.Update(^uint64(0), crcJones, p) }

func dumpFunctions(libs []*library, version uint16) string {
	var b []byte
	for _, lib := range libs {
		b = append(b, rdbOpcodeFunction2)
		b = appendRDBLength(b, uint64(len(lib.code)))
		b = append(b, lib.code...)
	}
	b = binary.LittleEndian.AppendUint16(b, version)
	return string(binary.LittleEndian.AppendUint64(b, redisCRC64(b)))
}

// appendRDBLength is rdbSaveLen: 6, 14, 32 or 64 bits.
func appendRDBLength(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, 0x40|byte(n>>8), byte(n))
	case n <= 0xffffffff:
		return binary.BigEndian.AppendUint32(append(b, 0x80), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0x81), n)
}

// undumpFunctions checks a payload and returns the library codes in it,
// or Redis's error text.
func undumpFunctions(payload string, version uint16) ([]string, string) {
	p := []byte(payload)
	if len(p) < 10 {
		return nil, errRestorePayload
	}
	body, footer := p[:len(p)-10], p[len(p)-10:]
	if binary.LittleEndian.Uint16(footer) > version || binary.LittleEndian.Uint64(footer[2:]) != redisCRC64(p[:len(p)-8]) {
		return nil, errRestorePayload
	}
	var codes []string
	for len(body) > 0 {
		op := body[0]
		body = body[1:]
		if op == rdbOpcodeFunction {
			return nil, fmt.Sprintf(errRestoreUnsupported, "the pre-release FUNCTION opcode")
		}
		if op != rdbOpcodeFunction2 {
			return nil, errRestoreNotFunction
		}
		code, rest, errText := readRDBString(body)
		if errText != "" {
			return nil, errText
		}
		codes = append(codes, code)
		body = rest
	}
	return codes, ""
}

// readRDBString reads an RDB string: plain, or LZF-compressed.
func readRDBString(b []byte) (string, []byte, string) {
	bad := fmt.Sprintf(errRestoreUnsupported, "a malformed RDB string")
	if len(b) == 0 {
		return "", nil, bad
	}
	if b[0]>>6 == 3 {
		if b[0]&0x3f != rdbEncLZF {
			return "", nil, fmt.Sprintf(errRestoreUnsupported, "an integer-encoded RDB string")
		}
		clen, rest, ok := readRDBLength(b[1:])
		if !ok {
			return "", nil, bad
		}
		ulen, rest, ok := readRDBLength(rest)
		if !ok || uint64(len(rest)) < clen {
			return "", nil, bad
		}
		out, ok := lzfDecompress(rest[:clen], ulen)
		if !ok {
			return "", nil, bad
		}
		return string(out), rest[clen:], ""
	}
	n, rest, ok := readRDBLength(b)
	if !ok || uint64(len(rest)) < n {
		return "", nil, bad
	}
	return string(rest[:n]), rest[n:], ""
}

func readRDBLength(b []byte) (uint64, []byte, bool) {
	if len(b) == 0 {
		return 0, nil, false
	}
	switch b[0] >> 6 {
	case 0:
		return uint64(b[0] & 0x3f), b[1:], true
	case 1:
		if len(b) < 2 {
			return 0, nil, false
		}
		return uint64(b[0]&0x3f)<<8 | uint64(b[1]), b[2:], true
	}
	switch {
	case b[0] == 0x80 && len(b) >= 5:
		return uint64(binary.BigEndian.Uint32(b[1:])), b[5:], true
	case b[0] == 0x81 && len(b) >= 9:
		return binary.BigEndian.Uint64(b[1:]), b[9:], true
	}
	return 0, nil, false
}

// lzfDecompress expands LZF data (liblzf's format: literal runs and
// back references) into exactly n bytes.
func lzfDecompress(in []byte, n uint64) ([]byte, bool) {
	if n > 1<<30 {
		return nil, false
	}
	out := make([]byte, 0, n)
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 32 { // a literal run of ctrl+1 bytes
			if i+ctrl+1 > len(in) {
				return nil, false
			}
			out = append(out, in[i:i+ctrl+1]...)
			i += ctrl + 1
			continue
		}
		length := ctrl >> 5
		if length == 7 {
			if i >= len(in) {
				return nil, false
			}
			length += int(in[i])
			i++
		}
		if i >= len(in) {
			return nil, false
		}
		ref := len(out) - ((ctrl&0x1f)<<8 + 1) - int(in[i])
		i++
		if ref < 0 {
			return nil, false
		}
		for k := 0; k < length+2; k++ {
			out = append(out, out[ref+k])
		}
	}
	return out, uint64(len(out)) == n
}
