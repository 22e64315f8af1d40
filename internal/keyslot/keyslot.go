// Package keyslot computes Redis Cluster hash slots, the one copy shared by
// the simulator (its cross-slot check) and the lock library (hash tags).
package keyslot

import "strings"

// Count is the number of hash slots of a Redis Cluster.
const Count = 16384

// Of is the Redis Cluster hash slot of key: CRC16 (XMODEM) of the key, or
// of the part between the first "{" and the next "}" when that part is not
// empty, modulo 16384.
func Of(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key) % Count)
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial value 0), the variant
// Redis Cluster hashes keys with.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for b := 0; b < 8; b++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
