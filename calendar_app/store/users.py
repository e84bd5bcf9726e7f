"""Users, roles and application passwords, kept in a YAML file outside the content tree.

Each user may also have one sign-in password for the editing pages (`sign_in`), chosen
by the person (`users passwd`); application passwords stay for the HTTP interface and
never open the pages, nor the reverse.

Passwords are stored only as salted scrypt hashes. Checking one costs ~50 ms on
purpose, so a successful check is remembered in memory (keyed by an HMAC of the
credentials with a per-process key, never the password itself).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import hmac
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from . import atomic

ROLES = ("administrator", "editor", "author", "contributor", "subscriber")

# What each role may do, after WordPress's default roles for the plugin's post types.
_CAPS = {
    "administrator": {"edit", "edit_others", "edit_published", "publish", "delete",
                      "delete_others", "delete_published", "read_private", "manage_terms"},
    "editor": {"edit", "edit_others", "edit_published", "publish", "delete",
               "delete_others", "delete_published", "read_private", "manage_terms"},
    "author": {"edit", "edit_published", "publish", "delete", "delete_published"},
    "contributor": {"edit", "delete"},
    "subscriber": set(),
}

_SCRYPT = {"n": 2**14, "r": 8, "p": 1}
# libyaml's loader where PyYAML has it: the file is read at every start and after every
# change of it, ~10x faster than the pure-Python loader (same values for this file).
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DEFAULT_HASH_N = _SCRYPT["n"]
MIN_SIGN_IN_LENGTH = 10
MAX_SIGN_IN_LENGTH = 1024  # scrypt's cost grows with the input: bound what a form can send


@dataclass(frozen=True)
class User:
    id: int
    name: str
    role: str
    email: str = ""

    def can(self, capability: str) -> bool:
        return capability in _CAPS.get(self.role, set())

    @property
    def git_author(self) -> str:
        return f"{self.name} <{self.email or self.name + '@users.calendar.invalid'}>"


def _hash(password: str, salt: bytes, n: int = DEFAULT_HASH_N) -> str:
    """"scrypt$salt$digest" at the default cost; another cost is named in the hash
    ("scrypt:N$salt$digest"), so every stored hash is checked at the cost it was made."""
    digest = hashlib.scrypt(password.encode(), salt=salt, dklen=32, **{**_SCRYPT, "n": n})
    method = "scrypt" if n == DEFAULT_HASH_N else f"scrypt:{n}"
    return f"{method}${base64.b64encode(salt).decode()}${base64.b64encode(digest).decode()}"


def _check(password: str, stored: str) -> bool:
    try:
        method, salt, _digest = stored.split("$")
        name, _, n = method.partition(":")
        if name != "scrypt":
            return False
        expected = _hash(password, base64.b64decode(salt), int(n) if n else DEFAULT_HASH_N)
    except ValueError:  # also scrypt's own refusal of a cost it cannot take
        return False
    return hmac.compare_digest(expected, stored)


def normalize_password(password: str) -> str:
    """Application passwords are shown in groups of four; spaces do not count."""
    return password.replace(" ", "")


class UserStore:
    def __init__(self, path: Path, hash_n: int = DEFAULT_HASH_N) -> None:
        """`hash_n`: scrypt's cost for the passwords set here and for the check of a
        name nobody has. Only tests lower it (hundreds of users and sign-ins); hashes
        already stored are checked at the cost each names."""
        self.path = Path(path)
        self.hash_n = hash_n
        self._lock = threading.Lock()
        self._verified: dict[bytes, int] = {}
        self._key = secrets.token_bytes(32)
        self._users: list[dict] = []
        # The highest id ever handed out. A removed user's id is never given again (as
        # WordPress never does): records keep their `author` id, and a new user must not
        # inherit a removed user's records and rights over them.
        self._last_id = 0
        self._mtime: int | None = None

    def _load(self) -> list[dict]:
        try:
            mtime = self.path.stat().st_mtime_ns
        except FileNotFoundError:
            self._users, self._last_id, self._mtime = [], 0, None
            return self._users
        if mtime != self._mtime:
            data = yaml.load(self.path.read_text(), Loader=_Loader) or {}
            self._users = list(data.get("users") or [])
            # Files written before the mark was kept: the highest id in them.
            self._last_id = max([int(data.get("last_user_id") or 0),
                                 *(u["id"] for u in self._users)])
            self._mtime = mtime
            self._verified.clear()
        return self._users

    @contextlib.contextmanager
    def _changing(self) -> Iterator[list[dict]]:
        """The users as stored, for a change that `_save`s: other processes (a
        `users add` beside the server) wait on the file lock, and the file is read
        again under it, so no change of theirs is lost."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, open(self.path.with_name(self.path.name + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                self._mtime = None
                yield [dict(u) for u in self._load()]
            finally:
                self._mtime = None
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _save(self, users: list[dict]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        last_id = max([self._last_id, *(u["id"] for u in users)])
        with atomic.replacing(self.path, mode=0o600) as fh:
            yaml.safe_dump({"last_user_id": last_id, "users": users}, fh, sort_keys=False)

    def users(self) -> list[User]:
        with self._lock:
            return [User(u["id"], u["name"], u.get("role", "administrator"), u.get("email", ""))
                    for u in self._load()]

    def get(self, user_id: int) -> User | None:
        return next((u for u in self.users() if u.id == user_id), None)

    def add(self, name: str, role: str = "administrator", email: str = "") -> str:
        """Create a user (or give an existing one a new password); returns the password."""
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}; choose one of {', '.join(ROLES)}")
        if not name or any(c in name for c in ":\n\r") or name != name.strip():
            raise ValueError("a user name must be non-empty and contain no ':' or newline")
        raw = secrets.token_urlsafe(18)[:24]
        password = " ".join(raw[i:i + 4] for i in range(0, 24, 4))
        with self._changing() as users:
            entry = next((u for u in users if u["name"] == name), None)
            if entry is None:
                entry = {"id": self._last_id + 1, "name": name}
                users.append(entry)
            entry["role"] = role
            if email:
                entry["email"] = email
            entry["passwords"] = [*entry.get("passwords", []),
                                  _hash(normalize_password(password), secrets.token_bytes(16),
                                        self.hash_n)]
            self._save(users)
        return password

    def set_sign_in_password(self, name: str, password: str) -> None:
        """Give an existing user the password for the editing pages (replacing any)."""
        if not MIN_SIGN_IN_LENGTH <= len(password) <= MAX_SIGN_IN_LENGTH:
            raise ValueError(f"a sign-in password must have {MIN_SIGN_IN_LENGTH} to "
                             f"{MAX_SIGN_IN_LENGTH} characters")
        with self._changing() as users:
            entry = next((u for u in users if u["name"] == name), None)
            if entry is None:
                raise ValueError(f"no user named {name!r}")
            entry["sign_in"] = _hash(password, secrets.token_bytes(16), self.hash_n)
            self._save(users)

    def check_sign_in(self, name: str, password: str) -> User | None:
        """The user whose sign-in password this is, else None (same cost either way)."""
        with self._lock:
            entry = next((u for u in self._load() if u["name"] == name), None)
        stored = (entry or {}).get("sign_in")
        if entry is None or not stored or len(password) > MAX_SIGN_IN_LENGTH:
            _hash(password[:MAX_SIGN_IN_LENGTH], b"0" * 16, self.hash_n)
            return None
        if not _check(password, stored):
            return None
        return User(entry["id"], entry["name"], entry.get("role", "administrator"),
                    entry.get("email", ""))

    def sign_in_stamp(self, user_id: int) -> str | None:
        """A short fingerprint of the user's current sign-in password: a session keeps
        it, so a new password (or removing the user) ends the sessions opened before."""
        with self._lock:
            entry = next((u for u in self._load() if u["id"] == user_id), None)
        stored = (entry or {}).get("sign_in")
        return hashlib.sha256(stored.encode()).hexdigest()[:16] if stored else None

    def remove(self, name: str) -> bool:
        with self._changing() as users:
            kept = [u for u in users if u["name"] != name]
            if len(kept) == len(users):
                return False
            self._save(kept)
            return True

    def authenticate(self, name: str, password: str) -> User | None:
        password = normalize_password(password)
        token = hmac.new(self._key, f"{name}\0{password}".encode(), "sha256").digest()
        with self._lock:
            users = self._load()
            entry = next((u for u in users if u["name"] == name), None)
            if entry is None:
                _hash(password, b"0" * 16, self.hash_n)  # same cost whether or not the user exists
                return None
            if self._verified.get(token) != entry["id"]:
                if not any(_check(password, h) for h in entry.get("passwords", [])):
                    return None
                self._verified[token] = entry["id"]
        return User(entry["id"], entry["name"], entry.get("role", "administrator"),
                    entry.get("email", ""))
