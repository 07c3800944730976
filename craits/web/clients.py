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


def client_group(address: str) -> str:
    """The client an address belongs to: its /24 (IPv4) or /64 (IPv6) network, written
    ``10.1.2.0/24``; what is not an IP address, as it is. Every per-client limit counts
    by it (issue 43: 26 loopback addresses filled the 500-game cap in 3.8 s)."""
    try:
        ip = ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return address
    prefix = V4_PREFIX if ip.version == 4 else V6_PREFIX
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip, prefix = ip.ipv4_mapped, V4_PREFIX
    return str(ipaddress.ip_network(f"{ip}/{prefix}", strict=False))
