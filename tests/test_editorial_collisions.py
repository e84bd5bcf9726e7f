"""Two branches that each add records with the same new id and slug: `check --against`
catches it, `fix-ids` repairs it with a minimal diff, `check` passes afterwards."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from conftest import SAMPLE_NEXT_ID, git, make_repo

from calendar_app.editorial import register

N = SAMPLE_NEXT_ID  # both branches take the ids the sample hands out next


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="calendar_app")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def event(record_id: int, title: str, slug: str, tags: list[str]) -> str:
    items = "".join(f"  - {t}\n" for t in tags)
    return (f"id: {record_id}\ntitle: {title}\nslug: {slug}\n"
            "start_date: 2027-06-05 19:00:00\nend_date: 2027-06-05 22:00:00\n"
            f"venue: the-blue-lantern\ntags:\n{items}")


def add(content: Path, files: dict[str, str], message: str) -> None:
    for path, text in files.items():
        target = content / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(content.parent, "add", "-A")
    git(content.parent, "commit", "-q", "-m", message)


def check_json(content: Path, capsys, *extra: str) -> tuple[int, list[dict]]:
    code = main(["check", str(content), "--format", "json", *extra])
    return code, json.loads(capsys.readouterr().out)["findings"]


def two_branches(tmp_path: Path) -> Path:
    content = make_repo(tmp_path)
    repo = content.parent
    git(repo, "checkout", "-q", "-b", "feature-a")
    add(content, {"events/2027/salsa-party.yaml": event(N, "Salsa Party", "salsa-party",
                                                        ["salsa"]),
                  "tags/salsa.yaml": f"id: {N + 1}\nname: Salsa\nslug: salsa\n"}, "a: salsa party")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge a", "feature-a")
    git(repo, "checkout", "-q", "-b", "feature-b", "HEAD~1")
    add(content, {"events/2027/latin-night.yaml": event(N, "Latin Night", "latin-night",
                                                        ["salsa", "free"]),
                  "tags/dance/salsa.yaml": f"id: {N + 1}\nname: Salsa dancing\nslug: salsa\n"},
        "b: latin night")
    return content


def test_collision_after_merge_is_found_and_fixed(tmp_path: Path, capsys) -> None:
    content = two_branches(tmp_path)
    repo = content.parent
    git(repo, "merge", "-q", "-m", "merge main", "main")  # no textual conflict in git

    code, findings = check_json(content, capsys, "--against", "main")
    assert code == 1
    ours = {(f["path"].split("/content/")[1], f["code"], f["line"]) for f in findings
            if "collision" in f["code"]}
    assert ours == {("events/2027/latin-night.yaml", "id-collision", 1),
                    ("tags/dance/salsa.yaml", "id-collision", 1),
                    ("tags/dance/salsa.yaml", "slug-collision", 3)}

    assert main(["fix-ids", str(content), "--against", "main"]) == 0
    out = capsys.readouterr().out
    assert f"events/2027/latin-night.yaml: id {N} -> {N + 2}" in out
    assert "tags: slug 'salsa' -> 'salsa-2'" in out

    code, findings = check_json(content, capsys, "--against", "main")
    assert code == 0, findings
    assert not (content / "tags/dance/salsa.yaml").exists()
    assert (content / "tags/dance/salsa-2.yaml").read_text() == (
        f"id: {N + 3}\nname: Salsa dancing\nslug: salsa-2\n")
    # The base branch's records are untouched; ours changed only where needed.
    assert git(repo, "status", "--porcelain", "--", "content/events/2027/salsa-party.yaml",
               "content/tags/salsa.yaml") == ""
    diff = git(repo, "diff", "-U0", "--", "content/events/2027/latin-night.yaml")
    changed = [line for line in diff.splitlines() if line[:1] in "+-"
               and not line.startswith(("+++", "---"))]
    assert changed == [f"-id: {N}", f"+id: {N + 2}", "-  - salsa", "+  - salsa-2"]


def test_collision_before_merge(tmp_path: Path, capsys) -> None:
    content = two_branches(tmp_path)
    repo = content.parent
    code, findings = check_json(content, capsys, "--against", "main")
    assert code == 1  # the branch alone is valid; only the base knows the clash
    assert {f["code"] for f in findings if f["severity"] == "error"} == {
        "id-collision", "slug-collision"}
    assert main(["fix-ids", str(content), "--against", "main"]) == 0
    capsys.readouterr()
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fix ids")
    git(repo, "merge", "-q", "-m", "merge main", "main")
    code, findings = check_json(content, capsys, "--against", "main")
    assert code == 0, findings


def test_renamed_record_is_not_a_collision(tmp_path: Path, capsys) -> None:
    content = make_repo(tmp_path)
    repo = content.parent
    git(repo, "checkout", "-q", "-b", "rename")
    git(repo, "mv", "content/tags/free.yaml", "content/tags/no-charge.yaml")
    path = content / "tags" / "no-charge.yaml"
    path.write_text(path.read_text().replace("slug: free", "slug: no-charge"))
    _, findings = check_json(content, capsys, "--against", "main")
    assert not [f for f in findings if "collision" in f["code"]]


def test_fix_ids_without_collision(tmp_path: Path, capsys) -> None:
    content = make_repo(tmp_path)
    assert main(["fix-ids", str(content), "--against", "main"]) == 0
    assert "nothing to fix" in capsys.readouterr().out
