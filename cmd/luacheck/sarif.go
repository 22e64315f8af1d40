package main

import (
	"encoding/json"
	"io"
	"path/filepath"

	"github.com/redlua/redlua/lint"
)

const sarifSchema = "https://json.schemastore.org/sarif-2.1.0.json"

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Version        string      `json:"version"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string       `json:"id"`
	Name             string       `json:"name,omitempty"`
	ShortDescription sarifMessage `json:"shortDescription"`
	FullDescription  sarifMessage `json:"fullDescription"`
	HelpURI          string       `json:"helpUri"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	Level     string          `json:"level"`
	Message   sarifMessage    `json:"message"`
	Locations []sarifLocation `json:"locations"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           sarifRegion   `json:"region"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn"`
	EndColumn   int `json:"endColumn"`
}

func writeSARIF(w io.Writer, rs []fileResult) error {
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{
			Name: "redlua-luacheck", InformationURI: "https://github.com/redlua/redlua/blob/main/docs/luacheck.md",
			Version: version, Rules: []sarifRule{},
		}},
		Results: []sarifResult{},
	}
	for _, d := range sortedCodes(rs) {
		// Each rule describes itself with its analyzer's doc and links to
		// the code's entry in CODES.md.
		doc := lint.AnalyzerDoc(d.Analyzer)
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{
			ID: d.Code, Name: d.Analyzer,
			ShortDescription: sarifMessage{Text: d.Analyzer + ": " + doc},
			FullDescription:  sarifMessage{Text: doc},
			HelpURI:          lint.HelpURL(d.Code),
		})
	}
	for _, r := range rs {
		for _, d := range r.Diags {
			run.Results = append(run.Results, sarifResult{
				RuleID: d.Code, Level: sevName(d.Severity), Message: sarifMessage{Text: d.Message},
				Locations: []sarifLocation{{PhysicalLocation: sarifPhysical{
					ArtifactLocation: sarifArtifact{URI: filepath.ToSlash(d.File)},
					Region:           sarifRegion{StartLine: d.Line, StartColumn: d.Column, EndColumn: d.EndColumn + 1},
				}}},
			})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: sarifSchema, Version: "2.1.0", Runs: []sarifRun{run}})
}
