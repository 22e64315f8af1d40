package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// expandInputs turns command-line operands (files, directories, globs with
// **) into a sorted list of files; directories contribute their *.lua files.
func expandInputs(args []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, a := range args {
		if strings.ContainsAny(a, "*?[") {
			ms, err := globStar(a)
			if err != nil {
				return nil, err
			}
			for _, m := range ms {
				add(m)
			}
			continue
		}
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			add(a) // unreadable files are reported per file (exit 3), as luacheck does
			continue
		}
		var files []string
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(p, ".lua") {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
		for _, f := range files {
			add(f)
		}
	}
	return out, nil
}

// globStar matches a pattern where "**" spans any number of directories.
func globStar(pattern string) ([]string, error) {
	if !strings.Contains(pattern, "**") {
		return filepath.Glob(pattern)
	}
	root := pattern[:strings.Index(pattern, "**")]
	root = strings.TrimSuffix(root, "/")
	if root == "" {
		root = "."
	}
	re := globRegexp(pattern)
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && re.MatchString(filepath.ToSlash(p)) {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}
