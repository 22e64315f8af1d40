package main

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/redlua/redlua/lint"
	"github.com/redlua/redlua/registry"
)

// registryPlace says which registry a checked file would belong to: the
// directory operand it was found under (the key is its path inside it, as
// registry.New(os.DirFS(dir)) names it), or, for a file given by name or
// by a glob, its own directory (the key is its base name).
type registryPlace struct {
	group, key string
}

func placeOf(file, dirOperand string) registryPlace {
	if dirOperand != "" {
		if rel, err := filepath.Rel(dirOperand, file); err == nil && !strings.HasPrefix(rel, "..") {
			return registryPlace{group: "dir " + filepath.Clean(dirOperand), key: filepath.ToSlash(rel)}
		}
	}
	return registryPlace{group: "files " + filepath.Dir(filepath.Clean(file)), key: filepath.Base(file)}
}

// checkRegistry adds to results what registry.New would reject of each
// group of files (lint.CheckRegistry): W943 no header, W944 a file name
// that is not name.vVERSION.lua, W945 a name@version declared twice.
// --registry (or registry = true in the config) checks every group;
// --no-registry (registry = false) none. By default a group is checked
// when one of its files has a redlua header: a directory holding scripts
// is a registry, and a plain Lua file beside them would be refused, while
// a directory of plain Lua (no headers at all) is left alone.
func checkRegistry(results []fileResult, srcs [][]byte, places []registryPlace, set *settings) {
	if set.registry == "off" {
		return
	}
	groups := map[string][]int{}
	var order []string
	for i, r := range results {
		if r.IOErr != nil {
			continue
		}
		g := places[i].group
		if groups[g] == nil {
			order = append(order, g)
		}
		groups[g] = append(groups[g], i)
	}
	for _, g := range order {
		idx := groups[g]
		if set.registry != "on" && !anyHeader(idx, srcs) {
			continue
		}
		files := make([]lint.RegistryFile, len(idx))
		for j, i := range idx {
			files[j] = lint.RegistryFile{
				Key: places[i].key, File: results[i].File, Src: srcs[i],
				Config: set.optionsFor(results[i].File).cfg, SyntaxError: hasSyntaxError(results[i].Diags),
			}
		}
		for j, ds := range lint.CheckRegistry(files) {
			if len(ds) == 0 {
				continue
			}
			r := &results[idx[j]]
			r.Diags = append(r.Diags, ds...)
			sort.SliceStable(r.Diags, func(a, b int) bool {
				x, y := r.Diags[a], r.Diags[b]
				if x.Line != y.Line {
					return x.Line < y.Line
				}
				if x.Column != y.Column {
					return x.Column < y.Column
				}
				return x.Code < y.Code
			})
		}
	}
}

// anyHeader reports whether one of the files has a redlua header.
func anyHeader(idx []int, srcs [][]byte) bool {
	for _, i := range idx {
		if _, found, _ := registry.ParseHeader("", srcs[i]); found {
			return true
		}
	}
	return false
}

func hasSyntaxError(ds []lint.Diagnostic) bool {
	for _, d := range ds {
		if d.Code == "E011" {
			return true
		}
	}
	return false
}
