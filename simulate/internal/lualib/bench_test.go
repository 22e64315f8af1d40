package lualib

import (
	"testing"
)

func benchChunk(b *testing.B, setup, body string) {
	L := newLibState(b)
	if err := L.DoString(setup); err != nil {
		b.Fatal(err)
	}
	fn, err := L.LoadString(body)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		L.Push(fn)
		if err := L.PCall(0, 0, nil); err != nil {
			b.Fatal(err)
		}
	}
}

const benchDoc = `doc = {owner = "worker-17:9f2c", ttl_ms = 30000, waiters = {"a", "b", "c"}, meta = {fair = true, hold = 2, ratio = 0.75}}`

func BenchmarkCJSONEncode(b *testing.B) {
	benchChunk(b, benchDoc, "cjson.encode(doc)")
}

func BenchmarkCJSONDecode(b *testing.B) {
	benchChunk(b, benchDoc+" json = cjson.encode(doc)", "cjson.decode(json)")
}

func BenchmarkCMsgpackPack(b *testing.B) {
	benchChunk(b, benchDoc, "cmsgpack.pack(doc)")
}

func BenchmarkCMsgpackUnpack(b *testing.B) {
	benchChunk(b, benchDoc+" mp = cmsgpack.pack(doc)", "cmsgpack.unpack(mp)")
}

func BenchmarkStructPackUnpack(b *testing.B) {
	benchChunk(b, "", "struct.unpack('>I4i8d', struct.pack('>I4i8d', 7, -9, 0.5))")
}

func BenchmarkBit(b *testing.B) {
	benchChunk(b, "", "bit.bxor(bit.band(0x12345678, 0xff00ff00), bit.rol(7, 3))")
}
