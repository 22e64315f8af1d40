package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"reflect"
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
// Each file must be named after its header, "name.vVERSION.lua"; two files
// that declare the same name@version are an error, and so is a file system
// without any script.
func New(sources ...fs.FS) (*Registry, error) {
	var scripts []*Script
	var errs []error
	if len(sources) == 0 {
		return nil, errors.New("registry: New needs at least one fs.FS; pass lua.FS, os.DirFS(dir) or an fstest.MapFS")
	}
	for _, fsys := range sources {
		if fsys == nil {
			errs = append(errs, errors.New("registry: a nil fs.FS was passed to New; pass lua.FS, os.DirFS(dir) or an fstest.MapFS"))
			continue
		}
		found, err := walkScripts(fsys, func(s *Script, err error) {
			if err != nil {
				errs = append(errs, err)
				return
			}
			if e := fileNameProblem(s); e != nil {
				errs = append(errs, e)
				return
			}
			scripts = append(scripts, s)
		})
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("registry: reading scripts from %s: %w; pass a directory that exists and can be read", describeFS(fsys), err))
		case found == 0:
			errs = append(errs, fmt.Errorf("registry: no scripts found in %s: New reads files ending in .lua, in any subdirectory; check the path", describeFS(fsys)))
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

// walkScripts parses every .lua file of fsys and hands each result to
// add; it returns how many files it found and the first error reading
// the file system itself.
func walkScripts(fsys fs.FS, add func(*Script, error)) (int, error) {
	found := 0
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || path.Ext(p) != ".lua" {
			return nil
		}
		found++
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		add(ParseScript(p, src))
		return nil
	})
	return found, err
}

// describeFS names a file system in errors: the directory of an os.DirFS
// (a string type), or what it says of itself, else its type.
func describeFS(fsys fs.FS) string {
	if s, ok := fsys.(fmt.Stringer); ok {
		return s.String()
	}
	if v := reflect.ValueOf(fsys); v.Kind() == reflect.String {
		return fmt.Sprintf("directory %s", v.String())
	}
	return fmt.Sprintf("the %T", fsys)
}

// errNilRegistry is what the methods of a nil *Registry return.
var errNilRegistry = errors.New("registry: the Registry is nil; build one with registry.New(lua.FS)")

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
	if r == nil {
		return nil, errNilRegistry
	}
	versions := r.byName[name]
	if len(versions) == 0 {
		return nil, fmt.Errorf("registry: no script named %q (known: %s): %w", name, r.names(), ErrUnknownScript)
	}
	return versions[len(versions)-1], nil
}

// Lookup returns the script "name@version"; a bare name means the latest version.
func (r *Registry) Lookup(id string) (*Script, error) {
	if r == nil {
		return nil, errNilRegistry
	}
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
	if r == nil {
		return nil
	}
	return append([]*Script(nil), r.byName[name]...)
}

// Scripts returns every script, sorted by name and version.
func (r *Registry) Scripts() []*Script {
	if r == nil {
		return nil
	}
	return append([]*Script(nil), r.all...)
}

// Latest returns the latest version of every script, sorted by name.
func (r *Registry) Latest() []*Script {
	if r == nil {
		return nil
	}
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
