"""sia.allocate agrees with the program sia_allocate: the same decision for the same request and options
(timing fields aside), and the same message for a rejected request.

The program is run from SIA_BUILD_DIR (set by ctest); each request is written to a file, whose path is also given
to sia.allocate as `source`, so that error messages name the same source.
"""

import json
import random
import re
import subprocess
import sys

import numpy as np
import pytest

import sia
from sia_test_support import BUILD_DIR, SOURCE_DIR, in_threads

PROGRAM = BUILD_DIR / "examples" / "sia_allocate"
TIMING_FIELDS = ("solve_ms", "total_ms")

pytestmark = pytest.mark.skipif(not PROGRAM.exists(), reason=f"{PROGRAM} not built (SIA_BUILD_EXAMPLES=OFF)")


def without_timing(decision):
    return {k: v for k, v in decision.items() if k not in TIMING_FIELDS}


def run_program(path, *options):
    """(exit status, decision dict or None, standard error) of sia_allocate on the request file."""
    p = subprocess.run([str(PROGRAM), str(path), *options], capture_output=True, text=True, timeout=120)
    decision = json.loads(p.stdout) if p.stdout.strip() else None
    return p.returncode, decision, p.stderr


def check_agreement(tmp_path, name, request_text, backend=None):
    path = tmp_path / f"{name}.json"
    path.write_text(request_text)
    options = ["--backend", backend] if backend else []
    code, expected, err = run_program(path, *options)
    assert code in (0, 3), f"{name}: sia_allocate exited {code}: {err}"
    got = sia.allocate(request_text, backend=backend, source=str(path))
    assert without_timing(got) == without_timing(expected), name
    # The dict is the JSON text read back: same keys in the same order as the program prints them.
    assert list(got) == list(expected)
    return got


EXAMPLES = sorted(p for p in (SOURCE_DIR / "examples" / "requests").glob("*.json") if "schema" not in p.name)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_examples_agree(tmp_path, path):
    check_agreement(tmp_path, path.stem, path.read_text())


def test_table1_known_answer():
    """The paper's Table 1: J1 gets 4 GPUs of type B, J2 2 GPUs of type A."""
    d = sia.allocate((SOURCE_DIR / "examples" / "requests" / "table1.json").read_text())
    assert d["status"] == "optimal"
    got = {a["job"]: (a["nodes"], a["gpus"], a["gpu_type"]) for a in d["allocations"]}
    assert got == {"J1": (1, 4, "B"), "J2": (1, 2, "A")}


# ----------------------------------------------------------------------------------------------------------------
# Random valid requests
# ----------------------------------------------------------------------------------------------------------------
def configurations(gpu_type):
    """(gpus, nodes) the cluster has for a type: single-node powers of two up to the node size, whole nodes."""
    per_node = gpu_type["gpus_per_node"]
    out = []
    g = 1
    while g <= per_node and gpu_type["nodes"] >= 1:
        out.append((g, 1))
        g *= 2
    for n in range(2, gpu_type["nodes"] + 1):
        out.append((n * per_node, n))
    return out


def random_request(rng, backend):
    types = []
    for t in range(rng.randint(1, 3)):
        types.append({"name": "ABC"[t], "nodes": rng.randint(1, 3), "gpus_per_node": rng.choice([1, 2, 4, 8])})
    free = {t["name"]: [[True] * t["gpus_per_node"] for _ in range(t["nodes"])] for t in types}
    jobs = []
    for j in range(rng.randint(1, 8)):
        job = {"id": f"j{j}"}
        kind = rng.choice(["adaptive", "adaptive", "strong-scaling", "rigid"])
        if kind != "adaptive":
            job["kind"] = kind
        goodput = []
        for t in types:
            for gpus, nodes in configurations(t):
                if rng.random() < 0.8:
                    value = round(rng.uniform(0.1, 2.0) * gpus ** rng.uniform(0.5, 1.0), 3)
                    goodput.append({"gpu_type": t["name"], "gpus": gpus, "nodes": nodes, "value": value})
        if not goodput:
            t = types[0]
            goodput.append({"gpu_type": t["name"], "gpus": 1, "nodes": 1, "value": 1.0})
        if kind == "rigid":
            # One count, one that some configuration holds.
            count = rng.choice([e["gpus"] for e in goodput])
            goodput = [e for e in goodput if e["gpus"] == count]
            job["min_gpus"] = count
        elif rng.random() < 0.3:
            job["max_gpus"] = rng.choice([1, 2, 4, 8])
        job["goodput"] = goodput
        if rng.random() < 0.2:
            job["preemptible"] = False
        if rng.random() < 0.5:
            job["age_s"] = rng.choice([0, 60, 600, 7200])
            job["restarts"] = rng.randint(0, 3)
        if rng.random() < 0.2:
            job["weight"] = rng.choice([0.5, 2, 4])
        # Sometimes running: on a single-node configuration whose GPUs are free.
        single = [e for e in goodput if e["nodes"] == 1]
        if single and rng.random() < 0.4:
            e = rng.choice(single)
            nodes = free[e["gpu_type"]]
            for node_index, node in enumerate(nodes):
                ids = [i for i, f in enumerate(node) if f][: e["gpus"]]
                if len(ids) == e["gpus"]:
                    for i in ids:
                        node[i] = False
                    job["current"] = {"gpu_type": e["gpu_type"], "gpus": e["gpus"],
                                      "placement": [{"node": f"{e['gpu_type']}/{node_index}", "gpus": e["gpus"],
                                                     "gpu_ids": ids}]}
                    break
        jobs.append(job)
    if rng.random() < 0.15:
        # A bad job (non-strict request): rejected alone, listed in `rejected`.
        jobs.append({"id": "bad", "min_gpus": 0, "goodput": [{"gpu_type": "A", "gpus": 1, "value": 1}]})
    request = {"cluster": {"gpu_types": types},
               "policy": {"p": rng.choice([-1, -0.5, 0.5, 1]), "lambda": rng.choice([1.1, 2, 5]),
                          "backend": backend, "time_limit_ms": 60000, "threads": 1,
                          "place": rng.random() < 0.8, "prices": rng.random() < 0.7},
               "jobs": jobs}
    if rng.random() < 0.2:
        request["cluster"]["reserved"] = {types[0]["name"]: rng.randint(0, types[0]["gpus_per_node"])}
    return request


def test_random_requests_agree(tmp_path):
    rng = random.Random(2123)
    backends = sia.available_backends()
    statuses = set()
    for k in range(50):
        backend = backends[k % len(backends)]
        request = random_request(rng, backend)
        text = json.dumps(request)
        got = check_agreement(tmp_path, f"random{k}", text)
        assert got["backend"] == backend
        statuses.add(got["status"])
        # The dict form of the same request gives the same decision as its text.
        assert without_timing(sia.allocate(request, source=str(tmp_path / f"random{k}.json"))) == without_timing(got)
    assert "optimal" in statuses


def test_backend_and_time_limit_options_agree(tmp_path):
    text = (SOURCE_DIR / "examples" / "requests" / "cluster64.json").read_text()
    path = tmp_path / "cluster64.json"
    path.write_text(text)
    for backend in sia.available_backends():
        code, expected, err = run_program(path, "--backend", backend, "--time-limit-ms", "30000")
        assert code == 0, err
        got = sia.allocate(text, backend=backend, time_limit_ms=30000, source=str(path))
        assert got["backend"] == backend
        assert without_timing(got) == without_timing(expected)


def test_json_text_is_the_programs(tmp_path):
    text = (SOURCE_DIR / "examples" / "requests" / "tenants.json").read_text()
    path = tmp_path / "tenants.json"
    path.write_text(text)
    for pretty in (False, True):
        p = subprocess.run([str(PROGRAM), str(path)] + (["--pretty"] if pretty else []), capture_output=True,
                           text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        got = sia.allocate_json(text, source=str(path), pretty=pretty)
        # Byte for byte once the two timing values are masked.
        mask = lambda s: json.dumps(without_timing(json.loads(s)))  # noqa: E731
        assert mask(got) == mask(p.stdout)
        assert len(got.splitlines()) == len(p.stdout.splitlines())
        assert json.loads(got).keys() == sia.allocate(text).keys()


def test_numpy_values_in_a_dict():
    request = json.loads((SOURCE_DIR / "examples" / "requests" / "table1.json").read_text())
    plain = sia.allocate(request)
    for job in request["jobs"]:
        for e in job["goodput"]:
            e["gpus"] = np.int64(e["gpus"])
            e["value"] = np.float64(e["value"])
        job["max_gpus"] = np.int32(job["max_gpus"])
    request["policy"]["p"] = np.float32(1.0)
    assert without_timing(sia.allocate(request)) == without_timing(plain)
    request["jobs"][0]["goodput"] = np.array([1, 2])  # an array becomes a list (here a wrong one: job rejected)
    rejected = sia.allocate(request)["rejected"]
    assert [r["field"] for r in rejected] == ["jobs[0].goodput[0]"]
    with pytest.raises(TypeError, match="object of type object is not JSON serializable"):
        sia.allocate({"cluster": object()})


def test_non_finite_numbers_in_a_dict_are_named():
    """json.dumps writes NaN and Infinity, which are not JSON: the parser names the field that held them."""
    request = json.loads((SOURCE_DIR / "examples" / "requests" / "table1.json").read_text())
    request["options"] = {"strict": True}
    request["jobs"][1]["goodput"][2]["value"] = float("nan")
    with pytest.raises(ValueError, match=r"^request:1:\d+: malformed JSON at jobs\[1\]\.goodput\[2\]\.value: "):
        sia.allocate(request)
    request["jobs"][1]["goodput"][2]["value"] = 1.0
    request["policy"]["lambda"] = np.inf
    with pytest.raises(ValueError, match=r"malformed JSON at policy\.lambda: "):
        sia.allocate(request)


# ----------------------------------------------------------------------------------------------------------------
# Rejected requests: ValueError with the program's message
# ----------------------------------------------------------------------------------------------------------------
BAD = {
    "malformed": '{"cluster": {"gpu_types": [}',
    "not_an_object": "[1, 2]",
    "missing_cluster": '{"jobs": []}',
    "unknown_field": '{"cluster": {"gpu_types": [{"name": "A", "nodes": 1, "gpus_per_node": 2}]}, "jobs": [], "x": 1}',
    "bad_policy": '{"cluster": {"gpu_types": [{"name": "A", "nodes": 1, "gpus_per_node": 2}]},\n'
                  ' "policy": {"p": 0}, "jobs": []}',
    "strict_bad_job": '{"cluster": {"gpu_types": [{"name": "A", "nodes": 1, "gpus_per_node": 2}]},\n'
                      ' "options": {"strict": true},\n'
                      ' "jobs": [{"id": "j", "goodput": [{"gpu_type": "A", "gpus": 1, "value": -1}]}]}',
    "duplicate_id": '{"cluster": {"gpu_types": [{"name": "A", "nodes": 1, "gpus_per_node": 2}]},\n'
                    ' "jobs": [{"id": "j", "goodput": [{"gpu_type": "A", "gpus": 1, "value": 1}]},\n'
                    '          {"id": "j", "goodput": [{"gpu_type": "A", "gpus": 1, "value": 1}]}]}',
    "unknown_type": '{"cluster": {"gpu_types": [{"name": "A", "nodes": 1, "gpus_per_node": 2}]},\n'
                    ' "options": {"strict": true},\n'
                    ' "jobs": [{"id": "j", "goodput": [{"gpu_type": "Z", "gpus": 1, "value": 1}]}]}',
    "nan_in_text": '{"cluster": {"gpu_types": [{"name": "A", "nodes": 1, "gpus_per_node": NaN}]}, "jobs": []}',
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_request_message_is_the_programs(tmp_path, name):
    path = tmp_path / f"{name}.json"
    path.write_text(BAD[name])
    code, decision, err = run_program(path)
    assert code == 2 and decision is None
    with pytest.raises(ValueError) as e:
        sia.allocate(BAD[name], source=str(path))
    assert err.rstrip("\n") == f"sia_allocate: {e.value}"
    assert str(path) in str(e.value)


def test_bad_options():
    text = (SOURCE_DIR / "examples" / "requests" / "table1.json").read_text()
    p = subprocess.run([str(PROGRAM), "-", "--backend", "nope"], input=text, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 2
    with pytest.raises(ValueError) as e:
        sia.allocate(text, backend="nope")
    # The program names its option --backend; the function its keyword, backend.
    assert p.stderr.rstrip("\n") == f"sia_allocate: --{e.value}"
    with pytest.raises(ValueError, match=r"time_limit_ms: must be in \[0, 2147483647\], got -1"):
        sia.allocate(text, time_limit_ms=-1)
    with pytest.raises(TypeError):
        sia.allocate(text, "cbc")  # options are keyword-only


def test_unsolved_round_is_returned_not_raised(tmp_path):
    """Non-preemptible demand that cannot be met: status infeasible (the program's exit status 3), not an error."""
    text = json.dumps({"cluster": {"gpu_types": [{"name": "A", "nodes": 1, "gpus_per_node": 2}]},
                       "jobs": [{"id": f"j{i}", "kind": "rigid", "min_gpus": 2, "preemptible": False,
                                 "goodput": [{"gpu_type": "A", "gpus": 2, "value": 1}]} for i in range(2)]})
    path = tmp_path / "unmet.json"
    path.write_text(text)
    code, expected, _ = run_program(path)
    got = sia.allocate(text, source=str(path))
    assert without_timing(got) == without_timing(expected)
    assert code == 3 and got["status"] == "infeasible" and got["unmet"]


def test_concurrent_rounds_give_the_same_decisions():
    """Rounds run without the GIL in several threads at once: each gets its own, correct decision."""
    text = (SOURCE_DIR / "examples" / "requests" / "cluster64.json").read_text()
    expected = without_timing(sia.allocate(text))
    assert in_threads(lambda _: without_timing(sia.allocate(text))) == [expected] * 4


def test_readme_example(tmp_path):
    """The README's snippet (section "One round as JSON") runs from the source tree and prints what its comment says."""
    readme = (SOURCE_DIR / "README.md").read_text()
    section = readme.split("### One round as JSON: `sia.allocate`", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    expected = code.rsplit("# ", 1)[1].strip()
    script = tmp_path / "readme_example.py"
    script.write_text(code)
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=SOURCE_DIR)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == expected


# ----------------------------------------------------------------------------------------------------------------
# The program's second form: --next-request
# ----------------------------------------------------------------------------------------------------------------
def program_next_request(request_path, decision_path, elapsed):
    p = subprocess.run([str(PROGRAM), str(request_path), "--next-request", str(decision_path), "--elapsed",
                        str(elapsed)], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_next_request_chain_agrees(tmp_path, path):
    """Four rounds: each decision (sia.allocate) and each next request (sia.next_request) is the program's."""
    text = path.read_text()
    for k in range(4):
        request_path = tmp_path / f"request{k}.json"
        request_path.write_text(text)
        code, decision, err = run_program(request_path)
        assert code == 0, err
        assert without_timing(sia.allocate(text, source=str(request_path))) == without_timing(decision)
        decision_text = json.dumps(decision)
        decision_path = tmp_path / f"decision{k}.json"
        decision_path.write_text(decision_text)
        code, out, err = program_next_request(request_path, decision_path, 60 * (k + 1))
        assert code == 0, err
        got = sia.next_request(text, decision, 60 * (k + 1), request_source=str(request_path),
                               decision_source=str(decision_path))
        assert got == json.loads(out)
        assert sia.next_request_json(text, decision_text, 60 * (k + 1)) == out.rstrip("\n")
        text = out


def test_next_request_errors_are_the_programs(tmp_path):
    request_path = SOURCE_DIR / "examples" / "requests" / "table1.json"
    text = request_path.read_text()
    decision = sia.allocate(text)
    decision["allocations"][0]["job"] = "nobody"
    decision_path = tmp_path / "decision.json"
    decision_path.write_text(json.dumps(decision))
    code, out, err = program_next_request(request_path, decision_path, 60)
    assert code == 2 and not out
    with pytest.raises(ValueError) as e:
        sia.next_request(text, decision, 60, request_source=str(request_path), decision_source=str(decision_path))
    assert err.rstrip("\n") == f"sia_allocate: {e.value}"
    with pytest.raises(ValueError, match="elapsed"):
        sia.next_request(text, sia.allocate(text), -1.0)


def test_log_lines_are_the_programs_verbose_lines():
    """log= gets the lines sia_allocate --verbose prints (timings aside); the callable's exception is raised."""
    path = SOURCE_DIR / "examples" / "requests" / "cluster64.json"
    p = subprocess.run([str(PROGRAM), str(path), "--verbose"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    timing = re.compile(r"^(\w+) [0-9.]+ ms \(\+[0-9.]+\):(.*)$")
    expected = [timing.match(line.removeprefix("sia_allocate: ")).groups() for line in p.stderr.splitlines()]
    lines = []
    decision = sia.allocate(path.read_text(), log=lines.append)
    assert [timing.match(line).groups() for line in lines] == expected
    assert expected[-1][0] == "done" and decision["status"] == "optimal"

    def failing(line):
        raise KeyError(line)

    with pytest.raises(KeyError, match="problem"):
        sia.allocate(path.read_text(), log=failing)
    with pytest.raises(TypeError, match="log: must be callable"):
        sia.allocate(path.read_text(), log=3)
