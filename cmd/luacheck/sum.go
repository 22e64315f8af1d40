package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing/fstest"

	"github.com/redlua/redlua/registry"
)

// verifySum checks the scripts that were read against a redlua sum file:
// every recorded name@version that is there has its SHA1, and every released
// one is there. It returns the exit code the problem deserves (0 when all is well).
func verifySum(sumFile string, rs []fileResult, srcs map[string][]byte) (int, error) {
	f, err := os.Open(sumFile)
	if err != nil {
		return exitIO, fmt.Errorf("--sum: %w", err)
	}
	defer f.Close()
	sum, err := registry.ReadSum(f)
	if err != nil {
		return exitCritical, fmt.Errorf("--sum %s: %w", sumFile, err)
	}
	fsys := fstest.MapFS{}
	for i, r := range rs {
		src, ok := srcs[r.File]
		if !ok {
			continue
		}
		// fs paths may not be absolute or climb out; keep the name readable
		// in messages and unique across inputs.
		name := filepath.ToSlash(filepath.Clean(r.File))
		if filepath.IsAbs(r.File) || strings.HasPrefix(name, "../") {
			name = fmt.Sprintf("input%d/%s", i, filepath.Base(r.File))
		}
		fsys[name] = &fstest.MapFile{Data: src}
	}
	reg, err := registry.New(fsys)
	if err != nil {
		return exitErrors, fmt.Errorf("--sum: the scripts are not a valid registry:\n%w", err)
	}
	if err := registry.VerifySum(reg, sum); err != nil {
		return exitErrors, fmt.Errorf("--sum %s:\n%w", sumFile, err)
	}
	return exitOK, nil
}
