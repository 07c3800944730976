"""Who a client of ``craits serve`` is: the network its address belongs to, so that one
party holding many addresses of one network — an IPv6 subscriber has 2**64 of them — counts
as one client for every per-client limit (:mod:`craits.web.limits`,
:mod:`craits.web.connections`, :mod:`craits.web.sessions`, :mod:`craits.web.readers`)."""

from __future__ import annotations

import ipaddress

V4_PREFIX = 24
"""IPv4 addresses counted as one client: those of one /24 network."""
V6_PREFIX = 64
"""IPv6 addresses counted as one client: those of one /64 network (what one subscriber
is usually given: 2**64 addresses)."""


def client_group(address: str, v4_prefix: int = V4_PREFIX, v6_prefix: int = V6_PREFIX) -> str:
    """The client an address belongs to: its /``v4_prefix`` (IPv4) or /``v6_prefix`` (IPv6)
    network, written ``10.1.2.0/24``; what is not an IP address, as it is. Every per-client
    limit counts by it (issue 43: 26 loopback addresses filled the 500-game cap in 3.8 s);
    ``craits serve --client-network V4,V6`` sets the prefixes (32,128: every address alone)."""
    try:
        ip = ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return address
    prefix = v4_prefix if ip.version == 4 else v6_prefix
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip, prefix = ip.ipv4_mapped, v4_prefix
    return str(ipaddress.ip_network(f"{ip}/{prefix}", strict=False))


def check_prefixes(v4_prefix: int, v6_prefix: int) -> None:
    """``ValueError`` (one line) unless 0 <= v4_prefix <= 32 and 0 <= v6_prefix <= 128."""
    if not (0 <= v4_prefix <= 32 and 0 <= v6_prefix <= 128):
        raise ValueError(
            f"client network prefixes: got /{v4_prefix} and /{v6_prefix}, allowed 0 to 32 "
            "(IPv4) and 0 to 128 (IPv6)"
        )
