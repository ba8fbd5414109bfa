"""A token bucket: how many messages a connection (or a client) may send, and how fast; and who a client is.

A client is counted under its network, not its exact address: one IPv6 host is
routinely given a whole /64 (and picks a new address in it at will), so a limit
per IPv6 address is no limit at all. IPv4 is counted per address, and an IPv4
address mapped into IPv6 (a dual-stack socket's view of it) as that IPv4
address. People behind one NAT therefore share a budget.
"""

from __future__ import annotations

import ipaddress
import time
from collections import OrderedDict

#: The IPv6 prefix length counted as one client (the smallest network a host is normally given).
V6_PREFIX = 64


def address_key(address: str) -> str:
    """The client ``address`` is counted under: an IPv6 address's /64, an IPv4 address itself (also when
    mapped into IPv6); anything that is not an IP address (a test client's name) as it is."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip.packed, V6_PREFIX), strict=False))
    return str(ip)


class TokenBucket:
    """``rate`` tokens per second, at most ``burst`` saved up; each message takes one."""

    __slots__ = ("burst", "rate", "stamp", "tokens")

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
    """One bucket per client (:func:`address_key`), at most ``max_addresses`` of them.

    When the table is full the client seen least recently is forgotten, and only it: its bucket has had
    the longest to refill, so forgetting it gives away the least. Clearing the whole table instead would
    let anyone with enough addresses hand every guesser a fresh budget.
    """

    def __init__(self, rate: float, burst: float, max_addresses: int = 10_000) -> None:
        self.rate, self.burst, self.max_addresses = rate, burst, max_addresses
        self.buckets: OrderedDict[str, TokenBucket] = OrderedDict()

    def allow(self, address: str) -> bool:
        key = address_key(address)
        bucket = self.buckets.get(key)
        if bucket is None:
            while len(self.buckets) >= self.max_addresses:
                self.buckets.popitem(last=False)
            bucket = self.buckets[key] = TokenBucket(self.rate, self.burst)
        else:
            self.buckets.move_to_end(key)
        return bucket.take()
