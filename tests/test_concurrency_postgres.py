"""Idempotency, contact dedupe and ticket numbers under parallel requests.

Real concurrency needs a real server: these run on PostgreSQL (CI always
provides it) and are skipped only when DATABASE_URL does not point at one.
"""

import threading
import time

import pytest
from django.db import connection, connections, transaction

from helpdesk.models import AuditRecord
from integrations.models import ApiCredential
from integrations.services import credential_revoke
from tests.assertions import bearer_client
from tests.factories import credential_of, make_agent, make_key, make_organization, make_ticket, status_of
from tickets.models import Contact, Reply, Ticket
from tickets.services import reply_create_by_agent, ticket_update

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


def _while_a_status_change_holds_the_lock(organization, ticket, write) -> object:
    """Run `write` in a thread while another transaction changes the ticket's status and holds its row
    lock; let that transaction commit only once `write` waits for the lock. Returns what `write` returned."""
    locked, release, result = threading.Event(), threading.Event(), {}

    def change_status() -> None:
        try:
            with transaction.atomic():
                ticket_update(ticket=ticket, status=status_of(organization, "em_andamento"))
                locked.set()
                release.wait(timeout=30)
        finally:
            connections.close_all()

    def waiting_write() -> None:
        try:
            result["value"] = write()
        except Exception as error:  # the test shows it
            result["value"] = error
        finally:
            connections.close_all()

    holder = threading.Thread(target=change_status)
    holder.start()
    assert locked.wait(timeout=30)
    writer = threading.Thread(target=waiting_write)
    writer.start()
    deadline = time.monotonic() + 30
    while not _someone_waits_for_a_row_lock() and time.monotonic() < deadline:
        time.sleep(0.02)
    release.set()
    holder.join(timeout=30)
    writer.join(timeout=30)
    return result["value"]


def _someone_waits_for_a_row_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0] > 0


def test_a_customer_reply_that_waited_for_a_status_change_still_finds_its_ticket(org_and_key):
    """Under READ COMMITTED the locked, joined read re-checks a changed row against the status read before
    the wait: without a second look the ticket would be a 404 (tickets.services._locked)."""
    organization, key = org_and_key
    ticket = make_ticket(organization)

    response = _while_a_status_change_holds_the_lock(
        organization,
        ticket,
        lambda: bearer_client(key).post(f"/api/v1/tickets/{ticket.pk}/respostas", {"mensagem": "Oi"}, format="json"),
    )

    assert response.status_code == 201, response.content
    assert Reply.objects.filter(ticket=ticket).count() == 1


def test_an_agent_reply_that_waited_for_a_status_change_still_finds_its_ticket(org_and_key):
    organization, _ = org_and_key
    ticket = make_ticket(organization)
    agent = make_agent(organization)

    reply = _while_a_status_change_holds_the_lock(
        organization, ticket, lambda: reply_create_by_agent(ticket=ticket, agent=agent, body="Olá")
    )

    assert isinstance(reply, Reply), reply
    assert Ticket.objects.get(pk=ticket.pk).status.category == "em_andamento"


def test_parallel_revocations_of_one_key_revoke_it_once_and_record_it_once(org_and_key):
    organization, key = org_and_key
    credential = credential_of(key)
    barrier = threading.Barrier(THREADS)

    def revoke() -> None:
        try:
            stale = ApiCredential.objects.get(pk=credential.pk)  # each request reads the key as active
            barrier.wait(timeout=30)
            credential_revoke(credential=stale)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=revoke) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert AuditRecord.objects.filter(action="credencial.revogada", resource_id=str(credential.pk)).count() == 1
    assert not ApiCredential.objects.get(pk=credential.pk).is_active
