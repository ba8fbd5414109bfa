"""Room codes and player tokens: short enough to read aloud, too many to guess.

A room code is 10 symbols from a 31-letter alphabet without look-alikes
(about 2^49.5 codes); joining is also rate limited per address, so guessing
one is out of reach. A player token is 192 random bits; the store keeps only
its SHA-256, so a copy of the database does not let anyone act as a player.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_LENGTH = 10


def new_room_code() -> str:
    raw = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
    return f"{raw[:5]}-{raw[5:]}"


def normalize_code(text: str) -> str:
    """What a person typed, as the canonical code: case, spaces and dashes do not matter."""
    raw = "".join(ch for ch in text.upper() if ch.isalnum())[: CODE_LENGTH * 2]
    return f"{raw[:5]}-{raw[5:]}" if len(raw) == CODE_LENGTH else raw


def new_token() -> str:
    return secrets.token_urlsafe(24)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def token_matches(token: str, digest: str) -> bool:
    return hmac.compare_digest(hash_token(token), digest)
