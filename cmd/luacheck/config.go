package main

import (
	"fmt"
	"os"
)

// rcConfig is a loaded .luacheckrc.
type rcConfig struct {
	path   string // as found, for messages
	anchor string // absolute directory its globs are relative to
	top    *optionSet
	// overrides are its files["glob"] entries, globs made absolute.
	overrides []override
	stds      map[string]*stdDef
	// exclude and include are exclude_files/include_files, absolute.
	exclude, include []string
	// Report options a config may set; the command line wins.
	quiet                *int
	color, codes, ranges *bool
	formatter            *string
	// registry: the registry mode (checkRegistry); nil leaves it to the
	// command line or the automatic rule.
	registry *bool
}

type override struct {
	glob string
	opts *optionSet
}

// overridesFor returns the files["glob"] layers matching a file, least
// specific first, as luacheck applies them.
func (c *rcConfig) overridesFor(file string) []*optionSet {
	abs := absPath(file)
	var m []override
	for _, o := range c.overrides {
		if globMatch(o.glob, abs) {
			m = append(m, o)
		}
	}
	sortOverrides(m)
	out := make([]*optionSet, len(m))
	for i, o := range m {
		out[i] = o.opts
	}
	return out
}

// configError is a problem in a config file; the CLI exits 4 with it.
type configError struct {
	file string
	line int // 0 when unknown
	msg  string
}

func (e *configError) Error() string {
	if e.line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.file, e.line, e.msg)
	}
	return fmt.Sprintf("%s: %s", e.file, e.msg)
}

// loadConfigFile reads and evaluates a config file.
func loadConfigFile(path, anchor string) (*rcConfig, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, &configError{file: path, msg: fmt.Sprintf("couldn't read the config: %v", err)}
	}
	return loadConfig(path, src, anchor)
}

// loadConfig evaluates a .luacheckrc in a sandbox and converts its options.
// It never panics and returns in bounded time whatever src holds.
func loadConfig(path string, src []byte, anchor string) (cfg *rcConfig, err error) {
	defer func() {
		if r := recover(); r != nil {
			cfg, err = nil, &configError{file: path, msg: fmt.Sprintf("evaluating the config failed: %v", r)}
		}
	}()
	ev, err := evalConfig(path, src)
	if err != nil {
		return nil, err
	}
	return ev.convert(path, anchor)
}
