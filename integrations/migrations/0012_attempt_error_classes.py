"""The delivery log's `erro` of attempts already recorded, as the classes new attempts record
(integrations/attempt_errors.py): the exception texts they held are no longer shown to anyone."""

from django.db import migrations

# The texts earlier versions wrote, by how they began.
_BY_PREFIX = [
    ("Tempo esgotado", "timeout"),
    ("Endereço de destino não permitido", "endereco_bloqueado"),
    ("Erro inesperado", "erro_interno"),
]
# Inside "Falha de conexão: <class>: <text>", what names the cause.
_CONNECTION_CAUSES = [
    (("NameResolution", "Name or service not known", "getaddrinfo", "nodename nor servname"), "dns"),
    (("SSLError", "SSL", "certificate"), "tls"),
    (("Connection refused", "ConnectionRefused"), "conexao_recusada"),
]
CLASSES = ["timeout", "conexao_recusada", "dns", "tls", "conexao", "endereco_bloqueado", "erro_interno"]


def classify_recorded_errors(apps, schema_editor):
    Attempt = apps.get_model("integrations", "WebhookDeliveryAttempt")
    answered = Attempt.objects.filter(status_code__isnull=False).exclude(error="")
    for status_code in answered.values_list("status_code", flat=True).distinct():
        answered.filter(status_code=status_code).update(error=f"http_{status_code}")
    unanswered = Attempt.objects.filter(status_code__isnull=True).exclude(error="").exclude(error__in=CLASSES)
    for prefix, name in _BY_PREFIX:
        unanswered.filter(error__startswith=prefix).update(error=name)
    connection = unanswered.filter(error__startswith="Falha de conexão")
    for markers, name in _CONNECTION_CAUSES:
        for marker in markers:
            connection.filter(error__contains=marker).update(error=name)
    # Whatever else is left: a network failure without a recognisable cause.
    unanswered.update(error="conexao")


class Migration(migrations.Migration):
    dependencies = [
        ("integrations", "0011_credential_restrictions"),
    ]

    operations = [migrations.RunPython(classify_recorded_errors, migrations.RunPython.noop, elidable=True)]
