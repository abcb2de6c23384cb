"""sia.JsonSession: rounds one after another (sia_allocate --serve as an object) decide what separate sia.allocate
calls decide for the same requests (timing fields aside), raise what sia.allocate raises, and stay usable after an
error; clear() forgets the previous round.
"""

import json

import pytest

import sia
from sia_test_support import SOURCE_DIR, in_threads

TIMING_FIELDS = ("solve_ms", "total_ms")
EXAMPLES = sorted(p for p in (SOURCE_DIR / "examples" / "requests").glob("*.json") if "schema" not in p.name)


def without_timing(decision):
    return {k: v for k, v in decision.items() if k not in TIMING_FIELDS}


def chain(text, rounds, step):
    """The requests of `rounds` rounds from `text`: each the previous advanced by sia.allocate's decision (its
    warm_start carried by sia.next_request) and then changed by step(k, request dict)."""
    requests = [json.loads(text)]
    for k in range(1, rounds):
        previous = requests[-1]
        request = sia.next_request(previous, sia.allocate(previous), 360.0)
        step(k, request)
        requests.append(request)
    return requests


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_chained_rounds_decide_as_separate_calls(path):
    def step(k, request):
        if k == 2 and len(request["jobs"]) > 1:
            del request["jobs"][-1]  # a job leaves: the session must not hand its rows to another

    requests = chain(path.read_text(), 4, step)
    assert "warm_start" in requests[1]
    session = sia.JsonSession()
    for k, request in enumerate(requests):
        expected = without_timing(sia.allocate(request))
        # Dicts and JSON text alike, as sia.allocate takes them.
        got = session.allocate(request if k % 2 == 0 else json.dumps(request))
        assert without_timing(got) == expected, f"round {k}"
        assert list(got) == list(sia.allocate(request)), f"round {k}: the same fields in the same order"


def test_rounds_chained_through_the_sessions_own_decisions():
    """The usual loop: each decision of the session advanced into the next request (model and table jobs)."""
    text = (SOURCE_DIR / "examples" / "requests" / "cluster64.json").read_text()
    session = sia.JsonSession()
    request = json.loads(text)
    for k in range(4):
        decision = session.allocate(request)
        assert without_timing(decision) == without_timing(sia.allocate(request)), f"round {k}"
        request = sia.next_request(request, decision, 360.0)


def test_allocate_json_is_sia_allocate_json():
    text = (SOURCE_DIR / "examples" / "requests" / "table1.json").read_text()
    session = sia.JsonSession()
    for pretty in (False, True):
        got = session.allocate_json(text, pretty=pretty)
        expected = sia.allocate_json(text, pretty=pretty)
        assert without_timing(json.loads(got)) == without_timing(json.loads(expected))
        assert got.count("\n") == expected.count("\n")


def test_a_bad_request_raises_and_the_session_goes_on():
    requests = chain((SOURCE_DIR / "examples" / "requests" / "cluster64.json").read_text(), 3, lambda k, r: None)
    session = sia.JsonSession()
    assert without_timing(session.allocate(requests[0])) == without_timing(sia.allocate(requests[0]))
    # The same exceptions, with the same messages, as sia.allocate.
    bad = json.loads(json.dumps(requests[1]))
    bad["jobs"][0]["min_gpus"] = 0
    bad["options"] = {"strict": True}
    for request, kwargs in (("{\"cluster\": ", {}), (bad, {"source": "bad.json"}), (requests[1], {"backend": "nope"}),
                            (requests[1], {"time_limit_ms": -1})):
        with pytest.raises(ValueError) as expected:
            sia.allocate(request, **kwargs)
        with pytest.raises(ValueError) as got:
            session.allocate(request, **kwargs)
        assert str(got.value) == str(expected.value)
    with pytest.raises(TypeError):
        session.allocate(requests[1], "native")  # options are keyword-only
    # The next rounds decide as separate calls do.
    for k in (1, 2):
        assert without_timing(session.allocate(requests[k])) == without_timing(sia.allocate(requests[k])), k


def test_a_log_that_raises_leaves_the_session_usable():
    requests = chain((SOURCE_DIR / "examples" / "requests" / "cluster64.json").read_text(), 2, lambda k, r: None)
    session = sia.JsonSession()
    lines = []
    session.allocate(requests[0], log=lines.append)
    assert lines and all(isinstance(line, str) for line in lines)

    def failing(_):
        raise KeyError("from the log")

    with pytest.raises(KeyError, match="from the log"):
        session.allocate(requests[1], log=failing)
    assert without_timing(session.allocate(requests[1])) == without_timing(sia.allocate(requests[1]))


def test_clear():
    requests = chain((SOURCE_DIR / "examples" / "requests" / "cluster64.json").read_text(), 3, lambda k, r: None)
    session = sia.JsonSession()
    session.allocate(requests[0])
    session.clear()
    # A warm start with no cache behind it (as for a new session): still the separate call's decision.
    assert without_timing(session.allocate(requests[1])) == without_timing(sia.allocate(requests[1]))
    session.clear()
    session.clear()
    assert without_timing(session.allocate(requests[2])) == without_timing(sia.allocate(requests[2]))


def test_one_session_in_several_threads():
    """Calls from several threads wait for each other (the round runs without the GIL): each gets its decision."""
    text = (SOURCE_DIR / "examples" / "requests" / "cluster64.json").read_text()
    expected = without_timing(sia.allocate(text))
    session = sia.JsonSession()
    assert in_threads(lambda _: without_timing(session.allocate(text))) == [expected] * 4
    assert in_threads(lambda i: session.clear() if i % 2 else without_timing(session.allocate(text)), 4)[0::2] == [
        expected] * 2


def test_sessions_are_independent():
    requests = chain((SOURCE_DIR / "examples" / "requests" / "tenants.json").read_text(), 2, lambda k, r: None)
    a, b = sia.JsonSession(), sia.JsonSession()
    a.allocate(requests[0])
    # b never saw round 0: its warm start has no cache, a's has; both decide as the separate call.
    expected = without_timing(sia.allocate(requests[1]))
    assert without_timing(b.allocate(requests[1])) == expected
    assert without_timing(a.allocate(requests[1])) == expected


def test_retain_freed_memory():
    """sia.retain_freed_memory: glibc's thresholds set and reported; a bad size raises ValueError."""
    policy = sia.retain_freed_memory(64 << 20)
    assert set(policy) == {"applied", "keep_bytes", "mmap_threshold", "allocator", "note"}
    if policy["allocator"] == "jemalloc":  # (a preloaded jemalloc: its decay times, no thresholds)
        assert policy["applied"] and policy["keep_bytes"] == 0 and policy["mmap_threshold"] == 0
    elif policy["applied"]:
        assert policy["keep_bytes"] == 64 << 20 and policy["mmap_threshold"] == 32 << 20 and policy["note"] == ""
    else:
        assert policy["note"]
    with pytest.raises(ValueError, match="keep_bytes 0"):
        sia.retain_freed_memory(0)
