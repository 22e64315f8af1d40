package explore_test

import (
	"embed"

	"github.com/redlua/redlua/registry"
)

// seedFS holds the seed designs' scripts, written for these examples.
//
//go:embed testdata/*.lua
var seedFS embed.FS

// seed returns one of the seed designs' scripts by "name@version".
func seed(id string) *registry.Script {
	reg, err := registry.New(seedFS)
	if err != nil {
		panic(err) // the embedded files are fixed; a failure is a bug in them
	}
	s, err := reg.Lookup(id)
	if err != nil {
		panic(err)
	}
	return s
}
