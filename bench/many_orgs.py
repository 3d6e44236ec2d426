"""Beat's periodic work at many organizations: grow to N organizations (one webhook each, three
tickets), then time one run of every task in CELERY_BEAT_SCHEDULE, in process, several times.

Run by bench/run.py with the product's settings:
    python -m bench.many_orgs --organizations 10000 --runs 5

With no work due, a run's cost is what it pays per organization: it must not grow with them
(docs/performance.md, "Many organizations"). Prints JSON: each task's median milliseconds.
"""

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

BATCH = 1000


def grow(target: int) -> int:
    """Organizations created with bulk inserts (the services' rows, without their one-by-one cost)."""
    from django.db import transaction

    from helpdesk.models import Organization
    from integrations.models import Webhook
    from integrations.services import generate_secret
    from tickets.models import Contact, Priority, Ticket, TicketSequence, TicketStatus
    from tickets.services import DEFAULT_STATUSES

    missing = target - Organization.objects.count()
    while missing > 0:
        size = min(BATCH, missing)
        with transaction.atomic():
            organizations = Organization.objects.bulk_create([Organization(name=f"Muitas {n}") for n in range(size)])
            statuses = TicketStatus.objects.bulk_create(
                [
                    TicketStatus(organization=org, name=name, category=category, color=color, position=index)
                    for org in organizations
                    for index, (name, category, color) in enumerate(DEFAULT_STATUSES)
                ]
            )
            opened = {status.organization_id: status for status in statuses if status.position == 0}
            TicketSequence.objects.bulk_create(
                [TicketSequence(organization=org, last_number=3) for org in organizations]
            )
            Webhook.objects.bulk_create(
                [
                    Webhook(
                        organization=org,
                        name="Parceiro",
                        url=f"https://parceiro-{n}.example/webhook",
                        events=["ticket.resposta_publica"],
                        secret=generate_secret(),
                    )
                    for n, org in enumerate(organizations)
                ]
            )
            contacts = Contact.objects.bulk_create(
                [Contact(organization=org, name="Cliente", email="cliente@example.test") for org in organizations]
            )
            Ticket.objects.bulk_create(
                [
                    Ticket(
                        organization_id=contact.organization_id,
                        number=number,
                        subject=f"Ticket {number}",
                        description="x",
                        priority=Priority.MEDIUM,
                        status=opened[contact.organization_id],
                        requester=contact,
                    )
                    for contact in contacts
                    for number in (1, 2, 3)
                ]
            )
        missing -= size
    return Organization.objects.count()


def time_beat(runs: int) -> dict:
    from django.conf import settings
    from django.db import connection

    from config.celery import app

    app.loader.import_default_modules()  # the tasks of every app, as a worker finds them

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    tasks = {name: entry["task"] for name, entry in settings.CELERY_BEAT_SCHEDULE.items()}
    timings = {}
    for name, task_name in tasks.items():
        task = app.tasks[task_name]
        task.run()  # a first run: caches warm, and whatever was due is done
        samples = []
        for _ in range(runs):
            started = time.perf_counter()
            task.run()
            samples.append((time.perf_counter() - started) * 1000)
        timings[name] = round(statistics.median(samples), 2)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--organizations", type=int, required=True)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    organizations = grow(options.organizations)
    timings = time_beat(options.runs)
    print(json.dumps({"organizations": organizations, "tasks_ms": timings, "run_ms": round(sum(timings.values()), 2)}))


if __name__ == "__main__":
    main()
