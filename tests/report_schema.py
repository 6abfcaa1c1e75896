# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""The --json report contract, docs/report.schema.json, as the tests use it: check_report() validates
a report (types, required keys, enums) with Debian's python3-jsonschema and fails on any key the
schema does not name, so that every key tmabpf writes is documented (docs/report-json.md is rendered
from the schema).  conftest.load_json() calls it on every report a test reads; the emulated-PMU tier
(tests/pmu/pmu_tier.py) on every report of its guest."""
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA_PATH = os.path.join(ROOT, "docs", "report.schema.json")

_validator = None


def schema():
    with open(SCHEMA_PATH) as f:
        return json.load(f)


def is_report(doc):
    """A tmabpf --json report (not a workload's output, an analyze tree or a trace)."""
    return isinstance(doc, dict) and isinstance(doc.get("tmabpf"), dict) and "schema" in doc["tmabpf"]


def _resolve(root, node):
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        assert ref.startswith("#/"), f"{SCHEMA_PATH}: only local $ref are used, not {ref}"
        target = root
        for part in ref[2:].split("/"):
            target = target[part]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def properties(root, node):
    """The keys an object node names, its allOf parts' included: {key: subschema}, or None for a
    map (an object whose keys are data, such as counters by event name)."""
    node = _resolve(root, node)
    props = None
    for part in [node] + [_resolve(root, p) for p in node.get("allOf", [])]:
        if "properties" in part:
            props = {**(props or {}), **part["properties"]}
    return props


def undocumented(doc, root=None, node=None, path="$"):
    """Paths of keys in doc that the schema does not name (array elements as [], map keys as *)."""
    root = root if root is not None else schema()
    node = _resolve(root, node if node is not None else root)
    found = set()
    if isinstance(doc, dict):
        props = properties(root, node)
        if props is None:
            values = node.get("additionalProperties")
            if isinstance(values, dict):
                for v in doc.values():
                    found |= undocumented(v, root, values, path + ".*")
            return found
        for k, v in doc.items():
            if k not in props:
                found.add(f"{path}.{k}")
            else:
                found |= undocumented(v, root, props[k], f"{path}.{k}")
    elif isinstance(doc, list) and isinstance(node.get("items"), dict):
        for v in doc:
            found |= undocumented(v, root, node["items"], path + "[]")
    return found


def _get_validator():
    global _validator
    if _validator is None:
        try:
            import jsonschema
        except ImportError as e:
            raise AssertionError("python3-jsonschema is missing, the report schema cannot be checked "
                                 "(fix: make deps)") from e
        s = schema()
        jsonschema.Draft202012Validator.check_schema(s)
        _validator = jsonschema.Draft202012Validator(s)
    return _validator


def check_report(doc, where="report"):
    """Fail (AssertionError, one line per problem) unless doc follows docs/report.schema.json and
    every key it holds is named there."""
    errors = sorted(_get_validator().iter_errors(doc), key=lambda e: list(e.absolute_path))
    problems = [f"{where}: {'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:300]}" for e in errors[:20]]
    problems += [f"{where}: {p} is not in docs/report.schema.json (document it there, then run "
                 f"scripts/gen-report-doc.py)" for p in sorted(undocumented(doc))]
    assert not problems, "the report breaks its contract:\n" + "\n".join(problems)
