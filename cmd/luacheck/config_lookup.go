package main

import (
	"os"
	"path/filepath"
)

// findConfig looks for name in dir and its parents, as luacheck does.
func findConfig(dir, name string) (string, bool) {
	for {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// defaultConfigPath is luacheck's global config location on Unix.
func defaultConfigPath() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "luacheck", ".luacheckrc")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".config", "luacheck", ".luacheckrc")
	}
	return ""
}
