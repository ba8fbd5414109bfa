"""A token bucket: how many messages a connection (or an address) may send, and how fast."""

from __future__ import annotations

import time


class TokenBucket:
    """``rate`` tokens per second, at most ``burst`` saved up; each message takes one."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.stamp = time.monotonic()

    def take(self, cost: float = 1.0) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= cost:
            self.tokens -= cost
            return True
        return False


class AddressLimiter:
    """One bucket per client address, forgetting idle addresses so memory stays bounded."""

    def __init__(self, rate: float, burst: float, max_addresses: int = 10_000) -> None:
        self.rate, self.burst, self.max_addresses = rate, burst, max_addresses
        self.buckets: dict[str, TokenBucket] = {}

    def allow(self, address: str) -> bool:
        bucket = self.buckets.get(address)
        if bucket is None:
            if len(self.buckets) >= self.max_addresses:
                self.buckets.clear()
            bucket = self.buckets[address] = TokenBucket(self.rate, self.burst)
        return bucket.take()
