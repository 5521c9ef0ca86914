// Command docs writes the documents rendered from docs/templates (`make
// docs`; package docs) and each committed peers conformance report from
// its conformance.json, and names the files it changed.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"tracebench/docs"
	"tracebench/peers"
)

func main() {
	changed, err := docs.Write(".")
	if err == nil {
		var more []string
		more, err = writeConformance()
		changed = append(changed, more...)
	}
	for _, path := range changed {
		fmt.Printf("docs: wrote %s\n", path)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "docs: %v\n", err)
		os.Exit(1)
	}
}

// writeConformance renders results/<kernel>/peers/CONFORMANCE.md from the
// conformance.json beside it.
func writeConformance() ([]string, error) {
	files, err := filepath.Glob("results/*/peers/conformance.json")
	if err != nil {
		return nil, err
	}
	var changed []string
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			return changed, err
		}
		var r peers.Report
		if err := json.Unmarshal(raw, &r); err != nil {
			return changed, fmt.Errorf("%s: %w", file, err)
		}
		md := filepath.Join(filepath.Dir(file), "CONFORMANCE.md")
		if old, err := os.ReadFile(md); err == nil && string(old) == r.Markdown() {
			continue
		}
		if err := os.WriteFile(md, []byte(r.Markdown()), 0o644); err != nil {
			return changed, err
		}
		changed = append(changed, md)
	}
	return changed, nil
}
