"""What a partner key may do: its scopes, its lifetime and the networks it may call from.

A key without scopes may do everything a partner can (as every key could before scopes existed),
including what later versions add; one with scopes may do only what they name. Each partner action
declares the one scope it needs (`PartnerViewSet.scopes`); an action that declares none is refused
to every scoped key, so a route added tomorrow fails closed.
"""

import ipaddress

from django.db import models


class Scope(models.TextChoices):
    TICKETS_READ = "tickets:ler", "Ler tickets, alterações, anexos e atendentes"
    TICKETS_WRITE = "tickets:escrever", "Criar, resolver e reabrir tickets"
    REPLIES_WRITE = "respostas:escrever", "Responder e editar as próprias respostas"
    ATTACHMENTS_WRITE = "anexos:escrever", "Enviar anexos"
    CONTACTS_READ = "contatos:ler", "Ler contatos"
    CONTACTS_WRITE = "contatos:escrever", "Alterar contatos"
    EVENTS_READ = "eventos:ler", "Ler o feed de eventos"


# At most this many networks per key: an allow-list, not a firewall.
MAX_NETWORKS = 20


def network_of(value: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    """A CIDR (or a single address) as the network it names; host bits are dropped (10.1.2.3/8 is 10.0.0.0/8)."""
    return ipaddress.ip_network(value.strip(), strict=False)


def address_in_networks(address: str, networks: list[str]) -> bool:
    """Whether the client's address (or the /64 it is counted by) lies inside one of the networks."""
    try:
        client = ipaddress.ip_network(address, strict=False)
    except ValueError:
        return False
    if isinstance(client, ipaddress.IPv6Network) and client.network_address.ipv4_mapped:
        client = ipaddress.ip_network(client.network_address.ipv4_mapped)
    for value in networks:
        network = network_of(value)
        if client.version == network.version and client.subnet_of(network):
            return True
    return False
