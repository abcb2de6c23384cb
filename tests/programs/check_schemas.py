#!/usr/bin/env python3
"""The JSON Schemas of sia_allocate's request and decision (examples/requests/*.schema.json) agree with the program.

1. Both are valid JSON Schemas (draft 2020-12).
2. Every request the program accepts (examples/requests, tests/data/allocate) is valid against the request schema,
   and every decision it prints for them (several backends and options, so that optional fields appear) against the
   decision schema; so is the next request `--next-request` prints.
3. Strictness: requests with an unknown field at every level, values out of range and values of the wrong type are
   rejected by both the program (exit 2, or the job listed in the decision's `rejected`) and the schema; a few
   unusual but valid forms are accepted by both.
4. The field lists of the parser (every ObjectReader and reject_unknown list in src/io) and the keys the decision
   printer writes are the properties of the schemas: a field added to the program without its schema fails here.

Usage: check_schemas.py <source root> <sia_allocate> <scratch dir>. Exit 77 (skipped) without python3-jsonschema.
"""
import copy
import glob
import json
import os
import re
import subprocess
import sys

try:
    import jsonschema
except ImportError:
    print(f"SKIP: python3-jsonschema (Debian package) is not installed for {sys.executable}")
    sys.exit(77)

ROOT, PROG, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(WORK, exist_ok=True)
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


REQ = load(os.path.join(ROOT, "examples/requests/request.schema.json"))
DEC = load(os.path.join(ROOT, "examples/requests/decision.schema.json"))
for name, s in (("request", REQ), ("decision", DEC)):
    jsonschema.Draft202012Validator.check_schema(s)
req_v = jsonschema.Draft202012Validator(REQ)
dec_v = jsonschema.Draft202012Validator(DEC)


def errors(validator, doc):
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message[:160]}" for e in validator.iter_errors(doc)]


def run(args):
    return subprocess.run([PROG] + args, capture_output=True, text=True, timeout=120)


def write(name, doc):
    path = os.path.join(WORK, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return path


def rejects_a_job(p):
    """The program answered but rejected a job (per-job rejection: the decision's `rejected` list)."""
    try:
        return bool(json.loads(p.stdout).get("rejected"))
    except ValueError:
        return False


# --- 2. accepted requests, their decisions, the next request ---------------------------------------------------
help_text = run(["--help"]).stdout
backends = [b for b in ("native", "cbc", "glpk") if b in help_text]
requests = sorted(glob.glob(os.path.join(ROOT, "examples/requests/*.json")) +
                  glob.glob(os.path.join(ROOT, "tests/data/allocate/*.json")))
requests = [r for r in requests if not r.endswith(".schema.json")]
decisions = 0
seen_fields = set()
for path in requests:
    short = os.path.relpath(path, ROOT)
    runs = [[]] + [["--backend", b] for b in backends] + [["--time-limit-ms", "0"]]
    first = run([path])
    # Rejected by the program as a whole (exit 2): the schema need not catch semantic errors. Job by job
    # (`rejected`), its decisions are still checked below, not the request.
    if first.returncode == 2:
        continue
    try:
        doc = load(path)
    except ValueError:
        fail(f"{short}: accepted by sia_allocate but not JSON for Python")
        continue
    # A request whose decision lists `rejected` jobs has invalid jobs (rejected one by one, not strict): the schema
    # rejects it, as the program does with "options": {"strict": true}.
    if not rejects_a_job(first):
        for e in errors(req_v, doc):
            fail(f"{short}: accepted by sia_allocate, but not by request.schema.json: {e}")
    for extra in runs:
        p = run([path] + extra)
        if p.returncode not in (0, 3) or not p.stdout.strip():
            fail(f"{short} {' '.join(extra)}: exit {p.returncode}: {p.stderr.strip()[:300]}")
            continue
        decision = json.loads(p.stdout)
        decisions += 1
        seen_fields |= set(decision)
        for a in decision.get("allocations", []):
            seen_fields |= {"allocations[]." + k for k in a}
        for e in errors(dec_v, decision):
            fail(f"{short} {' '.join(extra)}: decision not valid against decision.schema.json: {e}")
    if "--next-request" in help_text:
        dec_path = write("decision.json", json.loads(run([path]).stdout))
        p = run([path, "--next-request", dec_path, "--elapsed", "60"])
        if p.returncode != 0:
            fail(f"{short}: --next-request: exit {p.returncode}: {p.stderr.strip()[:300]}")
        elif not rejects_a_job(first):
            for e in errors(req_v, json.loads(p.stdout)):
                fail(f"{short}: the next request is not valid against request.schema.json: {e}")
print(f"{len(requests)} requests, {decisions} decisions validated; decision fields seen: {sorted(seen_fields)}")

# --- 3. strictness: both reject, or both accept ----------------------------------------------------------------
base = load(os.path.join(ROOT, "examples/requests/table1.json"))
model_job = next(j for j in load(os.path.join(ROOT, "examples/requests/cluster64.json"))["jobs"] if "model" in j)
rich = copy.deepcopy(base)
rich["cluster"]["gpu_types"][1]["node_names"] = ["b-0"]
rich["cluster"]["down"] = []
rich["cluster"]["tenants"] = {"t": {"max_gpus": 4, "max_gpus_per_type": {"A": 2}}}
rich["jobs"][0]["current"] = {"gpu_type": "B", "gpus": 4, "nodes": 1,
                              "placement": [{"node": "b-0", "gpus": 4, "gpu_ids": [0, 1, 2, 3]}]}
rich["jobs"][0]["tenant"] = "t"
rich["warm_start"] = {"prices": [{"gpu_type": "B", "price": 0.5}], "allocations": [{"job": "J1"}]}
if "policy" not in rich:
    rich["policy"] = {}
# All or nothing: a job-level error rejects the whole request (exit 2), as the schema does; not strict, it would
# reject that job alone (exit 0, `rejected` in the decision).
rich["options"] = {"strict": True}


def at(doc, path):
    for k in path:
        doc = doc[k]
    return doc


def mutated(path, key, value, doc=None):
    d = copy.deepcopy(doc if doc is not None else rich)
    target = at(d, path)
    if value is DELETE:
        del target[key]
    else:
        target[key] = value
    return d


DELETE = object()
objects = [[], ["cluster"], ["cluster", "gpu_types", 0], ["cluster", "tenants", "t"], ["policy"], ["jobs", 0],
           ["jobs", 0, "goodput", 0], ["jobs", 0, "current"], ["jobs", 0, "current", "placement", 0],
           ["warm_start"], ["warm_start", "prices", 0], ["warm_start", "allocations", 0], ["options"]]
rejected = [(p, "colour", 1) for p in objects]
with_model = copy.deepcopy(rich)
with_model["cluster"] = load(os.path.join(ROOT, "examples/requests/cluster64.json"))["cluster"]
with_model["jobs"] = [model_job]
with_model.pop("warm_start")
model_path = ["jobs", 0, "model"]
rejected += [
    (["cluster", "gpu_types", 0], "nodes", -1), (["cluster", "gpu_types", 0], "nodes", 100001),
    (["cluster", "gpu_types", 0], "nodes", 2.5), (["cluster", "gpu_types", 0], "nodes", "2"),
    (["cluster", "gpu_types", 0], "gpus_per_node", 0), (["cluster", "gpu_types", 0], "name", ""),
    (["cluster", "gpu_types", 0], "name", "A" * 257), (["cluster"], "gpu_types", []),
    (["cluster"], "reserved", {"A": -1}), (["cluster", "tenants", "t"], "max_gpus", -1),
    (["cluster", "tenants"], "T" * 257, {}),
    (["policy"], "p", 0), (["policy"], "lambda", 0), (["policy"], "lambda", -1), (["policy"], "relative_gap", 1.5),
    (["policy"], "time_limit_ms", -1), (["policy"], "threads", 5000), (["policy"], "place", 1),
    (["policy"], "backend", ""), (["jobs", 0], "min_gpus", 0), (["jobs", 0], "max_gpus", 0),
    (["jobs", 0], "kind", "elastic"), (["jobs", 0], "pipeline_size", 0), (["jobs", 0], "age_s", -1),
    (["jobs", 0], "restarts", -1), (["jobs", 0], "restart_cost_s", -0.5), (["jobs", 0], "weight", 0),
    (["jobs", 0], "preemptible", "yes"), (["jobs", 0], "id", ""), (["jobs", 0], "id", "J" * 257),
    (["jobs", 0], "id", DELETE), (["jobs", 0], "goodput", DELETE), (["jobs", 0], "model", model_job["model"]),
    (["jobs", 0], "tenant", ""), (["jobs", 0, "goodput", 0], "value", -1), (["jobs", 0, "goodput", 0], "gpus", 0),
    (["jobs", 0, "current"], "gpus", 0), (["warm_start", "prices", 0], "price", -1),
    ([], "jobs", DELETE), ([], "cluster", DELETE), (["options"], "strict", 1),
]
accepted = [(["cluster", "gpu_types", 0], "nodes", 1.0), ([], "policy", None), (["policy"], "time_limit_ms", None),
            ([], "warm_start", None), (["jobs", 0], "current", None), (["jobs", 0], "max_gpus_ever", None),
            (["jobs", 0], "kind", "scale-gpus"), (["cluster"], "down", None), ([], "options", None),
            (["options"], "strict", False)]
cases = [(c, False, None) for c in rejected] + [(c, True, None) for c in accepted]
cases += [((model_path, "colour", 1), False, with_model), ((model_path, "init_batch_size", 0), False, with_model),
          ((model_path, "projection", "linear"), False, with_model), ((model_path, "grad", None), True, with_model)]
for doc in (rich, with_model):
    cases.append((([], "policy", doc.get("policy")), True, doc))
for (path, key, value), ok, doc in cases:
    d = mutated(path, key, value, doc)
    what = f"{'.'.join(map(str, path)) or '<root>'}.{key[:40]} = {'<deleted>' if value is DELETE else json.dumps(value)[:40]}"
    p = run([write("mutated.json", d)])
    schema_ok = not errors(req_v, d)
    program_ok = p.returncode != 2 and not rejects_a_job(p)
    if program_ok != ok:
        fail(f"{what}: sia_allocate {'accepts' if program_ok else 'rejects'} it (exit {p.returncode}: "
             f"{p.stderr.strip()[:200]}), expected {'acceptance' if ok else 'rejection'}")
    if schema_ok != ok:
        fail(f"{what}: request.schema.json {'accepts' if schema_ok else 'rejects'} it, sia_allocate "
             f"{'accepts' if program_ok else 'rejects'} it")
print(f"{len(cases)} strictness cases checked")


# --- 4. the program's field lists are the schemas' properties ---------------------------------------------------
def property_sets(schema):
    out = []
    if isinstance(schema, dict):
        if "properties" in schema:
            out.append(set(schema["properties"]))
        for v in schema.values():
            out += property_sets(v)
    elif isinstance(schema, list):
        for v in schema:
            out += property_sets(v)
    return out


req_sets = property_sets(REQ)
dec_keys = set().union(*property_sets(DEC))
io_dir = os.path.join(ROOT, "src/io")
lists = 0
for src in ("request.cpp", "model_json.cpp"):
    text = open(os.path.join(io_dir, src), encoding="utf-8").read()
    for m in re.finditer(r"(?:ObjectReader\s+\w+\(|reject_unknown\()[^;]*?\{((?:\s*\"\w+\"\s*,?)+)\}", text):
        fields = set(re.findall(r"\"(\w+)\"", m.group(1)))
        lists += 1
        if fields not in req_sets:
            near = max(req_sets, key=lambda s: len(s & fields))
            fail(f"src/io/{src}: the fields {sorted(fields)} are not the properties of an object of request.schema.json"
                 f" (closest: missing {sorted(fields - near)}, extra {sorted(near - fields)}): update the schema")
text = open(os.path.join(io_dir, "request.cpp"), encoding="utf-8").read()
body = text[text.index("std::string decision_to_json("):]
body = body[:body.index("\n}\n")]
written = set(re.findall(r"\b\w+\[\"(\w+)\"\]\s*=", body))
for key in sorted(written - dec_keys):
    fail(f"src/io/request.cpp: decision_to_json writes \"{key}\", which decision.schema.json does not have: update it")
print(f"{lists} field lists of the parser and {len(written)} decision keys compared with the schemas")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("schemas agree with sia_allocate")
