"""`tec/v1` fuzzed from its own document (`GET /wp-json/tec/v1/docs`) with schemathesis:
requests fitting the document and breaking it, anonymous or as each role, with the
acknowledgement header. No answer may be a server error other than the plugin's
documented create failure; every answer is JSON; 2xx bodies match the documented
schemas; errors carry either WordPress's shape or the plugin's `{"error": ...}`."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

schemathesis = pytest.importorskip("schemathesis")

from conftest import NOW, make_repo
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.core.failures import FailureGroup
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
)

from calendar_app.http.app import create_app
from calendar_app.http.tec_api import ACKNOWLEDGEMENT

PER_OPERATION = {GenerationMode.POSITIVE: 8, GenerationMode.NEGATIVE: 4}
ROLES = (None, "administrator", "editor", "author", "contributor", "subscriber")


@pytest.mark.slow  # every operation fuzzed as every role
def test_tec_v1_fuzzed_from_its_document(tmp_path: Path, users: dict[str, str]) -> None:
    content = make_repo(tmp_path)
    app = create_app({"CONTENT_DIR": str(content), "USERS_FILE": str(tmp_path / "users.yaml"),
                      "CACHE_DIR": str(tmp_path / "cache"), "NOW": NOW, "TESTING": True,
                      "RATE_LIMIT": 0, "LOGIN_MAX_FAILURES": 10**9})
    doc = app.test_client().get("/wp-json/tec/v1/docs").get_json()
    doc["servers"] = [{"url": "/wp-json/tec/v1"}]
    schema = schemathesis.openapi.from_dict(doc)
    schema.app = app
    sent = 0
    failures: list[str] = []
    for result in schema.get_all_operations():
        operation = result.ok()
        for mode, count in PER_OPERATION.items():

            @settings(max_examples=count, deadline=None, database=None, derandomize=True,
                      suppress_health_check=list(HealthCheck),
                      phases=[Phase.explicit, Phase.generate])
            @given(case=operation.as_strategy(generation_mode=mode))
            def run(case) -> None:
                nonlocal sent
                role = ROLES[sent % len(ROLES)]
                headers = {"X-TEC-EEA": ACKNOWLEDGEMENT}
                if role is not None:
                    token = base64.b64encode(f"{role}:{users[role]}".encode()).decode()
                    headers["Authorization"] = f"Basic {token}"
                response = case.call(headers=headers, app=app)
                sent += 1
                problem = _problem(case, response, headers)
                if problem:
                    failures.append(f"{case.method} {case.formatted_path} as {role} "
                                    f"query={case.query} body={str(case.body)[:200]} -> "
                                    f"{response.status_code} {problem}")

            try:
                run()
            except Unsatisfiable:
                assert mode == GenerationMode.NEGATIVE
    app.extensions["calendar"].close()
    assert sent >= 100
    assert not failures, f"{len(failures)} bad answers:\n" + "\n".join(failures[:8])


def _problem(case, response, headers: dict) -> str:
    try:
        body = json.loads(response.content or b"null")
    except ValueError:
        return f"not JSON: {response.content[:200]!r}"
    status = response.status_code
    if status >= 500:
        return f"server error {response.content[:300]!r}"
    if status < 300:
        try:
            case.validate_response(response, checks=[content_type_conformance,
                                                     response_schema_conformance],
                                   headers=headers)
        except FailureGroup as exc:
            return str(exc)[:500]
        return ""
    if isinstance(body, dict) and set(body) == {"error"}:
        return ""
    if isinstance(body, dict) and set(body) == {"code", "message"}:  # page past the last
        return "" if body["code"] == "tec_rest_organizers_page_not_found" else str(body)
    if not isinstance(body, dict) or body.get("data", {}).get("status") != status:
        return f"error body without data.status: {response.content[:300]!r}"
    return ""
