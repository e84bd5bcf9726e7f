"""The plugin's newest MCP server (the-events-calendar/mcp-server 4fcf794, `tec/v1`)
driven end to end through its own tools against our server (issue 22).

The MCP server is not on the npm registry and is not part of this repository: build it
elsewhere (`npm ci && npm run build` in a checkout) and point TEC_MCP_SERVER at its
`dist/index.js`. Without it (or without node) the test skips and says why.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from conftest import BASE
from test_reliability_concurrency import ThreadedServer

SERVER = os.environ.get("TEC_MCP_SERVER", "")
pytestmark = pytest.mark.skipif(
    not SERVER or not Path(SERVER).is_file() or shutil.which("node") is None,
    reason="set TEC_MCP_SERVER to the built dist/index.js of the-events-calendar/mcp-server "
           "(4fcf794) to run the newest MCP client against us; node must be on PATH")


class Mcp:
    """An MCP client over the server's stdio: one JSON-RPC message a line."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(["node", SERVER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env={**os.environ, **env}, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def call(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            try:
                message = json.loads(self.lines.get(timeout=30))
            except queue.Empty:
                err = self.proc.stderr.read() if self.proc.poll() is not None else ""
                raise AssertionError(f"no answer to {method}: {err[-2000:]}") from None
            if message.get("id") == self.next_id:
                assert "error" not in message, message
                return message["result"]

    def tool(self, name: str, **arguments: object) -> tuple[str, object]:
        """(first text, JSON of the second text) of a successful tool call."""
        result = self.call("tools/call", {"name": name, "arguments": arguments})
        texts = [c["text"] for c in result["content"]]
        assert not result.get("isError"), texts
        return texts[0], json.loads(texts[1]) if len(texts) > 1 else None

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


@pytest.fixture
def mcp(app, users: dict[str, str]):
    with ThreadedServer(app) as server:
        client = Mcp({"WP_URL": f"http://127.0.0.1:{server.port}", "WP_USERNAME": "administrator",
                      "WP_APP_PASSWORD": users["administrator"], "LOG_LEVEL": "error"})
        try:
            init = client.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                              "clientInfo": {"name": "calendar-tests",
                                                             "version": "1"}})
            client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            client.init = init  # type: ignore[attr-defined]
            yield client
        finally:
            client.close()


READ, WRITE, DELETE = ("tec-calendar-read-entities", "tec-calendar-create-update-entities",
                       "tec-calendar-delete-entities")


def test_newest_mcp_server_end_to_end(mcp: Mcp, client, admin) -> None:
    instructions = mcp.init.get("instructions", "")  # type: ignore[attr-defined]
    assert "Operational (REST): Yes" in instructions and "Authentication: Valid" in instructions
    assert "Riverside Arts & Community Calendar" in instructions
    assert "America/Los_Angeles" in instructions
    tools = {t["name"] for t in mcp.call("tools/list", {})["tools"]}
    assert {READ, WRITE, DELETE} <= tools
    category = client.post("/wp-json/wp/v2/tribe_events_cat", json={"name": "MCP Cat"},
                           headers=admin).get_json()["id"]
    _t, venue = mcp.tool(WRITE, postType="venue", data={
        "title": "MCP Hall", "address": "1 Main St", "city": "Riverside", "country": "US",
        "website": "https://hall.example"})
    _t, organizer = mcp.tool(WRITE, postType="organizer", data={
        "title": "MCP Crew", "email": "crew@example.org", "phone": "555-0100"})
    _t, event = mcp.tool(WRITE, postType="event", data={
        "title": "MCP Night", "start_date": "2027-04-01 19:00:00",
        "end_date": "2027-04-01 21:00:00", "venues": [venue["id"]],
        "organizers": [organizer["id"]], "tribe_events_cat": [category], "cost": "15"})
    assert event["venues"][0]["id"] == venue["id"] and event["cost"] == "$15"
    # Read back through the client and through the older namespace.
    for kind, record in (("event", event), ("venue", venue), ("organizer", organizer)):
        _t, read = mcp.tool(READ, postType=kind, id=record["id"])
        assert read["id"] == record["id"]
    assert client.get(f"{BASE}/events/{event['id']}").get_json()["venue"]["id"] == venue["id"]
    # Lists and searches, with the client's filters.
    _t, found = mcp.tool(READ, postType="event", query="MCP Night")
    assert [e["id"] for e in found] == [event["id"]]
    _t, listed = mcp.tool(READ, postType="event", per_page=100, order="desc",
                          eventFilters={"venue": venue["id"], "categories": [category],
                                        "featured": False, "start_date": "2027-03-01"})
    assert [e["id"] for e in listed] == [event["id"]]
    _t, venues = mcp.tool(READ, postType="venue", query="MCP Hall")
    assert venue["id"] in [v["id"] for v in venues]
    _t, organizers = mcp.tool(READ, postType="organizer", per_page=5)
    assert isinstance(organizers, list) and organizers
    # Updates.
    _t, updated = mcp.tool(WRITE, postType="event", id=event["id"], data={
        "title": "MCP Night (moved)", "start_date": "2027-04-02 19:00:00",
        "end_date": "2027-04-02 21:00:00"})
    assert updated["start_date"] == "2027-04-02 19:00:00"
    _t, updated = mcp.tool(WRITE, postType="venue", id=venue["id"], data={"city": "Corona"})
    assert updated["city"] == "Corona"
    _t, updated = mcp.tool(WRITE, postType="organizer", id=organizer["id"],
                           data={"phone": "555-0199"})
    assert updated["phone"] == "555-0199"
    # Deletes: to the trash, then for good.
    for kind, record in (("event", event), ("venue", venue), ("organizer", organizer)):
        text, _b = mcp.tool(DELETE, postType=kind, id=record["id"])
        assert text.startswith("Successfully moved to trash")
        text, _b = mcp.tool(DELETE, postType=kind, id=record["id"], force=True)
        assert text.startswith("Successfully permanently deleted")
    assert client.get(f"{BASE}/events/{event['id']}", headers=admin).status_code == 404
    # Tickets answer as on a site without Event Tickets.
    result = mcp.call("tools/call", {"name": READ, "arguments": {"postType": "ticket",
                                                                "id": 5}})
    assert result.get("isError") and "rest_no_route" in result["content"][0]["text"]
