"""Idempotency, contact dedupe and ticket numbers under parallel requests.

Real concurrency needs a real server: these run on PostgreSQL (CI always
provides it) and are skipped only when DATABASE_URL does not point at one.
"""

import threading

import pytest
from django.db import connections

from tests.assertions import bearer_client
from tests.factories import make_key, make_organization
from tickets.models import Contact, Ticket

THREADS = 20


@pytest.fixture
def org_and_key(postgres_only):
    organization = make_organization("Concorrência")
    return organization, make_key(organization)


def _post_in_parallel(key: str, payloads: list[dict]) -> list:
    barrier = threading.Barrier(len(payloads))
    results: list = [None] * len(payloads)

    def worker(index: int) -> None:
        client = bearer_client(key)
        try:
            barrier.wait(timeout=30)
            results[index] = client.post("/api/v1/tickets", payloads[index], format="json")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(payloads))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def _payload(n: int, **overrides) -> dict:
    payload = {
        "assunto": f"Pedido {n}",
        "descricao": "Chegou quebrado",
        "solicitante": {"nome": f"Cliente {n}", "external_id": f"cliente-{n}"},
    }
    payload.update(overrides)
    return payload


def test_parallel_creates_with_one_external_id_make_exactly_one_ticket(org_and_key):
    organization, key = org_and_key

    responses = _post_in_parallel(key, [_payload(n, external_id="pedido-42") for n in range(THREADS)])

    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200] * (THREADS - 1) + [201]
    assert Ticket.objects.filter(organization=organization).count() == 1
    ticket_ids = {r.json()["data"]["id"] for r in responses}
    assert len(ticket_ids) == 1
    messages = sorted(r.json()["message"] for r in responses)
    assert messages == ["Ticket criado."] + ["Ticket já existente para este external_id."] * (THREADS - 1)


def test_parallel_creates_number_tickets_one_to_twenty_without_gaps(org_and_key):
    organization, key = org_and_key

    responses = _post_in_parallel(key, [_payload(n) for n in range(THREADS)])

    assert [r.status_code for r in responses] == [201] * THREADS
    numbers = sorted(r.json()["data"]["numero"] for r in responses)
    assert numbers == list(range(1, THREADS + 1))
    assert sorted(Ticket.objects.filter(organization=organization).values_list("number", flat=True)) == numbers


def test_parallel_creates_for_one_requester_make_one_contact(org_and_key):
    organization, key = org_and_key
    requester = {"nome": "Maria", "email": "maria@example.test", "external_id": "cliente-maria"}

    responses = _post_in_parallel(key, [_payload(n, solicitante=requester) for n in range(THREADS)])

    assert [r.status_code for r in responses] == [201] * THREADS
    assert Contact.objects.filter(organization=organization).count() == 1
    contact = Contact.objects.get(organization=organization)
    assert Ticket.objects.filter(organization=organization, requester=contact).count() == THREADS


def test_parallel_creates_in_two_organizations_number_each_independently(org_and_key):
    organization, key = org_and_key
    second = make_organization("Outra")
    second_key = make_key(second)
    half = THREADS // 2
    results: list = []
    threads = [
        threading.Thread(target=lambda k=k: results.extend(_post_in_parallel(k, [_payload(n) for n in range(half)])))
        for k in (key, second_key)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=90)

    assert [r.status_code for r in results] == [201] * THREADS
    for org in (organization, second):
        numbers = sorted(Ticket.objects.filter(organization=org).values_list("number", flat=True))
        assert numbers == list(range(1, half + 1))
