"""The admin's "Mesclar em..." (issue 24): pick the target among the selected tickets, then one merge, all or
nothing, with the result or the error in a message."""

from unittest import mock

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from helpdesk.actors import SYSTEM
from tests.assertions import organization_snapshot, run_admin_action
from tests.factories import make_agent, make_customer_reply, make_ticket
from tickets import merging
from tickets.merging import tickets_merge
from tickets.models import StatusCategory, Ticket

CHANGELIST = reverse("admin:tickets_ticket_changelist")


def _confirm(client, tickets, target):
    """The intermediate page's form, sent as the agent sends it."""
    return client.post(
        CHANGELIST,
        {
            "action": "merge_into",
            "_selected_action": [str(ticket.pk) for ticket in tickets],
            "post": "yes",
            "target": str(target.pk) if target is not None else "",
        },
        follow=True,
    )


def _messages(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def test_the_action_asks_for_the_target_among_the_selected_tickets_and_changes_nothing_yet(staff, organization):
    a = make_ticket(organization, subject="Impressora")
    b = make_ticket(organization, subject="Impressora de novo")
    other = make_ticket(organization, subject="Outro assunto")
    before = organization_snapshot(organization)

    page = run_admin_action(staff, CHANGELIST, "merge_into", [a, b])

    assert page.status_code == 200
    assert [ticket.number for ticket in page.context["tickets"]] == [a.number, b.number]
    html = page.content.decode()
    assert f'value="{a.pk}"' in html and f'value="{b.pk}"' in html
    assert f'name="target" value="{other.pk}"' not in html
    assert organization_snapshot(organization) == before


def test_picking_the_target_merges_and_opens_its_thread(staff, organization):
    target = make_ticket(organization, description="Primeira")
    source = make_ticket(organization, description="Segunda")
    make_customer_reply(source, body="Alô?")

    page = _confirm(staff, [target, source], target)

    assert _messages(page) == [f"Tickets #{source.number} mesclados em #{target.number}."]
    assert page.redirect_chain[-1][0] == reverse("admin:tickets_ticket_change", args=[target.pk])
    html = page.content.decode()
    assert f'<span class="mesclado-de">do #{source.number}</span>' in html
    assert "Alô?" in html
    source = Ticket.objects.select_related("status").get(pk=source.pk)
    assert (source.merged_into_id, source.status.category) == (target.pk, StatusCategory.CLOSED)


def test_the_sources_page_links_to_its_target(staff, organization):
    target, source = make_ticket(organization, subject="Fica"), make_ticket(organization)
    tickets_merge(target=target, sources=[source], actor=SYSTEM)

    html = staff.get(reverse("admin:tickets_ticket_change", args=[source.pk])).content.decode()
    target_html = staff.get(reverse("admin:tickets_ticket_change", args=[target.pk])).content.decode()

    link = reverse("admin:tickets_ticket_change", args=[target.pk])
    assert f'<a href="{link}" class="mesclado-em">#{target.number} Fica</a>' in html
    assert f"Mesclado em #{target.number}." in html  # its system note
    assert f'<a href="{reverse("admin:tickets_ticket_change", args=[source.pk])}">#{source.number}</a>' in target_html


@pytest.mark.parametrize("count", [1, 21])
def test_fewer_than_two_or_more_than_twenty_tickets_are_refused(staff, organization, count):
    tickets = [make_ticket(organization) for _ in range(count)]
    before = organization_snapshot(organization)

    page = run_admin_action(staff, CHANGELIST, "merge_into", tickets)

    assert _messages(page) == ["Selecione de 2 a 20 tickets para mesclar."]
    assert organization_snapshot(organization) == before


def test_a_target_outside_the_selection_is_refused(staff, organization):
    a, b, outside = (make_ticket(organization) for _ in range(3))
    before = organization_snapshot(organization)

    page = _confirm(staff, [a, b], outside)

    assert "Escolha o destino entre os tickets selecionados." in page.content.decode()
    assert organization_snapshot(organization) == before


def test_an_error_is_shown_and_nothing_is_half_done(staff, organization):
    a, b, c = (make_ticket(organization) for _ in range(3))
    before = organization_snapshot(organization)
    real = merging._source_merge

    def failing(source, *args):
        if source.pk == c.pk:
            raise merging.StatusUnavailable(category="fechado")
        return real(source, *args)

    with mock.patch.object(merging, "_source_merge", side_effect=failing):
        page = _confirm(staff, [a, b, c], a)

    assert _messages(page) == [
        "Nada foi mesclado: Status indisponível. A organização não tem um status da categoria fechado."
    ]
    assert organization_snapshot(organization) == before


def test_a_ticket_merged_meanwhile_is_refused_with_its_reason(staff, organization):
    a, b, c = (make_ticket(organization) for _ in range(3))
    tickets_merge(target=c, sources=[b], actor=SYSTEM)
    before = organization_snapshot(organization)

    page = _confirm(staff, [a, b], a)

    assert _messages(page) == [
        f"Nada foi mesclado: Ticket mesclado. O ticket #{b.number} já foi mesclado no ticket #{c.number}."
    ]
    assert organization_snapshot(organization) == before


def test_another_organizations_tickets_are_out_of_reach(staff, organization, other_organization):
    mine = make_ticket(organization)
    theirs = make_ticket(other_organization)
    before = (organization_snapshot(organization), organization_snapshot(other_organization))

    refused = run_admin_action(staff, CHANGELIST, "merge_into", [mine, theirs])  # only `mine` is in reach
    forced = _confirm(staff, [mine, theirs], mine)

    assert _messages(refused) == ["Selecione de 2 a 20 tickets para mesclar."]
    assert _messages(forced) == ["Selecione de 2 a 20 tickets para mesclar."]
    assert (organization_snapshot(organization), organization_snapshot(other_organization)) == before


def test_a_view_only_user_cannot_merge(organization):
    user = make_agent(organization, name="Só Olha").user
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    user.user_permissions.add(Permission.objects.get(codename="view_ticket"))
    viewer = Client()
    viewer.force_login(user)
    a, b = make_ticket(organization), make_ticket(organization)

    page = viewer.get(CHANGELIST)
    _confirm(viewer, [a, b], a)

    assert b'value="merge_into"' not in page.content
    assert Ticket.objects.get(pk=b.pk).merged_into_id is None
