package main

import (
	"fmt"
	"io"
	"strings"
)

// xmlAttr escapes an attribute value the way luacheck does (&apos; for ').
var xmlAttr = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

// writeJUnit prints luacheck's JUnit report: one testcase per diagnostic
// (named file:index), one passing testcase per clean file, and an <error>
// testcase per unreadable file.
func writeJUnit(w io.Writer, rs []fileResult) {
	var b strings.Builder
	tests := 0
	for _, r := range rs {
		f := xmlAttr.Replace(r.File)
		switch {
		case r.IOErr != nil:
			tests++
			fmt.Fprintf(&b, "    <testcase name=\"%s\" classname=\"%s\">\n        <error type=\"I/O error\"/>\n    </testcase>\n", f, f)
		case len(r.Diags) == 0:
			tests++
			fmt.Fprintf(&b, "    <testcase name=\"%s\" classname=\"%s\"/>\n", f, f)
		}
		for i, d := range r.Diags {
			tests++
			fmt.Fprintf(&b, "    <testcase name=\"%s:%d\" classname=\"%s\">\n        <failure type=\"%s\" message=\"%s\"/>\n    </testcase>\n",
				f, i+1, f, xmlAttr.Replace(d.Code), xmlAttr.Replace(lineOf(d, reportOpts{})))
		}
	}
	fmt.Fprintf(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"Luacheck report\" tests=\"%d\">\n%s</testsuite>\n", tests, b.String())
}
