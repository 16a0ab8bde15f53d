// hcashare-helm-render renders a Helm chart the way `helm template` does, for the tests of
// deploy/helm (Debian 12 packages no helm, but Go's text/template, sprig and
// sigs.k8s.io/yaml, which Helm is built on). The Helm-only part is in helm.go.
//
//	hcashare-helm-render [-namespace NS] [-f VALUES]... [-notes] RELEASE CHART_DIR
//
// prints {"values": the values the templates saw, "manifests": {template path: output}}
// as JSON, or that with "error" (and exit status 1) when a template fails; the values let
// the caller check them against values.schema.json, which this program does not read.
// -f - reads values from stdin. NOTES.txt is rendered only with -notes.
//
//	hcashare-helm-render -eval TEMPLATE
//
// executes TEMPLATE with the JSON document on stdin as ".", as a chart's template would be
// executed, and prints the result.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// chart.Metadata (pkg/chart/metadata.go), read from Chart.yaml: what .Chart is.
type metadata struct {
	Name         string            `json:"name,omitempty"`
	Home         string            `json:"home,omitempty"`
	Sources      []string          `json:"sources,omitempty"`
	Version      string            `json:"version,omitempty"`
	Description  string            `json:"description,omitempty"`
	Keywords     []string          `json:"keywords,omitempty"`
	Maintainers  []*maintainer     `json:"maintainers,omitempty"`
	Icon         string            `json:"icon,omitempty"`
	APIVersion   string            `json:"apiVersion,omitempty"`
	Condition    string            `json:"condition,omitempty"`
	Tags         string            `json:"tags,omitempty"`
	AppVersion   string            `json:"appVersion,omitempty"`
	Deprecated   bool              `json:"deprecated,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	KubeVersion  string            `json:"kubeVersion,omitempty"`
	Dependencies []interface{}     `json:"dependencies,omitempty"`
	Type         string            `json:"type,omitempty"`
}

type maintainer struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
	URL   string `json:"url,omitempty"`
}

type valueFiles []string

func (v *valueFiles) String() string     { return strings.Join(*v, ",") }
func (v *valueFiles) Set(s string) error { *v = append(*v, s); return nil }

func readInput(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(name)
}

type output struct {
	Values    map[string]interface{} `json:"values"`
	Manifests map[string]string      `json:"manifests"`
	Error     string                 `json:"error,omitempty"`
}

// The chart's templates and the values they see, as `helm template RELEASE CHART -n NS
// -f ...` prepares them (action/install.go, chartutil.ToRenderValues).
func render(release, namespace, dir string, files valueFiles, notes bool) (*output, error) {
	var meta metadata
	data, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(data, &meta); err != nil {
		return nil, fmt.Errorf("Chart.yaml: %w", err)
	}
	// chart.Metadata.Validate, in part; dependencies (subcharts) are not supported.
	if meta.Name == "" || meta.Version == "" || meta.APIVersion == "" {
		return nil, errors.New("Chart.yaml: apiVersion, name and version are required")
	}
	if len(meta.Dependencies) > 0 || meta.Type == "library" {
		return nil, errors.New("Chart.yaml: dependencies and library charts are not supported")
	}
	user := map[string]interface{}{}
	for _, f := range files {
		data, err := readInput(f)
		if err != nil {
			return nil, err
		}
		vals, err := readValues(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		user = mergeMaps(user, vals)
	}
	defaults := map[string]interface{}{}
	if data, err := os.ReadFile(filepath.Join(dir, "values.yaml")); err == nil {
		if defaults, err = readValues(data); err != nil {
			return nil, fmt.Errorf("values.yaml: %w", err)
		}
	}
	values := coalesce(user, defaults)

	// loader: every file under templates/, named CHART/templates/...; helm template
	// leaves NOTES.txt out of its output.
	t := newTemplateSet()
	var names []string
	err = filepath.Walk(filepath.Join(dir, "templates"), func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		name := path.Join(meta.Name, filepath.ToSlash(rel))
		text, err := os.ReadFile(p)
		if err == nil {
			_, err = t.New(name).Parse(string(text))
		}
		if err != nil {
			return err
		}
		if !strings.HasPrefix(path.Base(name), "_") && (notes || path.Base(name) != "NOTES.txt") {
			names = append(names, name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := &output{Values: values, Manifests: map[string]string{}}
	top := map[string]interface{}{
		"Chart": &meta,
		"Release": map[string]interface{}{
			"Name": release, "Namespace": namespace, "IsInstall": true, "IsUpgrade": false,
			"Revision": 1, "Service": "Helm",
		},
		"Values": values,
	}
	for _, name := range names {
		// engine.go: .Template names the file being rendered.
		top["Template"] = map[string]interface{}{
			"Name": name, "BasePath": path.Join(meta.Name, "templates"),
		}
		text, err := execute(t, name, top)
		if err != nil {
			out.Error = err.Error()
			return out, nil
		}
		out.Manifests[name] = text
	}
	return out, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "hcashare-helm-render:", err)
	os.Exit(2)
}

func main() {
	namespace := flag.String("namespace", "default", "the release namespace")
	notes := flag.Bool("notes", false, "also render templates/NOTES.txt")
	eval := flag.String("eval", "", "execute this template with the JSON on stdin as dot")
	var files valueFiles
	flag.Var(&files, "f", "a values file (YAML), or - for stdin; repeatable")
	flag.Parse()

	if *eval != "" {
		var dot interface{}
		if err := json.NewDecoder(os.Stdin).Decode(&dot); err != nil {
			fail(err)
		}
		t := newTemplateSet()
		if _, err := t.New("eval").Parse(*eval); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		text, err := execute(t, "eval", dot)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Print(text)
		return
	}
	if flag.NArg() != 2 {
		fail(errors.New("usage: hcashare-helm-render [-namespace NS] [-f VALUES]... [-notes] RELEASE CHART_DIR"))
	}
	out, err := render(flag.Arg(0), *namespace, flag.Arg(1), files, *notes)
	if err != nil {
		fail(err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail(err)
	}
	if out.Error != "" {
		os.Exit(1)
	}
}
