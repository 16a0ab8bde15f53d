#!/bin/bash
# Trim a Kubernetes OpenAPI v3 document (as served at /openapi/v3/apis/<group>/<version>) to one
# schema and every schema it references, transitively, without descriptions: the small,
# reviewable copies under tests/data/openapi/ that the tests validate objects against.
#
#   scripts/openapi-extract.sh DOCUMENT.json SCHEMA-NAME > OUT.json
#   e.g. scripts/openapi-extract.sh resource.k8s.io_v1.json io.k8s.api.resource.v1.ResourceSlice
#
# The output is an OpenAPI v3 document of its own ({openapi, info, components.schemas}), so its
# "$ref": "#/components/schemas/..." still resolve. Needs jq (1.6 or later).
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 DOCUMENT.json SCHEMA-NAME" >&2
  exit 2
fi
doc=$1
root=$2
jq --arg root "$root" '
  .components.schemas as $s
  | if $s[$root] == null then error("no schema \($root) in components.schemas") else . end
  | def refs: [.. | objects | .["$ref"]? // empty | strings
               | if startswith("#/components/schemas/") then ltrimstr("#/components/schemas/")
                 else error("unsupported $ref \(.)") end];
    def closure($names):
      (($names + ($names | map($s[.] // error("dangling $ref to \(.)") | refs) | add))
       | unique) as $all
      | if $all == $names then $names else closure($all) end;
    closure([$root]) as $keep
  | {openapi: .openapi,
     info: .info,
     components: {schemas: ($s | with_entries(select(.key as $k | $keep | index($k) != null)))}}
  | walk(if type == "object" and (.description | type) == "string" then del(.description) else . end)
' "$doc"
