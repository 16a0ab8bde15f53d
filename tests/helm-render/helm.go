// What Helm adds to Go's text/template and sprig, kept to what a chart of this project
// may use. Each piece names the Helm 3 code it mirrors (helm.sh/helm/v3, pkg/...); the
// template language and every other function are Go's and sprig's own.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"
)

// engine/funcs.go funcMap: sprig's text functions without env and expandenv, plus Helm's
// YAML and JSON functions (through sigs.k8s.io/yaml and encoding/json, as there) and
// lookup as `helm template` has it, without a cluster. toToml is left out: a chart that
// uses it fails to parse here instead of rendering differently.
func helmFuncs() template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	extra := template.FuncMap{
		// toYaml swallows errors and drops the final newline.
		"toYaml": func(v interface{}) string {
			data, err := yaml.Marshal(v)
			if err != nil {
				return ""
			}
			return strings.TrimSuffix(string(data), "\n")
		},
		// fromYaml and fromJson tolerate errors: the message goes into the map as "Error".
		"fromYaml": func(s string) map[string]interface{} {
			m := map[string]interface{}{}
			if err := yaml.Unmarshal([]byte(s), &m); err != nil {
				m["Error"] = err.Error()
			}
			return m
		},
		"toJson": func(v interface{}) string {
			data, err := json.Marshal(v)
			if err != nil {
				return ""
			}
			return string(data)
		},
		"fromJson": func(s string) map[string]interface{} {
			m := map[string]interface{}{}
			if err := json.Unmarshal([]byte(s), &m); err != nil {
				m["Error"] = err.Error()
			}
			return m
		},
		"lookup": func(string, string, string, string) (map[string]interface{}, error) {
			return map[string]interface{}{}, nil
		},
		// engine.go initFunMap: required fails on nil and on "", as `helm template` does
		// (not in lint mode).
		"required": func(warn string, val interface{}) (interface{}, error) {
			if s, ok := val.(string); val == nil || (ok && s == "") {
				return val, errors.New(warn)
			}
			return val, nil
		},
	}
	for k, v := range extra {
		f[k] = v
	}
	return f
}

// engine.go renderWithReferences: a set of templates in non-strict mode (missingkey=zero,
// as `helm template` without --strict), which include and tpl close over.
func newTemplateSet() *template.Template {
	t := template.New("gotpl")
	t.Option("missingkey=zero")
	t.Funcs(helmFuncs())
	bindLateFuncs(t, map[string]int{})
	return t
}

// engine.go's recursion limit of include.
const recursionMaxNums = 1000

// engine.go includeFun / tplFun: include executes a named template into a string; tpl
// parses a string as a template of a copy of the set (so it sees every define) and
// executes it with the given values.
func bindLateFuncs(t *template.Template, included map[string]int) {
	t.Funcs(template.FuncMap{
		"include": func(name string, data interface{}) (string, error) {
			if included[name] > recursionMaxNums {
				return "", fmt.Errorf("rendering template has a nested reference name: %s: unable to execute template", name)
			}
			included[name]++
			defer func() { included[name]-- }()
			var buf strings.Builder
			err := t.ExecuteTemplate(&buf, name, data)
			return buf.String(), err
		},
		"tpl": func(text string, vals map[string]interface{}) (string, error) {
			clone, err := t.Clone()
			if err != nil {
				return "", err
			}
			clone.Option("missingkey=zero")
			bindLateFuncs(clone, included)
			if _, err := clone.New("tpl").Parse(text); err != nil {
				return "", fmt.Errorf("error during tpl function execution for %q: %w", text, err)
			}
			return execute(clone, "tpl", vals)
		},
	})
}

// Executes the template `name`. engine.go: Go prints a missing value as "<no value>"
// even with missingkey=zero; Helm removes that from the output.
func execute(t *template.Template, name string, dot interface{}) (string, error) {
	var buf strings.Builder
	if err := t.ExecuteTemplate(&buf, name, dot); err != nil {
		return "", err
	}
	return strings.ReplaceAll(buf.String(), "<no value>", ""), nil
}

// chartutil.ReadValues: YAML read through sigs.k8s.io/yaml (YAML 1.1 scalars, via JSON),
// so every number is a float64, as in Helm (1000000 prints as 1e+06).
func readValues(data []byte) (map[string]interface{}, error) {
	vals := map[string]interface{}{}
	err := yaml.Unmarshal(data, &vals)
	if vals == nil {
		vals = map[string]interface{}{}
	}
	return vals, err
}

// cli/values/options.go mergeMaps: several -f files, the later one winning; tables merge.
func mergeMaps(a, b map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if vt, ok := v.(map[string]interface{}); ok {
			if ot, ok := out[k].(map[string]interface{}); ok {
				out[k] = mergeMaps(ot, vt)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// chartutil/coalesce.go coalesceValues / coalesceTablesFullKey (merge=false): the chart's
// values.yaml fills in what the user's values lack; a user's null deletes a default; a
// user's value otherwise wins, even a non-table over a table.
func coalesce(user, defaults map[string]interface{}) map[string]interface{} {
	for k, dv := range defaults {
		uv, present := user[k]
		switch {
		case !present:
			user[k] = dv
		case uv == nil:
			delete(user, k)
		default:
			ut, uok := uv.(map[string]interface{})
			dt, dok := dv.(map[string]interface{})
			if uok && dok {
				coalesce(ut, dt)
			}
		}
	}
	return user
}
