package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Registry is a set of scripts, looked up by name (latest version) or by
// "name@version". It is immutable once built and safe for concurrent use.
type Registry struct {
	byName map[string][]*Script // versions in ascending order
	byID   map[string]*Script
	all    []*Script // sorted by name, then version
}

// New parses every *.lua file in each of the given file systems (walked
// recursively): redlua's own scripts (lua.FS), a user's os.DirFS("scripts"),
// or both. All problems are reported at once, joined; each names file:line.
// Two files that declare the same name@version are an error.
func New(sources ...fs.FS) (*Registry, error) {
	var scripts []*Script
	var errs []error
	for _, fsys := range sources {
		if fsys == nil {
			errs = append(errs, errors.New("registry: a nil fs.FS was passed to New; pass lua.FS, os.DirFS(dir) or an fstest.MapFS"))
			continue
		}
		err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || path.Ext(p) != ".lua" {
				return nil
			}
			src, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			s, err := ParseScript(p, src)
			if err != nil {
				errs = append(errs, err)
				return nil
			}
			scripts = append(scripts, s)
			return nil
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("registry: reading scripts: %w", err))
		}
	}
	r, err := build(scripts)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return r, nil
}

// FromScripts builds a registry from scripts parsed with ParseScript.
func FromScripts(scripts ...*Script) (*Registry, error) {
	return build(scripts)
}

func build(scripts []*Script) (*Registry, error) {
	r := &Registry{byName: map[string][]*Script{}, byID: map[string]*Script{}}
	var errs []error
	for _, s := range scripts {
		if s == nil {
			errs = append(errs, errors.New("registry: nil script; parse scripts with ParseScript"))
			continue
		}
		if prev, dup := r.byID[s.ID()]; dup {
			errs = append(errs, &Error{File: s.File, Line: s.HeaderLine,
				Msg: fmt.Sprintf("%s is declared again (first in %s); give the new text a new version", s.ID(), prev.File)})
			continue
		}
		r.byID[s.ID()] = s
		r.byName[s.Name] = append(r.byName[s.Name], s)
		r.all = append(r.all, s)
	}
	for _, versions := range r.byName {
		sort.Slice(versions, func(i, j int) bool { return versions[i].Version < versions[j].Version })
	}
	sort.Slice(r.all, func(i, j int) bool {
		if r.all[i].Name != r.all[j].Name {
			return r.all[i].Name < r.all[j].Name
		}
		return r.all[i].Version < r.all[j].Version
	})
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return r, nil
}

// Get returns the latest version of the named script.
func (r *Registry) Get(name string) (*Script, error) {
	versions := r.byName[name]
	if len(versions) == 0 {
		return nil, fmt.Errorf("registry: no script named %q (known: %s): %w", name, r.names(), ErrUnknownScript)
	}
	return versions[len(versions)-1], nil
}

// Lookup returns the script "name@version"; a bare name means the latest version.
func (r *Registry) Lookup(id string) (*Script, error) {
	name, version, ok := strings.Cut(id, "@")
	if !ok {
		return r.Get(id)
	}
	if _, err := strconv.Atoi(version); err != nil {
		return nil, fmt.Errorf("registry: %q is not name@version (the version is a whole number, as in mutex.acquire@1): %w", id, ErrUnknownScript)
	}
	if s, ok := r.byID[id]; ok {
		return s, nil
	}
	if versions := r.byName[name]; len(versions) > 0 {
		have := make([]string, len(versions))
		for i, s := range versions {
			have[i] = strconv.Itoa(s.Version)
		}
		return nil, fmt.Errorf("registry: %s has no version %s (versions: %s): %w", name, version, strings.Join(have, ", "), ErrUnknownScript)
	}
	return nil, fmt.Errorf("registry: no script named %q (known: %s): %w", name, r.names(), ErrUnknownScript)
}

// Versions returns every version of the named script, oldest first.
func (r *Registry) Versions(name string) []*Script {
	return append([]*Script(nil), r.byName[name]...)
}

// Scripts returns every script, sorted by name and version.
func (r *Registry) Scripts() []*Script {
	return append([]*Script(nil), r.all...)
}

// Latest returns the latest version of every script, sorted by name.
func (r *Registry) Latest() []*Script {
	var out []*Script
	for _, s := range r.all {
		if v := r.byName[s.Name]; v[len(v)-1] == s {
			out = append(out, s)
		}
	}
	return out
}

func (r *Registry) names() string {
	if len(r.byName) == 0 {
		return "none: the registry is empty"
	}
	names := make([]string, 0, len(r.byName))
	for n := range r.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
