package locks

import (
	"reflect"
	"testing"

	"github.com/redlua/redlua/lua"
	"github.com/redlua/redlua/registry"
)

// A Client pins its script versions, and a new version is adopted in
// scripts.go on purpose; until then it is a file no Client runs. The demo
// and the README present the latest versions as what the locks run, so an
// unadopted version fails here until it is adopted.
func TestClientRunsTheLatestVersions(t *testing.T) {
	set, err := embeddedScripts()
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(lua.FS)
	if err != nil {
		t.Fatal(err)
	}
	v := reflect.ValueOf(set).Elem()
	for i := range v.NumField() {
		pinned := (*registry.Script)(v.Field(i).UnsafePointer()) // unexported: Interface would panic
		if pinned == nil {
			t.Fatalf("scriptSet.%s is not set", v.Type().Field(i).Name)
		}
		latest, err := reg.Get(pinned.Name)
		if err != nil {
			t.Fatal(err)
		}
		if latest.Version != pinned.Version {
			t.Errorf("scriptSet.%s pins %s, but the registry has %s: adopt it in scripts.go (or, if it must wait, say so where the demo lists the scripts a Mutex runs)",
				v.Type().Field(i).Name, pinned.ID(), latest.ID())
		}
	}
}

// Scripts (what redlua scripts verify --loaded checks, and what a Client
// loads at its first NOSCRIPT) lists every pinned script once.
func TestScriptsListsEveryPinnedScript(t *testing.T) {
	set, err := embeddedScripts()
	if err != nil {
		t.Fatal(err)
	}
	listed := map[*registry.Script]bool{}
	got, err := Scripts()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range got {
		if s == nil || listed[s] {
			t.Fatalf("Scripts lists a nil or repeated script: %v", got)
		}
		listed[s] = true
	}
	v := reflect.ValueOf(set).Elem()
	for i := range v.NumField() {
		pinned := (*registry.Script)(v.Field(i).UnsafePointer())
		if !listed[pinned] {
			t.Errorf("scriptSet.%s (%s) is missing from scriptSet.list", v.Type().Field(i).Name, pinned.ID())
		}
	}
	if len(got) != v.NumField() {
		t.Errorf("Scripts lists %d scripts, scriptSet pins %d", len(got), v.NumField())
	}
}
