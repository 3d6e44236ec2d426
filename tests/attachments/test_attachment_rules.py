"""ANEXOS_POR_TICKET under parallel uploads (PostgreSQL: real row locks), and the libmagic start check.
(The payloads are checked against their serializers by tests/tickets/test_payloads.py.)"""

from tests.attachments.samples import parallel_uploads, stored_keys
from tests.factories import make_key, make_organization, make_ticket
from tickets.models import Attachment

THREADS = 8
LIMIT = 3


def test_parallel_uploads_never_pass_anexos_por_ticket(postgres_only, settings):
    settings.ANEXOS_POR_TICKET = LIMIT
    organization = make_organization("Anexos em paralelo")
    key = make_key(organization)
    ticket = make_ticket(organization)
    keys_before = stored_keys()

    statuses = parallel_uploads(key, [ticket], THREADS)

    assert sorted(statuses) == [201] * LIMIT + [409] * (THREADS - LIMIT)
    assert Attachment.objects.filter(ticket=ticket).count() == LIMIT
    assert len(stored_keys() - keys_before) == LIMIT  # the refused ones removed what they stored


def test_without_libmagic_the_service_refuses_to_start_with_what_to_install(monkeypatch):
    import builtins

    from tickets import checks
    from tickets.attachments import content

    real_import = builtins.__import__

    def no_libmagic(name, *args, **kwargs):
        if name == "magic":
            raise ImportError("failed to find libmagic.  Check your installation")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(content, "_magic", None)
    monkeypatch.setattr(builtins, "__import__", no_libmagic)

    [error] = checks.libmagic_is_installed(None)

    assert error.id == "tickets.E001"
    assert "apt-get install libmagic1" in error.hint
    monkeypatch.undo()
    assert checks.libmagic_is_installed(None) == []
