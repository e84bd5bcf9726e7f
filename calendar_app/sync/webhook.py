"""Reading a forge's push webhook: whose signature is valid, which ref was pushed."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable


def verify_webhook(header: Callable[[str], str | None], body: bytes, secret: str) -> str:
    """The forge whose signature on `body` is valid ("github", "gitea", "gitlab"), or
    "" when none is: GitHub's X-Hub-Signature-256 ("sha256=" + HMAC-SHA256 hex), Gitea's
    X-Gitea-Signature (HMAC-SHA256 hex), GitLab's X-Gitlab-Token (the secret itself)."""
    if not secret:
        return ""
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    github = header("X-Hub-Signature-256") or ""
    if github and hmac.compare_digest(github.strip().lower(), f"sha256={digest}"):
        return "github"
    gitea = header("X-Gitea-Signature") or ""
    if gitea and hmac.compare_digest(gitea.strip().lower(), digest):
        return "gitea"
    token = header("X-Gitlab-Token") or ""
    if token and hmac.compare_digest(token.encode(), secret.encode()):
        return "gitlab"
    return ""


def pushed_ref(body: bytes) -> str:
    """The ref a forge's push event names (`ref`, the same key on GitHub, GitLab and
    Gitea); "" when the body names none (a ping, another event): fetch to be sure.
    Raises ValueError when the body is not JSON this can read (nested too deep too)."""
    try:
        payload = json.loads(body)
    except RecursionError:
        raise ValueError("the JSON is nested too deeply") from None
    ref = payload.get("ref") if isinstance(payload, dict) else None
    return ref if isinstance(ref, str) and ref.startswith("refs/") else ""
